// What a modern row describes that the simulator cannot express yet, or that its publication
// misprinted (modern_skip_reason in modern_rows.h): a GPU without a node preset, a model without an
// architecture or preset, a layout that does not multiply out or that Megatron-Core would refuse.
// Each reason is a short fixed phrase so that the validation can count rows per reason.
#include <algorithm>
#include <string>

#include "analysis/modern_row_archs.h"
#include "analysis/modern_row_defaults.h"
#include "analysis/modern_row_layout.h"
#include "analysis/modern_row_recipes.h"
#include "analysis/modern_rows.h"

namespace clustersim::analysis {
namespace {

using modern_detail::as_run;
using modern_detail::batch_exceeds_stated_ga;
using modern_detail::cp_of;
using modern_detail::dp_of;
using modern_detail::expert_tp_of;
using modern_detail::has;
using modern_detail::has_experts;
using modern_detail::hybrid_preset_of;
using modern_detail::lora_rank_of;
using modern_detail::moe_arch_of;
using modern_detail::node_preset_for;
using modern_detail::notes_int;
using modern_detail::other_moe_reason;
using modern_detail::precision_for;
using modern_detail::recipe_micro_batch;
using modern_detail::recipe_stage_layers;
using modern_detail::slot_split_recipe;
using modern_detail::virtual_stages_of;
using modern_detail::with_hybrid_shape;

// --- what cannot be expressed yet ----------------------------------------------------------------

// --- mixtures of experts --------------------------------------------------------------------------
// The architectures themselves (kMoeArchs, hybrid presets) are in modern_row_archs.cpp.

// Expert parallelism as Megatron-Core lays it out (parallelism.etp; parallel_state.py
// initialize_model_parallel): the expert grid covers each pipeline stage's tp x cp x dp GPUs (context
// parallel ranks fold into it), so expert tensor parallelism ETP (expert_tp_of: the notes', the
// recipe's, else tp) times EP must divide them (expert data parallel = world / (etp x ep x pp)).
// A row whose etp x ep exceeds or does not divide a stage is a layout Megatron-Core refuses: a
// misprint in its table (Megatron-Bridge 25.09's DeepSeek-V3 GB200 MXFP8 cell prints pp 8 in
// parentheses beside the main cell's pp 4 and one EP, 64: 8 x 64 = 512 GPUs of 256).
std::string moe_skip_reason(const ModernRow& r) {
  const int ep = notes_int(r, "EP"), etp = expert_tp_of(r), tp = std::max(r.tp, 1);
  if (ep <= 0) return "mixture of experts without a stated expert-parallel size";
  const int dp = dp_of(r);
  const int stage_gpus = tp * std::max(r.cp, 1) * dp, grid = (etp > 0 ? etp : tp) * ep;
  if (stage_gpus % grid != 0)
    return "etp x ep = " + std::to_string(grid) + (grid > stage_gpus ? " exceeds" : " does not divide") + " the " +
           std::to_string(stage_gpus) + " GPUs of a stage (tp x cp x dp): not a Megatron-Core layout (CHECK in source)";
  return "";
}

std::string unsupported_model(const ModernRow& r) {
  const std::string& model = r.model;
  if (moe_arch_of(r) != nullptr) return "";  // expressible; its layout is checked after the others'
  for (const char* moe : {"DeepSeek", "Grok", "Mixtral", "Qwen3", "GPT-OSS", "Kimi", "Llama4"})
    if (has(model, moe)) return other_moe_reason(model);
  if (has(model, "Nemotron_3") && hybrid_preset_of(r) == nullptr)
    return "hybrid Mamba + MoE model without a preset";
  if (has(model, "Nemotron-H") && hybrid_preset_of(r) == nullptr) return "hybrid Mamba model without a preset";
  if ((has(model, "LoRA") || has(model, "SFT")) && modern_source_group(r) == "NeMo docs")
    return "fine-tuning recipe of NeMo 24.07 (LoRA rank and targets, SFT memory settings) not checked";
  if (has(model, "LoRA") && lora_rank_of(r) == 0) return "LoRA fine-tuning whose recipe (rank, targets) is not known";
  return "";
}

std::string node_skip_reason(const ModernRow& r) {
  if (!node_preset_for(r).empty()) return "";
  return "GPU " + r.gpu + " has no node preset";
}

std::string layout_skip_reason(const ModernRow& r) {
  if (r.layers <= 0 || r.hidden <= 0 || r.heads <= 0 || r.seq_len <= 0) return "model shape not stated";
  if (r.global_batch <= 0 || r.num_gpus <= 0) return "batch or GPU count not stated";
  const int tp = std::max(r.tp, 1), pp = std::max(r.pp, 1);
  if (tp * pp * cp_of(r) * dp_of(r) != r.num_gpus) return "tp x pp x cp x dp differs from the GPU count (CHECK in source)";
  if (r.layers % (pp * virtual_stages_of(r)) != 0 && !slot_split_recipe(r) && recipe_stage_layers(r).empty())
    return "uneven pipeline stages (layers not a multiple of pp x virtual stages; issue #10 item 7)";
  // Megatron-Bridge 26.02.01 prints GB300 Llama 3 70B NVFP4 as tp 1, pp 1, DDP, MBS 2, where its
  // other releases and the recipe (LLAMA3_70B_PRETRAIN_CONFIG_GB300_NVFP4_V1: pp 4, vp 5) say
  // otherwise: a 70B+ model whole on every GPU cannot have run (bf16 weights + fp32 gradients
  // alone, 6 bytes x 70e9, exceed any GPU's memory).
  // A Megatron-Bridge row whose global batch exceeds MBS x GA x dp is a misprint (when the
  // GA-derived micro-batch is smaller than the printed one, micro_batch_of takes it); the two such
  // cells (25.11: GPT-OSS-120B on 64 H100, Qwen3-235B-A22B on 256 GB300) ran a recipe that names
  // their micro-batch (recipe_micro_batch) and are scored with it; any other stays skipped.
  if (batch_exceeds_stated_ga(r) && recipe_micro_batch(r) == 0)
    return "global batch exceeds micro-batch x GA x dp (CHECK in source)";
  // (An expert-parallel row shards its experts over EP ranks, so a 100B+ mixture of experts at
  // tp 1, pp 1 is a real layout: GPT-OSS-120B's Megatron-Bridge recipes.)
  if (tp * pp == 1 && !has(r.zero_or_fsdp, "FSDP") && r.params_b >= 70 && notes_int(r, "EP") <= 1)
    return "layout misprinted: a 70B+ model unsharded on one GPU (tp 1, pp 1, no FSDP; CHECK in source)";
  return "";
}

}  // namespace

std::string modern_skip_reason(const ModernRow& published) {
  const ModernRow row = as_run(published);  // a column a later release corrects, as it ran
  if (std::string why = node_skip_reason(row); !why.empty()) return why;
  if (std::string why = unsupported_model(row); !why.empty()) return why;
  if (std::string why = layout_skip_reason(with_hybrid_shape(row)); !why.empty()) return why;
  if (has_experts(row)) {
    if (std::string why = moe_skip_reason(row); !why.empty()) return why;
  }
  if (precision_for(row).empty()) return "precision " + row.precision + " not modelled";
  return "";
}

}  // namespace clustersim::analysis
