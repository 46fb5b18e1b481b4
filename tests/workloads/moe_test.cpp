// Mixture of experts: the layer's FLOPs and memory counted by hand, the expert-parallel
// all-to-all's bytes and time on a DGX H100, and the import of MoE Hugging Face configs.
#include <doctest/doctest.h>

#include <string>

#include "iteration_fixture.h"
#include "topology/routing.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/compute/compute_model.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/hf_config.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

// 4 layers, the first dense; 8 SwiGLU experts of width 2048, top-2 (hidden 1024, dense ffn 4096).
ModelSpec small_moe() {
  ModelSpec m;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 4096;
  m.seq_len = 512;
  m.vocab = 32000;
  m.mlp = MlpKind::SwiGlu;
  m.norm = NormKind::RmsNorm;
  m.tied_embeddings = false;
  m.experts = 8;
  m.experts_per_token = 2;
  m.moe_ffn_hidden = 2048;
  m.first_dense_layers = 1;
  return m;
}

double matmul_fwd(const std::vector<OpCost>& ops) { return sum_ops(ops).fwd_matmul_flops.value; }

std::string data(const char* name) { return std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/workloads/data/" + name; }

std::string load_error(const char* name) {
  try {
    load_hf_config(data(name));
  } catch (const HfConfigError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("workloads::layer_ops: an MoE layer's FLOPs replace the dense MLP with the router and top-k experts") {
  const ModelSpec m = small_moe();
  OpShape sh;
  sh.seq_len = 512;
  const double s = 512, h = 1024, k = 2, f = 2048, E = 8;
  // Router 2 s h E, then k experts per token, each 3 GEMMs of 2 s h f; the dense MLP is 3 x 2 s h 4096.
  const double by_hand = 2 * s * h * E + 3 * 2 * (s * k) * h * f - 3 * 2 * s * h * 4096;
  CHECK(matmul_fwd(layer_ops(m, sh, true)) - matmul_fwd(layer_ops(m, sh)) == doctest::Approx(by_hand));
  // Expert parallelism moves experts, not work: each GPU's experts see tokens x k on average.
  OpShape ep4 = sh;
  ep4.ep = 4;
  CHECK(matmul_fwd(layer_ops(m, ep4, true)) == doctest::Approx(matmul_fwd(layer_ops(m, sh, true))));
  // A skewed router (the busiest GPU gets 1.5x the mean) scales only the experts' GEMMs.
  OpShape skew = ep4;
  skew.moe_load_factor = 1.5;
  CHECK(matmul_fwd(layer_ops(m, skew, true)) - matmul_fwd(layer_ops(m, ep4, true)) ==
        doctest::Approx(0.5 * 3 * 2 * (s * k) * h * f));
  // A dense model ignores the flag.
  ModelSpec dense = m;
  dense.experts = 0;
  CHECK(matmul_fwd(layer_ops(dense, sh, true)) == doctest::Approx(matmul_fwd(layer_ops(dense, sh))));
}

TEST_CASE("workloads::model_flops_per_iteration: an MoE model counts k experts per token, dense layers as dense") {
  const ModelSpec m = small_moe();
  OpShape sh;
  sh.seq_len = m.seq_len;
  const double dense = 3 * matmul_fwd(layer_ops(m, sh));  // fwd + bwd = 3 x fwd for every matmul
  const double moe = 3 * matmul_fwd(layer_ops(m, sh, true));
  const double head = 3 * matmul_fwd(head_ops(m, sh));
  CHECK(model_flops_per_iteration(m, 8).value == doctest::Approx(8 * (1 * dense + 3 * moe + head)));
  // Six routed FLOPs per active expert parameter and token: the experts add 6 x (k / E) x their
  // parameters x tokens, not 6 x all of them.
  ModelSpec more_experts = m;
  more_experts.experts = 64;
  const double router_delta = 3 * 2 * 512.0 * 1024 * (64 - 8) * 3;  // 3 MoE layers
  CHECK(model_flops_per_iteration(more_experts, 1).value - model_flops_per_iteration(m, 1).value ==
        doctest::Approx(router_delta));
}

TEST_CASE("workloads::ModelSpec: MoE parameters split into replicated layers and experts divided by ep") {
  const ModelSpec m = small_moe();
  const double h = 1024;
  CHECK(m.expert_parameters() == doctest::Approx(8 * 3 * h * 2048));
  CHECK(m.moe_layer_dense_parameters() == doctest::Approx(m.dense_layer_parameters() - 3 * h * 4096 + h * 8));
  CHECK(m.moe_layers_in(0, 4) == 3);
  CHECK(m.moe_layers_in(0, 1) == 0);
  const double total = m.dense_layer_parameters() + 3 * (m.moe_layer_dense_parameters() + m.expert_parameters());
  CHECK(m.layer_parameters() * 4 == doctest::Approx(total));
  CHECK(m.layer_parameters_per_ep_rank(8) * 4 ==
        doctest::Approx(total - 3 * m.expert_parameters() * 7.0 / 8.0));
}

TEST_CASE("workloads::estimate_memory: expert weights divide by ep, their optimizer states by dp / ep") {
  MemoryRequest q;
  q.model = small_moe();
  q.parallel.dp = 8;
  q.parallel.ep = 4;
  q.parallel.distributed_optimizer = true;
  q.training.global_batch = 8;
  const MemoryBreakdown b = stage_memory(q, 0);
  const MemoryLine* weights = b.find_line("routed experts (/ep): weights");
  const MemoryLine* optimizer = b.find_line("routed experts (/ep): optimizer states");
  REQUIRE(weights != nullptr);
  REQUIRE(optimizer != nullptr);
  const double expert_params = 3 * q.model.expert_parameters() / 4;  // 3 MoE layers, ep 4
  CHECK(weights->bytes.value == doctest::Approx(2.0 * expert_params));  // bf16
  // Adam: fp32 master weights and two moments, 12 B, over the expert-data-parallel group dp/ep = 2.
  CHECK(optimizer->bytes.value == doctest::Approx(12.0 * expert_params / 2));
  // Dispatch + combine of one micro-batch: 2 x k x s x b x h x 2 B.
  const MemoryLine* dispatch = b.find_line("MoE dispatch buffers");
  REQUIRE(dispatch != nullptr);
  CHECK(dispatch->bytes.value == doctest::Approx(2.0 * 2 * 512 * 1024 * 2.0));
}

TEST_CASE("workloads::estimate_memory: with context parallelism an MoE layer keeps only its rank's s/cp tokens") {
  // Regression: the MoE activation terms used the whole sequence under cp (Mixtral 8x22B at 64K
  // tokens, cp 8, read 8x its expert activations and was refused at 270 GiB on B200).
  MemoryRequest q;
  q.model = small_moe();
  q.parallel.dp = 8;
  q.parallel.ep = 4;
  q.training.global_batch = 8;
  const double whole = stage_memory(q, 0).find_line("MoE layers: dispatched tokens and expert activations")->bytes.value;
  const double dispatch_whole = stage_memory(q, 0).find_line("MoE dispatch buffers")->bytes.value;
  q.parallel.cp = 2;
  q.parallel.dp = 4;
  q.parallel.ep = 2;
  const double half = stage_memory(q, 0).find_line("MoE layers: dispatched tokens and expert activations")->bytes.value;
  CHECK(half == doctest::Approx(whole / 2));
  CHECK(stage_memory(q, 0).find_line("MoE dispatch buffers")->bytes.value == doctest::Approx(dispatch_whole / 2));
}

TEST_CASE("workloads::plan_stage_costs: an MoE layer's dispatch and combine are all-to-alls over the ep group") {
  // mixtral-8x7b on one DGX H100, ep 8: per MoE layer and micro-batch each GPU sends 7/8 of its
  // k x s x h x 2 B dispatch buffer twice (dispatch, combine) in the forward and twice in the backward.
  testing::StageRig rig(testing::nodes_of("dgx-h100"), "mixtral-8x7b", 8);
  const ModelSpec& model = rig.model;
  ParallelSpec par;
  par.dp = 8;
  par.ep = 8;
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  const StageCosts c = rig.plan(model, par, rig.tr, layout);
  REQUIRE(c.chunks.size() == 1);
  const double buffer = 4096.0 * 2 * 4096 * 2;  // s k h x bf16
  CHECK(moe_dispatch_bytes(model, OpShape{1, 4096, 1, 1, false, 2, true, 8, 1.0}) == doctest::Approx(buffer));
  CHECK(c.chunks[0].fwd_ep_bytes == doctest::Approx(32 * 2 * buffer * 7 / 8));
  CHECK(c.chunks[0].bwd_ep_bytes == doctest::Approx(c.chunks[0].fwd_ep_bytes));
  CHECK(c.ep_bytes_per_gpu == doctest::Approx(c.chunks[0].fwd_ep_bytes * 2));
  // No all-to-all beats its bandwidth bound: 7/8 of the buffer through one GPU's 450 GB/s of NVLink.
  const double bound = buffer * 7 / 8 / 450e9;
  CHECK(c.chunks[0].fwd_ep / (32 * 2) >= bound);
  CHECK(c.chunks[0].fwd_ep / (32 * 2) < 4 * bound);
  // Routed experts are 1/8 of the chunk's expert parameters.
  CHECK(c.chunks[0].expert_params == doctest::Approx(32 * model.expert_parameters() / 8));
  // Without expert parallelism there is no all-to-all.
  par.ep = 1;
  const StageCosts dense = rig.plan(model, par, rig.tr, layout);
  CHECK(dense.chunks[0].fwd_ep == 0);
  CHECK(dense.ep_bytes_per_gpu == 0);
}

TEST_CASE("workloads::plan_stage_costs: the alltoall dispatcher gathers its token counts over the ep group in each dropless forward") {
  // mixtral-8x7b on two DGX H100, ep 16 across the node boundary: each forward MoE layer first
  // all-gathers every rank's 8 per-expert counts (int64) over the 16 ranks, 16 x 8 x 8 B = 1 KB
  // gathered, a ring all-gather on the cluster's own collective model. Drop-and-pad and the flex
  // dispatcher do not; the backward gathers again only when it reruns the forward.
  testing::StageRig rig(testing::nodes_of("dgx-h100", 2), "mixtral-8x7b", 16);
  const ModelSpec& model = rig.model;
  const TrainingSpec& tr = rig.tr;
  ParallelSpec par;
  par.dp = 16;
  par.ep = 16;
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  const auto costs = [&](const ModelSpec& m, const ParallelSpec& p, const TrainingSpec& t) {
    return rig.plan(m, p, t, layout).chunks.at(0);
  };
  const std::vector<std::vector<int>> group = {layout.expert_ep_group(1, 16, 0, 0, 0)};
  REQUIRE(group.front().size() == 16);
  const double gather = rig.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, group, sim::Bytes{16.0 * 8 * 8}).seconds();
  CHECK(gather > 0);
  const double layers = model.layers;  // every mixtral layer is MoE
  ModelSpec padded = model;
  padded.capacity_factor = 1.0;  // drop-and-pad: the counts come from the capacity, no gather
  const ChunkCost dropless = costs(model, par, tr), pad = costs(padded, par, tr);
  REQUIRE(dropless.fwd_ep_bytes == doctest::Approx(pad.fwd_ep_bytes));  // the same all-to-alls
  CHECK(dropless.fwd_ep - pad.fwd_ep == doctest::Approx(layers * gather).epsilon(1e-9));
  CHECK(dropless.bwd_ep == doctest::Approx(pad.bwd_ep).epsilon(1e-12));
  // Full recompute reruns the forward's preprocess in the backward: one more gather a layer.
  TrainingSpec full = tr;
  full.recompute = Recompute::Full;
  CHECK(costs(model, par, full).bwd_ep - costs(padded, par, full).bwd_ep == doctest::Approx(layers * gather).epsilon(1e-9));
  // DeepEP exchanges its layout inside its own notify kernel: no separate gather.
  ParallelSpec flex = par;
  flex.moe_dispatcher = MoeDispatcher::DeepEp;
  ModelSpec flex_padded = padded;
  CHECK(costs(model, flex, tr).fwd_ep == doctest::Approx(costs(flex_padded, flex, tr).fwd_ep).epsilon(1e-12));
}

TEST_CASE("workloads::plan_stage_costs: HybridEP all-gathers every rank's token-by-expert routing map in each forward") {
  // mixtral-8x7b on two DGX H100, ep 16 across the node boundary, HybridEP: each forward dispatch
  // runs HybridEP's metadata preprocessing, which all-gathers every rank's [tokens, experts] bool
  // routing map over the 16 ranks with NCCL (micro-batch x seq tokens x 8 experts x 1 B each), with
  // or without drop-and-pad; the backward reuses the handle, so it gathers only when it reruns the
  // forward. DeepEP gathers nothing apart from its dispatch.
  testing::StageRig rig(testing::nodes_of("dgx-h100", 2), "mixtral-8x7b", 16);
  const ModelSpec& model = rig.model;
  const TrainingSpec& tr = rig.tr;
  ParallelSpec hybrid;
  hybrid.dp = 16;
  hybrid.ep = 16;
  hybrid.moe_dispatcher = MoeDispatcher::HybridEp;
  ParallelSpec deepep = hybrid;
  deepep.moe_dispatcher = MoeDispatcher::DeepEp;
  const ParallelLayout layout{hybrid.tp, hybrid.dp, hybrid.pp};
  const auto costs = [&](const ModelSpec& m, const ParallelSpec& p, const TrainingSpec& t) {
    return rig.plan(m, p, t, layout).chunks.at(0);
  };
  const std::vector<std::vector<int>> group = {layout.expert_ep_group(1, 16, 0, 0, 0)};
  const double tokens = static_cast<double>(tr.micro_batch) * model.seq_len;
  REQUIRE(tokens >= 1024);
  const double map_bytes = 16.0 * tokens * model.experts;  // gathered: 16 ranks x tokens x 8 experts x 1 B
  const double gather = rig.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, group, sim::Bytes{map_bytes}).seconds();
  // Larger than the alltoall dispatcher's 1 KB count gather on the same ranks.
  CHECK(gather > rig.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, group, sim::Bytes{16.0 * 8 * 8}).seconds());
  const double layers = model.layers;
  const ChunkCost h = costs(model, hybrid, tr), d = costs(model, deepep, tr);
  REQUIRE(h.fwd_ep_bytes == doctest::Approx(d.fwd_ep_bytes));  // the same node-deduplicated all-to-alls
  CHECK(h.fwd_ep - d.fwd_ep == doctest::Approx(layers * gather).epsilon(1e-9));
  CHECK(h.bwd_ep == doctest::Approx(d.bwd_ep).epsilon(1e-12));
  // Drop-and-pad still preprocesses (only the host sync goes): the same gather.
  ModelSpec padded = model;
  padded.capacity_factor = 1.0;
  CHECK(costs(padded, hybrid, tr).fwd_ep - costs(padded, deepep, tr).fwd_ep == doctest::Approx(layers * gather).epsilon(1e-9));
  // Full recompute reruns the forward's dispatch in the backward: one more gather a layer.
  TrainingSpec full = tr;
  full.recompute = Recompute::Full;
  CHECK(costs(model, hybrid, full).bwd_ep - costs(model, deepep, full).bwd_ep == doctest::Approx(layers * gather).epsilon(1e-9));
}

