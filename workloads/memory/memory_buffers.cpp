// The memory model's buffers and runtime (memory_model.h): gradient buckets, ZeRO-3 gathered
// parameters, the attention-score workspace without flash attention, the last stage's fp32 logits
// and loss (main and MTP; PyTorch's eager cross-entropy's temporaries under [training]
// cross_entropy = "torch-eager"), and the CUDA context, cuBLAS workspace and NCCL buffers outside
// PyTorch's allocator.
#include "workloads/memory/memory_lines.h"
#include "workloads/model/cross_entropy_kernels.h"

#include <string>

// Runtime constants (declared in the header):
//   kCudaContextBytes = 512 MiB: assumption. An idle PyTorch process on A100/H100 with CUDA 12 and
//     lazy module loading shows roughly 400-600 MiB in nvidia-smi before any tensor is allocated
//     (context, module images, the caching allocator's first segments excluded); older CUDA
//     without lazy loading is closer to 1 GiB.
//   kCublasWorkspaceBytes = 32 MiB: PyTorch's default cuBLAS workspace on Hopper,
//     CUBLAS_WORKSPACE_CONFIG ":4096:8" = 8 chunks of 4096 KiB (pre-Hopper ":4096:2:16:8",
//     ~8 MiB); one per stream handle, one compute stream assumed.
//   kNcclCommunicatorBytes = 128 MiB: assumption. NCCL allocates NCCL_BUFFSIZE (4 MiB, Simple
//     protocol) plus LL/LL128 buffers per channel and per ring peer; ~16 channels x 2 peers x
//     4 MiB = 128 MiB per communicator on an NVSwitch/IB system.

namespace clustersim::workloads {

namespace {

constexpr double kMiB = 1048576.0;

}  // namespace

void add_buffers(MemoryLineBuilder& out, const MemoryRequest& r, int stage) {
  const ModelSpec m = sequence_shard(r.model, r.parallel);
  const ParallelSpec& par = r.parallel;
  const TrainingSpec& tr = r.training;
  const int t = par.tp;
  const double s = m.seq_len, b = tr.micro_batch;
  // Megatron-Core's distributed optimizer (and apex DistributedFusedAdam with contiguous_grad_buffer)
  // reduce-scatters buckets that are views of the contiguous gradient buffer the "gradients" line
  // already holds (megatron/core/distributed/param_and_grad_buffer.py: each bucket's grad_data is a
  // slice of the buffer): no bucket copies. DDP and ZeRO-1/2 stage gradients through two.
  if (par.grad_replicas() > 1 && !par.distributed_optimizer) {
    const double bucket = gradient_bucket_bytes(r);
    out.add("gradient buckets", MemoryCategory::Buffers, 2.0 * bucket,
            r.sync.bucket_params > 0 ? format_text("2 x bucket_params (%g) x grad_dtype bytes", r.sync.bucket_params)
                                     : format_text("2 x bucket_mb (%g MiB)", bucket / kMiB));
  }
  const double gathered = zero3_gathered_bytes(r, stage);
  if (par.zero >= 3 && par.zero3_gather == Zero3Gather::Module) {
    out.add("ZeRO-3 gathered parameters", MemoryCategory::Buffers, gathered,
            format_text("DeepSpeed live submodules: max_live %.3g, prefetch %.3g params (+ the running submodule's "
                "gradient in backward)",
                r.options.deepspeed_max_live_parameters, r.options.deepspeed_prefetch_parameters));
  } else {
    out.add("ZeRO-3 gathered parameters", MemoryCategory::Buffers, gathered,
            format_text("%g layers' full weights (FSDP: current + prefetched)", r.options.zero3_prefetch_layers));
  }
  if (!m.flash_attention) {
    const double bytes_per = activation_bytes_for(tr.precision).element;
    out.add("attention score workspace", MemoryCategory::Buffers,
            b * (static_cast<double>(m.heads) / t) * s * s * bytes_per, "b*a/t*s^2 x element bytes",
            kLayerForward | kLayerBackward);
  }
  if (stage == par.pp - 1) {
    const double logit_elements = s * b * m.vocab / t;  // this rank's [tokens, vocab / tp] logits
    if (tr.cross_entropy == CrossEntropy::TorchEager) {  // model/cross_entropy_kernels.h counts the terms
      out.add("logits and loss (torch eager)", MemoryCategory::Buffers, logit_elements * kTorchEagerLossPeak,
              format_text("s*b*V/t x %g B: log_softmax backward's grad_input 4 + nll_loss's dense grad 4 + saved "
                          "log-probs 4 (forward peak %g B: bf16 logits 2 + .float() copy 4 + log-probs 4)",
                          kTorchEagerLossPeak, kTorchEagerLossFwdPeak),
              kLoss);
    } else {
      out.add("logits and loss (fp32)", MemoryCategory::Buffers, logit_elements * 4.0, "s*b*V/t x 4 B", kLoss);
    }
    // Each MTP module's loss is computed in the forward, so its logits live beside the main ones.
    if (m.mtp_layers > 0)
      out.add("MTP logits and loss (fp32)", MemoryCategory::Buffers, m.mtp_layers * s * b * m.vocab / t * 4.0,
              format_text("s*b*V/t x 4 B x %g MTP modules", m.mtp_layers), kLoss);
  }
}

void add_runtime(MemoryLineBuilder& out, const MemoryRequest& r) {
  if (!r.options.include_runtime) return;
  out.add("CUDA context", MemoryCategory::Runtime, kCudaContextBytes, "kCudaContextBytes (assumed 512 MiB)");
  out.add("cuBLAS workspace", MemoryCategory::Runtime, kCublasWorkspaceBytes, "CUBLAS_WORKSPACE_CONFIG :4096:8");
  const int comms = (r.parallel.tp > 1) + (r.parallel.pp > 1) + (r.parallel.grad_replicas() > 1) + (r.parallel.cp > 1);
  out.add("NCCL buffers", MemoryCategory::Runtime, comms * kNcclCommunicatorBytes,
          format_text("%g communicators x kNcclCommunicatorBytes (128 MiB)", comms));
}

}  // namespace clustersim::workloads
