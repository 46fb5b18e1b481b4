#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "tests/workloads/op_test_util.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/compute/measured_matmul.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {
ComputeModel model(std::string_view gpu_id, Precision p, topology::ClusterSpec cluster = {}) {
  return ComputeModel(gpu(gpu_id), cluster, p, ComputeConstants{});
}

// The GEMM epilogue's store through HBM (gemm_epilogue_store_share) takes the same time whatever
// the clock, SM share or main-loop efficiency, so a test of how GEMM time scales with one of those
// takes it out.
ComputeModel model_without_store(std::string_view gpu_id, Precision p, topology::ClusterSpec cluster = {}) {
  ComputeConstants c;
  c.set("gemm_epilogue_store_share", 0.0);
  return ComputeModel(gpu(gpu_id), cluster, p, c);
}

OpCost elementwise(double elements) {
  OpCost op;
  op.name = "gelu";
  op.kind = OpKind::Elementwise;
  op.fwd_flops = sim::Flops{8.0 * elements};
  op.bwd_flops = op.fwd_flops;
  op.fwd_bytes = sim::Bytes{4.0 * elements};
  op.bwd_bytes = sim::Bytes{6.0 * elements};
  return op;
}

double achieved_fraction(const ComputeModel& cm, const OpCost& op) {
  const double launch = cm.constants().get("kernel_launch_us") * 1e-6;
  const double s = cm.op_time(op, Pass::Forward).seconds() - launch;
  return op.fwd_flops.value / s / cm.datasheet_peak().value;
}
}  // namespace

TEST_CASE("workloads::ComputeModel: datasheet peaks are dense and follow the run precision") {
  CHECK(model("h100-sxm5-80gb", Precision::Bf16).datasheet_peak().value == doctest::Approx(989.4e12));
  CHECK(model("h100-sxm5-80gb", Precision::Fp8).datasheet_peak().value == doctest::Approx(1979e12));
  CHECK(model("a100-sxm4-80gb", Precision::Fp16).datasheet_peak().value == doctest::Approx(312e12));
  CHECK(model("a100-sxm4-80gb", Precision::Tf32).datasheet_peak().value == doctest::Approx(156e12));
  CHECK(model("a100-sxm4-80gb", Precision::Fp32).datasheet_peak().value == doctest::Approx(19.5e12));
  topology::ClusterSpec no_tf32;
  no_tf32.tf32 = false;
  CHECK(model("a100-sxm4-80gb", Precision::Tf32, no_tf32).datasheet_peak().value == doctest::Approx(19.5e12));
  // The sustained peak is the datasheet peak at the sustained clock.
  const ComputeModel a100 = model("a100-sxm4-80gb", Precision::Bf16);
  CHECK(a100.sustained_peak().value == doctest::Approx(312e12 * a100.constants().get("sustained_clock_ratio")));
}

TEST_CASE("workloads::ComputeModel: tf32 = false runs fp32 matmuls at the FP32 rate, ~8x slower on A100") {
  topology::ClusterSpec off;
  off.tf32 = false;
  const OpCost op = square_gemm(8192);
  const double on_s = model_without_store("a100-sxm4-80gb", Precision::Tf32).op_time(op, Pass::Forward).seconds();
  const double off_s = model_without_store("a100-sxm4-80gb", Precision::Tf32, off).op_time(op, Pass::Forward).seconds();
  CHECK(off_s / on_s == doctest::Approx(156.0 / 19.5).epsilon(0.01));
}

TEST_CASE("workloads::ComputeModel: a big bf16 GEMM reaches the published cuBLAS fraction of peak") {
  // A lone GEMM (a cuBLAS benchmark) sustains the HPL clock, 1305/1410 MHz on A100; the default
  // sustained_clock_ratio is the lower clock of a whole training step (fitted, see compute_constants.cpp).
  ComputeConstants lone;
  lone.set("sustained_clock_ratio", 0.925);
  const OpCost op = square_gemm(8192);
  const double a100 = achieved_fraction(ComputeModel(gpu("a100-sxm4-80gb"), {}, Precision::Bf16, lone), op);
  const double h100 = achieved_fraction(ComputeModel(gpu("h100-sxm5-80gb"), {}, Precision::Bf16, lone), op);
  MESSAGE("8192^3 bf16: A100 " << a100 * 100 << "% of 312 TF, H100 " << h100 * 100 << "% of 989 TF");
  CHECK(a100 > 0.70);
  CHECK(a100 < 0.80);
  CHECK(h100 > 0.60);
  CHECK(h100 < 0.75);
}

