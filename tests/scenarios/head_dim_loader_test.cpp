// model.head_dim: read, round-tripped through show_config, printed only when set, and it lifts the
// hidden % heads rule (the head size is then stated, not derived).
#include <doctest/doctest.h>

#include <string>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string error_of(const std::string& text) { return testing::error_of(text, "head_dim.toml"); }

std::string scenario(const std::string& model) {
  return "[cluster]\nnode = \"dgx-h100\"\n\n[model]\nlayers = 4\nmlp = \"swiglu\"\n" + model +
         "\n[parallelism]\ntp = 4\n\n[training]\nglobal_batch = 8\n";
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: head_dim is read and round-trips through show_config") {
  const ScenarioSpec a = parse_scenario(scenario("hidden = 2048\nheads = 32\nkv_heads = 4\nhead_dim = 128\n"), "h.toml");
  CHECK(a.model.head_dim() == 128);
  CHECK(a.model.attention_width() == doctest::Approx(4096));
  const std::string shown = show_config(a);
  CHECK(shown.find("head_dim = 128\n") != std::string::npos);
  const ScenarioSpec b = parse_scenario(shown, "h.toml");
  CHECK(b.model.attention_head_dim == 128);
  CHECK(b.model.parameters() == a.model.parameters());
  // Without it the head is hidden / heads and show_config prints nothing new.
  const ScenarioSpec c = parse_scenario(scenario("hidden = 2048\nheads = 32\nkv_heads = 4\n"), "h.toml");
  CHECK(c.model.head_dim() == 64);
  CHECK(show_config(c).find("head_dim") == std::string::npos);
  CHECK(a.model.parameters() > c.model.parameters());
}

TEST_CASE("scenarios::parse_scenario: hidden need not divide by heads when head_dim is given") {
  // A residual width that no head count of the model divides (hidden 2900, 64 heads of 64).
  const std::string odd = "hidden = 2900\nheads = 64\nkv_heads = 8\n";
  CHECK(error_of(scenario(odd)).find("not divisible by heads") != std::string::npos);
  CHECK(error_of(scenario(odd)).find("give the head size as head_dim") != std::string::npos);
  CHECK(error_of(scenario(odd + "head_dim = 64\n")) == "(no error)");
  CHECK(error_of(scenario("hidden = 2048\nheads = 32\nhead_dim = 0\n")).find("'head_dim' in [model]") != std::string::npos);
}
