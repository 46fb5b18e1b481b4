// Validated descriptions of what is trained and how: the model shape, the parallel layout, the
// training setup and the gradient synchronization. The scenario loader fills these (and checks
// every field); workloads turn them into tasks. Plain data: no behaviour beyond derived values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/enum_names.h"
#include "topology/catalog.h"

namespace clustersim::workloads {

enum class MlpKind : std::uint8_t { Gelu, SwiGlu };
enum class NormKind : std::uint8_t { LayerNorm, RmsNorm };
// The names scenarios take (model.mlp, model.norm); parse with sim::parse.
inline constexpr sim::Choice<MlpKind> kMlpKindNames[] = {{"gelu", MlpKind::Gelu}, {"swiglu", MlpKind::SwiGlu}};
inline constexpr sim::Choice<NormKind> kNormKindNames[] = {{"layernorm", NormKind::LayerNorm},
                                                           {"rmsnorm", NormKind::RmsNorm}};
// Position encoding. Auto: learned absolute embeddings for GELU (GPT) models, rotary for SwiGLU
// (Llama) models, which is how every preset pairs them; imported configs set it explicitly.
// None: no position encoding at all (Megatron --position-embedding-type none; Nemotron-H, whose
// Mamba layers carry position).
enum class PositionKind : std::uint8_t { Auto, Learned, Rotary, None };

// The fused attention kernel the software stack runs (ModelSpec::attention_kernel). Native: the
// GPU generation's own (FlashAttention-2-class kernels up to Ampere and Ada, FlashAttention-3 or
// cuDNN fused attention on Hopper, cuDNN / FlashAttention-4 on Blackwell: what current
// Megatron-Core / Transformer Engine containers select). Fa2: an Ampere-generation kernel on
// whatever GPU runs it (mma.sync, no wgmma or TMA: FlashAttention-1 and -2, the Triton flash
// attention of 2023), what stacks from before FlashAttention-3 (July 2024) ran on Hopper. Fa3:
// FlashAttention-3, Hopper only, where it is the native kernel (the scenario refuses it elsewhere).
// FlashAttnTriton: Tri Dao's 2022 FlashAttention in Triton (flash_attn/flash_attn_triton.py, copied
// as llmfoundry/models/layers/flash_attn_triton.py; compiled by pre-MLIR Triton, mma.sync), which
// llm-foundry ran as `attn_impl: triton`: about half of FlashAttention-2's speed on A100 (Dao 2023,
// Fig. 4), and on Hopper an Ampere kernel at Ampere's tensor rate per SM and clock.
enum class AttentionKernel : std::uint8_t { Native, Fa2, Fa3, FlashAttnTriton };
inline constexpr sim::Choice<AttentionKernel> kAttentionKernelNames[] = {
    {"native", AttentionKernel::Native},
    {"fa2", AttentionKernel::Fa2},
    {"fa3", AttentionKernel::Fa3},
    {"flash-attn-triton", AttentionKernel::FlashAttnTriton}};

// What one layer of a hybrid model is (ModelSpec::hybrid_pattern; workloads/model/mamba_ops.h).
// Transformer and MoeTransformer are the attention + MLP (or MoE) layers of a plain decoder; a
// hybrid model's layers are single blocks, each a pre-norm, one mixer or MLP, and a residual add:
// Mamba (Mamba-2 mixer), Attention (self-attention only), Mlp (the MLP only) and Moe (the MoE
// block only: router, routed and shared experts; Nemotron 3's 'E' layers).
enum class LayerKind : std::uint8_t { Transformer, MoeTransformer, Mamba, Attention, Mlp, Moe };
inline constexpr LayerKind kLayerKinds[] = {LayerKind::Transformer, LayerKind::MoeTransformer, LayerKind::Mamba,
                                            LayerKind::Attention, LayerKind::Mlp, LayerKind::Moe};

struct ModelSpec {
  std::string id = "custom";   // preset id or "custom" / "hf:<path>"
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;            // grouped-query attention; == heads for multi-head attention
  // Width of one attention head when it is not hidden / heads (Hugging Face `head_dim`; Qwen3:
  // 128 with hidden 2048 and 32 heads, so Q and the out-projection input are 4096 wide, twice
  // hidden). 0: hidden / heads, as in GPT, Llama and Mixtral.
  int attention_head_dim = 0;
  int ffn_hidden = 0;          // GELU MLP: 4*hidden; SwiGLU: the intermediate size (3 matrices)
  int seq_len = 2048;
  int vocab = 51200;
  MlpKind mlp = MlpKind::Gelu;
  NormKind norm = NormKind::LayerNorm;
  bool tied_embeddings = true; // output layer shares the input embedding (GPT); Llama unties
  bool flash_attention = true;
  AttentionKernel attention_kernel = AttentionKernel::Native;  // which fused kernel (flash_attention only)
  PositionKind positions = PositionKind::Auto;
  // Dropout on the residual, attention and embedding outputs. Unset: inferred from the MLP, as
  // every preset pairs them: GELU (GPT) models train with Megatron's 0.1 dropout, SwiGLU (Llama)
  // models with none. Recipes that turn it off for a GELU-kind model (Nemotron-4: hidden,
  // attention and ffn dropout 0.0) set it explicitly.
  std::optional<bool> dropout;
  // Mixture of experts (Shazeer et al. 2017; Switch, GShard; Mixtral, DeepSeek-V3). 0 experts: a
  // dense model. In an MoE layer the MLP is replaced by a router (hidden -> experts logits) and
  // `experts` expert MLPs of width `moe_ffn_hidden`, of which each token uses `experts_per_token`
  // (top-k), plus `shared_experts` always-on experts of the same width (DeepSeek-V3: 1; Qwen-MoE
  // gives its shared expert's width as shared_experts x moe_ffn_hidden). The first
  // `first_dense_layers` layers keep the dense MLP (ffn_hidden); after them every
  // `moe_layer_freq`-th layer is MoE. capacity_factor > 0 drops tokens past capacity_factor x the
  // mean load of an expert (GShard), padded to it (drop-and-pad); 0 is dropless (Megatron-Core's default).
  int experts = 0;
  int experts_per_token = 0;
  int moe_ffn_hidden = 0;
  int shared_experts = 0;
  int first_dense_layers = 0;
  int moe_layer_freq = 1;
  double capacity_factor = 0.0;
  // Group-limited routing (DeepSeek-V3 §2.1.2 "node-limited routing"; Megatron-Core
  // moe_router_num_groups / moe_router_group_topk, HF n_group / topk_group): the experts split into
  // `router_groups` groups of consecutive experts, a token first picks `router_group_topk` groups
  // and then its top-k experts inside them. 0 = no group limit. Only the flex dispatcher's
  // per-node deduplication reads it (workloads/training/moe_node_routing.h).
  int router_groups = 0;
  int router_group_topk = 0;
  // LatentMoE (NVIDIA 2026, "Nemotron 3 Super", arXiv 2604.12374; Megatron-Core --moe-latent-size,
  // HF moe_latent_size): > 0 projects each token from hidden down to this width before the token
  // dispatch and back after the combine (MoELayer fc1_latent_proj / fc2_latent_proj, TELinear
  // parallel_mode "duplicated": whole on every tensor-parallel rank, over that rank's tokens). The
  // router and the shared experts read the full hidden state; the all-to-all carries latent-wide
  // tokens (token_dispatcher.py: hidden_dim = moe_latent_size or hidden_size) and the routed
  // experts map latent -> moe_ffn_hidden -> latent (experts.py linear_fc1 / linear_fc2). 0: none.
  int moe_latent_size = 0;
  // The routed experts' linears carry biases (Megatron-Core add_bias_linear in an MoE layer;
  // GPT-OSS). TEGroupedMLP adds the second linear's bias outside its grouped GEMM, weighted by
  // each slot's router probability, in an eager per-expert loop (transformer_ops.h, expert_bias).
  bool expert_bias = false;
  // The router's probabilities multiply the dispatched tokens before the routed experts' first
  // linear instead of their activation's output (Megatron-Core moe_apply_probs_on_input, top-1
  // routing only; Llama 4: NeMo Llama4Config, Hugging Face Llama4TextMoe). TEGroupedMLP does it as
  // an eager [slots, hidden] multiply (transformer_ops.h, moe_probs_on_input).
  bool moe_apply_probs_on_input = false;
  // Hybrid Mamba models (Megatron-LM MambaModel, --hybrid-override-pattern; Nemotron-H, arXiv
  // 2504.03624): one character per layer, 'M' a Mamba-2 layer, '*' a self-attention layer, '-' an
  // MLP layer, 'E' an MoE layer (Megatron-Core's MoE block: router, `experts` routed experts,
  // shared experts; Nemotron 3, NVIDIA 2025, "Nemotron 3 Nano" technical report), which needs
  // experts > 0 (layers = the pattern's length). Empty: every layer is a transformer layer. With a
  // pattern, first_dense_layers and moe_layer_freq play no part. The Mamba-2 mixer (Dao & Gu
  // 2024, arXiv 2405.21060) has mamba_heads heads of mamba_head_dim (d_inner = their product,
  // expand x hidden), B and C shared by mamba_groups groups, state size mamba_state (d_state), a
  // causal depthwise conv of mamba_conv taps (d_conv) and SSD chunks of mamba_chunk tokens.
  std::string hybrid_pattern;
  int mamba_heads = 0;
  int mamba_head_dim = 64;
  int mamba_groups = 8;
  int mamba_state = 128;
  int mamba_conv = 4;
  int mamba_chunk = 128;
  // Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 Sec. 2.1; DeepSeek-V3,
  // arXiv:2412.19437 Sec. 2.1.1; workloads/model/attention_variants.h): kv_lora_rank > 0 turns it
  // on. Queries come from a q_lora_rank latent (0: a plain hidden -> heads x (nope + rope)
  // projection), keys and values from one kv_lora_rank latent plus a qk_rope_head_dim rotary key
  // shared by all heads; QK^T runs over qk_nope_head_dim + qk_rope_head_dim, PV over v_head_dim.
  // Names as in DeepSeek-V3's config.json.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  // Sliding-window attention (Beltagy et al. 2020, "Longformer"; GPT-OSS, openai/gpt-oss-120b
  // config.json sliding_window 128): on a sliding layer each query attends the
  // min(position + 1, sliding_window) keys before it. 0: every layer attends the whole sequence.
  // Layer l slides unless (l + 1) is a multiple of full_attention_every (GPT-OSS's layer_types
  // alternate sliding, full: 2; 1 would be no sliding layer, 0 = every layer slides).
  int sliding_window = 0;
  int full_attention_every = 0;
  // Packed sequences (fine-tuning with sequence packing: NeMo 2 / Megatron-Bridge
  // PackedSequenceSpecs, the THD layout with cu_seqlens): each seq_len sequence is a pack of
  // samples that attend only within themselves, so a pack's attention costs sum_i l_i^2 instead
  // of seq_len^2. packed_sample_len is that sum over seq_len (the samples' length weighted by
  // length; for equal samples, their length). Only the fused attention kernel's work shrinks:
  // every token still runs every linear layer, and Q, K, V and O are read and written as before.
  // 0: one sample per sequence.
  double packed_sample_len = 0;
  // Learned attention sinks (GPT-OSS, OpenAI's gpt-oss model card Sec. 2.1): one learned logit per
  // head added to the softmax denominator; `heads` parameters per layer, no stored activations.
  bool attention_sinks = false;
  // YaRN RoPE scaling (Peng et al. 2023; GPT-OSS, openai/gpt-oss-120b config.json rope_scaling
  // rope_type "yarn"). Megatron-Bridge turns apply_rope_fusion off for any position_embedding_type
  // but "rope" (megatron/bridge/utils/fusions.py validate_rope_fusion_compatibility), so the
  // rotation runs as Megatron-Core's unfused _apply_rotary_pos_emb_bshd (transformer_ops.cpp).
  bool yarn_rope = false;
  // The dense MLP's activation is squared ReLU (Nemotron-4: Parmar et al. 2024, "Nemotron-4 15B
  // Technical Report" §2) run as two eager PyTorch ops, relu then pow(., 2), with autograd's
  // backward of each (model/eager_squared_relu.h): NeMo 2's NemotronConfig. Needs the "gelu" MLP
  // kind (two matrices). false: the activation is one fused kernel a pass, the "gelu" kind's cost.
  bool eager_squared_relu = false;
  // The dense layer runs as a plain PyTorch Llama module in eager mode (torchtitan's
  // models/llama/model.py without torch.compile, Meta's reference model, Hugging Face's
  // LlamaRMSNorm): RMSNorm, the complex-form rotary embedding, SwiGLU and the grouped-query key /
  // value repeat as their eager ops (model/eager_layer_ops.h). false: each is one fused kernel a
  // pass (Megatron-Core / Transformer Engine, and what torch.compile's Inductor generates).
  bool eager_layer_ops = false;
  // The routed experts' GLU clamps its inputs before the activation (GPT-OSS: Megatron-Core
  // activation_func_clamp_value 7.0 with quick_gelu, set by Megatron-Bridge's GPT-OSS bridge; Hugging
  // Face swiglu_limit). Megatron-Core's TEGroupedMLP runs the clamp eagerly around its fused
  // quick-GeGLU kernel unless Transformer Engine's op fuser runs the expert MLP
  // (TrainingSpec::te_op_fuser): model/glu_clamp.h.
  bool glu_clamp = false;
  // Multi-token prediction (DeepSeek-V3, arXiv:2412.19437 Sec. 2.2; Hugging Face
  // num_nextn_predict_layers; Megatron-Core --mtp-num-layers): `mtp_layers` sequential MTP modules
  // after the last layer, each an embedding lookup of the next token (shared embedding), two
  // RMSNorms, a 2h -> h projection, one transformer layer of the model's own kind, a final norm
  // and the shared output head with its own loss. Megatron-Core places them on the last pipeline
  // stage (workloads/model/mtp.h). 0: no MTP.
  int mtp_layers = 0;

