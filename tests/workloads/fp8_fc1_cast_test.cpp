// A gated MLP's gate and up projections are one fc1 module in Megatron-Core / Transformer Engine
// (linear_fc1 of width 2 x ffn; GroupedLinear for the routed experts): its input is quantized once
// per forward and its output gradient in one kernel per backward. The layer's ops carry the two
// halves apart ("mlp_gate" / "mlp_up", "expert_up_gate" / "expert_up"), so the up half
// (OpCost::second_fc1_half) pays no forward cast and no cast kernel; its half of the output
// gradient's bytes stays. Bf16 runs and the other linears are unchanged.
#include <doctest/doctest.h>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {

ComputeModel model(std::string_view gpu_id, Precision p) {
  return ComputeModel(gpu(gpu_id), topology::ClusterSpec{}, p, ComputeConstants{});
}

OpShape shape(Precision p, int ep) {
  OpShape sh = shape_with_ep(ep);
  sh.precision_bytes = activation_bytes(p);
  sh.quantized_experts = topology::quantized_linears(p);
  return sh;
}

// Seconds of one streamed cast over `elements` at `bytes_per_element`, at the pointwise rate.
double cast_s(const ComputeModel& cm, double elements, double bytes_per_element) {
  const ComputeConstants& c = cm.constants();
  return elements * bytes_per_element / (cm.memory_bandwidth().value * c.get("hbm_stream_eff") * c.get("pointwise_mem_eff"));
}

// The same op charged as if it were a linear of its own (the old count).
OpCost apart(const OpCost& op) {
  OpCost a = op;
  a.second_fc1_half = false;
  return a;
}

}  // namespace

TEST_CASE("workloads::layer_ops: only the up half of a gated fc1 is marked as sharing its module") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  const auto layer = layer_ops(llama, shape(Precision::Fp8, 1));
  for (const OpCost& op : layer) {
    CAPTURE(op.name);
    CHECK(op.second_fc1_half == (op.name == "mlp_up"));
  }
  const ModelSpec gpt = *find_model_preset("gpt3-175b");  // GELU: one fc1, nothing shared
  for (const OpCost& op : layer_ops(gpt, shape(Precision::Fp8, 1))) CHECK_FALSE(op.second_fc1_half);
}

TEST_CASE("workloads::ComputeModel: a gated fc1 casts its input once in fp8 and nvfp4") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  const double launch_s = model("h100-sxm5-80gb", Precision::Fp8).constants().get("kernel_launch_us") * 1e-6;
  const struct {
    const char* gpu;
    Precision p;
    const char* bytes_key;
  } cases[] = {{"h100-sxm5-80gb", Precision::Fp8, "fp8_cast_bytes_per_element"},
               {"b200", Precision::Nvfp4, "nvfp4_cast_bytes_per_element"}};
  for (const auto& c : cases) {
    CAPTURE(c.gpu);
    const ComputeModel cm = model(c.gpu, c.p);
    const auto layer = layer_ops(llama, shape(c.p, 1));
    const OpCost& gate = op_named(layer, "mlp_gate");
    const OpCost& up = op_named(layer, "mlp_up");
    const double per = cm.constants().get(c.bytes_key);
    // Forward: the gate half casts the whole input [m, h]; the up half no element and no kernel.
    CHECK(cm.op_time(apart(up), Pass::Forward).seconds() - cm.op_time(up, Pass::Forward).seconds() ==
          doctest::Approx(cast_s(cm, double(up.m) * up.k, per) + launch_s).epsilon(1e-6));
    CHECK(cm.op_time(apart(gate), Pass::Forward) == cm.op_time(gate, Pass::Forward));
    // Backward: each half's output gradient [m, ffn] is cast, in one kernel for both.
    CHECK(cm.op_time(apart(up), Pass::Backward).seconds() - cm.op_time(up, Pass::Backward).seconds() ==
          doctest::Approx(launch_s).epsilon(1e-6));
    for (Pass pass : {Pass::Forward, Pass::Backward}) {
      CHECK(cm.launches(up, pass) == model(c.gpu, Precision::Bf16).launches(up, pass));
      CHECK(cm.launches(gate, pass) == model(c.gpu, Precision::Bf16).launches(gate, pass) + 1);
    }
  }
}

