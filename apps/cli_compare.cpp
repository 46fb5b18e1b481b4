// `clustersim compare SCENARIO.toml --vary key=v1,v2,…`: one scenario run once per combination of
// the varied values (first --vary slowest), side by side in one table.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "analysis/duration_text.h"
#include "analysis/csv.h"
#include "analysis/run_report.h"
#include "analysis/sweep_point.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"

namespace clustersim::apps {
namespace {

constexpr double kGiB = 1073741824.0;

struct Axis {
  std::string key;
  std::vector<std::string> values;
};

struct Row {
  std::vector<std::string> values;  // one per axis
  analysis::PointOutcome outcome;
};

Axis parse_vary(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw CliError("--vary '" + text + "': expected key=v1,v2,… e.g. --vary sync.algorithm=ring,tree,hierarchical");
  }
  Axis axis{text.substr(0, eq), {}};
  for (std::size_t start = eq + 1;;) {
    const std::size_t comma = text.find(',', start);
    std::string v = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (v.empty()) throw CliError("--vary '" + text + "': an empty value; separate values with single commas");
    axis.values.push_back(std::move(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return axis;
}

// Every combination, first axis slowest.
std::vector<std::vector<std::string>> combinations(const std::vector<Axis>& axes) {
  std::vector<std::vector<std::string>> out(1);
  for (const Axis& a : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& c : out) {
      for (const auto& v : a.values) {
        next.push_back(c);
        next.back().push_back(v);
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

std::string text_table(const std::vector<Axis>& axes, const std::vector<Row>& rows) {
  std::vector<std::string> header;
  for (const Axis& a : axes) header.push_back(a.key);
  const std::size_t k = header.size();
  for (const char* h : {"iteration", "speed-up", "tokens/s", "MFU", "exposed comm", "bubble", "memory/GPU", "fits"})
    header.emplace_back(h);
  const Row* ref = reference(rows);
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::vector<std::string> c = r.values;
    if (r.outcome.status == analysis::PointStatus::Ok) {
      const analysis::RunReport& rep = *r.outcome.report;
      const double t = rep.iteration.iteration_time_s;
      const auto& b = rep.iteration.breakdown;
      c.push_back(seconds(t));
      c.push_back(fmt::format("{:.2f}x", speedup(r, ref)));
      c.push_back(fmt::format("{:.0f}", rep.tokens_per_s));
      c.push_back(fmt::format("{:.1f}%", 100 * rep.mfu));
      c.push_back(fmt::format("{} ({:.1f}%)", seconds(b.exposed_comm), t > 0 ? 100 * b.exposed_comm / t : 0.0));
      c.push_back(seconds(b.pipeline_bubble));
      c.push_back(fmt::format("{:.1f} GiB", static_cast<double>(rep.memory.required) / kGiB));
      c.push_back(rep.memory.fits ? "yes" : "no");
    } else {
      c.push_back(failure_text(r));
    }
    cells.push_back(std::move(c));
  }
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

std::string status_word(const Row& r) {
  return r.outcome.status == analysis::PointStatus::Error ? "invalid" : std::string(analysis::status_name(r.outcome.status));
}

std::string csv_table(const std::vector<Axis>& axes, const std::vector<Row>& rows) {
  std::string out;
  for (const Axis& a : axes) out += analysis::csv_field(a.key) + ",";
  out += "status,reason,iteration_time_s,speedup,tokens_per_s,mfu,exposed_comm_s,exposed_comm_fraction,"
         "pipeline_bubble_s,memory_per_gpu_bytes,fits_in_memory\n";
  const Row* ref = reference(rows);
  for (const Row& r : rows) {
    for (const auto& v : r.values) out += analysis::csv_field(v) + ",";
    out += status_word(r) + "," + analysis::csv_field(r.outcome.reason);
    if (r.outcome.status == analysis::PointStatus::Ok) {
      const analysis::RunReport& rep = *r.outcome.report;
      const double t = rep.iteration.iteration_time_s;
      const auto& b = rep.iteration.breakdown;
      out += fmt::format(",{:.9g},{:.6f},{:.9g},{:.6f},{:.9g},{:.6f},{:.9g},{},{}\n", t, speedup(r, ref), rep.tokens_per_s,
                         rep.mfu, b.exposed_comm, t > 0 ? b.exposed_comm / t : 0.0, b.pipeline_bubble,
                         rep.memory.required, rep.memory.fits ? "true" : "false");
    } else if (r.outcome.status == analysis::PointStatus::Infeasible && r.outcome.report) {  // out of memory
      out += fmt::format(",,,,,,,,{},false\n", r.outcome.report->memory.required);
    } else {
      out += ",,,,,,,,,\n";
    }
  }
  return out;
}

std::string json_table(const std::vector<Axis>& axes, const std::vector<Row>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  const Row* ref = reference(rows);
  for (const Row& r : rows) {
    nlohmann::ordered_json item;
    nlohmann::ordered_json vary = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < axes.size(); ++i) vary[axes[i].key] = r.values[i];
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

}  // namespace

int verb_compare(int argc, char** argv) {
  CLI::App app{"Run a scenario once per combination of varied keys and compare the results side by side.",
               "clustersim compare"};
  std::string path, format = "text";
  std::vector<std::string> varies, sets;
  bool ignore_memory = false;
  app.add_option("scenario", path, "scenario file (TOML)")->required();
  app.add_option("--vary", varies,
                 "key=v1,v2,…: run once per value (repeatable; the cartesian product, first --vary slowest)")
      ->required()
      ->allow_extra_args(false);
  app.add_option("--set", sets, "override a key for every run: section.key=value (repeatable)")->allow_extra_args(false);
  app.add_option("--format", format, "text | json | csv");
  app.add_flag("--ignore-memory", ignore_memory, "simulate combinations that do not fit in GPU memory anyway");
  if (const auto help = parse_args(app, argc, argv)) return *help;
  if (format != "text" && format != "json" && format != "csv") {
    throw CliError("--format '" + format + "': expected text, json or csv");
  }
  std::vector<Axis> axes;
  for (const auto& v : varies) {
    axes.push_back(parse_vary(v));
    for (std::size_t i = 0; i + 1 < axes.size(); ++i)
      if (axes[i].key == axes.back().key) throw CliError("--vary " + axes.back().key + " is given twice; list all its values in one --vary");
  }

  analysis::ClusterCache clusters;
  std::vector<Row> rows;
  for (auto& values : combinations(axes)) {
    std::vector<std::string> overrides = sets;
    for (std::size_t i = 0; i < axes.size(); ++i) overrides.push_back(axes[i].key + "=" + values[i]);
    rows.push_back(Row{std::move(values), analysis::run_point(path, overrides, clusters, ignore_memory)});
  }

  if (format == "json") {
    std::fputs(json_table(axes, rows).c_str(), stdout);
  } else if (format == "csv") {
    std::fputs(csv_table(axes, rows).c_str(), stdout);
  } else {
    std::fputs(text_table(axes, rows).c_str(), stdout);
  }
  if (reference(rows) != nullptr) return 0;
  // Nothing ran: say why, once per distinct message.
  std::vector<std::string> said;
  bool any_invalid = false;
  for (const Row& r : rows) {
    any_invalid = any_invalid || r.outcome.status == analysis::PointStatus::Error;
    if (std::find(said.begin(), said.end(), r.outcome.message) != said.end()) continue;
    said.push_back(r.outcome.message);
    std::string combination;
    for (std::size_t i = 0; i < axes.size(); ++i) combination += (i ? " " : "") + axes[i].key + "=" + r.values[i];
    std::fprintf(stderr, "clustersim compare: with %s:\n", combination.c_str());
    std::fputs(r.outcome.message.c_str(), stderr);
    if (!r.outcome.message.empty() && r.outcome.message.back() != '\n') std::fputc('\n', stderr);
  }
  std::fprintf(stderr, "clustersim compare: no combination %s\n",
               any_invalid ? "is valid (see above)" : "can run (see above); pass --ignore-memory to simulate those that do not fit in GPU memory anyway");
  return any_invalid ? 2 : 3;
}

}  // namespace clustersim::apps