  bool is_mla() const { return kv_lora_rank > 0; }
  // Layer `layer` (0-based) attends through a sliding window.
  bool is_sliding_layer(int layer) const {
    return sliding_window > 0 && (full_attention_every <= 0 || (layer + 1) % full_attention_every != 0);
  }

  int head_dim() const { return attention_head_dim > 0 ? attention_head_dim : hidden / heads; }
  // Width of Q and of the attention output (the out-projection's input): heads x head_dim, which
  // is hidden unless attention_head_dim says otherwise.
  double attention_width() const { return static_cast<double>(heads) * head_dim(); }
  bool is_moe() const { return experts > 0; }
  // Layer `layer` (0-based) is an MoE layer (a hybrid's 'E' layer, or an MoE transformer layer).
  bool is_moe_layer(int layer) const;
  // MoE layers among layers [first, first + count).
  int moe_layers_in(int first, int count) const;
  // Parameters of the routed experts of one MoE layer (all experts, before expert parallelism).
  double expert_parameters() const;
  // One MoE layer's parameters outside the routed experts (attention, norms, router, shared
  // experts; a hybrid's 'E' layer: its pre-norm, router and shared experts).
  double moe_layer_dense_parameters() const;
  // The router and the shared experts of one MoE block (and LatentMoE's two latent projections).
  double moe_block_parameters() const;
  // Width of a routed expert's input and output and of a dispatched token: moe_latent_size, else hidden.
  int expert_io_width() const { return moe_latent_size > 0 ? moe_latent_size : hidden; }
  // LatentMoE's fc1_latent_proj and fc2_latent_proj (2 x hidden x moe_latent_size; no biases, as
  // Nemotron 3 Super's --disable-bias-linear), which every tensor-parallel rank holds whole.
  double latent_projection_parameters() const { return 2.0 * hidden * static_cast<double>(moe_latent_size); }
  // Parameter count (embeddings included, position embeddings excluded for rotary models).
  double parameters() const;
  // One transformer layer's parameters (projections, MLP, norms, biases for GPT-style models);
  // for an MoE model, the mean over its layers (dense and MoE, all experts).
  double layer_parameters() const;
  // Mean parameters per layer that one GPU of an expert-parallel group of `ep` holds before tensor
  // parallelism: the routed experts divide over ep, the rest is replicated.
  double layer_parameters_per_ep_rank(int ep) const;
  // Parameters of a dense (non-MoE) layer.
  double dense_layer_parameters() const;
  // One layer's attention parameters: the Q, K, V and output projections (with biases for GELU
  // models), or MLA's down- and up-projections with their latent RMSNorms; attention sinks.
  double attention_parameters() const;
  // Of those, the ones every tensor-parallel rank holds whole: MLA's down-projections and latent
  // norms (Megatron-Core's MLASelfAttention builds linear_q_down_proj and linear_kv_down_proj
  // duplicated, not split); 0 for standard attention.
  double tp_replicated_attention_parameters() const;
  // Input word embedding plus learned position embeddings (0 for rotary models).
  double embedding_parameters() const;
  // Final norm's parameters.
  double final_norm_parameters() const;
  bool is_hybrid() const { return !hybrid_pattern.empty(); }
  // What layer `layer` (0-based) is: from hybrid_pattern, else a transformer layer (MoE or not).
  LayerKind layer_kind(int layer) const;
  // Layers of kind `kind` among layers [first, first + count).
  int layers_of_kind_in(LayerKind kind, int first, int count) const;
  // Parameters of one layer of `kind` (all experts of an MoE layer).
  double layer_parameters_of(LayerKind kind) const;
  // Parameters of layers [first, first + count) (all experts).
  double parameters_of_layers(int first, int count) const;
  // Mamba-2 inner width d_inner = mamba_heads x mamba_head_dim.
  double mamba_inner() const { return static_cast<double>(mamba_heads) * mamba_head_dim; }
  bool trains_with_dropout() const { return dropout.value_or(mlp == MlpKind::Gelu); }
  bool learned_positions() const {
    return positions == PositionKind::Learned || (positions == PositionKind::Auto && mlp == MlpKind::Gelu);
  }
};

enum class Schedule : std::uint8_t { GPipe, OneFOneB, Interleaved };
// The names scenarios take (parallelism.schedule); parse with sim::parse.
inline constexpr sim::Choice<Schedule> kScheduleNames[] = {
    {"gpipe", Schedule::GPipe}, {"1f1b", Schedule::OneFOneB}, {"interleaved", Schedule::Interleaved}};
// How ZeRO-3 gathers the sharded parameters for compute. Block: PyTorch FSDP wraps each
// transformer layer and keeps the gathered layer and the prefetched next one. Module: DeepSpeed
// ZeRO-3 gathers each submodule's parameters and prefetches ahead only while the live total stays
// under stage3_max_live_parameters, at most stage3_prefetch_bucket_size per step.
enum class Zero3Gather : std::uint8_t { Block, Module };
// The names scenarios take (parallelism.zero3_gather); parse with sim::parse.
inline constexpr sim::Choice<Zero3Gather> kZero3GatherNames[] = {{"block", Zero3Gather::Block},
                                                                 {"module", Zero3Gather::Module}};
// What hybrid sharding does across its groups (Megatron-FSDP outer_dp_sharding_strategy).
// NoShard: HSDP, each group holds a full copy of its shards (the gradient shard all-reduced across
// the groups). Optim: HFSDP, the optimizer states (and the gradient shard they step on) split
// further over the groups: the shard reduce-scattered across them, the updated parameter shard
// all-gathered back before the next forward (Megatron-LM cd4afffa, megatron/core/distributed/fsdp/
// src/megatron_fsdp/param_and_grad_buffer.py: hfsdp helper buffers, outer reduce-scatter, outer
// all-gather); Megatron-FSDP allows it only with optim_grads_params (zero 3).
enum class OuterDpSharding : std::uint8_t { NoShard, Optim };
inline constexpr sim::Choice<OuterDpSharding> kOuterDpShardingNames[] = {{"no_shard", OuterDpSharding::NoShard},
                                                                         {"optim", OuterDpSharding::Optim}};

// How context-parallel ranks get the keys and values of the other ranks' tokens (Megatron-Core
// --cp-comm-type). P2p: ring attention, K/V chunks passed around the CP ring, each step overlapped
// with the attention of the chunk already held (Transformer Engine's default). AllGather: K/V
// all-gathered before attention (gradients reduce-scattered after), not overlapped. A2a:
// DeepSpeed-Ulysses all-to-all of heads; named so scenarios can say it, refused by the loader.
enum class CpComm : std::uint8_t { P2p, AllGather, A2a };
// The names scenarios take (parallelism.cp_comm_type), Megatron's spellings.
inline constexpr sim::Choice<CpComm> kCpCommNames[] = {
    {"p2p", CpComm::P2p}, {"allgather", CpComm::AllGather}, {"a2a", CpComm::A2a}};

// Megatron-Core's MoE token dispatcher ([parallelism] moe_dispatcher). AllToAll: the alltoall
// dispatcher, one copy of a token per destination expert over the ep group's all-to-all. DeepEp,
// HybridEp: moe_token_dispatcher_type = "flex" with moe_flex_dispatcher_backend = "deepep" /
// "hybridep": a token bound for experts on another node crosses the network once to that node's
// GPU of the same local index and is forwarded over NVLink there; the combine mirrors it
// (workloads/collectives/node_alltoall_collective.h). Both backends are modelled alike.
enum class MoeDispatcher : std::uint8_t { AllToAll, DeepEp, HybridEp };
inline constexpr sim::Choice<MoeDispatcher> kMoeDispatcherNames[] = {
    {"alltoall", MoeDispatcher::AllToAll}, {"deepep", MoeDispatcher::DeepEp}, {"hybridep", MoeDispatcher::HybridEp}};

struct ParallelSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;                  // derived as gpus / (tp * cp * pp) when not given
  // Context parallelism (Megatron-Core --context-parallel-size): each rank of a CP group holds
  // seq_len / cp tokens of every sequence; ranks ordered tp-cp-dp-pp (parallel_layout.h).
  int cp = 1;
  CpComm cp_comm = CpComm::P2p;
  int virtual_stages = 1;
  Schedule schedule = Schedule::OneFOneB;
  bool sequence_parallel = false;
  int zero = 0;                // 0..3
  bool distributed_optimizer = false;  // Megatron's distributed optimizer (shards like ZeRO-1)
  // Uneven pipeline stages, as Megatron-LM's --decoder-first-pipeline-num-layers and
  // --decoder-last-pipeline-num-layers (TransformerConfig.num_layers_in_first/last_pipeline_stage):
  // transformer layers on the first / last stage; 0 = not given. The layers left over split
  // evenly over the other stages (megatron/core/transformer/transformer_block.py,
  // get_num_layers_to_build). The loader checks that they do (scenarios/stage_split.h).
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split
  // (TransformerConfig; set by Megatron-Bridge's Llama 3.1 405B recipe): the input embedding and
  // the output layer + loss each count as one layer slot, so the layers plus these slots split
  // evenly over the pp x virtual_stages model chunks and the first chunk (of stage 0) and the
  // last chunk (of stage pp - 1) build one transformer layer fewer. 126 layers, pp 8, vp 8:
  // 128 slots, 2 per chunk, stage 0 = 1 + 7 x 2 = 15 layers. Exclusive with the counts above.
  bool embedding_in_split = false;
  bool loss_in_split = false;
  // An explicit layout: transformer layers of every model chunk in model order (pp x
  // virtual_stages entries; chunk c of stage r is entry c * pp + r), as Megatron-Core's
  // pipeline_model_parallel_layout lists them between its '|' stage marks. Megatron-Bridge's
  // DeepSeek-V3 recipe (recipes/deepseek/deepseek_v3.py, layout_map for pp 16 or pp 4 x vp 4):
  // "E t*4 | (t*4 |) x 14 | t m L" = 4, 14 x 4, 1. Empty = not given; exclusive with the counts
  // and slots above (scenarios/stage_split.h).
  std::vector<int> stage_layers;
  // Expert parallelism: the routed experts of every MoE layer divide over `ep` GPUs. As in
  // Megatron-Core (megatron/core/parallel_state.py, initialize_model_parallel: the expert grid is
  // carved out of the same GPUs; expert data parallel size = dp / ep with expert tensor parallel
  // size = tp), the ep group is ep consecutive data-parallel ranks, so dp must be a multiple of ep
  // and expert gradients are reduced over the dp / ep ranks holding the same experts.
  int ep = 1;
  // Expert tensor parallelism (Megatron-Core --expert-tensor-parallel-size): the routed experts'
  // FFNs split over etp GPUs. 0 = not given: etp = tp, Megatron's default ("None, which will be set
  // to the value of --tensor-model-parallel-size", megatron/training/arguments.py), which is also
  // how the expert grid worked before it was decoupled. With etp != tp Megatron-Core lays a
  // second grid over each pipeline stage's tp x cp x dp GPUs, ordered tp-ep-dp with tp = etp
  // (parallel_state.initialize_model_parallel, expert_tensor_model_pipeline groups): etp
  // consecutive GPUs share each expert, ep groups take every etp-th, and the expert data-parallel
  // size is world / (etp x ep x pp).
  int etp = 0;
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  // The SMs the flex dispatcher's dispatch and combine kernels hold ([parallelism]
  // moe_dispatcher_sms; Megatron-Core moe_flex_dispatcher_num_sms, formerly moe_deepep_num_sms /
  // moe_hybridep_num_sms). 0 = the backend's default: DeepEP 20 (Megatron-Core
  // token_dispatcher.py, "DeepEP's historical mcore default"), HybridEP 24 inside one NVLink
  // domain and 8 across them (DeepEP hybrid-ep csrc/hybrid_ep/config.cuh:366-367). Only the
  // all-to-all overlaps read it (ep_overlap.h ep_overlap_sm_share): while these kernels run beside
  // compute, the compute has the rest of the SMs.
  int moe_dispatcher_sms = 0;
  // Megatron-Core's expert-parallel communication overlap (workloads/training/ep_overlap.h).
  // moe_a2a_overlap: --overlap-moe-expert-parallel-comm (Megatron-Bridge moe_a2a_overlap, which
  // also sets --delay-wgrad-compute, below): the combined 1F1B schedule runs one micro-batch's forward and
  // another's backward together, layer by layer, each one's dispatch and combine all-to-alls beside
  // the other's compute (pipeline_parallel/combined_1f1b.py, models/common/
  // model_chunk_schedule_plan.py). moe_shared_expert_overlap: --moe-shared-expert-overlap, the
  // shared experts' MLP on a side stream beside the dispatch (fc1) and the combine (fc2)
  // all-to-alls (transformer/moe/shared_experts.py, token_dispatcher.py). Exclusive.
  bool moe_a2a_overlap = false;
  // delay_wgrad_compute (needs moe_a2a_overlap: core_v0.15.0 transformer_config.py l. 1483-1486):
  // in the combined 1F1B layer pair each backward node runs its data gradient only and the weight
  // gradients run later on the compute stream (TE delay_wgrad_compute, WeightGradStore;
  // TransformerLayerSchedulePlan.run calls mlp.backward_dw() before dispatch_bwd and
  // attn.backward_dw() after attn_bwd), so the backward's dispatch and the next layer's combine
  // all-to-alls wait for the dgrad alone and run beside the wgrad GEMMs (ep_overlap.h).
  // Megatron-Core's default false; Megatron-Bridge's moe_a2a_overlap sets it.
  bool delay_wgrad_compute = false;
  bool moe_shared_expert_overlap = false;
  Zero3Gather zero3_gather = Zero3Gather::Block;  // only with zero = 3
  // Hybrid sharded data parallelism ([parallelism] shard_group = dp / shard_instances): the
  // sharded states (per zero / distributed_optimizer) split over a group of consecutive
  // data-parallel ranks and are replicated across shard_instances such groups. Megatron-Core's
  // --num-distributed-optimizer-instances (distributed_data_parallel_config
  // num_distributed_optimizer_instances: the distributed optimizer's reduce-scatter within an
  // instance, then an all-reduce of the shard across instances), PyTorch FSDP2's HSDP (a device
  // mesh with a replicate dim). 1 = shard over all dp x cp ranks.
  int shard_instances = 1;
  // [parallelism] outer_dp_sharding: with shard_instances > 1, whether the optimizer states also
  // split across the groups (OuterDpSharding::Optim) or each group holds them whole.
  OuterDpSharding outer_dp_sharding = OuterDpSharding::NoShard;

