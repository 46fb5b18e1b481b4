// Per-layer and per-module precision (workloads/model/module_precision.h): a linear kept in bf16
// under an fp8 / nvfp4 run costs what it costs in a bf16 run, one dropped from nvfp4 to fp8 what it
// costs in an fp8 run; the op names map to Megatron-Core's modules; the first / last layers in bf16
// are charged as bf16 layers in the stage costs, for a dense and a hybrid model.
#include <doctest/doctest.h>

#include <string_view>
#include <utility>
#include <vector>

#include "iteration_fixture.h"
#include "tests/workloads/op_test_util.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/module_precision.h"
#include "workloads/training/stage_cost_parts.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {

ComputeModel model_on(std::string_view gpu_id, Precision p) { return ComputeModel(gpu(gpu_id), topology::ClusterSpec{}, p, {}); }

// Forward + backward seconds of the first chunk of `model` on one node of `node_id` at `tr`.
StageCosts stage_costs_of(const ModelSpec& model, std::string_view node_id, const TrainingSpec& tr) {
  const testing::BuiltCluster cluster(testing::nodes_of(node_id));
  ParallelSpec par;
  par.dp = 8;
  const ComputeModel compute = cluster.compute(tr.precision);
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  CollectiveMemo memo(cluster.collectives());
  return plan_stage_costs(StageCostInputs{model, par, tr, compute, layout, memo, CollectiveAlgo::Ring, 1, 1});
}

double step_compute(const StageCosts& c) { return c.chunks.front().fwd_compute + c.chunks.front().bwd_compute; }

}  // namespace

TEST_CASE("workloads::ComputeModel: a linear kept in bf16 under nvfp4 costs what it costs in a bf16 run") {
  const ComputeModel fp4 = model_on("b200", Precision::Nvfp4);
  const ComputeModel fp8 = model_on("b200", Precision::Fp8);
  // The linears an nvfp4 recipe keeps in fp8 run MXFP8 (block scaling, mxfp8_gemm_eff_ratio).
  ComputeConstants block;
  block.set("fp8_block_scale_bytes_per_element", 1.0 / 32.0);
  const ComputeModel mxfp8(gpu("b200"), topology::ClusterSpec{}, Precision::Fp8, block);
  const ComputeModel bf16 = model_on("b200", Precision::Bf16);
  OpCost op = square_gemm(8192);
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    const double quantized = fp4.op_time(op, pass).seconds();
    op.linear_precision = LinearPrecision::Bf16;
    CHECK(fp4.op_time(op, pass).seconds() == doctest::Approx(bf16.op_time(op, pass).seconds()).epsilon(1e-12));
    CHECK(fp8.op_time(op, pass).seconds() == doctest::Approx(bf16.op_time(op, pass).seconds()).epsilon(1e-12));
    CHECK(fp4.op_time(op, pass).seconds() > 2.0 * quantized);  // the FP4 rate is 4x the bf16 one
    // Dropped to fp8: what an MXFP8 run charges, cast and bytes included; slower than per-tensor fp8.
    op.linear_precision = LinearPrecision::Fp8;
    CHECK(fp4.op_time(op, pass).seconds() == doctest::Approx(mxfp8.op_time(op, pass).seconds()).epsilon(1e-12));
    CHECK(fp4.op_time(op, pass).seconds() > fp8.op_time(op, pass).seconds());
    CHECK(fp4.op_time(op, pass).seconds() > quantized);
    // In a bf16 run the override changes nothing.
    CHECK(bf16.op_time(op, pass).seconds() == doctest::Approx(model_on("b200", Precision::Bf16).op_time(square_gemm(8192), pass).seconds()));
    op.linear_precision = LinearPrecision::Run;
  }
}

