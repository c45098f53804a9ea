// vtpage-share: pages shared between processes. A producer streams stamped tiles into the pages
// of a shared region (commit, write, publish; unpublish and evict the oldest under its budget);
// consumers in other processes map the same pages and verify every tile they are given, and
// re-verify pages at random while they stay published, so that a page read after its owner
// recycled it would show.
//
//   vtpage-share producer --socket /tmp/pages.sock --seconds 20
//   vtpage-share consumer --socket /tmp/pages.sock
//   vtpage-share both --consumers 2 --seconds 10      # the producer and its consumer processes
//   vtpage-share both --consumers 1 --hostile-consumers trickle,never-ack,huge-frame
//   vtpage-share hostile --socket /run/user/1000/pages.sock --kind trickle
//
// Without --socket the producer listens in a fresh directory of mode 0700 (under
// $XDG_RUNTIME_DIR, else the temporary directory), removed at exit. SIGINT and SIGTERM end any
// wait within 50 ms; the producer then says goodbye to its consumers.
//
// Exit codes: 0 all good, 1 a tile failed verification or an error, 2 bad flags (a --socket
// path that holds something else than a socket among them), 3 (consumer) the producer was lost
// or cut this consumer off.
#include <signal.h>
#include <spawn.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <optional>
#include <random>
#include <thread>

#include "hostile_consumer.hpp"
#include "tile_stamp.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/app/numeric_options.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/app/units.hpp"
#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/backend/stream_ordered_pool.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/sharing/shared_region_consumer.hpp"
#include "vtpage/sharing/shared_region_producer.hpp"

extern char** environ;

namespace {

using namespace vtpage;
using app::mib;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* program = "vtpage-share";

std::atomic<bool> interrupted{false};
void on_signal(int) { interrupted = true; }

// Every wait of this program runs in slices this long, so that SIGINT and SIGTERM end it
// promptly whatever it waits for.
constexpr auto signal_slice = 50ms;

// Waits for the producer's consumers in slices; false on timeout or a signal.
bool wait_for_consumers(const SharedRegionProducer& producer, std::size_t count, double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(seconds));
    while (!interrupted && Clock::now() < deadline) {
        if (producer.wait_for_consumers(count, signal_slice)) return true;
    }
    return false;
}

// Waits for an unpublish in slices; false on a signal.
bool wait_for_ticket(const SharedRegionProducer& producer, UnpublishTicket ticket) {
    while (!interrupted) {
        if (producer.wait(ticket, signal_slice)) return true;
    }
    return false;
}

struct CommonOptions {
    std::string socket;
    std::string backend = "auto";
    int device = 0;
    bool quiet = false;
    bool verbose = false;
};

struct ProducerOptions {
    std::uint64_t region_pages = 1024;
    std::uint64_t budget_pages = 64;
    std::uint64_t batch = 8;
    double seconds = 10;
    std::uint64_t tiles = 0;
    std::size_t consumers = 1;  // wait for this many before streaming
    double wait_seconds = 30;
    bool compressible = false;
    int ack_timeout_ms = 5000;
};

struct ConsumerOptions {
    double seconds = 0;  // 0: until the producer ends
    int recheck = 2;     // published pages verified again after each poll
    double connect_seconds = 30;
};

std::unique_ptr<Backend> open_backend(const CommonOptions& common) {
    BackendSettings settings;
    settings.name = common.backend;
    settings.device = common.device;
    settings.log = Log(stderr_log(common.verbose ? LogLevel::debug : LogLevel::warning));
    return make_backend(settings);
}

