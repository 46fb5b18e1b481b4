// [training] moe_grouped_gemm (workloads/model/sequential_experts.h): read, shown by --show-config
// only when false, and refused (exit 2, at the key) on a model without experts, beside
// te_op_fuser, or with a wrong type.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"
#include "scenario_test_util.h"

using namespace clustersim;

using clustersim::scenarios::testing::first_error;
using clustersim::scenarios::testing::line_of;
using clustersim::scenarios::testing::replaced;

namespace {

const std::string kMoe = R"(
[cluster]
node = "dgx-h100"
nodes = 1
[model]
preset = "mixtral-8x7b"
[parallelism]
tp = 1
pp = 1
dp = 8
ep = 2
[training]
global_batch = 8
micro_batch = 1
moe_grouped_gemm = false
)";

}  // namespace

TEST_CASE("scenarios::parse_scenario: moe_grouped_gemm is read, defaults to true and is shown only when false") {
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(kMoe, "<moe>");
  CHECK_FALSE(spec.training.moe_grouped_gemm);
  const std::string shown = scenarios::show_config(spec);
  CHECK(shown.find("moe_grouped_gemm = false") != std::string::npos);
  CHECK_FALSE(scenarios::parse_scenario(shown, "shown.toml").training.moe_grouped_gemm);
  const scenarios::ScenarioSpec plain = scenarios::parse_scenario(replaced(kMoe, "moe_grouped_gemm = false\n", ""), "<plain>");
  CHECK(plain.training.moe_grouped_gemm);
  CHECK(scenarios::show_config(plain).find("moe_grouped_gemm") == std::string::npos);
  CHECK(scenarios::parse_scenario(replaced(kMoe, "= false", "= true"), "<true>").training.moe_grouped_gemm);
}

TEST_CASE("scenarios::parse_scenario: moe_grouped_gemm is refused at its key on a dense model, beside te_op_fuser, or as a string") {
  const std::string dense = replaced(replaced(kMoe, "preset = \"mixtral-8x7b\"", "preset = \"llama3-8b\""), "ep = 2\n", "");
  CHECK(first_error(dense) == std::to_string(line_of(dense, "moe_grouped_gemm")) +
                                  ": moe_grouped_gemm chooses how the routed experts run, but the model has no experts");
  const std::string fused = replaced(kMoe, "moe_grouped_gemm = false\n", "moe_grouped_gemm = false\nte_op_fuser = true\n");
  CHECK(first_error(fused) == std::to_string(line_of(fused, "moe_grouped_gemm")) +
                                  ": moe_grouped_gemm = false runs the experts one by one (SequentialMLP), but te_op_fuser = "
                                  "true fuses the grouped experts (TEGroupedMLP)");
  const std::string wrong = replaced(kMoe, "= false", "= \"no\"");
  const std::string error = first_error(wrong);
  CHECK(error.starts_with(std::to_string(line_of(wrong, "moe_grouped_gemm")) + ": "));
  CHECK(error.find("moe_grouped_gemm") != std::string::npos);
}
