// The routed experts as Megatron-Core's SequentialMLP runs them (moe_grouped_gemm = false), and
// what that costs beside the grouped GEMM of TEGroupedMLP.
//
// MoELayer builds SequentialMLP when config.moe_grouped_gemm is false (Megatron-Core
// megatron/core/transformer/moe/experts.py, core_v0.10.0 lines 745-812; core_r0.12.0 the same
// loop with the probabilities passed along). Its forward, with more than one local expert:
// tokens_per_expert.tolist(), torch.split of the permuted rows by those counts, then a Python
// loop over the local experts, each an MLP module (linear_fc1, the activation, linear_fc2) on its
// own slice; under fp8 each slice is padded to a multiple of 16 rows first (_pad_tensor_for_fp8:
// a torch.cat with zeros, only when the count is not already a multiple) and its output cut back
// (output[:n]); last a torch.cat of the experts' outputs. With one local expert the MLP runs on
// all rows, with no split and no concatenation.
//
// So, per expert: each GEMM its own kernel at that expert's rows (tile and wave quantization per
// expert, not over all experts' tiles as a grouped GEMM), its own launch on the one stream, its
// own fp8 cast of its input and output gradient, and each linear a module call of its own
// (te_module_host_us: Transformer Engine's Linear under fp8, and from core_r0.11.0 in bf16 too;
// core_v0.10.0 builds Megatron-Core's ColumnParallelLinear / RowParallelLinear in bf16, whose
// host work is smaller; the difference hides behind the device time of every mapped row). The
// activation is a kernel per expert. The output concatenation reads and writes every slot once
// forward; its backward is views, but torch.split's backward concatenates the input gradients:
// one more read and write of every slot. The grouped path's per-expert host cost
// (grouped_gemm_expert_host_us) and its multi-stream overlap of the experts' launches do not
// apply: the kernels are issued one after another on one stream.
//
// The fp8 padding: a pad copies that expert's rows into a buffer of the padded size forward
// (read and write); the cut-back output[:n] is a view forward, and its backward (PyTorch's
// slice_backward) zero-fills a padded-size gradient and copies the slice in (write, read,
// write). A slice of the whole tensor is no slice at all (PyTorch's applySlicing returns the
// tensor itself), so aligned counts copy nothing. Counts are aligned when the dispatcher drops
// and pads to capacity (every expert gets capacity x tp x ep rows, core_v0.10.0
// token_dispatcher.py MoEAlltoAllTokenDispatcher.preprocess) and that number is a multiple of
// 16; dropless routing leaves them random, so the pads run.
#pragma once

#include <vector>

#include "workloads/model/moe_host_ops.h"
#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

// SequentialMLP's fp8 row alignment (_pad_tensor_for_fp8's divisor).
inline constexpr double kSequentialMlpFp8RowAlignment = 16.0;

// Whether each expert's `rows` are padded before its fc1: under fp8 / fp4 (`quantized`), unless
// the counts are fixed by drop-and-pad (`counts_fixed`) and already a multiple of the alignment.
bool sequential_pads_rows(bool quantized, bool counts_fixed, double rows);

// One expert's pad ("expert_pad", `rows` of `width` elements of `bytes`): the forward copy of
// the rows, the backward zero-fill and copy of the gradient; two kernels backward.
OpCost sequential_pad_op(double rows, double width, double bytes);

// The concatenation of the experts' outputs ("expert_concat", `slots` rows of `width`): forward
// torch.cat, backward the concatenation of torch.split's input gradients.
OpCost sequential_concat_op(double slots, double width, double bytes);

// SequentialMLP's host work around its experts' kernels and module calls: with more than one
// local expert the counts' tolist and the split; under fp8 each expert's output slice.
MoeHostWork sequential_experts_host_fwd(int local_experts, bool quantized);

}  // namespace clustersim::workloads
