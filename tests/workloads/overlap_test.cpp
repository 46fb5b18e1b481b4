// The overlap rules (workloads/training/overlap.h) against hand-derived timelines: a collective
// pipelined with its GEMM, a ZeRO-3 pass with and without prefetch, the distributed optimizer's
// parameter all-gathers gating the next forward.
#include <doctest/doctest.h>

#include <vector>

#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/overlap.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

// An H100 SXM's compute model at bf16.
ComputeModel h100_bf16() {
  const topology::GpuSpec* gpu = topology::find_gpu("h100-sxm5-80gb");
  REQUIRE(gpu != nullptr);
  return ComputeModel(*gpu, topology::ClusterSpec{}, topology::Precision::Bf16, ComputeConstants{});
}

// One layer's ops of a model preset at sequence `seq`, tp `tp`, with sequence parallelism.
std::vector<OpCost> tp_layer(const char* preset, int seq, int tp) {
  const ModelSpec* model = find_model_preset(preset);
  REQUIRE(model != nullptr);
  OpShape shape;
  shape.seq_len = seq;
  shape.tp = tp;
  shape.sequence_parallel = true;
  return layer_ops(*model, shape);
}

}  // namespace

TEST_CASE("workloads::overlap_tp_collective: a short collective hides behind its GEMM and costs only SMs") {
  // GEMM 8 ms in 4 chunks of 2 ms; collective 3 ms in 3 steps of 1 ms; share 0.25. Each step:
  // the chunk runs at 0.75 for 1 ms (0.75 ms of work), then 1.25 ms alone: 2.25 ms >= 1 ms step.
  // Total 3 x 2.25 + 2 = 8.75 ms: nothing exposed, 0.75 ms of SM cost.
  const TpOverlap o = overlap_tp_collective(8e-3, 3e-3, 4, 0.25);
  CHECK(o.time_s == doctest::Approx(8.75e-3));
  CHECK(o.exposed_s == doctest::Approx(0.0));
  CHECK(o.hidden_s == doctest::Approx(3e-3));
  CHECK(o.sm_cost_s == doctest::Approx(0.75e-3));
}

TEST_CASE("workloads::overlap_tp_collective: a long collective leaves its remainder exposed") {
  // GEMM 4 ms in 4 chunks of 1 ms; collective 9 ms in 3 steps of 3 ms; share 0.2. The chunk is
  // done after 1 / 0.8 = 1.25 ms < 3 ms, so each step takes 3 ms; the last chunk 1 ms alone.
  // Total 10 ms = GEMM 4 + SM cost 3 x 0.25 + exposed 3 x (3 - 1.25) = 4 + 0.75 + 5.25.
  const TpOverlap o = overlap_tp_collective(4e-3, 9e-3, 4, 0.2);
  CHECK(o.time_s == doctest::Approx(10e-3));
  CHECK(o.sm_cost_s == doctest::Approx(0.75e-3));
  CHECK(o.exposed_s == doctest::Approx(5.25e-3));
  CHECK(o.hidden_s == doctest::Approx(3.75e-3));
  CHECK(o.time_s == doctest::Approx(4e-3 + o.sm_cost_s + o.exposed_s));
}

TEST_CASE("workloads::overlap_tp_collective: never slower than running the two in turn, nothing to split, nothing hidden") {
  for (double g : {1e-4, 1e-3, 1e-2}) {
    for (double c : {0.0, 1e-4, 1e-3, 1e-2}) {
      for (int steps : {2, 4, 8}) {
        for (double share : {0.0, 0.1, 0.5, 0.9}) {
          CAPTURE(g);
          CAPTURE(c);
          CAPTURE(steps);
          CAPTURE(share);
          const TpOverlap o = overlap_tp_collective(g, c, steps, share);
          CHECK(o.time_s <= g + c + 1e-15);
          CHECK(o.exposed_s >= -1e-15);
          CHECK(o.exposed_s + o.hidden_s == doctest::Approx(c));
          CHECK(o.time_s == doctest::Approx(g + o.sm_cost_s + o.exposed_s));
        }
      }
    }
  }
  const TpOverlap one = overlap_tp_collective(1e-3, 2e-3, 1, 0.1);  // tp = 1: no steps to pipeline
  CHECK(one.exposed_s == 2e-3);
  CHECK(one.time_s == doctest::Approx(3e-3));
  CHECK(one.sm_cost_s == 0.0);
}

