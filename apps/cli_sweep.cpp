// `clustersim sweep SWEEP.toml`: every point of a sweep file, run by --jobs worker threads, each
// finished row appended to the CSV at once (flushed), the file rewritten in point order at the end.
//
// Determinism: a row depends only on its point (each worker has its own ClusterCache, and the
// metric columns leave out what depends on the cache or the clock), and the final file is sorted by
// the `point` column, so the CSV is the same for any --jobs. Under mpirun, rank R of S runs the
// points with index % S == R and writes OUT.rank<R>; merging is `cat` and a sort by `point`.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "analysis/run_report.h"
#include "analysis/sweep_point.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"
#include "scenarios/loader.h"
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

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

std::vector<std::string> parse_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// The sweep's table: `point`, the varied keys, status, reason, the metric columns.
struct Table {
  std::vector<std::string> header;
  std::size_t keys = 0;
  std::map<std::size_t, std::vector<std::string>> rows;  // by point index

  std::string text() const {
    std::string out = csv_line(header);
    for (const auto& [i, row] : rows) out += csv_line(row);
    return out;
  }
};

Table empty_table(const scenarios::SweepSpec& sweep) {
  Table t;
  t.header.push_back("point");
  t.header.insert(t.header.end(), sweep.keys.begin(), sweep.keys.end());
  t.keys = sweep.keys.size();
  t.header.push_back("status");
  t.header.push_back("reason");
  const auto& metrics = analysis::metric_columns();
  t.header.insert(t.header.end(), metrics.begin(), metrics.end());
  return t;
}

std::vector<std::string> key_values(const scenarios::SweepSpec& sweep, const scenarios::SweepPoint& p) {
  std::vector<std::string> v;
  for (const auto& k : sweep.keys) v.push_back(p.value_of(k));
  return v;
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw CliError("--out '" + path + "': cannot write this file");
    out << text;
    if (!out.flush()) throw CliError("--out '" + path + "': cannot write this file");
  }
  std::filesystem::rename(tmp, path);
}

// Rows of a previous run that match points of this sweep (by their varied-key values); lines cut
// short by a crash and rows of points no longer in the sweep are dropped.
void read_previous(const std::string& path, const scenarios::SweepSpec& sweep, Table& table) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  std::string line;
  if (!std::getline(in, line)) return;
  if (parse_csv_line(line) != table.header) {
    throw CliError("--resume: '" + path + "' has other columns than this sweep writes; use another --out");
  }
  std::map<std::vector<std::string>, std::vector<std::size_t>> by_values;
  for (std::size_t i = sweep.points.size(); i-- > 0;) by_values[key_values(sweep, sweep.points[i])].push_back(i);
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline: a row cut short
    std::vector<std::string> row = parse_csv_line(line);
    if (row.size() != table.header.size()) continue;
    auto it = by_values.find(std::vector<std::string>(row.begin() + 1, row.begin() + 1 + static_cast<long>(table.keys)));
    if (it == by_values.end() || it->second.empty()) continue;
    const std::size_t index = it->second.back();
    it->second.pop_back();
    row[0] = std::to_string(index);
    table.rows[index] = std::move(row);
  }
}

std::string describe(const scenarios::SweepPoint& p) {
  std::string out;
  for (const auto& s : p.settings) out += (out.empty() ? "" : " ") + s.key + "=" + s.display;
  return out;
}

// A key the scenario does not know would fail every point: report it at its line in the sweep file.
void check_keys(const scenarios::SweepSpec& sweep) {
  std::vector<scenarios::Diagnostic> problems;
  for (const auto& key : sweep.keys) {
    std::vector<std::string> one;  // the key's first value, alone
    for (const auto& p : sweep.points)
      for (const auto& s : p.settings)
        if (s.key == key && one.empty()) one.push_back(s.key + "=" + s.toml);
    try {
      scenarios::load_scenario(sweep.base, one);
    } catch (const scenarios::ScenarioError& e) {
      for (const auto& d : e.diagnostics()) {
        if (d.where.file.rfind("--set", 0) != 0 || d.message.rfind("unknown", 0) != 0) continue;
        if (d.message.find("unknown value") == 0) continue;  // a bad value is a point's error, not the key's
        scenarios::Diagnostic at = sweep.key_at.at(key);
        at.message = d.message + " (key '" + key + "' of the sweep)";
        at.hint = d.hint;
        problems.push_back(std::move(at));
      }
    }
  }
  if (!problems.empty()) throw scenarios::ScenarioError(std::move(problems));
}

struct Options {
  int jobs = 1;
  std::string out = "results.csv";
  bool resume = false;
  std::string best;
};

class SweepRun {
 public:
  SweepRun(const scenarios::SweepSpec& sweep, Table table, std::vector<std::size_t> todo, std::FILE* out)
      : sweep_(sweep), table_(std::move(table)), todo_(std::move(todo)), out_(out) {}

  void run(int jobs) {
    std::vector<std::thread> workers;
    const int n = std::max(1, std::min<int>(jobs, static_cast<int>(todo_.size())));
    for (int w = 0; w < n; ++w) workers.emplace_back([this] { work(); });
    for (auto& t : workers) t.join();
  }

  Table& table() { return table_; }

