// Configuration text helpers (see source_text.h).
#include "scenarios/source_text.h"


#include "workloads/model/input_file.h"

namespace clustersim::scenarios {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

std::optional<std::string> read_file(const std::string& path) {
  std::string why;
  return read_file(path, why);
}

std::optional<std::string> read_file(const std::string& path, std::string& why) {
  return workloads::read_input_file(path, why);
}

}  // namespace clustersim::scenarios
