// The recipe settings the modern tables leave out (see modern_row_defaults.h), each beside the
// recipe, launcher or config that sets it.
#include "analysis/modern_row_defaults.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "analysis/modern_row_archs.h"
#include "analysis/modern_row_layout.h"
#include "analysis/modern_row_recipes.h"

namespace clustersim::analysis::modern_detail {

// NVFP4 (E2M1 with an E4M3 scale per 16 elements and a per-tensor FP32 scale) is the "nvfp4"
// precision: Megatron-Bridge's bf16_with_nvfp4_mixed (src/megatron/bridge/training/
// mixed_precision.py: fp4 "e2m1", fp4_recipe "nvfp4") runs every transformer linear in NVFP4 and
// sets no first/last layers in bf16 (only its Nemotron 3 Super variant does), which is what the
// compute model does. MXFP8 (and
// Megatron-Bridge's "FP8-MX") is FP8 E4M3 with one shared scale per 32 elements (OCP
// Microscaling spec v1.0); Blackwell's tensor cores apply the block scales in the MMA at the FP8
// rate (NVIDIA Blackwell architecture technical brief), so it is modelled as fp8. FP8-CS
// (current scaling) and plain FP8 (delayed scaling) are fp8; FP8-CS rows also pay the amax pass
// before each cast (fp8_current_scaling_of). MXFP8's block-scale quantisation is charged as an
// fp8 cast.
std::string precision_for(const ModernRow& r) {
  if (has(r.precision, "NVFP4")) return "nvfp4";
  if (has(r.precision, "FP4")) return "";
  if (has(r.precision, "FP8")) return "fp8";
  if (has(r.precision, "BF16")) return "bf16";
  return "";
}

// Megatron-Bridge labels its per-tensor current-scaling rows "FP8-CS" (25.11 and later tables;
// scripts/performance/utils/precision.py: compute_dtype "fp8_cs" -> bf16_with_fp8_current_scaling_mixed,
// Transformer Engine's Float8CurrentScaling recipe). Rows labelled plain "FP8" keep delayed
// scaling, the recipe of the NeMo 2 / dgxc-benchmarking releases (DelayedScaling, NeMo's
// fp8_recipe "delayed"); the 25.09 table's unlabelled H100 FP8 rows are presumably current scaling
// too (see their notes) but do not say so, and are left as delayed. From 26.02 the tables label
// the same recipe plain "FP8": the performance scripts of Megatron-Bridge r0.3.0 - r0.5.0
// (scripts/performance/utils/precision.py get_precision_config, argument_parser.py --compute_dtype
// choices bf16 / fp8_cs / fp8_mx / fp8_sc / nvfp4) have no delayed-scaling dtype left, fp8_sc
// (blockwise) is set only by DeepSeek-V3's H100 presets, and the rows' layouts are the _FP8_CS_
// presets' (LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_CS_V2: Megatron-FSDP, mbs 2, offload 20;
// LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_CS_V2: tp 4 pp 8 vp 4), so a Megatron-Bridge "FP8" row
// of 26.02 or later is current scaling too. The scenario sets [model_constants]
// fp8_amax_bytes_per_element = 2 (modern_row_scenario.cpp).
bool fp8_current_scaling_of(const ModernRow& r) {
  return r.precision == "FP8-CS" || (r.precision == "FP8" && bridge_release(r) >= 260200);
}

// MXFP8 rows (Megatron-Bridge's "FP8-MX" too) gather their fp8 tensors with one E8M0 scale per
// 32 elements beside the data, and both copies of an output gradient (workloads/training/
// tp_gather_format.h); every such row runs Transformer Engine 2.2 or later (dgxc v25.05 GB200:
// TE 2.2; Megatron-Bridge 25.09 and later), whose _all_gather_mxfp8 gathers both usages (commit
// 8a20d666e, first tag v2.2). The scenario sets [model_constants]
// fp8_block_scale_bytes_per_element = 0.03125 (modern_row_scenario.cpp).
bool mxfp8_of(const ModernRow& r) { return r.precision == "MXFP8" || r.precision == "FP8-MX"; }

// dgxc-benchmarking's NeMo 1 yamls (releases v24.11.1 and v25.02; from v25.04 its launchers run
// NeMo 2, whose GPTConfig turns the fusion on) set cross_entropy_loss_fusion: true for Llama 3.1
// 8B / 70B / 405B and Nemotron-4 15B / 340B, and leave it out for Grok-1 (grok1/grok1_314b.yaml)
// and GPT-3 175B (nemo_megatron/gpt3_175b_hydra.yaml); NeMo 1 then takes Megatron-Core's default
// (megatron_base_model.py build_transformer_config / build_model_parallel_config), False in
// core_r0.8.0 .. core_r0.11.0 (model_parallel_config.py), so the loss runs the unfused
// _VocabParallelCrossEntropy. The scenario sets [model_constants] cross_entropy_unfused = 1
// (modern_row_scenario.cpp; workloads/compute/compute_constants.cpp counts its passes).
// The LoRA rows turn the fusion off too: NeMo 25ec4e9 (dgxc-benchmarking v25.02 llama3
// fine-tuning) recipes/llama3_8b.py and llama3_70b.py finetune_recipe, LoRA branch,
// recipe.model.config.cross_entropy_loss_fusion = False ("some settings currently do not function
// correctly with LoRA"); Megatron-Bridge v0.5.0 (26.06) recipes/llama/llama3.py
// llama3_70b_peft_config, cfg.model.cross_entropy_loss_fusion = False, which the performance
// configs keep (utils/overrides.py sets only cross_entropy_fusion_impl, read when the fusion is on).
bool unfused_cross_entropy_of(const ModernRow& r) {
  if (lora_rank_of(r) > 0) return true;
  if (modern_source_group(r) != "dgxc-benchmarking") return false;
  if (!has(r.source, "(release v24.11.1)") && !has(r.source, "(release v25.02)")) return false;
  return r.model == "GPT-3 175B" || has(r.model, "Grok-1");
}

// Fine-tuning rows ("[SFT]", "[SFT finetune]", "[LoRA]", "[LoRA finetune]"). SFT is full
// fine-tuning on sequences packed to the row's seq_len (the recipes' packed_sequence = True,
// _llama3_finetune_common in Megatron-Bridge src/megatron/bridge/recipes/llama/llama3.py): every
// weight trains, as in pre-training, so it is scored as training at the stated seq_len. Packed
// attention (THD with cu_seqlens) attends only within each packed sample, which costs less than
// causal attention over the whole sequence: at seq 4096 the attention core is 4-8% of a Llama
// 8B-70B layer's FLOPs, the most that this overcounts.
// LoRA freezes the base weights and trains adapters ([finetune] method = "lora"), with the
// recipe's rank and targets: Megatron-Bridge recipes/llama/llama3.py llama3_8b_finetune_config
// (dim 8, alpha 16) and llama3_70b_finetune_config (dim 16, alpha 32), both "matching NeMo2
// exactly" (recipes/utils/finetune_utils.py default_peft_config), so also the NeMo 2 recipes the
// dgxc-benchmarking v25.02 tables ran (NeMo 25ec4e9 recipes/llama3_8b.py dim 8 alpha 16,
// llama3_70b.py dim 16 alpha 32); targets, optimizer and packing below (lora_targets_toml_of,
// lora_distributed_optimizer_of, packed_sample_len_of). NeMo 24.07's Llama 2 SFT and LoRA rows (NeMo docs)
// name no recipe we could check (its LoRA rank and targets; its 70B SFT layout, tp 4 pp 4 on 16
// GPUs, does not fit 80 GB without recompute or other memory settings the table leaves out); they
// stay skipped. 0 = not a LoRA row with a known recipe.
int lora_rank_of(const ModernRow& r) {
  if (!has(r.model, "LoRA") || modern_source_group(r) == "NeMo docs") return 0;
  if (has(r.model, "Llama3-8B")) return 8;
  if (has(r.model, "Llama3-70B")) return 16;
  return 0;
}

// The LoRA rows' targets: the fused QKV projection only, one adapter over linear_qkv. dgxc v25.02
// runs NeMo 25ec4e9's finetune_recipe(performance_mode=True), whose
// finetune_performance_optimizations sets recipe.peft.target_modules = ['linear_qkv'] for LoRA
// (recipes/llama3_8b.py and llama3_70b.py); Megatron-Bridge 26.06's llama3_70b_lora_config_{gb300,
// gb200,b300,b200,h100} set cfg.peft.target_modules = ["linear_qkv"] (v0.5.0
// scripts/performance/configs/llama/llama3_llm_finetune.py, "Override target_modules to only apply
// LoRA to QKV"). LoRA's own default (every linear) is what neither ran.
std::string lora_targets_toml_of(const ModernRow& r) { return lora_rank_of(r) > 0 ? "[\"qkv\"]" : ""; }

// Sequence packing of the fine-tuning rows (ModelSpec::packed_sample_len = sum l_i^2 / seq_len of a
// pack). dgxc v25.02's SFT and LoRA runs: NeMo 25ec4e9 finetune_recipe defaults packed_sequence to
// performance_mode (True), seq_length 4096, PackedSequenceSpecs(packed_sequence_size=4096) and
// pad_to_max_length over SQuAD (SquadDataModule, prompt "Context: ... Question: ... Answer:");
// GPTSFTPackedDataset.collate_fn passes cu_seqlens, so attention stays within each sample.
// Megatron-Bridge's LoRA rows ran the same packed SQuAD: their published Model TFLOP/s per
// tokens/s (26.06: 2086 / 7481 = 0.2788 ... 735 / 2643 = 0.2781 TFLOP per token) is what v0.5.0's
// LoRA FLOPs formula gives from a packed SQuAD file (training/utils/flop_utils.py, branch
// is_lora and is_squad, attention from the per-row sum of squared sample lengths), 0.2796 at the
// statistics below, not the 0.433 of an unpacked sequence. The statistics: Megatron-Bridge commit
// 15daea1 (PR #2416, "Refactor the TFLOPs formula to use fixed average seq len"), flop_utils.py
// _LORA_SEQ_STATS = {4096: (842603, 4096), 2048: (488991, 2030)}: (sum of squared sample lengths
// per pack, tokens per pack) of the packed SQuAD training file, Llama 3 tokenizer, the same template
// as NeMo 2's (megatron/bridge/data/hf_processors/squad.py). So 842,603 / 4096 = 205.7 tokens,
// attention at 5.0% of an unpacked 4096-token causal sequence. Megatron-Bridge's SFT rows are not
// packed here: no published figure says which data they ran (the performance scripts default to
// mock data, full sequences). 0 = unpacked.
double packed_sample_len_of(const ModernRow& r) {
  constexpr double kSquadPackSquaredLengths4096 = 842603.0;
  if (r.seq_len != 4096) return 0;
  const std::string g = modern_source_group(r);
  const bool dgxc_finetune = g == "dgxc-benchmarking" && (has(r.model, "[SFT finetune]") || has(r.model, "[LoRA finetune]"));
  const bool bridge_lora = g == "Megatron-Bridge" && lora_rank_of(r) > 0;
  return dgxc_finetune || bridge_lora ? kSquadPackSquaredLengths4096 / r.seq_len : 0;
}

// Megatron-Bridge's LoRA performance configs run the distributed optimizer:
// set_llama3_common_peft_configs sets cfg.ddp.use_distributed_optimizer and
// cfg.optimizer.use_distributed_optimizer = True (v0.5.0 llama3_llm_finetune.py), over the
// recipe's False. NeMo 2's LoRA recipe (dgxc v25.02) keeps recipe.optim.config.
// use_distributed_optimizer = False.
bool lora_distributed_optimizer_of(const ModernRow& r) {
  return lora_rank_of(r) > 0 && modern_source_group(r) == "Megatron-Bridge";
}

// Multi-token prediction (DeepSeek-V3 paper, Liu et al. 2024, Sec. 2.2; workloads/model/mtp.h: one
// more MoE layer, a 2h -> h projection and a second loss through the shared output head, all on
// the last pipeline stage). Megatron-Bridge's DeepSeek-V3 recipe sets mtp_num_layers = 1
// (deepseek_v3.py; its layouts end in "mL"), so its rows train with MTP unless labelled "w/o
// MTP"; dgxc-benchmarking's v25.05 rows run NeMo 2's recipe, whose pretrain_recipe defaults to
// use_mtp = True (nemo/collections/llm/recipes/deepseek_v3.py: mtp_num_layers = 1, read at NeMo
// 00f65dd; dgxc's setup.sh pins NeMo 7a8f1cc, llmb-nemo-r2.3.0, whose performance script calls
// pretrain_recipe() without use_mtp; the recipe at that commit was not at hand). Kimi-K2's recipe
// has no MTP (kimi_k2.py: no mtp_num_layers, layouts end in "L" alone). Nemotron 3 Super's
// pretraining recipe, which its performance configs start from (scripts/performance/configs/
// nemotronh/nemotron_3_llm_pretrain.py, v0.4.0 - v0.5.0: nemotron_3_super_pretrain_config()),
// sets mtp_num_layers = 2 with mtp_use_repeated_layer (recipes/nemotronh/nemotron_3_super.py):
// one "*E" module run twice; the weights of the second pass are counted as a second module
// (one module's states too many, ~1.6% of the model's: not modelled). Nemotron 3 Ultra's 26.08
// performance recipes (src/megatron/bridge/perf_recipes/nemotronh/gb300/nemotronh.py and gb200/
// nemotronh.py, r0.6.0) start from nemotron_3_ultra_pretrain_config() (recipes/nemotronh/
// nemotron_3_ultra.py, r0.5.0 - r0.6.0): mtp_num_layers = 2, mtp_use_repeated_layer = True, the
// same one-module-twice form (the second module's states, ~2.0% of the model's, counted likewise).
// Nemotron 3.5 Lightning's likewise (nemotron_3_5_lightning_pretrain_config, recipes/nemotronh/h100/
// nemotron_3_nano.py, and the GB200 perf recipe: mtp_num_layers 2, mtp_use_repeated_layer, "*E").
// 0 = no MTP module.
int mtp_layers_of(const ModernRow& r) {
  const bool nemotron3_mtp =
      has(r.model, "Nemotron_3_Super") || has(r.model, "Nemotron_3_Ultra") || has(r.model, "Nemotron_3_5_Lightning");
  if (nemotron3_mtp && modern_source_group(r) == "Megatron-Bridge") return 2;
  return has(r.model, "DeepSeek-V3") && !has(r.model, "w/o MTP") ? 1 : 0;
}

// state them, modern/README.md §3):
//   * sequence parallelism whenever tp > 1 (the recipes set sequence_parallel = tp > 1);
//   * Megatron's distributed optimizer (use_distributed_optimizer = True in every recipe), or,
//     for FSDP rows (MaxText, PaxML, Megatron-FSDP), full sharding = zero 3. Hybrid sharding
//     ("FSDP=128 (+DP for remaining GPUs)", PaxML's replica axis, NeMo 25.07's 405B optimizer
//     instances) is `shard_group` (modern_row_recipes.cpp shard_group_of);
//   * no activation recompute in the Megatron-based stacks (NeMo, Megatron-Bridge, Megatron-LM:
//     the dense-model pre-training recipes leave it off); the JAX stacks run "full" recompute of
//     each decoder layer with the tensors their remat policy saves ([training] recompute_save,
//     jax_recompute_save below), GPT 5B PaxML with nothing saved (not traced, see there); every
//     JAX row's rerun pruned by dead-code elimination ([training] recompute_dce: jax/_src/
//     ad_checkpoint.py remat_partial_eval stages the rerun and prunes it with pe.dce_jaxpr,
//     keeping what the backward reads; the layer's MLP output projection, dropout and last
//     residual add drop out), with or without saves; the Megatron stacks' torch.utils.checkpoint
//     reruns the whole layer;
//   * gradient reduce-scatter / all-reduce overlapped with the backward pass ([sync] overlap), ring;
//   * flash attention (TransformerEngine's cuDNN / FlashAttention kernels);
//   * micro-batch 1 when the row leaves it empty.
//   * 16-bit gradient reduction for FP8 rows of the NeMo-based stacks (NeMo scripts/performance
//     pretrain_*.py set `recipe.trainer.plugins.grad_reduce_in_fp32 = False` for fp8;
//     Megatron-Bridge's performance configs set `cfg.ddp.grad_reduce_in_fp32 = False`); BF16 rows
//     and Megatron-LM's own rows keep fp32 gradients (Megatron-LM forces fp32 accumulation with
//     bf16). Nemotron-4 in dgxc-benchmarking: apex distributed_fused_adam with grad_sync_dtype
//     bf16 and dtype bf16 (its yaml), so 16-bit gradients and optimizer states;
//   * tensor-parallel communication overlapped with the GEMMs whenever tp > 1 in the NeMo-based
//     stacks (their performance recipes add MegatronCommOverlapCallback(tp_comm_overlap=True) for
//     Hopper and Blackwell); not in Megatron-LM's example scripts or the JAX stacks, nor in
//     Megatron-Bridge's Llama NVFP4 recipes nor its Nemotron 3 Super / Ultra recipes nor the
//     moe_a2a_overlap rows on Hopper (tp_comm_overlap_of; modern_row_recipes.h hopper_a2a_overlap);
bool jax_stack(const ModernRow& r) { return has(r.model, "MaxText") || has(r.model, "PaxML"); }

// [training] recompute_save of the JAX rows: the tensors each row's remat policy keeps (JAX
// save_only_these_names over the checkpointed decoder layer; docs/validation.md, session 15,
// branch jaxremat, traces each). NVIDIA/dgxc-benchmarking:
//   * Llama2-70B MaxText, v24.11.1 (35a9aec) maxtext/configure.sh:53-87: remat_policy=custom with
//     query_proj, key_proj, value_proj, qkv_proj and out_proj = device (FP8), plus mlpwo = device
//     (BF16): ["qkv_proj", "attention_out_proj"] (+ "mlp_down", the gated MLP's output projection);
//   * Llama3-70B MaxText, v25.02 (8f5cbb3) maxtext/configure.sh:41: remat_policy save_qkv_proj =
//     save_only_these_names(query_proj, value_proj, key_proj, qkv_proj): ["qkv_proj"];
//   * GPT-3 175B PaxML, v24.11.1 paxml/paxml_mod_configs.py (Synthetic175BCkpt): checkpoint_policy
//     SAVE_QKV_OUT_PROJ = save_only_these_names('combined_qkv_proj', 'out_proj') (google/praxis
//     praxis/layers/checkpoint_policy.py): ["qkv_proj", "attention_out_proj"].
// GPT 5B PaxML (Synthetic5BCkpt: SAVE_DOT_ONLY = jax.checkpoint_policies.checkpoint_dots) saves
// every dot_general output; whether Transformer Engine's JAX GEMMs of that container are
// dot_general primitives (saved) or custom calls (not) is not traced, so its rows keep "full" with
// nothing saved. "" for every other row.
std::string jax_recompute_save(const ModernRow& r) {
  if (!jax_stack(r)) return "";
  if (has(r.model, "Llama2-70B"))
    return fp8_row(r) ? "[\"qkv_proj\", \"attention_out_proj\"]" : "[\"qkv_proj\", \"attention_out_proj\", \"mlp_down\"]";
  if (has(r.model, "Llama3-70B")) return "[\"qkv_proj\"]";
  if (has(r.model, "GPT-3 175B")) return "[\"qkv_proj\", \"attention_out_proj\"]";
  return "";
}
bool nemo_stack(const ModernRow& r) {
  const std::string g = modern_source_group(r);
  return !jax_stack(r) && (g == "dgxc-benchmarking" || g == "Megatron-Bridge" || g == "NeMo docs");
}
// Tensor-parallel communication overlap ([sync] tp_comm_overlap) in the NeMo-based stacks when
// tp > 1, except Megatron-Bridge's Llama 3 70B and Llama 3.1 405B NVFP4 runs: scripts/performance/
// configs/llama/llama3_llm_pretrain.py and llama31_llm_pretrain.py, llama3_70b_pretrain_config_<gpu>
// and llama31_405b_pretrain_config_<gpu> for gb300, gb200, b300 and b200, set
// `cfg.comm_overlap.tp_comm_overlap = False if precision == "nvfp4"` (from c3e43e6a, 2025-12-03;
// tags v0.3.0 - v0.5.1). Every NVFP4 Llama row of the tables is 26.02 or later. Nor the Hopper rows
// with moe_a2a_overlap: their recipes leave it off (modern_row_recipes.h hopper_a2a_overlap).
// Nor dgxc-benchmarking's DeepSeek-V3 rows (v25.05, v25.05.04): NeMo 7a8f1cc's
// scripts/performance/llm/pretrain_deepseek_v3.py adds MegatronCommOverlapCallback(tp_comm_overlap=False).
// Nor dgxc-benchmarking's v25.02 LoRA rows: NeMo 25ec4e9's recipes/llama3_70b.py
// finetune_performance_optimizations adds the callback (tp_comm_overlap=True) in its SFT branch
// only, the LoRA branch adds none, and the launcher (llama3_finetune.py) sets its fields only when
// get_comm_overlap_callback_idx finds one; TransformerConfig's tp_comm_overlap defaults to False.
// Nor Megatron-Bridge's Nemotron 3 Super and Ultra rows (26.04 - 26.08): their recipes start from
// _pretrain_common(), whose ConfigContainer has comm_overlap=None (r0.4.0 - r0.6.0
// recipes/common.py l. 127-128; r0.4.0 / r0.5.0 recipes/nemotronh/nemotron_3_super.py l. 38, r0.6.0
// recipes/nemotronh/h100/nemotron_3_super.py l. 41, nemotron_3_ultra.py l. 37), and no performance
// config adds one (r0.4.0 / r0.5.0 scripts/performance/configs/nemotronh/nemotron_3_llm_pretrain.py,
// whose base configs set no moe_a2a_overlap; r0.6.0 perf_recipes/nemotronh/*/nemotronh.py set
// `cfg.comm_overlap.tp_comm_overlap = True` only in the Nano configs, whose recipe builds a
// CommOverlapConfig). Nemotron-H 56B's recipes do turn it on (NeMo recipes/nemotronh_56b.py
// MegatronCommOverlapCallback(tp_comm_overlap=True) in its trainer and performance_optimizations;
// Bridge r0.5.0 recipes/nemotronh/nemotronh.py l. 143, 275, 411, 548 CommOverlapConfig(tp_comm_overlap=True)).
bool tp_comm_overlap_of(const ModernRow& r) {
  if (!nemo_stack(r) || std::max(r.tp, 1) <= 1 || hopper_a2a_overlap(r)) return false;
  if (modern_source_group(r) == "dgxc-benchmarking" && has(r.model, "DeepSeek-V3")) return false;
  if (modern_source_group(r) == "dgxc-benchmarking" && has(r.model, "[LoRA")) return false;
  if (modern_source_group(r) == "Megatron-Bridge" && (has(r.model, "Nemotron_3_Super") || has(r.model, "Nemotron_3_Ultra")))
    return false;
  const bool llama_nvfp4 = modern_source_group(r) == "Megatron-Bridge" && has(r.model, "Llama") && precision_for(r) == "nvfp4";
  return !llama_nvfp4;
}

// NVFP4 rows count as low-precision rows here too (16-bit gradient reduction, as the FP8 ones;
// the Megatron-Bridge NVFP4 configs were not checked for it: UNSURE).
bool fp8_row(const ModernRow& r) { return precision_for(r) == "fp8" || precision_for(r) == "nvfp4"; }

// Megatron-Bridge's per-tensor FP8 recipes keep fp8 parameters and gather them in fp8:
// bf16_with_fp8_delayed_scaling_mixed and bf16_with_fp8_current_scaling_mixed set
// fp8_param_gather = True (src/megatron/bridge/training/mixed_precision.py, r0.1.0 l. 197, 268;
// r0.2.0 and r0.3.0 l. 218, 289; r0.6.0 l. 231, 302), and the performance scripts run those two
// for fp8 ("ds" / "cs": r0.1.0 scripts/performance/utils/helpers.py l. 92-101; "fp8_cs": r0.2.0
// helpers.py l. 35-41, r0.3.0 utils/precision.py l. 26-32). Not here:
//  - MXFP8 rows: bf16_with_mxfp8_mixed sets it with reuse_grad_buf_for_mxfp8_param_ag (r0.3.0
//    l. 251-252, r0.6.0 l. 264-265), which gathers bf16 through the gradient buffer
//    (Megatron-Core core_v0.15.0 param_and_grad_buffer.py l. 303-321, 736); NVFP4 and
//    subchannel (blockwise) recipes set it False (r0.3.0 l. 371, 402).
//  - DeepSeek-V3 on H100: blockwise fp8_sc / "ss" (modern_row_defaults.cpp fp8_current_scaling_of),
//    and r0.6.0 perf_recipes/deepseek/h100/deepseek_v3.py l. 130-131 turns it off.
//  - GPT-OSS (r0.5.0 configs/gpt_oss/gpt_oss_llm_pretrain.py l. 107-108; r0.6.0 perf_recipes/
//    gpt_oss/common.py l. 57-58 turn it off; the tables have no per-tensor FP8 GPT-OSS row).
//  - LoRA rows: the frozen base weights are not gathered and the adapters are bf16.
// Kimi-K2's override (r0.3.0 - r0.5.0 configs/kimi/kimi_llm_pretrain.py l. 35-44) applies to Muon
// with MXFP8 only. The Megatron-FSDP rows carry the key, but the model's ZeRO-3 gathers do not read it.
bool fp8_param_gather_of(const ModernRow& r) {
  if (modern_source_group(r) != "Megatron-Bridge" || (r.precision != "FP8" && r.precision != "FP8-CS")) return false;
  if (has(r.model, "DeepSeek-V3") && generation_of(r.gpu) == Generation::Hopper) return false;
  return !has(r.model, "GPT-OSS") && lora_rank_of(r) == 0 && !has(r.model, "[LoRA");
}

// Blackwell Megatron-FSDP recipes offload layers' activations to the host ([training]
// activation_offload_layers, Megatron-Core cpu_offloading_num_layers):
//   * Megatron-Bridge scripts/performance/configs/llama/llama3_workload_base_configs.py:
//     LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V1/V2 (mbs 2) 40 layers, ..._GB200_BF16 20,
//     ..._B200_FP8_CS 5, ..._GB300_FP8_CS (mbs 2) 20, ..._GB300_BF16 (mbs 2) 30, ..._B300_* none;
//     llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V1
//     (tp 2, FSDP) 92;
//   * NeMo scripts/performance/recommended_model_configs/model_configs_gb200.csv
//     (activation_offload_layers column): llama3 70b fp8 (mbs 1) 0, llama31 405b fp8 (tp 2) 95.
// Other rows offload nothing.
int activation_offload_layers_of(const ModernRow& r) {
  if (generation_of(r.gpu) != Generation::Blackwell || !has(r.zero_or_fsdp, "FSDP") || !nemo_stack(r)) return 0;
  const bool bridge = modern_source_group(r) == "Megatron-Bridge", gb200 = r.gpu.starts_with("GB200");
  const bool gb300 = r.gpu.starts_with("GB300"), b200 = r.gpu.starts_with("B200");
  const bool fp8 = precision_for(r) == "fp8";
  if (has(r.model, "405B")) return gb200 && fp8 ? (bridge ? 92 : 95) : 0;
  if (!has(r.model, "70B") || !bridge) return 0;
  if (gb300) return fp8 ? 20 : 30;
  if (b200) return fp8 ? 5 : 0;
  if (!gb200) return 0;  // B300: Megatron-FSDP without offloading
  return fp8 ? 40 : 20;
}

// Megatron-Bridge's GPT-OSS performance recipes (scripts/performance/configs/gpt_oss/
// gpt_oss_llm_pretrain.py set_gpt_oss_common_configs) reduce gradients in bf16 at every precision
// (ddp.grad_reduce_in_fp32 = False), and their 120B presets (gpt_oss_workload_base_configs.py)
// recompute the norms and the experts' activation (recompute_modules ["layernorm", "moe_act"]) on
// B200 and H100 at every precision and on GB200 in BF16 (GB200_FP8_MX_V2 sets []; GB300 and B300
// never set them).
bool gpt_oss_bridge(const ModernRow& r) { return has(r.model, "GPT-OSS") && modern_source_group(r) == "Megatron-Bridge"; }
bool gpt_oss_recompute_modules(const ModernRow& r) {
  if (!gpt_oss_bridge(r)) return false;
  return r.gpu == "B200" || has(r.gpu, "H100") || (r.gpu.starts_with("GB200") && precision_for(r) == "bf16");
}

// DeepSeek-V3's recompute modules, as its launchers set them:
//   * Megatron-Bridge's performance presets (scripts/performance/configs/deepseek/
//     deepseek_workload_base_configs.py, mirror lkk12014402/Megatron-Bridge and the release tags,
//     bridge_release): ["mla_up_proj"] on B200 and B300 (every precision), ["mla_up_proj", "mlp"]
//     on H100 (the dense "mlp" recompute of its 3 dense layers is not modelled). GB200:
//     DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2 takes ["mla_up_proj"] on v0.3.0 / v0.3.1
//     (26.02, 26.02.01), ["mlp"] on v0.4.0 / v0.4.2 (26.04, 26.04.01: GB200_V1's, the 3 dense
//     layers' MLP only, so nothing modelled), and ["mla_up_proj"] again from v0.5.0 (26.06: the
//     full-iteration FP8_MX_V1, v0.6.0 perf_recipes/deepseek/gb200/deepseek_v3.py likewise).
//     GB300 had two presets: pp 4 x vp 4, EP 64 with ["moe_act"] (commits c3e43e6a 2025-12-03 and
//     67b8806 2026-01-14), replaced by DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_V1/_V2 = pp 2 x vp 8,
//     pp_layout "Et*4|(t*4|)*14tmL", EP 32, micro-batch 2, ["mla_up_proj"] in every commit from
//     cc31be26 (2026-02-03, "Dsv3 Recipe Update") to v0.4.2 (26.04.01); from v0.5.0 (26.06) the
//     MXFP8 preset GB300_FP8_MX_V1/_V2 (and _GBS15360) runs micro-batch 1 with recompute_modules=[]
//     under a full-iteration CUDA graph (v0.6.0's deepseek_v3_pretrain_256gpu_gb300_fp8mx_config
//     too). So a GB300 row on pp 2 x vp 8 takes ["mla_up_proj"] before 26.06 and nothing from 26.06
//     at MXFP8, and any other GB300 row (25.11: pp 2 x vp 4, w/o MTP; no preset read has that
//     layout) ["moe_act"].
//   * dgxc-benchmarking v25.05 and v25.05.04 (deepseek_v3/pretraining/launch.sh, commits 68eaf7e and
//     1f6d9f4): --recompute_modules mla_up_proj on H100; core_attn on GB200, where the attention
//     ran unfused, so it is the scenario's recompute = "selective" (modern_row_recipes.h
//     unfused_mla_attention_of; with flash attention it would free nothing the model keeps: the
//     kernel's saved Q, K, V, O are the checkpoint's inputs and the out-projection's input).
// Kimi-K2 (the same multi-head latent attention): KIMI_K2_PRETRAIN_CONFIG_GB300_FP8_MX
// (scripts/performance/configs/kimi/kimi_workload_base_configs.py, v0.3.1 - v0.5.0: pp 4 x vp 4,
// EP 64, micro-batch 2) sets ["mla_up_proj"]; the table's Kimi-K2 rows are all that preset.
std::string deepseek_recompute_modules(const ModernRow& r) {
  if (has(r.model, "Kimi-K2"))
    return modern_source_group(r) == "Megatron-Bridge" && r.gpu.starts_with("GB300") ? "[\"mla_up_proj\"]" : "";
  if (!has(r.model, "DeepSeek-V3")) return "";
  if (modern_source_group(r) == "dgxc-benchmarking") return has(r.gpu, "H100") ? "[\"mla_up_proj\"]" : "";
  if (modern_source_group(r) != "Megatron-Bridge") return "";
  const int release = bridge_release(r);
  if (r.gpu.starts_with("GB300")) {
    if (r.pp != 2 || virtual_stages_of(r) != 8) return "[\"moe_act\"]";
    return full_iteration_mxfp8_recipe(r) ? "" : "[\"mla_up_proj\"]";
  }
  if (r.gpu.starts_with("GB200")) return release >= 260400 && release < 260600 ? "" : "[\"mla_up_proj\"]";
  if (r.gpu == "B200" || r.gpu == "B300" || has(r.gpu, "H100")) return "[\"mla_up_proj\"]";
  return "";
}

// Nemotron 3 Nano's recompute modules in Megatron-Bridge's performance presets (mirror
// lkk12014402/Megatron-Bridge, scripts/performance/configs/nemotronh/): the H100 presets recompute
// the whole MoE layer and the norms, recompute_modules ["moe", "layernorm"] from commit 47dacd42
// (2026-02-26, "Update Nemotron 3 Nano perf configs"; lost in cdcdc2ca and restored by 85ae70ac,
// 2026-03-03, "nemotron3_nano_h100_fix_260201", for the 26.02.01 release), and FP8_CS_V1
// ["moe", "layernorm", "core_attn", "moe_act"] from nemotron_3_workload_base_configs.py (2026-03-25
// to the mirror's head 793bb600): "moe_act" lies inside "moe", and "core_attn" with flash attention
// frees nothing the model keeps (as for DeepSeek-V3 above). Every H100 row of the tables is 26.02.01
// or later. The Blackwell presets set no recompute_modules.
//
// Nemotron 3 Super's (NEMOTRON_3_SUPER_PRETRAIN_CONFIG_*, scripts/performance/configs/nemotronh/
// nemotron_3_workload_base_configs.py, v0.4.0 = 26.04 and v0.5.0 = 26.06 alike for the tables'
// precisions): GB300 and GB200 set none; B300 NVFP4 (= B300_BF16_V1) ["moe_act", "layernorm"],
// B300 FP8_MX none; B200 FP8_MX (the B200 base) ["moe_act", "layernorm"], B200 NVFP4 None.
//
// Nemotron 3 Ultra's (26.08 only; r0.6.0 src/megatron/bridge/perf_recipes/nemotronh/gb300/
// nemotronh.py _nemotron_3_ultra_gb300_fp8mx_config and gb200/nemotronh.py nemotron_3_ultra_
// pretrain_256gpu_gb200_fp8mx_config): recompute_granularity "selective", recompute_modules
// ["moe_act"] on both. They also offload the expert MLP to the host (nemotron3_offload_modules).
std::string nemotron3_recompute_modules(const ModernRow& r) {
  if (modern_source_group(r) != "Megatron-Bridge") return "";
  if (has(r.model, "Nemotron_3_Ultra")) return "[\"moe_act\"]";
  if (has(r.model, "Nemotron_3_Super")) {
    const bool nvfp4 = precision_for(r) == "nvfp4";
    const bool b300 = r.gpu == "B300", b200 = r.gpu == "B200";
    return (b300 && nvfp4) || (b200 && !nvfp4) ? "[\"moe_act\", \"layernorm\"]" : "";
  }
  if (!has(r.model, "Nemotron_3_Nano")) return "";
  return has(r.gpu, "H100") ? "[\"moe\", \"layernorm\"]" : "";
}

// Fine-grained activation offloading ([training] offload_modules, offload_min_tensor_size) of
// Nemotron 3 Ultra's 26.08 recipes (r0.6.0 src/megatron/bridge/perf_recipes/nemotronh/gb300/
// nemotronh.py l. 256-269, _nemotron_3_ultra_gb300_fp8mx_config; gb200/nemotronh.py l. 253-271,
// nemotron_3_ultra_pretrain_256gpu_gb200_fp8mx_config): offload_modules ["fused_group_mlp"] with
// min_offloaded_tensor_size 500e6 elements on GB300 and 350e6 on GB200 ("approximates offloading the
// moe_act (pre-activation input)"); GB200 also sets fine_grained_offloading_max_inflight_offloads 1.
// The other recipes that offload have no row in the tables: DeepSeek-V3's 64 / 128-GPU GB300 FSDP
// and partial-graph dev configs, DeepSeek-V4 GB300 (no published architecture), Nemotron 3.5 Lightning 16 H100 BF16 (expert_fc1).
OffloadRecipe nemotron3_offload(const ModernRow& r) {
  if (modern_source_group(r) != "Megatron-Bridge" || !has(r.model, "Nemotron_3_Ultra")) return {};
  return {"[\"fused_group_mlp\"]", r.gpu.starts_with("GB200") ? 350e6 : 500e6};
}

// Per-layer and per-module precision ([training] num_layers_at_start_in_bf16 /
// num_layers_at_end_in_bf16, bf16_modules, fp8_modules; workloads/model/module_precision.h) of a
// Megatron-Bridge row's recipe. Every family's performance configs take their precision from
// get_precision_config (scripts/performance/utils/precision.py, r0.3.0 - r0.5.0;
// src/megatron/bridge/perf_recipes/_common.py _perf_precision, r0.6.0): "fp8_cs" sets
// first_last_layers_bf16 = False, and "fp8_mx" / "fp8_sc" / "nvfp4" return bf16_with_mxfp8_mixed /
// bf16_with_fp8_subchannel_scaling_mixed / bf16_with_nvfp4_mixed, which leave MixedPrecisionConfig's
// defaults (first_last_layers_bf16 False, 0 and 0 layers; training/mixed_precision.py). So the
// Llama 3 / 3.1, DeepSeek-V3, Qwen3, Kimi, GPT-OSS and Nemotron-H rows run every layer quantized
// (DeepSeek-V3 H100 on r0.6.0 sets the counts to 0 explicitly). Two recipes differ:
//   * Nemotron 3 Super NVFP4 (nemotron_3_llm_pretrain.py set_nemotron_3_super_common_configs, r0.4.0 /
//     r0.5.0; perf_recipes/nemotronh/common.py _nemotron_3_super_nvfp4_precision and each GPU's
//     nemotronh.py, r0.6.0): nemotron_3_super_bf16_with_nvfp4_mixed, first_last_layers_bf16 = True
//     with num_layers_at_end_in_bf16 = 14 (the start count stays Bridge's default 0), and
//     model.quant_recipe from te_quant.cfg (identical on the three branches): linear_qkv, linear_proj,
//     fc1/fc2_latent_proj and "mtp.*" in bf16, the Mamba mixer's out_proj in MXFP8 (in the quantized
//     layers only: a bf16 layer has no quantization context to override, override_nonquantized_autocast
//     = False in Megatron-Core's TEQuantizationRecipe).
//   * GPT-OSS NVFP4 (r0.5.0 gpt_oss_llm_pretrain.py get_gpt_oss_20b_precision_config: the last 4
//     layers in bf16): no GPT-OSS NVFP4 row in the tables.
// keep_mtp_spec_in_bf16, which Super's recipe sets at every precision, has no reader in
// Megatron-Bridge r0.4.0 - r0.6.0 nor Megatron-LM core_r0.17.0 (a provider field only), so the
// MXFP8 rows keep their MTP quantized.
std::string module_precision_toml(const ModernRow& r) {
  if (modern_source_group(r) != "Megatron-Bridge" || !has(r.model, "Nemotron_3_Super")) return "";
  if (precision_for(r) != "nvfp4") return "";
  return "num_layers_at_end_in_bf16 = 14\nbf16_modules = [\"attention\", \"moe_latent_proj\", \"mtp\"]\n"
         "fp8_modules = [\"mamba_out_proj\"]\n";
}

// Data-parallel gradient buckets, as the row's optimizer cut them (the scenario's [sync]
// bucket_params), and whether their reductions ran behind the backward ([sync]
// overlap_grad_reduce). Which rule a row gets (grad_bucket_params_of, overlap_grad_reduce_of):
//   * NeMo 2's MegatronCommOverlapCallback and Megatron-Bridge's CommOverlapConfig: with the
//     distributed optimizer and a data-parallel size (world / (tp x pp x cp), without context
//     parallelism) above 1 they set ddp.bucket_size = 128 * 1024 * 1024 = 134,217,728 parameters
//     and overlap_grad_reduce = True; at dp = 1 bucket_size = None and overlap_grad_reduce = False.
//     NeMo nemo/lightning/pytorch/callbacks/megatron_comm_overlap.py _get_optimizer_overlap_cfgs
//     (line 185-186 at v2.2.0, v2.3.0, v2.4.0 and the dgxc pins d2b2155, 7a8f1cc, b4148d2; line
//     184-185 at 25ec4e9), applied in setup() when ddp_config.use_distributed_optimizer (line
//     277-279), dp = parallel_state.get_data_parallel_world_size() (nemo/lightning/_strategy_lib.py);
//     Megatron-Bridge src/megatron/bridge/training/comm_overlap.py _get_optimizer_overlap_cfgs (line
//     539-540 on v0.2.0 - v0.3.1, 576-577 on v0.4.0 / v0.4.2 / v0.6.0, 563-564 on v0.5.x, 542-543 on
//     r0.1.0), applied by setup() to the DDP config when use_distributed_optimizer (line 602-606 on
//     v0.3.0), dp = ConfigContainer.get_data_parallel_size = world // (tp x pp x cp) (training/
//     config.py), called only when cfg.comm_overlap is not None (config.py line 1696-1698 on v0.3.0).
//     A user value wins (_override_user_cfgs); no recipe or performance script of these releases sets
//     bucket_size (the one ddp.bucket_size = 768000000 of v0.5.x / v0.6.0 is GPT-OSS 20B's, a
//     Megatron-FSDP run, and setup() overwrites ddp.bucket_size anyway).
//     Who has one: the NeMo 2 pre-training recipes' pretrain_performance_optimizations (llama3_8b,
//     llama3_70b, llama31_405b, gpt3_175b, nemotron4_15b/340b, mixtral_8x7b/8x22b, llama4_e16/e128,
//     nemotronh_56b) that NeMo's scripts/{llm/,}performance/llm/pretrain_*.py run with
//     performance_mode=True (NeMo docs 25.02 - 25.07; dgxc v25.04 llama3.1 and nemotron at NeMo
//     d2b2155, v25.05.x at 7a8f1cc / b4148d2, whose pretrain_deepseek_v3.py and pretrain_grok1_314b.py
//     add the callback themselves), and the SFT branch of finetune_performance_optimizations (dgxc
//     v25.02 llama3 fine-tuning, NeMo 25ec4e9; its LoRA branch adds none and LoRA turns the
//     distributed optimizer off). Megatron-Bridge: the Llama 70B / 405B and DeepSeek-V3, Kimi-K2,
//     Nemotron 3 Nano recipes create a CommOverlapConfig, the Llama 8B and Qwen3 performance configs
//     set one (25.09: scripts/performance/run_script.py on r0.1.0; 25.11 - 26.06.01: scripts/
//     performance/configs/*/; 26.08: src/megatron/bridge/perf_recipes/), and so do the Llama 3 70B
//     SFT and LoRA performance configs (scripts/performance/configs/llama/llama3_llm_finetune.py
//     llama3_70b_{sft,lora}_config_*, v0.3.0 - v0.5.1), whose set_llama3_common_peft_configs turns
//     the distributed optimizer back on (the recipes' llama3_70b_sft_config / _peft_config set it
//     and ddp.overlap_grad_reduce off; the rule's overlap_grad_reduce = True overwrites the latter at
//     dp > 1), and DeepSeek-V4-Flash
//     (perf_recipes/deepseek/gb200/deepseek_v4.py). GPT-OSS-120B's recipe leaves comm_overlap None
//     (recipes/gpt_oss/gpt_oss.py on every tag): only gpt_oss_120b_pretrain_config_gb200 (v0.4.0 on)
//     and the full-iteration MXFP8 presets (v0.5.x: the moe_a2a_overlap override creates one,
//     scripts/performance/utils/overrides.py _set_moe_a2a_overlap_overrides; v0.6.0
//     _apply_gpt_oss_120b_full_iter_fp8mx_configs) have one. Nemotron 3 Super and Ultra set none
//     (recipes/nemotronh/nemotron_3_super.py, nemotron_3_ultra.py). Nemotron 3.5 Lightning's 26.08
//     GB200 recipe is built on Nano's (perf_recipes/nemotronh/gb200/nemotronh.py
//     _build_nemotron_3_5_lightning_gb200_mxfp8 -> _build_nemotron_3_nano_gb200_mxfp8 ->
//     nemotron_3_nano_pretrain_8gpu_h100_bf16_config, recipes/nemotronh/h100/nemotron_3_nano.py,
//     which creates the CommOverlapConfig), so it has one.
//   * overlap_grad_reduce = False: Megatron-Core then sets bucket_size = None, so each model chunk's
//     gradients are one bucket reduced after its backward (distributed_data_parallel.py "Set
//     bucket_size to infinity if overlap_grad_reduce is False", at core_v0.14.0 and the Megatron-LM
//     pins of Bridge v0.2.0 - v0.6.0, 0d8e071 ... cd4afff). Rows: Megatron-Bridge's DeepSeek-V3 and
//     Kimi-K2 on H100 (r0.1.0 run_script.py line 100-102; deepseek_v3_pretrain_config_h100 and
//     kimi_k2_pretrain_config_h100 on v0.2.0 - v0.5.1; perf_recipes/{deepseek,kimi}/h100 on v0.6.0:
//     cfg.comm_overlap.overlap_grad_reduce = False, a user value); dgxc v25.02's LoRA (NeMo 2's
//     MegatronStrategy default DistributedDataParallelConfig(check_for_nan_in_grad=True), which
//     leaves overlap_grad_reduce False); and the comm-overlap rows above at dp = 1 (their only
//     reduction is over the context-parallel ranks). Megatron-Core then reduces every bucket in
//     finalize_model_grads after the whole pipeline schedule, as the simulator's
//     overlap_grad_reduce = false does (workloads/training/iteration_compute_stream.cpp step_done).
//   * Megatron-Core DDP's own default when nothing sets bucket_size: max(40,000,000, 1,000,000 x
//     the data-parallel size), "if using very large dp_sizes, make buckets larger to ensure that
//     chunks used in NCCL ring-reduce implementations are large enough to remain bandwidth-bound
//     rather than latency-bound" (distributed_data_parallel.py). The size is the data-parallel
//     group's without context parallelism: parallel_state.get_data_parallel_world_size() (default
//     with_context_parallel=False) at core_r0.8.0 - core_v0.14.0, process_groups_config.py
//     'dp_group' with_context_parallel=False at the Bridge pins 0d8e071 - cd4afff. Megatron-LM's own
//     training.py get_model counts context parallelism (mpu.get_data_parallel_world_size(
//     with_context_parallel=True) at core_v0.13.0; resolve_ddp_bucket_size with dp_cp_group at
//     d98e8a6), so the Megatron-LM example rows (--overlap-grad-reduce, --use-distributed-optimizer)
//     take dp x cp. Megatron-Core keeps a given bucket_size: ParamAndGradBuffer closes a bucket once
//     it holds bucket_size parameters and pads its end to lcm(dp, 128) elements
//     (param_and_grad_buffer.py; 2^16 only with pad_buckets_for_high_nccl_busbw, set by no recipe).
//     Rows: Megatron-Bridge GPT-OSS-120B (but the two above), Nemotron 3 Super / Ultra; NeMo 1's
//     mcore_distributed_optim, which ignores the yaml's bucket_cap_mb ("mcore bucket_size is based
//     on num of parameters, therefore not using bucket_cap_mb",
//     megatron_base_model.py setup_mcore_distributed_parallel: bucket_size = optim.ddp_bucket_size,
//     default None): dgxc-benchmarking's Grok-1 (v24.11.1, v25.02) and Nemotron-4 15B v25.02;
//   * apex DistributedFusedAdam (NeMo 1's distributed_fused_adam): bucket_cap_mb MiB of
//     grad_sync_dtype elements (apex/contrib/optimizers/distributed_fused_adam.py: bucket_size =
//     1024 x 1024 x bucket_cap_mb / dtype_size). dgxc-benchmarking's NeMo 1 yamls (releases v24.11.1
//     35a9aec and v25.02 8f5cbb3; from v25.04 its launchers run NeMo 2) set grad_sync_dtype bf16
//     and bucket_cap_mb 75 (llama3.1_8b.yaml, llama3.1_70b.yaml), 125 (llama3.1_405b.yaml), 220
//     (nemo_megatron/gpt3_175b_hydra.yaml), 50 (nemotron4-340b-synth.yaml) and 100
//     (nemotron4-15b-synth.yaml at v24.11.1; mcore_distributed_optim from v25.02).
// NeMo 24.07's performance-summary rows (NeMo 1; which optimizer its launcher configs ran was not
// checked) keep the scenario default, as do the JAX stacks (FSDP: no bucketed reduction). Rows
// with FSDP (zero 3) write a bucket too, which the simulator does not use (no bucketed reduction).
namespace {

// The stacks that keep the scenario's default buckets: JAX (FSDP, no bucketed reduction) and
// NeMo 24.07's rows (which optimizer they ran was not checked).
bool default_buckets(const ModernRow& r) {
  return jax_stack(r) || (modern_source_group(r) == "NeMo docs" && has(r.source, "NeMo 24.07"));
}

// apex DistributedFusedAdam's bucket in parameters where a dgxc-benchmarking NeMo 1 yaml names
// bucket_cap_mb (see grad_bucket_params_of); 0 for every other row.
double apex_bucket_params_of(const ModernRow& r) {
  if (modern_source_group(r) != "dgxc-benchmarking") return 0;
  if (!has(r.source, "(release v24.11.1)") && !has(r.source, "(release v25.02)")) return 0;
  constexpr double kMiB = 1048576.0, kBf16Bytes = 2.0;  // grad_sync_dtype: bf16 in every yaml below
  const bool nemotron15_apex = has(r.model, "Nemotron-4 15B") && has(r.source, "(release v24.11.1)");
  if (has(r.model, "Llama3.1-8B") || has(r.model, "Llama3.1-70B")) return 75 * kMiB / kBf16Bytes;
  if (has(r.model, "Llama3.1-405B")) return 125 * kMiB / kBf16Bytes;
  if (r.model == "GPT-3 175B") return 220 * kMiB / kBf16Bytes;
  if (has(r.model, "Nemotron-4 340B")) return 50 * kMiB / kBf16Bytes;
  if (nemotron15_apex) return 100 * kMiB / kBf16Bytes;
  return 0;
}

// A dgxc-benchmarking row's release as yymm (v25.05.04 -> 2505); 0 when the source names none.
int dgxc_release(const ModernRow& r) {
  if (modern_source_group(r) != "dgxc-benchmarking") return 0;
  const std::size_t at = r.source.find("(release v");
  int yy = 0, mm = 0;
  if (at == std::string::npos || std::sscanf(r.source.c_str() + at + 10, "%d.%d", &yy, &mm) != 2) return 0;
  return yy * 100 + mm;
}

// The row ran NeMo 2's MegatronCommOverlapCallback or Megatron-Bridge's CommOverlapConfig with the
// distributed optimizer, so the data-parallel rule above set its buckets (see grad_bucket_params_of).
bool comm_overlap_dp_rule(const ModernRow& r) {
  if (jax_stack(r)) return false;
  const std::string g = modern_source_group(r);
  if (g == "NeMo docs") return !has(r.source, "NeMo 24.07");
  if (g == "dgxc-benchmarking") {
    const int release = dgxc_release(r);
    return release >= 2504 || (release == 2502 && has(r.model, "[SFT"));
  }
  if (g != "Megatron-Bridge") return false;
  if (has(r.model, "GPT-OSS"))
    return (r.gpu.starts_with("GB200") && bridge_release(r) >= 260400) || full_iteration_mxfp8_recipe(r);
  return !has(r.model, "Nemotron_3_Super") && !has(r.model, "Nemotron_3_Ultra");
}

}  // namespace

bool megatron_core_buckets(const ModernRow& r) { return !default_buckets(r) && apex_bucket_params_of(r) == 0; }

bool overlap_grad_reduce_of(const ModernRow& r) {
  if (!megatron_core_buckets(r)) return true;  // the scenario default; apex overlaps its buckets
  const std::string g = modern_source_group(r);
  if (g == "Megatron-Bridge" && has(r.gpu, "H100") && (has(r.model, "DeepSeek-V3") || has(r.model, "Kimi-K2"))) return false;
  if (g == "dgxc-benchmarking" && has(r.model, "[LoRA")) return false;
  return !comm_overlap_dp_rule(r) || dp_of(r) > 1;
}

// Nemotron-4 rows run under NeMo 2 (NeMo docs' 25.02 and 25.04 tables; dgxc-benchmarking from
// v25.04, whose launchers run NeMo 2's scripts/performance/llm/pretrain_nemotron4_*.py at NeMo
// d2b21556 (v25.04 nemotron/setup.sh) and b4148d21 (v25.05)): NemotronConfig's squared_relu runs
// as eager torch ops (workloads/model/eager_squared_relu.h has the source lines). NeMo 1 (NeMo
// 24.07's tables, dgxc v24.11.1 and v25.02's nemotron4-*-synth.yaml) compiles it with @jit_fuser.
bool eager_squared_relu_of(const ModernRow& r) {
  if (!has(r.model, "Nemotron-4")) return false;
  const std::string g = modern_source_group(r);
  if (g == "NeMo docs") return !has(r.source, "NeMo 24.07");
  return g == "dgxc-benchmarking" && dgxc_release(r) >= 2504;
}

double grad_bucket_params_of(const ModernRow& r) {
  if (default_buckets(r)) return 0;
  if (const double apex = apex_bucket_params_of(r); apex > 0) return apex;
  constexpr double kMegatronMinBucketParams = 40e6, kMegatronBucketParamsPerDpRank = 1e6;
  const auto megatron_rule = [&](double ranks) { return std::max(kMegatronMinBucketParams, kMegatronBucketParamsPerDpRank * ranks); };
  const double dp = dp_of(r);
  const double megatron_default = megatron_rule(dp);
  // bucket_size = None: more parameters than any model chunk holds, so each chunk is one bucket.
  // LoRA rows keep Megatron's default instead: it exceeds their adapters' gradients (one bucket
  // all the same), and without the distributed optimizer the memory model stages two copies of it.
  constexpr double kOneBucketParams = 1e15;
  if (!overlap_grad_reduce_of(r)) return has(r.model, "[LoRA") ? megatron_default : kOneBucketParams;
  constexpr double kCommOverlapBucketParams = 128.0 * 1024 * 1024;  // 134,217,728
  if (comm_overlap_dp_rule(r)) return kCommOverlapBucketParams;
  if (modern_source_group(r) == "Megatron-LM") return megatron_rule(dp * cp_of(r));
  return megatron_default;
}

}  // namespace clustersim::analysis::modern_detail
