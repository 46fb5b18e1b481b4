// Errors in user input (scenario files, --set overrides), reported gcc-style.
//
// A ScenarioError carries every diagnostic found while validating one scenario (capped at
// kMaxDiagnostics), so that a user fixes all of them in one pass instead of one per run.
// format() renders them exactly as a compiler would:
//
//   scenarios/library/gpt3.toml:14:5: error: unknown key 'bandwdith' in [cluster.node]; did you mean 'bandwidth'?
//       bandwdith = "900 GB/s"
//       ^
//       hint: valid keys in [cluster.node]: ...
//
// The quoted source line is shown with its leading whitespace removed and indented by four
// spaces; the caret sits under the diagnostic's column (tabs before the column are kept so the
// caret lines up). A diagnostic without a line (line == 0) names only its file, e.g. a missing
// section, or the `--set section.key=value` override it came from.
//
// Everything printed is safe for a terminal: control characters (a NUL, an escape sequence, a
// carriage return) in messages, hints and quoted lines are shown as \xNN (printable()), so a NUL
// cannot cut a diagnostic short and a value cannot recolour the terminal; a quoted line longer
// than kMaxQuotedColumns is shown as a window around the column, marked with "..."; a message or
// hint longer than kMaxMessageChars is cut.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::scenarios {

// Where a value came from. line and column are 1-based; 0 means "the whole file / override".
struct SourceLocation {
  std::string file;
  int line = 0, column = 0;
};

struct Diagnostic {
  SourceLocation where;
  std::string message;
  std::string hint;         // how to fix it; may be empty
  std::string source_line;  // the offending line of the input, verbatim; may be empty
};

class ScenarioError : public std::runtime_error {
 public:
  static constexpr std::size_t kMaxDiagnostics = 20;

  // Keeps the first kMaxDiagnostics and counts the rest. Requires at least one diagnostic.
  explicit ScenarioError(std::vector<Diagnostic> diagnostics);
  ScenarioError(SourceLocation where, std::string message, std::string hint = {},
                std::string source_line = {});

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  std::size_t suppressed() const { return suppressed_; }

  // All diagnostics, each as format_diagnostic() renders it, then a note if some were dropped.
  std::string format() const;

 private:
  std::vector<Diagnostic> diagnostics_;
  std::size_t suppressed_ = 0;
};

// The widest quoted source line, in characters; longer lines are cut around the caret.
inline constexpr std::size_t kMaxQuotedColumns = 160;
// The longest message or hint printed, in characters (the longest real hint, a list of presets or
// constants, is under 1,000); longer ones are cut with a count of what was left out.
inline constexpr std::size_t kMaxMessageChars = 4000;

// `text` with every control character except newline and tab (and DEL) as "\xNN".
std::string printable(std::string_view text);

// One diagnostic, newline-terminated: "file:line:col: error: message", the source line with
// a caret, and "    hint: ..." when there is a hint.
std::string format_diagnostic(const Diagnostic& d);

// The candidate closest to `word`, ASCII case-insensitive, or "" when none is close: an exact
// match; else the shortest candidate that `word` (3+ characters) is a prefix of; else the nearest
// within Levenshtein distance 2 (and less than the word's length); else a candidate of 3+
// characters that is a prefix of `word`. Ties go to the earlier candidate.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace clustersim::scenarios
