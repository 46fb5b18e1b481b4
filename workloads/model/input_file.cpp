// Reading a user's input file (see input_file.h), on POSIX calls so that a refusal carries errno's
// reason and a FIFO is recognised without blocking.
#include "workloads/model/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace clustersim::workloads {
namespace {

// The reason a file of this kind is refused, or "" for a regular file.
std::string refusal(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "it is a directory, not a file";
  if (!S_ISREG(st.st_mode)) return "it is not a regular file (a FIFO, socket or device)";
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxInputBytes)
    return "it is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(kMaxInputBytes >> 20) +
           " MiB an input file may have";
  return "";
}

}  // namespace

std::optional<std::string> read_input_file(const std::string& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // a FIFO must not block here
  if (fd < 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  why = ::fstat(fd, &st) != 0 ? std::strerror(errno) : refusal(st);
  std::string text;
  if (why.empty()) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) why = std::strerror(errno);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);  // a file that shrank while being read
  }
  ::close(fd);
  if (!why.empty()) return std::nullopt;
  return text;
}

}  // namespace clustersim::workloads