TEST_CASE("workloads::overlap_tp_layer: each collective pairs with its GEMMs, the SM share is what costs") {
  const topology::GpuSpec* gpu = topology::find_gpu("h100-sxm5-80gb");
  REQUIRE(gpu != nullptr);
  const topology::ClusterSpec cluster;
  const ComputeModel cm(*gpu, cluster, topology::Precision::Bf16, ComputeConstants{});
  const std::vector<OpCost> layer = tp_layer("llama2-70b", 4096, 4);
  // Tiny collectives hide completely. In the backward (tp equal shares of each GEMM) a chunk is
  // slowed only while a step is in flight, so the cost is at most the collectives' time; without
  // an SM share or HBM traffic it is free.
  const TpPassOverlap tiny = overlap_tp_layer(cm, layer, Pass::Backward, 1e-6, 1e-6, 4, 0.1);
  CHECK(tiny.exposed_s == doctest::Approx(0.0));
  CHECK(tiny.hidden_s == doctest::Approx(4e-6));
  CHECK(tiny.sm_cost_s > 0.0);
  CHECK(tiny.sm_cost_s <= 4e-6 + 1e-12);
  CHECK(overlap_tp_layer(cm, layer, Pass::Backward, 1e-4, 1e-4, 4, 0.0).sm_cost_s == doctest::Approx(0.0));
  // A huge collective stays mostly exposed.
  const TpPassOverlap huge = overlap_tp_layer(cm, layer, Pass::Backward, 1.0, 1.0, 4, 0.1);
  CHECK(huge.exposed_s > 3.9);
  CHECK(huge.exposed_s + huge.hidden_s == doctest::Approx(4.0));
}

TEST_CASE("workloads::fsdp_pass_s: prefetch exposes the first gather and the last reduce-scatter only") {
  // 4 layers of 10 ms; gather 3 ms, reduce-scatter 2 ms.
  CHECK(fsdp_pass_s(4, 10e-3, 3e-3, 0.0, true) == doctest::Approx(3e-3 + 40e-3));
  CHECK(fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, true) == doctest::Approx(3e-3 + 40e-3 + 2e-3));
  // Communication-bound layers: each takes the gather + reduce-scatter.
  CHECK(fsdp_pass_s(4, 1e-3, 3e-3, 2e-3, true) == doctest::Approx(3e-3 + 4 * 5e-3 + 2e-3));
  // Without prefetch everything runs in turn.
  CHECK(fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, false) == doctest::Approx(4 * 15e-3));
  CHECK(fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, false) > fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, true));
}

TEST_CASE("workloads::schedule_param_gathers and gated_pass_end: only the first bucket's gather is exposed") {
  // Two chunks: chunk 0 in buckets of 1 and 3 bytes gathered in 1 s and 3 s, chunk 1 one bucket of
  // 2 bytes in 2 s. Back to back: chunk 0 ends at 1 and 4, chunk 1 at 6.
  const ParamGatherSchedule s = schedule_param_gathers({{{1, 1.0}, {3, 3.0}}, {{2, 2.0}}});
  REQUIRE(s.ends.size() == 2);
  CHECK(s.ends[0] == std::vector<double>{1.0, 4.0});
  CHECK(s.ends[1] == std::vector<double>{6.0});
  CHECK(s.fractions[0] == std::vector<double>{0.25, 1.0});
  CHECK(s.total_s == 6.0);
  // A forward of 8 s from 0: its first quarter waits for 1 s, then runs to 3; the rest needs
  // the second bucket, gathered at 4, so it runs from 4 to 10.
  CHECK(gated_pass_end(0.0, 8.0, s.fractions[0], s.ends[0]) == doctest::Approx(10.0));
  // A long forward hides all but the first bucket: 20 s of work, 1 s exposed.
  CHECK(gated_pass_end(0.0, 20.0, s.fractions[0], s.ends[0]) == doctest::Approx(21.0));
  // A pass that starts after its gathers waits for nothing.
  CHECK(gated_pass_end(7.0, 5.0, s.fractions[1], s.ends[1]) == doctest::Approx(12.0));
}

