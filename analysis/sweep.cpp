// Running a sweep file's points (see sweep.h).
#include "analysis/sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "analysis/csv.h"
#include "analysis/output_file.h"
#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"

namespace clustersim::analysis {
namespace {

SweepTable empty_table(const scenarios::SweepSpec& sweep) {
  SweepTable t;
  t.header.push_back("point");
  t.header.insert(t.header.end(), sweep.keys.begin(), sweep.keys.end());
  t.keys = sweep.keys.size();
  t.header.push_back("status");
  t.header.push_back("reason");
  const auto& metrics = metric_columns();
  t.header.insert(t.header.end(), metrics.begin(), metrics.end());
  return t;
}

std::vector<std::string> key_values(const scenarios::SweepSpec& sweep, const scenarios::SweepPoint& p) {
  std::vector<std::string> v;
  for (const auto& k : sweep.keys) v.push_back(p.value_of(k));
  return v;
}

// The complete records of a results file: a last line without its newline was cut short by a crash.
std::vector<CsvRecord> complete_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  text.erase(text.find_last_of('\n') == std::string::npos ? 0 : text.find_last_of('\n') + 1);
  try {
    return parse_csv(text, path);
  } catch (const std::runtime_error&) {  // a quoted field cut short: keep nothing
    return {};
  }
}

void read_previous(const std::string& path, const scenarios::SweepSpec& sweep, SweepTable& table) {
  const std::vector<CsvRecord> records = complete_records(path);
  if (records.empty()) return;
  if (records.front().fields != table.header) {
    throw SweepFileError("'" + path + "' has other columns than this sweep writes");
  }
  std::map<std::vector<std::string>, std::vector<std::size_t>> by_values;
  for (std::size_t i = sweep.points.size(); i-- > 0;) by_values[key_values(sweep, sweep.points[i])].push_back(i);
  for (std::size_t r = 1; r < records.size(); ++r) {
    std::vector<std::string> row = records[r].fields;
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

// The worker threads of one run_sweep: each takes the next point to run, with its own ClusterCache.
class SweepRun {
 public:
  SweepRun(const scenarios::SweepSpec& sweep, SweepPlan plan, std::FILE* out, std::string out_path,
           const std::function<void(const SweepProgress&)>& progress)
      : sweep_(sweep), table_(std::move(plan.table)), todo_(std::move(plan.todo)), out_(out),
        out_path_(std::move(out_path)), progress_(progress) {}

  void run(int jobs) {
    std::vector<std::thread> workers;
    const int n = std::max(1, std::min<int>(jobs, static_cast<int>(todo_.size())));
    for (int w = 0; w < n; ++w) workers.emplace_back([this] { work(); });
    for (auto& t : workers) t.join();
    if (!write_error_.empty()) throw SweepFileError(write_error_);
  }

  SweepTable& table() { return table_; }

 private:
  void work() {
    ClusterCache clusters;
    for (std::size_t k; (k = next_++) < todo_.size();) {
      const std::size_t index = todo_[k];
      const scenarios::SweepPoint& p = sweep_.points[index];
      const auto start = std::chrono::steady_clock::now();
      PointOutcome outcome;
      try {
        outcome = run_point(sweep_.base, p.overrides(), clusters);
      } catch (const std::exception& e) {  // a bug must not take the other points down with it
        outcome.status = PointStatus::Error;
        outcome.reason = std::string("internal error: ") + e.what();
      }
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      finish(index, p, outcome, wall_s);
    }
  }

  void finish(std::size_t index, const scenarios::SweepPoint& p, const PointOutcome& outcome, double wall_s) {
    std::vector<std::string> row{std::to_string(index)};
    const auto keys = key_values(sweep_, p);
    row.insert(row.end(), keys.begin(), keys.end());
    row.emplace_back(status_name(outcome.status));
    row.push_back(outcome.reason);
    const auto metrics = metric_values(outcome);
    row.insert(row.end(), metrics.begin(), metrics.end());
    const std::string line = csv_line(row);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (write_error_.empty() && (std::fputs(line.c_str(), out_) == EOF || std::fflush(out_) != 0)) {
      // A row that cannot be written stops the sweep: its points would be lost to --resume.
      write_error_ = "'" + out_path_ + "': cannot append a row: " + std::strerror(errno);
      next_ = todo_.size();
    }
    table_.rows[index] = std::move(row);
    const std::string what =
        outcome.status == PointStatus::Ok ? "ok" : std::string(status_name(outcome.status)) + ": " + outcome.reason;
    progress_(SweepProgress{++done_, todo_.size(), describe(p), what, wall_s});
  }

  const scenarios::SweepSpec& sweep_;
  SweepTable table_;
  std::vector<std::size_t> todo_;
  std::FILE* out_;
  std::string out_path_;
  std::string write_error_;  // the first failed append, under mutex_
  const std::function<void(const SweepProgress&)>& progress_;
  std::atomic<std::size_t> next_{0};
  std::mutex mutex_;
  std::size_t done_ = 0;
};

}  // namespace

std::string SweepTable::csv() const {
  std::string out = csv_line(header);
  for (const auto& [i, row] : rows) out += csv_line(row);
  return out;
}

std::map<std::string, int> SweepTable::status_counts() const {
  std::map<std::string, int> counts;
  for (const auto& [i, row] : rows) ++counts[row[status_column()]];
  return counts;
}

void check_sweep_keys(const scenarios::SweepSpec& sweep) {
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

SweepPlan plan_sweep(const scenarios::SweepSpec& sweep, const std::string& out_path, bool resume, int rank, int ranks) {
  SweepPlan plan;
  plan.table = empty_table(sweep);
  if (resume) read_previous(out_path, sweep, plan.table);
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(ranks)) != rank) continue;
    ++plan.mine;
    if (plan.table.rows.count(i) == 0) plan.todo.push_back(i);
  }
  return plan;
}

