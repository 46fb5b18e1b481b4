// [model] glu_clamp and [training] te_op_fuser (workloads/model/glu_clamp.h): read, shown by
// --show-config, and refused (exit 2, at the key) on a model without experts.
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

namespace {

const std::string kMoe = R"(
[cluster]
node = "dgx-h100"
nodes = 1
[model]
layers = 2
hidden = 2880
heads = 64
kv_heads = 8
seq_len = 4096
vocab = 201088
ffn_hidden = 2880
experts = 8
experts_per_token = 2
mlp = "swiglu"
norm = "rmsnorm"
glu_clamp = true
[parallelism]
tp = 1
pp = 1
dp = 8
ep = 8
[training]
global_batch = 8
micro_batch = 1
te_op_fuser = true
)";

std::string without(std::string text, const std::string& cut) {
  text.erase(text.find(cut), cut.size());
  return text;
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: glu_clamp and te_op_fuser are read and shown") {
  const scenarios::ScenarioSpec spec = scenarios::parse_scenario(kMoe, "<moe>");
  CHECK(spec.model.glu_clamp);
  CHECK(spec.training.te_op_fuser);
  const std::string shown = scenarios::show_config(spec);
  CHECK(shown.find("glu_clamp = true") != std::string::npos);
  CHECK(shown.find("te_op_fuser = true") != std::string::npos);
  // Off by default, and then not shown.
  const scenarios::ScenarioSpec plain = scenarios::parse_scenario(without(without(kMoe, "glu_clamp = true\n"), "te_op_fuser = true\n"), "<plain>");
  CHECK_FALSE(plain.model.glu_clamp);
  CHECK_FALSE(plain.training.te_op_fuser);
  CHECK(scenarios::show_config(plain).find("glu_clamp") == std::string::npos);
  CHECK(scenarios::show_config(plain).find("te_op_fuser") == std::string::npos);
  // The GPT-OSS presets clamp; the shown config reads back the same.
  const scenarios::ScenarioSpec oss = scenarios::parse_scenario(
      "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"gpt-oss-20b\"\n[parallelism]\nep = 8\n[training]\nglobal_batch = 8\n", "oss.toml");
  CHECK(oss.model.glu_clamp);
  CHECK(scenarios::parse_scenario(scenarios::show_config(oss), "shown.toml").model.glu_clamp);
}

TEST_CASE("scenarios::parse_scenario: glu_clamp and te_op_fuser are refused at their key on a dense model or with a wrong type") {
  const std::string dense = without(without(kMoe, "experts = 8\nexperts_per_token = 2\n"), "ep = 8\n");
  const std::string no_fuser = without(dense, "te_op_fuser = true\n");
  const std::string clamp_error = first_error(no_fuser);
  CHECK(clamp_error == std::to_string(line_of(no_fuser, "glu_clamp")) +
                           ": glu_clamp describes a mixture of experts, but the model has no experts");
  const std::string no_clamp = without(dense, "glu_clamp = true\n");
  CHECK(first_error(no_clamp) == std::to_string(line_of(no_clamp, "te_op_fuser")) +
                                     ": te_op_fuser runs the routed experts' MLP, but the model has no experts");
  std::string wrong = kMoe;
  wrong.replace(wrong.find("te_op_fuser = true"), std::string("te_op_fuser = true").size(), "te_op_fuser = \"yes\"");
  CHECK(first_error(wrong).find("te_op_fuser") != std::string::npos);
}
