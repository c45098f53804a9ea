#include "sharing/page_share_protocol.hpp"

#include <cstring>

#include "vtpage/base/error.hpp"

namespace vtpage::sharing_detail {

namespace {

// The most entries one message may announce: bounds what a corrupt count can make us allocate.
constexpr std::uint64_t max_entries = 1u << 24;
constexpr std::uint64_t max_name_bytes = 256;

class Writer {
public:
    void u16(std::uint16_t v) { put(v, 2); }
    void u32(std::uint32_t v) { put(v, 4); }
    void u64(std::uint64_t v) { put(v, 8); }
    void text(const std::string& v) {
        u32(static_cast<std::uint32_t>(v.size()));
        for (char c : v) bytes.push_back(static_cast<std::byte>(c));
    }
    std::vector<std::byte> bytes;

private:
    void put(std::uint64_t v, int count) {
        for (int i = 0; i < count; ++i) bytes.push_back(static_cast<std::byte>(v >> (8 * i)));
    }
};

class Reader {
public:
    explicit Reader(std::span<const std::byte> b) : bytes_(b) {}
    std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
    std::uint64_t u64() { return get(8); }
    std::string text() {
        const std::uint32_t size = u32();
        if (size > max_name_bytes || size > left()) fail("a string runs past the message");
        std::string v(reinterpret_cast<const char*>(bytes_.data() + at_), size);
        at_ += size;
        return v;
    }
    // A count of entries of entry_bytes each, checked against what is left.
    std::uint64_t count(std::size_t entry_bytes) {
        const std::uint64_t n = u32();
        if (n > max_entries || n * entry_bytes > left()) fail("a count runs past the message");
        return n;
    }
    void finish() const {
        if (at_ != bytes_.size()) fail("trailing bytes after the message");
    }
    [[noreturn]] static void fail(const std::string& what) {
        throw Error(Errc::corrupt_data, "page share protocol", what);
    }

private:
    std::size_t left() const { return bytes_.size() - at_; }
    std::uint64_t get(int count) {
        if (left() < static_cast<std::size_t>(count)) fail("the message is truncated");
        std::uint64_t v = 0;
        for (int i = 0; i < count; ++i) {
            v |= static_cast<std::uint64_t>(bytes_[at_ + i]) << (8 * i);
        }
        at_ += count;
        return v;
    }
    std::span<const std::byte> bytes_;
    std::size_t at_ = 0;
};

}  // namespace

const char* to_string(ShareMessageType type) noexcept {
    switch (type) {
        case ShareMessageType::hello:
            return "hello";
        case ShareMessageType::pages:
            return "pages";
        case ShareMessageType::publish:
            return "publish";
        case ShareMessageType::unpublish:
            return "unpublish";
        case ShareMessageType::forget:
            return "forget";
        case ShareMessageType::goodbye:
            return "goodbye";
        case ShareMessageType::ack:
            return "ack";
    }
    return "unknown";
}

std::vector<std::byte> encode(const ShareMessage& message) {
    Writer w;
    w.u32(share_magic);
    w.u16(share_protocol_version);
    w.u16(static_cast<std::uint16_t>(message.type));
    w.u64(message.sequence);
    switch (message.type) {
        case ShareMessageType::hello:
            w.u64(message.hello.page_size);
            w.u64(message.hello.page_count);
            w.u32(message.hello.producer_pid);
            w.u32(static_cast<std::uint32_t>(message.hello.device));
            w.text(message.hello.backend);
            break;
        case ShareMessageType::pages:
        case ShareMessageType::forget:
            w.u32(static_cast<std::uint32_t>(message.physical_ids.size()));
            for (std::uint64_t id : message.physical_ids) w.u64(id);
            break;
        case ShareMessageType::publish:
            w.u32(static_cast<std::uint32_t>(message.updates.size()));
            for (const auto& u : message.updates) {
                w.u64(u.page);
                w.u64(u.physical_id);
                w.u64(u.generation);
            }
            break;
        case ShareMessageType::unpublish:
            w.u32(static_cast<std::uint32_t>(message.updates.size()));
            for (const auto& u : message.updates) {
                w.u64(u.page);
                w.u64(u.generation);
            }
            break;
        case ShareMessageType::goodbye:
            w.u32(static_cast<std::uint32_t>(message.reason));
            break;
        case ShareMessageType::ack:
            break;
    }
    return std::move(w.bytes);
}

ShareMessage decode(std::span<const std::byte> bytes) {
    Reader r(bytes);
    if (r.u32() != share_magic) Reader::fail("not a page-sharing message (bad magic)");
    const std::uint16_t version = r.u16();
    if (version != share_protocol_version) {
        throw Error(Errc::not_supported, "page share protocol",
                    detail::concat("the peer speaks protocol version ", version, ", this is ",
                                   share_protocol_version));
    }
    ShareMessage message;
    const std::uint16_t type = r.u16();
    if (type < static_cast<std::uint16_t>(ShareMessageType::hello) ||
        type > static_cast<std::uint16_t>(ShareMessageType::ack)) {
        Reader::fail(detail::concat("unknown message type ", type));
    }
    message.type = static_cast<ShareMessageType>(type);
    message.sequence = r.u64();
    switch (message.type) {
        case ShareMessageType::hello:
            message.hello.page_size = r.u64();
            message.hello.page_count = r.u64();
            message.hello.producer_pid = r.u32();
            message.hello.device = static_cast<std::int32_t>(r.u32());
            message.hello.backend = r.text();
            break;
        case ShareMessageType::pages:
        case ShareMessageType::forget: {
            const std::uint64_t n = r.count(8);
            message.physical_ids.reserve(n);
            for (std::uint64_t i = 0; i < n; ++i) message.physical_ids.push_back(r.u64());
            break;
        }
        case ShareMessageType::publish: {
            const std::uint64_t n = r.count(24);
            message.updates.reserve(n);
            for (std::uint64_t i = 0; i < n; ++i) {
                SharePageUpdate u;
                u.page = r.u64();
                u.physical_id = r.u64();
                u.generation = r.u64();
                message.updates.push_back(u);
            }
            break;
        }
        case ShareMessageType::unpublish: {
            const std::uint64_t n = r.count(16);
            message.updates.reserve(n);
            for (std::uint64_t i = 0; i < n; ++i) {
                SharePageUpdate u;
                u.page = r.u64();
                u.generation = r.u64();
                message.updates.push_back(u);
            }
            break;
        }
        case ShareMessageType::goodbye: {
            const std::uint32_t reason = r.u32();
            if (reason > static_cast<std::uint32_t>(GoodbyeReason::revoked)) {
                Reader::fail(detail::concat("unknown goodbye reason ", reason));
            }
            message.reason = static_cast<GoodbyeReason>(reason);
            break;
        }
        case ShareMessageType::ack:
            break;
    }
    r.finish();
    return message;
}

}  // namespace vtpage::sharing_detail