  // Optimizer states split across the data-parallel replicas (ZeRO-1 and up, or Megatron's
  // distributed optimizer): each replica updates its 1/dp share and gathers the parameters back.
  bool shards_optimizer() const { return zero >= 1 || distributed_optimizer; }
  // The group gradients are reduced (and optimizer states sharded) over: Megatron-Core reduces
  // over the combined data- and context-parallel group (parallel_state
  // get_data_parallel_group(with_context_parallel=True)), since CP ranks hold the same weights.
  int grad_replicas() const { return dp * cp; }
  // The ranks sharded states divide over: all dp x cp ranks, or one of shard_instances groups.
  int shard_ranks() const { return std::max(1, grad_replicas() / std::max(1, shard_instances)); }
  // The ranks the optimizer states (and the gradient shard they step on) divide over: the shard
  // group's, or all dp x cp with outer_dp_sharding = "optim".
  int optimizer_shard_ranks() const {
    return outer_dp_sharding == OuterDpSharding::Optim ? std::max(1, grad_replicas()) : shard_ranks();
  }
  // Tokens of one sequence on one GPU.
  int local_seq_len(int seq_len) const { return seq_len / cp; }
  bool uneven_stages() const {
    return first_stage_layers > 0 || last_stage_layers > 0 || embedding_in_split || loss_in_split ||
           !stage_layers.empty();
  }
  // Layer slots the embedding and the loss take in the split (0, 1 or 2).
  int split_slots() const { return (embedding_in_split ? 1 : 0) + (loss_in_split ? 1 : 0); }
  int expert_tp() const { return etp > 0 ? etp : tp; }
  // Expert data parallelism: GPUs of a stage / (etp x ep); with etp = tp and cp = 1, dp / ep.
  int expert_dp() const { return ep > 0 ? tp * cp * dp / (expert_tp() * ep) : dp; }

