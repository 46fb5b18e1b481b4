// Reading a configuration file's text and splitting it into lines, so diagnostics can quote the
// offending line (scenario files and sweep files alike).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::scenarios {

// The lines of `text` without their line ends ("\n" or "\r\n"); line i is quoted for line i + 1.
std::vector<std::string> split_lines(std::string_view text);
// The whole file, or nothing when it cannot be read: regular files of at most 16 MiB only
// (workloads/model/input_file.h), so a directory, FIFO or /dev/zero is refused, never read.
std::optional<std::string> read_file(const std::string& path);
// As read_file, with the reason for a refusal in `why` ("Permission denied", "it is a directory, ...").
std::optional<std::string> read_file(const std::string& path, std::string& why);

}  // namespace clustersim::scenarios