TEST_CASE("workloads::load_hf_config: a Mixtral config is a mixture of 8 experts, top-2, never a dense 7B") {
  const ModelSpec m = load_hf_config(data("mixtral_8x7b_config.json"));
  CHECK(m.is_moe());
  CHECK(m.experts == 8);
  CHECK(m.experts_per_token == 2);
  CHECK(m.moe_ffn_hidden == 14336);
  CHECK(m.shared_experts == 0);
  CHECK(m.first_dense_layers == 0);
  CHECK(m.moe_layers_in(0, m.layers) == 32);
  // Mistral AI: 46.7 B parameters.
  CHECK(m.parameters() == doctest::Approx(46.7e9).epsilon(0.005));
  CHECK(m.parameters() == doctest::Approx(find_model_preset("mixtral-8x7b")->parameters()));
}

TEST_CASE("workloads::load_hf_config: Qwen-MoE's shared expert and DeepSeek-V3's dense first layers are read") {
  const ModelSpec q = load_hf_config(data("qwen1.5_moe_a2.7b_config.json"));
  CHECK(q.experts == 60);
  CHECK(q.experts_per_token == 4);
  CHECK(q.moe_ffn_hidden == 1408);
  CHECK(q.shared_experts == 4);  // shared_expert_intermediate_size 5632 = 4 x 1408
  // Qwen: 14.3 B parameters in total (model card); the shared expert's 1-wide gate is not counted.
  CHECK(q.parameters() == doctest::Approx(14.3e9).epsilon(0.01));
  const ModelSpec v3 = load_hf_config(data("deepseek_v3_config.json"));
  CHECK(v3.experts == 256);
  CHECK(v3.experts_per_token == 8);
  CHECK(v3.shared_experts == 1);
  CHECK(v3.first_dense_layers == 3);
  CHECK(v3.moe_layers_in(0, v3.layers) == 58);
  CHECK(v3.parameters() == doctest::Approx(find_model_preset("deepseek-v3")->parameters()));
}

