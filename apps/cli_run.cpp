// `clustersim run SCENARIO.toml`: simulate the scenario's training iterations.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "analysis/dmon.h"
#include "analysis/html_report.h"
#include "analysis/memory_report.h"
#include "analysis/output_file.h"
#include "analysis/run_explain.h"
#include "analysis/run_report.h"
#include "analysis/shared_cluster.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"
#include "scenarios/scenario_error.h"

namespace clustersim::apps {
namespace {

// The outputs asked for, opened (created) before anything is simulated: a path that cannot be
// written fails in a second, not after the run (analysis/output_file.h).
struct RunOutputs {
  std::optional<analysis::OutputFile> trace, dmon, report;

  static std::optional<analysis::OutputFile> open(const char* flag, const std::string& path) {
    if (path.empty()) return std::nullopt;
    return std::optional<analysis::OutputFile>(std::in_place, flag, path);
  }
  bool any() const { return trace || dmon || report; }
};

// Writes what `render` returns into `out` and puts it in place, unless the option was not given.
template <typename Render>
void write_output(std::optional<analysis::OutputFile>& out, Render render) {
  if (!out) return;
  out->write(render());
  out->commit();
}

// A scenario with [[job]] tables: each job's result and its slowdown from sharing the cluster
// (analysis/shared_cluster.h). Text or JSON; the per-run files (--trace, --report, ...) are for one job.
int run_jobs(const scenarios::ScenarioSpec& spec, const std::string& format, bool ignore_memory, bool full) {
  if (format == "csv") throw CliError("--format csv: a scenario with [[job]] tables prints text or json");
  analysis::RunOptions options;
  options.full = full;
  options.ignore_memory = ignore_memory;
  const analysis::SharedClusterRun run = analysis::run_shared_cluster(spec, options);
  std::fputs((format == "json" ? analysis::shared_cluster_json(spec, run) : analysis::shared_cluster_text(spec, run)).c_str(),
             stdout);
  return std::any_of(run.jobs.begin(), run.jobs.end(), [](const analysis::JobRun& j) { return j.ran; }) ? 0 : 3;
}

}  // namespace

int verb_run(int argc, char** argv) {
  CLI::App app{"Simulate a scenario's training iterations.", "clustersim run"};
  std::string path, format = "text", trace, dmon, dmon_fields = "203,204,1011,1012,155", report_path;
  double dmon_ms = 1000;
  std::vector<std::string> sets;
  bool show_config = false, ignore_memory = false, full = false, check = false, explain = false;
  int explain_stage = -1;
  app.add_option("scenario", path, "scenario file (TOML)")->required();
  app.add_option("--format", format, "text | json | csv");
  app.add_option("--set", sets, "override a key: section.key=value (repeatable)");
  app.add_option("--trace", trace, "write a Chrome trace-event JSON (Perfetto, chrome://tracing)");
  app.add_option("--dmon", dmon, "write sampled GPU metrics in the layout of dcgmi dmon");
  app.add_option("-e", dmon_fields, "--dmon: DCGM field ids, comma-separated (default 203,204,1011,1012,155)");
  app.add_option("-d", dmon_ms, "--dmon: sample period in milliseconds (default 1000)");
  app.add_option("--report", report_path, "write a self-contained HTML report");
  app.add_flag("--show-config", show_config, "print the resolved scenario before the result (text mode)");
  app.add_flag("--ignore-memory", ignore_memory, "simulate even if the model does not fit in GPU memory");
  app.add_flag("--full", full, "no memoised collectives: simulate every data-parallel collective as flows");
  app.add_flag("--explain", explain,
               "after the result: the last stage's layers op by op with formulas, their communication, and how "
               "they add up to the iteration time (json: an \"explain\" object)");
  app.add_option("--explain-stage", explain_stage, "with --explain: explain this pipeline stage too (0..pp-1)");
  app.add_flag("--check", check, "check the simulation's invariants after every iteration; exit 4 when one fails");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (format != "text" && format != "json" && format != "csv") {
    throw CliError("--format '" + format + "': expected text, json or csv");
  }
  analysis::DmonOptions dmon_options;
  try {
    dmon_options.fields = analysis::parse_dmon_fields(dmon_fields);
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what());
  }
  if (dmon_ms < 1) throw CliError("-d " + std::to_string(dmon_ms) + ": the sample period is in milliseconds, at least 1");
  dmon_options.period_ms = dmon_ms;
  try {
    const scenarios::ScenarioSpec spec = scenarios::load_scenario(path, sets);
    if (!spec.jobs.empty() && check) {
      throw CliError("--check: a scenario with [[job]] tables is not checked yet; check each job as its own scenario");
    }
    if (explain_stage != -1 && !explain) throw CliError("--explain-stage: give it with --explain");
    if (explain && !spec.jobs.empty()) {
      throw CliError("--explain: a scenario with [[job]] tables is not explained yet; explain each job as its own scenario");
    }
    if (explain && format == "csv") throw CliError("--explain: prints text or json, not csv");
    if (explain_stage != -1 && (explain_stage < 0 || explain_stage >= spec.parallel.pp)) {
      throw CliError("--explain-stage " + std::to_string(explain_stage) + ": the scenario has " +
                     std::to_string(spec.parallel.pp) + " pipeline stage(s); choose 0.." + std::to_string(spec.parallel.pp - 1));
    }
    if (!spec.jobs.empty()) {
      if (show_config && format == "text") std::fputs(scenarios::show_config(spec).c_str(), stdout);
      return run_jobs(spec, format, ignore_memory, full);
    }
    RunOutputs outputs{RunOutputs::open("--trace", trace), RunOutputs::open("--dmon", dmon),
                       RunOutputs::open("--report", report_path)};
    analysis::RunOptions options;
    options.full = full;
    options.ignore_memory = ignore_memory;
    options.timeline = outputs.any();
    options.check = check;
    options.explain = explain;
    options.explain_stage = explain_stage;
    const analysis::RunReport report = analysis::run_scenario(spec, options);
    if (!report.memory.fits && !ignore_memory) {
      // The format asked for, still: a script reading JSON gets JSON that says it does not fit.
      std::fputs((format == "json" ? analysis::memory_report_json(report.memory)
                                   : analysis::memory_report_text(report.memory)).c_str(),
                 stdout);
      std::fprintf(stderr,
                   "clustersim run: %s does not fit in GPU memory (see above); no throughput is reported. "
                   "Apply one of the changes listed, or pass --ignore-memory to simulate it anyway.\n",
                   path.c_str());
      return 3;
    }
    // The files first: when one cannot be written, the command fails before printing a result.
    write_output(outputs.trace, [&] { return analysis::chrome_trace(report); });
    write_output(outputs.dmon, [&] { return analysis::dmon_text(report, dmon_options); });
    write_output(outputs.report, [&] { return analysis::html_report(report); });
    if (show_config && format == "text") std::fputs(scenarios::show_config(spec).c_str(), stdout);
    if (format == "json") {
      std::fputs((explain ? analysis::run_json_with_explain(report) : analysis::run_json(report)).c_str(), stdout);
    } else if (format == "csv") {
      std::fputs(analysis::run_csv(report).c_str(), stdout);
    } else {
      std::fputs(analysis::run_text(report).c_str(), stdout);
      if (explain) std::fputs(analysis::run_explain_text(report).c_str(), stdout);
    }
    return report_invariants(report.invariants, format == "text");
  } catch (const scenarios::ScenarioError& e) {
    std::fputs(e.format().c_str(), stderr);
    return 2;
  }
}

}  // namespace clustersim::apps
