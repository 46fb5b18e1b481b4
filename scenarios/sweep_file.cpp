// Sweep files (see sweep_file.h).
#include "scenarios/sweep_file.h"

#include "scenarios/source_text.h"
#include "scenarios/toml_text.h"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace clustersim::scenarios {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 3> kTopLevelKeys = {"base", "grid", "point"};
constexpr const char* kExample = "for example: \"parallelism.tp\" = [1, 2, 4, 8]";

bool is_dotted_key(std::string_view key) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string_view::npos) return false;
  if (key.find('.') == std::string_view::npos) return false;  // needs a section
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// A scalar leaf of [grid] or a [[point]], with its full dotted key.
struct Leaf {
  std::string key;
  const toml::node* value;
  toml::source_position at;
};

// A sweep of 100,000 points at a second or more each is a day of one machine; a grid larger than
// that is a typo (one more axis, one list too long), and building it would exhaust memory first.
constexpr std::size_t kMaxSweepPoints = 100000;

class SweepParser {
 public:
  SweepParser(std::string_view text, std::string file) : text_(text), lines_(split_lines(text)) {
    spec_.file = std::move(file);
  }

  SweepSpec run() {
    if (!parse()) throw ScenarioError(std::move(diagnostics_));
    check_top_level();
    read_base();
    const std::vector<SweepPoint> grid = read_grid();
    std::vector<SweepPoint> points = read_points();
    if (diagnostics_.empty() && grid.empty() && points.empty()) {
      error(SourceLocation{spec_.file, 0, 0}, "the sweep has no points",
            "add a [grid] of lists or [[point]] tables, " + std::string(kExample));
    }
    if (!diagnostics_.empty()) throw ScenarioError(std::move(diagnostics_));
    spec_.points = grid;
    spec_.points.insert(spec_.points.end(), points.begin(), points.end());
    for (SweepPoint& p : spec_.points) sort_settings(p);
    return std::move(spec_);
  }

 private:
  bool parse() {
#if TOML_EXCEPTIONS
    try {
      doc_ = toml::parse(text_, spec_.file);
      return true;
    } catch (const toml::parse_error& e) {
      error(at(e.source().begin), "invalid TOML: " + std::string(e.description()), "see https://toml.io for the syntax");
      return false;
    }
#else
    toml::parse_result r = toml::parse(text_, spec_.file);
    if (r) {
      doc_ = std::move(r).table();
      return true;
    }
    error(at(r.error().source().begin), "invalid TOML: " + std::string(r.error().description()),
          "see https://toml.io for the syntax");
    return false;
#endif
  }

  SourceLocation at(const toml::source_position& p) const {
    return SourceLocation{spec_.file, static_cast<int>(p.line), static_cast<int>(p.column)};
  }

  void error(SourceLocation where, std::string message, std::string hint = {}) {
    std::string line;
    if (where.line > 0 && static_cast<std::size_t>(where.line) <= lines_.size())
      line = lines_[static_cast<std::size_t>(where.line - 1)];
    diagnostics_.push_back(Diagnostic{std::move(where), std::move(message), std::move(hint), std::move(line)});
  }

  void check_top_level() {
    for (auto&& [k, v] : doc_) {
      if (std::find(kTopLevelKeys.begin(), kTopLevelKeys.end(), k.str()) != kTopLevelKeys.end()) continue;
      std::string message = "unknown key '" + std::string(k.str()) + "' in a sweep file";
      if (const std::string close = did_you_mean(k.str(), kTopLevelKeys); !close.empty())
        message += "; did you mean '" + close + "'?";
      error(at(k.source().begin.line > 0 ? k.source().begin : v.source().begin), std::move(message),
            "valid top-level keys and sections: base, [grid], [[point]]; scenario keys go inside [grid] or [[point]]");
    }
  }