TEST_CASE("workloads::load_hf_config: MoE keys clustersim does not model are an error that names them") {
  const std::string e = load_error("jamba_like_moe_config.json");
  CHECK(e.find("expert_layer_offset") != std::string::npos);
  CHECK(e.find("expert_layer_period") != std::string::npos);
  CHECK(e.find("does not model") != std::string::npos);
  // An expert setting without an expert count is not silently dropped either.
  try {
    parse_hf_config(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                        "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 64,
                        "num_experts_per_tok": 2})",
                    "inline");
    FAIL("expected an HfConfigError");
  } catch (const HfConfigError& err) {
    CHECK(std::string(err.what()).find("num_experts_per_tok") != std::string::npos);
  }
}

TEST_CASE("workloads::expert tensor parallelism: Megatron-Core's expert grid, sharded expert weights and the etp collectives") {
  // The grid: a stage's tp x cp x dp GPUs renumbered etp_rank + etp (ep_rank + ep edp_rank). With
  // etp = tp (the default) its ep groups are the ep consecutive data-parallel ranks of a tp rank.
  const ParallelLayout layout{2, 4, 1};  // tp 2, dp 4
  CHECK(layout.expert_ep_group(2, 4, 1, 0, 0) == layout.ep_group(4, 1, 0, 0));
  CHECK(layout.expert_ep_group(1, 4, 0, 1, 0) == std::vector<int>{4, 5, 6, 7});
  CHECK(layout.expert_tp_group(4, 2, 1, 0, 0) == std::vector<int>{4, 5, 6, 7});
  ParallelSpec p;
  p.tp = 2;
  p.dp = 4;
  p.ep = 4;
  CHECK(p.expert_tp() == 2);  // Megatron's default: expert_tensor_parallel_size = tp
  CHECK(p.expert_dp() == 1);  // 8 GPUs / (2 x 4)
  p.etp = 1;
  CHECK(p.expert_dp() == 2);

  // Memory: the routed experts divide by etp x ep.
  MemoryRequest q;
  q.model = small_moe();
  q.parallel = p;
  q.training.global_batch = 8;
  const double one = stage_memory(q, 0).find_line("routed experts (/ep): weights")->bytes.value;
  q.parallel.etp = 2;
  const double two = stage_memory(q, 0).find_line("routed experts (/ep): weights")->bytes.value;
  CHECK(one == doctest::Approx(2.0 * 3 * q.model.expert_parameters() / 4));
  CHECK(two == doctest::Approx(one / 2));

  // Compute: per GPU the expert FLOPs do not depend on etp (the slots grow as the width shrinks).
  OpShape sh{1, 512, 2, 1, false, 2, true, 4, 1.0};
  double flops[2];
  for (int i = 0; i < 2; ++i) {
    sh.etp = i + 1;
    double f = 0;
    for (const OpCost& op : layer_ops(q.model, sh, true)) {
      if (std::string_view(op.name).rfind("expert_", 0) == 0) f += op.fwd_flops.value;
    }
    flops[i] = f;
  }
  CHECK(flops[0] == doctest::Approx(flops[1]));

  // Communication: with etp != tp the expert layers all-gather and reduce-scatter their slots over
  // the etp group, beside the ep all-to-alls. Mixtral on one DGX H100: tp 2, dp 4, ep 2, etp 4.
  const testing::BuiltCluster cluster(testing::nodes_of("dgx-h100"));
  ModelSpec model = *find_model_preset("mixtral-8x7b");
  model.layers = 2;
  ParallelSpec par;
  par.tp = 2;
  par.dp = 4;
  par.ep = 2;
  TrainingSpec tr;
  tr.global_batch = 4;
  const ComputeModel compute = cluster.compute(tr.precision);
  const ParallelLayout grid{par.tp, par.dp, par.pp};
  CollectiveMemo memo(cluster.collectives());
  const StageCosts same = plan_stage_costs(StageCostInputs{model, par, tr, compute, grid, memo, CollectiveAlgo::Ring, 1, 1});
  par.etp = 4;
  const StageCosts wide = plan_stage_costs(StageCostInputs{model, par, tr, compute, grid, memo, CollectiveAlgo::Ring, 1, 1});
  const double buffer = moe_dispatch_bytes(model, OpShape{1, 4096, 2, 1, false, 2, true, 2, 1.0});
  // Per MoE layer and forward: the 2 all-to-alls (1/2 of the buffer each), plus an all-gather and
  // a reduce-scatter of 4 x the buffer over 4 GPUs (3/4 of it each).
  CHECK(same.chunks[0].fwd_ep_bytes == doctest::Approx(2 * 2 * buffer / 2));
  CHECK(wide.chunks[0].fwd_ep_bytes == doctest::Approx(2 * (2 * buffer / 2 + 2 * buffer * 3)));
  CHECK(wide.chunks[0].fwd_ep > same.chunks[0].fwd_ep);
  CHECK(wide.chunks[0].expert_params == doctest::Approx(same.chunks[0].expert_params / 2));
}

