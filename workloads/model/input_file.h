// Reading a file the user names as input: a scenario, a model-constants include, a sweep file, a
// Hugging Face config.json.
//
// Why: a path is not always a file. A directory read as text looks empty (then "missing [cluster]
// section"), a FIFO blocks forever, /dev/zero grows until memory runs out, and an unreadable file
// must say "Permission denied". So only a regular file of at most kMaxInputBytes is read, opened
// without blocking, and every refusal carries its reason for the caller's diagnostic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace clustersim::workloads {

// 16 MiB: a thousand times the largest scenario or config.json clustersim ships (a few KiB), and
// small enough to read at once.
inline constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{16} << 20;

// The whole text of `path`, or nothing with `why` set: "No such file or directory",
// "Permission denied", "it is a directory", "it is not a regular file (a FIFO, socket or device)",
// "it is N bytes, more than the 16 MiB an input file may have".
std::optional<std::string> read_input_file(const std::string& path, std::string& why);

}  // namespace clustersim::workloads
