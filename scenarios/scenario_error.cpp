#include "scenarios/scenario_error.h"

#include <algorithm>
#include <cctype>
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

// The source line without its leading whitespace, and the caret line under `column`.
std::pair<std::string, std::string> quote_with_caret(std::string_view line, int column) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  std::size_t indent = 0;
  while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t')) ++indent;
  const std::string_view shown = line.substr(indent);
  std::string caret;
  if (column > 0) {
    const std::size_t col = static_cast<std::size_t>(column - 1);
    const std::size_t offset = col > indent ? col - indent : 0;
    for (std::size_t i = 0; i < offset && i < shown.size(); ++i) caret += shown[i] == '\t' ? '\t' : ' ';
    if (offset > shown.size()) caret.append(offset - shown.size(), ' ');
    caret += '^';
  }
  return {std::string(shown), caret};
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

std::string format_diagnostic(const Diagnostic& d) {
  std::string out = location_prefix(d.where) + "error: " + d.message + '\n';
  if (!d.source_line.empty() && d.where.line > 0) {
    const auto [shown, caret] = quote_with_caret(d.source_line, d.where.column);
    out += "    " + shown + '\n';
    if (!caret.empty()) out += "    " + caret + '\n';
  }
  if (!d.hint.empty()) out += "    hint: " + d.hint + '\n';
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
