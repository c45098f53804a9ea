// A problem with what the user asked for, found while setting up: a flag's value, a texture file
// or a texture set that cannot be used (the viewer exits with 2, saying which).
#pragma once

#include <stdexcept>

namespace vtpage::viewer {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace vtpage::viewer