TEST_CASE("workloads::ComputeModel: each GPU's GEMMs keep its measured maximum achievable matmul FLOPS relative to A100's") {
  // measured_matmul.cpp: stas00/ml-engineering's MAMF table (bf16, best shape of a brute-force
  // search). At its best shape every measured GPU runs the same fraction of its measurement as the
  // A100 anchor does (the training clock is fitted on A100), through op_time as a training op would.
  ComputeConstants lone;
  lone.set("sustained_clock_ratio", 0.925);  // a lone GEMM's clock, as the cuBLAS test above
  const auto gemm_tflops = [&](std::string_view id, const ComputeConstants& c) {
    const MeasuredMatmul* mm = measured_matmul(id);
    REQUIRE(mm != nullptr);
    const OpCost op = gemm_op(mm->m, mm->n, mm->k);
    const ComputeModel cm(gpu(id), {}, Precision::Bf16, c);
    return achieved_fraction(cm, op) * cm.datasheet_peak().value / 1e12 / mm->tflops;
  };
  const double anchor = gemm_tflops("a100-sxm4-80gb", lone);
  MESSAGE("A100 SXM runs " << anchor << " of its measured 271.2 TFLOP/s");
  CHECK(anchor < 1.0);  // a model of typical kernels does not beat the best shape found
  for (const char* id : {"a100-pcie-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "b200", "b300", "gb200"}) {
    CAPTURE(id);
    CHECK(gemm_tflops(id, lone) == doctest::Approx(anchor).epsilon(0.01));
  }
  // Without it the shape model gives H100 SXM 7% more of its measurement than A100 (the
  // measurement: 86.9% of peak on A100 SXM, 80.3% on H100 SXM, where the model has both alike).
  ComputeConstants shape_only = lone;
  shape_only.set("measured_matmul_share", 0.0);
  const double h100_shape_only = gemm_tflops("h100-sxm5-80gb", shape_only) / gemm_tflops("a100-sxm4-80gb", shape_only);
  CHECK(h100_shape_only > 1.05);
  CHECK(measured_matmul_ratio(gpu("h100-sxm5-80gb"), ComputeConstants{}) == doctest::Approx(1.0 / h100_shape_only).epsilon(0.01));
  CHECK(measured_matmul_ratio(gpu("a100-sxm4-80gb"), ComputeConstants{}) == 1.0);
  CHECK(measured_matmul_ratio(gpu("rtx-4090"), ComputeConstants{}) == 1.0);  // not measured
}

TEST_CASE("workloads::measured_matmul_ratio: a GPU without a measurement takes its SM design's geometric mean") {
  const ComputeConstants c;
  const auto r = [&](const char* id) { return measured_matmul_ratio(gpu(id), c); };
  // GB300 (no MAMF row): the mean of the three measured Blackwell parts, each on its own entry.
  REQUIRE(measured_matmul("gb300") == nullptr);
  CHECK(r("gb300") == doctest::Approx(std::cbrt(r("b200") * r("b300") * r("gb200"))).epsilon(1e-12));
  CHECK(r("gb300") > 1.0);
  // Hopper parts without a row take the mean of H100 SXM, H200 and H800 (one row, three entries
  // whose HBM differs, so their ratios differ in the epilogue's store only): below 1.
  const double hopper = std::cbrt(r("h100-sxm5-80gb") * r("h200-sxm-141gb") * r("h800-sxm5-80gb"));
  CHECK(r("h100-pcie-80gb") == doctest::Approx(hopper).epsilon(1e-12));
  CHECK(r("h20") == doctest::Approx(hopper).epsilon(1e-12));
  CHECK(hopper == doctest::Approx(r("h100-sxm5-80gb")).epsilon(0.01));
  CHECK(hopper < 0.95);
  // A design nobody measured (Ada, Volta, CDNA) keeps 1, and so does every GPU at share 0.
  CHECK(r("l40s") == 1.0);
  CHECK(r("v100-sxm2-32gb") == 1.0);
  CHECK(r("mi300x") == 1.0);
  ComputeConstants off;
  off.set("measured_matmul_share", 0.0);
  CHECK(measured_matmul_ratio(gpu("gb300"), off) == 1.0);
}

TEST_CASE("workloads::ComputeModel: the roofline picks compute for a big GEMM and memory for an elementwise op") {
  const ComputeModel cm = model("a100-sxm4-80gb", Precision::Bf16);
  const double launch = cm.constants().get("kernel_launch_us") * 1e-6;
  const OpCost gemm = square_gemm(8192);
  const double gemm_s = cm.op_time(gemm, Pass::Forward).seconds() - launch;
  const double gemm_compute = gemm.fwd_flops.value / (cm.sustained_peak().value * cm.gemm_efficiency(gemm));
  CHECK(gemm_s == doctest::Approx(gemm_compute).epsilon(1e-6));
  CHECK(gemm.fwd_bytes.value / 2039e9 < gemm_s / 10);

  const OpCost ew = elementwise(64e6);
  const double ew_s = cm.op_time(ew, Pass::Forward).seconds() - launch;
  // 256 MB at 2039 GB/s x 0.90 (stream) x 0.85 (framework kernel).
  CHECK(ew_s == doctest::Approx(ew.fwd_bytes.value / (2039e9 * 0.90 * 0.85)).epsilon(1e-6));
  CHECK(ew.fwd_flops.value / (19.5e12 * cm.constants().get("sustained_clock_ratio")) < ew_s / 4);
}

TEST_CASE("workloads::ComputeModel: small and thin GEMMs are less efficient than large ones") {
  const ComputeModel cm = model("a100-sxm4-80gb", Precision::Bf16);
  const double e256 = cm.gemm_efficiency(256, 256, 256, 1);
  const double e1024 = cm.gemm_efficiency(1024, 1024, 1024, 1);
  const double e8192 = cm.gemm_efficiency(8192, 8192, 8192, 1);
  MESSAGE("efficiency 256^3 " << e256 << ", 1024^3 " << e1024 << ", 8192^3 " << e8192);
  CHECK(e256 < e1024);
  CHECK(e1024 < e8192);
  CHECK(e8192 <= 1.0);
  CHECK(e256 > 0.0);
  // A shallow reduction (attention scores, k = head_dim = 64) wastes the per-tile epilogue.
  CHECK(cm.gemm_efficiency(8192, 8192, 64, 1) < 0.6 * e8192);
  // Wave quantization: 109 tiles on 108 SMs need two waves.
  const double full_wave = cm.gemm_efficiency(128 * 12, 128 * 9, 4096, 1);   // 108 tiles
  const double extra_tile = cm.gemm_efficiency(128 * 109, 128, 4096, 1);     // 109 tiles
  CHECK(extra_tile < 0.6 * full_wave);
}

TEST_CASE("workloads::ComputeModel: fp8 speeds up only fp8-eligible linear layers") {
  const ModelSpec gpt = *find_model_preset("gpt3-175b");
  OpShape shape;
  shape.micro_batch = 1;
  shape.seq_len = gpt.seq_len;
  shape.tp = 8;
  shape.precision_bytes = activation_bytes(Precision::Fp8);
  const auto layer = layer_ops(gpt, shape);
  const auto head = head_ops(gpt, shape);
  const ComputeModel bf16 = model("h100-sxm5-80gb", Precision::Bf16);
  const ComputeModel fp8 = model("h100-sxm5-80gb", Precision::Fp8);
  ComputeConstants no_cast;
  no_cast.set("fp8_cast_bytes_per_element", 0.0);
  const ComputeModel fp8_gemm_only(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, Precision::Fp8, no_cast);
  for (std::string_view name : {"qkv_proj", "attention_out_proj", "mlp_fc1", "mlp_fc2"}) {
    const OpCost& op = op_named(layer, name);
    REQUIRE(op.fp8_eligible);
    for (Pass pass : {Pass::Forward, Pass::Backward}) {
      // The GEMM itself runs at the doubled FP8 rate, less fp8_gemm_eff_ratio ...
      const double gemm_speedup = bf16.op_time(op, pass).seconds() / fp8_gemm_only.op_time(op, pass).seconds();
      CHECK(gemm_speedup > 1.4);
      CHECK(gemm_speedup < 2.0);
      // ... and the cast kernel in front of it gives part of that back.
      const double speedup = bf16.op_time(op, pass).seconds() / fp8.op_time(op, pass).seconds();
      CHECK(speedup > 1.25);
      CHECK(speedup < gemm_speedup);
    }
  }
  for (const OpCost* op : {&op_named(layer, "flash_attention"), &op_named(layer, "gelu"),
                           &op_named(layer, "input_norm"), &op_named(head, "logits")}) {
    CHECK(fp8.op_time(*op, Pass::Forward) == bf16.op_time(*op, Pass::Forward));
    CHECK(fp8.op_time(*op, Pass::Backward) == bf16.op_time(*op, Pass::Backward));
  }
}

TEST_CASE("workloads::ComputeModel: a 60% TDP power cap slows compute-bound ops by the curve, not memory-bound ones") {
  topology::ClusterSpec capped;
  capped.power_limit_w = 0.6 * 400.0;
  const ComputeModel full = model_without_store("a100-sxm4-80gb", Precision::Bf16);
  const ComputeModel cap = model_without_store("a100-sxm4-80gb", Precision::Bf16, capped);
  const double r = power_limited_clock_ratio(0.6, 0.42, 1.0);  // ((0.6 - 0.42) / 0.58)^(1/3)
  CHECK(r == doctest::Approx(std::cbrt(0.18 / 0.58)));
  CHECK(cap.sustained_peak().value == doctest::Approx(full.sustained_peak().value * r));

  const double launch = full.constants().get("kernel_launch_us") * 1e-6;
  const OpCost gemm = square_gemm(8192);
  const double slow = (cap.op_time(gemm, Pass::Forward).seconds() - launch) /
                      (full.op_time(gemm, Pass::Forward).seconds() - launch);
  CHECK(slow == doctest::Approx(1.0 / r).epsilon(1e-6));

  const OpCost ew = elementwise(64e6);
  CHECK(cap.op_time(ew, Pass::Forward) == full.op_time(ew, Pass::Forward));
  CHECK(cap.memory_bandwidth().value == full.memory_bandwidth().value);
}

TEST_CASE("workloads::ComputeModel: the power curve fits the Zeus V100/A40 medians (rms 0.052)") {
  // hardware.md §4.3 medians: (power limit / max limit, relative throughput).
  const std::array<std::pair<double, double>, 16> points = {{
      {100 / 250.0, 0.69}, {125 / 250.0, 0.82}, {150 / 250.0, 0.89}, {175 / 250.0, 0.93},
      {200 / 250.0, 0.96}, {225 / 250.0, 0.985}, {250 / 250.0, 1.0},
      {100 / 300.0, 0.34}, {125 / 300.0, 0.47}, {150 / 300.0, 0.71}, {175 / 300.0, 0.87},
      {200 / 300.0, 0.94}, {225 / 300.0, 0.98}, {250 / 300.0, 0.99}, {275 / 300.0, 0.995}, {1.0, 1.0},
  }};
  const double s = ComputeConstants{}.get("power_static_fraction");
  double sum = 0, worst = 0;
  for (const auto& [p, measured] : points) {
    // The Zeus workloads draw ~75% of the limit at full clock (fitted demand ratio 0.75).
    const double e = power_limited_clock_ratio(p, s, 0.75) - measured;
    sum += e * e;
    worst = std::max(worst, std::abs(e));
  }
  const double rms = std::sqrt(sum / points.size());
  MESSAGE("power curve fit: rms " << rms << ", max " << worst);
  CHECK(rms < 0.055);
  CHECK(worst < 0.15);
  // Monotone, and 1 at or above the demand.
  CHECK(power_limited_clock_ratio(0.5, s, 1.0) < power_limited_clock_ratio(0.7, s, 1.0));
  CHECK(power_limited_clock_ratio(1.0, s, 1.0) == 1.0);
}

TEST_CASE("workloads::ComputeModel: MIG 3g on A100 gets 3/7 of the MIG compute, half the bandwidth and the listed memory") {
  topology::ClusterSpec seven, three;
  seven.mig = "7g.80gb";
  three.mig = "3g.40gb";
  const ComputeModel whole = model("a100-sxm4-80gb", Precision::Bf16);
  const ComputeModel g7 = model("a100-sxm4-80gb", Precision::Bf16, seven);
  const ComputeModel g3 = model("a100-sxm4-80gb", Precision::Bf16, three);
  CHECK(g7.sm_fraction() == doctest::Approx(98.0 / 108.0));
  CHECK(g3.sustained_peak().value / g7.sustained_peak().value == doctest::Approx(3.0 / 7.0));
  CHECK(g3.sustained_peak().value / whole.sustained_peak().value == doctest::Approx(42.0 / 108.0));
  CHECK(g3.memory_bandwidth().value == doctest::Approx(2039e9 / 2.0));
  // nvidia-smi mig -lgip lists 39.25 GiB for 3g.40gb on an A100 80GB (the catalog's MIG table).
  CHECK(g3.memory_capacity().value == doctest::Approx(39.25 * 1073741824.0));
  CHECK(whole.memory_capacity().value == gpu("a100-sxm4-80gb").memory.value);
  // A GEMM big enough to fill the slice runs ~7/3 slower than on 7g.
  const OpCost op = square_gemm(8192);
  const double ratio = g3.op_time(op, Pass::Forward).seconds() / g7.op_time(op, Pass::Forward).seconds();
  CHECK(ratio == doctest::Approx(7.0 / 3.0).epsilon(0.03));
  // H100 profiles use the nvidia-smi SM counts.
  CHECK(topology::resolve_mig(gpu("h100-sxm5-80gb"), "3g.40gb").sms == 60);
  CHECK(topology::resolve_mig(gpu("h100-sxm5-80gb"), "1g.20gb").sms == 26);
  CHECK(topology::resolve_mig(gpu("h100-sxm5-80gb"), "1g.10gb").memory_slices == 1);
  CHECK_THROWS_AS(topology::resolve_mig(gpu("h100-sxm5-80gb"), "big"), std::invalid_argument);
}

TEST_CASE("workloads::ComputeModel: flash attention runs the causal half at flash efficiency, backward recomputes") {
  const ModelSpec gpt = *find_model_preset("gpt3-13b");
  OpShape shape;
  shape.seq_len = gpt.seq_len;
  const auto ops = layer_ops(gpt, shape);  // keep the ops alive: op_named returns a reference into them
  const OpCost& fa = op_named(ops, "flash_attention");
  const ComputeModel cm = model("a100-sxm4-80gb", Precision::Bf16);
  const double launch = cm.constants().get("kernel_launch_us") * 1e-6;
  const double fwd = cm.op_time(fa, Pass::Forward).seconds() - launch;
  CHECK(fwd == doctest::Approx(fa.fwd_flops.value * 0.5 / (cm.sustained_peak().value * cm.constants().get("flash_attention_eff"))).epsilon(1e-6));
  const double bwd = cm.op_time(fa, Pass::Backward).seconds() - 2 * launch;
  CHECK(bwd / fwd == doctest::Approx(2.5).epsilon(1e-6));
}

TEST_CASE("workloads::ComputeModel: the optimizer step is memory-bound over the local parameters") {
  const ComputeModel cm = model("a100-sxm4-80gb", Precision::Bf16);
  const double params = 1e9;
  const double s = cm.optimizer_step_time(params, Optimizer::Adam, true).seconds();
  CHECK(s == doctest::Approx(30e9 / (2039e9 * 0.90) + 2e-6).epsilon(1e-6));
  CHECK(cm.optimizer_step_time(params, Optimizer::Sgd, false) < cm.optimizer_step_time(params, Optimizer::Adam, false));
  CHECK(cm.optimizer_step_time(0, Optimizer::Adam, true) == sim::SimTime::zero());
}

TEST_CASE("workloads::ComputeModel: a per-parameter optimizer loop streams each op's operands at the pointwise rate") {
  const ComputeModel cm = model("h100-sxm5-80gb", Precision::Bf16);
  const double params = 1e9;
  const double launch = 2e-6;
  const double pointwise_bw = 3350e9 * 0.90 * 0.85;  // hbm_stream_eff x pointwise_mem_eff
  // Composer DecoupledAdamW.adamw: exp_avg 8 + 12, exp_avg_sq 8 + 12, sqrt / c + eps 3 x 8,
  // addcdiv_ 16 = 80 B; the weight-decay multiply adds 8.
  const double no_decay =
      cm.optimizer_step_time(params, Optimizer::Adam, true, OptimizerKernels::PerParameter, false).seconds();
  CHECK(no_decay == doctest::Approx(80e9 / pointwise_bw + launch).epsilon(1e-6));
  const double decay =
      cm.optimizer_step_time(params, Optimizer::Adam, true, OptimizerKernels::PerParameter, true).seconds();
  CHECK(decay == doctest::Approx(88e9 / pointwise_bw + launch).epsilon(1e-6));
  // The fused kernel ignores weight decay and stays at 30 B per parameter.
  const double fused = cm.optimizer_step_time(params, Optimizer::Adam, true).seconds();
  CHECK(fused == doctest::Approx(30e9 / (3350e9 * 0.90) + launch).epsilon(1e-6));
  CHECK(cm.optimizer_step_time(params, Optimizer::Adam, true, OptimizerKernels::Fused, false).seconds() == fused);
  CHECK(no_decay > 3.0 * fused);
  // DecoupledSGDW.sgdw: momentum 8 + 12, update 12.
  CHECK(ComputeModel::per_parameter_optimizer_bytes(Optimizer::SgdMomentum, false) == 32.0);
  CHECK(ComputeModel::per_parameter_optimizer_bytes(Optimizer::Sgd, true) == 20.0);
}

TEST_CASE("workloads::ComputeConstants: every constant is named, described and range-checked") {
  ComputeConstants c;
  CHECK(ComputeConstants::names().size() >= 10);
  for (std::string_view name : ComputeConstants::names()) {
    CHECK_FALSE(c.describe(name).empty());
    const auto [lo, hi] = c.range(name);
    CHECK(c.get(name) >= lo);
    CHECK(c.get(name) <= hi);
  }
  CHECK_THROWS_AS(c.get("gemm_eff"), std::invalid_argument);
  CHECK_THROWS_AS(c.set("gemm_efficiency_max", 0.5), std::invalid_argument);
  CHECK_THROWS_AS(c.set("gemm_eff_max", 1.5), std::invalid_argument);
  CHECK_THROWS_AS(c.set("gemm_eff_max", std::nan("")), std::invalid_argument);
  c.apply({{"gemm_eff_max", 0.7}, {"kernel_launch_us", 5.0}});
  CHECK(c.get("gemm_eff_max") == 0.7);
  CHECK(c.get("kernel_launch_us") == 5.0);
  CHECK_THROWS_AS(c.apply({{"no_such_constant", 1.0}}), std::invalid_argument);
  // An override changes the model.
  const OpCost op = square_gemm(4096);
  const ComputeModel base = model_without_store("a100-sxm4-80gb", Precision::Bf16);
  ComputeConstants slower;
  slower.set("gemm_epilogue_store_share", 0.0);
  slower.set("gemm_eff_max", 0.41);
  const ComputeModel half(gpu("a100-sxm4-80gb"), topology::ClusterSpec{}, Precision::Bf16, slower);
  const double launch = 2e-6;
  CHECK((half.op_time(op, Pass::Forward).seconds() - launch) /
            (base.op_time(op, Pass::Forward).seconds() - launch) ==
        doctest::Approx(2.0).epsilon(1e-6));
}

// --- per-generation mechanisms (issue #10 item 5) ---------------------------------------------

TEST_CASE("workloads::ComputeModel: the sustained clock is a fraction of the clock each GPU's tensor peak is quoted at") {
  const double r = ComputeConstants{}.get("sustained_clock_ratio");
  // A100 quotes 312 TF at its 1410 MHz boost clock; H100 SXM quotes 989 TF at 1830 MHz, below its
  // 1980 MHz boost (hardware.md §1.2: 989.4 TF / (132 SMs x 4096 FLOP/clk) = 1.83 GHz).
  CHECK(model("a100-sxm4-80gb", Precision::Bf16).sustained_clock_mhz() == doctest::Approx(1410 * r));
  CHECK(model("h100-sxm5-80gb", Precision::Bf16).sustained_clock_mhz() == doctest::Approx(1830 * r));
  // Each catalog tensor clock reproduces the datasheet peak from the SM count: H100 SXM 4096 dense
  // bf16 FLOP per clock per SM, A100 2048.
  const auto& h100 = gpu("h100-sxm5-80gb");
  CHECK(h100.sms * 4096.0 * h100.tensor_clock_mhz * 1e6 == doctest::Approx(h100.bf16.value).epsilon(0.002));
  const auto& a100 = gpu("a100-sxm4-80gb");
  CHECK(a100.sms * 2048.0 * a100.tensor_clock_mhz * 1e6 == doctest::Approx(a100.bf16.value).epsilon(0.002));
  const auto& h100_pcie = gpu("h100-pcie-80gb");
  CHECK(h100_pcie.sms * 4096.0 * h100_pcie.tensor_clock_mhz * 1e6 == doctest::Approx(h100_pcie.bf16.value).epsilon(0.002));
}

TEST_CASE("workloads::ComputeModel: a Blackwell GPU holds the clock its TDP allows per tensor lane, from H100's on the same process") {
  const ComputeConstants c;
  const double r = c.get("sustained_clock_ratio");
  // B200: 148 SMs x 8192 FLOP/clk = 2.24x H100's tensor FLOP per clock at 1000 / 700 W, so with
  // dynamic power ~ lanes x f^3 it holds 1830 x cbrt(1.4286 / 2.2424) = 1574 MHz, 0.848 of the
  // 1856 MHz its 2250 TF is quoted at (hand-derived from the datasheet figures).
  CHECK(power_density_clock_ratio(gpu("b200"), c) == doctest::Approx(0.848).epsilon(0.003));
  CHECK(model("b200", Precision::Bf16).sustained_clock_mhz() == doctest::Approx(1574.4 * r).epsilon(0.002));
  // GB200 is the same die at 1200 W: it sustains cbrt(1.2) = 1.063x B200's clock, not the 1.111x
  // of the quoted peaks (2500 vs 2250 TF), so its sustained tensor rate is 6.3% above B200's.
  const ComputeModel b200 = model("b200", Precision::Bf16), gb200 = model("gb200", Precision::Bf16);
  CHECK(gb200.sustained_peak().value / b200.sustained_peak().value == doctest::Approx(std::cbrt(1.2)).epsilon(0.002));
  CHECK(gb200.sustained_peak().value / b200.sustained_peak().value < 2500.0 / 2250.0 - 0.04);
  // Hopper is the reference and Ampere the fit's anchor: unchanged.
  CHECK(power_density_clock_ratio(gpu("h100-sxm5-80gb"), c) == 1.0);
  CHECK(power_density_clock_ratio(gpu("a100-sxm4-80gb"), c) == 1.0);
  // Crediting Blackwell with 0.61x Hopper's energy per FLOP lets B200 hold sustained_clock_ratio
  // of its quoted clock; no GPU runs above the clock its peak is quoted at, so the ratio stops at
  // 1 / sustained_clock_ratio.
  ComputeConstants efficient;
  efficient.set("lane_energy_ratio_sm100", 0.61);
  CHECK(power_density_clock_ratio(gpu("b200"), efficient) == doctest::Approx(1.0).epsilon(0.003));
  efficient.set("lane_energy_ratio_sm100", 0.3);
  CHECK(power_density_clock_ratio(gpu("b200"), efficient) == doctest::Approx(1.0 / r));
  CHECK(model("b200", Precision::Bf16, {}).sustained_clock_mhz() <= gpu("b200").tensor_clock_mhz);
}

TEST_CASE("workloads::ComputeModel: a V100 run at a higher power limit holds the clock the SXM2's 300 W allows x cbrt(TDP ratio)") {
  const ComputeConstants c;
  const double r = c.get("sustained_clock_ratio");
  // The SXM2 (300 W) is Volta's reference: unchanged.
  CHECK(power_density_clock_ratio(gpu("v100-sxm2-32gb"), c) == 1.0);
  CHECK(model("v100-sxm2-32gb", Precision::Fp16).sustained_clock_mhz() == doctest::Approx(1530 * r));
  // The same GV100 die at 350 W (DGX-2) and 450 W (DGX-2H): 1530 x cbrt(350/300) = 1610 MHz and
  // 1530 x cbrt(1.5) = 1751 MHz before sustained_clock_ratio (hand-derived), i.e. 1348 and 1466 MHz
  // at the default 0.837 instead of 1281.
  CHECK(model("v100-sxm3-32gb", Precision::Fp16).sustained_clock_mhz() == doctest::Approx(1610.6 * r).epsilon(0.001));
  CHECK(model("v100-sxm3-32gb-h", Precision::Fp16).sustained_clock_mhz() == doctest::Approx(1751.4 * r).epsilon(0.001));
  // The DGX-2H part's sustained tensor rate per the 300 W part's: the clock ratio, cbrt(1.5) =
  // 1.145, not the 130/125 = 1.04 of the quoted peaks.
  const ComputeModel sxm2 = model("v100-sxm2-32gb", Precision::Fp16), h = model("v100-sxm3-32gb-h", Precision::Fp16);
  CHECK(h.sustained_peak().value / sxm2.sustained_peak().value == doctest::Approx(std::cbrt(1.5)).epsilon(0.002));
  // Capped at the quoted clock: with sustained_clock_ratio 0.95 the 450 W part runs at 1591 MHz.
  ComputeConstants hot;
  hot.set("sustained_clock_ratio", 0.95);
  CHECK(ComputeModel(gpu("v100-sxm3-32gb-h"), {}, Precision::Fp16, hot).sustained_clock_mhz() == doctest::Approx(1591));
}

TEST_CASE("workloads::ComputeModel: wave quantization follows each GPU's SM count") {
  // 132 tiles of 128x128 fill one wave on H100's 132 SMs but need two on A100's 108; 148 fill
  // B200's 148 SMs and spill on H100.
  const ComputeModel a100 = model("a100-sxm4-80gb", Precision::Bf16);
  const ComputeModel h100 = model("h100-sxm5-80gb", Precision::Bf16);
  const ComputeModel b200 = model("b200", Precision::Bf16);
  const double m132 = 128 * 12, n132 = 128 * 11;  // 132 tiles
  const double m148 = 128 * 4, n148 = 128 * 37;   // 148 tiles
  CHECK(h100.gemm_efficiency(m132, n132, 4096, 1) > 1.15 * a100.gemm_efficiency(m132, n132, 4096, 1));
  CHECK(b200.gemm_efficiency(m148, n148, 4096, 1) > 1.15 * h100.gemm_efficiency(m148, n148, 4096, 1));
  // Full waves on their own GPU reach the same efficiency once the epilogue store (which depends
  // on each GPU's tensor rate over its HBM bandwidth, tested below) and each GPU's measured matmul
  // ratio (measured_matmul.h, tested below) are taken out.
  ComputeConstants no_store;
  no_store.set("gemm_epilogue_store_share", 0.0);
  no_store.set("measured_matmul_share", 0.0);
  const ComputeModel h100_ns(gpu("h100-sxm5-80gb"), {}, Precision::Bf16, no_store);
  const ComputeModel b200_ns(gpu("b200"), {}, Precision::Bf16, no_store);
  CHECK(h100_ns.gemm_efficiency(m132, n132, 4096, 1) == doctest::Approx(b200_ns.gemm_efficiency(m148, n148, 4096, 1)));
}

TEST_CASE("workloads::ComputeModel: a wave's epilogue store costs reduction depth by tensor rate over HBM bandwidth") {
  // tilelang's H800 SXM (H100 die, 3.35 TB/s) bf16 benchmark, M = N = 8192: 386 TFLOP/s at
  // K = 256 and 766 at K = 16384, a ratio of 0.50 that the per-tile fixed cost sets (the tiles and
  // waves are the same at every K). Without the store the model's gemm_k_half alone gives 0.80.
  const ComputeModel h100 = model("h100-sxm5-80gb", Precision::Bf16);
  const double ratio = h100.gemm_efficiency(8192, 8192, 256, 1) / h100.gemm_efficiency(8192, 8192, 16384, 1);
  CHECK(ratio == doctest::Approx(0.50).epsilon(0.08));
  // k_store = C bytes x rate x gemm_eff_max / (2 x HBM x hbm_stream_eff): 2 x 828 TF x 0.82 /
  // (2 x 3.015 TB/s) = 225 elements on H100 SXM at the sustained clock; A100 80GB's lower tensor
  // rate per byte of HBM gives about half (117).
  const ComputeModel a100 = model("a100-sxm4-80gb", Precision::Bf16);
  const double h100_k = h100.epilogue_store_k(h100.sustained_peak());
  const double a100_k = a100.epilogue_store_k(a100.sustained_peak());
  CHECK(h100_k == doctest::Approx(225).epsilon(0.02));
  CHECK(a100_k == doctest::Approx(117).epsilon(0.02));
  // An fp8 main loop twice as fast stores the same bf16 C tile: twice the depth.
  const ComputeModel h100_fp8 = model("h100-sxm5-80gb", Precision::Fp8);
  CHECK(h100_fp8.epilogue_store_k(h100_fp8.sustained_peak()) == doctest::Approx(2 * h100_k).epsilon(0.01));
  // The share scales it; 0 leaves gemm_k_half alone.
  ComputeConstants hidden;
  hidden.set("gemm_epilogue_store_share", 0.0);
  const ComputeModel h100_hidden(gpu("h100-sxm5-80gb"), {}, Precision::Bf16, hidden);
  CHECK(h100_hidden.epilogue_store_k(h100.sustained_peak()) == 0.0);
  CHECK(h100_hidden.gemm_efficiency(8192, 8192, 4096, 1) > 1.04 * h100.gemm_efficiency(8192, 8192, 4096, 1));
  // Blackwell drains the accumulator from Tensor Memory while the next tile's MMA runs: its own
  // share, 0 by default; at 1 it pays the store as Hopper does.
  const ComputeModel b200 = model("b200", Precision::Bf16);
  CHECK(b200.epilogue_store_k(b200.sustained_peak()) == 0.0);
  ComputeConstants serial;
  serial.set("gemm_epilogue_store_share_sm100", 1.0);
  const ComputeModel b200_serial(gpu("b200"), {}, Precision::Bf16, serial);
  CHECK(b200_serial.epilogue_store_k(b200.sustained_peak()) > 100.0);
}

TEST_CASE("workloads::ComputeModel: each generation runs its own attention kernel") {
  const ComputeModel a100 = model("a100-sxm4-80gb", Precision::Bf16);
  const ComputeModel h100 = model("h100-sxm5-80gb", Precision::Bf16);
  const ComputeModel b200 = model("b200", Precision::Bf16);
  const ComputeConstants c;
  CHECK(a100.attention_efficiency() == c.get("flash_attention_eff"));
  CHECK(model("rtx-4090", Precision::Bf16).attention_efficiency() == c.get("flash_attention_eff"));
  CHECK(h100.attention_efficiency() == c.get("flash_attention_eff_sm90"));
  CHECK(b200.attention_efficiency() == c.get("flash_attention_eff_sm100"));
  // FlashAttention-3 on Hopper uses more of the tensor cores than the Ampere-era kernels do;
  // Blackwell's unchanged exponential units and shared memory give back part of its doubled rate.
  CHECK(h100.attention_efficiency() > a100.attention_efficiency());
  CHECK(b200.attention_efficiency() < h100.attention_efficiency());
  const ModelSpec llama = *find_model_preset("llama3-8b");
  OpShape shape;
  shape.seq_len = llama.seq_len;
  const auto ops = layer_ops(llama, shape);
  const OpCost& fa = op_named(ops, "flash_attention");
  const double launch = h100.constants().get("kernel_launch_us") * 1e-6;
  const double fwd = h100.op_time(fa, Pass::Forward).seconds() - launch;
  CHECK(fwd == doctest::Approx(fa.fwd_flops.value * 0.5 / (h100.sustained_peak().value * c.get("flash_attention_eff_sm90"))).epsilon(1e-6));
}

TEST_CASE("workloads::ComputeModel: an Ampere-generation attention kernel on Hopper runs at its own efficiency") {
  const ComputeModel a100 = model("a100-sxm4-80gb", Precision::Bf16);
  const ComputeModel h100 = model("h100-sxm5-80gb", Precision::Bf16);
  const ComputeConstants c;
  // On Ampere it is the native kernel; on Hopper it lacks wgmma / TMA (FlashAttention-2 on H100).
  CHECK(a100.attention_efficiency(AttentionKernel::Fa2) == c.get("flash_attention_eff"));
  CHECK(h100.attention_efficiency(AttentionKernel::Fa2) == c.get("flash_attention_eff_fa2_sm90"));
  CHECK(h100.attention_efficiency(AttentionKernel::Fa3) == c.get("flash_attention_eff_sm90"));
  CHECK(h100.attention_efficiency(AttentionKernel::Fa2) < h100.attention_efficiency(AttentionKernel::Native));
  // The layer's flash op carries the model's kernel, and its time follows the efficiency.
  ModelSpec llama = *find_model_preset("llama3-8b");
  OpShape shape;
  shape.seq_len = llama.seq_len;
  const OpCost native = op_named(layer_ops(llama, shape), "flash_attention");
  llama.attention_kernel = AttentionKernel::Fa2;
  const OpCost fa2 = op_named(layer_ops(llama, shape), "flash_attention");
  CHECK(fa2.attention_kernel == AttentionKernel::Fa2);
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    const double ratio = h100.op_time_parts(fa2, pass).flops_s / h100.op_time_parts(native, pass).flops_s;
    CHECK(ratio == doctest::Approx(c.get("flash_attention_eff_sm90") / c.get("flash_attention_eff_fa2_sm90")).epsilon(1e-9));
  }
  CHECK(std::string(h100.op_time_parts(fa2, Pass::Forward).efficiency_constant) == "flash_attention_eff_fa2_sm90");
}

