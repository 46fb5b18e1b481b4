// Multi-token prediction (model/mtp.h) and MLA up-projection recompute: DeepSeek-V3's released
// parameter count, the MTP module's FLOPs and last-stage memory counted by hand, where its cost
// lands in the pipeline, and what recompute_modules "mla_up_proj" saves and reruns.
#include <doctest/doctest.h>

#include <string>

#include "iteration_fixture.h"
#include "topology/catalog.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/compute/compute_model.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/hf_config.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/mtp.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

const ModelSpec& preset(const char* id) {
  const ModelSpec* m = find_model_preset(id);
  REQUIRE(m != nullptr);
  return *m;
}

double line(const MemoryRequest& q, int stage, const char* name) {
  const MemoryBreakdown m = stage_memory(q, stage);  // kept alive: find_line points into it
  const MemoryLine* l = m.find_line(name);
  return l != nullptr ? l->bytes.value : 0.0;
}

// A small MLA + MoE model in DeepSeek-V3's shape: hidden 1024, 8 heads, 2 dense + 2 MoE layers.
ModelSpec small_mla_moe(int mtp) {
  ModelSpec m;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 2816;
  m.seq_len = 1024;
  m.vocab = 32000;
  m.mlp = MlpKind::SwiGlu;
  m.norm = NormKind::RmsNorm;
  m.tied_embeddings = false;
  m.experts = 16;
  m.experts_per_token = 4;
  m.moe_ffn_hidden = 512;
  m.shared_experts = 1;
  m.first_dense_layers = 2;
  m.q_lora_rank = 384;
  m.kv_lora_rank = 128;
  m.qk_nope_head_dim = 64;
  m.qk_rope_head_dim = 32;
  m.v_head_dim = 64;
  m.mtp_layers = mtp;
  return m;
}

// Weights, gradients and optimizer states of the memory model's states line `what`.
double states(const MemoryRequest& q, int stage, const std::string& what) {
  double sum = 0;
  for (const char* part : {": weights", ": gradients", ": optimizer states"}) sum += line(q, stage, (what + part).c_str());
  return sum;
}

}  // namespace

// DeepSeek-V3's model card: "671B of the Main Model weights and 14B of the Multi-Token Prediction
// (MTP) Module weights", 685 B on Hugging Face. By hand, the module (layer 61): MoE layer =
// 187,107,328 (MLA) + 256 x 3 x 7168 x 2048 (routed) + 3 x 7168 x 2048 (shared) + 256 x 7168
// (router) + 2 x 7168 (norms) = 11,507,187,200; eh_proj 2 x 7168^2 = 102,760,448; enorm, hnorm,
// final norm 3 x 7168; stored embedding and head copies 2 x 129280 x 7168 = 1,853,358,080.
TEST_CASE("workloads::mtp: DeepSeek-V3's MTP module and released parameter count are the published ones") {
  const ModelSpec& v3 = preset("deepseek-v3");
  CHECK(v3.mtp_layers == 1);
  CHECK(mtp_layer_is_moe(v3));
  CHECK(mtp_extra_parameters(v3) == doctest::Approx(2.0 * 7168 * 7168 + 3.0 * 7168).epsilon(1e-12));
  const double moe_layer = 187107328.0 + 256.0 * 3 * 7168 * 2048 + 3.0 * 7168 * 2048 + 256.0 * 7168 + 2.0 * 7168;
  CHECK(mtp_module_parameters(v3) == doctest::Approx(moe_layer + 2.0 * 7168 * 7168 + 3.0 * 7168).epsilon(1e-12));
  CHECK(mtp_parameters(v3) == doctest::Approx(mtp_module_parameters(v3)).epsilon(1e-12));
  const double copies = 2.0 * 129280 * 7168;
  CHECK(mtp_release_parameters(v3) - v3.parameters() == doctest::Approx(mtp_module_parameters(v3) + copies).epsilon(1e-12));
  // 13.46 B of module weights ("14B"), 684.3 B in all ("685B", rounded up from the checkpoint).
  CHECK(mtp_release_parameters(v3) - v3.parameters() == doctest::Approx(13.46e9).epsilon(0.005));
  CHECK(mtp_release_parameters(v3) == doctest::Approx(685e9).epsilon(0.002));
  // The main model's count is unchanged by the module; Kimi-K2 has none.
  CHECK(v3.parameters() == doctest::Approx(671e9).epsilon(0.01));
  CHECK(preset("kimi-k2").mtp_layers == 0);
}

