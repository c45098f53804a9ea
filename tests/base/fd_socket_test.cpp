#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "vtpage/base/fd_socket.hpp"

namespace vtpage {
namespace {

TEST(FdSocket, CarriesBytesAndDescriptors) {
    auto [left, right] = FdSocket::pair();
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    const std::string text = "page map";
    int fds[] = {read_end.get(), write_end.get()};
    left.send(std::as_bytes(std::span(text)), fds);
    auto message = right.receive();
    EXPECT_EQ(
        std::string(reinterpret_cast<const char*>(message.bytes.data()), message.bytes.size()),
        text);
    ASSERT_EQ(message.fds.size(), 2u);
    // The received descriptors are new numbers for the same pipe.
    ASSERT_EQ(::write(message.fds[1].get(), "x", 1), 1);
    char c = 0;
    ASSERT_EQ(::read(read_end.get(), &c, 1), 1);
    EXPECT_EQ(c, 'x');
}

TEST(FdSocket, LargeMessagesArriveWhole) {
    auto [left, right] = FdSocket::pair();
    std::vector<std::byte> big(3 << 20, std::byte{0x5a});
    std::thread sender([&, &l = left] { l.send(big); });
    auto message = right.receive();
    sender.join();
    EXPECT_EQ(message.bytes, big);
}

TEST(FdSocket, APeerThatLeftIsAnIoError) {
    auto [left, right] = FdSocket::pair();
    { FdSocket gone = std::move(left); }
    try {
        right.receive();
        FAIL() << "receive from a closed peer returned";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::io_error);
    }
    try {
        right.send(std::as_bytes(std::span("x", 1)));
        FAIL() << "send to a closed peer returned";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::io_error);
    }
}

TEST(FdSocket, GarbageIsCorruptData) {
    auto [left, right] = FdSocket::pair();
    const char garbage[32] = "this is not a message header!!";
    ASSERT_EQ(::write(left.fd(), garbage, sizeof(garbage)), static_cast<ssize_t>(sizeof(garbage)));
    try {
        right.receive();
        FAIL() << "garbage was accepted";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::corrupt_data);
    }
}

TEST(FdSocket, ListensAndConnectsOnAPath) {
    std::string path = testing::TempDir() + "vtpage-socket-" + std::to_string(getpid());
    FdSocket server = FdSocket::listen(path);
    FdSocket client = FdSocket::connect(path);
    FdSocket accepted = server.accept();
    client.send(std::as_bytes(std::span("hi", 2)));
    EXPECT_EQ(accepted.receive().bytes.size(), 2u);
    ::unlink(path.c_str());
    try {
        FdSocket::connect(path);
        FAIL() << "connected to a removed socket";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::io_error);
        EXPECT_EQ(error.backend_code_name(), "ENOENT");
    }
}

TEST(FdSocket, ListenReplacesAStaleSocketButNeverAFile) {
    const std::string path = testing::TempDir() + "vtpage-stale-" + std::to_string(getpid());
    { FdSocket first = FdSocket::listen(path); }   // leaves its socket file behind
    { FdSocket second = FdSocket::listen(path); }  // replaces it
    ::unlink(path.c_str());
    FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("precious", file);
    std::fclose(file);
    try {
        FdSocket::listen(path);
        FAIL() << "a regular file was replaced by a socket";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument);
    }
    struct stat kept {};
    ASSERT_EQ(::stat(path.c_str(), &kept), 0);
    EXPECT_TRUE(S_ISREG(kept.st_mode));
    EXPECT_EQ(kept.st_size, 8);
    ::unlink(path.c_str());
}

TEST(Error, MessageNamesOperationArgumentsAndBackendCode) {
    Error error(Errc::out_of_memory, "create", "no memory", "size=4", 2,
                "CUDA_ERROR_OUT_OF_MEMORY");
    std::string text = error.what();
    EXPECT_NE(text.find("create(size=4)"), std::string::npos) << text;
    EXPECT_NE(text.find("out_of_memory"), std::string::npos) << text;
    EXPECT_NE(text.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << text;
}

}  // namespace
}  // namespace vtpage