  // Transformer layers on pipeline stage `stage` (0..pp-1) of a model with `layers` layers: the
  // one source of truth for stage costs, the schedule and the memory model. Without first/last
  // stage counts every stage holds layers / pp. The loader only accepts splits whose middle
  // stages share evenly; for any other input the first middle stages take the remainder, so the
  // stages still add up to the layers.
  int layers_on_stage(int layers, int stage) const {
    if (split_slots() > 0 || !stage_layers.empty()) {
      const int chunks = std::max(virtual_stages, 1);
      int on_stage = 0;
      for (int c = 0; c < chunks; ++c) on_stage += layers_in_chunk(layers, c * pp + stage);
      return on_stage;
    }
    const bool first = first_stage_layers > 0 && pp > 1;
    const bool last = last_stage_layers > 0 && pp > 1;
    if (first && stage == 0) return first_stage_layers;
    if (last && stage == pp - 1) return last_stage_layers;
    const int middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
    const int middle_layers = layers - (first ? first_stage_layers : 0) - (last ? last_stage_layers : 0);
    if (middle_stages <= 0) return 0;
    const int middle_index = stage - (first ? 1 : 0);
    return middle_layers / middle_stages + (middle_index < middle_layers % middle_stages ? 1 : 0);
  }
  // Transformer layers of model chunk `virtual_stage` (chunk c of stage r is virtual stage c * pp +
  // r, in model order): an equal share of its stage's layers, or, with the embedding or loss in the
  // split, (layers + slots) / (pp x virtual_stages) less the slot the first or last chunk gives up.
  // Never negative: a chunk that is only the embedding (or only the loss) builds none.
  int layers_in_chunk(int layers, int virtual_stage) const {
    const int chunks = std::max(virtual_stages, 1);
    if (!stage_layers.empty())
      return virtual_stage >= 0 && virtual_stage < static_cast<int>(stage_layers.size()) ? stage_layers[virtual_stage] : 0;
    if (split_slots() == 0) return layers_on_stage(layers, virtual_stage % pp) / chunks;
    const int per_chunk = (layers + split_slots()) / (pp * chunks);
    int here = per_chunk;
    if (embedding_in_split && virtual_stage == 0) --here;
    if (loss_in_split && virtual_stage == pp * chunks - 1) --here;
    return here > 0 ? here : 0;
  }
};

