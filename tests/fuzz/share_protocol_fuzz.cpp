// Fuzzes the page-sharing protocol's decoder with arbitrary message bytes, as a hostile peer
// would send them: decode() must either return a message or throw vtpage::Error (corrupt_data),
// never read past the bytes or allocate what a count merely announces. A message that decodes
// is encoded again and must decode to the same message (the decoder accepts only what the
// encoder can say).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "page_share_protocol.hpp"
#include "vtpage/base/error.hpp"

namespace {

using namespace vtpage::sharing_detail;

bool same(const ShareMessage& a, const ShareMessage& b) {
    if (a.type != b.type || a.sequence != b.sequence || a.reason != b.reason ||
        a.physical_ids != b.physical_ids || a.updates.size() != b.updates.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.updates.size(); ++i) {
        const SharePageUpdate &x = a.updates[i], &y = b.updates[i];
        if (x.page != y.page || x.physical_id != y.physical_id || x.generation != y.generation) {
            return false;
        }
    }
    return a.hello.page_size == b.hello.page_size && a.hello.page_count == b.hello.page_count &&
           a.hello.producer_pid == b.hello.producer_pid && a.hello.device == b.hello.device &&
           a.hello.backend == b.hello.backend;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto bytes = std::as_bytes(std::span(data, size));
    ShareMessage message;
    try {
        message = decode(bytes);
    } catch (const vtpage::Error&) {
        return 0;  // refused: what a malformed message should get
    }
    (void)to_string(message.type);
    const ShareMessage again = decode(encode(message));
    if (!same(message, again)) std::abort();  // the encoder and decoder disagree
    return 0;
}
