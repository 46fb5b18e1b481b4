// Per-GPU memory of a training job, for its most loaded GPU (advice when it does not fit: advice.h).
//
// Units: bytes (sim::Bytes). Every term is also reported as a named line with its formula so a
// report can print how the total was reached.
//
// Which GPU: every GPU of a pipeline stage holds the same (tensor and data parallelism shard
// evenly), so the candidates are the pipeline stages. The first stage normally dominates: under
// 1F1B it keeps min(pp, m) micro-batches of activations in flight (the last stage keeps one) and it
// holds the input embedding. The last stage holds the output layer (its own copy of the word
// embeddings when pp > 1, even if tied), the final norm and the fp32 logits; with a large
// vocabulary and a deep pipeline it can be the larger one. Both are computed; the larger wins and
// `stage_reason` says why.
//
// Model states per parameter (mixed precision = fp16/bf16/fp8 compute; fp32/tf32 = fp32 training):
//   weights: 2 B mixed, 4 B fp32.
//   gradients: mixed with GradPrecision::Fp32Main (Megatron-LM's default: a persistent fp32
//     `main_grad` buffer that gradient accumulation and the DP reduction use): 4 B;
//     GradPrecision::Half (DeepSpeed / the ZeRO paper's 2+2+K accounting): 2 B; fp32 training: 4 B.
//   optimizer (K): Adam mixed 12 (fp32 master + m + v), Adam fp32 8 (m, v); SGD with momentum
//     mixed 8 (master + momentum), fp32 4; plain SGD mixed 4 (master), fp32 0.
// Sharding over the data-parallel degree N: ZeRO-1 shards K, ZeRO-2 also the gradients, ZeRO-3
// also the weights; Megatron's distributed optimizer shards K only (6 + 12/d with fp32 main grads).
//
// Activations (bytes per transformer layer and micro-batch, 16-bit, Korthikanti et al. 2022,
// Table 2): none s*b*h*(34 + 5as/h); TP s*b*h*(10 + 24/t + 5as/(ht)); TP+SP s*b*h*(34/t + 5as/(ht));
// selective s*b*h*(10 + 24/t), with SP 34/t; full recompute 2*s*b*h (plus one layer's working set
// while it is recomputed). Scaled by layers on the stage x micro-batches in flight
// (GPipe: m; 1F1B: stage i holds min(pp - i, m); interleaved: x (1 + (pp-1)/(pp*v))).
#pragma once

#include <string_view>
#include <string>
#include <vector>

#include "sim/units.h"
#include "topology/catalog.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

enum class GradPrecision : std::uint8_t { Fp32Main, Half };

// Runtime overhead outside PyTorch's allocator (assumptions, see memory_model.cpp for sources).
inline constexpr double kCudaContextBytes = 512.0 * 1048576.0;      // CUDA context + kernels
inline constexpr double kCublasWorkspaceBytes = 32.0 * 1048576.0;   // CUBLAS_WORKSPACE_CONFIG :4096:8
inline constexpr double kNcclCommunicatorBytes = 128.0 * 1048576.0; // per communicator in use

struct MemoryOptions {
  GradPrecision grads = GradPrecision::Fp32Main;
  // true: count every tensor of a layer (biases, norm weights). false: 4h^2 attention (MHA) +
  // 2*h*ffn MLP only -- the "12*l*h^2" approximation of Narayanan et al. / Korthikanti et al.,
  // needed to reproduce their analytical figures.
  bool exact_layer_params = true;
  bool include_runtime = true;   // CUDA context, cuBLAS workspace, NCCL buffers
  int zero3_prefetch_layers = 2; // ZeRO-3 keeps the gathered layer and the prefetched next one
};

struct MemoryRequest {
  ModelSpec model;
  ParallelSpec parallel;
  TrainingSpec training;
  SyncSpec sync;
  sim::Bytes capacity;
  MemoryOptions options;
};

enum class MemoryCategory : std::uint8_t { Params, Grads, Optimizer, Activations, Buffers, Runtime };

struct MemoryLine {
  std::string name;
  MemoryCategory category;
  sim::Bytes bytes;
  std::string formula;
};

struct MemoryBreakdown {
  sim::Bytes params, grads, optimizer, activations, buffers, runtime, total;
  sim::Bytes capacity;
  int stage = 0;              // pipeline stage of the most loaded GPU
  std::string stage_reason;
  std::vector<MemoryLine> lines;

  bool fits() const { return total <= capacity; }
  sim::Bytes headroom() const { return capacity - total; }
  // The line of that name, or nullptr (names: "layers: weights", "layers: activations", ...).
  const MemoryLine* find_line(std::string_view name) const;
};

// Bytes per parameter of each model state, before sharding.
struct StateBytes {
  double weights = 2, grads = 4, optimizer = 12;
};
StateBytes state_bytes_per_param(const TrainingSpec& training, const MemoryOptions& options);

// Model-state bytes for `params` parameters held by one GPU before data-parallel sharding, with
// ZeRO / distributed-optimizer sharding over `dp`. (params, grads, optimizer)
struct ModelStates {
  sim::Bytes params, grads, optimizer;
  sim::Bytes total() const { return params + grads + optimizer; }
};
ModelStates model_state_bytes(double params, const ParallelSpec& parallel, const TrainingSpec& training,
                              const MemoryOptions& options);

// Korthikanti et al. Table 2: activation bytes of one transformer layer for one micro-batch.
sim::Bytes activation_bytes_per_layer(const ModelSpec& model, int micro_batch, int tp,
                                      bool sequence_parallel, Recompute recompute);

// Micro-batches whose activations a stage holds at peak, times the interleaving factor.
double micro_batches_in_flight(const ParallelSpec& parallel, int micro_batches, int stage);

// Memory of one pipeline stage, and of the most loaded GPU.
MemoryBreakdown stage_memory(const MemoryRequest& request, int stage);
MemoryBreakdown estimate_memory(const MemoryRequest& request);

}  // namespace clustersim::workloads
