// A typed vector of trivially copyable elements in device memory, on a GrowableBuffer: it grows
// and shrinks without copying, and data() stays put as GrowableBuffer describes (it changes only
// when the buffer has to move to a new address range).
//
//   vtpage::DeviceVector<float> weights(backend);
//   weights.assign(host_weights);                 // resize + one host-to-device copy
//   weights.resize(weights.size() * 2);           // no copy of what is there
//   kernel<<<...>>>(weights.data(), weights.size());
//
// data() is a device pointer (a host pointer on the host backend): never dereference it on the
// host with a GPU backend; copy with assign / append / copy_from_host / to_host instead. New
// elements are not initialised. Growth maps exactly what is asked (rounded up to whole pages),
// without std::vector's geometric over-allocation: reserve() ahead for many small appends.
#pragma once

#include <span>
#include <type_traits>
#include <vector>

#include "vtpage/core/growable_buffer.hpp"

namespace vtpage {

template <typename T>
class DeviceVector {
    static_assert(std::is_trivially_copyable_v<T>,
                  "DeviceVector holds raw device memory: T must be trivially copyable");

public:
    using value_type = T;
    using size_type = std::size_t;

    explicit DeviceVector(Backend& backend, GrowableBufferSettings settings = {})
        : buffer_(backend, std::move(settings)) {}
    DeviceVector(Backend& backend, size_type count, GrowableBufferSettings settings = {})
        : buffer_(backend, std::move(settings)) {
        resize(count);
    }

    T* data() const noexcept { return reinterpret_cast<T*>(buffer_.data()); }
    DeviceAddress address() const noexcept { return buffer_.data(); }
    size_type size() const noexcept { return buffer_.size() / sizeof(T); }
    bool empty() const noexcept { return size() == 0; }
    // Elements that fit in the mapped memory.
    size_type capacity() const noexcept { return buffer_.capacity() / sizeof(T); }
    static constexpr size_type max_size() noexcept {
        return GrowableBuffer::max_size() / sizeof(T);
    }

    void reserve(size_type count) { buffer_.reserve(bytes("reserve", count)); }
    void resize(size_type count) { buffer_.resize(bytes("resize", count)); }
    void shrink_to_fit() { buffer_.shrink_to_fit(); }
    void clear() noexcept { buffer_.clear(); }

    // Replaces the contents with the host elements.
    void assign(std::span<const T> elements) {
        resize(elements.size());
        buffer_.write(0, elements.data(), elements.size_bytes());
    }
    // Appends host elements (growing as resize does); on failure the vector is unchanged.
    void append(std::span<const T> elements) {
        const size_type old = size();
        if (elements.size() > max_size() - old) {
            throw Error(Errc::invalid_argument, "DeviceVector::append",
                        detail::concat("the count would pass max_size() (", max_size(), ")"),
                        detail::concat("size=", old, ", appended=", elements.size()));
        }
        resize(old + elements.size());
        try {
            buffer_.write(old * sizeof(T), elements.data(), elements.size_bytes());
        } catch (...) {
            buffer_.resize(old * sizeof(T));
            throw;
        }
    }
    void push_back(const T& element) { append(std::span<const T>(&element, 1)); }
    // Copies host elements over [first, first + elements.size()), which must be inside size().
    void copy_from_host(std::span<const T> elements, size_type first = 0) {
        buffer_.write(offset("copy_from_host", first), elements.data(), elements.size_bytes());
    }
    // Copies [first, first + out.size()) to the host.
    void copy_to_host(std::span<T> out, size_type first = 0) const {
        buffer_.read(out.data(), offset("copy_to_host", first), out.size_bytes());
    }
    std::vector<T> to_host() const {
        std::vector<T> out(size());
        copy_to_host(out);
        return out;
    }

    GrowableBuffer& buffer() noexcept { return buffer_; }
    const GrowableBuffer& buffer() const noexcept { return buffer_; }

private:
    // count * sizeof(T), or invalid_argument where that passes max_size().
    static std::size_t bytes(const char* operation, size_type count) {
        if (count > max_size()) {
            throw Error(Errc::invalid_argument, detail::concat("DeviceVector::", operation),
                        detail::concat("the count is above max_size() (", max_size(), ")"),
                        detail::concat("count=", count));
        }
        return count * sizeof(T);
    }
    // The byte offset of element `first`, or out_of_range past size().
    std::size_t offset(const char* operation, size_type first) const {
        if (first > size()) {
            throw Error(Errc::out_of_range, detail::concat("DeviceVector::", operation),
                        detail::concat("the vector holds ", size(), " elements"),
                        detail::concat("first=", first));
        }
        return first * sizeof(T);
    }

    GrowableBuffer buffer_;
};

}  // namespace vtpage
