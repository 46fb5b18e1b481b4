// Runs the built clustersim binary and captures its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace clustersim::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `args` is appended to the binary path as is (quote as a shell would).
inline CliResult run_cli(const std::string& args) {
  static int counter = 0;
  const std::string base = "/tmp/clustersim_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string cmd = std::string("cd ") + CLUSTERSIM_SOURCE_DIR + " && " + CLUSTERSIM_BINARY + " " + args +
                          " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

}  // namespace clustersim::testing
