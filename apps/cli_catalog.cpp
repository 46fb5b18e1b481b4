// `clustersim catalog [gpus|nodes|models|links|nics]`: the presets with key numbers and sources.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "analysis/catalog_report.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"
#include "workloads/compute/compute_model.h"

namespace clustersim::apps {

int verb_catalog(int argc, char** argv) {
  CLI::App app{"List presets with their key numbers and sources.", "clustersim catalog"};
  std::string what = "gpus";
  app.add_option("what", what, "gpus | nodes | models | links | nics | constants");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (what == "constants") {
    // The compute model's named constants: overridable from [model_constants] and fitted by calibrate.
    const workloads::ComputeConstants c;
    std::printf("%-28s %10s %22s  %s\n", "constant", "default", "range", "meaning, unit, source");
    for (std::string_view name : workloads::ComputeConstants::names()) {
      const auto [lo, hi] = c.range(name);
      std::printf("%-28.*s %10.4g %10.4g .. %-9.4g  %.*s\n", static_cast<int>(name.size()), name.data(), c.get(name), lo, hi,
                  static_cast<int>(c.describe(name).size()), c.describe(name).data());
    }
    return 0;
  }
  if (what != "gpus" && what != "nodes" && what != "models" && what != "links" && what != "nics") {
    throw CliError("'" + what + "': expected one of gpus, nodes, models, links, nics, constants");
  }
  std::fputs(analysis::catalog_table(what).c_str(), stdout);
  return 0;
}

}  // namespace clustersim::apps
