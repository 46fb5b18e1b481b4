// Sequence-parallel all-gathers carry the format of the GEMM they feed (training/tp_gather_format.h):
// Transformer Engine quantizes a column-parallel linear's input, and a row-parallel linear's output
// gradient, before gathering it over the tensor-parallel group; reduce-scatters stay bf16.
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/module_precision.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/stage_costs.h"
#include "workloads/training/tp_gather_format.h"

using namespace clustersim;
using namespace clustersim::workloads;
using topology::Precision;

TEST_CASE("workloads::tp_gather_bytes_per_element: per-tensor fp8 1 B, MXFP8 adds its scales and gathers both copies backward") {
  const double mx = kMxfp8ScaleBytesPerElement;
  CHECK(mx == 1.0 / 32.0);
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    CHECK(tp_gather_bytes_per_element(Precision::Bf16, pass, 2.0, 0.0) == 2.0);
    CHECK(tp_gather_bytes_per_element(Precision::Bf16, pass, 2.0, mx) == 2.0);  // a bf16 GEMM's gather
    CHECK(tp_gather_bytes_per_element(Precision::Fp32, pass, 4.0, 0.0) == 4.0);
    CHECK(tp_gather_bytes_per_element(Precision::Fp8, pass, 2.0, 0.0) == 1.0);  // row-wise only, transposed after
  }
  // MXFP8: 1 B + 1/32 B of E8M0 scale; the output gradient's row- and column-wise copies backward.
  CHECK(tp_gather_bytes_per_element(Precision::Fp8, Pass::Forward, 2.0, mx) == doctest::Approx(1.03125));
  CHECK(tp_gather_bytes_per_element(Precision::Fp8, Pass::Backward, 2.0, mx) == doctest::Approx(2.0625));
  // A frozen weight (LoRA's base linear) has no weight gradient: the row-wise copy alone.
  CHECK(tp_gather_bytes_per_element(Precision::Fp8, Pass::Backward, 2.0, mx, false) == doctest::Approx(1.03125));
  // NVFP4: 0.5 B of E2M1 + 1/16 B of E4M3 scale, twice backward.
  CHECK(tp_gather_bytes_per_element(Precision::Nvfp4, Pass::Forward, 2.0, 0.0) == doctest::Approx(0.5625));
  CHECK(tp_gather_bytes_per_element(Precision::Nvfp4, Pass::Backward, 2.0, 0.0) == doctest::Approx(1.125));
}

