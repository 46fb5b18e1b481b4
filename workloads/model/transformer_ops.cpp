#include "workloads/model/transformer_ops.h"

#include <algorithm>
#include <cmath>

#include "workloads/model/mamba_ops.h"
#include "workloads/model/moe_host_ops.h"
#include "workloads/model/mtp.h"
#include "workloads/model/attention_variants.h"
#include "workloads/model/expert_bias.h"
#include "workloads/model/expert_probs.h"
#include "workloads/model/eager_layer_ops.h"
#include "workloads/model/eager_squared_relu.h"
#include "workloads/model/expert_padding.h"
#include "workloads/model/glu_clamp.h"
#include "workloads/model/op_builders.h"
#include "workloads/model/sequential_experts.h"
#include "workloads/model/unfused_rope.h"

namespace clustersim::workloads {
namespace {

inline constexpr double kSwiGluFlopsPerElement = 6.0;  // silu (exp, add, divide, multiply) * up

using ops::gemm;
using ops::pointwise;

struct Dims {
  double tokens;       // b*s
  double residual;     // elements of one [s, b, h] activation on this GPU (h/t-sharded with SP)
  double heads;        // query heads on this GPU
  double kv_heads;     // key/value heads on this GPU (replicated when fewer than t)
  double head_dim;     // Q/K width of one head (QK^T's reduction)
  double v_dim;        // V width of one head (PV's output; head_dim except under MLA)
  double ffn;          // MLP intermediate width on this GPU
  double p;            // bytes per element
};

Dims dims_of(const ModelSpec& m, const OpShape& sh) {
  Dims d{};
  d.tokens = static_cast<double>(sh.micro_batch) * sh.seq_len / std::max(1, sh.cp);
  d.residual = d.tokens * m.hidden / (sh.sequence_parallel ? sh.tp : 1);
  d.heads = static_cast<double>(m.heads) / sh.tp;
  const int kv = m.is_mla() ? m.heads : m.kv_heads > 0 ? m.kv_heads : m.heads;  // MLA: per-head K and V
  d.kv_heads = std::max(1.0, static_cast<double>(kv) / sh.tp);
  d.head_dim = qk_head_dim(m);
  d.v_dim = v_head_dim(m);
  d.ffn = static_cast<double>(m.ffn_hidden) / sh.tp;
  d.p = sh.precision_bytes;
  return d;
}

// A memory-bound op run as several eager PyTorch kernels a pass: its bytes per element and its
// kernel counts (eager_layer_ops.h, eager_squared_relu.h).
OpCost eager_pointwise(std::string_view name, OpKind kind, double elements, double flops_per_element, double fwd_bytes,
                       double bwd_bytes, int fwd_kernels, int bwd_kernels) {
  OpCost op = pointwise(name, kind, elements, flops_per_element, fwd_bytes, bwd_bytes);
  op.fwd_kernels = fwd_kernels;
  op.bwd_kernels = bwd_kernels;
  return op;
}

OpCost norm(std::string_view name, const ModelSpec& m, const Dims& d) {
  const double flops = m.norm == NormKind::LayerNorm ? kLayerNormFlopsPerElement : kRmsNormFlopsPerElement;
  if (m.eager_layer_ops && m.norm == NormKind::RmsNorm)  // eager RMSNorm (model/eager_layer_ops.h)
    return eager_pointwise(name, OpKind::Norm, d.residual, flops, kEagerRmsNormFwdPerP * d.p + kEagerRmsNormFwdFixed,
                           kEagerRmsNormBwdPerP * d.p + kEagerRmsNormBwdFixed, kEagerRmsNormFwdKernels, kEagerRmsNormBwdKernels);
  // fwd: read x, write y; bwd: read x and dy, write dx.
  return pointwise(name, OpKind::Norm, d.residual, flops, 2.0 * d.p, 3.0 * d.p);
}

OpCost dropout(std::string_view name, double elements, double p) {
  // fwd: read x, write y and the uint8 mask; bwd: read dy and the mask, write dx.
  const double per = 2.0 * p + kDropoutMaskBytesPerElement;
  OpCost op = pointwise(name, OpKind::Elementwise, elements, 1.0, per, per);
  op.bwd_reads_input = false;  // dx = dy x mask / keep
  return op;
}

OpCost residual_add(std::string_view name, const Dims& d) {
  OpCost op = pointwise(name, OpKind::Elementwise, d.residual, 1.0, 3.0 * d.p, 3.0 * d.p);
  op.bwd_reads_input = false;  // dx = dy for both inputs
  return op;
}

// The attention core over QK width d.head_dim and V width d.v_dim; a sliding-window model's
// fused kernel does mean_attention_work_factor of the full work (attention_variants.h), and a
// packed sequence's (ModelSpec::packed_sample_len = sum l_i^2 / s) attends within its samples:
// s / l packs of l tokens each, sum l_i^2 / s^2 = l / s of the pairs, each sample windowed as
// a sequence of l tokens.
void attention_core(std::vector<OpCost>& ops, const ModelSpec& m, const OpShape& sh, const Dims& d) {
  const double s = sh.seq_len;
  const double q_len = s / std::max(1, sh.cp);  // local queries; keys and values: all s tokens
  const double batch = sh.micro_batch * d.heads;
  if (sh.flash_attention) {
    OpCost op = gemm("flash_attention", OpKind::Attention, q_len, s, d.head_dim, batch, d.p, false);
    op.attention_kernel = m.attention_kernel;
    // QK^T (over head_dim) and PV (over v_dim) in one kernel, scaled to the pairs it attends.
    const double sample = m.packed_sample_len > 0 ? std::min(m.packed_sample_len, s) : s;
    const double window = mean_attention_work_factor(m, sample) * (sample / s);
    op.fwd_flops = sim::Flops{2.0 * q_len * s * batch * (d.head_dim + d.v_dim) * window};
    op.bwd_flops = op.fwd_flops * 2.0;
    // fwd reads Q, K, V and writes O plus the fp32 log-sum-exp; bwd reads Q, K, V, O, dO and
    // writes dQ, dK, dV. The s x s scores never leave on-chip memory. Under context parallelism
    // every K/V chunk of the sequence is read once.
    const double q = d.tokens * d.heads * (d.head_dim + d.v_dim);  // Q in, O out
    const double kv = d.tokens * std::max(1, sh.cp) * d.kv_heads * (d.head_dim + d.v_dim);
    op.fwd_bytes = sim::Bytes{d.p * (q + kv) + 4.0 * batch * q_len};
    op.bwd_bytes = sim::Bytes{d.p * (2.0 * q + 2.0 * kv) + 4.0 * batch * q_len};
    ops.push_back(op);
    return;
  }
  const double scores = batch * q_len * s;
  ops.push_back(gemm("attention_scores", OpKind::Attention, q_len, s, d.head_dim, batch, d.p, false));
  ops.push_back(pointwise("softmax", OpKind::Elementwise, scores, kSoftmaxFlopsPerElement,
                          2.0 * d.p, 3.0 * d.p));
  if (m.trains_with_dropout()) ops.push_back(dropout("attention_dropout", scores, d.p));
  ops.push_back(gemm("attention_values", OpKind::Attention, q_len, d.v_dim, s, batch, d.p, false));
}

// Rotary position embedding (RoFormer, Su et al. 2021) rotates Q and K in place after the QKV
// projection: one fused memory-bound kernel (Megatron/TE fused RoPE) reading and writing them; the
// backward rotates their gradients back.
// Fused (Transformer Engine's kernel: each element read and written once per pass) or, for YaRN
// under Megatron-Bridge, Megatron-Core's unfused eager rotation (unfused_rope.h).
OpCost rotary(const Dims& d, bool unfused, bool eager) {
  const double elements = d.tokens * (d.heads + d.kv_heads) * d.head_dim;
  constexpr double kRotaryFlopsPerElement = 3.0;  // x*cos + rotate_half(x)*sin
  if (eager) {  // torchtitan's complex-form rotation as eager ops (model/eager_layer_ops.h)
    const double bytes = kEagerRopePerP * d.p + kEagerRopeFixed;
    return eager_pointwise("rotary_embedding", OpKind::Elementwise, elements, kRotaryFlopsPerElement, bytes, bytes,
                           kEagerRopeKernels, kEagerRopeKernels);
  }
  if (!unfused)
    return pointwise("rotary_embedding", OpKind::Elementwise, elements, kRotaryFlopsPerElement, 2.0 * d.p, 2.0 * d.p);
  OpCost op = pointwise("rotary_embedding", OpKind::Elementwise, elements, kRotaryFlopsPerElement,
                        kUnfusedRopeFwdAccesses * d.p, kUnfusedRopeBwdAccesses * d.p);
  op.fwd_host_ops = kUnfusedRopeKernels - 1.0;  // the kernels beyond the op's own one
  op.bwd_host_ops = kUnfusedRopeKernels - 1.0;
  return op;
}

void mlp(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& d) {
  const double h = m.hidden;
  if (m.mlp == MlpKind::Gelu) {
    ops.push_back(gemm("mlp_fc1", OpKind::Gemm, d.tokens, d.ffn, h, 1, d.p, true));
    if (m.eager_squared_relu) {  // relu and pow as eager torch ops (model/eager_squared_relu.h)
      ops.push_back(eager_pointwise("squared_relu", OpKind::Elementwise, d.tokens * d.ffn, kSquaredReluFlopsPerElement,
                                    kEagerSquaredReluFwdAccesses * d.p, kEagerSquaredReluBwdAccesses * d.p,
                                    kEagerSquaredReluFwdKernels, kEagerSquaredReluBwdKernels));
    } else {
      ops.push_back(pointwise("gelu", OpKind::Elementwise, d.tokens * d.ffn, kGeluFlopsPerElement,
                              2.0 * d.p, 3.0 * d.p));
    }
    ops.push_back(gemm("mlp_fc2", OpKind::Gemm, d.tokens, h, d.ffn, 1, d.p, true));
    return;
  }
  ops.push_back(gemm("mlp_gate", OpKind::Gemm, d.tokens, d.ffn, h, 1, d.p, true));
  ops.push_back(gemm("mlp_up", OpKind::Gemm, d.tokens, d.ffn, h, 1, d.p, true));
  ops.back().second_fc1_half = true;  // linear_fc1 is one 2 x ffn GEMM with mlp_gate
  // silu(gate) * up: fwd reads gate and up, writes the product; bwd also reads dy, writes both grads.
  if (m.eager_layer_ops) {  // silu, then the product, as eager ops (model/eager_layer_ops.h)
    ops.push_back(eager_pointwise("swiglu", OpKind::Elementwise, d.tokens * d.ffn, kSwiGluFlopsPerElement,
                                  kEagerSwiGluFwdAccesses * d.p, kEagerSwiGluBwdAccesses * d.p, kEagerSwiGluFwdKernels,
                                  kEagerSwiGluBwdKernels));
  } else {
    ops.push_back(pointwise("swiglu", OpKind::Elementwise, d.tokens * d.ffn, kSwiGluFlopsPerElement,
                            3.0 * d.p, 5.0 * d.p));
  }
  ops.push_back(gemm("mlp_down", OpKind::Gemm, d.tokens, h, d.ffn, 1, d.p, true));
}

void add_host_work(OpCost& op, const MoeHostWork& fwd, const MoeHostWork& bwd) {
  op.fwd_host_ops += fwd.ops;
  op.fwd_dist_calls += fwd.dist_calls;
  op.bwd_host_ops += bwd.ops;
  op.bwd_dist_calls += bwd.dist_calls;
}

// Charges an MoE layer's host work (moe_host_ops.h) to its ops, from the router at ops[router] on:
// each phase to the op it runs beside, the dispatch's to the first op after the dispatcher's host
// sync (the permute's; GPT-OSS's GLU clamp syncs again later in the layer, glu_clamp.h).
void add_moe_host_work(std::vector<OpCost>& ops, std::size_t router, const MoeHostPhases& p) {
  bool after_sync = false, experts_charged = false;
  for (std::size_t i = router; i < ops.size(); ++i) {
    OpCost& op = ops[i];
    if (after_sync) {
      add_host_work(op, p.dispatch_fwd, p.dispatch_bwd);
      after_sync = false;
    }
    if (op.name == "moe_router") add_host_work(op, p.router_fwd, p.router_bwd);
    if (op.name == "moe_permute") add_host_work(op, p.preprocess_fwd, p.preprocess_bwd);
    if (op.name == "moe_sort_chunks" || op.name == "moe_unsort_chunks") add_host_work(op, p.sort_fwd, p.sort_bwd);
    if (op.name == "expert_act" && !experts_charged) {  // once: SequentialMLP has one per expert
      add_host_work(op, p.experts_fwd, p.experts_bwd);
      experts_charged = true;
    }
    if (op.name == "moe_unpermute") add_host_work(op, p.combine_fwd, p.combine_bwd);
    if (op.name == "moe_permute" && op.host_sync_after) after_sync = true;  // the dispatcher's sync
  }
}

// The mixture of experts that replaces the MLP in an MoE layer (see layer_ops in the header).
void moe_mlp(std::vector<OpCost>& ops, const ModelSpec& m, const OpShape& sh, const Dims& d) {
  const double h = m.hidden;
  const double k = m.experts_per_token;
  const std::size_t router = ops.size();
  ops.push_back(gemm("moe_router", OpKind::Gemm, d.tokens, m.experts, h, 1, d.p, false));
  ops.push_back(pointwise("moe_router_topk", OpKind::Elementwise, d.tokens * m.experts, kSoftmaxFlopsPerElement,
                          4.0 + 4.0, 4.0 * 3.0));
  // With sequence parallelism each tp rank routes its 1/t of the tokens.
  const double own_tokens = d.tokens / (sh.sequence_parallel ? sh.tp : 1);
  const double routed = own_tokens * k;
  // LatentMoE (ModelSpec::moe_latent_size): the router has read the full hidden state; then
  // MoELayer.preprocess runs fc1_latent_proj on this rank's tokens (a duplicated TELinear: whole
  // weight, no tensor-parallel split) before the permutation, so everything from the permute to
  // the unpermute moves latent-wide tokens, and fc2_latent_proj follows the combine.
  const double w = m.expert_io_width();
  const bool latent = m.moe_latent_size > 0;
  if (latent) ops.push_back(gemm("moe_fc1_latent_proj", OpKind::Gemm, own_tokens, w, h, 1, d.p, true));
  // Under the flex dispatcher the permute runs on the receiving rank (DeepEP: a fused permute of the
  // received tokens; HybridEP: runtime.dispatch_with_permute's permute pass over the received
  // buffer, its row_id_map from a "permute preprocessing" step, unfused unless a later
  // fuse_permute_dispatch option is set): the same copy of every slot, charged here.
  ops.push_back(pointwise("moe_permute", OpKind::Elementwise, routed * w, 0.0, 2.0 * d.p, 2.0 * d.p));
  // The all-to-all's split sizes and the grouped GEMM's per-expert token counts are computed on the
  // device and needed on the host: Megatron-Core's token dispatchers copy them over and synchronize
  // once per MoE layer forward (MoEAlltoAllTokenDispatcher cuda_sync_point: "before_ep_alltoall"
  // with expert parallelism, "before_finish" without). Drop-and-pad (capacity_factor > 0, padded
  // to capacity) under the alltoall dispatcher knows every count from the capacity: preprocess
  // returns them as a host tensor before it sets a sync point, which stays "no_sync" (core_r0.12.0
  // token_dispatcher.py MoEAlltoAllTokenDispatcher.preprocess, _maybe_dtoh_and_synchronize).
  ops.back().host_sync_after = !(m.capacity_factor > 0 && sh.moe_dispatcher == MoeDispatcher::AllToAll);
  if (m.shared_experts > 0) {
    ModelSpec shared = m;
    shared.ffn_hidden = m.shared_experts * m.moe_ffn_hidden;
    Dims sd = d;
    sd.ffn = static_cast<double>(shared.ffn_hidden) / sh.tp;
    mlp(ops, shared, sd);
    ops.back().name = "shared_expert_down";
  }
  const double local_experts = static_cast<double>(m.experts) / std::max(1, sh.ep);
  // Token-slots on this GPU's experts: a stage's slots over its ep x edp expert groups, each
  // shared by etp GPUs, = tokens x k x etp / tp (etp = tp: tokens x k).
  const double etp = sh.etp > 0 ? sh.etp : sh.tp;
  const double slots = d.tokens * k * sh.moe_load_factor * etp / sh.tp;
  Dims ed = d;
  ed.tokens = slots / local_experts;  // per expert: a grouped GEMM of local_experts GEMMs
  ed.ffn = static_cast<double>(m.moe_ffn_hidden) / etp;
  // Megatron-Core's alltoall dispatcher receives the token-slots grouped by source rank; with
  // more than one local expert it regroups them by expert before the grouped GEMM and back before
  // the combine (MoEAlltoAllTokenDispatcher, sort_chunks_by_idxs): one more read and write of
  // every slot's hidden vector each way, in both passes. The flex dispatcher does not: its rank
  // permutes what it received straight into expert order (_DeepepManager /
  // _HybridEPManager get_permuted_hidden_states_by_experts, core_r0.16.0), one permute.
  const bool sorts_chunks = sh.ep > 1 && local_experts > 1 && sh.moe_dispatcher == MoeDispatcher::AllToAll;
  if (sorts_chunks) ops.push_back(pointwise("moe_sort_chunks", OpKind::Elementwise, slots * w, 0.0, 2.0 * d.p, 2.0 * d.p));
  const bool grouped = sh.moe_grouped_gemm;
  const bool pads = grouped && pads_expert_rows(sh);
  if (pads) ops.push_back(expert_pad_op(slots, w, d.p));
  // moe_apply_probs_on_input: the probabilities multiply the (padded) rows before fc1 (expert_probs.h).
  if (m.moe_apply_probs_on_input) ops.push_back(probs_on_input_op(slots, w, d.p));
  const std::size_t first = ops.size();
  ModelSpec expert = m;  // the routed experts map w -> moe_ffn_hidden -> w
  expert.hidden = static_cast<int>(w);
  // Grouped (TEGroupedMLP): one op per linear over all local experts (batch = local experts).
  // Sequential (SequentialMLP, sequential_experts.h): each local expert's own ops at its rows,
  // padded to SequentialMLP's fp8 alignment where its count is not already a multiple.
  const int experts_here = grouped ? 1 : static_cast<int>(local_experts);
  const bool seq_pads = !grouped && sequential_pads_rows(sh.quantized_experts, m.capacity_factor > 0, ed.tokens);
  Dims run = ed;
  if (seq_pads) run.tokens = std::ceil(ed.tokens / kSequentialMlpFp8RowAlignment) * kSequentialMlpFp8RowAlignment;
  for (int e = 0; e < experts_here; ++e) {
    if (seq_pads) ops.push_back(sequential_pad_op(ed.tokens, w, d.p));
    const std::size_t own = ops.size();
    mlp(ops, expert, run);
    std::size_t last_gemm = own;
    for (std::size_t i = own; i < ops.size(); ++i)
      if (ops[i].kind == OpKind::Gemm) last_gemm = i;
    bool fc1_named = false;
    for (std::size_t i = own; i < ops.size(); ++i) {
      OpCost& op = ops[i];
      if (grouped) {
        const double scale = local_experts;
        op.fwd_flops = op.fwd_flops * scale;
        op.bwd_flops = op.bwd_flops * scale;
        op.fwd_bytes = op.fwd_bytes * scale;
        op.bwd_bytes = op.bwd_bytes * scale;
        if (op.kind == OpKind::Gemm) op.batch = static_cast<int>(local_experts);
      }
      // By position, not by width: the last GEMM projects back to hidden (GPT-OSS's experts are as
      // wide as its hidden size, so widths do not tell them apart).
      // A gated MLP's gate and up projections are one GroupedLinear (TEGroupedMLP linear_fc1, width
      // 2 x moe_ffn_hidden), or one Linear per expert: the second half, "expert_up"
      // (OpCost::second_fc1_half, set by mlp()), issues no GEMMs or casts of its own
      // (ComputeModel::launches, fp8_cast_seconds).
      if (op.kind != OpKind::Gemm) op.name = "expert_act";
      else if (i == last_gemm) op.name = "expert_down";
      else {
        op.name = fc1_named ? "expert_up" : "expert_up_gate";
        fc1_named = true;
      }
    }
  }
  // Eager around the fused activation unless Transformer Engine's op fuser runs the expert MLP
  // (OpShape::te_op_fuser): the GLU input's clamp, before the activation (glu_clamp.h), and the
  // second linear's bias, probability-weighted per expert outside the grouped GEMM (expert_bias.h).
  if (m.glu_clamp && !sh.te_op_fuser) {
    const auto act = std::find_if(ops.begin() + static_cast<std::ptrdiff_t>(first), ops.end(),
                                  [](const OpCost& op) { return op.name == "expert_act"; });
    ops.insert(act, glu_clamp_op(slots * ed.ffn, d.p));
  }
  if (m.expert_bias && !sh.te_op_fuser) ops.push_back(expert_bias_op(slots, w, d.p, local_experts));
  if (pads) ops.push_back(expert_unpad_op(slots, w, d.p));
  if (!grouped && experts_here > 1) ops.push_back(sequential_concat_op(slots, w, d.p));
  if (sorts_chunks) ops.push_back(pointwise("moe_unsort_chunks", OpKind::Elementwise, slots * w, 0.0, 2.0 * d.p, 2.0 * d.p));
  ops.push_back(pointwise("moe_unpermute", OpKind::Elementwise, routed * w, 1.0, 2.0 * d.p, 2.0 * d.p));
  if (latent) ops.push_back(gemm("moe_fc2_latent_proj", OpKind::Gemm, own_tokens, h, w, 1, d.p, true));
  MoeHostPhases host = moe_host_phases(std::max(1, sh.ep), sh.tp, static_cast<int>(etp), local_experts);
  if (!grouped) {  // SequentialMLP's own host work in place of TEGroupedMLP's
    host.experts_fwd = sequential_experts_host_fwd(experts_here, sh.quantized_experts);
    host.experts_bwd = {};
  }
  add_moe_host_work(ops, router, host);
}

}  // namespace

double moe_dispatch_bytes(const ModelSpec& model, const OpShape& shape) {
  // Context parallelism: this rank routes its own s/cp tokens (as its expert GEMMs see them).
  const double tokens = static_cast<double>(shape.micro_batch) * shape.seq_len / std::max(1, shape.cp);
  return tokens * model.experts_per_token * model.expert_io_width() * shape.precision_bytes / std::max(1, shape.tp);
}

namespace {
// Tags each op of a layer with the part of the layer it runs in (GraphPart), in forward order:
// the attention block up to its residual add; then the MLP block, or an MoE layer's router part
// (pre-MLP norm, router, top-k), its preprocess (latent projection, permute), its shared experts
// (the dense MLP ops between the permute and the routed experts) and the rest.
void tag_graph_parts(std::vector<OpCost>& ops, bool moe) {
  GraphPart part = GraphPart::Attention;
  for (OpCost& op : ops) {
    if (op.name == "post_attention_norm") part = moe ? GraphPart::MoeRouter : GraphPart::Mlp;
    if (moe && (op.name == "moe_fc1_latent_proj" || op.name == "moe_permute")) part = GraphPart::MoePreprocess;
    else if (part == GraphPart::MoePreprocess) part = GraphPart::MoeSharedExperts;
    if (part == GraphPart::MoeSharedExperts && !op.name.starts_with("mlp_") && !op.name.starts_with("shared_expert") &&
        op.name != "gelu" && op.name != "squared_relu" && op.name != "swiglu")
      part = GraphPart::MoeRest;
    op.graph_part = part;
  }
}
}  // namespace

// Dropout after attention and MLP when the model trains with it (ModelSpec::trains_with_dropout:
// GELU/GPT models by default, as in Megatron's GPT recipe; Llama recipes train with dropout 0).
std::vector<OpCost> layer_ops(const ModelSpec& model, const OpShape& shape, bool moe_layer) {
  const Dims d = dims_of(model, shape);
  const bool has_dropout = model.trains_with_dropout();
  std::vector<OpCost> ops;
  ops.push_back(norm("input_norm", model, d));
  if (model.is_mla()) {
    mla_projection_ops(ops, model, shape);
    ops.push_back(mla_rotary(model, shape));
  } else {
    const double qkv_width = (d.heads + 2.0 * d.kv_heads) * d.head_dim;
    ops.push_back(gemm("qkv_proj", OpKind::Gemm, d.tokens, qkv_width, model.hidden, 1, d.p, true));
    ops.back().norm_fed = true;  // linear_qkv is a TELayerNormColumnParallelLinear
    // YaRN RoPE runs unfused under Megatron-Bridge (unfused_rope.h).
    if (!model.learned_positions()) ops.push_back(rotary(d, model.yarn_rope, model.eager_layer_ops));
    // An eager Llama copies the kv heads to the query heads' width (model/eager_layer_ops.h).
    if (model.eager_layer_ops && d.kv_heads < d.heads) {
      const double written = 2.0 * d.tokens * d.heads * d.head_dim;  // K and V at the query width
      const double bytes = d.p * (1.0 + d.kv_heads / d.heads);
      OpCost op = eager_pointwise("repeat_kv", OpKind::Elementwise, written, 0.0, bytes, bytes, kEagerRepeatKvKernels,
                                  kEagerRepeatKvKernels);
      op.bwd_reads_input = false;  // the backward sums the gradient's copies
      ops.push_back(op);
    }
  }
  attention_core(ops, model, shape, d);
  ops.push_back(gemm("attention_out_proj", OpKind::Gemm, d.tokens, model.hidden, d.heads * d.v_dim, 1, d.p, true));
  if (has_dropout) ops.push_back(dropout("attention_out_dropout", d.residual, d.p));
  ops.push_back(residual_add("attention_residual", d));
  ops.push_back(norm("post_attention_norm", model, d));
  if (moe_layer && model.is_moe()) moe_mlp(ops, model, shape, d);
  else {
    const std::size_t fc1 = ops.size();
    mlp(ops, model, d);
    ops[fc1].norm_fed = true;  // a dense layer's linear_fc1 is a TELayerNormColumnParallelLinear
  }
  if (has_dropout) ops.push_back(dropout("mlp_dropout", d.residual, d.p));
  ops.push_back(residual_add("mlp_residual", d));
  tag_graph_parts(ops, moe_layer && model.is_moe());
  return ops;
}

// Vocab-parallel embedding: every rank writes the full [s, b, h] output (zeros outside its vocab
// shard) before the all-reduce; learned positions add a second lookup and an add.
std::vector<OpCost> embedding_ops(const ModelSpec& model, const OpShape& shape) {
  const Dims d = dims_of(model, shape);
  const double elements = d.tokens * model.hidden;
  const bool learned = model.positions == PositionKind::Learned ||
                       (model.positions == PositionKind::Auto && model.mlp == MlpKind::Gelu);
  const double passes = learned ? 2.0 : 1.0;
  std::vector<OpCost> ops;
  ops.push_back(pointwise("embedding", OpKind::Embedding, elements, learned ? 1.0 : 0.0,
                          passes * 2.0 * d.p, passes * 2.0 * d.p));
  if (model.trains_with_dropout()) ops.push_back(dropout("embedding_dropout", d.residual, d.p));
  return ops;
}

// The logits GEMM is kept out of FP8 as Transformer Engine recipes keep the output layer in
// higher precision. Cross-entropy runs in fp32 over the vocab shard (Megatron casts the logits).
std::vector<OpCost> head_ops(const ModelSpec& model, const OpShape& shape) {
  const Dims d = dims_of(model, shape);
  const double vocab_shard = static_cast<double>(model.vocab) / shape.tp;
  std::vector<OpCost> ops;
  ops.push_back(norm("final_norm", model, d));
  ops.push_back(gemm("logits", OpKind::Gemm, d.tokens, vocab_shard, model.hidden, 1, d.p, false));
  ops.push_back(pointwise("cross_entropy", OpKind::Loss, d.tokens * vocab_shard,
                          kCrossEntropyFlopsPerElement, d.p + 4.0, 4.0 + d.p));
  ops.back().cross_entropy = shape.cross_entropy;  // unfused paths: model/cross_entropy_kernels.h
  ops.back().loss_classes = vocab_shard;
  return ops;
}

OpTotals sum_ops(const std::vector<OpCost>& ops) {
  OpTotals t;
  for (const OpCost& op : ops) {
    t.fwd_flops += op.fwd_flops;
    t.bwd_flops += op.bwd_flops;
    t.fwd_bytes += op.fwd_bytes;
    t.bwd_bytes += op.bwd_bytes;
    if (op.is_matmul()) {
      t.fwd_matmul_flops += op.fwd_flops;
      t.bwd_matmul_flops += op.bwd_flops;
    }
  }
  return t;
}

namespace {
OpShape whole_model_shape(const ModelSpec& model) {
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = model.seq_len;
  sh.tp = 1;
  sh.flash_attention = model.flash_attention;
  return sh;
}
}  // namespace

// Summed over the layer kinds (mamba_ops.h): transformer and MoE layers, or a hybrid's Mamba,
// attention and MLP layers.
sim::Flops model_flops_per_iteration(const ModelSpec& model, int global_batch) {
  const OpShape sh = whole_model_shape(model);
  const OpTotals head = sum_ops(head_ops(model, sh));
  sim::Flops per_sequence = head.fwd_matmul_flops + head.bwd_matmul_flops;
  for (const LayerKind kind : kLayerKinds) {
    const int count = model.layers_of_kind_in(kind, 0, model.layers);
    if (count == 0) continue;
    const OpTotals layer = sum_ops(layer_ops_of_kind(model, sh, kind));
    per_sequence += (layer.fwd_matmul_flops + layer.bwd_matmul_flops) * static_cast<double>(count);
  }
  if (model.mtp_layers > 0) {  // each MTP module (mtp.h): its layer, eh_proj and its own logits
    const OpTotals layer = sum_ops(layer_ops(model, sh, mtp_layer_is_moe(model)));
    const OpTotals extra = sum_ops(mtp_extra_ops(model, sh));
    per_sequence += (layer.fwd_matmul_flops + layer.bwd_matmul_flops + extra.fwd_matmul_flops + extra.bwd_matmul_flops) *
                    static_cast<double>(model.mtp_layers);
  }
  return per_sequence * global_batch;
}

std::size_t rerun_dead_from(const std::vector<OpCost>& layer) {
  std::size_t from = layer.size();
  // The last op is dead (its output leaves the layer); each earlier one while its successor is
  // dead and reads no values of it.
  while (from > 0 && (from == layer.size() || !layer[from].bwd_reads_input)) --from;
  return from;
}

sim::Flops hardware_flops_per_iteration(const ModelSpec& model, int global_batch, Recompute recompute,
                                        unsigned recompute_save, bool recompute_dce) {
  const sim::Flops base = model_flops_per_iteration(model, global_batch);
  if (recompute == Recompute::None) return base;
  sim::Flops extra;
  for (const LayerKind kind : kLayerKinds) {
    const double count = model.layers_of_kind_in(kind, 0, model.layers);
    if (count == 0) continue;
    const std::vector<OpCost> ops = layer_ops_of_kind(model, whole_model_shape(model), kind);
    const std::size_t dead_from = recompute_dce ? rerun_dead_from(ops) : ops.size();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpCost& op = ops[i];
      const bool recomputed = recompute == Recompute::Full
                                  ? op.is_matmul() && !saved_by_recompute_save(op.name, recompute_save) && i < dead_from
                                  : op.kind == OpKind::Attention;
      if (recomputed) extra += op.fwd_flops * count;
    }
  }
  return base + extra * static_cast<double>(global_batch);
}

}  // namespace clustersim::workloads
