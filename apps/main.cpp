// clustersim command-line entry point: dispatches to a verb and maps errors to exit codes
// (0 success, 2 bad input, 3 valid but infeasible, 1 internal error), per spec/cli.md.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output_file.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"
#include "scenarios/scenario_error.h"
#include "sim/units.h"

namespace {

struct Verb {
  const char* name;
  int (*run)(int, char**);
  const char* help;
};

constexpr Verb kVerbs[] = {
    {"run", clustersim::apps::verb_run, "simulate a scenario's training iterations: time, throughput, MFU, where the time goes"},
    {"collective", clustersim::apps::verb_collective, "simulate one collective over a range of sizes (nccl-tests style)"},
    {"topo", clustersim::apps::verb_topo, "show a cluster's topology: matrix, dot, json, bisection"},
    {"catalog", clustersim::apps::verb_catalog, "list GPU, node, NIC and link presets with their sources"},
    {"memory", clustersim::apps::verb_memory, "per-GPU memory of a scenario: will it fit, and what would make it fit"},
    {"validate", clustersim::apps::verb_validate, "run the bundled validation sets: predicted vs measured, error, MAPE"},
    {"calibrate", clustersim::apps::verb_calibrate, "fit named model constants to validation rows by least squares"},
    {"compare", clustersim::apps::verb_compare, "run a scenario once per combination of --vary values, side by side"},
    {"sweep", clustersim::apps::verb_sweep, "run a sweep file's grid of variations in parallel into a CSV"},
};

constexpr const char* kTimeOverflowHint =
    "the run asks for more than the simulator's clock can hold; use smaller sizes, fewer iterations or a "
    "faster (less oversubscribed) network";

// A message as printed: control characters from the user's input shown as \xNN, never raw.
std::string shown(const std::exception& e) { return clustersim::scenarios::printable(e.what()); }

// A result that did not reach standard output (a full disk, a closed pipe) is a failure, not exit 0.
int finish_stdout(const char* verb) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
  const int error = errno != 0 ? errno : EIO;
  std::fprintf(stderr, "clustersim %s: error: cannot write to standard output: %s\n", verb, std::strerror(error));
  return 2;
}

void usage(std::FILE* to) {
  std::fprintf(to, "clustersim: a discrete-event simulator of distributed deep-learning training clusters\n\n");
  std::fprintf(to, "usage: clustersim <verb> [options]   (clustersim <verb> --help for each verb)\n\nverbs:\n");
  for (const Verb& v : kVerbs) std::fprintf(to, "  %-12s %s\n", v.name, v.help);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-V") == 0) {
    std::printf("clustersim %s\n", CLUSTERSIM_VERSION);
    return 0;
  }
  for (const Verb& v : kVerbs) {
    if (std::strcmp(argv[1], v.name) != 0) continue;
    try {
      const int code = v.run(argc - 1, argv + 1);
      return code == 0 ? finish_stdout(v.name) : code;
    } catch (const clustersim::sim::SimTimeOverflow& e) {  // valid, but more simulated time than the clock holds
      std::fprintf(stderr, "clustersim %s: infeasible: %s\n    hint: %s\n", v.name, shown(e).c_str(), kTimeOverflowHint);
      return 3;
    } catch (const clustersim::analysis::OutputFileError& e) {  // an output that cannot be written
      std::fprintf(stderr, "clustersim %s: error: %s\n", v.name, shown(e).c_str());
      return 2;
    } catch (const clustersim::scenarios::ScenarioError& e) {  // file:line:col diagnostics
      std::fputs(e.format().c_str(), stderr);
      return 2;
    } catch (const clustersim::apps::CliError& e) {
      std::fprintf(stderr, "clustersim %s: error: %s\n", v.name, shown(e).c_str());
      return 2;
    } catch (const std::invalid_argument& e) {  // topology / collective errors: bad input
      std::fprintf(stderr, "clustersim %s: error: %s\n", v.name, shown(e).c_str());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "clustersim %s: internal error: %s\n", v.name, shown(e).c_str());
      return 1;
    }
  }
  std::vector<std::string_view> names;
  for (const Verb& v : kVerbs) names.emplace_back(v.name);
  const std::string guess = clustersim::scenarios::did_you_mean(argv[1], names);
  std::fprintf(stderr, "clustersim: error: unknown verb '%s'%s\n", clustersim::scenarios::printable(argv[1]).c_str(),
               guess.empty() ? "" : ("; did you mean '" + guess + "'?").c_str());
  usage(stderr);
  return 2;
}
