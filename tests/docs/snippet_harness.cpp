// Compiles every C++ (```cpp) and CUDA (```cuda) block of README.md and docs/*.md as written.
// tests/docs/snippets.txt gives each block what the text around it takes for granted: the
// headers to include and the function whose parameters are the block's free variables (and,
// where a block is written inside vtpage, the namespace the function is in). Nothing else is
// added: a block's own #include lines go to the top of its translation unit, the rest becomes
// the function's body. A block without an entry, or an entry without a block, fails the test.
//
//   vtpage_docs_snippets <source dir> <scratch dir> --cxx "<compiler and flags>"
//                        [--cuda "<nvcc and flags>"]
//
// CUDA blocks are compiled where nvcc is given and reported as skipped (with the reason)
// otherwise. Exit 0 when every block compiled, 1 otherwise, 2 for bad arguments.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Block {
    std::string language;  // cpp or cuda
    std::vector<std::string> lines;
};

struct Harness {
    std::vector<std::string> includes;
    std::string function;
    std::string name_space;
    bool used = false;
};

using Key = std::string;  // "<file> <n>" (n counts the file's cpp and cuda blocks from 1)

std::vector<std::string> read_lines(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

void collect_blocks(const fs::path& root, const std::string& file, std::map<Key, Block>& out) {
    int count = 0;
    Block* open = nullptr;
    for (const std::string& line : read_lines(root / file)) {
        if (open && line.rfind("```", 0) == 0) {
            open = nullptr;
        } else if (open) {
            open->lines.push_back(line);
        } else if (line == "```cpp" || line == "```cuda") {
            open = &out[file + " " + std::to_string(++count)];
            open->language = line.substr(3);
        }
    }
}

// snippets.txt: "snippet <file> <n>", then "include <header>", "namespace <name>",
// "function <signature>" lines, until "end". # starts a comment.
std::map<Key, Harness> read_harness(const fs::path& path) {
    std::map<Key, Harness> harness;
    Harness* current = nullptr;
    for (const std::string& line : read_lines(path)) {
        if (line.empty() || line[0] == '#') continue;
        const auto space = line.find(' ');
        const std::string word = line.substr(0, space);
        const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
        if (word == "snippet")
            current = &harness[rest];
        else if (word == "end")
            current = nullptr;
        else if (current && word == "include")
            current->includes.push_back(rest);
        else if (current && word == "function")
            current->function = rest;
        else if (current && word == "namespace")
            current->name_space = rest;
        else
            std::fprintf(stderr, "snippets.txt: cannot read '%s'\n", line.c_str());
    }
    return harness;
}

std::string translation_unit(const Key& key, const Block& block, const Harness& harness) {
    std::ostringstream unit;
    unit << "// " << key << " as written, in the harness of tests/docs/snippets.txt\n";
    for (const std::string& line : block.lines) {
        if (line.rfind("#include", 0) == 0) unit << line << "\n";
    }
    for (const std::string& header : harness.includes) unit << "#include " << header << "\n";
    if (!harness.name_space.empty()) unit << "namespace " << harness.name_space << " {\n";
    unit << harness.function << " {\n#line 1 \"" << key << "\"\n";
    for (const std::string& line : block.lines) {
        unit << (line.rfind("#include", 0) == 0 ? "" : line) << "\n";
    }
    unit << "}\n";
    if (!harness.name_space.empty()) unit << "}  // namespace " << harness.name_space << "\n";
    return unit.str();
}

// Compiles one block; false when it does not compile.
bool compile(const Key& key, const Block& block, const Harness& harness, const fs::path& scratch,
             const std::string& command) {
    std::string name = key;
    for (char& c : name) c = (c == ' ' || c == '/' || c == '.') ? '_' : c;
    const fs::path source = scratch / (name + (block.language == "cuda" ? ".cu" : ".cpp"));
    std::ofstream(source) << translation_unit(key, block, harness);
    const std::string line =
        command + " -c " + source.string() + " -o " + (scratch / (name + ".o")).string();
    const bool ok = std::system(line.c_str()) == 0;
    std::printf("%s %s (%s)\n", ok ? "compiled" : "FAILED  ", key.c_str(), source.c_str());
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5 || std::string(argv[3]) != "--cxx") {
        std::fprintf(stderr,
                     "usage: vtpage_docs_snippets <source> <scratch> --cxx \"...\" "
                     "[--cuda \"...\"]\n");
        return 2;
    }
    const fs::path root = argv[1], scratch = argv[2];
    const std::string cxx = argv[4];
    const std::string cuda = argc > 6 && std::string(argv[5]) == "--cuda" ? argv[6] : "";
    fs::create_directories(scratch);
    std::map<Key, Block> blocks;
    collect_blocks(root, "README.md", blocks);
    for (const auto& entry : fs::directory_iterator(root / "docs")) {
        if (entry.path().extension() == ".md") {
            collect_blocks(root, "docs/" + entry.path().filename().string(), blocks);
        }
    }
    std::map<Key, Harness> harness = read_harness(root / "tests/docs/snippets.txt");
    int failed = 0, compiled = 0;
    for (const auto& [key, block] : blocks) {
        auto found = harness.find(key);
        if (found == harness.end()) {
            std::printf("FAILED   %s has no entry in tests/docs/snippets.txt\n", key.c_str());
            ++failed;
            continue;
        }
        found->second.used = true;
        if (block.language == "cuda" && cuda.empty()) {
            std::printf("skipped  %s: CUDA, and this build found no nvcc\n", key.c_str());
            continue;
        }
        const bool ok =
            compile(key, block, found->second, scratch, block.language == "cuda" ? cuda : cxx);
        ok ? ++compiled : ++failed;
    }
    for (const auto& [key, entry] : harness) {
        if (!entry.used)
            std::printf("FAILED   snippets.txt names %s: no such block\n", key.c_str());
        failed += entry.used ? 0 : 1;
    }
    std::printf("docs snippets: %d compiled, %d failed\n", compiled, failed);
    return failed ? 1 : 0;
}
