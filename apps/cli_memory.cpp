// `clustersim memory SCENARIO.toml`: per-GPU memory of the most loaded GPU, the allocator's view,
// capacity and headroom; exit 3 with advice when it does not fit (spec/cli.md).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "analysis/memory_report.h"
#include "analysis/run.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"
#include "scenarios/loader.h"

namespace clustersim::apps {

int verb_memory(int argc, char** argv) {
  CLI::App app{"Per-GPU memory of a scenario: will it fit, and what would make it fit.", "clustersim memory"};
  std::string path, format = "text";
  std::vector<std::string> overrides;
  bool expandable = false;
  app.add_option("scenario", path, "scenario file (TOML, see docs/scenario.md)")->required();
  app.add_option("--format", format, "text | json");
  app.add_option("--set", overrides, "override a scenario key: --set section.key=value (repeatable)");
  app.add_flag("--expandable-segments", expandable,
               "replay the allocator with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (format != "text" && format != "json") throw CliError("--format '" + format + "': expected text or json");

  scenarios::ScenarioSpec spec;
  try {
    spec = scenarios::load_scenario(path, overrides);
    analysis::check_model_constants(spec);
  } catch (const scenarios::ScenarioError& e) {
    std::fputs(e.format().c_str(), stderr);
    return 2;
  }
  analysis::MemoryReportOptions options;
  options.expandable_segments = expandable;
  const analysis::MemoryReport report = analysis::memory_for_scenario(spec, options);
  const std::string out = format == "json" ? analysis::memory_report_json(report) : analysis::memory_report_text(report);
  std::fputs(out.c_str(), stdout);
  if (!report.fits) {
    std::fflush(stdout);
    std::fprintf(stderr, "clustersim memory: %s does not fit in GPU memory (see the advice above)\n", path.c_str());
    return 3;
  }
  return 0;
}

}  // namespace clustersim::apps
