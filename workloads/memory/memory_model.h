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
//   gradients: mixed, TrainingSpec::grad_dtype: fp32 (Megatron-LM's default: a persistent fp32
//     `main_grad` buffer that gradient accumulation and the DP reduction use; forced on for bf16)
//     4 B; bf16/fp16 (Megatron-Core / NeMo grad_reduce_in_fp32 = False, apex grad_sync_dtype,
//     DeepSpeed's gradient partitions, the ZeRO paper's 2+2+K accounting) 2 B; fp32 training: 4 B.
//   optimizer (K), each state at TrainingSpec::optimizer_dtype (o = 4 B fp32, 2 B bf16/fp16):
//     Adam mixed 3o (master weights + m + v; apex DistributedFusedAdam's params, exp_avg and
//     exp_avg_sq shards are all of its `dtype`), Adam fp32 2o (m, v); SGD with momentum mixed 2o
//     (master + momentum), fp32 o; plain SGD mixed o (master), fp32 0.
// Sharding over N = dp x cp (Megatron-Core reduces gradients and shards the distributed optimizer
// over the combined data- and context-parallel group): ZeRO-1 shards K, ZeRO-2 also the gradients, ZeRO-3
// also the weights; Megatron's distributed optimizer shards K only (6 + 12/d with fp32 main grads,
// 4 + 12/d with 16-bit ones).
// ZeRO-3 also holds gathered (unsharded) weights while it computes (zero3_gathered_bytes):
//   Block (PyTorch FSDP, one unit per transformer layer): the current layer and the prefetched
//     next, `zero3_prefetch_layers` = 2 layers.
//   Module (DeepSpeed ZeRO-3, deepspeed/runtime/zero/partitioned_param_coordinator.py): each
//     submodule is gathered when it runs and released after; while the gathered total is below
//     stage3_max_live_parameters (default 1e9) it prefetches the next submodules' parameters, at
//     most stage3_prefetch_bucket_size (default 5e8) per step and overshooting by at most the last
//     one taken (DeepSpeed config docs, "ZeRO optimizations": "The maximum number of parameters
//     resident per GPU before releasing"). In backward the running submodule's unsharded gradient
//     (param dtype) exists until it is copied into the reduce bucket. deepspeed_live_bytes replays
//     those rules over the stage's submodules (QKV, out-projection, fc1, fc2 per layer; embedding
//     and output layer); parameters below stage3_param_persistence_threshold (norms, biases) are
//     left out, and stage3_max_reuse_distance, which only keeps a parameter reused within 1e9
//     parameters, is not modelled.
//
// Fine-tuning ([finetune], model/lora.h) and ZeRO-Offload ([sync] offload_optimizer):
//   LoRA: the frozen weights keep their bytes (and ZeRO-3 sharding) but have no gradients and no
//     optimizer states; the adapters (lora_layer_parameters x layers on the stage) carry weights,
//     gradients and optimizer states as above. Activations are unchanged: the backward still needs
//     every layer's saved inputs to carry activation gradients down (the adapters' own inputs are the
//     projections' inputs already saved; their r-wide intermediates are left out).
//   ZeRO-Offload (Ren et al. 2021): gradients leave the GPU bucket by bucket (the buckets stay) and
//     the optimizer states, fp32 master weights included, live in host memory: their lines move to
//     MemoryCategory::Host and out of the GPU total, sharded as before.
//
// Context parallelism: activations, logits and score workspaces are those of the s/cp tokens a
// rank holds (s below is then s/cp); one more NCCL communicator for the CP group.
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
// sbh(34/t + 5as/(ht)). Dropout follows ModelSpec::trains_with_dropout (GELU models by default,
// not SwiGLU ones, which train without it; an explicit `dropout` overrides).
//   FP8 training (Transformer Engine): each FP8 GEMM's input is cast to FP8 and that 1-B copy is
//     what the module saves for its weight-gradient GEMM (TE's Linear / LayerNormLinear /
//     LayerNormMLP save the quantized input, transformer_engine/pytorch/module/*.py; the TE user
//     guide: "FP8 ... activations saved for backward"). So the QKV GEMM input (the attention norm's
//     output), the MLP input and the fc2 input (the GELU/SwiGLU output) take 1 B; the norm inputs,
//     Q/K/V/O (the attention kernel runs in 16 bits and keeps them) and fc1's output (the
//     activation's input) stay 16-bit; the out-projection keeps its own FP8 copy of O (1 B) beside
//     the attention kernel's 16-bit O. ActivationBytes carries the two element sizes.
//   Selective recompute (§4.2): the core attention is recomputed, so its saved tensors go
//     (non-flash: the s^2 terms, giving sbh(10 + 24/t), SP 34/t; flash: the logsumexp; Q, K, V and
//     the out-projection input stay, as the checkpointed region's inputs and the next GEMM's input).
//   Full recompute (§4.1, Table 2): only the layer input, e*sbh/r (2sbh/t under TP+SP: Megatron
//     checkpoints the sequence-sharded hidden state), plus, once per GPU, the working set of the
//     one layer being recomputed: that layer's no-recompute activations with the same t / SP
//     sharding and the same attention kernel. With [training] recompute_save (JAX's
//     save_only_these_names) the named ops' outputs are kept too, each as the op writes it:
//     qkv_proj e*sb*(a + 2*a_kv)*d/t; attention_out_proj and fc2 / mlp_down e*sbh/r (the hidden
//     state after the row-parallel reduction); fc1, gate, up e*sbf/t each.
// Scaled by layers on the stage (ParallelSpec::layers_on_stage) x micro-batches in flight (GPipe: m; 1F1B: stage i holds
// min(pp - i, m); interleaved: x (1 + (pp-1)/(pp*v))).
//
// The peak: persistent terms (states, saved activations, buckets, ZeRO-3 gathered weights,
// runtime) plus the largest transient phase, not the sum of every transient: a layer's forward
// (the attention-score workspace without flash attention), a layer's backward (the workspace and,
// under full recompute, the recomputed layer's working set) and the loss on the last stage (fp32
// logits and loss). These never coexist; the lines of the smaller phases are listed with
// `at_peak = false` and left out of the totals.
#pragma once