// Staging memory for composing tiles: pinned host memory from a stream-ordered pool where the
// backend has one (what makes uploads fast on a GPU), else plain memory.
class Staging {
public:
    Staging(Backend& backend, const CommonOptions& common) {
        try {
            StreamPoolSettings settings;
            settings.location = StreamPoolLocation::host;
            settings.release_threshold = 64_MiB;
            settings.log = Log(stderr_log(common.verbose ? LogLevel::debug : LogLevel::warning));
            pool_ = make_stream_ordered_pool(backend, settings);
        } catch (const Error& error) {
            if (!common.quiet) {
                std::printf("staging: no stream-ordered pool (%s); using plain memory\n",
                            error.what());
            }
        }
    }
    std::uint32_t* take(std::size_t bytes) {
        if (!pool_) {
            fallback_.resize(bytes / 4);
            return fallback_.data();
        }
        address_ = pool_->allocate(bytes);
        pool_->synchronize();  // the CPU writes it next
        return reinterpret_cast<std::uint32_t*>(address_);
    }
    void give_back() {
        if (pool_ && address_) pool_->free(address_);
        address_ = 0;
    }
    std::string report() const {
        if (!pool_) return "staging: plain memory";
        auto s = pool_->statistics();
        return "staging pool: " +
               app::pool_usage(s.reserved_bytes, s.reserved_bytes_high, s.used_bytes,
                               s.used_bytes_high) +
               detail::concat(", threshold ", mib(s.release_threshold), ", ", s.allocations,
                              " allocations");
    }

private:
    std::unique_ptr<StreamOrderedPool> pool_;
    std::vector<std::uint32_t> fallback_;
    DeviceAddress address_ = 0;
};

int run_producer(const CommonOptions& common, const ProducerOptions& options,
                 const std::function<void()>& on_listening = {}) {
    auto backend = open_backend(common);
    const std::size_t page = backend->granularity().minimum;
    SharedRegionProducerSettings settings;
    settings.table.region_size = options.region_pages * page;
    settings.table.budget_bytes = options.budget_pages * page;
    settings.table.pool.page_options.compressible = options.compressible;
    settings.listen_path = common.socket;
    settings.ack_timeout = std::chrono::milliseconds(options.ack_timeout_ms);
    settings.log = Log(stderr_log(common.verbose ? LogLevel::debug : LogLevel::warning));
    SharedRegionProducer producer(*backend, settings);
    Staging staging(*backend, common);
    const Capabilities& caps = backend->capabilities();
    std::printf(
        "producer: %s backend on %s (device %d); %llu-page region, budget %llu pages of "
        "%s, batches of %llu; listening on %s\n",
        caps.backend.c_str(), caps.device_name.c_str(), caps.device,
        static_cast<unsigned long long>(options.region_pages),
        static_cast<unsigned long long>(options.budget_pages), mib(page).c_str(),
        static_cast<unsigned long long>(options.batch), common.socket.c_str());
    std::fflush(stdout);
    if (on_listening) on_listening();
    if (options.consumers > 0) {
        std::printf("producer: waiting for %zu consumer(s)\n", options.consumers);
        std::fflush(stdout);
        if (!wait_for_consumers(producer, options.consumers, options.wait_seconds)) {
            if (interrupted) return 1;
            std::fprintf(stderr, "producer: only %zu of %zu consumers came within %.0f s\n",
                         producer.consumer_count(), options.consumers, options.wait_seconds);
            return 1;
        }
    }

    app::ProgressBar progress({.label = "producer", .enabled = !common.quiet});
    std::deque<PageIndex> published;  // oldest first
    struct Retiring {
        UnpublishTicket ticket = 0;
        std::vector<PageIndex> pages;
    };
    std::optional<Retiring> retiring;
    std::uint64_t resident = 0, tiles = 0, next = 0;
    auto unpublish_oldest = [&] {
        Retiring r;
        for (std::uint64_t i = 0; i < options.batch && !published.empty(); ++i) {
            r.pages.push_back(published.front());
            published.pop_front();
        }
        r.ticket = producer.unpublish(r.pages);
        retiring = std::move(r);
    };
    auto finish_retiring = [&] {
        // Interrupted: the producer's destructor lets go of the pages still retiring.
        if (!wait_for_ticket(producer, retiring->ticket)) return;
        producer.table().evict(retiring->pages);
        resident -= retiring->pages.size();
        retiring.reset();
    };
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    auto done = [&] {
        if (interrupted) return true;
        if (options.tiles > 0) return tiles >= options.tiles;
        return elapsed() >= options.seconds;
    };
    while (!done()) {
        while (!interrupted && resident + options.batch > options.budget_pages) {
            if (retiring) {
                finish_retiring();
            } else {
                unpublish_oldest();
            }
        }
        if (interrupted) break;
        std::vector<PageIndex> pages;
        for (std::uint64_t i = 0; i < options.batch; ++i) {
            pages.push_back(next++ % options.region_pages);
        }
        auto mappings = producer.table().commit(pages);
        std::uint32_t* words = staging.take(pages.size() * page);
        for (std::size_t i = 0; i < mappings.size(); ++i) {
            std::uint32_t* tile = words + i * (page / 4);
            demo::compose_tile(tile, page / 4, mappings[i].page, mappings[i].generation);
            backend->write(producer.table().address_of(mappings[i].page), tile, page);
        }
        staging.give_back();
        producer.publish(pages);
        for (PageIndex p : pages) published.push_back(p);
        resident += pages.size();
        tiles += pages.size();
        // Ask for the next room now, so that acknowledgements arrive while we write.
        if (!retiring && resident + options.batch > options.budget_pages &&
            published.size() >= options.batch) {
            unpublish_oldest();
        }
        const double fraction =
            options.tiles > 0 ? double(tiles) / double(options.tiles) : elapsed() / options.seconds;
        auto stats = producer.statistics();
        progress.update(
            fraction,
            detail::concat(tiles, " tiles, ",
                           static_cast<int>(double(tiles * page) / 1e6 / elapsed()), " MB/s, ",
                           stats.consumers, " consumer(s), ", stats.published_pages,
                           " published, resident ", mib(stats.table.pool.used_bytes)));
    }
    if (retiring) finish_retiring();
    const double seconds = elapsed();
    progress.finish(
        detail::concat(tiles, " tiles in ", static_cast<int>(seconds * 10) / 10.0, " s"));
    auto stats = producer.statistics();
    std::printf("producer: %llu tiles (%s) in %.1f s, %.0f MB/s%s\n",
                static_cast<unsigned long long>(tiles), mib(tiles * page).c_str(), seconds,
                double(tiles * page) / 1e6 / seconds, interrupted ? " (interrupted)" : "");
    std::printf(
        "producer: %llu pages published, %llu unpublished; %zu physical pages exported, "
        "%llu fds sent; %llu acknowledgements, unpublish latency p50 %.0f us p99 %.0f "
        "us\n",
        static_cast<unsigned long long>(stats.pages_published),
        static_cast<unsigned long long>(stats.pages_unpublished), stats.exported_pages,
        static_cast<unsigned long long>(stats.fds_sent),
        static_cast<unsigned long long>(stats.acks_received), stats.unpublish_latency.p50_us,
        stats.unpublish_latency.p99_us);
    std::printf("producer: consumers joined %llu, lost %llu (leases expired %llu)\n",
                static_cast<unsigned long long>(stats.consumers_joined),
                static_cast<unsigned long long>(stats.consumers_lost),
                static_cast<unsigned long long>(stats.leases_expired));
    const auto& pool = stats.table.pool;
    std::printf("producer: page pool: %s, %llu created; compression %s, %zu pages granted\n",
                app::pool_usage(pool.reserved_bytes, pool.reserved_bytes_high, pool.used_bytes,
                                pool.used_bytes_high)
                    .c_str(),
                static_cast<unsigned long long>(pool.creates),
                pool.compression_requested ? "asked" : "not asked", pool.compressed_pages);
    std::printf("producer: %s\n", staging.report().c_str());
    std::fflush(stdout);
    return 0;
}

