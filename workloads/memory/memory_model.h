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
// vocabulary and a deep pipeline it can be the larger one. With uneven stages
// (ParallelSpec::layers_on_stage: Megatron's first/last stage layer counts) a stage inside the
// pipeline can hold the most: every stage is computed, the largest wins (the earlier on a tie) and
// `stage` and `stage_reason` say which and why.
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
// Activations: the tensors one transformer layer saves for its backward pass, per micro-batch
// (saved_layer_tensors lists them; activation_bytes_per_layer sums them). e = 2 B per element in
// mixed precision, 4 B in fp32 training; dropout masks are 1 B; a = heads, t = tp, d = h/a,
// h_kv = kv_heads*d, f = ffn_hidden; r = t with sequence parallelism (SP), else 1.
//   Outside attention and MLP GEMMs (replicated over TP, sharded by SP -- Korthikanti et al. 2022
//   §4.2.2: with SP the LayerNorm/dropout regions are split along the sequence and the GEMM inputs
//   are kept sharded and all-gathered again in backward):
//     attention norm input, QKV GEMM input, MLP norm input, MLP input   4 x e*sbh/r
//     with dropout: attention-output and MLP-output masks              2 x sbh/r
//   TP-sharded (column/row-parallel GEMMs, §4.2.1):
//     Q e*sbh/t; K and V e*sb*h_kv/t each; attention output = out-projection input e*sbh/t
//     MLP GELU: fc1 output (GELU input) and GELU output (fc2 input), 2 x e*sbf/t
//     MLP SwiGLU: fc1 output = gate and up (2 x e*sbf/t, the fused SwiGLU keeps its input and
//       recomputes silu in backward) and fc2 input (e*sbf/t): 3 x e*sbf/t
//   Core attention, what each kernel keeps:
//     non-flash (Korthikanti §4.1): softmax output e*a*s^2*b/t; with dropout also its 1-B mask and
//       the dropout output (5as^2b/t at e = 2). K and V are stored at full width h: Megatron's
//       unfused path repeats the KV groups to a heads before the batched GEMMs that save them.
//     flash (Dao 2022 FlashAttention §3.1 and Alg. 2; Dao 2023 FlashAttention-2 §3.1): the kernel
//       saves Q, K, V, its output O (the same tensor as the out-projection input, counted once) and
//       the logsumexp L, fp32 b*(a/t)*s = 4asb/t bytes; the s x s scores are recomputed in the
//       backward pass and the dropout mask is regenerated from the saved RNG state. K and V stay at
//       kv_heads (FlashAttention-2 takes grouped K/V directly).
//   Small per-row statistics (LayerNorm mean/rstd, RMSNorm rstd) are left out, as in Korthikanti.
// For GPT-style models (GELU MLP, dropout on, MHA, f = 4h, e = 2, non-flash) the sum is exactly
// Korthikanti et al. Table 2: none sbh(34 + 5as/h); TP sbh(10 + 24/t + 5as/(ht)); TP+SP
// sbh(34/t + 5as/(ht)). Dropout is modelled for GELU (GPT) models and not for SwiGLU (Llama)
// models, which train without it.
//   Selective recompute (§4.2): the core attention is recomputed, so its saved tensors go
//     (non-flash: the s^2 terms, giving sbh(10 + 24/t), SP 34/t; flash: the logsumexp; Q, K, V and
//     the out-projection input stay, as the checkpointed region's inputs and the next GEMM's input).
//   Full recompute (§4.1, Table 2): only the layer input, e*sbh/r (2sbh/t under TP+SP: Megatron
//     checkpoints the sequence-sharded hidden state), plus, once per GPU, the working set of the
//     one layer being recomputed: that layer's no-recompute activations with the same t / SP
//     sharding and the same attention kernel.
// Scaled by layers on the stage (ParallelSpec::layers_on_stage) x micro-batches in flight (GPipe:
// m; 1F1B: stage i holds min(pp - i, m); interleaved: x (1 + (pp-1)/(pp*v))).
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

// Whether the model trains with dropout: GPT-style (GELU) models do (Megatron's 0.1 defaults),
// Llama-style (SwiGLU) models do not. It adds the 1-B masks and, without flash attention, the
// attention-dropout tensors.
inline bool has_dropout(const ModelSpec& model) { return model.mlp == MlpKind::Gelu; }

// One tensor a layer keeps for backward: what it is and its bytes on one GPU.
struct SavedTensor {
  const char* name;
  double bytes;
};
// The tensors one transformer layer keeps for one micro-batch, in forward allocation order, with
// `model.flash_attention` choosing the attention kernel (see the derivation above).
// `element_bytes`: 2 for 16-bit activations, 4 for fp32 training.
std::vector<SavedTensor> saved_layer_tensors(const ModelSpec& model, int micro_batch, int tp,
                                             bool sequence_parallel, Recompute recompute,
                                             double element_bytes = 2.0);
// Their sum: activation bytes of one transformer layer for one micro-batch (Korthikanti et al.
// Table 2 for a GPT-style model without flash attention).
sim::Bytes activation_bytes_per_layer(const ModelSpec& model, int micro_batch, int tp,
                                      bool sequence_parallel, Recompute recompute,
                                      double element_bytes = 2.0);

// Micro-batches whose activations a stage holds at peak, times the interleaving factor.
double micro_batches_in_flight(const ParallelSpec& parallel, int micro_batches, int stage);

// Memory of one pipeline stage, and of the most loaded GPU.
MemoryBreakdown stage_memory(const MemoryRequest& request, int stage);
MemoryBreakdown estimate_memory(const MemoryRequest& request);

}  // namespace clustersim::workloads