enum class Optimizer : std::uint8_t { Adam, Sgd, SgdMomentum };
enum class Recompute : std::uint8_t { None, Selective, Full };
// The names scenarios take (training.optimizer, training.recompute); parse with sim::parse.
inline constexpr sim::Choice<Optimizer> kOptimizerNames[] = {
    {"adam", Optimizer::Adam}, {"sgd", Optimizer::Sgd}, {"sgd-momentum", Optimizer::SgdMomentum}};
// How the optimizer step is issued (training.optimizer_kernels). Fused: one fused or multi-tensor
// kernel streams each parameter's states once (apex FusedAdam / multi_tensor_apply, Megatron,
// torch.optim fused=True). PerParameter: a Python loop over the parameter tensors that issues one
// eager elementwise kernel per arithmetic op, each re-reading and re-writing its operands (Composer
// DecoupledAdamW / DecoupledSGDW at v0.17.2, composer/optim/decoupled_weight_decay.py; see
// ComputeModel::optimizer_bytes_per_param).
enum class OptimizerKernels : std::uint8_t { Fused, PerParameter };
inline constexpr sim::Choice<OptimizerKernels> kOptimizerKernelsNames[] = {
    {"fused", OptimizerKernels::Fused}, {"per-parameter", OptimizerKernels::PerParameter}};
// How the language-model loss runs ([training] cross_entropy; model/cross_entropy_kernels.h counts
// each one's kernels, bytes and loss-phase memory). Fused: one pass over the logits, an fp32 copy
// held around the loss (Megatron-Core's fused cross-entropy, the default). MegatronUnfused:
// Megatron-Core's unfused _VocabParallelCrossEntropy (cross_entropy_loss_fusion off; the same as
// [model_constants] cross_entropy_unfused = 1). TorchEager: eager PyTorch F.cross_entropy on a
// .float() copy of the bf16 logits (torchtitan's loss_fn, train.py at 9dec370).
enum class CrossEntropy : std::uint8_t { Fused, MegatronUnfused, TorchEager };
inline constexpr sim::Choice<CrossEntropy> kCrossEntropyNames[] = {
    {"fused", CrossEntropy::Fused},
    {"megatron-unfused", CrossEntropy::MegatronUnfused},
    {"torch-eager", CrossEntropy::TorchEager}};
inline constexpr sim::Choice<Recompute> kRecomputeNames[] = {
    {"none", Recompute::None}, {"selective", Recompute::Selective}, {"full", Recompute::Full}};
// Megatron-Core's recompute_modules (recompute_granularity = "selective", Megatron-Core
// TransformerConfig.recompute_modules): modules whose outputs the forward discards and the backward
// recomputes from their saved input. "layernorm": the input_layernorm and pre_mlp_layernorm outputs
// (the QKV and MLP GEMM inputs); "moe_act": the experts' activation function output (the expert fc2
// input). Megatron-Bridge's GPT-OSS-120B B200 / GB200 / H100 BF16 presets set ["layernorm",
// "moe_act"] (scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py). A bit set.
// "mla_up_proj": multi-head latent attention's up-projections and rotary embedding (their outputs
// Q, K and V, the attention kernel's inputs, are dropped after the forward and rerun from the saved
// latents before the backward: Megatron-Core multi_latent_attention.py, recompute_up_proj with
// CheckpointWithoutOutput); Megatron-Bridge's DeepSeek-V3 GB200 / GB300 BF16 performance configs
// set ["mla_up_proj"] (scripts/performance/configs/deepseek/deepseek_workload_base_configs.py).
// "moe": the whole MoE layer (Megatron-Core moe_layer.py: moe_layer_recompute wraps custom_forward,
// i.e. shared experts, router, preprocess, dispatch all-to-all, experts, combine all-to-all and
// postprocess, in tensor_parallel.checkpoint / te_checkpoint), so the backward reruns its kernels and
// both all-to-alls; Megatron-Bridge's Nemotron 3 Nano H100 presets set ["moe", "layernorm", ...]
// (scripts/performance/configs/nemotronh/nemotron_3_workload_base_configs.py). Memory: the MoE
// term (dispatched tokens, expert activations) is dropped; the MLP-sized saved tensors the layer
// shares with a dense layer stay counted (an over-estimate).
enum RecomputeModule : unsigned { kRecomputeLayernorm = 1, kRecomputeMoeAct = 2, kRecomputeMlaUpProj = 4, kRecomputeMoe = 8 };
inline constexpr sim::Choice<unsigned> kRecomputeModuleNames[] = {{"layernorm", kRecomputeLayernorm},
                                                                   {"moe_act", kRecomputeMoeAct},
                                                                   {"mla_up_proj", kRecomputeMlaUpProj},
                                                                   {"moe", kRecomputeMoe}};
// Megatron-Core's fine-grained activation offloading (fine_grained_activation_offloading with
// offload_modules, TransformerConfig, megatron/core/pipeline_parallel/
// fine_grained_activation_offload.py): each named module's region registers the tensors autograd
// saves inside it as one group, copies them device-to-host on a side stream after the region's
// forward and back host-to-device before its backward (workloads/memory/activation_offload.h).
// Names and rules from transformer_config.py's allowed_modules (gdp_qkv, Gated DeltaNet only, is
// not modelled): "attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1",
// "moe_act", "fused_group_mlp". A bit set.
enum OffloadModule : unsigned {
  kOffloadAttnNorm = 1,
  kOffloadQkvLinear = 2,
  kOffloadCoreAttn = 4,
  kOffloadAttnProj = 8,
  kOffloadMlpNorm = 16,
  kOffloadExpertFc1 = 32,
  kOffloadMoeAct = 64,
  kOffloadFusedGroupMlp = 128,
};
inline constexpr sim::Choice<unsigned> kOffloadModuleNames[] = {
    {"attn_norm", kOffloadAttnNorm},   {"qkv_linear", kOffloadQkvLinear}, {"core_attn", kOffloadCoreAttn},
    {"attn_proj", kOffloadAttnProj},   {"mlp_norm", kOffloadMlpNorm},     {"expert_fc1", kOffloadExpertFc1},
    {"moe_act", kOffloadMoeAct},       {"fused_group_mlp", kOffloadFusedGroupMlp}};
