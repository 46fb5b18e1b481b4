// An output file (--trace, --report, --dmon, --out, a sweep's CSV) written all or nothing.
//
// Why: a report cut at the disk's limit is invalid JSON/HTML that looks like a result, and a path
// that cannot be written must not be found out after minutes of simulation. So an OutputFile is
// opened when the command starts, before anything is simulated: it creates a temporary file in the
// target's own directory (so the final rename stays on one filesystem and is atomic), writes into
// it, checks every write and the close, and renames it over the target on commit(). Any failure
// throws OutputFileError naming the flag, the path and the operating system's reason; the
// temporary file is removed on every path out (commit, failure, or destruction without commit).
//
// A target that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in
// place -- there is nothing to rename onto -- still with every write checked; a directory is
// refused. Ownership: an OutputFile owns its file descriptor and its temporary file; it is movable,
// not copyable. Not thread-safe: one writer at a time.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace clustersim::analysis {

// An output that cannot be created, written or put in place: bad input (the CLI's exit 2).
struct OutputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class OutputFile {
 public:
  // Opens (creates) the output now. `flag` names it in errors ("--trace"); throws OutputFileError.
  OutputFile(std::string flag, std::string path);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // without commit(): closes and removes the temporary file; the target is untouched

  // Appends `text`; throws OutputFileError (e.g. "No space left on device").
  void write(std::string_view text);
  // Closes the file (checking the close) and renames it into place; throws OutputFileError.
  void commit();

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(std::string_view doing, int error);
  void discard() noexcept;

  std::string flag_, path_, tmp_;  // tmp_ empty: written in place (not a regular file)
  int fd_ = -1;
};

// Writes `text` to `path` all or nothing (OutputFile, then commit); throws OutputFileError.
void write_output_file(const std::string& flag, const std::string& path, std::string_view text);

}  // namespace clustersim::analysis
