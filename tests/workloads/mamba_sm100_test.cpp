// Mamba-2's own kernels on sm100 (mamba_kernels_sm100_tbps, compute/op_roofline.cpp): the SSD scan,
// causal conv1d and gated RMSNorm stream at no more than the H200's HBM rate on Blackwell, the
// layer's GEMMs, norm, residual and copies at the GPU's own; Hopper is untouched.
#include <doctest/doctest.h>

#include <string_view>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/model_presets.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {

ComputeModel model(std::string_view gpu_id, const ComputeConstants& c = {}) {
  return ComputeModel(gpu(gpu_id), topology::ClusterSpec{}, Precision::Bf16, c);
}

ComputeConstants cap_at(double tbps) {
  ComputeConstants c;
  c.set("mamba_kernels_sm100_tbps", tbps);
  return c;
}

// Nemotron 3 Nano's Mamba layer, one micro-batch of 4 x 8192 tokens (the B300 / GB300 rows).
std::vector<OpCost> nano_mamba_ops() {
  const ModelSpec* m = find_model_preset("nemotron-3-nano-30b-a3b");
  REQUIRE(m != nullptr);
  OpShape sh;
  sh.micro_batch = 4;
  sh.seq_len = 8192;
  return mamba_layer_ops(*m, sh);
}

// The op's streaming time at `bytes_per_s`, launch included, as op_roofline.cpp charges a
// memory-bound op: bytes / (rate x hbm_stream_eff, x pointwise_mem_eff unless the op is
// matmul-shaped as the scan is) + one kernel launch.
double streaming_seconds(const ComputeModel& cm, const OpCost& op, Pass pass, double bytes_per_s) {
  const auto& c = cm.constants();
  const double bytes = (pass == Pass::Forward ? op.fwd_bytes : op.bwd_bytes).value;
  const double eff = c.get("hbm_stream_eff") * (op.is_matmul() ? 1.0 : c.get("pointwise_mem_eff"));
  return bytes / (bytes_per_s * eff) + c.get("kernel_launch_us") * 1e-6;
}

}  // namespace

TEST_CASE("workloads::ComputeModel: on GB200 the SSD scan, conv1d and gated norm stream at 4.8 TB/s, not 8") {
  const auto ops = nano_mamba_ops();
  const ComputeModel cm = model("gb200");
  CHECK(cm.constants().get("mamba_kernels_sm100_tbps") == doctest::Approx(4.8));
  CHECK(cm.memory_bandwidth().value == doctest::Approx(8000e9));
  for (std::string_view name : {"mamba_conv1d", "mamba_gated_norm"}) {
    CAPTURE(name);
    const OpCost& op = op_named(ops, name);
    for (Pass pass : {Pass::Forward, Pass::Backward})
      CHECK(cm.op_time(op, pass).seconds() == doctest::Approx(streaming_seconds(cm, op, pass, 4.8e12)).epsilon(1e-6));
  }
  // The chunk-state kernel is memory-bound at Nano's shapes on GB200 (its FLOPs at mamba_scan_eff take less).
  const OpCost& scan = op_named(ops, "ssd_chunk_state");
  const double capped = streaming_seconds(cm, scan, Pass::Forward, 4.8e12);
  CHECK(cm.op_time(scan, Pass::Forward).seconds() == doctest::Approx(capped).epsilon(1e-6));
}

TEST_CASE("workloads::ComputeModel: the cap leaves a Mamba layer's GEMMs, norm, residual and copies at the GPU's own rate") {
  const auto ops = nano_mamba_ops();
  const ComputeModel capped = model("gb300");
  const ComputeModel uncapped = model("gb300", cap_at(100.0));
  for (std::string_view name : {"mamba_norm", "mamba_in_proj", "mamba_layout_copies", "mamba_out_proj", "mamba_residual"}) {
    CAPTURE(name);
    const OpCost& op = op_named(ops, name);
    for (Pass pass : {Pass::Forward, Pass::Backward})
      CHECK(capped.op_time(op, pass).seconds() == doctest::Approx(uncapped.op_time(op, pass).seconds()));
  }
  // The three Mamba kernels: 8 / 4.8 = 1.67x slower in their streaming part, so clearly slower.
  for (std::string_view name : {"ssd_chunk_state", "mamba_conv1d", "mamba_gated_norm"}) {
    CAPTURE(name);
    const OpCost& op = op_named(ops, name);
    CHECK(capped.op_time(op, Pass::Backward).seconds() > 1.5 * uncapped.op_time(op, Pass::Backward).seconds());
  }
}

TEST_CASE("workloads::ComputeModel: Hopper's Mamba kernels are not capped, and a cap above the HBM rate changes nothing") {
  const auto ops = nano_mamba_ops();
  for (std::string_view gpu_id : {"h100-sxm5-80gb", "h200-sxm-141gb"}) {
    CAPTURE(gpu_id);
    const ComputeModel low = model(gpu_id, cap_at(1.0));
    const ComputeModel high = model(gpu_id, cap_at(100.0));
    for (const OpCost& op : ops)
      CHECK(low.op_time(op, Pass::Backward).seconds() == doctest::Approx(high.op_time(op, Pass::Backward).seconds()));
  }
  const ComputeModel b200_at_hbm = model("b200", cap_at(8.0));
  const ComputeModel b200_off = model("b200", cap_at(100.0));
  for (const OpCost& op : ops)
    CHECK(b200_at_hbm.op_time(op, Pass::Forward).seconds() == doctest::Approx(b200_off.op_time(op, Pass::Forward).seconds()));
}

TEST_CASE("workloads::ComputeModel: with the cap a Mamba layer's non-GEMM time on GB200 is about the H200's, as issue 904 measured") {
  // state-spaces/mamba#904: a Mamba-2 model trains 1.51x faster on GB200 than on H200 while its
  // GEMMs run 2.44x faster, so the rest did not speed up. The capped kernels on GB200 take at
  // least as long as on H200 less the H200's FLOP-bound scan forward (see docs/validation.md).
  const auto ops = nano_mamba_ops();
  const ComputeModel gb200 = model("gb200");
  const ComputeModel h200 = model("h200-sxm-141gb");
  for (std::string_view name : {"mamba_conv1d", "mamba_gated_norm"}) {
    CAPTURE(name);
    const OpCost& op = op_named(ops, name);
    for (Pass pass : {Pass::Forward, Pass::Backward})
      CHECK(gb200.op_time(op, pass).seconds() == doctest::Approx(h200.op_time(op, pass).seconds()).epsilon(1e-6));
  }
}

TEST_CASE("workloads::ComputeModel::op_time_parts: a capped Mamba kernel's formula shows the capped rate and the op's own bytes") {
  const auto ops = nano_mamba_ops();
  const ComputeModel cm = model("gb200");
  for (std::string_view name : {"ssd_chunk_state", "mamba_conv1d", "mamba_gated_norm"}) {
    CAPTURE(name);
    const OpCost& op = op_named(ops, name);
    const OpTimeParts p = cm.op_time_parts(op, Pass::Forward);
    CHECK(p.hbm == doctest::Approx(4.8e12));
    CHECK(p.bytes == doctest::Approx(op.fwd_bytes.value));
  }
  // An uncapped op keeps the GPU's own bandwidth.
  CHECK(cm.op_time_parts(op_named(ops, "mamba_in_proj"), Pass::Forward).hbm == doctest::Approx(8000e9));
}
