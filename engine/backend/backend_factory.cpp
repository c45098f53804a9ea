#include "vtpage/backend/backend_factory.hpp"

#include "vtpage/config.hpp"
#if VTPAGE_HAS_CUDA
#include "vtpage/backend/cuda_backend.hpp"
#endif

namespace vtpage {

namespace {

std::unique_ptr<Backend> make_host(const BackendSettings& settings) {
    HostBackendSettings host = settings.host;
    host.log = settings.log;
    return std::make_unique<HostBackend>(std::move(host));
}

std::unique_ptr<Backend> make_cuda(const BackendSettings& settings) {
#if VTPAGE_HAS_CUDA
    return std::make_unique<CudaBackend>(
        CudaBackendSettings{settings.device, settings.probe, settings.log});
#else
    (void)settings;
    throw Error(Errc::device_unavailable, "make_backend",
                "this build of vtpage has no CUDA backend (no CUDA compiler at configure time)",
                "name=cuda");
#endif
}

std::string describe(const Backend& backend) {
    const Capabilities& caps = backend.capabilities();
    return detail::concat(caps.backend, " on ", caps.device_name, " (device ", caps.device, ")");
}

}  // namespace

bool cuda_backend_built() noexcept { return VTPAGE_HAS_CUDA != 0; }

std::vector<std::string> backend_names() {
    std::vector<std::string> names{"auto"};
    if (cuda_backend_built()) names.emplace_back("cuda");
    names.emplace_back("host");
    return names;
}

std::unique_ptr<Backend> make_backend(const BackendSettings& settings) {
    const Log& log = settings.log;
    if (settings.name == "host") {
        auto backend = make_host(settings);
        log.info("backend: ", describe(*backend), ", as asked");
        return backend;
    }
    if (settings.name == "cuda") {
        auto backend = make_cuda(settings);
        log.info("backend: ", describe(*backend), ", as asked");
        return backend;
    }
    if (settings.name != "auto") {
        throw Error(Errc::invalid_argument, "make_backend",
                    "unknown backend (choose auto, cuda or host)", "name=" + settings.name);
    }
    try {
        auto backend = make_cuda(settings);
        log.info("backend: ", describe(*backend),
                 ", chosen by auto: the GPU supports virtual memory management");
        return backend;
    } catch (const Error& error) {
        auto backend = make_host(settings);
        log.info("backend: ", describe(*backend), ", chosen by auto because cuda is unavailable: ",
                 error.detail().empty() ? error.what() : error.detail());
        return backend;
    }
}

}  // namespace vtpage
