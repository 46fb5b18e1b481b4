// Helpers shared by the command-line verbs: argument errors (exit 2), size parsing, and building
// a cluster from --node/--nodes flags (ClusterFlags).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/invariant_report.h"
#include "topology/cluster_spec.h"

namespace CLI {
class App;
}

namespace clustersim::apps {

// Bad command-line input: printed as one line on stderr, exit code 2.
struct CliError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses a verb's arguments: returns the exit code when --help was asked for (the help is
// printed), nothing when parsing succeeded; a parse error throws CliError (exit 2).
std::optional<int> parse_args(CLI::App& app, int argc, char** argv);

// The one parser of a number given on the command line: a finite decimal ("2", "0.5", "1e-3");
// "nan", "inf", an overflow or trailing text throw CliError naming `flag`. parse_args applies it to
// every floating-point flag of every verb.
double parse_finite(std::string_view flag, std::string_view text);

// Parses nccl-tests sizes: "8", "1K", "128M", "8G" (powers of 1024; optional trailing B).
// Throws CliError naming `flag` on anything else.
double parse_size(std::string_view flag, std::string_view text);

// The flags that describe a cluster without a scenario, shared by every verb that builds one
// (topo, collective): --node PRESET --nodes N --fabric F --oversubscription R --routing P.
struct ClusterFlags {
  std::string node;              // node preset id; "" when not given
  int nodes = 1;
  std::string fabric;            // "": the node's default (ClusterSpec::resolved_fabric)
  double oversubscription = 1;   // leaf-to-spine
  std::string routing;           // "": the NIC fabric's own (destination-mod-k for InfiniBand, flow-hash for Ethernet)

  // Declares the five options on `app`, in the order above.
  void add_to(CLI::App& app);
  // The cluster the flags describe; throws CliError naming the bad flag (and listing valid values).
  topology::ClusterSpec cluster() const;
};

// The cluster of SCENARIO.toml (when `scenario_path` is given) or of the flags; exactly one of
// the two (the scenario or --node) must be given. A bad scenario throws scenarios::ScenarioError (exit 2).
topology::ClusterSpec cluster_from_scenario_or_flags(const std::string& scenario_path, const ClusterFlags& flags);

std::string join(const std::vector<std::string_view>& items, std::string_view sep = ", ");

// The exit code of a run whose --check found an invariant violated (docs/cli.md, Exit codes).
inline constexpr int kExitInvariantViolated = 4;
// --check: prints the report's summary ("invariants: 6 checked, all hold", or what failed with its
// numbers) on stdout for text output, on stderr beside JSON or CSV; returns 0, or
// kExitInvariantViolated when one failed. Nothing when `report` is empty (no --check).
int report_invariants(const std::optional<sim::InvariantReport>& report, bool text_output);

}  // namespace clustersim::apps