TEST_CASE("workloads::ComputeModel: a gated GroupedLinear fc1 quantizes its experts' input once") {
  const ModelSpec moe = *find_model_preset("gpt-oss-120b");
  REQUIRE(moe.mlp != MlpKind::Gelu);
  const ComputeModel fp8 = model("h100-sxm5-80gb", Precision::Fp8);
  const ComputeModel bf16 = model("h100-sxm5-80gb", Precision::Bf16);
  const auto layer = layer_ops(moe, shape(Precision::Fp8, 8), true);
  const OpCost& gate = op_named(layer, "expert_up_gate");
  const OpCost& up = op_named(layer, "expert_up");
  CHECK_FALSE(gate.second_fc1_half);
  CHECK(up.second_fc1_half);
  const double elements = double(up.batch) * up.m * up.k;  // every local expert's input rows
  const double launch_s = fp8.constants().get("kernel_launch_us") * 1e-6;
  CHECK(fp8.op_time(apart(up), Pass::Forward).seconds() - fp8.op_time(up, Pass::Forward).seconds() ==
        doctest::Approx(cast_s(fp8, elements, fp8.constants().get("fp8_cast_bytes_per_element")) + launch_s).epsilon(1e-6));
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    CHECK(fp8.launches(up, pass) == bf16.launches(up, pass));
    CHECK(fp8.launches(gate, pass) == bf16.launches(gate, pass) + 1);
    CHECK(fp8.host_time(up, pass) == bf16.host_time(up, pass));
  }
  // The experts' second GEMM (fc2) still casts its own input.
  const OpCost& down = op_named(layer, "expert_down");
  CHECK(fp8.launches(down, Pass::Forward) == bf16.launches(down, Pass::Forward) + 1);
}

TEST_CASE("workloads::ComputeModel: per-tensor fp8 on Blackwell casts without the transposed copy, MXFP8 and Hopper keep it") {
  // Transformer Engine 2.x writes the column-wise (transposed) fp8 copy only where the GPU's FP8
  // GEMMs need TN layouts (quantizer.cpp: create_transpose = columnwise_usage &&
  // !non_tn_fp8_gemm_supported(); sm_100 on take any layout). MXFP8's scales run along one
  // dimension, so it writes both copies everywhere.
  const OpCost op = square_gemm(8192);
  const double elements = 8192.0 * 8192.0;
  const auto cast_of = [&](std::string_view gpu_id, Precision p, const ComputeConstants& c) {
    ComputeConstants free = c;
    free.set("fp8_cast_bytes_per_element", 0.0);
    free.set("nvfp4_cast_bytes_per_element", 0.0);
    const ComputeModel with(gpu(gpu_id), topology::ClusterSpec{}, p, c);
    const ComputeModel without(gpu(gpu_id), topology::ClusterSpec{}, p, free);
    return with.op_time(op, Pass::Forward).seconds() - without.op_time(op, Pass::Forward).seconds();
  };
  const ComputeConstants delayed;
  ComputeConstants block;
  block.set("fp8_block_scale_bytes_per_element", 1.0 / 32.0);
  const ComputeModel b200(gpu("b200"), topology::ClusterSpec{}, Precision::Fp8, delayed);
  const ComputeModel h100(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, Precision::Fp8, delayed);
  const double per = delayed.get("fp8_cast_bytes_per_element");
  CHECK(cast_of("b200", Precision::Fp8, delayed) == doctest::Approx(cast_s(b200, elements, per - 1.0)).epsilon(1e-6));
  CHECK(cast_of("gb300", Precision::Fp8, delayed) > 0);
  CHECK(cast_of("b200", Precision::Fp8, block) == doctest::Approx(cast_s(b200, elements, per)).epsilon(1e-6));
  CHECK(cast_of("h100-sxm5-80gb", Precision::Fp8, delayed) == doctest::Approx(cast_s(h100, elements, per)).epsilon(1e-6));
}
