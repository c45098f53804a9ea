// DeviceVector<T> on every backend: element counts over the byte buffer, host copies in and
// out, appends that survive growth, typed errors for bad counts and ranges.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <numeric>

#include "../support/backend_fixture.hpp"
#include "../support/expect_error.hpp"
#include "vtpage/core/device_vector.hpp"

namespace vtpage {
namespace {

struct Vertex {
    float x, y, z;  // 12 bytes: a page is not a whole number of them
    friend bool operator==(const Vertex&, const Vertex&) = default;
};

class DeviceVectorTest : public test::BackendTest {
protected:
    HostBackendSettings host_settings() const override { return test::small_host_backend(); }
    void TearDown() override { expect_baseline_resources(); }
    GrowableBufferSettings small() const {
        GrowableBufferSettings settings;
        settings.address_space = 64 * page_;
        return settings;
    }
};

TEST_P(DeviceVectorTest, AssignsAndCopiesBack) {
    DeviceVector<std::uint32_t> vector(*backend_, small());
    EXPECT_TRUE(vector.empty());
    std::vector<std::uint32_t> host(page_ / 4 + 1000);
    std::iota(host.begin(), host.end(), 1u);
    vector.assign(host);
    EXPECT_EQ(vector.size(), host.size());
    EXPECT_EQ(vector.capacity(), 2 * page_ / 4);
    EXPECT_EQ(vector.to_host(), host);
    EXPECT_EQ(vector.address(), reinterpret_cast<DeviceAddress>(vector.data()));
    // Part of it, from the middle.
    std::vector<std::uint32_t> middle(10);
    vector.copy_to_host(middle, 500);
    EXPECT_EQ(middle.front(), 501u);
    std::vector<std::uint32_t> patch(3, 0xabcd);
    vector.copy_from_host(patch, host.size() - 3);
    host.resize(host.size() - 3);
    host.insert(host.end(), patch.begin(), patch.end());
    EXPECT_EQ(vector.to_host(), host);
}

TEST_P(DeviceVectorTest, AppendsKeepEverythingAcrossGrowth) {
    DeviceVector<Vertex> vector(*backend_, small());
    std::vector<Vertex> expected;
    // Batches whose ends fall across page boundaries (12-byte elements).
    for (int batch = 0; batch < 6; ++batch) {
        std::vector<Vertex> more(page_ / 12 / 2 + 7 * batch);
        for (std::size_t i = 0; i < more.size(); ++i) {
            const float v = float(expected.size() + i);
            more[i] = {v, -v, 0.5f * v};
        }
        vector.append(more);
        expected.insert(expected.end(), more.begin(), more.end());
    }
    vector.push_back({1, 2, 3});
    expected.push_back({1, 2, 3});
    EXPECT_EQ(vector.size(), expected.size());
    EXPECT_EQ(vector.capacity(), vector.buffer().capacity() / 12);
    EXPECT_EQ(vector.to_host(), expected);
}

TEST_P(DeviceVectorTest, ResizeAndShrinkWorkInElements) {
    DeviceVector<double> vector(*backend_, 3 * page_ / 8, small());
    EXPECT_EQ(vector.size(), 3 * page_ / 8);
    std::vector<double> host(vector.size());
    std::iota(host.begin(), host.end(), 0.25);
    vector.copy_from_host(host);
    const DeviceAddress data = vector.address();
    vector.resize(10 * page_ / 8);
    EXPECT_EQ(vector.address(), data);
    vector.resize(page_ / 8);
    vector.shrink_to_fit();
    EXPECT_EQ(vector.capacity(), 3 * page_ / 8);  // the first allocation stays whole
    host.resize(page_ / 8);
    EXPECT_EQ(vector.to_host(), host);
    vector.clear();
    vector.shrink_to_fit();
    EXPECT_EQ(vector.capacity(), 0u);
    EXPECT_TRUE(vector.to_host().empty());
}

TEST_P(DeviceVectorTest, BadCountsAndRangesAreTyped) {
    DeviceVector<std::uint64_t> vector(*backend_, small());
    vector.resize(16);
    const std::size_t too_many = DeviceVector<std::uint64_t>::max_size() + 1;
    EXPECT_EQ(test::error_code_of([&] { vector.resize(too_many); }), Errc::invalid_argument);
    EXPECT_EQ(test::error_code_of([&] { vector.reserve(std::numeric_limits<std::size_t>::max()); }),
              Errc::invalid_argument);
    std::vector<std::uint64_t> four(4, 9);
    EXPECT_EQ(test::error_code_of([&] { vector.copy_from_host(four, 13); }), Errc::out_of_range);
    EXPECT_EQ(test::error_code_of([&] { vector.copy_from_host(four, too_many); }),
              Errc::out_of_range);
    EXPECT_EQ(test::error_code_of([&] { vector.copy_to_host(four, 17); }), Errc::out_of_range);
    EXPECT_EQ(vector.size(), 16u);
    // An append too large for memory leaves the vector as it was.
    vector.copy_from_host(four, 12);
    if (!backend_->capabilities().gpu) {
        // More than the host backend here has. Left uninitialised: the copy never happens.
        const std::size_t count = (backend_->memory_info().total + 16 * page_) / 8;
        std::unique_ptr<std::uint64_t[]> lots(new std::uint64_t[count]);
        const std::span<const std::uint64_t> too_much(lots.get(), count);
        EXPECT_EQ(test::error_code_of([&] { vector.append(too_much); }), Errc::out_of_memory);
        EXPECT_EQ(vector.size(), 16u);
        EXPECT_EQ(vector.to_host()[15], 9u);
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceVectorTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