TEST_CASE("workloads::ComputeModel: the 2022 Triton FlashAttention keeps Ampere's rate per SM and clock on Hopper") {
  const ComputeModel a100 = model("a100-sxm4-80gb", Precision::Bf16);
  const ComputeModel h100 = model("h100-sxm5-80gb", Precision::Bf16);
  const ComputeConstants c;
  // On Ampere it is what flash_attention_eff was fitted on (llm-foundry's A100 rows).
  CHECK(a100.attention_efficiency(AttentionKernel::FlashAttnTriton) == c.get("flash_attention_eff"));
  // On Hopper: the same fraction of the mma.sync rate, half the dense wgmma rate per SM and clock.
  CHECK(h100.attention_efficiency(AttentionKernel::FlashAttnTriton) ==
        doctest::Approx(c.get("flash_attention_eff") * c.get("mma_sync_fraction_sm90")).epsilon(1e-12));
  CHECK(h100.attention_efficiency(AttentionKernel::FlashAttnTriton) < h100.attention_efficiency(AttentionKernel::Fa2));
  // Its absolute rate, per the constant's reading: A100 x SMs x clock (the sustained clock ratio is
  // the same), i.e. per SM and clock it is Ampere's.
  const double per_sm_clk_a100 = a100.sustained_peak().value * a100.attention_efficiency(AttentionKernel::FlashAttnTriton) /
                                 (a100.gpu().sms * a100.gpu().boost_clock_mhz);
  const double per_sm_clk_h100 = h100.sustained_peak().value * h100.attention_efficiency(AttentionKernel::FlashAttnTriton) /
                                 (h100.gpu().sms * h100.gpu().tensor_clock_mhz);
  CHECK(per_sm_clk_h100 == doctest::Approx(per_sm_clk_a100).epsilon(0.01));
  // The explain names both constants.
  ModelSpec mpt;
  mpt.layers = 2;
  mpt.hidden = 2048;
  mpt.heads = 16;
  mpt.seq_len = 2048;
  mpt.attention_kernel = AttentionKernel::FlashAttnTriton;
  OpShape shape;
  shape.seq_len = mpt.seq_len;
  const OpCost fa = op_named(layer_ops(mpt, shape), "flash_attention");
  CHECK(std::string(h100.op_time_parts(fa, Pass::Forward).efficiency_constant) == "flash_attention_eff x mma_sync_fraction_sm90");
  CHECK(std::string(a100.op_time_parts(fa, Pass::Forward).efficiency_constant) == "flash_attention_eff");
}

