#include "backend_fixture.hpp"

namespace vtpage::test {

std::unique_ptr<Backend> try_make_backend(const std::string& name, std::string& reason,
                                          HostBackendSettings host) {
    BackendSettings settings;
    settings.name = name;
    settings.host = std::move(host);
    settings.log = Log(stderr_log(LogLevel::warning));
    try {
        return make_backend(settings);
    } catch (const Error& error) {
        if (error.code() != Errc::device_unavailable && error.code() != Errc::not_supported) {
            throw;
        }
        reason = error.what();
        return nullptr;
    }
}

}  // namespace vtpage::test
