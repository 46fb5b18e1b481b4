#include "scenarios/scenario_error.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

namespace clustersim::scenarios {
namespace {

std::string summary(const std::vector<Diagnostic>& ds) {
  if (ds.empty()) return "invalid scenario";
  std::string s = ds.front().message;
  if (ds.size() > 1) s += " (and " + std::to_string(ds.size() - 1) + " more errors)";
  return s;
}

std::string location_prefix(const SourceLocation& w) {
  std::string s = w.file;
  if (w.line > 0) {
    s += ':' + std::to_string(w.line);
    if (w.column > 0) s += ':' + std::to_string(w.column);
  }
  return s.empty() ? std::string{} : s + ": ";
}

// One character as shown in a quoted line: itself, or \xNN for a control character.
std::string shown_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if ((u >= 0x20 && u != 0x7f) || c == '\t') return std::string(1, c);
  char hex[8];
  std::snprintf(hex, sizeof hex, "\\x%02x", u);
  return hex;
}

// The source line without its leading whitespace, and the caret line under `column`. A line wider
// than kMaxQuotedColumns shows a window of that width around the column, with "..." where cut.
std::pair<std::string, std::string> quote_with_caret(std::string_view line, int column) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  std::size_t indent = 0;
  while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t')) ++indent;
  std::string_view rest = line.substr(indent);
  const std::size_t col = column > 0 ? static_cast<std::size_t>(column - 1) : 0;
  std::size_t offset = col > indent ? col - indent : 0;  // the caret's character in `rest`
  std::string shown, caret, tail;
  if (rest.size() > kMaxQuotedColumns) {  // a window around the caret
    const std::size_t from = std::min(offset > kMaxQuotedColumns / 2 ? offset - kMaxQuotedColumns / 2 : 0,
                                      rest.size() - kMaxQuotedColumns);
    if (from > 0) shown = "...", caret = "   ";
    if (from + kMaxQuotedColumns < rest.size()) tail = "...";
    rest = rest.substr(from, kMaxQuotedColumns);
    offset = offset > from ? offset - from : 0;
  }
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string c = shown_char(rest[i]);
    shown += c;
    if (i < offset) caret += rest[i] == '\t' ? std::string(1, '\t') : std::string(c.size(), ' ');
  }
  shown += tail;
  if (column <= 0) return {shown, ""};
  if (offset > rest.size()) caret.append(std::min(offset - rest.size(), kMaxQuotedColumns), ' ');
  return {shown, caret + '^'};
}

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::size_t levenshtein(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (prefix.size() > s.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[i]) != lower(prefix[i])) return false;
  return true;
}

}  // namespace

ScenarioError::ScenarioError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(summary(diagnostics)), diagnostics_(std::move(diagnostics)) {
  if (diagnostics_.size() > kMaxDiagnostics) {
    suppressed_ = diagnostics_.size() - kMaxDiagnostics;
    diagnostics_.resize(kMaxDiagnostics);
  }
}

ScenarioError::ScenarioError(SourceLocation where, std::string message, std::string hint,
                             std::string source_line)
    : ScenarioError(std::vector<Diagnostic>{
          Diagnostic{std::move(where), std::move(message), std::move(hint), std::move(source_line)}}) {}

std::string ScenarioError::format() const {
  std::string out;
  for (const Diagnostic& d : diagnostics_) out += format_diagnostic(d);
  if (suppressed_ > 0)
    out += "note: " + std::to_string(suppressed_) + " more errors not shown (stopped after " +
           std::to_string(kMaxDiagnostics) + ")\n";
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) out += c == '\n' ? std::string(1, c) : shown_char(c);
  return out;
}

// A message or hint as printed: printable, and cut after kMaxMessageChars (a value quoted in it
// may be a megabyte long).
std::string shown_message(std::string_view text) {
  if (text.size() <= kMaxMessageChars) return printable(text);
  return printable(text.substr(0, kMaxMessageChars)) + "... (" + std::to_string(text.size() - kMaxMessageChars) +
         " more characters)";
}

std::string format_diagnostic(const Diagnostic& d) {
  std::string out = shown_message(location_prefix(d.where)) + "error: " + shown_message(d.message) + '\n';
  if (!d.source_line.empty() && d.where.line > 0) {
    const auto [shown, caret] = quote_with_caret(d.source_line, d.where.column);
    out += "    " + shown + '\n';
    if (!caret.empty()) out += "    " + caret + '\n';
  }
  if (!d.hint.empty()) out += "    hint: " + shown_message(d.hint) + '\n';
  return out;
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  if (word.empty()) return {};
  // A truncated id ("dgx-a100") means its longer form more surely than a near neighbour does.
  std::string_view best;
  if (word.size() >= 3) {
    for (std::string_view c : candidates)
      if (c.size() > word.size() && starts_with_ci(c, word) && (best.empty() || c.size() < best.size())) best = c;
  }
  const bool have_prefix_match = !best.empty();
  std::size_t best_distance = 3;
  for (std::string_view c : candidates) {
    const std::size_t d = levenshtein(word, c);
    if (d == 0) return std::string(c);
    if (!have_prefix_match && d < best_distance && d < word.size()) {
      best_distance = d;
      best = c;
    }
  }
  if (!best.empty()) return std::string(best);
  for (std::string_view c : candidates)
    if (c.size() >= 3 && starts_with_ci(word, c)) return std::string(c);
  return {};
}

}  // namespace clustersim::scenarios
