// An output file written all or nothing (see output_file.h), on POSIX calls so that every failure
// comes with the operating system's reason (errno).
#include "analysis/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace clustersim::analysis {
namespace {

// Unique within the process (several outputs may share a directory) and across processes (pid).
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace

OutputFile::OutputFile(std::string flag, std::string path) : flag_(std::move(flag)), path_(std::move(path)) {
  if (path_.empty()) throw OutputFileError(flag_ + " '': expected a file name");
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail("write to it", EISDIR);
  const bool in_place = ::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode);  // /dev/null, a FIFO
  if (in_place) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail("open it", errno);
    return;
  }
  tmp_ = temporary_name(path_);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int error = errno;
    tmp_.clear();  // nothing was created
    fail("create it", error);
  }
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : flag_(std::move(other.flag_)), path_(std::move(other.path_)), tmp_(std::exchange(other.tmp_, {})),
      fd_(std::exchange(other.fd_, -1)) {}

OutputFile::~OutputFile() { discard(); }

void OutputFile::write(std::string_view text) {
  if (fd_ < 0) fail("write to it", EBADF);
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write to it", n < 0 ? errno : EIO);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void OutputFile::commit() {
  if (fd_ < 0) fail("write to it", EBADF);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail("finish writing it", errno);  // NFS and quotas report here
  if (tmp_.empty()) return;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("put it in place", errno);
  tmp_.clear();
}

void OutputFile::fail(std::string_view doing, int error) {
  discard();
  throw OutputFileError(flag_ + " '" + path_ + "': cannot " + std::string(doing) + ": " + std::strerror(error));
}

void OutputFile::discard() noexcept {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  if (!tmp_.empty()) ::unlink(std::exchange(tmp_, {}).c_str());
}

void write_output_file(const std::string& flag, const std::string& path, std::string_view text) {
  OutputFile out(flag, path);
  out.write(text);
  out.commit();
}

}  // namespace clustersim::analysis