  void read_base() {
    const toml::node* n = doc_.get("base");
    if (n == nullptr) {
      error(SourceLocation{spec_.file, 0, 0}, "missing key 'base': the scenario the sweep varies",
            "for example: base = \"gpt3-175b-dgx-a100.toml\" (relative to the sweep file)");
      return;
    }
    spec_.base_at = at(n->source().begin);
    if (!n->is_string() || n->as_string()->get().empty()) {
      error(spec_.base_at, "'base' must be a scenario file name (a string)",
            "for example: base = \"gpt3-175b-dgx-a100.toml\" (relative to the sweep file)");
      return;
    }
    const fs::path rel(n->as_string()->get());
    spec_.base = rel.is_absolute() ? rel.generic_string()
                                   : (fs::path(spec_.file).parent_path() / rel).lexically_normal().generic_string();
    std::error_code ec;
    if (!fs::is_regular_file(spec_.base, ec)) {
      error(spec_.base_at, "base scenario '" + spec_.base + "' does not exist",
            "'base' is relative to the sweep file's folder");
    }
  }

  // Flattens a table into dotted-key leaves: `"parallelism.tp" = …`, `parallelism.tp = …` and
  // `[grid.parallelism] tp = …` all name the key parallelism.tp.
  void flatten(const toml::table& t, const std::string& prefix, std::vector<Leaf>& out) {
    for (auto&& [k, v] : t) {
      const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      if (const toml::table* sub = v.as_table()) {
        flatten(*sub, key, out);
        continue;
      }
      out.push_back(Leaf{key, &v, k.source().begin.line > 0 ? k.source().begin : v.source().begin});
    }
    std::sort(out.begin(), out.end(), [](const Leaf& a, const Leaf& b) {
      return a.at.line != b.at.line ? a.at.line < b.at.line : a.at.column < b.at.column;
    });
  }

  bool check_key(const Leaf& leaf, std::string_view where) {
    if (is_dotted_key(leaf.key)) return true;
    error(at(leaf.at), "'" + leaf.key + "' in " + std::string(where) + " is not a scenario key like section.key",
          kExample);
    return false;
  }

  // The value of one setting, or nullopt (after an error) when it is not a scalar.
  std::optional<SweepSetting> setting(const std::string& key, const toml::node& v) {
    SweepSetting s{key, {}, {}};
    if (const auto* i = v.as_integer()) {
      s.display = s.toml = std::to_string(i->get());
    } else if (const auto* f = v.as_floating_point()) {
      s.display = s.toml = toml_float(f->get());
    } else if (const auto* b = v.as_boolean()) {
      s.display = s.toml = b->get() ? "true" : "false";
    } else if (const auto* str = v.as_string()) {
      s.display = str->get();
      s.toml = quote_str(str->get());
    } else {
      error(at(v.source().begin), "the value of '" + key + "' must be a number, a string or a boolean",
            "a scenario value as --set takes it, e.g. 8, 2.5, \"ring\" or true");
      return std::nullopt;
    }
    return s;
  }

  void note_key(const Leaf& leaf) {
    if (spec_.key_at.count(leaf.key) != 0) return;
    spec_.keys.push_back(leaf.key);
    Diagnostic d;
    d.where = at(leaf.at);
    if (d.where.line > 0 && static_cast<std::size_t>(d.where.line) <= lines_.size())
      d.source_line = lines_[static_cast<std::size_t>(d.where.line - 1)];
    spec_.key_at.emplace(leaf.key, std::move(d));
  }

  std::vector<SweepPoint> read_grid() {
    const toml::node* n = doc_.get("grid");
    if (n == nullptr) return {};
    if (!n->is_table()) {
      error(at(n->source().begin), "'grid' must be a table of lists", std::string("[grid] then ") + kExample);
      return {};
    }
    std::vector<Leaf> leaves;
    flatten(*n->as_table(), "", leaves);
    std::vector<std::vector<SweepSetting>> axes;
    std::map<std::string, int> seen;
    for (const Leaf& leaf : leaves) {
      if (!check_key(leaf, "[grid]")) continue;
      if (seen[leaf.key]++ > 0) {
        error(at(leaf.at), "'" + leaf.key + "' appears twice in [grid]", "keep one list per key");
        continue;
      }
      const toml::array* list = leaf.value->as_array();
      if (list == nullptr || list->empty()) {
        error(at(leaf.value->source().begin), "'" + leaf.key + "' in [grid] must be a non-empty list of values",
              kExample);
        continue;
      }
      std::vector<SweepSetting> axis;
      for (const toml::node& v : *list)
        if (auto s = setting(leaf.key, v)) axis.push_back(std::move(*s));
      if (axis.size() != list->size()) continue;
      note_key(leaf);
      axes.push_back(std::move(axis));
    }
    if (!grid_within_limit(axes, at(n->source().begin))) return {};
    return cartesian(axes);
  }

