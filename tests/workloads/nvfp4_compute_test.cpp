// NVFP4 on Blackwell (precision "nvfp4"): the catalog's dense FP4 rates, the GEMM rate and
// efficiency the compute model derives from them, and the Transformer Engine cast each NVFP4 GEMM
// pays (compute_model.h). The scenario-side refusal on GPUs without FP4 is an error golden
// (tests/scenarios/bad/nvfp4-on-h100.toml).
#include <doctest/doctest.h>

#include <string_view>

#include "tests/workloads/op_test_util.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/memory/memory_model.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {
ComputeModel model(std::string_view gpu_id, Precision p, const ComputeConstants& c = {}) {
  return ComputeModel(gpu(gpu_id), topology::ClusterSpec{}, p, c);
}

ComputeConstants free_casts() {
  ComputeConstants c;
  c.set("fp8_cast_bytes_per_element", 0.0);
  c.set("nvfp4_cast_bytes_per_element", 0.0);
  return c;
}
}  // namespace

TEST_CASE("topology::GpuSpec: dense FP4 peaks of the Blackwell GPUs, none before Blackwell") {
  CHECK(gpu("b200").peak(Precision::Nvfp4).value == doctest::Approx(9000e12));   // HGX B200 18 PF* / 2
  CHECK(gpu("gb200").peak(Precision::Nvfp4).value == doctest::Approx(10000e12)); // GB200 NVL72 20 PF* / 2
  CHECK(gpu("b300").peak(Precision::Nvfp4).value == doctest::Approx(13500e12));  // HGX B300 108 PF / 8
  CHECK(gpu("gb300").peak(Precision::Nvfp4).value == doctest::Approx(15000e12)); // GB300 NVL72 1,080 PF / 72
  CHECK(gpu("h100-sxm5-80gb").peak(Precision::Nvfp4).value == 0.0);
  CHECK(gpu("a100-sxm4-80gb").peak(Precision::Nvfp4).value == 0.0);
  CHECK(topology::to_string(Precision::Nvfp4) == "nvfp4");
}

TEST_CASE("workloads::ComputeModel: an nvfp4 GEMM runs at the FP4 rate, its fixed per-tile cost carried over from fp8") {
  const OpCost op = square_gemm(16384);
  const ComputeModel fp8 = model("b200", Precision::Fp8, free_casts());
  const ComputeModel fp4 = model("b200", Precision::Nvfp4, free_casts());
  CHECK(fp4.datasheet_peak().value == doctest::Approx(9000e12));
  // fp8_gemm_eff_ratio r = (1 + x) / (1 + 2x) with x = fixed / main-loop time of a bf16 tile;
  // NVFP4 halves the main loop again: (1 + x) / (1 + 4x). At r = 0.9: x = 1/8, 0.75.
  const double r = fp8.constants().get("fp8_gemm_eff_ratio");
  const double x = (1.0 - r) / (2.0 * r - 1.0);
  const double fp4_ratio = (1.0 + x) / (1.0 + 4.0 * x);
  CHECK(fp4_ratio == doctest::Approx(0.75).epsilon(1e-9));
  const double launch = fp8.constants().get("kernel_launch_us") * 1e-6;
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    const double speedup = (fp8.op_time(op, pass).seconds() - launch) / (fp4.op_time(op, pass).seconds() - launch);
    // twice the peak, at fp4_ratio / r of fp8's efficiency
    CHECK(speedup == doctest::Approx(2.0 * fp4_ratio / r).epsilon(0.01));
  }
  // Ops that are not transformer linears (attention core, logits, pointwise) stay bf16.
  OpCost logits = square_gemm(16384);
  logits.fp8_eligible = false;
  const ComputeModel bf16 = model("b200", Precision::Bf16, free_casts());
  CHECK(fp4.op_time(logits, Pass::Forward) == bf16.op_time(logits, Pass::Forward));
}

TEST_CASE("workloads::ComputeModel: NVFP4's main loop shrinks by the GPU's own FP4 / BF16 peak ratio (4 on B200, 6 on B300)") {
  const OpCost op = square_gemm(16384);
  const ComputeModel bf16 = model("b300", Precision::Bf16, free_casts());
  const ComputeModel fp4 = model("b300", Precision::Nvfp4, free_casts());
  const double r = bf16.constants().get("fp8_gemm_eff_ratio");
  const double x = (1.0 - r) / (2.0 * r - 1.0);
  const double q = 13500.0 / 2250.0;  // B300: FP4 is three times its FP8 rate, six times BF16
  const double launch = bf16.constants().get("kernel_launch_us") * 1e-6;
  const double speedup =
      (bf16.op_time(op, Pass::Forward).seconds() - launch) / (fp4.op_time(op, Pass::Forward).seconds() - launch);
  CHECK(speedup == doctest::Approx(q * (1.0 + x) / (1.0 + q * x)).epsilon(0.01));
  // Transformer Engine's GEMM profiling guide measures a B300 NVFP4 layer at 3.48x its BF16 time
  // (pre-quantized kernels, `validate --gemm`); a fixed q = 4 put the model at 4.47x.
  CHECK(speedup < 4.0);
  CHECK(speedup > 3.48 * 0.9);
}

TEST_CASE("workloads::ComputeModel: an MXFP8 GEMM runs at mxfp8_gemm_eff_ratio of the per-tensor fp8 kernel") {
  const OpCost op = square_gemm(16384);
  ComputeConstants block = free_casts();
  block.set("fp8_block_scale_bytes_per_element", 1.0 / 32.0);
  const ComputeModel tensorwise = model("b200", Precision::Fp8, free_casts());
  const ComputeModel mxfp8 = model("b200", Precision::Fp8, block);
  const double ratio = mxfp8.constants().get("mxfp8_gemm_eff_ratio");
  CHECK(ratio == doctest::Approx(6.812 / 7.161).epsilon(1e-3));  // the guide's B300 pre-quantized layer totals
  const double launch = mxfp8.constants().get("kernel_launch_us") * 1e-6;
  const double slower =
      (mxfp8.op_time(op, Pass::Forward).seconds() - launch) / (tensorwise.op_time(op, Pass::Forward).seconds() - launch);
  CHECK(slower == doctest::Approx(1.0 / ratio).epsilon(0.01));
}

TEST_CASE("workloads::ComputeModel: an nvfp4 GEMM pays its two-level-scaled cast from HBM, and stores its inputs in 4.5 bits") {
  const OpCost op = square_gemm(8192);
  const ComputeModel fp4 = model("gb200", Precision::Nvfp4);
  const ComputeModel free_cast = model("gb200", Precision::Nvfp4, free_casts());
  // amax read (2) + bf16 read (2) + row- and column-wise E2M1 with E4M3 block scales (2 x 9/16)
  CHECK(fp4.constants().get("nvfp4_cast_bytes_per_element") == doctest::Approx(5.125));
  const double stream = 8000e9 * fp4.constants().get("hbm_stream_eff") * fp4.constants().get("pointwise_mem_eff");
  const double cast_s = 8192.0 * 8192.0 * 5.125 / stream;
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    const double extra = fp4.op_time(op, pass).seconds() - free_cast.op_time(op, pass).seconds();
    CHECK(extra == doctest::Approx(cast_s).epsilon(1e-3));
  }
  CHECK(kNvfp4BytesPerElement == doctest::Approx(0.5625));
  CHECK(activation_bytes_for(Precision::Nvfp4).gemm_input == doctest::Approx(0.5625));
  CHECK(activation_bytes_for(Precision::Fp8).gemm_input == doctest::Approx(1.0));
}
