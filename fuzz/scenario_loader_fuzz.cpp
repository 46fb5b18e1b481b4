// libFuzzer target: a scenario file's text through the whole loader (TOML, keys, types, ranges,
// divisibility, presets, memory advice). Seeds: scenarios/library and tests/scenarios/bad.
#include "fuzz/fuzz_util.h"
#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto spec = clustersim::scenarios::parse_scenario(clustersim::fuzz::as_text(data, size), "fuzz.toml", {});
    (void)clustersim::scenarios::show_config(spec);
  } catch (const clustersim::scenarios::ScenarioError& e) {
    (void)e.format();
  }
  return 0;
}
