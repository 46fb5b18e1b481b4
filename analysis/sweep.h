// Running a sweep file's points (`clustersim sweep`): the results table, the plan of which points
// this process runs (its MPI rank's share, less what a previous run already wrote), worker threads
// that run them, each finished row appended to the CSV at once (flushed), the file rewritten in
// point order at the end, and the best point by a metric column.
//
// Determinism: a row depends only on its point (each worker has its own ClusterCache, and the
// metric columns leave out what depends on the cache or the clock, sweep_point.h), and the final
// file is sorted by the `point` column, so the CSV is the same for any number of workers. Under
// mpirun, rank R of S runs the points with index % S == R into its own file; merging is `cat` and
// a sort by `point`.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/sweep_point.h"
#include "scenarios/sweep_file.h"

namespace clustersim::analysis {

// A results file that cannot be written, or (to resume from) has other columns than this sweep's.
struct SweepFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The sweep's table: `point`, the varied keys, status, reason, the metric columns.
struct SweepTable {
  std::vector<std::string> header;
  std::size_t keys = 0;                                   // varied keys, columns 1..keys
  std::map<std::size_t, std::vector<std::string>> rows;   // by point index

  std::size_t status_column() const { return keys + 1; }
  std::string csv() const;                                // header and rows in point order
  std::map<std::string, int> status_counts() const;       // "ok" | "infeasible" | "error" -> rows
};

// A key the scenario does not know would fail every point: throws scenarios::ScenarioError at its
// line in the sweep file.
void check_sweep_keys(const scenarios::SweepSpec& sweep);

// Which points this process runs: rank `rank` of `ranks` takes index % ranks == rank.
struct SweepPlan {
  SweepTable table;               // rows kept from a previous run (resume)
  std::vector<std::size_t> todo;  // point indices still to run, in order
  std::size_t mine = 0;           // this rank's share of the points
};

// With `resume`, rows of a previous run in `out_path` that match points of this sweep (by their
// varied-key values) are kept; rows cut short by a crash and rows of points no longer in the
// sweep are dropped. Throws SweepFileError when that file has other columns.
SweepPlan plan_sweep(const scenarios::SweepSpec& sweep, const std::string& out_path, bool resume, int rank, int ranks);

// One finished point, for a progress line.
struct SweepProgress {
  std::size_t done = 0, total = 0;
  std::string point;    // "parallelism.tp=2 sync.algorithm=ring"
  std::string outcome;  // "ok", or "infeasible: does not fit (...)"
  double wall_s = 0;
};

// Runs the plan's points on `jobs` worker threads into `out_path` (the kept rows first, then each
// row as it finishes, then the whole file in point order); `progress` is called once per finished
// point, one call at a time. Throws OutputFileError (analysis/output_file.h) when `out_path` cannot be
// created or replaced -- before any point runs -- and SweepFileError when a row cannot be appended
// (the sweep stops there; the rows written so far stay for --resume).
SweepTable run_sweep(const scenarios::SweepSpec& sweep, SweepPlan plan, const std::string& out_path, int jobs,
                     const std::function<void(const SweepProgress&)>& progress);

// The best ok row by a metric column (highest for throughput-like metrics, else lowest).
struct SweepBest {
  std::string point;   // the `point` column
  std::string value;   // the metric as the CSV writes it
  std::string where;   // " key=value" for each varied key the point sets
  bool higher_is_better = true;
};
std::optional<SweepBest> best_point(const SweepTable& table, const std::string& metric);

}  // namespace clustersim::analysis
