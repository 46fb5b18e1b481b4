// The operations of a hybrid Mamba model's layers (Megatron-LM MambaModel; Nemotron-H, NVIDIA
// 2025, arXiv 2504.03624): Mamba-2 mixer layers (Dao & Gu 2024, "Transformers are SSMs", arXiv
// 2405.21060), attention-only and MLP-only layers, each a pre-norm block with a residual add.
//
// Why its own op list: a Mamba-2 layer is two GEMMs around a chunked state-space scan whose cost is
// neither a GEMM's nor attention's; a hybrid's attention and MLP layers are the two halves of a
// transformer layer (transformer_ops.h), which is how they are built here.
//
// The Mamba-2 layer for b sequences of s tokens on a tensor-parallel group of t (Megatron-Core
// MambaMixer splits d_inner, the heads and the groups over t: in_proj is column-parallel, out_proj
// row-parallel, so a Mamba layer has one tensor-parallel exchange, as an attention block does):
//   norm            the layer's pre-norm over hidden;
//   mamba_in_proj   GEMM [b*s, hidden] x [hidden, (2*d_inner + 2*G*N + H)/t] -> z, x, B, C, dt;
//   mamba_layout_copies  (b > 1 only) MambaMixer._ssm_training's .contiguous() transposes of
//                   zxBCdt to [b, s, ...] and of y back to [s, b, ...] (memory bound, forward);
//   mamba_conv1d    causal depthwise conv of d_conv taps + SiLU over x, B, C (memory bound);
//   ssd_scan        the SSD chunked scan (below), one fused op (kind Attention: a matmul-shaped
//                   sequence mixer; its efficiency is the named constant mamba_scan_eff);
//   mamba_gated_norm  RMSNorm over d_inner of y * SiLU(z) (memory bound; the gate runs in the scan);
//   mamba_out_proj  GEMM [b*s, d_inner/t] x [d_inner/t, hidden];
//   residual add.
//
// SSD FLOPs per token (Dao & Gu 2024 §6, the chunked "state space dual" algorithm, chunk length Q,
// H heads of P, state N, G groups; d_inner = H*P), the four matmul steps of each chunk:
//   1. intra-chunk (diagonal blocks): C B^T within the chunk per group, 2*Q*N*G, and its masked
//      product with X, 2*Q*d_inner (the full Q x Q tile, as the kernel computes it);
//   2. chunk states: B^T X per head, 2*N*d_inner;
//   3. state passing between chunks: N*d_inner per chunk, / Q per token (recurrence, scalar decay);
//   4. output from the passed states: C h per head, 2*N*d_inner.
//   ssd_flops_per_token = 2*Q*N*G + 2*Q*d_inner + 4*N*d_inner + 2*N*d_inner/Q.
// Backward FLOPs: 2x forward, the GEMM convention. The scan's HBM traffic is the memory-bound part,
// counted kernel by kernel from mamba_ssm's mamba_ssm/ops/triton/ssd_combined.py (state-spaces/mamba
// v2.2, the path Megatron-Core's MambaMixer._ssm_training takes: mamba_split_conv1d_scan_combined
// with the gate z inside the scan and the RMSNorm after it). Per token, d = d_inner, S = d_inner*N/Q
// chunk-state elements, GN = G*N (B or C), GQ = G*Q (one row of the fp32 C B^T tile), H heads,
// p bytes per activation: forward 5 d p + 4 GN p + 8 GQ + (8 + 2p) S + H (p + 24) (five kernels:
// chunk cumsum, chunk state, state passing, bmm chunk, chunk scan; it reads x, B, C, dt and z and
// writes y and the ungated y, out_x, which it saves); backward about 17 d p + 15 GN p + 24 GQ +
// (24 + 5p) S (it recomputes the cumsum, CB, the chunk states and their passing in fp32, then runs
// ten gradient kernels; ssd_bytes_per_token lists them). At Nemotron 3 Nano's shapes (d 4096, N 128,
// Q 128, G 8) that is 108 kB forward and 340 kB backward per token, against 86 kB and 173 kB when
// the scan was costed as one pass over x, B, C, dt, y and four fp32 state passes (backward 2x).
// The backward also recomputes the causal conv1d (MambaSplitConv1dScanCombinedFn saves only
// zxbcdt), charged to mamba_conv1d.
#pragma once

#include <vector>

#include "workloads/model/transformer_ops.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// SSD scan FLOPs per token of one Mamba-2 layer (unsharded, forward), the formula above.
double ssd_flops_per_token(const ModelSpec& model);
// HBM bytes per token of the SSD scan's kernels, forward and backward, for `model`'s (local) heads
// and groups at `element_bytes` per activation (above: mamba_ssm's kernels one by one).
struct SsdBytes {
  double fwd = 0, bwd = 0;
};
SsdBytes ssd_bytes_per_token(const ModelSpec& model, double element_bytes);
// The ops of one Mamba-2 layer (above).
std::vector<OpCost> mamba_layer_ops(const ModelSpec& model, const OpShape& shape);
// The ops of one layer of `kind`: Transformer and MoeTransformer are layer_ops; Attention is its
// attention half (pre-norm to the attention residual), Mlp its MLP half (the post-attention norm,
// which is then the layer's pre-norm, to the MLP residual); Moe the MoE half of an MoE transformer
// layer (the norm, router, permute, shared and routed experts, unpermute, residual; its
// expert-parallel all-to-all is the stage costs'); Mamba is mamba_layer_ops. With
// PositionKind::None the attention layer has no rotary kernel.
std::vector<OpCost> layer_ops_of_kind(const ModelSpec& model, const OpShape& shape, LayerKind kind);

}  // namespace clustersim::workloads