SweepTable run_sweep(const scenarios::SweepSpec& sweep, SweepPlan plan, const std::string& out_path, int jobs,
                     const std::function<void(const SweepProgress&)>& progress) {
  // Start from the kept rows (this also drops a row cut short by a crash), then append as points finish.
  write_output_file("--out", out_path, plan.table.csv());
  std::FILE* out = std::fopen(out_path.c_str(), "ab");
  if (out == nullptr) throw SweepFileError("'" + out_path + "': cannot append to this file: " + std::strerror(errno));
  SweepRun run(sweep, std::move(plan), out, out_path, progress);
  try {
    run.run(jobs);
  } catch (...) {
    std::fclose(out);
    throw;
  }
  if (std::fclose(out) != 0) throw SweepFileError("'" + out_path + "': cannot finish writing: " + std::strerror(errno));
  write_output_file("--out", out_path, run.table().csv());
  return std::move(run.table());
}

std::optional<SweepBest> best_point(const SweepTable& t, const std::string& metric) {
  const auto col = static_cast<std::size_t>(std::find(t.header.begin(), t.header.end(), metric) - t.header.begin());
  const bool higher = metric_higher_is_better(metric);
  const std::vector<std::string>* best = nullptr;
  double best_value = 0;
  for (const auto& [i, row] : t.rows) {
    if (row[t.status_column()] != "ok" || row[col].empty()) continue;
    const double v = std::strtod(row[col].c_str(), nullptr);
    if (best == nullptr || (higher ? v > best_value : v < best_value)) {
      best = &row;
      best_value = v;
    }
  }
  if (best == nullptr) return std::nullopt;
  SweepBest b{(*best)[0], (*best)[col], "", higher};
  for (std::size_t k = 0; k < t.keys; ++k)
    if (!(*best)[k + 1].empty()) b.where += " " + t.header[k + 1] + "=" + (*best)[k + 1];
  return b;
}

}  // namespace clustersim::analysis
