// The settings a modern row's table leaves out, from the performance recipes of its publication
// (NeMo, Megatron-Bridge, dgxc-benchmarking's launchers, Megatron-LM's examples; modern/README.md
// §3; modern_row_defaults.cpp cites each): the precision the compute model runs, which software
// stack ran it (what its recipes default to), LoRA's rank, multi-token prediction, activation
// offloading and the recompute modules of GPT-OSS and DeepSeek-V3. Internal to analysis/.
#pragma once

#include <string>

#include "analysis/modern_rows.h"

namespace clustersim::analysis::modern_detail {

// The scenario precision of the row's ("nvfp4", "fp8", "bf16"); "" when not modelled.
std::string precision_for(const ModernRow& r);
// An fp8 row run with Transformer Engine's per-tensor current scaling (labelled FP8-CS).
bool fp8_current_scaling_of(const ModernRow& r);
// An fp8 row run with MXFP8 block scaling (labelled MXFP8 or FP8-MX).
bool mxfp8_of(const ModernRow& r);
// A row whose recipe runs Megatron-Core's unfused vocab-parallel cross-entropy.
bool unfused_cross_entropy_of(const ModernRow& r);
// A LoRA fine-tuning row's adapter rank from its recipe; 0 = not a LoRA row with a known recipe.
int lora_rank_of(const ModernRow& r);
// Its [finetune] lora_targets as a TOML array ("" when not a LoRA row).
std::string lora_targets_toml_of(const ModernRow& r);
// Whether a LoRA row's stack ran the distributed optimizer (Megatron-Bridge's performance configs).
bool lora_distributed_optimizer_of(const ModernRow& r);
// [model] packed_sample_len of a fine-tuning row whose recipe packs its samples; 0 = unpacked.
double packed_sample_len_of(const ModernRow& r);
// Multi-token prediction modules the recipe trains (DeepSeek-V3); 0 = none.
int mtp_layers_of(const ModernRow& r);
bool jax_stack(const ModernRow& r);   // MaxText or PaxML
std::string jax_recompute_save(const ModernRow& r);  // [training] recompute_save of a JAX row, TOML; "" when none
bool nemo_stack(const ModernRow& r);  // NeMo, Megatron-Bridge or dgxc-benchmarking (not JAX)
bool fp8_row(const ModernRow& r);     // fp8 or nvfp4
// [sync] fp8_param_gather: a Megatron-Bridge per-tensor FP8 row whose recipe gathers fp8 parameters.
bool fp8_param_gather_of(const ModernRow& r);
bool tp_comm_overlap_of(const ModernRow& r);  // [sync] tp_comm_overlap: tp > 1, NeMo-based, not Llama NVFP4
// Layers whose activations the Blackwell Megatron-FSDP recipes offload to the host; 0 = none.
int activation_offload_layers_of(const ModernRow& r);
bool gpt_oss_bridge(const ModernRow& r);             // GPT-OSS in Megatron-Bridge's tables
bool gpt_oss_recompute_modules(const ModernRow& r);  // recompute ["layernorm", "moe_act"]
// DeepSeek-V3's (and Kimi-K2's) recompute_modules, written as a TOML array of strings; "" when none.
std::string deepseek_recompute_modules(const ModernRow& r);
// Fine-grained activation offloading of a row's recipe: offload_modules as a TOML array ("" when
// none) and min_offloaded_tensor_size in elements.
struct OffloadRecipe {
  std::string modules;
  double min_tensor_elements = 1024.0 * 1024.0;
};
OffloadRecipe nemotron3_offload(const ModernRow& r);  // Ultra 26.08: ["fused_group_mlp"]
std::string nemotron3_recompute_modules(const ModernRow& r);  // Nano: ["moe", "layernorm"] on H100; Super: by GPU; Ultra: ["moe_act"]
// The [training] lines of a row's per-layer / per-module precision ("" for none): Nemotron 3 Super NVFP4.
std::string module_precision_toml(const ModernRow& r);
// Parameters per data-parallel gradient bucket of the optimizer the row's stack ran (NeMo 2's /
// Megatron-Bridge's comm-overlap 128 Mi, Megatron-Core DDP's default, one bucket per chunk where
// overlap_grad_reduce was off, or apex DistributedFusedAdam's bucket_cap_mb where a NeMo 1 yaml
// names it); 0 = no bucketed reduction known (JAX stacks: FSDP; NeMo 24.07 docs rows: the scenario
// default).
double grad_bucket_params_of(const ModernRow& r);
// Whether the row reduced its gradient buckets behind the backward ([sync] overlap_grad_reduce).
bool overlap_grad_reduce_of(const ModernRow& r);
// Whether the row's stack cut its gradient buckets with Megatron-Core's DistributedDataParallel,
// which buckets only the first pipeline stage's first model chunk ([sync] bucketing =
// "megatron-core", workloads/specs.h Bucketing): every row of a Megatron-Core stack (NeMo 2,
// Megatron-Bridge, NeMo 1's mcore_distributed_optim, Megatron-LM), not apex's bucket_cap_mb, the
// JAX stacks or NeMo 24.07's unchecked launchers.
bool megatron_core_buckets(const ModernRow& r);
// [model] eager_squared_relu: a Nemotron-4 row run under NeMo 2, whose squared ReLU is eager torch ops.
bool eager_squared_relu_of(const ModernRow& r);

}  // namespace clustersim::analysis::modern_detail
