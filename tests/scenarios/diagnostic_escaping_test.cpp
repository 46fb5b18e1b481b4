// Diagnostics are safe to print (scenarios/scenario_error.h): control characters as \xNN, so a NUL
// cannot cut a diagnostic short and an escape sequence cannot reach the terminal; a megabyte line
// is quoted as a window around the caret; a megabyte message is cut (issue 14).
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"

using clustersim::scenarios::Diagnostic;
using clustersim::scenarios::format_diagnostic;
using clustersim::scenarios::kMaxQuotedColumns;
using clustersim::scenarios::printable;
using clustersim::scenarios::SourceLocation;

TEST_CASE("scenarios::printable: control characters become \\xNN, newline, tab and UTF-8 stay") {
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(printable("\x1b[31mred") == "\\x1b[31mred");
  CHECK(printable("cr\rdel\x7f") == "cr\\x0ddel\\x7f");
  CHECK(printable("two\nlines\tand tab") == "two\nlines\tand tab");
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");
}

TEST_CASE("scenarios::format_diagnostic: a NUL in the line keeps the caret under the column and the hint") {
  // name = "a<NUL>b" with the error at the 'b' (column 11): the NUL before it is shown as the four
  // characters \x00, so the caret moves right by three to stay under the 'b'.
  const Diagnostic d{SourceLocation{"f.toml", 1, 11}, "bad", "fix it", std::string("name = \"a\0b\"", 12)};
  const std::string out = format_diagnostic(d);
  CHECK(out == "f.toml:1:11: error: bad\n"
               "    name = \"a\\x00b\"\n"
               "                 ^\n"
               "    hint: fix it\n");
}

TEST_CASE("scenarios::format_diagnostic: a line longer than the window is quoted around the caret") {
  const std::string line = "key = \"" + std::string(1000000, 'x') + "\" oops";
  const int column = static_cast<int>(line.size()) - 3;  // the 'o' of oops
  const std::string out = format_diagnostic(Diagnostic{SourceLocation{"f.toml", 1, column}, "bad", "", line});
  CHECK(out.size() < 2 * kMaxQuotedColumns + 100);
  const std::size_t quote = out.find("\n    ") + 5, caret_line = out.find('\n', quote) + 5;
  const std::string shown = out.substr(quote, out.find('\n', quote) - quote);
  const std::string caret = out.substr(caret_line, out.find('\n', caret_line) - caret_line);
  CHECK(shown.rfind("...", 0) == 0);
  CHECK(shown.substr(shown.size() - 4) == "oops");
  CHECK(caret.size() == shown.size() - 3);  // '^' under the 'o'
  CHECK(caret.back() == '^');
  CHECK(shown[caret.size() - 1] == 'o');
}

TEST_CASE("scenarios::format_diagnostic: a message quoting a megabyte value is cut with a count") {
  const std::string message = "unknown preset '" + std::string(1000000, 'y') + "'";
  const std::string out = format_diagnostic(Diagnostic{SourceLocation{"f.toml", 0, 0}, message, "", ""});
  CHECK(out.size() < clustersim::scenarios::kMaxMessageChars + 200);
  CHECK(out.find("more characters)") != std::string::npos);
}

TEST_CASE("scenarios::load_scenario: a directory, a device and a missing file each say why") {
  const auto reason = [](const std::string& path) {
    try {
      (void)clustersim::scenarios::load_scenario(path);
    } catch (const clustersim::scenarios::ScenarioError& e) {
      return e.diagnostics().front().message;
    }
    return std::string("loaded");
  };
  CHECK(reason(CLUSTERSIM_SOURCE_DIR "/scenarios") == "cannot read scenario file: it is a directory, not a file");
  CHECK(reason("/dev/zero") == "cannot read scenario file: it is not a regular file (a FIFO, socket or device)");
  CHECK(reason("/no/such.toml") == "cannot read scenario file: No such file or directory");
}

TEST_CASE("scenarios::show_config: a name with a newline, a tab and an escape re-reads as the same name") {
  const auto spec = clustersim::scenarios::load_scenario(
      CLUSTERSIM_SOURCE_DIR "/scenarios/library/gpt3-1.3b-2x-rtx4090.toml", {R"(name="a\nb\tc\u001bd")"});
  REQUIRE(spec.name == "a\nb\tc\x1b" "d");
  const std::string shown = clustersim::scenarios::show_config(spec);
  CHECK(shown.find(R"(name = "a\nb\tc\u001bd")") != std::string::npos);
  CHECK(shown.find('\x1b') == std::string::npos);
  CHECK(clustersim::scenarios::parse_scenario(shown, "shown.toml", {}).name == spec.name);
}
