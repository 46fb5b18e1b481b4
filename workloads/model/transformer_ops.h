// The operations one GPU runs for a Megatron-style decoder transformer, with their cost.
//
// For a micro-batch of b sequences of length s on a tensor-parallel group of t GPUs, each op gives
// forward and backward FLOPs and HBM bytes moved *per GPU*. GEMMs also record their (m, n, k)
// shape (C[m,n] = A[m,k] * B[k,n]) and the number of independent GEMMs (`batch`, e.g. b*a/t
// attention heads) so that a compute model can apply a shape-dependent efficiency.
//
// Conventions:
//   * A GEMM costs 2*m*n*k FLOPs per batch entry; its backward runs two GEMMs of the same size
//     (data gradient and weight gradient), hence 2x the forward FLOPs. Bytes: read A and B, write C,
//     once per GEMM (perfect on-chip reuse), so backward moves 2x the forward bytes.
//   * "Model FLOPs" are the matrix-multiply FLOPs (kinds Gemm and Attention) -- the convention of
//     Narayanan et al. SC'21, whose per-iteration total
//       72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h))
//     these ops reproduce exactly for a GPT (4h GELU MLP, multi-head attention). Elementwise and
//     normalization ops carry their own (small, memory-bound) FLOPs which are kept out of that sum.
//   * FlashAttention's backward recomputes QK^T; that extra work is not model FLOPs and is not
//     counted here (bwd = 2x fwd for every matmul) -- a compute model may add it.
//   * Without FlashAttention the s x s scores, softmax output, dropout mask and dropped-out
//     probabilities are materialised in HBM; with it the attention core is one fused kernel that
//     reads Q, K, V and writes O.
//   * Sequence parallelism shards the norm/dropout/residual activations over t; without it they are
//     replicated on every tensor-parallel rank.
//   * Context parallelism (OpShape::cp) shards every op's tokens over cp; the attention core
//     attends the local s/cp queries to all s keys and values, which it reads chunk by chunk.
//   * Rotary models (Llama, GPT-NeoX) rotate Q and K after the QKV projection in one fused
//     memory-bound kernel ("rotary_embedding"); learned-position models (GPT) add their position
//     embedding once, in embedding_ops.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/units.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

enum class OpKind : std::uint8_t { Gemm, Attention, Elementwise, Norm, Embedding, Loss };

// Where in a layer an op runs, as Megatron-Core's cuda_graph_scope divides it (specs.h
// CudaGraphModule): the attention block; a dense MLP block; an MoE layer's router part (pre-MLP
// norm, router, top-k), its preprocess (latent projection, permute), its shared experts, and the
// rest (routed experts, sorts, unpermute, residual); a Mamba layer.
enum class GraphPart : std::uint8_t { None, Attention, Mlp, MoeRouter, MoePreprocess, MoeSharedExperts, MoeRest, Mamba };
// The precision of a linear layer's GEMM where a per-module recipe sets it apart from the run's
// (workloads/model/module_precision.h): Run = the run precision's rule (fp8_eligible linears at
// fp8 / nvfp4), Bf16 = no quantization, Fp8 = fp8 (MXFP8) under an nvfp4 run.
enum class LinearPrecision : std::uint8_t { Run, Bf16, Fp8 };

