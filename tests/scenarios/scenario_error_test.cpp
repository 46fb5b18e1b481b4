#include <doctest/doctest.h>

#include <array>
#include <string_view>

#include "scenarios/scenario_error.h"

using namespace clustersim::scenarios;

TEST_CASE("scenarios::did_you_mean: suggests a key within two edits") {
  constexpr std::array<std::string_view, 3> keys{"algorithm", "bucket_mb", "overlap"};
  CHECK(did_you_mean("bukcet_mb", keys) == "bucket_mb");
  CHECK(did_you_mean("overlpa", keys) == "overlap");
  CHECK(did_you_mean("ALGORITHM", keys) == "algorithm");
}

TEST_CASE("scenarios::did_you_mean: suggests a preset that the word is a prefix of") {
  constexpr std::array<std::string_view, 3> ids{"dgx-a100-80gb", "dgx-h100", "hgx-h100-8x"};
  CHECK(did_you_mean("dgx-a100", ids) == "dgx-a100-80gb");
  CHECK(did_you_mean("hgx-h100", ids) == "hgx-h100-8x");
}

TEST_CASE("scenarios::did_you_mean: stays silent when nothing is close") {
  constexpr std::array<std::string_view, 3> keys{"tp", "pp", "dp"};
  CHECK(did_you_mean("bucket", keys).empty());
  CHECK(did_you_mean("", keys).empty());
  CHECK(did_you_mean("x", keys).empty());
}

TEST_CASE("scenarios::ScenarioError: formats like gcc with the source line, a caret and a hint") {
  const ScenarioError e(SourceLocation{"scenarios/library/gpt3.toml", 14, 5},
                        "unknown key 'bandwdith' in [cluster.node]; did you mean 'bandwidth'?", "valid keys: bandwidth",
                        "    bandwdith = \"900 GB/s\"");
  CHECK(e.format() ==
        "scenarios/library/gpt3.toml:14:5: error: unknown key 'bandwdith' in [cluster.node]; did you mean 'bandwidth'?\n"
        "    bandwdith = \"900 GB/s\"\n"
        "    ^\n"
        "    hint: valid keys: bandwidth\n");
}

TEST_CASE("scenarios::ScenarioError: puts the caret under the column of an unindented line") {
  const ScenarioError e(SourceLocation{"a.toml", 3, 6}, "bad", "", "tp = \"8\"");
  CHECK(e.format() == "a.toml:3:6: error: bad\n    tp = \"8\"\n         ^\n");
}

TEST_CASE("scenarios::ScenarioError: names only the file or override when there is no line") {
  const ScenarioError e(SourceLocation{"--set parallelism.tp=abc", 0, 0}, "must be an integer", "remove it");
  CHECK(e.format() == "--set parallelism.tp=abc: error: must be an integer\n    hint: remove it\n");
}

TEST_CASE("scenarios::ScenarioError: keeps at most 20 diagnostics and says how many were dropped") {
  std::vector<Diagnostic> many(25, Diagnostic{SourceLocation{"f.toml", 1, 1}, "bad", "", ""});
  const ScenarioError e(std::move(many));
  CHECK(e.diagnostics().size() == ScenarioError::kMaxDiagnostics);
  CHECK(e.suppressed() == 5);
  CHECK(e.format().find("note: 5 more errors not shown") != std::string::npos);
  CHECK(std::string(e.what()).find("and 24 more errors") != std::string::npos);
}