// Model FLOPs per sequence grow by the MTP layer's, eh_proj's (2 x s x 2h x h forward, x3 with the
// backward) and the second logits GEMM's (2 x s x h x V, x3).
TEST_CASE("workloads::mtp: model FLOPs add one MoE layer, eh_proj and a second logits GEMM per module") {
  const ModelSpec with = small_mla_moe(1), without = small_mla_moe(0);
  OpShape sh;
  sh.seq_len = with.seq_len;
  double layer = 0;
  for (const OpCost& op : layer_ops(with, sh, true))
    if (op.is_matmul()) layer += op.fwd_flops.value + op.bwd_flops.value;
  const double s = 1024, h = 1024, v = 32000;
  const double eh_proj = 3.0 * 2.0 * s * (2.0 * h) * h, logits = 3.0 * 2.0 * s * h * v;
  const double added = model_flops_per_iteration(with, 4).value - model_flops_per_iteration(without, 4).value;
  CHECK(added == doctest::Approx(4.0 * (layer + eh_proj + logits)).epsilon(1e-12));
  ModelSpec two = small_mla_moe(2);
  CHECK(model_flops_per_iteration(two, 4).value - model_flops_per_iteration(without, 4).value ==
        doctest::Approx(2.0 * added).epsilon(1e-12));
}

// pp 2: the module's weights, activations and logits are on the last stage only (bf16, tp 1, b 1,
// s 1024, h 1024, dp 1): its states are the state bytes per parameter x (the module + the input
// embedding's copy, vocab x h, which an untied model keeps where MTP runs).
TEST_CASE("workloads::mtp: the last stage holds the module's states, activations and logits, the first nothing more") {
  MemoryRequest q;
  q.parallel.pp = 2;
  q.training.global_batch = 4;
  q.training.micro_batch = 1;
  MemoryRequest base = q;
  q.model = small_mla_moe(1);
  base.model = small_mla_moe(0);
  CHECK(stage_memory(q, 0).total.value == doctest::Approx(stage_memory(base, 0).total.value));
  const double module = mtp_module_parameters(q.model), embedding = 32000.0 * 1024;
  const StateBytes per = state_bytes_per_param(q.training);
  const double held = states(q, 1, "MTP modules") + states(q, 1, "MTP routed experts (/ep)");
  CHECK(held == doctest::Approx((per.weights + per.grads + per.optimizer) * (module + embedding)).epsilon(1e-9));
  CHECK(states(q, 0, "MTP modules") == 0.0);
  // Its logits: s x b x V x 4 B beside the main head's.
  CHECK(line(q, 1, "MTP logits and loss (fp32)") == doctest::Approx(1024.0 * 32000 * 4));
  CHECK(line(q, 1, "MTP logits and loss (fp32)") == doctest::Approx(line(q, 1, "logits and loss (fp32)")));
  // Its activations: at least one MoE layer's saved tensors plus eh_proj's 2h-wide input.
  const double act = line(q, 1, "MTP modules: activations");
  CHECK(act > line(base, 1, "layers: activations") / 2.0);  // the stage's 2 MoE layers / 2
  CHECK(stage_memory(q, 1).total.value > stage_memory(base, 1).total.value + held + act);
}

// The module runs in the last model chunk of the last stage, which under 1F1B holds one
// micro-batch at a time, interleaved or not (Megatron-Core schedules.py: the last rank warms up
// with (vp - 1) x pp forwards of its earlier chunks, then each last-chunk forward is followed by
// its backward). Its saved tensors are therefore one micro-batch's whatever the stage's earlier
// chunks hold; GPipe keeps every micro-batch's.
TEST_CASE("workloads::mtp: the module's activations are one micro-batch's under 1F1B, interleaved or not") {
  MemoryRequest q;
  q.model = small_mla_moe(1);
  q.parallel.pp = 2;
  q.training.global_batch = 8;
  q.training.micro_batch = 1;
  const double one = line(q, 1, "MTP modules: activations");
  REQUIRE(one > 0.0);
  MemoryRequest interleaved = q;
  interleaved.parallel.virtual_stages = 2;  // 4 chunks of 1 layer: the stage's layers hold more than 1
  CHECK(line(interleaved, 1, "layers: activations") > line(q, 1, "layers: activations"));
  CHECK(line(interleaved, 1, "MTP modules: activations") == doctest::Approx(one));
  MemoryRequest gpipe = q;
  gpipe.parallel.schedule = Schedule::GPipe;
  CHECK(line(gpipe, 1, "MTP modules: activations") == doctest::Approx(8.0 * one));
}