struct OpCost {
  std::string_view name;
  OpKind kind = OpKind::Elementwise;
  sim::Flops fwd_flops, bwd_flops;
  sim::Bytes fwd_bytes, bwd_bytes;
  int m = 0, n = 0, k = 0;   // GEMM shape (Gemm and Attention kinds); 0 otherwise
  int batch = 0;             // independent GEMMs of that shape (1 for a linear layer); 0 otherwise
  bool fp8_eligible = false; // a linear layer whose GEMM can run in FP8 (Transformer Engine)
  // The fused attention op's kernel generation (ModelSpec::attention_kernel; flash_attention only).
  AttentionKernel attention_kernel = AttentionKernel::Native;
  LinearPrecision linear_precision = LinearPrecision::Run;  // a per-module recipe's override
  bool frozen = false;       // a weight that does not train (LoRA, model/lora.h): the backward is the
                             // data gradient only (bwd = fwd FLOPs and bytes, one kernel)
  // The up half of a gated MLP's fc1 ("mlp_up", "expert_up"). Megatron-Core builds a gated MLP's
  // gate and up projections as one linear_fc1 of width 2 x ffn (mlp.py and moe/experts.py:
  // ffn_hidden_size *= 2), one Transformer Engine module (Linear / LayerNormLinear, or
  // GroupedLinear for the experts) and one GEMM per pass: the half carried here issues no
  // Transformer Engine module call, no per-expert GEMMs and no FP8 / NVFP4 cast of its own (the
  // module quantizes its input once, and its output gradient in one kernel over both halves).
  bool second_fc1_half = false;
  // The input is its layer's norm output, computed inside the op's own Transformer Engine module:
  // Megatron-Core's TE layer spec builds a dense layer's linear_qkv and linear_fc1 as
  // TELayerNormColumnParallelLinear. Under FP8 current scaling, Transformer Engine 2.8 and later
  // take that input's amax in the norm kernel (ComputeModel::fp8_cast_seconds).
  bool norm_fed = false;
  // The backward reads values of the op's input (a GEMM's weight gradient, a norm's or an
  // activation's derivative, the attention core). false for a residual add (dx = dy) and dropout
  // (dx = dy x mask: the mask, not the input); rerun_dead_from walks it.
  bool bwd_reads_input = true;
  bool host_sync_after = false;  // forward: the host waits for the device after issuing this op
                                 // (dropless MoE copies its token counts to the host), so it cannot
                                 // run ahead across it (ComputeModel::ops_time)
  // Host work an eager framework spends on this op beyond issuing its kernels: framework ops that
  // launch no kernel of their own or only a tiny one (reshapes, token-count sums, split-size lists,
  // device-to-host copies, autograd.Function wrappers, loss bookkeeping), each host_launch_us, and
  // torch.distributed calls, each torch_distributed_call_us (ComputeModel::host_time). Only MoE
  // layers set them (model/moe_host_ops.h counts them from Megatron-Core's source).
  double fwd_host_ops = 0, bwd_host_ops = 0;
  double fwd_dist_calls = 0, bwd_dist_calls = 0;
  // Kernels the op launches in each pass where that is not ComputeModel::kernels' count for its
  // kind (-1: the default). mamba_ssm's SSD ops (model/mamba_ops.h) are one Triton kernel each:
  // a forward kernel that the backward does not rerun launches none there, a gradient kernel none
  // in the forward, and some launch memsets, reductions or torch ops around the kernel.
  int fwd_kernels = -1, bwd_kernels = -1;
  // The part of its layer the op runs in, for per-module CUDA graphs (CudaGraphModule,
  // ComputeModel::set_cuda_graph_modules); None outside the layers (embedding, output layer, loss).
  GraphPart graph_part = GraphPart::None;
  // The loss op only (OpKind::Loss): its implementation and the vocabulary classes per rank it
  // normalises over (model/cross_entropy_kernels.h, ComputeModel::unfused_loss).
  CrossEntropy cross_entropy = CrossEntropy::Fused;
  double loss_classes = 0;

  bool is_matmul() const { return kind == OpKind::Gemm || kind == OpKind::Attention; }
};

struct OpShape {
  int micro_batch = 1;       // b
  int seq_len = 2048;        // s
  int tp = 1;                // t
  // Context parallelism: each GPU holds s/cp tokens of every sequence and attends them to all s
  // keys (ring attention with Megatron's 2·cp-chunk causal load balancing, so every CP rank does
  // 1/cp of the attention work). cp divides s (the loader checks it).
  int cp = 1;
  bool sequence_parallel = false;
  int precision_bytes = 2;   // activation/weight element size (2 for bf16/fp16, 4 for fp32, 1 fp8)
  bool flash_attention = true;
  // MoE layers: expert-parallel group size, and how many times the mean load the busiest GPU's
  // experts receive (router load imbalance, capped by the capacity factor; 1 = balanced).
  int ep = 1;
  double moe_load_factor = 1.0;
  // Expert tensor parallelism (ParallelSpec::etp): the routed experts' FFN width splits over etp
  // GPUs and each GPU's experts see etp / tp times the token-slots of etp = tp. 0: etp = tp.
  int etp = 0;
  // The routed experts' GEMMs run in fp8 or fp4 (Megatron-Core config.fp8 / config.fp4): the
  // grouped GEMM needs every expert's rows padded to its alignment (TEGroupedMLP Fp8Padding /
  // Fp8Unpadding); with `moe_dispatcher` hybridep the dispatch already wrote them padded.
  bool quantized_experts = false;
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  // Transformer Engine's op fuser runs the routed experts' MLP (TrainingSpec::te_op_fuser): no
  // eager GLU clamp or expert bias loop around the grouped GEMMs.
  bool te_op_fuser = false;
  // The routed experts as one grouped GEMM per linear (TEGroupedMLP), or, when false, as
  // Megatron-Core's SequentialMLP: per local expert its own fc1, activation and fc2 ops at that
  // expert's rows (TrainingSpec::moe_grouped_gemm; model/sequential_experts.h).
  bool moe_grouped_gemm = true;
  // The language-model loss's implementation (TrainingSpec::cross_entropy).
  CrossEntropy cross_entropy = CrossEntropy::Fused;
};

// Elementwise FLOP counts per element (not model FLOPs; used only for the op's own cost).
inline constexpr double kLayerNormFlopsPerElement = 8.0;  // mean, variance, normalise, scale, shift
inline constexpr double kRmsNormFlopsPerElement = 4.0;    // square, mean, rsqrt-scale, weight
inline constexpr double kGeluFlopsPerElement = 8.0;       // tanh approximation
inline constexpr double kSoftmaxFlopsPerElement = 5.0;    // max, subtract, exp, sum, divide
inline constexpr double kCrossEntropyFlopsPerElement = 5.0;
inline constexpr double kDropoutMaskBytesPerElement = 1.0;  // PyTorch stores the mask as uint8

