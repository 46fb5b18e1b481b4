// libFuzzer target: a sweep file's text ([grid], [[point]], base) through the sweep parser.
// Seeds: scenarios/library/sweeps and fuzz/seeds/sweep.
#include "fuzz/fuzz_util.h"
#include "scenarios/scenario_error.h"
#include "scenarios/sweep_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto sweep = clustersim::scenarios::parse_sweep(clustersim::fuzz::as_text(data, size), "fuzz-sweep.toml");
    for (const auto& p : sweep.points) (void)p.overrides();
  } catch (const clustersim::scenarios::ScenarioError& e) {
    (void)e.format();
  }
  return 0;
}