TEST_CASE("workloads::ComputeModel: an fp8 GEMM pays Transformer Engine's cast of its changing operand from HBM") {
  const OpCost op = square_gemm(8192);
  const ComputeModel fp8 = model("h100-sxm5-80gb", Precision::Fp8);
  ComputeConstants no_cast;
  no_cast.set("fp8_cast_bytes_per_element", 0.0);
  const ComputeModel free_cast(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, Precision::Fp8, no_cast);
  const double stream = 3350e9 * fp8.constants().get("hbm_stream_eff") * fp8.constants().get("pointwise_mem_eff");
  // Forward casts A[m,k] (8192^2 elements x 4 bytes), backward dY[m,n] (the same here): one kernel
  // each at the pointwise streaming rate.
  const double cast_s = 8192.0 * 8192.0 * 4.0 / stream;
  const double gap = fp8.constants().get("kernel_launch_us") * 1e-6;
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    const double extra = fp8.op_time(op, pass).seconds() - free_cast.op_time(op, pass).seconds();
    CHECK(extra == doctest::Approx(cast_s).epsilon(1e-3));
  }
  // With zero bytes the cast kernel still launches.
  const ComputeModel bf16 = model("h100-sxm5-80gb", Precision::Bf16);
  CHECK(free_cast.op_time(op, Pass::Forward).seconds() > gap);
  // bf16 runs and non-eligible ops pay nothing: the logits GEMM stays bf16 under fp8.
  OpCost logits = square_gemm(8192);
  logits.fp8_eligible = false;
  CHECK(fp8.op_time(logits, Pass::Forward) == bf16.op_time(logits, Pass::Forward));
}

