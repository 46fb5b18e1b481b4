// Transformer Engine's GroupedLinear quantizes its experts' rows with one split_quantize per pass
// (the input forward, grad_output backward). Under delayed scaling that is one fused kernel over
// all local experts; under FP8 current scaling and MXFP8 each expert's quantizer runs apart
// (csrc/extensions/cast.cpp multi_tensor_quantize_impl), so the cast's kernels, their launch gaps
// and their host launches scale with the local experts. NVFP4, dense linears and bf16 do not move.
#include <doctest/doctest.h>

#include <vector>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {

// FP8 on H100 under delayed scaling (the constants' default), current scaling (the amax pass of
// the FP8-CS rows) or MXFP8 (block scales, as the MXFP8 rows' scenarios set them).
enum class Recipe { Delayed, Current, Mxfp8 };

ComputeModel model(std::string_view gpu_id, Precision p, Recipe r = Recipe::Delayed) {
  ComputeConstants c;
  if (r == Recipe::Current) c.apply({{"fp8_amax_bytes_per_element", 2.0}});
  if (r == Recipe::Mxfp8) c.apply({{"fp8_block_scale_bytes_per_element", 0.03125}});
  return ComputeModel(gpu(gpu_id), topology::ClusterSpec{}, p, c);
}

// Qwen3-30B-A3B's MoE layer over ep 16: 8 local experts.
std::vector<OpCost> qwen3_layer(Precision p) {
  OpShape sh = shape_with_ep(16);
  sh.precision_bytes = activation_bytes(p);
  sh.quantized_experts = topology::quantized_linears(p);
  return layer_ops(qwen3_30b_moe_model(), sh, true);
}

// The kernels an op runs in a pass (ComputeModel::kernels, as `run --explain` shows them).
int kernels_of(const ComputeModel& cm, const OpCost& op, Pass pass) { return cm.op_time_parts(op, pass).kernels; }

// The same op as a single GEMM's module would cast it: not a grouped expert GEMM.
OpCost ungrouped(const OpCost& op) {
  OpCost u = op;
  u.name = "gemm";
  return u;
}

}  // namespace

TEST_CASE("workloads::ComputeModel::kernels: a GroupedLinear quantizes each local expert apart under current scaling and MXFP8") {
  const auto layer = qwen3_layer(Precision::Fp8);
  const OpCost& gate = op_named(layer, "expert_up_gate");
  const OpCost& up = op_named(layer, "expert_up");
  const OpCost& down = op_named(layer, "expert_down");
  REQUIRE(gate.batch == 8);
  const ComputeModel bf16 = model("h100-sxm5-80gb", Precision::Bf16);
  const ComputeModel delayed = model("h100-sxm5-80gb", Precision::Fp8, Recipe::Delayed);
  const ComputeModel current = model("h100-sxm5-80gb", Precision::Fp8, Recipe::Current);
  const ComputeModel mx = model("b200", Precision::Fp8, Recipe::Mxfp8);
  const ComputeModel mx_bf16 = model("b200", Precision::Bf16);
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    CAPTURE(pass == Pass::Forward);
    for (const OpCost* op : {&gate, &down}) {
      CAPTURE(op->name);
      // Delayed scaling: nvte_multi_cast_transpose, one kernel for all 8 experts.
      CHECK(kernels_of(delayed, *op, pass) == kernels_of(bf16, *op, pass) + 1);
      // Current scaling: the amax zeroing, amax, scale and cast for each of the 8 experts.
      CHECK(kernels_of(current, *op, pass) == kernels_of(bf16, *op, pass) + 4 * 8);
      // MXFP8: one quantize per expert.
      CHECK(kernels_of(mx, *op, pass) == kernels_of(mx_bf16, *op, pass) + 8);
    }
    // fc1's up half shares the gate half's quantize in every recipe.
    CHECK(kernels_of(current, up, pass) == kernels_of(bf16, up, pass));
    CHECK(kernels_of(mx, up, pass) == kernels_of(mx_bf16, up, pass));
  }
  // A dense linear is one quantize whatever the recipe: current scaling's four kernels, three where
  // the norm took the amax (qkv forward: the amax buffer's fill, the scale, the cast).
  const OpCost& qkv = op_named(layer, "qkv_proj");
  CHECK(kernels_of(current, qkv, Pass::Forward) == kernels_of(bf16, qkv, Pass::Forward) + 3);
  CHECK(kernels_of(current, qkv, Pass::Backward) == kernels_of(bf16, qkv, Pass::Backward) + 4);
  CHECK(kernels_of(mx, qkv, Pass::Backward) == kernels_of(mx_bf16, qkv, Pass::Backward) + 1);
  // NVFP4 groups its experts' quantize (split_quantize_nvfp4_impl): one cast kernel.
  const auto fp4_layer = qwen3_layer(Precision::Nvfp4);
  const OpCost& fp4_down = op_named(fp4_layer, "expert_down");
  const ComputeModel fp4 = model("b200", Precision::Nvfp4);
  CHECK(kernels_of(fp4, fp4_down, Pass::Forward) == kernels_of(mx_bf16, fp4_down, Pass::Forward) + 1);
}