FdSocket connect_with_retries(const std::string& path, double seconds) {
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    for (;;) {
        try {
            return FdSocket::connect(path);
        } catch (const Error& error) {
            if (Clock::now() > deadline || interrupted) throw;
            std::this_thread::sleep_for(50ms);
        }
    }
}

int run_consumer(const CommonOptions& common, const ConsumerOptions& options) {
    auto backend = open_backend(common);
    SharedRegionConsumerSettings settings;
    settings.log = Log(stderr_log(common.verbose ? LogLevel::debug : LogLevel::warning));
    SharedRegionConsumer consumer(
        *backend, connect_with_retries(common.socket, options.connect_seconds), settings);
    const std::size_t page = consumer.page_size();
    const std::string name = detail::concat("consumer ", getpid());
    if (!common.quiet) {
        std::printf("%s: connected to producer %u: %llu pages of %s\n", name.c_str(),
                    consumer.producer_pid(), static_cast<unsigned long long>(consumer.page_count()),
                    mib(page).c_str());
        std::fflush(stdout);
    }
    std::vector<std::uint32_t> words(page / 4);
    std::mt19937_64 random(static_cast<std::uint64_t>(getpid()));
    std::uint64_t verified = 0, rechecked = 0, bad = 0;
    auto verify = [&](const SharedPage& shared) {
        backend->read(words.data(), shared.address, page);
        const std::size_t errors =
            demo::tile_errors(words.data(), words.size(), shared.page, shared.generation);
        if (errors > 0) {
            ++bad;
            std::fprintf(stderr, "%s: page %llu generation %llu: %zu words wrong\n", name.c_str(),
                         static_cast<unsigned long long>(shared.page),
                         static_cast<unsigned long long>(shared.generation), errors);
        }
    };
    app::ProgressBar progress({.label = name, .enabled = !common.quiet});
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    std::optional<Error> ended;
    while (consumer.state() == ProducerState::connected && !interrupted &&
           (options.seconds <= 0 || elapsed() < options.seconds)) {
        try {
            auto update = consumer.poll(20ms);
            for (const SharedPage& shared : update.published) {
                verify(shared);
                ++verified;
            }
        } catch (const Error& error) {
            ended = error;
            break;
        }
        // Pages stay valid between polls: check some again while they are published.
        auto mapped = consumer.pages();
        for (int i = 0; i < options.recheck && !mapped.empty(); ++i) {
            verify(mapped[random() % mapped.size()]);
            ++rechecked;
        }
        const double fraction = options.seconds > 0 ? elapsed() / options.seconds : 0.0;
        progress.update(
            fraction, detail::concat(verified, " tiles verified, ", rechecked, " re-checked, ", bad,
                                     " bad, ", mapped.size(), " mapped"));
    }
    // What stays mapped after the end (producer finished or gone) is still right.
    for (const SharedPage& shared : consumer.pages()) {
        verify(shared);
        ++rechecked;
    }
    progress.finish(detail::concat(verified, " tiles verified"));
    auto stats = consumer.statistics();
    std::printf(
        "%s: %llu tiles verified, %llu re-checked, %llu bad; producer %s; %llu fds "
        "received, %zu physical pages imported (%zu compressed), %llu acknowledgements "
        "sent\n",
        name.c_str(), static_cast<unsigned long long>(verified),
        static_cast<unsigned long long>(rechecked), static_cast<unsigned long long>(bad),
        to_string(consumer.state()), static_cast<unsigned long long>(stats.fds_received),
        stats.imported_pages, stats.compressed_pages,
        static_cast<unsigned long long>(stats.acks_sent));
    if (ended) std::printf("%s: %s\n", name.c_str(), ended->what());
    std::fflush(stdout);
    if (bad > 0) return 1;
    if (ended) return 3;
    return 0;
}

