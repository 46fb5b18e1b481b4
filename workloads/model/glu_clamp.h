// The routed experts' clamped GLU input (ModelSpec::glu_clamp; GPT-OSS): what Megatron-Core's
// TEGroupedMLP runs eagerly around its fused quick-GeGLU kernel, and what that costs.
//
// The GPT-OSS bridge sets activation_func = quick_gelu, activation_func_clamp_value = 7.0,
// glu_linear_offset = 1.0 and bias_activation_fusion = True (Megatron-Bridge r0.3.0
// src/megatron/bridge/models/gpt_oss/gpt_oss_bridge.py). TEGroupedMLP's bias_act_func then calls
// weighted_bias_quick_geglu_impl (megatron/core/transformer/moe/experts.py, core_v0.15.0 l. 904,
// core_v0.16.0 l. 699, core_v0.17.0 l. 292, core_v0.18.0 l. 724; megatron/core/fusions/fused_bias_geglu.py l. 410-440, the same on all four
// tags). Its activation is one torch.compile'd kernel each pass (the expert_act op); the impl
// around it is plain Python: with a clamp value it chunks fc1's output into its two halves, clamps
// each (x_glu to at most 7, x_linear to [-7, 7]) and concatenates them (l. 424-432), views the
// result, and makes the linear offset a device tensor with torch.tensor(offset, device=cuda)
// (l. 434). Per element of one half (E = token-slots x the expert FFN width on this GPU), p bytes
// each, bool masks 1 byte:
//   forward   the two clamps read and write E each, the cat reads and writes 2E: 8p bytes;
//             3 kernels; the chunk, the view and the offset's host-to-device copy beside them.
//             torch.tensor builds the scalar on the host and copies it with non_blocking = false
//             (PyTorch torch/csrc/utils/tensor_new.cpp internal_new_from_data), which
//             copy_kernel_cuda (aten/src/ATen/native/cuda/Copy.cu) does through memcpy_and_sync:
//             cudaMemcpyAsync then cudaStreamSynchronize, a host sync (OpCost::host_sync_after).
//   backward  (PyTorch torch/csrc/autograd/FunctionsManual.cpp) the cat's backward narrows its
//             gradient (two views); clamp_backward for x_linear is where((x >= -7)
//             .logical_and_(x <= 7), grad, 0): ge and le (p + 1 each), logical_and_ (3), where
//             (2p + 1); for x_glu where(x <= 7, grad, 0): le (p + 1) and where (2p + 1); each
//             builds its zero with scalar_tensor (a fill kernel); the chunk's backward
//             concatenates the two halves' gradients (4p): 11p + 8 bytes, 9 kernels.
// Under recompute_modules "moe_act" CheckpointWithoutOutput reruns the whole bias_act_func in
// the backward (workloads/training/layer_compute_cost.cpp), this op with its sync included.
// Transformer Engine's op fuser (TrainingSpec::te_op_fuser) runs te.ops.ScaledClampedQGeGLU with
// the clamp inside instead (experts.py core_v0.18.0 _make_fused_ops): no op.
#pragma once

#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

// Bytes per element of one GLU half, for p-byte activations (see above).
inline constexpr double glu_clamp_fwd_bytes_per_element(double p) { return 8.0 * p; }
inline constexpr double glu_clamp_bwd_bytes_per_element(double p) { return 11.0 * p + 8.0; }
// Host ops beyond the op's own kernel: forward 2 more kernels, the chunk, the view and the
// offset's copy; backward 8 more kernels and the cat's two narrows.
inline constexpr double kGluClampFwdHostOps = 5.0;
inline constexpr double kGluClampBwdHostOps = 10.0;

// The op for `elements` = token-slots x the expert FFN width on this GPU, at `bytes` per element:
// memory-bound, no FLOPs counted (compare-and-select), a host sync after its forward.
OpCost glu_clamp_op(double elements, double bytes);

}  // namespace clustersim::workloads
