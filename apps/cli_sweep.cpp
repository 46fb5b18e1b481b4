// `clustersim sweep SWEEP.toml`: the command line of analysis/sweep.h -- its flags, the MPI rank
// from the environment, progress lines on stderr (apps/progress.h), and the summary and --best line on stdout.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/sweep.h"
#include "apps/cli_common.h"
#include "apps/progress.h"
#include "apps/verbs.h"
#include "scenarios/scenario_error.h"
#include "scenarios/sweep_file.h"

namespace clustersim::apps {
namespace {

struct Rank {
  int rank = 0, size = 1;
};

// MPI launchers (Open MPI, or PMI-based ones such as MPICH and Slurm) say who we are in the
// environment; no MPI library is needed to split the points.
Rank mpi_rank() {
  const auto env_int = [](const char* name) -> std::optional<int> {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::atoi(v);
  };
  for (const auto& [size_var, rank_var] : {std::pair{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                           std::pair{"PMI_SIZE", "PMI_RANK"}}) {
    const auto size = env_int(size_var);
    const auto rank = env_int(rank_var);
    if (size && rank && *size > 0 && *rank >= 0 && *rank < *size) return Rank{*rank, *size};
  }
  return {};
}

struct Options {
  int jobs = 1;
  std::string out = "results.csv";
  bool resume = false;
  bool progress = false;
  std::string best;
};

void print_best(const analysis::SweepTable& table, const std::string& metric) {
  const std::optional<analysis::SweepBest> best = analysis::best_point(table, metric);
  if (!best) {
    std::printf("best %s: no point ran\n", metric.c_str());
    return;
  }
  // The CSV keeps full precision for scripts; the summary line shows 6 significant digits.
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.6g", std::strtod(best->value.c_str(), nullptr));
  std::printf("best %s (%s): %s at point %s:%s\n", metric.c_str(), best->higher_is_better ? "highest" : "lowest",
              shown, best->point.c_str(), best->where.c_str());
}

// "; the first error: REASON" for the summary of a sweep in which nothing ran.
std::string first_error(const analysis::SweepTable& table) {
  for (const auto& [index, row] : table.rows)
    if (row[table.status_column()] == "error") return "; the first error: " + row[table.status_column() + 1];
  return "";
}

}  // namespace

int verb_sweep(int argc, char** argv) {
  CLI::App app{"Run every point of a sweep file (a grid or list of variations of a base scenario) and write a CSV.",
               "clustersim sweep"};
  std::string path;
  Options o;
  app.add_option("sweep", path, "sweep file (TOML): base = \"scenario.toml\", [grid] and/or [[point]]")->required();
  app.add_option("--jobs,-j", o.jobs, "worker threads (default 1)");
  app.add_option("--out,-o", o.out, "results CSV, written as points finish (default results.csv; under mpirun OUT.rank<R>)");
  app.add_flag("--resume", o.resume, "keep the points already in --out (matched by their varied values); run the rest");
  app.add_flag("--progress", o.progress,
               "a line per finished point on stderr, with its wall time and an ETA (default when stderr is a terminal)");
  app.add_option("--best", o.best, "print the best ok point by this CSV column (e.g. tokens_per_s, iteration_time_s)");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (o.jobs < 1) throw CliError("--jobs " + std::to_string(o.jobs) + ": expected at least 1 worker");
  if (o.out.empty()) throw CliError("--out '': expected a file name for the results CSV");
  const auto& metrics = analysis::metric_columns();
  if (!o.best.empty() && std::find(metrics.begin(), metrics.end(), o.best) == metrics.end()) {
    std::vector<std::string_view> names(metrics.begin(), metrics.end());
    throw CliError("--best '" + o.best + "': not a metric column; choose one of " + join(names));
  }

  scenarios::SweepSpec sweep;
  try {
    sweep = scenarios::load_sweep(path);
    analysis::check_sweep_keys(sweep);
  } catch (const scenarios::ScenarioError& e) {
    std::fputs(e.format().c_str(), stderr);
    return 2;
  }

  const Rank rank = mpi_rank();
  const std::string out_path = rank.size > 1 ? o.out + ".rank" + std::to_string(rank.rank) : o.out;
  analysis::SweepPlan plan;
  try {
    plan = analysis::plan_sweep(sweep, out_path, o.resume, rank.rank, rank.size);
  } catch (const analysis::SweepFileError& e) {
    throw CliError(std::string("--resume: ") + e.what() + "; use another --out");
  }
  const std::size_t mine = plan.mine, todo = plan.todo.size();
  if (rank.size > 1) std::fprintf(stderr, "rank %d of %d: %zu of %zu points\n", rank.rank, rank.size, mine, sweep.points.size());
  if (o.resume) std::fprintf(stderr, "resuming: %zu of %zu points already in %s\n", mine - todo, mine, out_path.c_str());

  analysis::SweepTable table;
  try {
    ProgressLine line(progress_wanted(o.progress), todo);
    table = analysis::run_sweep(sweep, std::move(plan), out_path, o.jobs, [&line](const analysis::SweepProgress& p) {
      line.finished(p.point, p.outcome, p.wall_s);
    });
  } catch (const analysis::SweepFileError& e) {
    throw CliError(std::string("--out ") + e.what());
  }
  std::map<std::string, int> counts = table.status_counts();
  std::printf("%zu points: %d ok, %d infeasible, %d error; results in %s\n", table.rows.size(), counts["ok"],
              counts["infeasible"], counts["error"], out_path.c_str());
  if (!o.best.empty()) print_best(table, o.best);
  if (table.rows.empty() || counts["ok"] > 0) return 0;
  // Nothing ran, as in `compare`: an unusable base scenario (or every point invalid) is bad input.
  std::fprintf(stderr, "clustersim sweep: no point ran (see the reason column of %s)%s\n", out_path.c_str(),
               counts["error"] > 0 ? first_error(table).c_str() : "; none fits in GPU memory");
  return counts["error"] > 0 ? 2 : 3;
}

}  // namespace clustersim::apps
