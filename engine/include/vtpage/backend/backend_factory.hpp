// Choosing a backend by name: "auto" (cuda when a GPU with virtual memory management is
// present, else host), "cuda" or "host". The choice and its reason go to the log.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/backend/host_backend.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage {

struct BackendSettings {
    std::string name = "auto";
    int device = 0;            // CUDA device ordinal
    bool probe = true;         // CUDA: probe fd export, compression and read-only access
    HostBackendSettings host;  // its log is replaced by the log below
    Log log;
};

// Throws invalid_argument for an unknown name, device_unavailable when "cuda" is asked for and
// cannot be had.
std::unique_ptr<Backend> make_backend(const BackendSettings& settings = {});

// The backend names this build knows, "auto" first.
std::vector<std::string> backend_names();
// Whether this build has the CUDA backend (it still needs a driver and a GPU at run time).
bool cuda_backend_built() noexcept;

}  // namespace vtpage