TEST_CASE("workloads::tp_gather_bytes: each side follows its own GEMM, a bf16 module keeps 2 B") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 4096;
  sh.tp = 2;
  sh.sequence_parallel = true;
  std::vector<OpCost> layer = layer_ops(llama, sh);
  const TpGatherBytes fp8 = tp_gather_bytes(layer, Precision::Fp8, 2.0, 0.0);
  for (int side = 0; side < 2; ++side) {
    CHECK(fp8.fwd[side] == 1.0);
    CHECK(fp8.bwd[side] == 1.0);
  }
  const TpGatherBytes bf16 = tp_gather_bytes(layer, Precision::Bf16, 2.0, 0.0);
  CHECK(bf16.fwd[0] == 2.0);
  CHECK(bf16.bwd[1] == 2.0);
  // bf16_modules = ["attention"]: the QKV input and out_proj's gradient gather in bf16, the MLP's in fp8.
  TrainingSpec tr;
  tr.precision = Precision::Fp8;
  tr.bf16_modules = kPrecisionAttention;
  apply_module_precision(layer, tr, false);
  const TpGatherBytes mixed = tp_gather_bytes(layer, Precision::Fp8, 2.0, 0.0);
  CHECK(mixed.fwd[0] == 2.0);
  CHECK(mixed.bwd[0] == 2.0);
  CHECK(mixed.fwd[1] == 1.0);
  CHECK(mixed.bwd[1] == 1.0);
  // A whole bf16 layer (num_layers_at_end_in_bf16) gathers in bf16 on both sides.
  std::vector<OpCost> last = layer_ops(llama, sh);
  apply_module_precision(last, tr, true);
  const TpGatherBytes end = tp_gather_bytes(last, Precision::Fp8, 2.0, 0.0);
  CHECK(end.fwd[1] == 2.0);
  CHECK(end.bwd[1] == 2.0);
  // An nvfp4 run gathers E2M1 with its scales; both copies backward, one where the weight is frozen.
  std::vector<OpCost> fp4_layer = layer_ops(llama, sh);
  const TpGatherBytes fp4 = tp_gather_bytes(fp4_layer, Precision::Nvfp4, 2.0, 0.0);
  CHECK(fp4.fwd[1] == doctest::Approx(kNvfp4BytesPerElement));
  CHECK(fp4.bwd[1] == doctest::Approx(2 * kNvfp4BytesPerElement));
  for (OpCost& op : fp4_layer) op.frozen = op.fp8_eligible;
  CHECK(tp_gather_bytes(fp4_layer, Precision::Nvfp4, 2.0, 0.0).bwd[1] == doctest::Approx(kNvfp4BytesPerElement));
  // ... and its fp8 modules run MXFP8, whose gathers carry the block scales.
  TrainingSpec fp4_tr;
  fp4_tr.precision = Precision::Nvfp4;
  fp4_tr.fp8_modules = kPrecisionAttention;
  std::vector<OpCost> mixed_fp4 = layer_ops(llama, sh);
  apply_module_precision(mixed_fp4, fp4_tr, false);
  CHECK(tp_gather_bytes(mixed_fp4, Precision::Nvfp4, 2.0, 0.0).fwd[0] == doctest::Approx(1.03125));
}

TEST_CASE("workloads::tp_gather_bytes: the backward re-gathers each column-parallel input at its forward bytes") {
  // TE re-gathers ln_out for the wgrad GEMM with the input quantizer, column-wise usage alone
  // (per-tensor fp8: the row-wise data, transposed after).
  const ModelSpec llama = *find_model_preset("llama3-8b");
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 4096;
  sh.tp = 2;
  sh.sequence_parallel = true;
  const std::vector<OpCost> layer = layer_ops(llama, sh);
  for (int side = 0; side < 2; ++side) {
    CHECK(tp_gather_bytes(layer, Precision::Bf16, 2.0, 0.0).regather[side] == 2.0);
    CHECK(tp_gather_bytes(layer, Precision::Fp8, 2.0, 0.0).regather[side] == 1.0);
    CHECK(tp_gather_bytes(layer, Precision::Fp8, 2.0, kMxfp8ScaleBytesPerElement).regather[side] ==
          doctest::Approx(1.03125));  // the column-wise copy and its scales, not both copies
    CHECK(tp_gather_bytes(layer, Precision::Nvfp4, 2.0, 0.0).regather[side] == doctest::Approx(kNvfp4BytesPerElement));
  }
  // A frozen column-parallel weight (LoRA's base QKV / fc1) has no wgrad GEMM: nothing re-gathered.
  std::vector<OpCost> frozen = layer_ops(llama, sh);
  for (OpCost& op : frozen) op.frozen = op.fp8_eligible;
  const TpGatherBytes f = tp_gather_bytes(frozen, Precision::Fp8, 2.0, 0.0);
  CHECK(f.regather[0] == 0.0);
  CHECK(f.regather[1] == 0.0);
  CHECK(f.fwd[0] == 1.0);  // the forward still gathers
  // Multi-latent attention's up-projections take the gathered latents: no attention-side re-gather.
  const ModelSpec dsv3 = *find_model_preset("deepseek-v3");
  const TpGatherBytes mla = tp_gather_bytes(layer_ops(dsv3, sh), Precision::Fp8, 2.0, 0.0);
  CHECK(mla.regather[0] == 0.0);
  CHECK(mla.fwd[0] == 2.0);
}