TEST_CASE("workloads::ComputeModel: each expert's quantize adds a launch gap and a host launch, not bytes") {
  const auto layer = qwen3_layer(Precision::Fp8);
  const OpCost& gate = op_named(layer, "expert_up_gate");
  const ComputeModel current = model("h100-sxm5-80gb", Precision::Fp8, Recipe::Current);
  const ComputeConstants& c = current.constants();
  // 8 experts' amax zeroing, amax, scale and cast against one module's: 28 kernels more.
  const double extra = 4.0 * (gate.batch - 1);
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    CAPTURE(pass == Pass::Forward);
    CHECK(current.op_time(gate, pass).seconds() - current.op_time(ungrouped(gate), pass).seconds() ==
          doctest::Approx(extra * c.get("kernel_launch_us") * 1e-6).epsilon(1e-6));
    CHECK(current.op_time_parts(gate, pass).cast_s == current.op_time_parts(ungrouped(gate), pass).cast_s);
  }
  // Host, eager: each kernel at host_launch_us, on top of the grouped GEMM's own per-expert work
  // (grouped_gemm_expert_host_us), which is the same in both recipes.
  const ComputeModel delayed = model("h100-sxm5-80gb", Precision::Fp8, Recipe::Delayed);
  CHECK(current.host_time(gate, Pass::Forward).seconds() - delayed.host_time(gate, Pass::Forward).seconds() ==
        doctest::Approx((4.0 * 8 - 1) * c.get("host_launch_us") * 1e-6).epsilon(1e-6));
  CHECK(current.launches(gate, Pass::Backward) - delayed.launches(gate, Pass::Backward) == doctest::Approx(4.0 * 8 - 1));
}

TEST_CASE("workloads::ComputeModel::fp8_scaling: the constants select delayed, current or block scaling, current first") {
  CHECK(model("h100-sxm5-80gb", Precision::Fp8, Recipe::Delayed).fp8_scaling() == Fp8Scaling::Delayed);
  CHECK(model("h100-sxm5-80gb", Precision::Fp8, Recipe::Current).fp8_scaling() == Fp8Scaling::Current);
  CHECK(model("b200", Precision::Fp8, Recipe::Mxfp8).fp8_scaling() == Fp8Scaling::Block);
  // Both set: the amax pass decides (a current-scaling cast is three kernels; the block-scale
  // bytes stay a format question for the gathers).
  ComputeConstants both;
  both.apply({{"fp8_amax_bytes_per_element", 2.0}, {"fp8_block_scale_bytes_per_element", 0.03125}});
  const ComputeModel cm(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, Precision::Fp8, both);
  CHECK(cm.fp8_scaling() == Fp8Scaling::Current);
  const auto layer = qwen3_layer(Precision::Fp8);
  const OpCost& down = op_named(layer, "expert_down");
  const ComputeModel current = model("h100-sxm5-80gb", Precision::Fp8, Recipe::Current);
  CHECK(kernels_of(cm, down, Pass::Backward) == kernels_of(current, down, Pass::Backward));
}
