#include "vtpage/app/command_line.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

namespace vtpage::app {

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv,
                                      const std::function<void()>& check) {
    add_version_flag(app, app.get_name());
    try {
        app.parse(argc, argv);
        if (check) check();
    } catch (const CLI::Success& done) {
        return app.exit(done);  // --help or --version: printed on stdout, exit 0
    } catch (const CLI::ParseError& error) {
        std::fprintf(stderr, "%s: %s\nRun with --help for the options.\n", app.get_name().c_str(),
                     error.what());
        return exit_usage;
    }
    return std::nullopt;
}

std::string version_line(std::string_view program) {
    return std::string(program) + " " + VTPAGE_APP_VERSION;
}

CLI::Option* add_version_flag(CLI::App& app, std::string_view program) {
    return app.set_version_flag("--version", version_line(program),
                                "Print the program's name and version, and exit");
}

int report(std::string_view program, int status, std::string_view message) {
    std::fprintf(stderr, "%.*s: %.*s\n", int(program.size()), program.data(), int(message.size()),
                 message.data());
    return status;
}

CLI::Option* add_backend_option(CLI::App& app, std::string& backend) {
    return app.add_option("--backend", backend, "auto (the GPU when there is one), cuda or host")
        ->check(CLI::IsMember({"auto", "cuda", "host"}));
}

CLI::Validator writable_file() {
    return CLI::Validator(
        [](std::string& path) -> std::string {
            namespace fs = std::filesystem;
            if (path.empty()) return "an empty path";
            std::error_code error;
            if (fs::is_directory(path, error)) return "'" + path + "' is a folder";
            if (fs::exists(path, error)) {
                return ::access(path.c_str(), W_OK) == 0 ? "" : "cannot write '" + path + "'";
            }
            fs::path folder = fs::path(path).parent_path();
            if (folder.empty()) folder = ".";
            if (!fs::is_directory(folder, error)) {
                return "no folder '" + folder.string() + "' to write '" + path + "' in";
            }
            return ::access(folder.c_str(), W_OK) == 0
                       ? ""
                       : "cannot write in '" + folder.string() + "'";
        },
        "FILE (writable)");
}

}  // namespace vtpage::app