TEST_CASE("workloads::plan_stage_costs: an fp8 run's tp all-gathers move half the bytes, its reduce-scatters the same") {
  // Llama 3 8B, 2 layers, tp 2 with sequence parallelism on one DGX H100. Per layer a bf16 run
  // sends, of u = act (tp-1)/tp, forward 2 gathers + 2 scatters, backward 2 output-gradient gathers,
  // 2 input re-gathers and 2 scatters: 10 u over both passes. fp8 (per tensor): the gathers at 1 B,
  // forward 2 (0.5 + 1) u, backward 2 (0.5 + 0.5 + 1) u = 7 u. MXFP8: forward 2 (1.03125 / 2 + 1) u,
  // backward 2 (2.0625 / 2 + 1.03125 / 2 + 1) u.
  const testing::BuiltCluster cluster(testing::nodes_of("dgx-h100"));
  ModelSpec model = *find_model_preset("llama3-8b");
  model.layers = 2;
  ParallelSpec par;
  par.tp = 2;
  par.dp = 4;
  par.sequence_parallel = true;
  const ParallelLayout grid{par.tp, par.dp, par.pp};
  CollectiveMemo memo(cluster.collectives());
  const auto costs = [&](Precision p, double block_scale, bool overlap) {
    TrainingSpec tr;
    tr.global_batch = 4;
    tr.precision = p;
    ComputeConstants c;
    c.set("fp8_block_scale_bytes_per_element", block_scale);
    const ComputeModel compute = cluster.compute(p, c);
    StageCostInputs in{model, par, tr, compute, grid, memo, CollectiveAlgo::Ring, 1, 1};
    in.tp_comm_overlap = overlap;
    return plan_stage_costs(in);
  };
  const StageCosts bf16 = costs(Precision::Bf16, 0.0, false);
  const StageCosts fp8 = costs(Precision::Fp8, 0.0, false);
  const StageCosts mx = costs(Precision::Fp8, kMxfp8ScaleBytesPerElement, false);
  const double u = bf16.tp_bytes_per_gpu / 10.0;
  CHECK(fp8.tp_bytes_per_gpu == doctest::Approx(7.0 * u));
  CHECK(mx.tp_bytes_per_gpu == doctest::Approx((2 * (1.03125 / 2 + 1) + 2 * (2.0625 / 2 + 1.03125 / 2 + 1)) * u));
  // The blocking seconds: the gathers shrink, the scatters do not; MXFP8's backward gathers more.
  const ChunkCost& b = bf16.chunks[0];
  const ChunkCost& f = fp8.chunks[0];
  CHECK(f.fwd_tp < b.fwd_tp);
  CHECK(f.fwd_tp > b.fwd_tp / 2);  // the reduce-scatters stay
  // The backward's re-gathers hide behind the dgrad GEMMs and its reduce-scatters behind the wgrad
  // GEMMs: the output-gradient gathers alone stay, so the backward is the forward less its scatters.
  CHECK(f.bwd_tp < f.fwd_tp);
  CHECK(f.fwd_tp - f.bwd_tp == doctest::Approx(b.fwd_tp - b.bwd_tp));
  CHECK(f.bwd_tp_hidden > 0.0);
  CHECK(mx.chunks[0].bwd_tp > b.bwd_tp);
  // With tp_comm_overlap the userbuffers gathers are the quantized ones too: less to hide.
  const StageCosts bf16_ub = costs(Precision::Bf16, 0.0, true);
  const StageCosts fp8_ub = costs(Precision::Fp8, 0.0, true);
  CHECK(fp8_ub.chunks[0].fwd_tp + fp8_ub.chunks[0].fwd_tp_hidden <
        bf16_ub.chunks[0].fwd_tp + bf16_ub.chunks[0].fwd_tp_hidden);
}
