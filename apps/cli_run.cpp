// `clustersim run SCENARIO.toml`: simulate the scenario's training iterations.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>

#include "analysis/run_report.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"
#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"

namespace clustersim::apps {

int verb_run(int argc, char** argv) {
  CLI::App app{"Simulate a scenario's training iterations.", "clustersim run"};
  std::string path, format = "text", trace;
  std::vector<std::string> sets;
  bool show_config = false, ignore_memory = false, full = false;
  app.add_option("scenario", path, "scenario file (TOML)")->required();
  app.add_option("--format", format, "text | json | csv");
  app.add_option("--set", sets, "override a key: section.key=value (repeatable)");
  app.add_option("--trace", trace, "write a Chrome trace-event JSON (Perfetto, chrome://tracing)");
  app.add_flag("--show-config", show_config, "print the resolved scenario before the result (text mode)");
  app.add_flag("--ignore-memory", ignore_memory, "simulate even if the model does not fit in GPU memory");
  app.add_flag("--full", full, "no memoised collectives: simulate every data-parallel collective as flows");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw CliError(e.what());
  }
  if (format != "text" && format != "json" && format != "csv") {
    throw CliError("--format '" + format + "': expected text, json or csv");
  }
  try {
    const scenarios::ScenarioSpec spec = scenarios::load_scenario(path, sets);
    analysis::RunOptions options;
    options.full = full;
    options.ignore_memory = ignore_memory;
    options.timeline = !trace.empty();
    const analysis::RunReport report = analysis::run_scenario(spec, options);
    if (!report.memory.fits && !ignore_memory) {
      std::fputs(analysis::memory_report_text(report.memory).c_str(), stdout);
      std::fprintf(stderr,
                   "clustersim run: %s does not fit in GPU memory (see above); no throughput is reported. "
                   "Apply one of the changes listed, or pass --ignore-memory to simulate it anyway.\n",
                   path.c_str());
      return 3;
    }
    if (show_config && format == "text") std::fputs(scenarios::show_config(spec).c_str(), stdout);
    if (format == "json") {
      std::fputs(analysis::run_json(report).c_str(), stdout);
    } else if (format == "csv") {
      std::fputs(analysis::run_csv(report).c_str(), stdout);
    } else {
      std::fputs(analysis::run_text(report).c_str(), stdout);
    }
    if (!trace.empty()) {
      std::ofstream out(trace);
      if (!out) throw CliError("--trace '" + trace + "': cannot write this file");
      out << analysis::chrome_trace(report);
    }
    return 0;
  } catch (const scenarios::ScenarioError& e) {
    std::fputs(e.format().c_str(), stderr);
    return 2;
  }
}

}  // namespace clustersim::apps
