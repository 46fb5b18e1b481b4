// Reading one scenario table key by key, with type, range and unknown-key checks (see toml_reader.h).
#include "scenarios/toml_reader.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <utility>

namespace clustersim::scenarios {

ParseOutcome try_parse(std::string_view text, std::string_view source_path) {
  ParseOutcome out;
#if TOML_EXCEPTIONS
  try {
    out.table = toml::parse(text, source_path);
  } catch (const toml::parse_error& e) {
    out.error = std::string(e.description());
    out.error_at = e.source();
  }
#else
  toml::parse_result r = toml::parse(text, source_path);
  if (r) {
    out.table = std::move(r).table();
  } else {
    out.error = std::string(r.error().description());
    out.error_at = r.error().source();
  }
#endif
  return out;
}

std::string section_label(std::string_view section) {
  return section.empty() ? std::string("at the top level") : "in [" + std::string(section) + "]";
}

std::string key_label(std::string_view section, std::string_view key) {
  std::string out;
  out.reserve(key.size() + section.size() + 24);
  out.append("'").append(key).append("' ").append(section_label(section));
  return out;
}

std::string dotted(std::string_view section, std::string_view key) {
  return section.empty() ? std::string(key) : std::string(section) + "." + std::string(key);
}

std::string type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: return "a date/time";
    default: return "nothing";
  }
}

const toml::node* Section::find(std::string_view key) {
  if (!table_) return nullptr;
  const toml::node* n = table_->get(key);
  if (!n) return nullptr;
  used_.emplace_back(key);
  ctx_.record(dotted(name_, key), *n);
  return n;
}

void Section::wrong_type(std::string_view key, const toml::node& n, std::string_view expected,
                         std::string_view example) {
  std::string hint = "for example: " + std::string(key) + " = " + std::string(example);
  if (const auto* s = n.as_string(); s && expected != "a string") {
    const std::string& v = s->get();
    const ParseOutcome r = try_parse("v = " + v, "value");
    if (r.table && r.table->get("v") && !r.table->get("v")->is_string())
      hint = "remove the quotes: " + std::string(key) + " = " + v;
  }
  ctx_.error(ctx_.origin_of(dotted(name_, key), n.source()),
             key_label(name_, key) + " must be " + std::string(expected) + ", not " + type_name(n.type()),
             std::move(hint));
}

std::optional<int> Section::integer(std::string_view key, int lo, int hi, std::string_view example) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  const auto* v = n->as_integer();
  if (!v) {
    wrong_type(key, *n, "an integer", example);
    return std::nullopt;
  }
  const std::int64_t x = v->get();
  if (x < lo || x > hi) {
    const std::string range = hi == INT_MAX ? "at least " + std::to_string(lo)
                                            : "between " + std::to_string(lo) + " and " + std::to_string(hi);
    ctx_.error(ctx_.origin_of(dotted(name_, key), n->source()),
               key_label(name_, key) + " must be " + range + ", got " + std::to_string(x),
               "for example: " + std::string(key) + " = " + std::string(example));
    return std::nullopt;
  }
  return static_cast<int>(x);
}

std::optional<double> Section::number(std::string_view key, double lo, bool lo_exclusive, std::string_view example) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  std::optional<double> x;
  if (const auto* i = n->as_integer()) x = static_cast<double>(i->get());
  if (const auto* f = n->as_floating_point()) x = f->get();
  if (!x) {
    wrong_type(key, *n, "a number", example);
    return std::nullopt;
  }
  if (!std::isfinite(*x)) {
    ctx_.error(ctx_.origin_of(dotted(name_, key), n->source()),
               key_label(name_, key) + " must be a finite number, got " + format_number(*x),
               "for example: " + std::string(key) + " = " + std::string(example));
    return std::nullopt;
  }
  const bool below = lo_exclusive ? !(*x > lo) : !(*x >= lo);
  if (below) {
    ctx_.error(ctx_.origin_of(dotted(name_, key), n->source()),
               key_label(name_, key) + " must be " + (lo_exclusive ? "greater than " : "at least ") +
                   format_number(lo) + ", got " + format_number(*x),
               "for example: " + std::string(key) + " = " + std::string(example));
    return std::nullopt;
  }
  return x;
}

std::optional<bool> Section::boolean(std::string_view key) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  if (const auto* b = n->as_boolean()) return b->get();
  wrong_type(key, *n, "true or false", "true");
  return std::nullopt;
}

std::optional<std::string> Section::string(std::string_view key, std::string_view example) {
  const toml::node* n = find(key);
  if (!n) return std::nullopt;
  if (const auto* s = n->as_string()) return s->get();
  wrong_type(key, *n, "a string", quote_str(example));
  return std::nullopt;
}

const toml::table* Section::subtable(std::string_view key) {
  const toml::node* n = find(key);
  if (!n) return nullptr;
  if (const auto* t = n->as_table()) return t;
  ctx_.error(ctx_.origin_of(dotted(name_, key), n->source()),
             key_label(name_, key) + " must be a table [" + dotted(name_, key) + "], not " + type_name(n->type()),
             "write it as a section: [" + dotted(name_, key) + "]");
  return nullptr;
}

// The hint lists the values that pass the loader with the rest of the scenario (hint_check.cpp:
// "fp8" is not offered on an A100), and "did you mean" picks among them.
void Section::unknown_choice(std::string_view key, const std::string& value, std::span<const std::string_view> names) {
  const std::string base = "unknown value " + quote_str(value) + " for " + key_label(name_, key);
  std::vector<std::string> quoted;
  for (std::string_view n : names) quoted.push_back(quote_str(n));
  auto render = [base, value, all = std::vector<std::string_view>(names.begin(), names.end())](
                    Diagnostic& d, const std::vector<LoadContext::Choice>& ok) {
    std::vector<std::string_view> good, bad;
    for (std::string_view n : all) {
      const bool passed = std::any_of(ok.begin(), ok.end(), [&](const LoadContext::Choice& c) { return c.shown == quote_str(n); });
      (passed || ok.empty() ? good : bad).push_back(n);
    }
    d.message = base;
    if (auto close = did_you_mean(value, good); !close.empty()) d.message += "; did you mean " + quote_str(close) + "?";
    d.hint = "valid values: " + join(good, ", ", true);
    if (!bad.empty()) d.hint += " (not here: " + join(bad, ", ", true) + ", rejected by another check of this scenario)";
  };
  ctx_.error_with_choices(dotted(name_, key), base, value_choices(dotted(name_, key), quoted), std::move(render));
}

void Section::finish() {
  if (!table_) return;
  for (auto&& [k, v] : *table_) {
    if (std::find(used_.begin(), used_.end(), k.str()) != used_.end()) continue;
    const std::string dk = dotted(name_, k.str());
    KeyOrigin at = ctx_.origin_of(dk, k.source());
    if (at.where.line == 0 && at.where.file.rfind("--set", 0) != 0) at = ctx_.origin_of(dk, v.source());
    std::string message;
    std::string close = did_you_mean(k.str(), keys_);
    if (name_.empty() && v.is_table()) {
      message = "unknown section [" + std::string(k.str()) + "]";
      if (!close.empty()) message += "; did you mean [" + close + "]?";
    } else {
      message = "unknown key '" + std::string(k.str()) + "' " + section_label(name_);
      if (!close.empty()) message += "; did you mean '" + close + "'?";
    }
    ctx_.error(at, std::move(message),
               (name_.empty() ? "valid top-level keys and sections: " : "valid keys in [" + name_ + "]: ") +
                   join(keys_, ", "));
  }
}

}  // namespace clustersim::scenarios
