// Output files are all or nothing (analysis/output_file.h): created before anything runs, written
// to a temporary next to the target, checked, renamed into place; a failure names the path and the
// operating system's reason and leaves neither a truncated target nor a temporary (issue 14).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>

#include "analysis/output_file.h"

using clustersim::analysis::OutputFile;
using clustersim::analysis::OutputFileError;
using clustersim::analysis::write_output_file;

namespace {

std::string scratch_dir() {
  const std::string dir = "/tmp/clustersim_output_file_test_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t files_in(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const OutputFileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("analysis::OutputFile: the target appears only on commit, whole, and replaces an old file") {
  const std::string dir = scratch_dir(), path = dir + "/out.json";
  write_output_file("--trace", path, "old");
  {
    OutputFile out("--trace", path);
    out.write("{\"a\": ");
    out.write("1}\n");
    CHECK(read(path) == "old");  // not yet in place
    CHECK(files_in(dir) == 2);   // the target and the temporary
    out.commit();
  }
  CHECK(read(path) == "{\"a\": 1}\n");
  CHECK(files_in(dir) == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("analysis::OutputFile: without commit (an exception, exit 3) the temporary is removed") {
  const std::string dir = scratch_dir();
  {
    OutputFile out("--report", dir + "/r.html");
    out.write("<html>");
  }
  CHECK(files_in(dir) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("analysis::OutputFile: a missing directory, a directory and an empty name fail when opened") {
  CHECK(error_of([] { OutputFile("--dmon", "/nonexistent/d"); }) ==
        "--dmon '/nonexistent/d': cannot create it: No such file or directory");
  const std::string dir = scratch_dir();
  CHECK(error_of([&] { OutputFile("--out", dir); }) == "--out '" + dir + "': cannot write to it: Is a directory");
  CHECK(error_of([] { OutputFile("--out", ""); }) == "--out '': expected a file name");
  CHECK(files_in(dir) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("analysis::OutputFile: /dev/full fails on write with ENOSPC, /dev/null is written in place") {
  CHECK(error_of([] { write_output_file("--trace", "/dev/full", std::string(1 << 16, 'x')); }) ==
        "--trace '/dev/full': cannot write to it: No space left on device");
  CHECK(error_of([] { write_output_file("--trace", "/dev/null", "ignored"); }).empty());
  CHECK(std::filesystem::exists("/dev/null"));
}
