// Layout facts of the modern rows that their tables misprint or leave out, read from the recipes
// and later releases of the same publication (modern_row_recipes.cpp says where): the expert
// tensor-parallel size of Megatron-Bridge's MoE configs, the layer count dgxc-benchmarking's Llama 4
// Maverick tables corrected in a later release, the shape of the Nemotron-3 rows NeMo 24.07 left
// empty, and the micro-batch of the Megatron-Bridge cells
// whose MBS x GA x dp contradicts their global batch. Internal to analysis/.
#pragma once

#include "analysis/modern_rows.h"

namespace clustersim::analysis::modern_detail {

// Expert tensor parallelism (parallelism.etp) of a row with experts: the notes' "ETP=k" when
// stated, else the recipe's (1 for Megatron-Bridge), else 0 = Megatron-Core's default, tp.
int expert_tp_of(const ModernRow& r);

// The NeMo container release of a Megatron-Bridge row as yymm * 100 + patch ('26.06.01 NeMo
// Container' -> 260601), read from its source's section; 0 for the other sources.
int bridge_release(const ModernRow& r);

// Whether the row ran one of the full-iteration MXFP8 recipes of Megatron-Bridge 26.06 and later
// (cuda_graph_impl "full_iteration" with the hybridep dispatcher and moe_a2a_overlap).
bool full_iteration_mxfp8_recipe(const ModernRow& r);
// Whether the row's recipe runs the routed experts through Transformer Engine's op fuser
// (training.te_op_fuser): GPT-OSS-120B's full-iteration MXFP8 recipes.
bool te_op_fuser_of(const ModernRow& r);

// Whether the row's routed experts ran as one grouped GEMM per linear (training.moe_grouped_gemm,
// true) or as Megatron-Core's SequentialMLP (false): dgxc-benchmarking's Grok-1 and NeMo's Mixtral.
bool moe_grouped_gemm_of(const ModernRow& r);

// Whether the row's recipe runs CUDA graphs the model represents (training.cuda_graphs):
// Megatron-Core's cuda_graph_impl "full_iteration", and dgxc v25.05's per-layer graphs of whole
// TransformerLayers (dgxc_per_layer_graphs, mapped onto the same mode). Transformer Engine's
// per-module graphs are cuda_graph_scope_of.
bool dgxc_per_layer_graphs(const ModernRow& r);
bool cuda_graphs_of(const ModernRow& r);
// The per-layer CUDA graph scope (training.cuda_graph_scope, a TOML array) of a Megatron-Bridge row
// whose preset sets cuda_graph_impl "transformer_engine", nullptr for the others.
const char* cuda_graph_scope_of(const ModernRow& r);

// Megatron-Core's token dispatcher of a row (parallelism.moe_dispatcher): "deepep" or "hybridep"
// where the row's recipe runs the flex dispatcher with that backend, nullptr for the alltoall
// dispatcher (the default).
const char* moe_dispatcher_of(const ModernRow& r);
// The SMs of the flex dispatcher's kernels ([parallelism] moe_dispatcher_sms); 0 = the default.
int moe_dispatcher_sms_of(const ModernRow& r);

// Whether the row's recipe runs Megatron-Core's combined 1F1B expert-parallel all-to-all overlap
// (parallelism.moe_a2a_overlap: Megatron-Bridge's moe_a2a_overlap / overlap_moe_expert_parallel_comm).
bool moe_a2a_overlap_of(const ModernRow& r);
// Whether it is such a row on Hopper, which runs without tensor-parallel communication overlap.
bool hopper_a2a_overlap(const ModernRow& r);
// Whether the row's recipe runs the shared experts beside the token dispatch and combine
// (parallelism.moe_shared_expert_overlap: Megatron-Core --moe-shared-expert-overlap).
bool moe_shared_expert_overlap_of(const ModernRow& r);

// Whether the row's attention ran Transformer Engine's unfused path (model.flash_attention = false:
// the s x s scores in device memory), because no fused kernel of its stack took its head shape:
// dgxc-benchmarking's DeepSeek-V3 GB200 rows (multi-head latent attention, 192-wide Q/K and
// 128-wide V, on sm100 before TE 2.5). Their recipe recomputes the attention core
// (recompute_modules ["core_attn"]), which is the scenario's recompute = "selective".
bool unfused_mla_attention_of(const ModernRow& r);

// The capacity factor of a row whose recipe drops and pads its MoE tokens (model.capacity_factor:
// every expert computes exactly its capacity, and Megatron-Core's alltoall dispatcher needs no token
// counts on the host); 0 (dropless, or not checked) otherwise.
double drop_and_pad_capacity_of(const ModernRow& r);

// The row as it ran, where a later release of its source corrects a printed column (the layer
// count) or a published config gives the shape the table leaves empty (NeMo 24.07's Nemotron-3
// 8B/22B); otherwise the row unchanged.
ModernRow as_run(const ModernRow& r);

// The micro-batch of a Megatron-Bridge cell whose printed MBS x GA x dp differs from its global
// batch, from the recipe the cell ran; 0 when the row is not one of them.
int recipe_micro_batch(const ModernRow& r);

// The hybrid sharding group of an FSDP row (parallelism.shard_group: the consecutive data-parallel
// ranks one copy of the sharded states spans, the other dp / group copies replicating it), from the
// launcher that ran it: JAX meshes with a data-parallel DCN axis (PaxML GPT-3 175B, MaxText from 64
// nodes), NeMo 25.07's Llama 3.1 405B GB200 recipe (num_distributed_optimizer_instances = 2) and
// Megatron-Bridge 26.08's Nemotron 3 Ultra (4 instances, one a 64-GPU NVLink domain); 0 where the
// row shards over every data-parallel rank (or is not FSDP).
int shard_group_of(const ModernRow& r);
// Megatron-FSDP's outer_dp_sharding_strategy of a hybrid-sharded row (parallelism.outer_dp_sharding):
// "optim" for Nemotron 3 Ultra's 26.08 recipes, nullptr for HSDP ("no_shard") and the other rows.
const char* outer_dp_sharding_of(const ModernRow& r);

}  // namespace clustersim::analysis::modern_detail