// "mla_up_proj" frees Q, K and V after the forward: per layer s x b x H x (2 x (nope + rope) + v)
// x 2 B = 1024 x 8 x (2 x 96 + 64) x 2 = 4,194,304 B here, on each of the 4 layers (1 in flight).
TEST_CASE("workloads::estimate_memory: recompute_modules mla_up_proj drops MLA's Q, K and V, keeps the latents") {
  MemoryRequest q;
  q.model = small_mla_moe(0);
  q.training.global_batch = 1;
  q.training.micro_batch = 1;
  MemoryRequest rc = q;
  rc.training.recompute_modules = kRecomputeMlaUpProj;
  const double qkv = 1024.0 * 8 * (2 * 96 + 64) * 2;
  CHECK(line(q, 0, "layers: activations") - line(rc, 0, "layers: activations") == doctest::Approx(4.0 * qkv));
  // One layer's Q, K and V come back for its backward (transient).
  CHECK(line(rc, 0, "layers: MLA up-projection recompute") == doctest::Approx(qkv));
  CHECK(line(q, 0, "layers: MLA up-projection recompute") == 0.0);
}

TEST_CASE("workloads::plan_stage_costs: mla_up_proj reruns the up-projections and MTP lands on the last chunk") {
  const testing::BuiltCluster cluster(testing::nodes_of("dgx-h100"));
  ParallelSpec par;
  par.pp = 2;
  par.dp = 4;
  par.ep = 4;
  const ComputeModel compute = cluster.compute(topology::Precision::Bf16);
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  CollectiveMemo memo(cluster.collectives());
  const auto costs = [&](int mtp, unsigned modules) {
    TrainingSpec tr;
    tr.global_batch = 8;
    tr.recompute_modules = modules;
    const ModelSpec model = small_mla_moe(mtp);
    return plan_stage_costs(StageCostInputs{model, par, tr, compute, layout, memo, CollectiveAlgo::Ring, 1, 2});
  };
  const StageCosts none = costs(0, 0), up = costs(0, kRecomputeMlaUpProj), mtp = costs(1, 0);
  // mla_up_proj: the forward is unchanged, the backward reruns the two up-projection GEMMs and the
  // rotary kernel, far less than a layer's forward.
  CHECK(up.chunks[0].fwd_compute == doctest::Approx(none.chunks[0].fwd_compute));
  CHECK(up.chunks[0].bwd_compute > none.chunks[0].bwd_compute);
  CHECK(up.chunks[0].bwd_compute - none.chunks[0].bwd_compute < 0.25 * none.chunks[0].fwd_compute);
  // MTP: the first stage is unchanged; the last gains at least a layer's worth of forward, its
  // expert-parallel all-to-alls and the module's parameters, and keeps its decoder layer count.
  CHECK(mtp.chunks[0].fwd_compute == doctest::Approx(none.chunks[0].fwd_compute));
  CHECK(mtp.chunks[0].params == doctest::Approx(none.chunks[0].params));
  CHECK(mtp.chunks[1].layers == none.chunks[1].layers);
  CHECK(mtp.chunks[1].fwd_compute - none.chunks[1].fwd_compute > none.chunks[1].fwd_compute / 2.0 * 0.9);
  CHECK(mtp.chunks[1].fwd_ep > none.chunks[1].fwd_ep);
  const double module_per_gpu = mtp_module_parameters(small_mla_moe(1)) - small_mla_moe(1).expert_parameters() * (1.0 - 1.0 / 4);
  CHECK(mtp.chunks[1].params - none.chunks[1].params == doctest::Approx(module_per_gpu + 32000.0 * 1024).epsilon(1e-9));
}

// Hugging Face's num_nextn_predict_layers sets mtp_layers.
TEST_CASE("workloads::load_hf_config: num_nextn_predict_layers is the number of MTP modules") {
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/workloads/data/deepseek_v3_config.json";
  const ModelSpec m = load_hf_config(path);
  CHECK(m.mtp_layers == 1);
}