inline constexpr unsigned kOffloadMoeModules = kOffloadExpertFc1 | kOffloadMoeAct | kOffloadFusedGroupMlp;
// [training] recompute_save (with recompute = "full"): the layer ops whose outputs the forward keeps
// while everything else of the layer is recomputed in the backward, i.e. JAX's
// jax.checkpoint_policies.save_only_these_names over a checkpointed decoder layer, as MaxText's
// remat_policy (e.g. "save_qkv_proj", or "custom" with per-tensor "device" offload settings) and
// Praxis' checkpoint_policy (SAVE_QKV_OUT_PROJ) apply it (docs/validation.md, session 15, branch
// jaxremat). The names are the ops of model/transformer_ops.cpp's dense layer: "qkv_proj" the
// fused Q, K, V projection; "attention_out_proj"; a GELU MLP's "mlp_fc1" and "mlp_fc2"; a gated MLP's
// "mlp_gate", "mlp_up" and "mlp_down"; "flash_attention" the fused attention core (its output and
// log-sum-exp, as torch's selective checkpointing saves _scaled_dot_product_flash_attention in
// torchtitan's op SAC). A saved op is not rerun in the backward; its output stays in memory beside
// the layer input. A bit set; 0 = "full" recompute as Megatron runs it.
enum RecomputeSaveOp : unsigned {
  kSaveQkvProj = 1, kSaveAttentionOutProj = 2, kSaveMlpFc1 = 4, kSaveMlpFc2 = 8, kSaveMlpGate = 16, kSaveMlpUp = 32,
  kSaveMlpDown = 64, kSaveFlashAttention = 128
};
inline constexpr sim::Choice<unsigned> kRecomputeSaveNames[] = {
    {"qkv_proj", kSaveQkvProj}, {"attention_out_proj", kSaveAttentionOutProj}, {"mlp_fc1", kSaveMlpFc1},
    {"mlp_fc2", kSaveMlpFc2},   {"mlp_gate", kSaveMlpGate},                   {"mlp_up", kSaveMlpUp},
    {"mlp_down", kSaveMlpDown}, {"flash_attention", kSaveFlashAttention}};
// Whether the op named `op_name` is one `save` (RecomputeSaveOp bits) keeps.
inline bool saved_by_recompute_save(std::string_view op_name, unsigned save) {
  for (const auto& c : kRecomputeSaveNames)
    if ((save & c.value) != 0 && op_name == c.name) return true;
  return false;
}
// Megatron-Core cuda_graph_scope (cuda_graph_impl "transformer_engine" or "local"): the parts of
// each transformer layer captured into a CUDA graph and replayed from it per micro-batch
// (core_r0.16 megatron/core/transformer/enums.py CudaGraphScope; which submodules each covers:
// transformer_layer.py _get_submodules_under_cudagraphs, moe/moe_utils.py
// maybe_skip_or_early_return_by_cudagraph). attn: the input norm and the self-attention (its
// projections, core attention and the residual add); mlp: a dense layer's pre-MLP norm and MLP;
// moe: a whole MoE layer (Megatron-Core allows it for drop-and-pad MoE only); moe_router: the
// pre-MLP norm, the router and the shared experts (unless moe_shared_expert_overlap);
// moe_preprocess (with moe_router): MoELayer.preprocess, i.e. the latent projection and the
// dispatcher's dispatch_preprocess (metadata and, for the alltoall dispatcher, the first permute);
// mamba: a Mamba layer. The routed experts, the dispatch and combine and everything after the
// host sync stay eager unless "moe" is listed. "full_iteration" is TrainingSpec::cuda_graphs.
enum CudaGraphModule : unsigned {
  kGraphAttn = 1,
  kGraphMlp = 2,
  kGraphMoe = 4,
  kGraphMoeRouter = 8,
  kGraphMoePreprocess = 16,
  kGraphMamba = 32
};
inline constexpr sim::Choice<unsigned> kCudaGraphModuleNames[] = {
    {"attn", kGraphAttn},           {"mlp", kGraphMlp},
    {"moe", kGraphMoe},             {"moe_router", kGraphMoeRouter},
    {"moe_preprocess", kGraphMoePreprocess}, {"mamba", kGraphMamba}};
// Modules a per-module precision recipe keeps apart from the run's fp8 / nvfp4 linears ([training]
// bf16_modules, fp8_modules; workloads/model/module_precision.h): Megatron-Core's TEQuantizationParams
// matchers (megatron/core/extensions/transformer_engine.py, core_r0.17.0: a glob over module names
// picks a recipe, "bf16" = no quantization), as Megatron-Bridge's Nemotron 3 Super NVFP4 recipe sets
// them (scripts/performance/configs/nemotronh/te_quant.cfg, r0.4.0 - r0.6.0). "attention": the
// attention block's projections (linear_qkv and linear_proj; MLA's down / up projections);
// "moe_latent_proj": LatentMoE's fc1_latent_proj and fc2_latent_proj; "mtp": every linear of the
// multi-token-prediction modules; "mamba_in_proj" / "mamba_out_proj": the Mamba mixer's projections.
enum PrecisionModule : unsigned {
  kPrecisionAttention = 1, kPrecisionMoeLatentProj = 2, kPrecisionMtp = 4, kPrecisionMambaInProj = 8,
  kPrecisionMambaOutProj = 16
};
inline constexpr sim::Choice<unsigned> kPrecisionModuleNames[] = {{"attention", kPrecisionAttention},
                                                                   {"moe_latent_proj", kPrecisionMoeLatentProj},
                                                                   {"mtp", kPrecisionMtp},
                                                                   {"mamba_in_proj", kPrecisionMambaInProj},
                                                                   {"mamba_out_proj", kPrecisionMambaOutProj}};
// Element type of a model state that frameworks let one choose. Fp32: 4 B; Bf16 and Fp16: 2 B.
enum class StateDtype : std::uint8_t { Fp32, Bf16, Fp16 };
inline double state_dtype_bytes(StateDtype d) { return d == StateDtype::Fp32 ? 4.0 : 2.0; }
// The names scenarios take (training.grad_dtype, training.optimizer_dtype).
inline constexpr sim::Choice<StateDtype> kStateDtypeNames[] = {
    {"fp32", StateDtype::Fp32}, {"bf16", StateDtype::Bf16}, {"fp16", StateDtype::Fp16}};

// Fine-tuning (workloads/model/lora.h). Full: every weight trains. Lora (Hu et al. 2021, "LoRA:
// Low-Rank Adaptation of Large Language Models"): the pretrained weights are frozen and each
// targeted projection W [d_in, d_out] gains a trainable pair A [d_in, r], B [r, d_out]; only the
// adapters have gradients and optimizer states, while the backward still carries activation
// gradients through the frozen layers (data gradients) and skips their weight gradients.
enum class FinetuneMethod : std::uint8_t { Full, Lora };
inline constexpr sim::Choice<FinetuneMethod> kFinetuneMethodNames[] = {{"full", FinetuneMethod::Full},
                                                                       {"lora", FinetuneMethod::Lora}};
// The projections LoRA adapts ([finetune] lora_targets), Hugging Face PEFT's names without
// "_proj": q, k, v, o (attention), gate, up, down (MLP; a GELU MLP's fc1 is "up", fc2 "down").
// "qkv" is Megatron's fused linear_qkv with one adapter over it (NeMo 2 / Megatron-Bridge
// peft/lora.py target "linear_qkv": A [hidden, r], B [r, q + 2 kv]); it replaces q, k and v.
enum LoraTarget : unsigned {
  kLoraQ = 1, kLoraK = 2, kLoraV = 4, kLoraO = 8, kLoraGate = 16, kLoraUp = 32, kLoraDown = 64, kLoraQkv = 128
};
inline constexpr sim::Choice<unsigned> kLoraTargetNames[] = {{"q", kLoraQ},       {"k", kLoraK},   {"v", kLoraV},
                                                             {"o", kLoraO},       {"gate", kLoraGate},
                                                             {"up", kLoraUp},     {"down", kLoraDown},
                                                             {"qkv", kLoraQkv}};
inline constexpr unsigned kLoraMlpTargets = kLoraGate | kLoraUp | kLoraDown;

struct FinetuneSpec {
  FinetuneMethod method = FinetuneMethod::Full;
  int lora_rank = 8;  // PEFT LoraConfig's default r = 8 (Hu et al. 2021 use r = 1..64)
  // PEFT's default targets for Llama-family models are q_proj and v_proj
  // (peft/utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING["llama"]), the pair
  // Hu et al. 2021 (Sec. 7.1, Table 5) found best for a fixed parameter budget.
  unsigned lora_targets = kLoraQ | kLoraV;
  bool lora() const { return method == FinetuneMethod::Lora; }
};

