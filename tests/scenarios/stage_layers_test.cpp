// parallelism.stage_layers: an explicit per-chunk layout (Megatron-Core's
// pipeline_model_parallel_layout as layer counts): what it loads into, and the loader's errors.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "workloads/specs.h"

using namespace clustersim;

namespace {

// gpt3-13b (40 layers) on 4 DGX A100 nodes, tp 8, pp 4.
std::string scenario(const std::string& parallel_extra) {
  return "name = \"layout\"\n[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 4\n[model]\npreset = \"gpt3-13b\"\n"
         "[parallelism]\ntp = 8\npp = 4\n" + parallel_extra +
         "[training]\nglobal_batch = 16\nmicro_batch = 1\nprecision = \"bf16\"\n";
}

std::string error_of(const std::string& text) {
  try {
    (void)scenarios::parse_scenario(text, "layout.toml");
  } catch (const scenarios::ScenarioError& e) {
    return e.format();
  }
  return "";
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: stage_layers lists every chunk's layers in model order") {
  // vp 2: chunk c of stage r is entry c * 4 + r; stage 0 = 3 + 5, stage 1 = 6 + 6, stage 3 = 5 + 4.
  const auto s = scenarios::parse_scenario(
      scenario("virtual_stages = 2\nstage_layers = [3, 6, 5, 5, 5, 6, 6, 4]\n"), "layout.toml");
  const workloads::ParallelSpec& p = s.parallel;
  REQUIRE(p.stage_layers.size() == 8);
  CHECK(p.uneven_stages());
  CHECK(p.layers_in_chunk(40, 0) == 3);
  CHECK(p.layers_in_chunk(40, 7) == 4);
  CHECK(p.layers_on_stage(40, 0) == 8);
  CHECK(p.layers_on_stage(40, 1) == 12);
  CHECK(p.layers_on_stage(40, 2) == 11);
  CHECK(p.layers_on_stage(40, 3) == 9);
  // A layout the first/last counts cannot express on pp 4: 9 + 12 + 10 + 9 (middle stages differ).
  const auto t = scenarios::parse_scenario(scenario("stage_layers = [9, 12, 10, 9]\n"), "layout.toml");
  CHECK(t.parallel.layers_on_stage(40, 1) == 12);
  CHECK(t.parallel.layers_on_stage(40, 2) == 10);
}

TEST_CASE("scenarios::parse_scenario: stage_layers errors name the key and the fix") {
  const std::string count = error_of(scenario("stage_layers = [10, 10, 20]\n"));
  CHECK(count.find("layout.toml:10:") != std::string::npos);  // the line of the key
  CHECK(count.find("stage_layers = [10, 10, 20]") != std::string::npos);
  CHECK(count.find("lists 3 model chunk(s), but pp * virtual_stages = 4 * 1 = 4") != std::string::npos);
  CHECK(count.find("one layer count per model chunk") != std::string::npos);
  const std::string sum = error_of(scenario("stage_layers = [10, 10, 10, 9]\n"));
  CHECK(sum.find("adds up to 39 layers, but the model has layers = 40") != std::string::npos);
  const std::string negative = error_of(scenario("stage_layers = [10, -1, 21, 10]\n"));
  CHECK(negative.find("stage_layers lists -1, not a layer count") != std::string::npos);
  const std::string type = error_of(scenario("stage_layers = 10\n"));
  CHECK(type.find("stage_layers") != std::string::npos);
  CHECK(type.find("array of layer counts") != std::string::npos);
  const std::string empty_stage = error_of(scenario("stage_layers = [20, 0, 10, 10]\n"));
  CHECK(empty_stage.find("stage 1 without a transformer layer") != std::string::npos);
  const std::string both = error_of(scenario("stage_layers = [10, 10, 10, 10]\nfirst_stage_layers = 10\n"));
  CHECK(both.find("different ways to split the layers") != std::string::npos);
}
