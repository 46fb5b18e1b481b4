// FP8 current scaling (the constant fp8_amax_bytes_per_element > 0, which the modern rows labelled
// FP8-CS set): each fp8 cast of a transformer linear's changing operand is preceded by Transformer
// Engine's amax kernel (fp8_amax_bytes_per_element over the same elements) and three more kernel
// launches (the amax zeroing, amax, scale: TE 2.8+ common/recipe/current_scaling.cu
// launch_amax_kernel launches zero_amax_kernel first), except a LayerNormLinear's forward input,
// whose amax the norm takes (two more launches: the at::zeros fill of its amax buffer, the scale);
// bf16 runs, NVFP4 runs and the GEMMs that stay bf16 are unchanged, and the
// default (0, delayed scaling) charges nothing.
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

ComputeModel model(std::string_view gpu_id, Precision p, bool current) {
  ComputeConstants c;
  if (current) c.set("fp8_amax_bytes_per_element", 2.0);
  return ComputeModel(gpu(gpu_id), topology::ClusterSpec{}, p, c);
}

OpShape llama8b_shape(Precision p) {
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 8192;
  sh.precision_bytes = activation_bytes(p);
  return sh;
}

}  // namespace

TEST_CASE("workloads::ComputeModel: fp8 current scaling adds the amax pass and three launches per cast") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  const auto layer = layer_ops(llama, llama8b_shape(Precision::Fp8));
  const ComputeModel delayed = model("h100-sxm5-80gb", Precision::Fp8, false);
  const ComputeModel current = model("h100-sxm5-80gb", Precision::Fp8, true);
  const ComputeConstants& c = current.constants();
  CHECK(delayed.constants().get("fp8_amax_bytes_per_element") == 0.0);  // delayed scaling by default
  const double stream = delayed.memory_bandwidth().value * c.get("hbm_stream_eff") * c.get("pointwise_mem_eff");
  const double launch = 3 * c.get("kernel_launch_us") * 1e-6;  // the amax zeroing, amax and scale kernels
  for (std::string_view name : {"attention_out_proj", "mlp_down"}) {
    CAPTURE(name);
    const OpCost& op = op_named(layer, name);
    REQUIRE(op.fp8_eligible);
    REQUIRE_FALSE(op.norm_fed);
    // Forward casts A[m, k], backward dY[m, n]: the amax kernel reads each element once more.
    const double fwd_amax = double(op.m) * op.k * c.get("fp8_amax_bytes_per_element") / stream;
    const double bwd_amax = double(op.m) * op.n * c.get("fp8_amax_bytes_per_element") / stream;
    CHECK(current.op_time(op, Pass::Forward).seconds() - delayed.op_time(op, Pass::Forward).seconds() ==
          doctest::Approx(fwd_amax + launch).epsilon(1e-6));
    CHECK(current.op_time(op, Pass::Backward).seconds() - delayed.op_time(op, Pass::Backward).seconds() ==
          doctest::Approx(bwd_amax + launch).epsilon(1e-6));
    CHECK(current.launches(op, Pass::Forward) == delayed.launches(op, Pass::Forward) + 3);
  }
  // linear_qkv and linear_fc1 are LayerNormLinear modules: from Transformer Engine 2.8 the norm
  // kernel takes their input's amax (normalization.cpp FUSED_NORM_AMAX_FP8), so forward only the
  // fill of the amax buffer (quantizer.cpp create_unquantized_tensor_with_amax: at::zeros) and the
  // scale kernel are added, no bytes; their output gradient is cast as any other (amax pass).
  for (std::string_view name : {"qkv_proj", "mlp_gate"}) {
    CAPTURE(name);
    const OpCost& op = op_named(layer, name);
    REQUIRE(op.norm_fed);
    const double bwd_amax = double(op.m) * op.n * c.get("fp8_amax_bytes_per_element") / stream;
    CHECK(current.op_time(op, Pass::Forward).seconds() - delayed.op_time(op, Pass::Forward).seconds() ==
          doctest::Approx(launch * 2 / 3).epsilon(1e-6));
    CHECK(current.launches(op, Pass::Forward) == delayed.launches(op, Pass::Forward) + 2);
    CHECK(current.op_time(op, Pass::Backward).seconds() - delayed.op_time(op, Pass::Backward).seconds() ==
          doctest::Approx(bwd_amax + launch).epsilon(1e-6));
  }
  // Only a dense layer's fc1 and qkv are norm-fed: fc2, the out projection and the up half are not.
  for (std::string_view name : {"attention_out_proj", "mlp_up", "mlp_down"}) CHECK_FALSE(op_named(layer, name).norm_fed);
  // The attention core and the (bf16) logits have no cast.
  const auto head = head_ops(llama, llama8b_shape(Precision::Fp8));
  for (const OpCost* op : {&op_named(layer, "flash_attention"), &op_named(head, "logits")})
    CHECK(current.op_time(*op, Pass::Forward) == delayed.op_time(*op, Pass::Forward));
}

TEST_CASE("workloads::ComputeModel: fp8 current scaling leaves bf16 and nvfp4 runs alone") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  for (Precision p : {Precision::Bf16, Precision::Nvfp4}) {
    const char* id = p == Precision::Nvfp4 ? "b200" : "h100-sxm5-80gb";
    const auto layer = layer_ops(llama, llama8b_shape(p));
    const OpCost& qkv = op_named(layer, "qkv_proj");
    for (Pass pass : {Pass::Forward, Pass::Backward})
      CHECK(model(id, p, true).op_time(qkv, pass) == model(id, p, false).op_time(qkv, pass));
  }
}