struct TrainingSpec {
  int global_batch = 1;        // sequences per iteration
  int micro_batch = 1;
  topology::Precision precision = topology::Precision::Bf16;
  Optimizer optimizer = Optimizer::Adam;
  Recompute recompute = Recompute::None;
  unsigned recompute_modules = 0;  // RecomputeModule bits; ignored under recompute = "full"
  unsigned recompute_save = 0;     // RecomputeSaveOp bits; only under recompute = "full"
  // [training] recompute_dce (only under recompute = "full"): the backward's rerun leaves out the
  // ops at the end of the layer whose outputs its backward never reads (JAX's remat partial
  // evaluation prunes the staged rerun with dead-code elimination; transformer_ops.h
  // rerun_dead_from states the rule). PyTorch's non-reentrant torch.utils.checkpoint prunes the
  // same ops since 2.1: its early stop (on by default, pytorch/pytorch PR #96866) ends the rerun
  // once the last tensor the backward saved is packed again, before the op that saves it runs;
  // torch.compile's partitioner recomputes only what the backward reads. false: the whole layer
  // reruns, as Megatron's "full" (its reentrant CheckpointFunction) and torch <= 2.0 do.
  bool recompute_dce = false;
  // Gradients kept for accumulation and reduced over data parallelism: fp32 is Megatron's
  // `main_grad` (grad_reduce_in_fp32, forced on for bf16 in Megatron-LM); 16-bit is Megatron-Core
  // / NeMo with grad_reduce_in_fp32 = False, apex DistributedFusedAdam grad_sync_dtype = bf16,
  // and DeepSpeed's fp16/bf16 gradient partitions. Mixed precision only (fp32 training: 4 B).
  StateDtype grad_dtype = StateDtype::Fp32;
  // The optimizer's states (master weights and moments): apex DistributedFusedAdam `dtype`,
  // Megatron's --use-precision-aware-optimizer. fp32 is every framework's default.
  StateDtype optimizer_dtype = StateDtype::Fp32;
  OptimizerKernels optimizer_kernels = OptimizerKernels::Fused;
  // Whether the step applies (decoupled) weight decay. Only the per-parameter loop pays for it, an
  // extra in-place multiply of the parameter (a fused kernel folds it into its one pass).
  bool weight_decay = true;
  int iterations = 1;
  double tokens = 0.0;         // total training tokens (0 = not given)
  // CUDA_LAUNCH_BLOCKING=1: every kernel waits for the host (no compute/communication overlap,
  // a host round trip per kernel: ComputeModel::set_launch_blocking, docs/model.md).
  bool launch_blocking = false;
  // A full-iteration CUDA graph (Megatron-Core cuda_graph_impl "local" with cuda_graph_scope
  // "full_iteration"): the host replays the step from one launch, so no per-op host time and no
  // MoE host sync (ComputeModel::set_cuda_graphs, docs/model.md).
  bool cuda_graphs = false;
  // Per-layer CUDA graphs of the listed modules ([training] cuda_graph_scope; CudaGraphModule
  // bits, 0 = none): their kernels replay from one graph launch per layer part, pass and
  // micro-batch (ComputeModel::set_cuda_graph_modules). Exclusive with cuda_graphs.
  unsigned cuda_graph_modules = 0;
  // Transformer Engine's op fuser runs the routed experts' MLP (Megatron-Core
  // use_transformer_engine_op_fuser, TEGroupedMLP._fused_forward, core_v0.18.0): fc1, the scaled
  // GLU (its clamp inside) and fc2 with its bias as one te.ops.Sequential, so neither the eager
  // clamp of model/glu_clamp.h nor the eager bias loop of model/expert_bias.h runs. MoE models only.
  bool te_op_fuser = false;
  // The routed experts run as one grouped GEMM per linear (Megatron-Core moe_grouped_gemm = True:
  // TEGroupedMLP), or, when false, as Megatron-Core's SequentialMLP: a Python loop over the local
  // experts, each its own MLP module (fc1, activation, fc2) on its slice of the tokens
  // (model/sequential_experts.h). True is what the performance recipes set (Megatron-Bridge's MoE
  // providers, NeMo 2's DeepSeek and Llama 4 configs); Megatron-Core's own default is false. MoE
  // models only.
  bool moe_grouped_gemm = true;
  // The language-model loss's implementation (CrossEntropy; Fused is what the model charged before
  // the key existed).
  CrossEntropy cross_entropy = CrossEntropy::Fused;
  // Activation CPU offloading: layers per model chunk whose saved activations go to host memory
  // after their forward and come back before their backward (Megatron-Core
  // cpu_offloading_num_layers; workloads/memory/activation_offload.h). 0 = off.
  int activation_offload_layers = 0;
  // Fine-grained activation offloading: OffloadModule bits (0 = off), and the smallest saved tensor,
  // in elements, that is offloaded (Megatron-Core min_offloaded_tensor_size, default 1024 * 1024).
  unsigned offload_modules = 0;
  double offload_min_tensor_elements = 1024.0 * 1024.0;
  FinetuneSpec finetune;       // [finetune]: full training (default) or LoRA adapters
  // Per-layer and per-module precision under an fp8 / nvfp4 run (workloads/model/module_precision.h).
  // Megatron-Core first_last_layers_bf16 with num_layers_at_start_in_bf16 / num_layers_at_end_in_bf16
  // (fp8_utils.py is_first_last_bf16_layer, fp4_utils.py get_fp4_context): the first and last
  // layers of the decoder by global index, Mamba, attention, MLP and MoE layers alike
  // (mamba_block.py passes i + pp_layer_offset), run with no quantization; multi-token prediction
  // is not a decoder layer (its context is taken with layer_no -1). 0 = none (the scenario gives the
  // counts; Megatron's first_last_layers_bf16 = True alone means 1 and 1).
  int bf16_layers_at_start = 0;
  int bf16_layers_at_end = 0;
  unsigned bf16_modules = 0;  // PrecisionModule bits kept in bf16 in every layer
  unsigned fp8_modules = 0;   // PrecisionModule bits run in fp8 (MXFP8) under nvfp4, in the quantized layers
  bool bf16_layer(int layer, int layers) const {
    return layer < bf16_layers_at_start || layer >= layers - bf16_layers_at_end;
  }

  int micro_batches_per_replica(int dp) const { return global_batch / (micro_batch * dp); }
};

// A collective algorithm (workloads/collectives/ implements each). Declared here because the
// gradient synchronization names one (sync.algorithm) and every room may read the specs.
enum class CollectiveAlgo : std::uint8_t { Ring, Tree, HalvingDoubling, Hierarchical, Direct, InNetwork, Auto };
// The names scenarios (sync.algorithm) and `collective --algo` take; parse with sim::parse.
inline constexpr sim::Choice<CollectiveAlgo> kCollectiveAlgoNames[] = {
    {"ring", CollectiveAlgo::Ring},
    {"tree", CollectiveAlgo::Tree},
    {"halving-doubling", CollectiveAlgo::HalvingDoubling},
    {"hierarchical", CollectiveAlgo::Hierarchical},
    {"direct", CollectiveAlgo::Direct},
    {"in-network", CollectiveAlgo::InNetwork},
    {"auto", CollectiveAlgo::Auto}};

// Where the optimizer states live and the optimizer step runs ([sync] offload_optimizer, DeepSpeed's
// zero_optimization.offload_optimizer.device). Cpu: ZeRO-Offload (Ren et al. 2021): gradients go
// device-to-host over PCIe, the CPU runs Adam on fp32 master weights and moments in host memory,
// the updated 16-bit parameters come back host-to-device (workloads/training/optimizer_offload.h).
enum class OffloadDevice : std::uint8_t { None, Cpu };
inline constexpr sim::Choice<OffloadDevice> kOffloadDeviceNames[] = {{"none", OffloadDevice::None},
                                                                     {"cpu", OffloadDevice::Cpu}};