pid_t spawn(std::vector<std::string> words) {
    std::vector<char*> argv;
    argv.reserve(words.size() + 1);
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int result = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
    if (result != 0) {
        throw Error(Errc::io_error, "spawn", errno_message(result));
    }
    return pid;
}

// What no wait can fix is a bad flag (exit 2), not a failure: a path too long for a Unix
// socket's address, or in a folder that does not exist.
void check_socket_path(const std::string& path) {
    if (path.empty()) return;
    constexpr std::size_t longest = sizeof(sockaddr_un::sun_path) - 1;
    if (path.size() > longest) {
        throw CLI::ValidationError(
            "--socket", detail::concat("'", path, "' is ", path.size(),
                                       " bytes; a Unix socket path has at most ", longest));
    }
    std::filesystem::path folder = std::filesystem::path(path).parent_path();
    if (folder.empty()) folder = ".";
    std::error_code ignored;
    if (!std::filesystem::is_directory(folder, ignored)) {
        throw CLI::ValidationError("--socket",
                                   "no folder '" + folder.string() + "' for '" + path + "'");
    }
}

pid_t spawn_consumer(const CommonOptions& common) {
    std::vector<std::string> words{
        "vtpage-share", "consumer",     "--socket", common.socket,
        "--backend",    common.backend, "--device", std::to_string(common.device),
        "--quiet"};
    if (common.verbose) words.push_back("--verbose");
    return spawn(std::move(words));
}

pid_t spawn_hostile(const CommonOptions& common, const std::string& kind, double seconds) {
    return spawn({"vtpage-share", "hostile", "--socket", common.socket, "--kind", kind, "--seconds",
                  std::to_string(seconds)});
}

// Waits for the children; how many did not exit 0.
int wait_for_children(const std::vector<pid_t>& children) {
    int failed = 0;
    for (pid_t child : children) {
        int child_status = 0;
        waitpid(child, &child_status, 0);
        if (!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0) ++failed;
    }
    return failed;
}

