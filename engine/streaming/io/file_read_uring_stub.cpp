// vtpage was built without liburing: the io_uring backend is not there, and `automatic` takes
// the threads backend.
#include "streaming/io/file_read_engine.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::vt {

std::shared_ptr<FileReadEngine> make_uring_read_engine(std::shared_ptr<ReadScheduler>, FileLayer&,
                                                       std::size_t depth, std::size_t) {
    throw Error(Errc::not_supported, "FileReadQueue", uring_unavailable_reason(),
                detail::concat("depth=", depth));
}

std::string uring_unavailable_reason() { return "vtpage was built without liburing"; }

}  // namespace vtpage::vt