// The ops of one transformer layer, in forward execution order. With `moe_layer` the MLP is the
// model's mixture of experts:
//   * router: one GEMM [tokens, hidden] x [hidden, experts] (kept out of FP8, as Megatron-Core
//     keeps the router in higher precision), then softmax/top-k;
//   * permute and unpermute: each token's hidden vector copied to its k slots and back (memory
//     bound); the permute carries the forward's host sync (OpCost::host_sync_after: the token
//     counts the dispatcher needs on the host; none under alltoall drop-and-pad, capacity_factor > 0);
//   * with expert parallelism and more than one local expert, the received slots sorted by local
//     expert and back (moe_sort_chunks / moe_unsort_chunks, memory bound), under the alltoall
//     dispatcher only (the flex dispatcher permutes the received tokens straight into expert order);
//   * shared experts: a dense MLP of width shared_experts x moe_ffn_hidden on every token;
//   * with quantized_experts (fp8 / fp4) and the alltoall or DeepEP dispatcher, the slots padded
//     per expert to the quantization alignment before the grouped GEMM and unpadded after it
//     (expert_pad / expert_unpad, memory bound; expert_padding.h);
//   * with ModelSpec::moe_apply_probs_on_input (Llama 4), the slots multiplied by their router
//     probability before the grouped GEMM (moe_probs_on_input, memory bound; expert_probs.h);
//   * with glu_clamp (GPT-OSS), the eager clamp of the experts' GLU input before their activation,
//     with a host sync after it (expert_act_clamp, glu_clamp.h); with expert_bias, the second
//     linear's bias after them (expert_bias, expert_bias.h); neither under te_op_fuser;
//   * routed experts: a grouped GEMM over the experts/ep experts this GPU holds. Over the ep group
//     each GPU's experts receive on average tokens x k token-slots (ep GPUs' tokens, k of the
//     experts each, 1/ep of the experts here), times moe_load_factor on the busiest GPU. Model
//     FLOPs therefore count k experts per token, never all of them. Under moe_grouped_gemm =
//     false (SequentialMLP) each local expert has its own fc1, activation and fc2 ops at its
//     share of the slots, then one concatenation of their outputs (model/sequential_experts.h).
// The expert-parallel all-to-all (dispatch and combine) is communication, costed by the caller.
std::vector<OpCost> layer_ops(const ModelSpec& model, const OpShape& shape, bool moe_layer = false);
// Bytes one GPU's dispatch (or combine) all-to-all moves for one MoE layer: every token's hidden
// vector (its moe_latent_size-wide latent under LatentMoE) to each of its k experts, sharded over tp (sequence-parallel tokens); under context
// parallelism the rank's s/cp tokens only.
double moe_dispatch_bytes(const ModelSpec& model, const OpShape& shape);
// Input embedding lookup (vocab-parallel), run by the first pipeline stage.
std::vector<OpCost> embedding_ops(const ModelSpec& model, const OpShape& shape);
// Final norm, logits GEMM and cross-entropy loss, run by the last pipeline stage.
std::vector<OpCost> head_ops(const ModelSpec& model, const OpShape& shape);

struct OpTotals {
  sim::Flops fwd_flops, bwd_flops;          // every op
  sim::Flops fwd_matmul_flops, bwd_matmul_flops;  // Gemm + Attention only (model FLOPs)
  sim::Bytes fwd_bytes, bwd_bytes;
};
OpTotals sum_ops(const std::vector<OpCost>& ops);

// Model FLOPs (matmul only, SC'21 convention) of one training iteration over the whole model for
// `global_batch` sequences, summed over the ops (tp = 1). Excludes recomputation.
sim::Flops model_flops_per_iteration(const ModelSpec& model, int global_batch);
// Hardware FLOPs: model FLOPs plus what recomputation adds (full: one more forward of every
// transformer layer, SC'21 Eq. 3, less the matmuls [training] recompute_save keeps and, with
// recompute_dce, those rerun_dead_from drops; selective: the attention core's forward again).
sim::Flops hardware_flops_per_iteration(const ModelSpec& model, int global_batch, Recompute recompute,
                                        unsigned recompute_save = 0, bool recompute_dce = false);

// [training] recompute_dce: the index of the first op of the dead tail of a layer's forward
// rerun (layer.size() when none), the ops a rerun pruned by dead-code elimination leaves out
// (JAX: ad_checkpoint.py remat_partial_eval, pe.dce_jaxpr of the staged rerun). The rule, over
// the layer's ops in forward order, where each op consumes the previous op's output: the last
// op's output leaves the layer (the next layer keeps it as its own input), so the rerun never
// needs it; an earlier op is dead when the op after it is dead and that op's backward reads no
// values of its input (OpCost::bwd_reads_input false: a residual add, dropout). A residual add's
// output also feeds the next residual add, which reads no values either, so the chain is the
// whole dependence the backward has. A dense layer's tail: the MLP's output projection (mlp_fc2 /
// mlp_down), the MLP dropout and the last residual add; the GELU / SwiGLU before it stays, as the
// output projection's weight gradient reads it.
std::size_t rerun_dead_from(const std::vector<OpCost>& layer);

}  // namespace clustersim::workloads
