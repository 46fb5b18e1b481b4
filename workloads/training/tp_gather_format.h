// What a sequence-parallel all-gather carries per element: the format of the GEMM that consumes
// it. Transformer Engine quantizes a column-parallel linear's input before gathering it over the
// tensor-parallel group (Linear / LayerNormLinear / LayerNormMLP: gather_along_first_dim with the
// input quantizer, or the userbuffers all-gather filled with quantized data), and a row-parallel
// linear's output gradient before its backward gather (base.py grad_output_preprocess with the
// grad-output quantizer). Per recipe (Transformer Engine 2.x distributed.py):
//   bf16 (no quantization)      the activation element (2 B; 4 under fp32)
//   fp8, per-tensor scale       1 B, both passes: only the row-wise data is gathered and the
//                               transpose the wgrad GEMM needs is made after (_all_gather_fp8;
//                               Float8Quantizer / Float8CurrentScalingQuantizer
//                               supports_only_rowwise_all_gather). TE 1.x and 0.x likewise gather
//                               the uint8 cast (linear.py cast_to_fp8 before gather_along_first_dim,
//                               layernorm_linear.py ln_out in uint8, base.py grad_output_c).
//   MXFP8 (block scale s per    forward 1 + s (row-wise data and its E8M0 scales); backward
//   element, fp8_block_scale_   2 (1 + s): the output gradient's quantizer asks for row-wise and
//   bytes_per_element > 0)      column-wise copies (dgrad and wgrad) and a row-scaled MXFP8 tensor
//                               cannot be transposed, so both are gathered (_all_gather_mxfp8,
//                               TE >= 2.2, commit 8a20d666e; linear.py "we can't convert row-scaled
//                               MXFP8 to column-scaled" under userbuffers, a second bulk gather)
//   NVFP4                       forward 0.5 + 1/16 (row-wise E2M1 + E4M3 scales); backward twice
//                               that (row-wise and column-wise, _all_gather_nvfp4, TE >= 2.8)
// Reduce-scatters carry GEMM outputs and their gradients, bf16 in every recipe.
// The backward gathers the column-parallel linear's input a second time for its weight gradient:
// the forward frees the gathered copy and keeps the local shard (TE v2.9 layernorm_linear.py
// l. 365-367 clear ln_out_total, l. 650-676 gather_along_first_dim(ln_out, async_op=True,
// quantizer=input_quantizer) beside the dgrad GEMM; linear.py l. 639-661; TE v1.13
// layernorm_linear.py l. 463; Megatron-Core core_v0.15.0 tensor_parallel/layers.py l. 505-527).
// Its quantizer asks for the column-wise copy alone (per-tensor fp8: the row-wise data, transposed
// after), so it carries the forward gather's bytes per element in every recipe.
#pragma once

#include <array>
#include <vector>

#include "workloads/compute/compute_model.h"
#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

// MXFP8's scale bytes per element: one E8M0 byte per 32 elements (OCP Microscaling spec v1.0).
inline constexpr double kMxfp8ScaleBytesPerElement = 1.0 / 32.0;

// Bytes per element one all-gather moves when the GEMM it feeds runs in `format` (the forward's
// input gather, or the backward's output-gradient gather). `element_bytes`: the activation element
// an unquantized gather carries; `block_scale_bytes`: MXFP8's scale bytes per element (0 for
// per-tensor fp8; `[model_constants] fp8_block_scale_bytes_per_element`, kMxfp8ScaleBytesPerElement
// for MXFP8).
// `weight_gradient` false: the row-parallel GEMM's weight is frozen (LoRA's base linears), so the
// backward gather carries the row-wise copy alone (TE 2.x linear.py: without a bias and without
// requires_wgrad the grad-output quantizer drops its column-wise usage).
double tp_gather_bytes_per_element(topology::Precision format, Pass pass, double element_bytes,
                                   double block_scale_bytes, bool weight_gradient = true);

// A layer's two sequence-parallel gathers per pass, [attention, MLP] side: the forward's feeds
// the side's column-parallel linear (QKV; MLP fc1 / gate, Mamba in_proj), the backward's the
// row-parallel one's data gradient (attention out_proj; MLP fc2 / down, Mamba out_proj). A side
// without such a linear of its own (one layer kind of a hybrid model, costed as a whole pair)
// takes the other side's. Multi-latent attention gathers its latents with Megatron-Core's own
// gather_from_sequence_parallel_region, outside Transformer Engine: unquantized forward, and its
// up-projections take the gathered latents, so nothing is re-gathered backward.
// `regather`: the backward's second gather of the column-parallel input (for the weight
// gradient); 0 where that linear's weight is frozen (ln_out_needs_gather needs
// weight.requires_grad) or, for attention, under multi-latent attention.
struct TpGatherBytes {
  std::array<double, 2> fwd{2.0, 2.0}, bwd{2.0, 2.0}, regather{2.0, 2.0};  // bytes per element, [attention, MLP]
};
TpGatherBytes tp_gather_bytes(const std::vector<OpCost>& layer, topology::Precision run, double element_bytes,
                              double block_scale_bytes);

}  // namespace clustersim::workloads
