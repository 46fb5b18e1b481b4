#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using topology::Precision;

namespace {
const topology::GpuSpec& gpu(std::string_view id) {
  const topology::GpuSpec* g = topology::find_gpu(id);
  REQUIRE(g != nullptr);
  return *g;
}

ComputeModel model(std::string_view gpu_id, Precision p, topology::ClusterSpec cluster = {}) {
  return ComputeModel(gpu(gpu_id), cluster, p, ComputeConstants{});
}

OpCost square_gemm(double n) {
  OpCost op;
  op.name = "gemm";
  op.kind = OpKind::Gemm;
  op.m = op.n = op.k = static_cast<int>(n);
  op.batch = 1;
  op.fwd_flops = sim::Flops{2.0 * n * n * n};
  op.bwd_flops = op.fwd_flops * 2.0;
  op.fwd_bytes = sim::Bytes{2.0 * 3.0 * n * n};
  op.bwd_bytes = op.fwd_bytes * 2.0;
  op.fp8_eligible = true;
  return op;
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

const OpCost& find_op(const std::vector<OpCost>& ops, std::string_view name) {
  auto it = std::find_if(ops.begin(), ops.end(), [&](const OpCost& o) { return o.name == name; });
  REQUIRE_MESSAGE(it != ops.end(), name);
  return *it;
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
  const double on_s = model("a100-sxm4-80gb", Precision::Tf32).op_time(op, Pass::Forward).seconds();
  const double off_s = model("a100-sxm4-80gb", Precision::Tf32, off).op_time(op, Pass::Forward).seconds();
  CHECK(off_s / on_s == doctest::Approx(156.0 / 19.5).epsilon(0.01));
}

TEST_CASE("workloads::ComputeModel: a big bf16 GEMM reaches the published cuBLAS fraction of peak") {
  // A lone GEMM (a cuBLAS benchmark) sustains the HPL clock, 1305/1410 MHz on A100; the default
  // sustained_clock_ratio is the lower clock of a whole training step (fitted, see compute_model.cpp).
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
  for (std::string_view name : {"qkv_proj", "attention_out_proj", "mlp_fc1", "mlp_fc2"}) {
    const OpCost& op = find_op(layer, name);
    REQUIRE(op.fp8_eligible);
    for (Pass pass : {Pass::Forward, Pass::Backward}) {
      const double speedup = bf16.op_time(op, pass).seconds() / fp8.op_time(op, pass).seconds();
      CHECK(speedup > 1.4);
      CHECK(speedup < 2.0);
    }
  }
  for (const OpCost* op : {&find_op(layer, "flash_attention"), &find_op(layer, "gelu"),
                           &find_op(layer, "input_norm"), &find_op(head, "logits")}) {
    CHECK(fp8.op_time(*op, Pass::Forward) == bf16.op_time(*op, Pass::Forward));
    CHECK(fp8.op_time(*op, Pass::Backward) == bf16.op_time(*op, Pass::Backward));
  }
}

TEST_CASE("workloads::ComputeModel: a 60% TDP power cap slows compute-bound ops by the curve, not memory-bound ones") {
  topology::ClusterSpec capped;
  capped.power_limit_w = 0.6 * 400.0;
  const ComputeModel full = model("a100-sxm4-80gb", Precision::Bf16);
  const ComputeModel cap = model("a100-sxm4-80gb", Precision::Bf16, capped);
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
  const auto ops = layer_ops(gpt, shape);  // keep the ops alive: find_op returns a reference into them
  const OpCost& fa = find_op(ops, "flash_attention");
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
  const ComputeModel base = model("a100-sxm4-80gb", Precision::Bf16);
  ComputeConstants slower;
  slower.set("gemm_eff_max", 0.41);
  const ComputeModel half(gpu("a100-sxm4-80gb"), topology::ClusterSpec{}, Precision::Bf16, slower);
  const double launch = 2e-6;
  CHECK((half.op_time(op, Pass::Forward).seconds() - launch) /
            (base.op_time(op, Pass::Forward).seconds() - launch) ==
        doctest::Approx(2.0).epsilon(1e-6));
}