TEST_CASE("workloads::ComputeModel: a pass of many small kernels is bound by the host issuing them") {
  const ComputeModel cm = model("h100-sxm5-80gb", Precision::Bf16);
  const double host_us = cm.constants().get("host_launch_us");
  REQUIRE(host_us > cm.constants().get("kernel_launch_us"));
  // 100 tiny elementwise kernels: each takes a launch gap on the GPU but host_launch_us on the CPU.
  const std::vector<OpCost> tiny(100, elementwise(1024));
  CHECK(cm.ops_time(tiny, Pass::Forward).seconds() == doctest::Approx(100 * host_us * 1e-6));
  CHECK(cm.ops_time(tiny, Pass::Forward) > cm.op_time(tiny[0], Pass::Forward) * 100);
  // Large GEMMs keep the GPU busy long enough for the host to run ahead: device time rules.
  const std::vector<OpCost> big(10, square_gemm(8192));
  CHECK(cm.ops_time(big, Pass::Forward) == cm.op_time(big[0], Pass::Forward) * 10);
  // Without host overhead the pass is the device sum.
  ComputeConstants no_host;
  no_host.set("host_launch_us", 0.0);
  const ComputeModel device_only(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, Precision::Bf16, no_host);
  CHECK(device_only.ops_time(tiny, Pass::Forward) == device_only.op_time(tiny[0], Pass::Forward) * 100);
}