TEST_CASE("workloads::plan_stage_costs: an MoE layer's tensor-parallel exchange is its dispatcher's, over the expert tp group") {
  // Megatron-Core with sequence parallelism: an MoE layer runs the attention's all-gather and
  // reduce-scatter of the b s h activation, but none for its MLP; its token dispatcher all-gathers
  // the token-slots it received over the expert tensor-parallel group and reduce-scatters them
  // before the combine (token_dispatcher.py), blocking. Mixtral (top-2) on one DGX H100: tp 2, dp 4,
  // ep 2, both layers MoE.
  const testing::BuiltCluster cluster(testing::nodes_of("dgx-h100"));
  ModelSpec model = *find_model_preset("mixtral-8x7b");
  model.layers = 2;
  REQUIRE(model.moe_layers_in(0, model.layers) == 2);
  ParallelSpec par;
  par.tp = 2;
  par.dp = 4;
  par.ep = 2;
  par.sequence_parallel = true;
  TrainingSpec tr;
  tr.global_batch = 4;
  const ComputeModel compute = cluster.compute(tr.precision);
  const ParallelLayout grid{par.tp, par.dp, par.pp};
  CollectiveMemo memo(cluster.collectives());
  const auto costs = [&](bool overlap) {
    StageCostInputs in{model, par, tr, compute, grid, memo, CollectiveAlgo::Ring, 1, 1};
    in.tp_comm_overlap = overlap;
    return plan_stage_costs(in);
  };
  const double act = 4096.0 * model.hidden * 2;  // s h x bf16
  const double buffer = moe_dispatch_bytes(model, OpShape{1, 4096, 2, 1, true, 2, true, 2, 1.0});
  CHECK(buffer == doctest::Approx(act * model.experts_per_token / par.tp));
  // etp = tp (Megatron-Core's default): per layer and forward the 2 all-to-alls (1/2 of the buffer
  // each) and the dispatcher's all-gather and reduce-scatter of tp x the buffer (1/2 of it each).
  const StageCosts same = costs(false);
  CHECK(same.chunks[0].fwd_ep_bytes == doctest::Approx(2 * (2 * buffer / 2 + 2 * buffer)));
  // The sequence-parallel pair is the attention's only: an all-gather and a reduce-scatter, 1/2 of
  // act each, per layer and pass (forward, backward) x 2 layers (a dense layer sends twice that),
  // and backward the QKV input's re-gather for the weight gradient: 5 halves of act per layer.
  CHECK(same.tp_bytes_per_gpu == doctest::Approx((2 + 3) * act / 2 * 2));
  // With tp_comm_overlap the dispatcher's exchange stays blocking: it does not shrink.
  const StageCosts overlapped = costs(true);
  CHECK(overlapped.chunks[0].fwd_ep == doctest::Approx(same.chunks[0].fwd_ep));
  // etp = 1 (Megatron-Bridge's MoE recipes): no exchange beside the all-to-alls, which now carry
  // the whole layer's slots from each tp rank (ep groups over tp x dp).
  par.etp = 1;
  const StageCosts narrow = costs(false);
  CHECK(narrow.chunks[0].fwd_ep_bytes < same.chunks[0].fwd_ep_bytes);
  CHECK(narrow.tp_bytes_per_gpu == doctest::Approx(same.tp_bytes_per_gpu));
}
