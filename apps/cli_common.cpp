// Shared command-line helpers (see cli_common.h).
#include "apps/cli_common.h"
#include "apps/verb_examples.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "sim/enum_names.h"
#include "topology/catalog.h"
#include "topology/cluster_spec.h"

namespace clustersim::apps {

std::string join(const std::vector<std::string_view>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

namespace {

// "; did you mean '--nodes'?" for the first argument that looks like a flag the verb does not
// have and is close to one it has; "" otherwise.
std::string flag_suggestion(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  }
  const std::vector<std::string_view> candidates(names.begin(), names.end());
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() < 3 || arg.substr(0, 2) != "--") continue;
    const std::string_view flag = arg.substr(0, arg.find('='));
    if (std::find(candidates.begin(), candidates.end(), flag) != candidates.end()) continue;
    const std::string guess = scenarios::did_you_mean(flag, candidates);
    if (!guess.empty()) return "; did you mean '" + guess + "'?";
  }
  return "";
}

// CLI11 reads "nan", "inf" and "1e999" into a double flag; no flag of clustersim means any of them.
void check_finite_numbers(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_type_name() != "FLOAT" || o->count() == 0) continue;
    for (const std::string& text : o->results()) parse_finite(o->get_name(false, true), text);
  }
}

}  // namespace

double parse_finite(std::string_view flag, std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || errno == ERANGE) {
    throw CliError(std::string(flag) + " '" + s + "': expected a finite number, like 2 or 0.5");
  }
  return v;
}

std::optional<int> parse_args(CLI::App& app, int argc, char** argv) {
  const std::string name = app.get_name();  // "clustersim <verb>"
  app.footer(examples_footer(name.substr(name.find(' ') + 1)));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    throw CliError(std::string(e.what()) + flag_suggestion(app, argc, argv));
  } catch (const CLI::ParseError& e) {
    throw CliError(std::string(e.what()));
  }
  check_finite_numbers(app);
  return std::nullopt;
}

double parse_size(std::string_view flag, std::string_view text) {
  const auto bad = [&]() {
    return CliError(std::string(flag) + " '" + std::string(text) +
                    "': expected a size in bytes like 8, 1K, 128M or 8G (suffixes are powers of 1024)");
  };
  if (text.empty()) throw bad();
  std::string_view digits = text;
  if (digits.back() == 'B' || digits.back() == 'b') digits.remove_suffix(1);
  double scale = 1;
  if (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K': scale = 1024.0; break;
      case 'M': scale = 1024.0 * 1024; break;
      case 'G': scale = 1024.0 * 1024 * 1024; break;
      case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
      default: throw bad();
    }
    digits.remove_suffix(1);
  }
  if (digits.empty()) throw bad();
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || ptr != digits.data() + digits.size() || value < 0) throw bad();
  return static_cast<double>(value) * scale;
}

void ClusterFlags::add_to(CLI::App& app) {
  app.add_option("--node", node, "node preset id (see `clustersim catalog nodes`)");
  app.add_option("--nodes", nodes, "number of nodes");
  app.add_option("--fabric", fabric, "rail-optimized | fat-tree | single-switch (nodes > 1; default: rail-optimized with several NICs per node)");
  app.add_option("--oversubscription", oversubscription, "leaf-to-spine oversubscription ratio (>= 1)");
  app.add_option("--routing", routing, "destination-mod-k | flow-hash: how switches pick a spine (default: the NIC's)");
}

topology::ClusterSpec ClusterFlags::cluster() const {
  const topology::NodeSpec* preset = topology::find_node_preset(node);
  if (preset == nullptr) {
    std::vector<std::string_view> ids;
    for (const auto& p : topology::all_node_presets()) ids.push_back(p.id);
    throw CliError("--node '" + node + "': unknown node preset; valid presets: " + join(ids));
  }
  if (nodes < 1 || nodes > topology::kMaxNodes) {
    throw CliError("--nodes " + std::to_string(nodes) + ": expected 1 to " + std::to_string(topology::kMaxNodes) +
                   " nodes (clustersim's limit; see docs/cli.md, Limits)");
  }
  if (std::int64_t{preset->gpus} * nodes > topology::kMaxClusterGpus) {
    throw CliError("--nodes " + std::to_string(nodes) + ": " + std::to_string(std::int64_t{preset->gpus} * nodes) +
                   " GPUs, more than the " + std::to_string(topology::kMaxClusterGpus) +
                   " clustersim builds (docs/cli.md, Limits); use at most --nodes " +
                   std::to_string(topology::kMaxClusterGpus / preset->gpus));
  }
  if (oversubscription < 1) {
    throw CliError("--oversubscription " + std::to_string(oversubscription) + ": expected a ratio >= 1");
  }
  topology::ClusterSpec spec;
  spec.node = *preset;
  spec.nodes = nodes;
  spec.oversubscription = oversubscription;
  if (!fabric.empty()) {  // else the node's default: ClusterSpec::resolved_fabric()
    spec.fabric = sim::parse(topology::kFabricNames, fabric);
    if (!spec.fabric) {
      throw CliError("--fabric '" + fabric + "': expected one of " + join(sim::names_of(topology::kFabricNames)));
    }
  }
  if (!routing.empty()) {
    spec.routing = sim::parse(topology::kFabricRoutingNames, routing);
    if (!spec.routing) {
      throw CliError("--routing '" + routing + "': expected " + join(sim::names_of(topology::kFabricRoutingNames), " or "));
    }
  }
  return spec;
}

topology::ClusterSpec cluster_from_scenario_or_flags(const std::string& scenario_path, const ClusterFlags& flags) {
  if (scenario_path.empty() == flags.node.empty()) {
    throw CliError("give either SCENARIO.toml or --node PRESET (see `clustersim catalog nodes`)");
  }
  if (!scenario_path.empty()) return scenarios::load_cluster(scenario_path);
  return flags.cluster();
}

int report_invariants(const std::optional<sim::InvariantReport>& report, bool text_output) {
  if (!report) return 0;
  std::fputs(report->summary().c_str(), text_output ? stdout : stderr);
  return report->all_hold() ? 0 : kExitInvariantViolated;
}

}  // namespace clustersim::apps
