// `clustersim compare SCENARIO.toml… [--vary key=v1,v2,…]`: one or several scenarios, each run once
// per combination of the varied values (scenario slowest, then the first --vary), side by side in
// one table. A --vary of several keys (`--vary parallelism.tp,parallelism.dp=2,4;4,2`) varies them
// together, one tuple per combination, so layouts that must keep tp x dp fixed can be compared.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "analysis/human_units.h"
#include "analysis/csv.h"
#include "analysis/run_report.h"
#include "analysis/sweep_point.h"
#include "apps/cli_common.h"
#include "apps/progress.h"
#include "apps/verbs.h"

namespace clustersim::apps {
namespace {

constexpr double kGiB = 1073741824.0;

// One --vary: a key and its values, or several keys varied together (one tuple of values each).
struct Axis {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;  // each has keys.size() entries
};

struct Row {
  std::vector<std::string> values;  // one per column key (the scenario first when there are several)
  analysis::PointOutcome outcome;
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  for (std::size_t start = 0;;) {
    const std::size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

Axis parse_vary(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw CliError("--vary '" + text + "': expected key=v1,v2,… (e.g. --vary sync.algorithm=ring,tree) or "
                   "k1,k2=a1,a2;b1,b2 (e.g. --vary parallelism.tp,parallelism.dp=2,4;4,2)");
  }
  Axis axis{split(text.substr(0, eq), ','), {}};
  for (const auto& k : axis.keys)
    if (k.empty()) throw CliError("--vary '" + text + "': an empty key; separate keys with single commas");
  const std::string values = text.substr(eq + 1);
  if (axis.keys.size() == 1) {
    for (auto& v : split(values, ',')) axis.values.push_back({std::move(v)});
  } else {
    for (const auto& tuple : split(values, ';')) axis.values.push_back(split(tuple, ','));
  }
  for (const auto& tuple : axis.values) {
    if (tuple.size() != axis.keys.size()) {
      throw CliError(fmt::format("--vary '{}': {} keys but a tuple of {} values; give {} comma-separated values "
                                 "per tuple and separate tuples with ';'",
                                 text, axis.keys.size(), tuple.size(), axis.keys.size()));
    }
    for (const auto& v : tuple)
      if (v.empty()) throw CliError("--vary '" + text + "': an empty value; separate values with single commas");
  }
  return axis;
}

// Every combination, first axis slowest: one value per key of every axis, in key order.
std::vector<std::vector<std::string>> combinations(const std::vector<Axis>& axes) {
  std::vector<std::vector<std::string>> out(1);
  for (const Axis& a : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& c : out) {
      for (const auto& tuple : a.values) {
        next.push_back(c);
        next.back().insert(next.back().end(), tuple.begin(), tuple.end());
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string seconds(double s) { return analysis::duration_text(s); }

// The row every speed-up is relative to: the first that ran.
const Row* reference(const std::vector<Row>& rows) {
  for (const Row& r : rows)
    if (r.outcome.status == analysis::PointStatus::Ok) return &r;
  return nullptr;
}

double speedup(const Row& r, const Row* ref) {
  return ref->outcome.report->iteration.iteration_time_s / r.outcome.report->iteration.iteration_time_s;
}

std::string failure_text(const Row& r) {
  return r.outcome.status == analysis::PointStatus::Infeasible ? r.outcome.reason : "invalid: " + r.outcome.reason;
}

std::string long_time(double s) {
  if (s >= 86400 * 2) return fmt::format("{:.1f} days", s / 86400);
  if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
  return seconds(s);
}

// Time to train, energy and cost: only when some row has them (the scenario sets training.tokens).
bool has_totals(const std::vector<Row>& rows) {
  for (const Row& r : rows)
    if (r.outcome.status == analysis::PointStatus::Ok && r.outcome.report->time_to_train_s) return true;
  return false;
}

std::vector<std::string> ok_cells(const Row& r, const Row* ref, bool totals) {
  const analysis::RunReport& rep = *r.outcome.report;
  const double t = rep.iteration.iteration_time_s;
  const auto& b = rep.iteration.breakdown;
  std::vector<std::string> c{seconds(t),
                             fmt::format("{:.2f}x", speedup(r, ref)),
                             fmt::format("{:.0f}", rep.tokens_per_s),
                             fmt::format("{:.1f}%", 100 * rep.mfu),
                             fmt::format("{} ({:.1f}%)", seconds(b.exposed_comm), t > 0 ? 100 * b.exposed_comm / t : 0.0),
                             seconds(b.pipeline_bubble),
                             fmt::format("{:.1f} GiB", static_cast<double>(rep.memory.required) / kGiB),
                             rep.memory.fits ? "yes" : "no"};
  if (totals) {
    c.push_back(rep.time_to_train_s ? long_time(*rep.time_to_train_s) : "-");
    c.push_back(rep.energy_kwh ? fmt::format("{:.0f} kWh", *rep.energy_kwh) : "-");
    c.push_back(rep.cost_usd ? fmt::format("${:.0f}", *rep.cost_usd) : "-");
  }
  return c;
}

std::string aligned(const std::vector<std::string>& header, std::size_t k, const std::vector<std::vector<std::string>>& cells) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& c : cells)
    if (c.size() == header.size())
      for (std::size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  const auto line = [&](const std::vector<std::string>& c) {
    std::string out;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const bool last = i + 1 == c.size();
      const bool left = i < k || c.size() != header.size();  // keys and failure text read left-aligned
      if (last && left) {
        out += c[i];
      } else {
        out += left ? fmt::format("{:<{}}", c[i], width[i]) : fmt::format("{:>{}}", c[i], width[i]);
      }
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& c : cells) out += line(c);
  return out;
}

std::string text_table(const std::vector<std::string>& keys, const std::vector<Row>& rows) {
  std::vector<std::string> header = keys;
  const bool totals = has_totals(rows);
  for (const char* h : {"iteration", "speed-up", "tokens/s", "MFU", "exposed comm", "bubble", "memory/GPU", "fits"})
    header.emplace_back(h);
  if (totals)
    for (const char* h : {"time to train", "energy", "cost"}) header.emplace_back(h);
  const Row* ref = reference(rows);
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::vector<std::string> c = r.values;
    if (r.outcome.status == analysis::PointStatus::Ok) {
      const auto more = ok_cells(r, ref, totals);
      c.insert(c.end(), more.begin(), more.end());
    } else {
      c.push_back(failure_text(r));
    }
    cells.push_back(std::move(c));
  }
  return aligned(header, keys.size(), cells);
}

std::string status_word(const Row& r) {
  return r.outcome.status == analysis::PointStatus::Error ? "invalid" : std::string(analysis::status_name(r.outcome.status));
}

// The varied keys, status and reason, then `run --format csv`'s columns (analysis::run_csv_columns),
// then the speed-up against the first row that ran.
std::string csv_table(const std::vector<std::string>& keys, const std::vector<Row>& rows) {
  std::vector<std::string> header = keys;
  header.emplace_back("status");
  header.emplace_back("reason");
  const auto& columns = analysis::run_csv_columns();
  header.insert(header.end(), columns.begin(), columns.end());
  header.emplace_back("speedup");
  std::string out = analysis::csv_line(header);
  const Row* ref = reference(rows);
  for (const Row& r : rows) {
    std::vector<std::string> line = r.values;
    line.push_back(status_word(r));
    line.push_back(r.outcome.reason);
    const bool ok = r.outcome.status == analysis::PointStatus::Ok;
    std::vector<std::string> values(columns.size());
    if (ok || (r.outcome.status == analysis::PointStatus::Infeasible && r.outcome.report)) {
      values = analysis::run_csv_values(*r.outcome.report, ok);
    }
    line.insert(line.end(), values.begin(), values.end());
    line.push_back(ok ? fmt::format("{:.6f}", speedup(r, ref)) : "");
    out += analysis::csv_line(line);
  }
  return out;
}

std::string json_table(const std::vector<std::string>& keys, const std::vector<Row>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  const Row* ref = reference(rows);
  for (const Row& r : rows) {
    nlohmann::ordered_json item;
    nlohmann::ordered_json vary = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < keys.size(); ++i) vary[keys[i]] = r.values[i];
    item["vary"] = std::move(vary);
    item["status"] = status_word(r);
    item["reason"] = r.outcome.reason;
    if (r.outcome.status == analysis::PointStatus::Ok) {
      item["speedup"] = speedup(r, ref);
      item["result"] = nlohmann::ordered_json::parse(analysis::run_json(*r.outcome.report));
    } else {
      item["result"] = nullptr;
    }
    list.push_back(std::move(item));
  }
  return list.dump(2) + "\n";
}

// The column keys: "scenario_file" (the file name without .toml; "scenario" is the run CSV's name
// column) first when several scenarios are compared, then every key of every --vary; a key given
// twice is an error.
std::vector<std::string> column_keys(const std::vector<std::string>& paths, const std::vector<Axis>& axes) {
  std::vector<std::string> keys;
  if (paths.size() > 1) keys.emplace_back("scenario_file");
  for (const Axis& a : axes) {
    for (const auto& k : a.keys) {
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) {
        throw CliError("--vary " + k + " is given twice; list all its values in one --vary");
      }
      keys.push_back(k);
    }
  }
  return keys;
}

std::vector<Row> run_all(const std::vector<std::string>& paths, const std::vector<Axis>& axes,
                         const std::vector<std::string>& sets, bool ignore_memory, bool progress) {
  const auto combos = combinations(axes);
  std::vector<std::string> vary_keys;
  for (const Axis& a : axes) vary_keys.insert(vary_keys.end(), a.keys.begin(), a.keys.end());
  ProgressLine line(progress, paths.size() * combos.size());
  analysis::ClusterCache clusters;
  std::vector<Row> rows;
  for (const auto& path : paths) {
    for (const auto& values : combos) {
      std::vector<std::string> overrides = sets;
      std::string label = paths.size() > 1 ? std::filesystem::path(path).stem().string() : std::string();
      for (std::size_t i = 0; i < vary_keys.size(); ++i) {
        overrides.push_back(vary_keys[i] + "=" + values[i]);
        label += (label.empty() ? "" : " ") + vary_keys[i] + "=" + values[i];
      }
      const auto start = std::chrono::steady_clock::now();
      Row row{values, analysis::run_point(path, overrides, clusters, ignore_memory)};
      if (paths.size() > 1) row.values.insert(row.values.begin(), std::filesystem::path(path).stem().string());
      line.finished(label, row.outcome.status == analysis::PointStatus::Ok ? "ok" : failure_text(row),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// Nothing ran: say why on stderr, once per distinct message; the exit code.
int explain_nothing_ran(const std::vector<std::string>& keys, const std::vector<Row>& rows) {
  std::vector<std::string> said;
  bool any_invalid = false;
  for (const Row& r : rows) {
    any_invalid = any_invalid || r.outcome.status == analysis::PointStatus::Error;
    if (std::find(said.begin(), said.end(), r.outcome.message) != said.end()) continue;
    said.push_back(r.outcome.message);
    std::string combination;
    for (std::size_t i = 0; i < keys.size(); ++i) combination += (i ? " " : "") + keys[i] + "=" + r.values[i];
    std::fprintf(stderr, "clustersim compare: with %s:\n", combination.c_str());
    std::fputs(r.outcome.message.c_str(), stderr);
    if (!r.outcome.message.empty() && r.outcome.message.back() != '\n') std::fputc('\n', stderr);
  }
  std::fprintf(stderr, "clustersim compare: no combination %s\n",
               any_invalid ? "is valid (see above)" : "can run (see above); pass --ignore-memory to simulate those that do not fit in GPU memory anyway");
  return any_invalid ? 2 : 3;
}

}  // namespace

int verb_compare(int argc, char** argv) {
  CLI::App app{"Run one or several scenarios once per combination of varied keys and compare the results side by side.",
               "clustersim compare"};
  std::vector<std::string> paths;
  std::string format = "text";
  std::vector<std::string> varies, sets;
  bool ignore_memory = false, progress = false;
  app.add_option("scenario", paths, "scenario file(s) (TOML); several are compared row by row")->required();
  app.add_option("--vary", varies,
                 "key=v1,v2,…: run once per value; k1,k2=a1,a2;b1,b2: vary keys together, one tuple per run "
                 "(repeatable; the cartesian product, first --vary slowest; required with one scenario)")
      ->allow_extra_args(false);
  app.add_option("--set", sets, "override a key for every run: section.key=value (repeatable)")->allow_extra_args(false);
  app.add_option("--format", format, "text | json | csv");
  app.add_flag("--ignore-memory", ignore_memory, "simulate combinations that do not fit in GPU memory anyway");
  app.add_flag("--progress", progress, "a line per finished run on stderr, with its wall time and an ETA (default when stderr is a terminal)");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (format != "text" && format != "json" && format != "csv") {
    throw CliError("--format '" + format + "': expected text, json or csv");
  }
  if (paths.size() == 1 && varies.empty()) {
    throw CliError("--vary is required with one scenario: e.g. --vary sync.algorithm=ring,tree (or give several scenario files)");
  }
  std::vector<Axis> axes;
  for (const auto& v : varies) axes.push_back(parse_vary(v));
  const std::vector<std::string> keys = column_keys(paths, axes);

  const std::vector<Row> rows = run_all(paths, axes, sets, ignore_memory, progress_wanted(progress));
  if (format == "json") {
    std::fputs(json_table(keys, rows).c_str(), stdout);
  } else if (format == "csv") {
    std::fputs(csv_table(keys, rows).c_str(), stdout);
  } else {
    std::fputs(text_table(keys, rows).c_str(), stdout);
  }
  if (reference(rows) != nullptr) return 0;
  return explain_nothing_ran(keys, rows);
}

}  // namespace clustersim::apps