#include <cstdint>
#include <string_view>
#include <string>
#include <vector>

#include "sim/units.h"
#include "topology/catalog.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// Runtime overhead outside PyTorch's allocator (assumptions, see memory_buffers.cpp for sources).
inline constexpr double kCudaContextBytes = 512.0 * 1048576.0;      // CUDA context + kernels
inline constexpr double kCublasWorkspaceBytes = 32.0 * 1048576.0;   // CUBLAS_WORKSPACE_CONFIG :4096:8
inline constexpr double kNcclCommunicatorBytes = 128.0 * 1048576.0; // per communicator in use

struct MemoryOptions {
  // true: count every tensor of a layer (biases, norm weights). false: 4h^2 attention (MHA) +
  // 2*h*ffn MLP only -- the "12*l*h^2" approximation of Narayanan et al. / Korthikanti et al.,
  // needed to reproduce their analytical figures.
  bool exact_layer_params = true;
  bool include_runtime = true;   // CUDA context, cuBLAS workspace, NCCL buffers
  int zero3_prefetch_layers = 2; // FSDP (Zero3Gather::Block): the gathered layer + the prefetched next
  // DeepSpeed ZeRO-3 (Zero3Gather::Module), its config defaults (DeepSpeed docs, config-json):
  double deepspeed_max_live_parameters = 1e9;    // stage3_max_live_parameters
  double deepspeed_prefetch_parameters = 5e8;    // stage3_prefetch_bucket_size
};

struct MemoryRequest {
  ModelSpec model;
  ParallelSpec parallel;
  TrainingSpec training;
  SyncSpec sync;
  sim::Bytes capacity;
  MemoryOptions options;
  double moe_load_factor = 1.0;  // MoE: busiest GPU's token-slots / the mean (stage_costs.h moe_load_factor)
};

// Host: host (CPU) memory a GPU's share of the job needs (ZeRO-Offload's gradients and optimizer
// states); listed, never part of the GPU's total.
enum class MemoryCategory : std::uint8_t { Params, Grads, Optimizer, Activations, Buffers, Runtime, Host };

