// Issue #14 item 8: every value a loader hint proposes passes the loader. For bad scenarios of
// several kinds, each "use <key> = v1, v2" in a hint is tried as one more --set and must clear the
// error it belongs to without adding one.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"

using namespace clustersim::scenarios;

namespace {

std::vector<Diagnostic> errors_of(const std::string& text, const std::vector<std::string>& overrides) {
  try {
    (void)parse_scenario(text, "s.toml", overrides);
  } catch (const ScenarioError& e) {
    return e.diagnostics();
  }
  return {};
}

const std::map<std::string, std::string> kKeyOfLabel = {
    {"tp", "parallelism.tp"},       {"dp", "parallelism.dp"},         {"global_batch", "training.global_batch"},
    {"precision", "training.precision"}, {"nodes", "cluster.nodes"}, {"heads", "model.heads"},
    {"kv_heads", "model.kv_heads"}, {"pp", "parallelism.pp"}, {"virtual_stages", "parallelism.virtual_stages"}};

// The (key, value) pairs a hint proposes: "use tp = 1, 2, 4", "use dp = 8, or gpus = 80".
std::vector<std::pair<std::string, std::string>> proposals(const std::string& hint) {
  std::vector<std::pair<std::string, std::string>> out;
  static const std::regex one(R"((?:use |or )([a-z_]+) = ((?:"?[0-9a-z]+"?(?:, )?)+))");
  for (std::sregex_iterator it(hint.begin(), hint.end(), one), end; it != end; ++it) {
    const auto label = kKeyOfLabel.find((*it)[1].str());
    if (label == kKeyOfLabel.end()) continue;
    static const std::regex value(R"("?[0-9a-z]+"?)");
    const std::string list = (*it)[2].str();
    for (std::sregex_iterator v(list.begin(), list.end(), value); v != end; ++v)
      if (v->str() != "or") out.emplace_back(label->second, v->str());
  }
  return out;
}

const std::string kA100 = "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 2\n[model]\npreset = \"gpt3-13b\"\n";

}  // namespace

TEST_CASE("scenarios::hint check: every proposed value clears its error and adds none") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {kA100 + "[parallelism]\ntp = 6\npp = 2\ndp = 4\n", {}},   // tp wrong and the GPU count with it
      {kA100 + "[parallelism]\ntp = 4\npp = 2\ndp = 3\n", {}},   // dp wrong
      {kA100 + "[parallelism]\ntp = 8\npp = 1\ndp = 3\n", {}},   // needs more nodes
      {kA100 + "[training]\nprecision = \"fp9\"\n", {}},         // an enum typo on an A100 (no FP8)
      {kA100 + "[training]\nprecision = \"fp8\"\n", {}},
      {kA100 + "[parallelism]\ntp = 8\n[training]\nglobal_batch = 7\n", {}},
      {kA100 + "[parallelism]\ntp = 4\npp = 2\nvirtual_stages = 2\n[training]\nglobal_batch = 10\n", {}},
      {kA100 + "[training]\nglobal_batch = 2147483646\n", {}},   // past the work budget
      {kA100 + "[parallelism]\ntp = 2\npp = 3\n", {}},         // pp dividing neither the layers nor the GPUs
      {kA100 + "[parallelism]\ntp = 2\npp = 4\nvirtual_stages = 3\n", {}},
      {"[cluster]\nnode = \"dgx-a100-80gb\"\n[model]\nlayers = 4\nhidden = 1000\nheads = 7\n", {}},
  };
  int checked = 0;
  for (const auto& [text, overrides] : cases) {
    CAPTURE(text);
    const std::vector<Diagnostic> before = errors_of(text, overrides);
    REQUIRE_FALSE(before.empty());
    for (const Diagnostic& d : before) {
      for (const auto& [key, value] : proposals(d.hint)) {
        CAPTURE(d.hint);
        CAPTURE(value);
        std::vector<std::string> with = overrides;
        with.push_back(key + "=" + value);
        const std::vector<Diagnostic> after = errors_of(text, with);
        CHECK(after.size() < before.size());
        for (const Diagnostic& a : after) CHECK(a.where.file.rfind("--set " + key, 0) != 0);
        ++checked;
      }
    }
  }
  CHECK(checked >= 10);
}

TEST_CASE("scenarios::hint check: a value that fixes one key but breaks another is not offered") {
  // 16 A100s, pp = 2, dp = 4: of the tp dividing GPT-3 13B's 40 heads only tp = 2 makes
  // tp * pp * dp = 16; tp = 1, 4, 5, 8 would move the error to the GPU count.
  const std::vector<Diagnostic> d = errors_of(kA100 + "[parallelism]\ntp = 3\npp = 2\ndp = 4\n", {});
  REQUIRE_FALSE(d.empty());
  bool found = false;
  for (const Diagnostic& x : d)
    if (x.message.find("does not divide heads") != std::string::npos) {
      found = true;
      CHECK(x.hint.find("use tp = 2") != std::string::npos);
      CHECK(x.hint.find("use tp = 1") == std::string::npos);
    }
  CHECK(found);
  // "fp8" is a precision the key accepts but not an A100: the hint says so instead of offering it.
  const std::vector<Diagnostic> p = errors_of(kA100 + "[training]\nprecision = \"fp9\"\n", {});
  REQUIRE(p.size() == 1);
  CHECK(p[0].message.find("did you mean \"fp8\"") == std::string::npos);
  CHECK(p[0].hint.find("not here: \"fp8\"") != std::string::npos);
}
