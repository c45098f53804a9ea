// Consumers that attack the producer, for checking on any backend that the producer and its
// well-behaved consumers finish on time anyway (docs/sharing.md, "Threat model"):
//
//   trickle     sends a frame header announcing 100 bytes, then one byte every 500 ms
//   never-ack   reads everything the producer sends (fds included) and never acknowledges
//   huge-frame  announces a 1 GiB message and sends nothing more
//
// Each prints one summary line saying how the producer dealt with it.
#pragma once

#include <optional>
#include <string>

namespace vtpage::share_demo {

enum class HostileKind { trickle, never_ack, huge_frame };

std::optional<HostileKind> hostile_kind(const std::string& name);
const char* to_string(HostileKind kind) noexcept;

// Connects to the producer at `socket` and misbehaves for at most `seconds`. Exit status: 0
// when the producer cut it off (as it must), 1 when it was still served at the end.
int run_hostile_consumer(const std::string& socket, HostileKind kind, double seconds);

}  // namespace vtpage::share_demo