// Transient phases a line belongs to (bit mask; 0 = held throughout the iteration).
inline constexpr std::uint8_t kLayerForward = 1, kLayerBackward = 2, kLoss = 4;

struct MemoryLine {
  std::string name;
  MemoryCategory category;
  sim::Bytes bytes;
  std::string formula;
  std::uint8_t phases = 0;  // kLayerForward | kLayerBackward | kLoss, 0 = persistent
  bool at_peak = true;      // false: a transient of a phase smaller than the peak one, not in the totals
};

struct MemoryBreakdown {
  sim::Bytes params, grads, optimizer, activations, buffers, runtime, total;
  sim::Bytes host;            // host (CPU) memory per GPU (ZeRO-Offload), not in total
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
StateBytes state_bytes_per_param(const TrainingSpec& training);

// Model-state bytes for `params` parameters held by one GPU before data-parallel sharding, with
// ZeRO / distributed-optimizer sharding over `dp`. (params, grads, optimizer)
struct ModelStates {
  sim::Bytes params, grads, optimizer;
  sim::Bytes total() const { return params + grads + optimizer; }
};
ModelStates model_state_bytes(double params, const ParallelSpec& parallel, const TrainingSpec& training);

// Whether the model trains with dropout (ModelSpec::trains_with_dropout). It adds the 1-B masks
// and, without flash attention, the attention-dropout tensors.
inline bool has_dropout(const ModelSpec& model) { return model.trains_with_dropout(); }

// Bytes per saved activation element: `element` for 16-bit (2) or fp32 (4) training, `gemm_input`
// for the inputs FP8 GEMMs save (1 B under fp8, else `element`).
struct ActivationBytes {
  double element = 2.0, gemm_input = 2.0;
};
ActivationBytes activation_bytes_for(topology::Precision precision);

// One tensor a layer keeps for backward: what it is and its bytes on one GPU.
struct SavedTensor {
  const char* name;
  double bytes;
};
// The tensors one transformer layer keeps for one micro-batch, in forward allocation order, with
// `model.flash_attention` choosing the attention kernel (see the derivation above).
// `recompute_save` (workloads/specs.h RecomputeSaveOp bits) adds, under Recompute::Full, the outputs
// of the ops recompute_save keeps.
std::vector<SavedTensor> saved_layer_tensors(const ModelSpec& model, int micro_batch, int tp,
                                             bool sequence_parallel, Recompute recompute,
                                             const ActivationBytes& bytes = {}, unsigned recompute_save = 0);
// Whether [training] recompute_modules discards `tensor` in the forward (recomputed in the
// backward): "layernorm" drops the two norms' outputs, the "QKV GEMM input" and the "MLP input"
// (Megatron-Core recompute_modules; workloads/specs.h RecomputeModule).
bool recomputed_by_modules(const SavedTensor& tensor, unsigned recompute_modules);
// Their sum: activation bytes of one transformer layer for one micro-batch (Korthikanti et al.
// Table 2 for a GPT-style model without flash attention).
sim::Bytes activation_bytes_per_layer(const ModelSpec& model, int micro_batch, int tp,
                                      bool sequence_parallel, Recompute recompute,
                                      const ActivationBytes& bytes = {}, unsigned recompute_save = 0);

// DeepSpeed ZeRO-3's live parameters (see above): `modules` are the submodules' parameter counts
// in forward order; the result is the peak bytes of gathered weights (`weight_bytes` each), in
// backward plus the running submodule's unsharded gradient (`grad_bytes` each).
double deepspeed_live_bytes(const std::vector<double>& modules, double max_live_parameters,
                            double prefetch_parameters, double weight_bytes, double grad_bytes);
// Gathered weights ZeRO-3 holds on `stage` (0 unless zero = 3 and dp > 1).
double zero3_gathered_bytes(const MemoryRequest& request, int stage);

// Micro-batches whose activations a stage holds at peak, times the interleaving factor.
double micro_batches_in_flight(const ParallelSpec& parallel, int micro_batches, int stage);

// Memory of one pipeline stage, and of the most loaded GPU.
MemoryBreakdown stage_memory(const MemoryRequest& request, int stage);
MemoryBreakdown estimate_memory(const MemoryRequest& request);

}  // namespace clustersim::workloads
