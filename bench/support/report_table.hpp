// The benchmarks' output: a titled table printed as Markdown (ready to paste into the docs)
// and kept as JSON for tools and plots.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace vtpage::bench {

class ReportTable {
public:
    ReportTable(std::string title, std::vector<std::string> columns);
    void add_row(std::vector<std::string> cells);
    void print(std::FILE* out = stdout) const;
    nlohmann::json to_json() const;

private:
    std::string title_;
    std::vector<std::string> columns_;
    std::vector<std::vector<std::string>> rows_;
};

// "12.3", with the given digits after the point.
std::string fixed(double value, int digits = 1);
double median(std::vector<double> values);
// The median over repeated runs of one field of their results: median_of(runs, &Costs::evict).
template <typename Result>
double median_of(const std::vector<Result>& runs, double Result::*field) {
    std::vector<double> values;
    values.reserve(runs.size());
    for (const Result& run : runs) values.push_back(run.*field);
    return median(std::move(values));
}

// Seconds since construction.
class Stopwatch {
public:
    Stopwatch() : start_(std::chrono::steady_clock::now()) {}
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_;
};

// Writes json to path (if path is not empty), reporting failure on stderr.
bool write_json_file(const std::string& path, const nlohmann::json& json);

}  // namespace vtpage::bench
