// The language-model loss's unfused implementations (CrossEntropy, [training] cross_entropy): the HBM
// bytes per logit element and the kernels of each pass (ComputeModel charges them to the
// "cross_entropy" op, op_roofline.cpp), and for PyTorch's eager path the bytes per logit element
// alive at the loss's forward and backward peaks (memory_buffers.cpp, allocator_replay.cpp). A logit
// element is one of the s*b*V/t entries of this rank's [tokens, vocab / tp] logits.
#pragma once

#include <optional>

#include "workloads/specs.h"

namespace clustersim::workloads {

struct LossKernelCounts {
  double fwd_bytes_per_element = 0, bwd_bytes_per_element = 0;
  int fwd_kernels = 0, bwd_kernels = 0;
};

// Megatron-Core's unfused _VocabParallelCrossEntropy (core_r0.8.0 .. core_r0.11.0
// tensor_parallel/cross_entropy.py; compute_constants.cpp cross_entropy_unfused counts them):
// forward .float() 6, max 4, subtract 8, exp 8, sum 4, divide 8 = 38 B in 6 kernels; backward the
// in-place multiply 8 and the cast back 6 = 14 B in 2 kernels.
inline constexpr LossKernelCounts kMegatronUnfusedCrossEntropy{38.0, 14.0, 6, 2};

// Eager PyTorch F.cross_entropy(logits.float(), labels) with mean reduction and no label smoothing
// (torchtitan train.py at 9dec370, loss_fn; not compiled). aten cross_entropy_loss runs
// nll_loss_nd(log_softmax(x)), and its CUDA kernels (PyTorch aten/src/ATen/native/cuda/, 2024-25):
//   forward
//   - .float(): the copy kernel, bf16 read 2 + fp32 write 4 = 6 B;
//   - _log_softmax (SoftMax.cu host_softmax, inner_size 1): a row wider than the 48 KiB
//     sharedMemPerBlock holds (12k fp32 classes) runs cunn_SoftMaxForward, which reads its row three
//     times (ilpReduce max, ilpReduce sum of exp, the epilogue) and writes it once: 12 + 4 = 16 B;
//     a narrower row runs cunn_SoftMaxForwardSmem (or, in later releases, cunn_SoftMaxForwardReg
//     below ~10k classes), one read and one write, 8 B; log_softmax never takes the online
//     use_fast_softmax path (host_softmax<..., is_log_softmax = true, use_fast_softmax = false>);
//   - nll_loss_forward (Loss.cu nll_loss_forward_reduce_cuda_kernel_2d, one block): one element a
//     token, no bytes per logit element;
//   backward
//   - nll_loss_backward (Loss.cu TORCH_IMPL_FUNC(nll_loss_backward_out_cuda)): grad_input.zero_(), an
//     fp32 fill, 4 B, then nll_loss_backward_reduce_cuda_kernel_2d's scatter of one element a token;
//   - _log_softmax_backward_data (SoftMax.cu cunn_SoftMaxBackward): ilpReduce of gradOutput (4), then
//     gradOutput and output read (8) and gradInput written (4) = 16 B (a narrow row's
//     cunn_SoftMaxBackwardSmem of later releases, 12 B, is not taken apart);
//   - _to_copy's backward (derivatives.yaml _to_copy_backward): the fp32 gradient cast to bf16, 6 B.
// So 22 B in 3 kernels forward and 26 B in 4 backward (the wide-row softmax kernels).
inline constexpr LossKernelCounts kTorchEagerCrossEntropy{6.0 + 16.0, 4.0 + 16.0 + 6.0, 3, 4};
// The narrow-row forward, cunn_SoftMaxForwardSmem: the row stays in shared memory.
inline constexpr double kTorchEagerSmemSoftmaxFwdBytes = 8.0;
// cunn_SoftMaxForwardSmem holds a row when it is narrower than sharedMemPerBlock (48 KiB on every
// CUDA GPU since Volta, the static per-block limit the launch reads) over 4 B per fp32 class.
inline constexpr double kTorchEagerSmemSoftmaxMaxClasses = 48.0 * 1024.0 / 4.0;

// PyTorch eager cross-entropy's memory per logit element (caching-allocator blocks, autograd saved
// tensors: derivatives.yaml):
//   forward peak, inside _log_softmax: the bf16 logits 2 (train.py deletes `pred` only after
//     loss_fn returns), the .float() copy 4 (_to_copy's backward saves only self.options()) and the
//     fp32 log-probabilities being written 4 = 10 B;
//   held until the backward: the log-probabilities 4 (_log_softmax's backward saves `result`,
//     nll_loss_forward's saves `self`, the same tensor); the copy and the bf16 logits are freed;
//   backward peak, inside _log_softmax_backward_data: nll_loss_backward's dense gradient 4, the saved
//     log-probabilities 4 and the gradInput being written 4 = 12 B (autograd releases a node's saved
//     tensors and its input gradient only after the node ran); then the cast back holds the fp32
//     gradient 4 and its bf16 copy 2.
inline constexpr double kTorchEagerLossBf16Logits = 2.0, kTorchEagerLossFloatCopy = 4.0,
                        kTorchEagerLossLogProbs = 4.0, kTorchEagerLossGrad = 4.0, kTorchEagerLossBf16Grad = 2.0;
inline constexpr double kTorchEagerLossFwdPeak = kTorchEagerLossBf16Logits + kTorchEagerLossFloatCopy + kTorchEagerLossLogProbs;
inline constexpr double kTorchEagerLossBwdPeak = kTorchEagerLossGrad + kTorchEagerLossLogProbs + kTorchEagerLossGrad;
inline constexpr double kTorchEagerLossPeak = kTorchEagerLossBwdPeak > kTorchEagerLossFwdPeak ? kTorchEagerLossBwdPeak
                                                                                             : kTorchEagerLossFwdPeak;

// The unfused counts the loss op runs under `impl` for a vocabulary shard of `classes` per rank, or
// nothing for the fused pass (the op's own bytes and one kernel a pass).
inline std::optional<LossKernelCounts> unfused_loss_counts(CrossEntropy impl, double classes) {
  if (impl == CrossEntropy::MegatronUnfused) return kMegatronUnfusedCrossEntropy;
  if (impl != CrossEntropy::TorchEager) return std::nullopt;
  LossKernelCounts c = kTorchEagerCrossEntropy;
  if (classes < kTorchEagerSmemSoftmaxMaxClasses) c.fwd_bytes_per_element += kTorchEagerSmemSoftmaxFwdBytes - 16.0;
  return c;
}

}  // namespace clustersim::workloads