TEST_CASE("workloads::apply_module_precision: op names map to Megatron-Core's modules, a bf16 layer keeps every linear in bf16") {
  const ModelSpec* super = find_model_preset("nemotron-3-super-120b-a12b");
  REQUIRE(super != nullptr);
  OpShape shape;
  shape.seq_len = 8192;
  shape.ep = 64;
  shape.quantized_experts = true;
  TrainingSpec tr;
  tr.precision = Precision::Nvfp4;
  tr.bf16_modules = kPrecisionAttention | kPrecisionMoeLatentProj;
  tr.fp8_modules = kPrecisionMambaOutProj;
  std::vector<OpCost> mamba = layer_ops_of_kind(*super, shape, LayerKind::Mamba);
  std::vector<OpCost> attention = layer_ops_of_kind(*super, shape, LayerKind::Attention);
  std::vector<OpCost> moe = layer_ops_of_kind(*super, shape, LayerKind::Moe);
  for (auto* ops : {&mamba, &attention, &moe}) apply_module_precision(*ops, tr, false);
  CHECK(op_named(mamba, "mamba_out_proj").linear_precision == LinearPrecision::Fp8);
  CHECK(op_named(mamba, "mamba_in_proj").linear_precision == LinearPrecision::Run);
  CHECK(op_named(attention, "qkv_proj").linear_precision == LinearPrecision::Bf16);
  CHECK(op_named(attention, "attention_out_proj").linear_precision == LinearPrecision::Bf16);
  CHECK(op_named(moe, "moe_fc1_latent_proj").linear_precision == LinearPrecision::Bf16);
  CHECK(op_named(moe, "moe_fc2_latent_proj").linear_precision == LinearPrecision::Bf16);
  CHECK(op_named(moe, "expert_down").linear_precision == LinearPrecision::Run);
  CHECK(op_named(moe, "shared_expert_down").linear_precision == LinearPrecision::Run);
  // A layer with no quantization context: every linear bf16, the Mamba out_proj's MXFP8 included
  // (override_nonquantized_autocast = False); ops that are no linears untouched.
  std::vector<OpCost> mamba16 = layer_ops_of_kind(*super, shape, LayerKind::Mamba);
  apply_module_precision(mamba16, tr, true);
  for (const OpCost& op : mamba16)
    CHECK(op.linear_precision == (op.fp8_eligible ? LinearPrecision::Bf16 : LinearPrecision::Run));
}

TEST_CASE("workloads::bf16_layer_runs: the first and last layers in bf16, clipped to a chunk") {
  TrainingSpec tr;
  tr.bf16_layers_at_start = 2;
  tr.bf16_layers_at_end = 3;
  using Runs = std::vector<std::pair<int, int>>;
  CHECK(bf16_layer_runs(tr, 10, 0, 10) == Runs{{0, 2}, {7, 3}});
  CHECK(bf16_layer_runs(tr, 10, 1, 4) == Runs{{1, 1}});
  CHECK(bf16_layer_runs(tr, 10, 4, 2).empty());
  CHECK(bf16_layer_runs(tr, 10, 5, 5) == Runs{{7, 3}});
  // Overlapping counts: no layer twice.
  tr.bf16_layers_at_start = 8;
  CHECK(bf16_layer_runs(tr, 10, 0, 10) == Runs{{0, 8}, {8, 2}});
  CHECK(bf16_layer_runs(TrainingSpec{}, 10, 0, 10).empty());
}

TEST_CASE("workloads::plan_stage_costs: a layer in bf16 under fp8 costs what a bf16 layer costs") {
  ModelSpec m = *find_model_preset("llama3-8b");
  m.layers = 4;
  m.seq_len = 4096;
  TrainingSpec tr;
  tr.global_batch = 8;
  const double bf16 = step_compute(stage_costs_of(m, "dgx-h100", tr));
  tr.precision = Precision::Fp8;
  const double fp8 = step_compute(stage_costs_of(m, "dgx-h100", tr));
  CHECK(fp8 < 0.9 * bf16);
  // Every layer in bf16: the bf16 run's compute (the output layer and embedding are bf16 in both).
  tr.bf16_layers_at_start = 4;
  CHECK(step_compute(stage_costs_of(m, "dgx-h100", tr)) == doctest::Approx(bf16).epsilon(1e-9));
  // The first and the last: half the layers of each.
  tr.bf16_layers_at_start = 1;
  tr.bf16_layers_at_end = 1;
  CHECK(step_compute(stage_costs_of(m, "dgx-h100", tr)) == doctest::Approx((bf16 + fp8) / 2).epsilon(1e-9));
}

TEST_CASE("workloads::plan_stage_costs: a hybrid model's bf16 layers are charged by their kind") {
  const ModelSpec m = *find_model_preset("nemotron-h-8b");
  TrainingSpec tr;
  tr.global_batch = 8;
  const double bf16 = step_compute(stage_costs_of(m, "dgx-b200", tr));
  tr.precision = Precision::Nvfp4;
  const double fp4 = step_compute(stage_costs_of(m, "dgx-b200", tr));
  REQUIRE(fp4 < bf16);
  tr.bf16_layers_at_end = m.layers;
  CHECK(step_compute(stage_costs_of(m, "dgx-b200", tr)) == doctest::Approx(bf16).epsilon(1e-9));
  // The last two layers ("-" MLP, then "M"... the pattern ends "M-"): between the two runs.
  tr.bf16_layers_at_end = 2;
  const double two = step_compute(stage_costs_of(m, "dgx-b200", tr));
  CHECK(two > fp4);
  CHECK(two < fp4 + (bf16 - fp4) * 0.2);
  // The attention projections in bf16 in every layer: dearer than none, cheaper than all.
  tr.bf16_layers_at_end = 0;
  tr.bf16_modules = kPrecisionAttention;
  const double attention = step_compute(stage_costs_of(m, "dgx-b200", tr));
  CHECK(attention > fp4);
  CHECK(attention < bf16);
}
