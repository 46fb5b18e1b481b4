// The routed experts' row padding under fp8 / fp4 (OpShape::quantized_experts): what Megatron-Core
// does so that every expert's rows of the grouped GEMM are a multiple of the quantization
// alignment, and what that costs.
//
// Megatron-Core's TEGroupedMLP.forward (megatron/core/transformer/moe/experts.py, core_r0.10.0 to
// core_r0.17.0) runs `quantization_padding` (Transformer Engine's Fp8Padding) on the permuted
// hidden states and on the permuted probabilities before linear_fc1, and `quantization_unpadding`
// (Fp8Unpadding) on linear_fc2's output, whenever config.fp8 or config.fp4 is set. Transformer
// Engine's Fp8Padding.forward (transformer_engine/pytorch/module/fp8_padding.py, release_v2.10)
// rounds each expert's count up to 16 (32 under MXFP8 / NVFP4) and returns its input untouched
// only when every count already is a multiple; otherwise tex.fused_multi_row_padding copies the
// [slots, hidden] rows into a new padded tensor, and its backward (fused_multi_row_unpadding)
// copies the gradient back; Fp8Unpadding is the mirror image (fp8_unpadding.py). Per pass that is
// one read and one write of every slot's hidden vector before fc1 and after fc2, plus the
// probabilities' [slots] fp32 column in their own kernel. Routing does not keep counts on the
// alignment (Megatron-Bridge's force-balanced runs route at random), so the copies run.
// Not run: under the HybridEP flex dispatcher, whose dispatch writes the rows already padded
// (token_dispatcher.py _HybridEPManager.dispatch passes pad_multiple =
// get_align_size_for_quantization(config) to hybrid_ep_dispatch when fp8 or fp4 is set, so
// Fp8Padding finds nothing to pad), and with moe_router_padding_for_fp8 (the router pads the
// routing map; Megatron-Core's default, and Megatron-Bridge's Qwen3 / DeepSeek-V3 recipes, leave it
// off: not modelled as an option). Core_r0.9.0's TEGroupedMLP pads each expert's tokens with a
// torch.cat of zeros and concatenates the outputs again: the same two copies per pass.
#pragma once

#include <vector>

#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

// True when an MoE layer of this shape pads its experts' rows (see above).
bool pads_expert_rows(const OpShape& shape);

// The two ops for `slots` token-slots of `hidden` elements of `bytes` each: "expert_pad" (before
// the grouped GEMM) and "expert_unpad" (after it), each one read and one write of the rows per
// pass; the pad's forward and the unpad's backward also pad the fp32 probabilities (one more kernel).
OpCost expert_pad_op(double slots, double hidden, double bytes);
OpCost expert_unpad_op(double slots, double hidden, double bytes);

}  // namespace clustersim::workloads