TEST_CASE("workloads::ComputeModel: a collective's HBM traffic slows a memory-bound kernel by the bandwidth it takes") {
  // H100 SXM: 3.35 TB/s. An elementwise kernel of 256 MB streams at 3.35e12 x 0.90 x 0.85; with an
  // all-gather beside it moving 400 GB/s each way (2 HBM bytes per byte: 800 GB/s of HBM), at
  // (3.35e12 - 0.8e12) x 0.90 x 0.85.
  const ComputeModel cm = model("h100-sxm5-80gb", Precision::Bf16);
  const double launch = cm.constants().get("kernel_launch_us") * 1e-6;
  const OpCost ew = elementwise(64e6);
  const double bw = cm.memory_bandwidth().value;
  const double alone = cm.op_time(ew, Pass::Forward).seconds() - launch;
  const double beside = cm.op_time(ew, Pass::Forward, Contention{0.0, 0.8e12}).seconds() - launch;
  CHECK(alone == doctest::Approx(ew.fwd_bytes.value / (bw * 0.90 * 0.85)).epsilon(1e-6));
  CHECK(beside == doctest::Approx(ew.fwd_bytes.value / ((bw - 0.8e12) * 0.90 * 0.85)).epsilon(1e-6));
  CHECK(beside / alone == doctest::Approx(bw / (bw - 0.8e12)).epsilon(1e-6));
  // The floor: an op keeps min_hbm_share (0.1) of the bandwidth however much is taken.
  const double starved = cm.op_time(ew, Pass::Forward, Contention{0.0, 10 * bw}).seconds() - launch;
  CHECK(cm.constants().get("min_hbm_share") == 0.1);
  CHECK(starved == doctest::Approx(alone / 0.1).epsilon(1e-6));
  // A big compute-bound GEMM does not notice the same traffic (its roofline is the tensor cores).
  const OpCost gemm = square_gemm(8192);
  CHECK(cm.op_time(gemm, Pass::Forward, Contention{0.0, 0.8e12}).seconds() ==
        doctest::Approx(cm.op_time(gemm, Pass::Forward).seconds()).epsilon(1e-9));
  // Nothing beside it: exactly the op alone, forward and backward.
  CHECK(cm.op_time(gemm, Pass::Backward, Contention{}) == cm.op_time(gemm, Pass::Backward));
}

