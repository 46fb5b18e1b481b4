// Attention that is not standard multi-head / grouped-query attention over the whole causal
// sequence: multi-head latent attention (MLA) and sliding-window attention. transformer_ops.cpp
// builds every layer; this file says what these variants change in it.
//
// MLA (DeepSeek-V2, arXiv:2405.04434 Sec. 2.1; DeepSeek-V3, arXiv:2412.19437 Sec. 2.1.1; Kimi-K2
// uses the same DeepseekV3 architecture). Per token, with H heads of which t-th on each
// tensor-parallel rank:
//   q_down  [h -> r_q]            q_norm (RMSNorm over r_q)   q_up  [r_q -> H (nope + rope)]
//   kv_down [h -> r_kv + rope]    kv_norm (RMSNorm over r_kv) kv_up [r_kv -> H (nope + v)]
//   rotary on the H rope-parts of Q and the one shared rope key; attention QK^T over nope + rope,
//   PV over v; out-projection [H v -> h].
// Tensor parallelism as Megatron-Core's MLASelfAttention (megatron/core/transformer/
// multi_latent_attention.py): the up-projections are column-parallel (heads split over t), the
// out-projection row-parallel, and the down-projections are duplicated on every rank -- with
// sequence parallelism each rank runs them on its s/t tokens and all-gathers the small latents,
// without it every rank runs them on all tokens. The latent all-gathers (r_q + r_kv + rope wide,
// against the h-wide gather of standard attention) are not costed separately: the
// tensor-parallel collectives stay sized by h, which overstates MLA's by at most h / (r_q + r_kv
// + rope) (DeepSeek-V3: 3.4x of a small term; the rows scored run tp 1-2).
//
// Sliding-window attention (Longformer, Beltagy et al. 2020; Mistral 7B; GPT-OSS): on a sliding
// layer query i attends keys max(0, i - w + 1)..i, min(i + 1, w) of them, so a sequence of s
// tokens has causal_attended_pairs(s, w) = sum_i min(i + 1, w) query-key pairs instead of
// s (s + 1) / 2. FlashAttention-2 (>= 2.3, window_size) and cuDNN skip the key blocks outside the
// window, so the fused kernel's work scales with those pairs. The attention op counts work as
// SC'21 does (s^2 pairs for a full layer; the compute model executes the causal half,
// attention_causal_fraction); a sliding layer counts 2 x pairs, so that the same half is exactly
// its pairs. Memory is unchanged: FlashAttention stores Q, K, V, O and the softmax statistics,
// none of which depend on w. Eager (non-flash) attention materialises the masked s x s scores and
// does the full work. Attention sinks (GPT-OSS) add one logit per head to each softmax row:
// negligible work, `heads` parameters per layer (ModelSpec::attention_parameters).
#pragma once

#include <vector>

#include "workloads/model/transformer_ops.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// sum over i in [0, s) of min(i + 1, w): the query-key pairs of causal attention over s tokens
// through a window of w keys (w >= s: s (s + 1) / 2).
double causal_attended_pairs(double s, double w);

// The attention op's work on one layer relative to full attention over s tokens: 1 for a full
// layer, min(1, 2 x causal_attended_pairs(s, w) / s^2) for a sliding one (see above).
double attention_work_factor(const ModelSpec& m, bool sliding_layer, double s);
// Mean of attention_work_factor over the model's layers: what layer_ops charges each layer, since
// it builds one layer for all (exact for a stage that holds whole periods of the sliding/full
// pattern, as every GPT-OSS stage of an even layer count does).
double mean_attention_work_factor(const ModelSpec& m, double s);

// The width of one head's query/key (QK^T's reduction) and of its value (PV's output):
// head_dim for standard attention, nope + rope and v_head_dim for MLA.
double qk_head_dim(const ModelSpec& m);
double v_head_dim(const ModelSpec& m);

// MLA's projections before the attention core (down-projections, latent norms, up-projections)
// on one GPU of a tensor-parallel group (see the header comment), appended to `ops`.
void mla_projection_ops(std::vector<OpCost>& ops, const ModelSpec& m, const OpShape& shape);
// MLA's fused rotary kernels: the rope parts of the local heads' queries in place, and the key /
// value split of kv_up's output with the shared rope key (a copy of the kv rows; see the .cpp).
OpCost mla_rotary(const ModelSpec& m, const OpShape& shape);

}  // namespace clustersim::workloads
