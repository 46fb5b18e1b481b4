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
//   ssd_*           the SSD chunked scan as mamba_ssm runs it (below): one op per Triton kernel,
//                   matmul-shaped ones (kind Attention) at the named efficiency mamba_scan_eff;
//   mamba_gated_norm  RMSNorm over d_inner of y * SiLU(z) (memory bound; the gate runs in the scan);
//   mamba_out_proj  GEMM [b*s, d_inner/t] x [d_inner/t, hidden];
//   residual add.
//
// The SSD scan (Dao & Gu 2024 §6, the chunked "state space dual" algorithm; chunk length Q, H
// heads of P, state N, G groups, d = d_inner = H*P) as mamba_ssm 2.2 runs it: Megatron-Core's
// MambaMixer._ssm_training calls mamba_split_conv1d_scan_combined with the SiLU(z) gate inside the
// scan and the RMSNorm after it (state-spaces/mamba v2.2.4, 95d8aba, mamba_ssm/ops/triton/
// ssd_combined.py: _mamba_chunk_scan_combined_fwd / _bwd). One op per Triton kernel, each its own
// roofline (its tl.dot FLOPs at mamba_scan_eff, or its elementwise FLOPs; its HBM bytes) and its
// own launch (OpCost::fwd_kernels / bwd_kernels). Per token, p bytes per activation, f = 4 (fp32),
// S = d*N/Q chunk-state elements, GN = G*N (B or C), CB = 4*G*Q (one row of the fp32 C B^T tile):
//   forward (5 kernels)          FLOPs        bytes
//   ssd_chunk_cumsum             6 H          H (p + 2f): dt in; fp32 dt and dA_cumsum out
//   ssd_chunk_state              2 N d        GN p + d p + 2 H f + f S: B, x, dt, dA in; fp32 states
//   ssd_state_passing            2 S          f S + p S (the backward's rerun: 2 f S, kept in fp32)
//   ssd_bmm_chunk                2 Q N G      2 GN p + CB: C, B in; fp32 CB out
//   ssd_chunk_scan               2 Q d + 2 N d   CB + 4 d p + 2 H f + GN p + p S: CB, x, dt, dA, C,
//                                             states, z in; y and the ungated out_x out
// The backward reruns the first four (their backward pass is that rerun, one launch each) and
// then runs, each an op with no forward: _chunk_scan_bwd_dz, _chunk_scan_bwd_dstates (2 N d),
// _state_passing_bwd, _chunk_scan_chunk_state_bwd_dx (2 Q d + 2 N d), _chunk_state_bwd_db (2 N d),
// _chunk_scan_bwd_dC (2 N d), _chunk_scan_bwd_dcb (2 Q d), _bmm_chunk_bwd twice (2 x 2 Q N G),
// _chunk_scan_bwd_ddAcs_stable (2 Q d), _chunk_cumsum_bwd and the torch ops between them, with
// the memsets of the autotuner's init_to_zero pre-hooks and the fp32 head-split reductions of dB,
// dC and dCB (one split counted: more when H/G exceeds the heads a program takes, which depends on
// the GPU's SM count). mamba_ops.cpp lists each kernel's tensors. Launches: 5 forward, 32
// backward. At Nemotron 3 Nano's shapes (d 4096, N 128, Q 128, G 8) 108 kB forward and 376 kB
// backward per token (3.5x).
// SSD FLOPs (ssd_flops_per_token, the matmul part, forward) = 2 Q N G + 2 Q d + 4 N d: the full
// Q x Q tile of the intra-chunk product, as the kernel's FLOP count is reported (the causal kernel
// skips the tiles above the diagonal). Backward: 2 Q N G + 2 N d rerun, then 8 N d + 6 Q d + 4 Q N G.
// The backward also recomputes the causal conv1d (MambaSplitConv1dScanCombinedFn saves only
// zxbcdt), charged to mamba_conv1d.
#pragma once

#include <vector>

#include "workloads/model/transformer_ops.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// SSD scan matmul FLOPs per token of one Mamba-2 layer (unsharded, forward), the formula above.
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