TEST_CASE("workloads::overlap_tp_pipelined: a chunk slowed by the collective beside it, then alone") {
  // GEMM 8 ms alone, as 4 chunks of 2 ms each alone and 3 ms each beside a step (contended);
  // collective 3 ms in 3 steps of 1 ms. During a step the chunk does 1/3 of its work, then 2 x 2/3
  // = 1.333 ms alone: 2.333 ms per step, the last chunk 2 ms. Total 9 ms: 1 ms of GEMM slowdown.
  const TpOverlap o = overlap_tp_pipelined(8e-3, 2e-3, 3e-3, 3e-3, 4);
  CHECK(o.time_s == doctest::Approx(9e-3));
  CHECK(o.exposed_s == doctest::Approx(0.0));
  CHECK(o.sm_cost_s == doctest::Approx(1e-3));
  // Split into chunks that quantize worse (4 x 2.5 ms for an 8 ms GEMM), with nothing beside them:
  // the splitting alone costs 2 ms.
  const TpOverlap split = overlap_tp_pipelined(8e-3, 2.5e-3, 2.5e-3, 3e-3, 4);
  CHECK(split.time_s == doctest::Approx(10e-3));
  CHECK(split.sm_cost_s == doctest::Approx(2e-3));
  // The shared-SM form is the special case contended = chunk / (1 - share).
  const TpOverlap a = overlap_tp_collective(8e-3, 3e-3, 4, 0.25);
  const TpOverlap b = overlap_tp_pipelined(8e-3, 2e-3, 2e-3 / 0.75, 3e-3, 4);
  CHECK(a.time_s == doctest::Approx(b.time_s));
  CHECK(a.sm_cost_s == doctest::Approx(b.sm_cost_s));
}

TEST_CASE("workloads::overlap_tp_layer: forward GEMMs split along the sequence pay their pieces' tile waves") {
  // GPT-3 175B at tp 4, seq 2048: the QKV GEMM is m 2048 x n 9216 x k 12288; a quarter of it
  // (m 512) has 4 x 72 = 288 tiles of 128 x 128, 2.2 waves on 132 SMs, rounded up to 3: the piece
  // runs at a lower efficiency than the whole (1152 tiles, 8.7 waves -> 9). With no SM share and
  // no HBM traffic the forward still costs the splitting; the backward (shares) costs nothing.
  const ComputeModel cm = h100_bf16();
  const std::vector<OpCost> layer = tp_layer("gpt3-175b", 2048, 4);
  CHECK(cm.gemm_efficiency(512, 9216, 12288, 1) < 0.8 * cm.gemm_efficiency(2048, 9216, 12288, 1));
  const TpPassOverlap fwd = overlap_tp_layer(cm, layer, Pass::Forward, 1e-6, 1e-6, 4, 0.0);
  CHECK(fwd.sm_cost_s > 0.0);
  CHECK(fwd.exposed_s == doctest::Approx(0.0));
  // HBM traffic beside the GEMMs adds to the cost only where a piece is memory-bound: never less.
  const TpPassOverlap with_hbm = overlap_tp_layer(cm, layer, Pass::Forward, 1e-4, 1e-4, 4, 0.1, 12.6e6);
  const TpPassOverlap without = overlap_tp_layer(cm, layer, Pass::Forward, 1e-4, 1e-4, 4, 0.1, 0.0);
  CHECK(with_hbm.sm_cost_s >= without.sm_cost_s);
}