// A fresh directory only this user can enter (mkdtemp makes it 0700), under $XDG_RUNTIME_DIR
// where there is one: no other user can connect to the socket or guess its path.
std::string private_socket_directory() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in this program changes its environment
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    const std::filesystem::path parent = runtime && *runtime
                                             ? std::filesystem::path(runtime)
                                             : std::filesystem::temp_directory_path();
    std::string pattern = (parent / "vtpage-share-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
        throw Error(Errc::io_error, "vtpage-share", "creating a private socket directory failed",
                    pattern);
    }
    return pattern;
}

}  // namespace

static int run(int argc, char** argv) {
    CLI::App app{
        "vtpage-share: a producer streams stamped tiles into shared pages; consumer "
        "processes map the same pages and verify them",
        program};
    app.require_subcommand(1);
    app.footer(
        "Exit status: 0 all good; 1 a tile failed verification or an error; 2 bad flags; 3 (a "
        "consumer) the producer was lost or cut this consumer off.");
    CommonOptions common;
    ProducerOptions produce;
    ConsumerOptions consume;
    std::size_t spawned_consumers = 2;

    auto add_common = [&](CLI::App* command) {
        command->add_option("--socket", common.socket, "Unix socket path of the producer");
        app::add_backend_option(*command, common.backend);
        command->add_option("--device", common.device, "CUDA device ordinal")
            ->check(app::count_in(0, 1024));
        command->add_flag("--quiet", common.quiet, "No progress line");
        command->add_flag("-v,--verbose", common.verbose, "Log the library's messages");
    };
    auto add_producer = [&](CLI::App* command) {
        command->add_option("--region-pages", produce.region_pages, "Pages in the region")
            ->check(app::count_in(1, std::uint64_t(1) << 24));
        command->add_option("--budget-pages", produce.budget_pages, "Resident pages at most")
            ->check(app::count_in(2, std::uint64_t(1) << 20));
        command->add_option("--batch", produce.batch, "Pages per commit and publish")
            ->check(app::count_in(1, 4096));
        command->add_option("--seconds", produce.seconds, "How long to stream")
            ->check(app::number_in(0.001, app::max_seconds));
        command->add_option("--tiles", produce.tiles, "Stop after this many tiles instead")
            ->check(app::count_in(0, std::uint64_t(1) << 50));
        command
            ->add_option("--wait-seconds", produce.wait_seconds, "How long to wait for consumers")
            ->check(app::number_in(0.001, app::max_seconds));
        command->add_flag("--compressible", produce.compressible,
                          "Ask for compressible pages (the grant is reported)");
        command
            ->add_option("--ack-timeout-ms", produce.ack_timeout_ms,
                         "The consumers' lease: acknowledge an unpublish within this")
            ->check(app::count_in(1, 600000));
    };
    CLI::App* producer = app.add_subcommand("producer", "Stream tiles into shared pages");
    add_common(producer);
    add_producer(producer);
    producer
        ->add_option("--consumers", produce.consumers,
                     "Wait for this many consumers before streaming (0: do not wait)")
        ->check(app::count_in(0, 1024));
    CLI::App* consumer = app.add_subcommand("consumer", "Map the producer's pages and verify");
    add_common(consumer);
    consumer->add_option("--seconds", consume.seconds, "Stop after this long (0: at the end)")
        ->check(app::number_in(0, app::max_seconds));
    consumer->add_option("--recheck", consume.recheck, "Pages re-verified after each poll")
        ->check(app::count_in(0, 1000));
    consumer
        ->add_option("--connect-seconds", consume.connect_seconds,
                     "How long to keep trying to connect")
        ->check(app::number_in(0.001, app::max_seconds));
    CLI::App* both = app.add_subcommand("both", "A producer and consumer processes of its own");
    add_common(both);
    add_producer(both);
    both->add_option("--consumers", spawned_consumers, "Consumer processes to start")
        ->check(app::count_in(1, 64));
    std::vector<std::string> hostile_kinds;
    both->add_option("--hostile-consumers", hostile_kinds,
                     "Also start these hostile consumers: trickle, never-ack, huge-frame")
        ->delimiter(',')
        ->check(CLI::IsMember({"trickle", "never-ack", "huge-frame"}));
    CLI::App* hostile = app.add_subcommand("hostile", "A consumer that attacks the producer");
    std::string hostile_name = "trickle";
    double hostile_seconds = 30;
    hostile->add_option("--socket", common.socket, "Unix socket path of the producer")->required();
    hostile->add_option("--kind", hostile_name, "trickle, never-ack or huge-frame")
        ->check(CLI::IsMember({"trickle", "never-ack", "huge-frame"}));
    hostile->add_option("--seconds", hostile_seconds, "Give up after this long")
        ->check(app::number_in(0.1, 86400.0));

    if (auto status = app::parse_command_line(app, argc, argv, [&] {
            if (*producer || *both) {
                if (produce.budget_pages < 2 * produce.batch) {
                    throw CLI::ValidationError("--budget-pages",
                                               detail::concat(produce.budget_pages,
                                                              " must hold two "
                                                              "batches (--batch ",
                                                              produce.batch, ")"));
                }
                if (produce.region_pages < produce.budget_pages + produce.batch) {
                    throw CLI::ValidationError(
                        "--region-pages", detail::concat(produce.region_pages,
                                                         " must exceed the "
                                                         "budget by a batch, so that pages are "
                                                         "recycled"));
                }
            }
            if (*consumer && common.socket.empty()) {
                throw CLI::RequiredError("--socket (for the consumer)");
            }
            check_socket_path(common.socket);
            // Only a socket can be at the path: a consumer would wait in vain at anything else.
            std::error_code ignored;
            const auto socket = std::filesystem::symlink_status(common.socket, ignored);
            if (!common.socket.empty() && std::filesystem::exists(socket) &&
                !std::filesystem::is_socket(socket)) {
                throw CLI::ValidationError("--socket",
                                           "'" + common.socket + "' exists and is not a socket");
            }
        })) {
        return *status;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    std::string private_directory;
    if (common.socket.empty()) {
        try {
            private_directory = private_socket_directory();
        } catch (const Error& error) {
            return app::report(program, app::exit_failure, error.what());
        }
        common.socket = private_directory + "/pages.sock";
    }
    // The directory goes when the program ends (the producer has removed its socket by then).
    struct RemoveDirectory {
        const std::string& path;
        ~RemoveDirectory() {
            if (!path.empty()) ::rmdir(path.c_str());
        }
    } remove_directory{private_directory};

    try {
        if (*producer) return run_producer(common, produce);
        if (*consumer) return run_consumer(common, consume);
        if (*hostile) {
            return share_demo::run_hostile_consumer(
                common.socket, *share_demo::hostile_kind(hostile_name), hostile_seconds);
        }
        // both: the producer here, its consumers (and hostile ones) in processes of their own.
        std::vector<pid_t> children, hostiles;
        produce.consumers = spawned_consumers;
        int status = 1;
        const auto start = Clock::now();
        try {
            status = run_producer(common, produce, [&] {
                for (const std::string& kind : hostile_kinds) {
                    hostiles.push_back(spawn_hostile(common, kind, produce.seconds + 30));
                }
                for (std::size_t i = 0; i < spawned_consumers; ++i) {
                    children.push_back(spawn_consumer(common));
                }
            });
        } catch (...) {
            for (pid_t child : children) kill(child, SIGTERM);
            for (pid_t child : hostiles) kill(child, SIGTERM);
            wait_for_children(children);
            wait_for_children(hostiles);
            throw;
        }
        const double producer_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        const int failed = wait_for_children(children);
        const int hostile_served = wait_for_children(hostiles);
        std::printf("%zu consumer process(es), %d failed\n", children.size(), failed);
        if (!hostiles.empty()) {
            std::printf(
                "%zu hostile consumer(s), %zu cut off; the producer ended after %.1f s "
                "(--seconds %.1f)\n",
                hostiles.size(), hostiles.size() - static_cast<std::size_t>(hostile_served),
                producer_seconds, produce.seconds);
        }
        return status != 0 || failed > 0 || hostile_served > 0 ? 1 : 0;
    } catch (const Error& error) {
        return app::report(program, app::exit_failure, error.what());
    }
}

// What the program's own handling lets through (CLI11's errors in setting up the flags, say)
// ends it with a message and status 1 rather than std::terminate.
int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& error) {
        return app::report(program, app::exit_failure, error.what());
    }
}