// How ZeRO-3's per-layer parameter gathers and gradient reduce-scatters are issued.
//  - Coalesced: one collective per layer over the layer's flat parameters, the next layer's
//    gather prefetched behind this layer's compute ([sync] fsdp_prefetch): PyTorch FSDP and
//    current DeepSpeed (PR #1453, 2022: batched all-gathers and reduce-scatters, *_base variants).
//  - DeepSpeed2021: DeepSpeed ZeRO stage 3 as released in 2021 (v0.3.13-v0.5.x): one
//    torch.distributed call per parameter tensor, each all-gather behind a torch.cuda.synchronize,
//    host work per rank of the group in every call (training/deepspeed_zero3_2021.h).
//  - TorchFsdp1: Coalesced as PyTorch FSDP1 (torch 2.0-2.2, FlatParameter) runs it, with the
//    memory-bound copies and casts around its collectives (training/torch_fsdp1.h).
enum class Zero3Impl : std::uint8_t { Coalesced, DeepSpeed2021, TorchFsdp1 };
inline constexpr sim::Choice<Zero3Impl> kZero3ImplNames[] = {{"coalesced", Zero3Impl::Coalesced},
                                                             {"deepspeed-2021", Zero3Impl::DeepSpeed2021},
                                                             {"torch-fsdp1", Zero3Impl::TorchFsdp1}};

// Which model chunks' gradients are cut into data-parallel buckets ([sync] bucketing;
// workloads/training/gradient_buckets.h).
//  - EveryChunk: every model chunk on every pipeline rank (PyTorch DDP's bucket_cap_mb, apex
//    DistributedFusedAdam's bucket_cap_mb, DeepSpeed's reduce_bucket_size).
//  - MegatronCore: only the first pipeline rank's first model chunk; every other chunk's gradients
//    are one bucket, reduced when the chunk's last backward ends. Megatron-Core's
//    DistributedDataParallel sets bucket_size = None "if we are on a pipeline stage that is not the
//    first (since data-parallel communication on these stages is not on the critical path), or if
//    disable_bucketing is True" (megatron/core/distributed/distributed_data_parallel.py: two ifs
//    at core_v0.10.0..core_v0.14.0, `if disable_bucketing or pp_rank > 0` at core_v0.15.0 and
//    HEAD), and get_model passes disable_bucketing = (model_chunk_idx > 0) (megatron/training/
//    training.py at the same tags; Megatron-Bridge's model_provider.py passes the same).
enum class Bucketing : std::uint8_t { EveryChunk, MegatronCore };
inline constexpr sim::Choice<Bucketing> kBucketingNames[] = {{"every-chunk", Bucketing::EveryChunk},
                                                             {"megatron-core", Bucketing::MegatronCore}};

// FP8 delayed scaling's amax reduction (Transformer Engine DelayedScaling, reduce_amax = True by
// default): at the exit of each fp8_autocast region (Megatron-Core wraps a model chunk's whole
// forward in one for the delayed recipe, core_v0.15.0 transformer_block.py l. 651-654) and at the
// end of its backward, TE concatenates every fp8 module's amaxes and all-reduces them (MAX,
// async_op=False) over the fp8 group: v2.9 quantization.py reduce_and_update_fp8_tensors,
// autocast_exit l. 591-600, layernorm_linear.py l. 1002 (backward). Megatron-Core passes
// get_amax_reduction_group(with_context_parallel=True): the tp x dp x cp ranks of a pipeline
// stage, or tp x cp with --tp-only-amax-red (parallel_state.py l. 1412-1434; fp8_utils.py l. 516).
//  - Stage: tp x dp x cp (the default); Tp: tp x cp (tp_only_amax_red); None: reduce_amax = False.
// Current scaling, MXFP8 and NVFP4 keep no amax buffer, so nothing is reduced there.
enum class Fp8AmaxReduction : std::uint8_t { Stage, Tp, None };
inline constexpr sim::Choice<Fp8AmaxReduction> kFp8AmaxReductionNames[] = {
    {"stage", Fp8AmaxReduction::Stage}, {"tp", Fp8AmaxReduction::Tp}, {"none", Fp8AmaxReduction::None}};

// Which communication runs behind computation, as the frameworks schedule it (the rules:
// workloads/training/overlap.h; the defaults and their sources: docs/scenario.md [sync]).
struct SyncSpec {
  CollectiveAlgo algorithm = CollectiveAlgo::Ring;  // the gradient all-reduce's
  double bucket_mb = 25.0;            // [sync] bucket_mb: a gradient bucket in MiB (2^20 bytes)
  // [sync] bucket_params: a gradient bucket in parameters (Megatron-Core's ddp.bucket_size, apex's
  // bucket_cap_mb / grad_sync_dtype bytes); > 0 replaces bucket_mb, 0 = unset. The scenario
  // loader refuses both keys together.
  double bucket_params = 0;
  Bucketing bucketing = Bucketing::EveryChunk;  // which chunks are cut into buckets
  bool overlap = true;                // [sync] overlap_grad_reduce (older name: overlap): buckets
                                      // reduced while the backward pass goes on
  std::optional<bool> overlap_param_gather;  // sharded optimizer: the next forward hides the
                                      // parameter all-gathers; unset = distributed_optimizer
  bool tp_comm_overlap = false;       // tensor-parallel collectives behind their GEMMs (needs SP)
  // [sync] fp8_param_gather (fp8 runs, distributed optimizer or FSDP): the fp8 linears' weights
  // are kept as fp8 and the distributed optimizer's parameter all-gather carries them at 1 byte
  // (Megatron-Core ddp_config.fp8_param_gather, per-tensor FP8; workloads/training/iteration_run.h).
  bool fp8_param_gather = false;
  // [sync] fp8_amax_reduction: the group delayed scaling reduces its amaxes over (above).
  Fp8AmaxReduction fp8_amax_reduction = Fp8AmaxReduction::Stage;
  // [sync] tp_async_dgrad_allreduce: tensor parallelism without sequence parallelism all-reduces a
  // column-parallel linear's input gradient asynchronously, beside its weight-gradient GEMM
  // (Megatron-LM since 3f65246911, 2021-09-02: --no-async-tensor-model-parallel-allreduce turned it
  // off; Megatron-Core's allreduce_dgrad, core_v0.15.0 tensor_parallel/layers.py l. 534-536, 615-616;
  // TE v2.9 layernorm_linear.py l. 752, wait l. 941-943). false: the all-reduce blocks (Megatron-LM
  // before that commit). Overlap rule: workloads/training/overlap.h tp_dgrad_collective_exposed_s.
  bool tp_async_dgrad_allreduce = true;
  bool fsdp_prefetch = true;          // ZeRO-3: the next layer's all-gather runs ahead
  Zero3Impl zero3_impl = Zero3Impl::Coalesced;  // ZeRO-3: how its collectives are issued
  OffloadDevice offload_optimizer = OffloadDevice::None;  // ZeRO-Offload: states and step on the CPU
  // ZeRO-Offload's one-step delayed parameter update (Ren et al. 2021, section 4.3): the CPU step
  // and the parameter copy back of iteration i run during iteration i+1's forward and backward,
  // which use parameters one step stale (workloads/training/optimizer_offload.h).
  bool offload_delayed_update = false;

  // Bytes of one gradient bucket when each of its parameters' gradients takes `grad_bytes`.
  double bucket_bytes(double grad_bytes) const {
    return bucket_params > 0 ? bucket_params * grad_bytes : bucket_mb * 1048576.0;
  }

  // Megatron-LM/NeMo recipes overlap the gather with the distributed optimizer; DeepSpeed's
  // ZeRO-1/2 gathers right after the step.
  bool param_gather_overlapped(const ParallelSpec& p) const {
    return overlap_param_gather.value_or(p.distributed_optimizer);
  }
};

}  // namespace clustersim::workloads