TEST_CASE("workloads::tp_regather_exposed_s: the input re-gather hides behind the dgrad GEMM, half the backward") {
  const ComputeModel cm = h100_bf16();
  const std::vector<OpCost> layer = tp_layer("llama2-70b", 4096, 4);
  double dgrad[2] = {0, 0};
  for (const OpCost& op : layer) {
    if (op.name == "qkv_proj") dgrad[0] += cm.op_time(op, Pass::Backward).seconds() / 2;
    if (op.name == "mlp_fc1" || op.name == "mlp_gate" || op.name == "mlp_up")
      dgrad[1] += cm.op_time(op, Pass::Backward).seconds() / 2;
  }
  REQUIRE(dgrad[0] > 0.0);
  REQUIRE(dgrad[1] > 0.0);
  TpPassComm bwd;
  bwd.regather_s[0] = bwd.regather_s[1] = 1e-7;
  CHECK(tp_regather_exposed_s(cm, layer, bwd, TpSides::Both) == 0.0);
  bwd.regather_s[0] = bwd.regather_s[1] = 1.0;
  CHECK(tp_regather_exposed_s(cm, layer, bwd, TpSides::Both) == doctest::Approx(2.0 - dgrad[0] - dgrad[1]));
  CHECK(tp_regather_exposed_s(cm, layer, bwd, TpSides::Attention) == doctest::Approx(1.0 - dgrad[0]));
  CHECK(tp_regather_exposed_s(cm, layer, bwd, TpSides::Mlp) == doctest::Approx(1.0 - dgrad[1]));
}

TEST_CASE("workloads::overlap_tp_layer: backward, the re-gather and the reduce-scatter share the column-parallel GEMMs") {
  // Backward userbuffers: the output gradient's gather beside the row-parallel GEMMs (ag_dgrad), the
  // input re-gather and the dgrad reduce-scatter beside the column-parallel ones (bulk dgrad / wgrad).
  const ComputeModel cm = h100_bf16();
  const std::vector<OpCost> layer = tp_layer("llama2-70b", 4096, 4);
  TpPassComm none, with;
  none.gather_s[0] = none.gather_s[1] = with.gather_s[0] = with.gather_s[1] = 1.0;
  none.scatter_s = with.scatter_s = 1.0;
  with.regather_s[0] = with.regather_s[1] = 1.0;
  const TpPassOverlap a = overlap_tp_layer(cm, layer, Pass::Backward, none, 4, 0.1);
  const TpPassOverlap b = overlap_tp_layer(cm, layer, Pass::Backward, with, 4, 0.1);
  CHECK(a.exposed_s + a.hidden_s == doctest::Approx(4.0));
  CHECK(b.exposed_s + b.hidden_s == doctest::Approx(6.0));
  CHECK(b.exposed_s > a.exposed_s + 1.9);  // a second huge collective beside the same GEMMs stays exposed
  // The forward ignores re-gathers.
  const TpPassOverlap fa = overlap_tp_layer(cm, layer, Pass::Forward, none, 4, 0.1);
  const TpPassOverlap fb = overlap_tp_layer(cm, layer, Pass::Forward, with, 4, 0.1);
  CHECK(fb.exposed_s == doctest::Approx(fa.exposed_s));
}