 private:
  void work() {
    analysis::ClusterCache clusters;
    for (std::size_t k; (k = next_++) < todo_.size();) {
      const std::size_t index = todo_[k];
      const scenarios::SweepPoint& p = sweep_.points[index];
      const auto start = std::chrono::steady_clock::now();
      analysis::PointOutcome outcome;
      try {
        outcome = analysis::run_point(sweep_.base, p.overrides(), clusters);
      } catch (const std::exception& e) {  // a bug must not take the other points down with it
        outcome.status = analysis::PointStatus::Error;
        outcome.reason = std::string("internal error: ") + e.what();
      }
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      finish(index, p, outcome, wall_s);
    }
  }

  void finish(std::size_t index, const scenarios::SweepPoint& p, const analysis::PointOutcome& outcome, double wall_s) {
    std::vector<std::string> row{std::to_string(index)};
    const auto keys = key_values(sweep_, p);
    row.insert(row.end(), keys.begin(), keys.end());
    row.emplace_back(analysis::status_name(outcome.status));
    row.push_back(outcome.reason);
    const auto metrics = analysis::metric_values(outcome);
    row.insert(row.end(), metrics.begin(), metrics.end());
    const std::string line = csv_line(row);
    const std::lock_guard<std::mutex> lock(mutex_);
    std::fputs(line.c_str(), out_);
    std::fflush(out_);
    table_.rows[index] = std::move(row);
    const std::string what = outcome.status == analysis::PointStatus::Ok
                                 ? "ok"
                                 : std::string(analysis::status_name(outcome.status)) + ": " + outcome.reason;
    std::fprintf(stderr, "[%zu/%zu] %s  %s  %.1f s\n", ++done_, todo_.size(), describe(p).c_str(), what.c_str(), wall_s);
  }

  const scenarios::SweepSpec& sweep_;
  Table table_;
  std::vector<std::size_t> todo_;
  std::FILE* out_;
  std::atomic<std::size_t> next_{0};
  std::mutex mutex_;
  std::size_t done_ = 0;
};

void print_best(const Table& t, const std::string& metric) {
  const auto col = static_cast<std::size_t>(std::find(t.header.begin(), t.header.end(), metric) - t.header.begin());
  const std::size_t status_col = t.keys + 1;
  const bool higher = analysis::metric_higher_is_better(metric);
  const std::vector<std::string>* best = nullptr;
  double best_value = 0;
  for (const auto& [i, row] : t.rows) {
    if (row[status_col] != "ok" || row[col].empty()) continue;
    const double v = std::strtod(row[col].c_str(), nullptr);
    if (best == nullptr || (higher ? v > best_value : v < best_value)) {
      best = &row;
      best_value = v;
    }
  }
  if (best == nullptr) {
    std::printf("best %s: no point ran\n", metric.c_str());
    return;
  }
  std::string where;
  for (std::size_t k = 0; k < t.keys; ++k)
    if (!(*best)[k + 1].empty()) where += " " + t.header[k + 1] + "=" + (*best)[k + 1];
  std::printf("best %s (%s): %s at point %s:%s\n", metric.c_str(), higher ? "highest" : "lowest", (*best)[col].c_str(),
              (*best)[0].c_str(), where.c_str());
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
  app.add_option("--best", o.best, "print the best ok point by this CSV column (e.g. tokens_per_s, iteration_time_s)");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (o.jobs < 1) throw CliError("--jobs " + std::to_string(o.jobs) + ": expected at least 1 worker");
  const auto& metrics = analysis::metric_columns();
  if (!o.best.empty() && std::find(metrics.begin(), metrics.end(), o.best) == metrics.end()) {
    std::vector<std::string_view> names(metrics.begin(), metrics.end());
    throw CliError("--best '" + o.best + "': not a metric column; choose one of " + join(names));
  }

  scenarios::SweepSpec sweep;
  try {
    sweep = scenarios::load_sweep(path);
    check_keys(sweep);
  } catch (const scenarios::ScenarioError& e) {
    std::fputs(e.format().c_str(), stderr);
    return 2;
  }

  const Rank rank = mpi_rank();
  const std::string out_path = rank.size > 1 ? o.out + ".rank" + std::to_string(rank.rank) : o.out;
  Table table = empty_table(sweep);
  if (o.resume) read_previous(out_path, sweep, table);
  std::vector<std::size_t> todo;
  std::size_t mine = 0;
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(rank.size)) != rank.rank) continue;
    ++mine;
    if (table.rows.count(i) == 0) todo.push_back(i);
  }
  if (rank.size > 1) std::fprintf(stderr, "rank %d of %d: %zu of %zu points\n", rank.rank, rank.size, mine, sweep.points.size());
  if (o.resume) std::fprintf(stderr, "resuming: %zu of %zu points already in %s\n", mine - todo.size(), mine, out_path.c_str());

  // Start from the kept rows (this also drops a row cut short by a crash), then append as points finish.
  write_atomically(out_path, table.text());
  std::FILE* out = std::fopen(out_path.c_str(), "ab");
  if (out == nullptr) throw CliError("--out '" + out_path + "': cannot append to this file");
  SweepRun run(sweep, std::move(table), std::move(todo), out);
  run.run(o.jobs);
  std::fclose(out);
  write_atomically(out_path, run.table().text());

  std::map<std::string, int> counts;
  for (const auto& [i, row] : run.table().rows) ++counts[row[run.table().keys + 1]];
  std::printf("%zu points: %d ok, %d infeasible, %d error; results in %s\n", run.table().rows.size(), counts["ok"],
              counts["infeasible"], counts["error"], out_path.c_str());
  if (!o.best.empty()) print_best(run.table(), o.best);
  return 0;
}

}  // namespace clustersim::apps
