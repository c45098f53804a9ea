#include "report_table.hpp"

#include <algorithm>
#include <fstream>

namespace vtpage::bench {

ReportTable::ReportTable(std::string title, std::vector<std::string> columns)
    : title_(std::move(title)), columns_(std::move(columns)) {}

void ReportTable::add_row(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    rows_.push_back(std::move(cells));
}

void ReportTable::print(std::FILE* out) const {
    std::vector<std::size_t> widths(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) {
        widths[c] = columns_[c].size();
        for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::fputs("|", out);
        for (std::size_t c = 0; c < cells.size(); ++c) {
            std::fprintf(out, " %-*s |", static_cast<int>(widths[c]), cells[c].c_str());
        }
        std::fputs("\n", out);
    };
    std::fprintf(out, "\n%s\n\n", title_.c_str());
    line(columns_);
    std::fputs("|", out);
    for (std::size_t width : widths) std::fprintf(out, "%s|", std::string(width + 2, '-').c_str());
    std::fputs("\n", out);
    for (const auto& row : rows_) line(row);
    std::fflush(out);
}

nlohmann::json ReportTable::to_json() const {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : rows_) {
        nlohmann::json object;
        for (std::size_t c = 0; c < columns_.size(); ++c) object[columns_[c]] = row[c];
        rows.push_back(object);
    }
    return {{"title", title_}, {"rows", rows}};
}

std::string fixed(double value, int digits) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*f", digits, value);
    return text;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
}

bool write_json_file(const std::string& path, const nlohmann::json& json) {
    if (path.empty()) return true;
    std::ofstream file(path);
    file << json.dump(2) << "\n";
    if (!file) {
        std::fprintf(stderr, "could not write %s\n", path.c_str());
        return false;
    }
    return true;
}

}  // namespace vtpage::bench