TEST_CASE("workloads::ComputeModel: SMs held by a collective leave a GEMM fewer SMs to run its tile waves on") {
  // 8192^3 on H100: 64 x 64 = 4096 tiles of 128 x 128, each SM running at the same rate. Alone:
  // ceil(4096 / 132) = 32 waves; with 24 of 132 SMs held (share 24/132), ceil(4096 / 108) = 38
  // waves: the GEMM takes 38/32 of its time (less than 132/108: its last wave fills better).
  const ComputeModel cm = model_without_store("h100-sxm5-80gb", Precision::Bf16);
  const double launch = cm.constants().get("kernel_launch_us") * 1e-6;
  const OpCost gemm = square_gemm(8192);
  const double alone = cm.op_time(gemm, Pass::Forward).seconds() - launch;
  const double held = cm.op_time(gemm, Pass::Forward, Contention{24.0 / 132, 0.0}).seconds() - launch;
  CHECK(held == doctest::Approx(alone * 38.0 / 32.0).epsilon(1e-6));
  CHECK(held < alone * 132.0 / 108.0);
}

TEST_CASE("workloads::ComputeModel: an eager micro-batch-1 layer is host-bound by its Transformer Engine modules, a graphed one is not") {
  // GPT-3 1.3B, one 1024-token sequence, tp 1, bf16, on a DGX B200 (x86 host): the forward's TE
  // modules are qkv (LayerNormLinear), the attention core (DotProductAttention), the output
  // projection and the MLP's fc1 and fc2.
  const ModelSpec small = *find_model_preset("gpt3-1.3b");
  OpShape shape;
  shape.seq_len = 1024;
  const auto ops = layer_ops(small, shape);
  const ComputeModel cm = model("b200", Precision::Bf16);
  const double te_us = cm.constants().get("te_module_host_us");
  REQUIRE(te_us > 0.0);
  double with_te = 0, device = 0;
  for (const OpCost& op : ops) {
    with_te += cm.host_time(op, Pass::Forward).seconds();
    device += cm.op_time(op, Pass::Forward).seconds();
  }
  ComputeConstants no_te_constants;
  no_te_constants.set("te_module_host_us", 0.0);
  const ComputeModel no_te(gpu("b200"), topology::ClusterSpec{}, Precision::Bf16, no_te_constants);
  double without_te = 0;
  for (const OpCost& op : ops) without_te += no_te.host_time(op, Pass::Forward).seconds();
  CHECK(with_te - without_te == doctest::Approx(5 * te_us * 1e-6));
  CHECK(cm.host_time(op_named(ops, "gelu"), Pass::Forward) == no_te.host_time(op_named(ops, "gelu"), Pass::Forward));
  CHECK(cm.host_time(op_named(ops, "mlp_fc2"), Pass::Forward).seconds() ==
        doctest::Approx(no_te.host_time(op_named(ops, "mlp_fc2"), Pass::Forward).seconds() + te_us * 1e-6));
  // The backward's per-module work is not charged.
  for (const OpCost& op : ops) CHECK(cm.host_time(op, Pass::Backward) == no_te.host_time(op, Pass::Backward));
  // Eager: the module work makes the forward host-bound, where kernel launches alone were not.
  CAPTURE(without_te);
  CAPTURE(device);
  CAPTURE(with_te);
  REQUIRE(without_te < device);
  REQUIRE(with_te > device);
  CHECK(cm.ops_time(ops, Pass::Forward).seconds() == doctest::Approx(with_te));
  CHECK(no_te.ops_time(ops, Pass::Forward).seconds() == doctest::Approx(device));
  // A full-iteration CUDA graph replays the kernels: device time, whatever the module cost.
  ComputeModel graphed = model("b200", Precision::Bf16);
  graphed.set_cuda_graphs(true);
  CHECK(graphed.ops_time(ops, Pass::Forward).seconds() == doctest::Approx(device));
  // A large layer hides the same host work behind its kernels (GPT-3 175B, tp 8, micro-batch 1 on
  // A100, the 2021 Megatron-LM runs): the forward is its device time.
  const ModelSpec gpt = *find_model_preset("gpt3-175b");
  OpShape big;
  big.seq_len = 2048;
  big.tp = 8;
  const auto big_ops = layer_ops(gpt, big);
  const ComputeModel a100 = model("a100-sxm4-80gb", Precision::Fp16);
  double big_device = 0;
  for (const OpCost& op : big_ops) big_device += a100.op_time(op, Pass::Forward).seconds();
  CHECK(a100.ops_time(big_ops, Pass::Forward).seconds() == doctest::Approx(big_device));
}

TEST_CASE("workloads::ComputeModel: a Grace host takes grace_host_ratio times as long for the same host work") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  OpShape shape;
  shape.seq_len = 4096;
  const auto ops = layer_ops(llama, shape);
  const ComputeModel x86 = model("b200", Precision::Bf16), grace = model("gb200", Precision::Bf16);
  CHECK_FALSE(grace_hosted(gpu("b200")));
  CHECK(grace_hosted(gpu("gb200")));
  CHECK(grace_hosted(gpu("gb300")));
  const double ratio = grace.constants().get("grace_host_ratio");
  REQUIRE(ratio > 1.0);
  for (std::string_view name : {"qkv_proj", "flash_attention", "swiglu"})
    for (Pass pass : {Pass::Forward, Pass::Backward})
      CHECK(grace.host_time(op_named(ops, name), pass).seconds() ==
            doctest::Approx(ratio * x86.host_time(op_named(ops, name), pass).seconds()));
}
