// The fused attention kernel's softmax exponentials beside its tensor work
// (ComputeModel::softmax_exp_factor): a narrow head (GPT-OSS's 64) runs its FLOPs slower than the
// head-dim-128 kernels the Hopper / Blackwell efficiencies were measured on (H100, B200); Blackwell
// Ultra's doubled exponential rate makes every head dim faster than on the B200; Ampere unchanged.
#include <doctest/doctest.h>

#include "tests/workloads/op_test_util.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {

ComputeModel on(std::string_view gpu_id, ComputeConstants c = {}) {
  return ComputeModel(gpu(gpu_id), topology::ClusterSpec{}, Precision::Bf16, c);
}

OpCost attention_of(std::string_view preset) {
  const ModelSpec m = *find_model_preset(preset);
  OpShape shape;
  shape.seq_len = m.seq_len;
  shape.micro_batch = 4;
  for (const OpCost& op : layer_ops(m, shape))
    if (op.name == "flash_attention") return op;
  FAIL("no flash_attention op");
  return {};
}

}  // namespace

TEST_CASE("workloads::ComputeModel: softmax exponentials make a head-dim-64 attention slower per FLOP") {
  const OpCost gpt_oss = attention_of("gpt-oss-120b");
  const OpCost llama = attention_of("llama3-8b");
  REQUIRE(gpt_oss.k == 64);
  REQUIRE(llama.k == 128);
  // H100: 4096 tensor FLOP/clk/SM and 16 exponentials/clk/SM. Forward r(128) = 4096 / (16 x 512)
  // = 0.5, r(64) = 1: (1 + 1) / (1 + 0.5); backward (10 d FLOPs a pair) r = 0.4 and 0.2.
  const ComputeModel h100 = on("h100-sxm5-80gb");
  CHECK(h100.softmax_exp_factor(gpt_oss, Pass::Forward) == doctest::Approx(2.0 / 1.5));
  CHECK(h100.softmax_exp_factor(gpt_oss, Pass::Backward) == doctest::Approx(1.4 / 1.2));
  CHECK(h100.softmax_exp_factor(llama, Pass::Forward) == doctest::Approx(1.0));
  // B200 / GB200: twice the tensor rate per SM, the same exponential units: r(128) = 1, r(64) = 2.
  CHECK(on("b200").softmax_exp_factor(gpt_oss, Pass::Forward) == doctest::Approx(1.5).epsilon(1e-3));
  CHECK(on("gb200").softmax_exp_factor(gpt_oss, Pass::Forward) == doctest::Approx(1.5).epsilon(1e-3));
  // B300 / GB300 retire 32 exponentials per clock per SM: r(128) = 0.5, r(64) = 1, against the
  // B200's r(128) = 1 that flash_attention_eff_sm100 was measured at (FlashAttention-4, B200):
  // head dim 128 runs 1.5 / 2 of the B200's time per FLOP forward, 1.2 / 1.4 backward, and head
  // dim 64 at the B200's head-dim-128 rate.
  CHECK(on("gb300").softmax_exp_factor(gpt_oss, Pass::Forward) == doctest::Approx(1.0).epsilon(1e-3));
  CHECK(on("b300").softmax_exp_factor(llama, Pass::Forward) == doctest::Approx(0.75).epsilon(1e-3));
  CHECK(on("gb300").softmax_exp_factor(llama, Pass::Forward) == doctest::Approx(0.75).epsilon(1e-3));
  CHECK(on("gb300").softmax_exp_factor(llama, Pass::Backward) == doctest::Approx(1.2 / 1.4).epsilon(1e-3));
  // The reference is the benchmark GPU of the generation, not the GPU's own rate: B200, GB200 and
  // H100 keep 1 at head dim 128.
  CHECK(on("gb200").softmax_exp_factor(llama, Pass::Forward) == doctest::Approx(1.0).epsilon(1e-3));
  CHECK(on("b200").softmax_exp_factor(llama, Pass::Backward) == doctest::Approx(1.0).epsilon(1e-3));
  // Ampere's flash_attention_eff is fitted on rows of mixed head dims: no factor there.
  CHECK(on("a100-sxm4-80gb").softmax_exp_factor(gpt_oss, Pass::Forward) == 1.0);
}

TEST_CASE("workloads::ComputeModel: the attention op's time carries the softmax factor, and 0 exponentials turn it off") {
  const OpCost op = attention_of("gpt-oss-120b");
  ComputeConstants c;
  c.set("kernel_launch_us", 0.0);
  ComputeConstants off = c;
  off.set("flash_exps_per_pair", 0.0);
  const ComputeModel with = on("gb200", c);
  const ComputeModel without = on("gb200", off);
  CHECK(without.softmax_exp_factor(op, Pass::Forward) == 1.0);
  for (const Pass pass : {Pass::Forward, Pass::Backward}) {
    const double t_with = with.op_time(op, pass).seconds();
    const double t_without = without.op_time(op, pass).seconds();
    CHECK(t_with == doctest::Approx(t_without * with.softmax_exp_factor(op, pass)).epsilon(1e-6));
    CHECK(t_with > 1.2 * t_without);
  }
}