TEST_CASE("workloads::tp_dgrad_scatter_exposed_s: the dgrad reduce-scatter hides behind the wgrad GEMM, none if frozen") {
  const ComputeModel cm = h100_bf16();
  std::vector<OpCost> layer = tp_layer("llama2-70b", 4096, 4);
  double wgrad[2] = {0, 0};
  for (const OpCost& op : layer) {
    if (op.name == "qkv_proj") wgrad[0] += cm.op_time(op, Pass::Backward).seconds() / 2;
    if (op.name == "mlp_fc1" || op.name == "mlp_gate" || op.name == "mlp_up")
      wgrad[1] += cm.op_time(op, Pass::Backward).seconds() / 2;
  }
  REQUIRE(wgrad[0] > 0.0);
  REQUIRE(wgrad[1] > wgrad[0]);
  TpPassComm bwd;
  bwd.scatter_s = 1e-7;
  CHECK(tp_dgrad_scatter_exposed_s(cm, layer, bwd, TpSides::Both) == 0.0);
  // Between the two sides' wgrad GEMMs: the attention side's sticks out, the MLP side's hides.
  bwd.scatter_s = (wgrad[0] + wgrad[1]) / 2;
  CHECK(tp_dgrad_scatter_exposed_s(cm, layer, bwd, TpSides::Both) == doctest::Approx(bwd.scatter_s - wgrad[0]));
  CHECK(tp_dgrad_scatter_exposed_s(cm, layer, bwd, TpSides::Mlp) == 0.0);
  bwd.scatter_s = 1.0;
  CHECK(tp_dgrad_scatter_exposed_s(cm, layer, bwd, TpSides::Both) == doctest::Approx(2.0 - wgrad[0] - wgrad[1]));
  CHECK(tp_dgrad_scatter_exposed_s(cm, layer, bwd, TpSides::Attention) == doctest::Approx(1.0 - wgrad[0]));
  // A frozen weight (LoRA's base linears) runs no wgrad GEMM: nothing to hide behind.
  for (OpCost& op : layer) op.frozen = op.is_matmul();
  bwd.scatter_s = 1e-7;
  CHECK(tp_dgrad_scatter_exposed_s(cm, layer, bwd, TpSides::Both) == doctest::Approx(2e-7));
}

TEST_CASE("workloads::overlap_tp_layer: a Mamba layer's in_proj and out_proj carry its collectives on the MLP side") {
  const ComputeModel cm = h100_bf16();
  const ModelSpec* nemotron = find_model_preset("nemotron-h-56b");
  REQUIRE(nemotron != nullptr);
  OpShape shape;
  shape.seq_len = 8192;
  shape.tp = 8;
  shape.sequence_parallel = true;
  const std::vector<OpCost> mamba = layer_ops_of_kind(*nemotron, shape, LayerKind::Mamba);
  TpPassComm comm;
  comm.gather_s[0] = comm.gather_s[1] = comm.scatter_s = 1e-5;
  comm.regather_s[0] = comm.regather_s[1] = 1e-5;
  for (const Pass pass : {Pass::Forward, Pass::Backward}) {
    // Short collectives hide behind the projections' GEMMs, as userbuffers run them.
    const TpPassOverlap o = overlap_tp_layer(cm, mamba, pass, comm, 8, 0.1, TpSides::Mlp);
    CHECK(o.exposed_s == doctest::Approx(0.0));
    CHECK(o.hidden_s == doctest::Approx(pass == Pass::Forward ? 2e-5 : 3e-5));
    CHECK(o.sm_cost_s > 0.0);
    // The attention side of a Mamba layer has no GEMMs: everything there stays exposed.
    const TpPassOverlap a = overlap_tp_layer(cm, mamba, pass, comm, 8, 0.1, TpSides::Attention);
    CHECK(a.hidden_s == 0.0);
    CHECK(a.exposed_s == doctest::Approx(pass == Pass::Forward ? 2e-5 : 3e-5));
  }
  // Without the overlap the in_proj's dgrad and wgrad GEMMs cover its re-gather and its reduce-scatter.
  CHECK(tp_regather_exposed_s(cm, mamba, comm, TpSides::Mlp) == 0.0);
  CHECK(tp_dgrad_scatter_exposed_s(cm, mamba, comm, TpSides::Mlp) == 0.0);
}