  // The product of the axes' lengths, refused above kMaxSweepPoints before it is built.
  bool grid_within_limit(const std::vector<std::vector<SweepSetting>>& axes, const SourceLocation& where) {
    double points = axes.empty() ? 0 : 1;
    std::string product;
    for (const auto& axis : axes) {
      points *= static_cast<double>(axis.size());
      product += (product.empty() ? "" : " x ") + std::to_string(axis.size());
    }
    if (points <= static_cast<double>(kMaxSweepPoints)) return true;
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", points);
    error(where, "the grid has " + std::string(count) + " points (" + product + "), more than the " +
                     std::to_string(kMaxSweepPoints) + " one sweep runs",
          "split the sweep into several files, or list the points you need as [[point]] tables");
    return false;
  }

  // First axis slowest.
  static std::vector<SweepPoint> cartesian(const std::vector<std::vector<SweepSetting>>& axes) {
    if (axes.empty()) return {};
    std::vector<SweepPoint> out(1);
    for (const auto& axis : axes) {
      std::vector<SweepPoint> next;
      next.reserve(out.size() * axis.size());
      for (const SweepPoint& p : out) {
        for (const SweepSetting& s : axis) {
          SweepPoint q = p;
          q.settings.push_back(s);
          next.push_back(std::move(q));
        }
      }
      out = std::move(next);
    }
    return out;
  }

  std::vector<SweepPoint> read_points() {
    const toml::node* n = doc_.get("point");
    if (n == nullptr) return {};
    const toml::array* list = n->as_array();
    if (list == nullptr || !list->is_array_of_tables()) {
      error(at(n->source().begin), "'point' must be an array of tables: write each point as [[point]]",
            "[[point]] then \"parallelism.tp\" = 8");
      return {};
    }
    std::vector<SweepPoint> points;
    for (const toml::node& t : *list) {
      std::vector<Leaf> leaves;
      flatten(*t.as_table(), "", leaves);
      if (leaves.empty()) {
        error(at(t.source().begin), "an empty [[point]]", "give it at least one key, e.g. \"parallelism.tp\" = 8");
        continue;
      }
      SweepPoint p;
      for (const Leaf& leaf : leaves) {
        if (!check_key(leaf, "[[point]]")) continue;
        if (auto s = setting(leaf.key, *leaf.value)) {
          note_key(leaf);
          p.settings.push_back(std::move(*s));
        }
      }
      points.push_back(std::move(p));
    }
    return points;
  }

  void sort_settings(SweepPoint& p) const {
    const auto rank = [this](const SweepSetting& s) {
      return std::find(spec_.keys.begin(), spec_.keys.end(), s.key) - spec_.keys.begin();
    };
    std::stable_sort(p.settings.begin(), p.settings.end(),
                     [&](const SweepSetting& a, const SweepSetting& b) { return rank(a) < rank(b); });
  }

  std::string_view text_;
  std::vector<std::string> lines_;
  toml::table doc_;
  SweepSpec spec_;
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace

std::vector<std::string> SweepPoint::overrides() const {
  std::vector<std::string> out;
  out.reserve(settings.size());
  for (const SweepSetting& s : settings) out.push_back(s.key + "=" + s.toml);
  return out;
}

std::string SweepPoint::value_of(std::string_view key) const {
  for (const SweepSetting& s : settings)
    if (s.key == key) return s.display;
  return {};
}

SweepSpec parse_sweep(std::string_view toml_text, const std::string& file_name) {
  return SweepParser(toml_text, file_name).run();
}

SweepSpec load_sweep(const std::string& path) {
  std::string why;
  const std::optional<std::string> text = read_file(path, why);
  if (!text) {
    throw ScenarioError(SourceLocation{path, 0, 0}, "cannot read the sweep file: " + why,
                        "check the path; it is taken relative to the current directory");
  }
  return parse_sweep(*text, path);
}

}  // namespace clustersim::scenarios
