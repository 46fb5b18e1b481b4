// libFuzzer target: `--set section.key=value` overrides (one per input line, at most 8) applied to
// a valid scenario. Seeds: fuzz/seeds/set.
#include "fuzz/fuzz_util.h"
#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"

namespace {

// A small valid scenario (one DGX A100, GPT-3 1.3B) for the overrides to change.
constexpr const char* kBase = R"(name = "fuzz base"
[cluster]
node = "dgx-a100-80gb"
nodes = 1
[model]
preset = "gpt3-1.3b"
[parallelism]
tp = 2
pp = 1
dp = 4
[training]
global_batch = 64
micro_batch = 4
precision = "bf16"
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto overrides = clustersim::fuzz::lines_of(clustersim::fuzz::as_text(data, size), 8);
  try {
    const auto spec = clustersim::scenarios::parse_scenario(kBase, "base.toml", overrides);
    (void)clustersim::scenarios::show_config(spec);
  } catch (const clustersim::scenarios::ScenarioError& e) {
    (void)e.format();
  }
  return 0;
}