TEST_CASE("workloads::dp_contention: a GEMM beside an in-flight reduce-scatter runs on the SMs and HBM bandwidth it leaves") {
  const ComputeModel cm = h100_bf16();
  const double sms = cm.gpu().sms;
  REQUIRE(sms > 16);
  // A 100 MB reduce-scatter over 8 ranks with 16 channels, 1 ms: one SM per channel, and 7/8 of the
  // buffer sent, each byte read and written (collective_hbm_bytes_per_byte = 2) plus the local
  // partial read: 3 x 87.5 MB in 1 ms.
  const DpCollectiveLoad rs = dp_collective_load(cm, CollectiveOp::ReduceScatter, 100e6, 8, 16, 1e-3);
  const Contention c = dp_contention(rs);
  CHECK(c.sm_share == doctest::Approx(16 / sms));
  CHECK(c.hbm_bytes_per_s == doctest::Approx(3 * 87.5e6 / 1e-3));
  // An all-gather moves the same bytes without the partial; an all-reduce is both halves.
  CHECK(dp_collective_load(cm, CollectiveOp::AllGather, 100e6, 8, 16, 1e-3).hbm_bytes == doctest::Approx(2 * 87.5e6));
  CHECK(dp_collective_load(cm, CollectiveOp::AllReduce, 100e6, 8, 16, 1e-3).hbm_bytes == doctest::Approx(5 * 87.5e6));
  // Two collectives in turn: the time-weighted share, the mean HBM rate.
  DpCollectiveLoad both = rs;
  both += dp_collective_load(cm, CollectiveOp::AllGather, 100e6, 8, 32, 3e-3);
  CHECK(dp_contention(both).sm_share == doctest::Approx((16 / sms * 1e-3 + 32 / sms * 3e-3) / 4e-3));
  CHECK(dp_contention(both).hbm_bytes_per_s == doctest::Approx(5 * 87.5e6 / 4e-3));
  // The MLP's up projection: its backward beside the reduce-scatter is op_time with that contention,
  // longer, and a compute-bound GEMM loses about the channels' share of the SMs (tile waves over
  // the SMs left).
  const std::vector<OpCost> layer = tp_layer("llama3-8b", 4096, 1);
  const OpCost* fc1 = nullptr;
  for (const OpCost& op : layer)
    if (op.name == "mlp_fc1" || op.name == "mlp_up") fc1 = &op;
  REQUIRE(fc1 != nullptr);
  const double alone = cm.op_time(*fc1, Pass::Backward).seconds();
  const double beside = cm.op_time(*fc1, Pass::Backward, c).seconds();
  CHECK(beside > alone);
  CHECK(dp_contended_ratio(cm, {*fc1}, Pass::Backward, c) == doctest::Approx(beside / alone));
  CHECK(beside / alone > 1 + 0.5 * 16 / sms);
  CHECK(beside / alone < 1 + 2.0 * 16 / (sms - 16));
  // Nothing in flight, nothing lost; no ops, ratio 1.
  CHECK(dp_contended_ratio(cm, layer, Pass::Forward, dp_contention(DpCollectiveLoad{})) == doctest::Approx(1.0));
  CHECK(dp_contended_ratio(cm, {}, Pass::Forward, c) == 1.0);
  // A share never takes the last SM.
  CHECK(dp_contention(dp_collective_load(cm, CollectiveOp::AllReduce, 1e6, 2, 1000, 1e-3)).sm_share < 1.0);
}

TEST_CASE("workloads::fsdp_pass_s: compute beside the prefetched collectives runs at its contended rate, exposed ones cost nothing more") {
  // 4 layers of 10 ms alone, 12 ms with the collectives in flight all along; gather 3 ms,
  // reduce-scatter 2 ms. For the 5 ms in flight a layer does 5 x 10 / 12 ms of work, then the rest
  // alone: 5 + 10 x (1 - 5 / 12) ms.
  const double layer = 5e-3 + 10e-3 * (1 - 5.0 / 12);
  CHECK(fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, true, 12e-3) == doctest::Approx(3e-3 + 4 * layer + 2e-3));
  CHECK(fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, true, 12e-3) > fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, true));
  // No contention: as before.
  CHECK(fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, true, 10e-3) == doctest::Approx(fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, true)));
  // Communication-bound layers: the slowed compute still ends inside the collectives, nothing more.
  CHECK(fsdp_pass_s(4, 1e-3, 3e-3, 2e-3, true, 1.5e-3) == doctest::Approx(3e-3 + 4 * 5e-3 + 2e-3));
  // Without prefetch every collective is exposed, nothing runs beside it: not charged again.
  CHECK(fsdp_pass_s(4, 10e-3, 3e-3, 2e-3, false, 12e-3) == doctest::Approx(4 * 15e-3));
}
