// Modern training rows -> scenarios and measured step times (see modern_rows.h). The recipe
// assumptions for settings the tables leave out are written beside the code that applies them.
#include "analysis/modern_rows.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "analysis/csv.h"
#include "analysis/modern_row_archs.h"
#include "analysis/modern_row_recipes.h"
#include "scenarios/loader.h"
#include "scenarios/toml_text.h"
#include "scenarios/scenario_error.h"
#include "workloads/model/model_presets.h"

namespace clustersim::analysis {
namespace {

using modern_detail::as_run;
using modern_detail::expert_tp_of;
using modern_detail::has;
using modern_detail::has_experts;
using modern_detail::hybrid_preset_of;
using modern_detail::moe_arch_of;
using modern_detail::MoeArch;
using modern_detail::notes_int;
using modern_detail::other_moe_reason;
using modern_detail::recipe_micro_batch;
using modern_detail::with_hybrid_shape;

constexpr std::string_view kColumns[] = {"source", "model", "params_B", "layers", "hidden", "heads", "kv_heads",
                                    "ffn_hidden", "seq_len", "vocab", "global_batch", "micro_batch", "tp", "pp",
                                    "cp", "dp", "virtual_stages", "zero_or_fsdp", "recompute", "seq_parallel",
                                    "precision", "gpu", "num_gpus", "interconnect", "metric", "value", "unit",
                                    "notes"};
constexpr std::size_t kColumnCount = std::size(kColumns);



void check_header(const std::vector<std::string>& header, const std::string& path) {
  check_csv_header(header, kColumns, path);
}

ModernRow row_of(const CsvRecord& rec, const std::string& path, const std::string& file) {
  const std::string where = path + ":" + std::to_string(rec.line);
  if (rec.fields.size() != kColumnCount)
    throw std::runtime_error(where + ": expected " + std::to_string(kColumnCount) + " fields, found " +
                             std::to_string(rec.fields.size()));
  const auto& f = rec.fields;
  ModernRow r;
  r.file = file;
  r.line = rec.line;
  r.source = f[0];
  r.model = f[1];
  r.params_b = csv_number(f[2], where, "params_B");
  int* ints[] = {&r.layers, &r.hidden, &r.heads, &r.kv_heads, &r.ffn_hidden, &r.seq_len, &r.vocab,
                 &r.global_batch, &r.micro_batch, &r.tp, &r.pp, &r.cp, &r.dp, &r.virtual_stages};
  for (std::size_t i = 0; i < std::size(ints); ++i) *ints[i] = csv_integer(f[3 + i], where, kColumns[3 + i]);
  r.zero_or_fsdp = f[17];
  r.recompute = f[18];
  r.seq_parallel = f[19];
  r.precision = f[20];
  r.gpu = f[21];
  r.num_gpus = csv_integer(f[22], where, "num_gpus");
  r.interconnect = f[23];
  r.metric = f[24];
  r.value = csv_number(f[25], where, "value");
  r.unit = f[26];
  r.notes = f[27];
  return r;
}

// --- what cannot be expressed yet ----------------------------------------------------------------

// --- mixtures of experts --------------------------------------------------------------------------
// The architectures themselves (kMoeArchs, hybrid presets) are in modern_row_archs.cpp.

int dp_of(const ModernRow& r);

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
// dgxc-benchmarking v25.02 tables ran; targets LoRA's default, every linear of the layer
// (peft/lora.py: linear_qkv, linear_proj, linear_fc1, linear_fc2 = q, k, v, o, gate, up, down
// here; Megatron's one adapter on the fused QKV / fc1 input shares the A matrix that separate
// adapters would repeat: 2 x hidden x rank FLOPs per token more here, < 0.1% of a layer);
// use_distributed_optimizer = False in both. NeMo 24.07's Llama 2 SFT and LoRA rows (NeMo docs)
// name no recipe we could check (its LoRA rank and targets; its 70B SFT layout, tp 4 pp 4 on 16
// GPUs, does not fit 80 GB without recompute or other memory settings the table leaves out); they
// stay skipped. 0 = not a LoRA row with a known recipe.
int lora_rank_of(const ModernRow& r) {
  if (!has(r.model, "LoRA") || modern_source_group(r) == "NeMo docs") return 0;
  if (has(r.model, "Llama3-8B")) return 8;
  if (has(r.model, "Llama3-70B")) return 16;
  return 0;
}

std::string unsupported_model(const ModernRow& r) {
  const std::string& model = r.model;
  if (moe_arch_of(r) != nullptr) return "";  // expressible; its layout is checked after the others'
  for (const char* moe : {"DeepSeek", "Grok", "Mixtral", "Qwen3", "GPT-OSS", "Kimi", "Llama4"})
    if (has(model, moe)) return other_moe_reason(model);
  if (has(model, "Nemotron_3") && hybrid_preset_of(r) == nullptr)
    return "hybrid Mamba + MoE model without a preset (Nemotron 3 Super, Ultra, 3.5: no published config at hand)";
  if (has(model, "Nemotron-H") && hybrid_preset_of(r) == nullptr) return "hybrid Mamba model without a preset";
  if ((has(model, "LoRA") || has(model, "SFT")) && modern_source_group(r) == "NeMo docs")
    return "fine-tuning recipe of NeMo 24.07 (LoRA rank and targets, SFT memory settings) not checked";
  if (has(model, "LoRA") && lora_rank_of(r) == 0) return "LoRA fine-tuning whose recipe (rank, targets) is not known";
  return "";
}

// The node a row ran on. DGX H100 and DGX B200 are catalog presets (8 GPUs on NVSwitch, 8 NDR
// 400 Gb/s NICs; the default fabric is the DGX SuperPOD's rail-optimized one, which is how these
// benchmark clusters are built: EOS for dgxc-benchmarking). A GB200 NVL72 rack is one 72-GPU
// NVLink domain behind NVLink switch trays with Grace CPUs: the gb200-nvl72 preset, whose "node" is
// the rack; a run on N GPUs takes ceil(N / 72) racks and uses the first N GPUs (gpus_per_node_of).
// Blackwell Ultra likewise: "DGX-B300" rows run on the dgx-b300 preset (8 GPUs, ConnectX-8 800 Gb/s
// per GPU, DGX B300 datasheet) and "DGX-GB300 NVL72" rows on gb300-nvl72 (the rack with GB300 GPUs
// and ConnectX-8 NICs), both named by the rows' interconnect column.
// Megatron-LM's FP8 table does not name its GPU; the dataset assumes H100 (its notes), and so do we.
std::string node_preset_for(const ModernRow& r) {
  if (has(r.gpu, "H100")) return "dgx-h100";
  if (r.gpu == "B200") return "dgx-b200";
  if (r.gpu.starts_with("GB200")) return "gb200-nvl72";
  if (r.gpu == "B300") return "dgx-b300";
  if (r.gpu.starts_with("GB300")) return "gb300-nvl72";
  return "";
}

// GPUs the run uses per node (per rack on NVL72). Megatron-Bridge's performance launcher
// (scripts/performance/utils/executors.py, slurm_executor: "add --segment flag to sbatch if job uses
// GB200") asks Slurm for whole segments of compute trays (4 GPUs each) inside one NVLink domain:
// all the job's trays when they are at most 18 (one rack), else the largest tray count from 18 down
// that divides the job's. So 256 GPUs = 64 trays run as 4 racks of 16 trays (64 GPUs each), never
// straddling a rack with one tensor- or expert-parallel group. NeMo's performance launcher
// (scripts/performance/executors.py, "add --segment flag to sbatch if job uses GB200 and goes beyond
// one rack") applies the same rule, so the NeMo docs rows are placed so too. dgxc-benchmarking does
// not say how its jobs were placed: they fill racks of 72 in order (UNSURE).
int gpus_per_node_of(const ModernRow& r) {
  if (!node_preset_for(r).ends_with("-nvl72")) return 8;
  const std::string source = modern_source_group(r);
  if ((source != "Megatron-Bridge" && source != "NeMo docs") || r.num_gpus % 4 != 0) return 72;
  const int trays = r.num_gpus / 4;
  if (trays <= 18) return 72;
  for (int segment = 18; segment > 1; --segment)
    if (trays % segment == 0) return 4 * segment;
  return 72;
}

std::string node_skip_reason(const ModernRow& r) {
  if (!node_preset_for(r).empty()) return "";
  return "GPU " + r.gpu + " has no node preset";
}

// NVFP4 (E2M1 with an E4M3 scale per 16 elements and a per-tensor FP32 scale) is the "nvfp4"
// precision: Megatron-Bridge's bf16_with_nvfp4_mixed (src/megatron/bridge/training/
// mixed_precision.py: fp4 "e2m1", fp4_recipe "nvfp4") runs every transformer linear in NVFP4 and
// sets no first/last layers in bf16 (only its Nemotron 3 Super variant does), which is what the
// compute model does. MXFP8 (and
// Megatron-Bridge's "FP8-MX") is FP8 E4M3 with one shared scale per 32 elements (OCP
// Microscaling spec v1.0); Blackwell's tensor cores apply the block scales in the MMA at the FP8
// rate (NVIDIA Blackwell architecture technical brief), so it is modelled as fp8. FP8-CS
// (current scaling) and plain FP8 (delayed scaling) are fp8. The quantisation kernels themselves
// are not modelled separately.
std::string precision_for(const ModernRow& r) {
  if (has(r.precision, "NVFP4")) return "nvfp4";
  if (has(r.precision, "FP4")) return "";
  if (has(r.precision, "FP8")) return "fp8";
  if (has(r.precision, "BF16")) return "bf16";
  return "";
}

int cp_of(const ModernRow& r) { return std::max(r.cp, 1); }
// dgxc-benchmarking's Grok-1 H100 tables print a DP that leaves the expert-parallel ranks out
// (modern/README.md "Read before fitting" item 4; those rows' notes say "DP may exclude EP"): tp x
// pp x cp x DP x EP is the GPU count there, and the data-parallel size is DP x EP.
bool dp_excludes_ep(const ModernRow& r) {
  const int stated = std::max(r.tp, 1) * std::max(r.pp, 1) * std::max(r.cp, 1) * r.dp;
  return r.dp > 0 && has(r.notes, "DP may exclude EP") && stated != r.num_gpus && stated * notes_int(r, "EP") == r.num_gpus;
}

int dp_of(const ModernRow& r) {
  if (r.dp > 0) return dp_excludes_ep(r) ? r.dp * notes_int(r, "EP") : r.dp;
  const int per_replica = std::max(r.tp, 1) * std::max(r.pp, 1) * cp_of(r);
  return r.num_gpus / per_replica;
}
// Virtual stages only mean something with a pipeline; Megatron-LM's table lists VP 1 for rows
// without one.
int virtual_stages_of(const ModernRow& r) { return r.pp > 1 ? std::max(r.virtual_stages, 1) : 1; }

bool nemo_stack(const ModernRow& r);

// Recipes that set account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split
// (the embedding and the loss each take one layer slot; layers + 2 slots split evenly over pp x vp
// chunks):
//   * Megatron-Bridge's Llama 3.1 405B recipe (src/megatron/bridge/recipes/llama/llama31_405b.py,
//     model_config; llama3.py llama31_405b_pretrain_config): 126 + 2 = 128 (pp 8 vp 8: 2 per
//     chunk; pp 16 vp 8: 1), and the dgxc proxies with 30 or 62 layers on pp 4 vp 8 (32, 64 slots);
//   * Megatron-Bridge's Qwen3-235B-A22B recipe (src/megatron/bridge/recipes/qwen/qwen3_moe.py,
//     qwen3_235b_a22b_pretrain_config: "Uses account_for_embedding_in_pipeline_split and
//     account_for_loss_in_pipeline_split"): 94 + 2 = 96 (pp 8 vp 4: 3 per chunk; pp 4 vp 12: 2);
//   * Megatron-LM's Llama 3.1 405B FP8 row (examples/llama/README.md, pp 8 vp 8), whose notes say
//     its configs follow the NeMo performance scripts: with vp 8 Megatron-Core can split 126
//     layers over 64 chunks only this way (first/last-stage counts must be multiples of vp: 15 is
//     not), so it is the 405B recipe's split.
// The slots only matter when they make the split even: layers % chunks != 0, (layers + 2) % chunks == 0.
bool slot_split_recipe(const ModernRow& r) {
  const int chunks = std::max(r.pp, 1) * virtual_stages_of(r);
  const bool recipe = (has(r.model, "405B") && (nemo_stack(r) || modern_source_group(r) == "Megatron-LM")) ||
                      (has(r.model, "Qwen3-235B") && modern_source_group(r) == "Megatron-Bridge");
  return r.pp > 1 && recipe && r.layers % chunks != 0 && (r.layers + 2) % chunks == 0;
}

// DeepSeek-V3 and Kimi-K2 (61 layers) lay their layers out explicitly, one count per model chunk
// in model order (parallelism.stage_layers): Megatron-Bridge's recipes map (pp, vp) to a
// pipeline_model_parallel_layout (recipes/deepseek/deepseek_v3.py layout_map and
// recipes/kimi/kimi_k2.py _get_kimi_k2_pipeline_layout: 4 chunks "E t*16 | t*16 | t*16 | t*13 L",
// 8 chunks "E t*8 | (t*8 |) x 6 | t*5 L", 16 chunks "E t*4 | (t*4 |) x 14 | t L"), and the
// performance configs (scripts/performance/configs/deepseek/deepseek_workload_base_configs.py)
// set pp 2 vp 8 to "Et*4|(t*4|)*14tmL" (the 16-chunk one) and pp 8 vp 4 to "Et|(tt|)*30mL"
// (32 chunks: 1, 30 x 2, 0). The recipes give the same counts to every (pp, vp) with the same
// number of chunks, so the count of chunks picks the layout; the MTP block (m) is not a decoder
// layer: it is [model] mtp_layers (mtp_layers_of), which Megatron-Core places on the last stage.
// dgxc-benchmarking's DeepSeek-V3 rows (v25.05, v25.05.04) run NeMo 2's performance script instead
// (deepseek_v3/pretraining/setup.sh pins NeMo 7a8f1cc, llmb-nemo-r2.3.0; its
// scripts/performance/llm/pretrain_deepseek_v3.py sets num_layers_in_first_pipeline_stage =
// 64 / pp - 1 and num_layers_in_last_pipeline_stage = 64 / pp - 2, Megatron-Core splits the rest
// evenly): pp 4 -> 15, 16, 16, 14; pp 8 -> 7, 8 x 6, 6; pp 16 -> 3, 4 x 14, 2 (VP 1 in every launch).
std::vector<int> recipe_stage_layers(const ModernRow& r) {
  if ((!has(r.model, "DeepSeek-V3") && !has(r.model, "Kimi-K2")) || r.layers != 61 || r.pp < 2) return {};
  auto layout = [](int first, int middle, int middle_chunks, int last) {
    std::vector<int> v{first};
    v.insert(v.end(), middle_chunks, middle);
    v.push_back(last);
    return v;
  };
  if (modern_source_group(r) == "dgxc-benchmarking") {
    if (virtual_stages_of(r) != 1 || 64 % r.pp != 0) return {};
    const int middle = 64 / r.pp;
    return layout(middle - 1, middle, r.pp - 2, middle - 2);
  }
  switch (r.pp * virtual_stages_of(r)) {
    case 4: return layout(16, 16, 2, 13);
    case 8: return layout(8, 8, 6, 5);
    case 16: return layout(4, 4, 14, 1);
    case 32: return layout(1, 2, 30, 0);
    default: return {};
  }
}

// Multi-token prediction (DeepSeek-V3 paper, Liu et al. 2024, Sec. 2.2; workloads/model/mtp.h: one
// more MoE layer, a 2h -> h projection and a second loss through the shared output head, all on
// the last pipeline stage). Megatron-Bridge's DeepSeek-V3 recipe sets mtp_num_layers = 1
// (deepseek_v3.py; its layouts end in "mL"), so its rows train with MTP unless labelled "w/o
// MTP"; dgxc-benchmarking's v25.05 rows run NeMo 2's recipe, whose pretrain_recipe defaults to
// use_mtp = True (nemo/collections/llm/recipes/deepseek_v3.py: mtp_num_layers = 1, read at NeMo
// 00f65dd; dgxc's setup.sh pins NeMo 7a8f1cc, llmb-nemo-r2.3.0, whose performance script calls
// pretrain_recipe() without use_mtp; the recipe at that commit was not at hand). Kimi-K2's recipe
// has no MTP (kimi_k2.py: no mtp_num_layers, layouts end in "L" alone). 0 = no MTP module.
int mtp_layers_of(const ModernRow& r) {
  return has(r.model, "DeepSeek-V3") && !has(r.model, "w/o MTP") ? 1 : 0;
}

// A Megatron-Bridge cell whose global batch exceeds its printed MBS x GA x dp (cp 1).
bool batch_exceeds_stated_ga(const ModernRow& r) {
  const int ga = notes_int(r, "GA");
  return modern_source_group(r) == "Megatron-Bridge" && cp_of(r) == 1 && ga > 0 &&
         r.global_batch > std::max(r.micro_batch, 1) * ga * dp_of(r);
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

// --- the scenario ------------------------------------------------------------------------------

// GPT-3 rows leave the vocabulary empty: GPT-2 BPE (50257) padded by Megatron/NeMo to a multiple
// of 128 x tp (make-vocab-size-divisible-by 128), as in training_rows.cpp.
int vocab_for(const ModernRow& r) {
  if (r.vocab > 0) return r.vocab;
  const int multiple = 128 * std::max(r.tp, 1);
  return (50257 + multiple - 1) / multiple * multiple;
}

// Model families: Llama (Meta's configs) and Mixtral (Mistral's, the same layer): SwiGLU, RMSNorm, untied
// output layer, rotary positions.
// Nemotron-4 (Parmar et al. 2024, "Nemotron-4 15B Technical Report" §2): squared-ReLU MLP with two
// matrices (the "gelu" kind: same shapes and FLOPs), LayerNorm, untied input and output
// embeddings; its rotary positions are not expressible, so the GELU kind's learned position table
// adds seq x hidden parameters (< 0.1%). GPT-3 (NeMo): GELU, LayerNorm, tied embeddings.
void write_model(std::ostringstream& t, const ModernRow& r) {
  if (const char* hybrid = hybrid_preset_of(r)) {  // the preset's shape; the row's sequence length
    t << "\n[model]\npreset = \"" << hybrid << "\"\nseq_len = " << r.seq_len << "\n";
    return;
  }
  const MoeArch* moe = moe_arch_of(r);
  const bool llama = has(r.model, "Llama") || has(r.model, "Mixtral") || moe != nullptr;
  const bool untied = (llama || has(r.model, "Nemotron")) && (moe == nullptr || !moe->tied);
  t << "\n[model]\nlayers = " << r.layers << "\nhidden = " << r.hidden << "\nheads = " << r.heads
    << "\nkv_heads = " << (r.kv_heads > 0 ? r.kv_heads : r.heads) << "\nseq_len = " << r.seq_len
    << "\nvocab = " << vocab_for(r);
  if (moe != nullptr) {
    t << "\nffn_hidden = " << moe->dense_ffn << "\nexperts = " << moe->experts << "\nexperts_per_token = " << moe->top_k
      << "\nmoe_ffn_hidden = " << moe->moe_ffn << "\nshared_experts = " << moe->shared
      << "\nfirst_dense_layers = " << moe->first_dense << "\nmoe_layer_freq = " << moe->freq;
    if (moe->head_dim > 0) t << "\nhead_dim = " << moe->head_dim;
    t << moe->attention;
    if (const int mtp = mtp_layers_of(r); mtp > 0) t << "\nmtp_layers = " << mtp;
  } else if (r.ffn_hidden > 0) {
    t << "\nffn_hidden = " << r.ffn_hidden;
  }
  t << "\nmlp = \"" << (llama ? "swiglu" : "gelu") << "\"\nnorm = \"" << (llama ? "rmsnorm" : "layernorm")
    << "\"\ntied_embeddings = " << (untied ? "false" : "true") << "\nflash_attention = true\n";
  // Llama and Nemotron train without dropout (Meta's configs have none; Nemotron-4: hidden,
  // attention and ffn dropout 0.0 in dgxc-benchmarking nemotron/nemotron4-340b-synth.yaml); nor do
  // the MoE architectures above (no dropout in their configs or in grok-1's model.py).
  if (untied || moe != nullptr) t << "dropout = false\n";
}

// Recipe defaults (NeMo scripts/performance, Megatron-Bridge scripts/performance; the tables do not
// state them, modern/README.md §3):
//   * sequence parallelism whenever tp > 1 (the recipes set sequence_parallel = tp > 1);
//   * Megatron's distributed optimizer (use_distributed_optimizer = True in every recipe), or,
//     for FSDP rows (MaxText, PaxML, Megatron-FSDP), full sharding = zero 3. Hybrid sharding
//     ("FSDP=128 (+DP for remaining GPUs)") is modelled as sharding over every replica, which
//     gathers over more ranks than the run did;
//   * no activation recompute in the Megatron-based stacks (NeMo, Megatron-Bridge, Megatron-LM:
//     the dense-model pre-training recipes leave it off); the JAX stacks recompute everything by
//     default: MaxText's configs/base.yml has remat_policy 'full', Praxis' stacked transformer
//     checkpoint_policy SAVE_NOTHING (PaxML), so their rows are "full";
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
//     Hopper and Blackwell); not in Megatron-LM's example scripts or the JAX stacks.
bool jax_stack(const ModernRow& r) { return has(r.model, "MaxText") || has(r.model, "PaxML"); }
bool nemo_stack(const ModernRow& r) {
  const std::string g = modern_source_group(r);
  return !jax_stack(r) && (g == "dgxc-benchmarking" || g == "Megatron-Bridge" || g == "NeMo docs");
}
// NVFP4 rows count as low-precision rows here too (16-bit gradient reduction, as the FP8 ones;
// the Megatron-Bridge NVFP4 configs were not checked for it: UNSURE).
bool fp8_row(const ModernRow& r) { return precision_for(r) == "fp8" || precision_for(r) == "nvfp4"; }

// The micro-batch: the table's, unless the notes state the gradient-accumulation steps (GA=k) and
// they disagree with it; then global batch / (dp x GA), which is what the run must have used
// (Megatron-Bridge's 25.09 table lists one MBS per cell while its parenthesised MXFP8 layouts run
// with their own: training_megatron_bridge.csv:538 says MBS 2 but GA=16 with GBS 128 and dp 8).
// Only Megatron-Bridge's tables list GA themselves; elsewhere (dgxc-benchmarking) the notes' GA
// counts context-parallel ranks as data-parallel ones (Llama3.1-405B, cp 2: GA=32 for GBS 256 over
// dp 4 at MBS 1), so it is not used there, nor with cp > 1.
int micro_batch_of(const ModernRow& r) {
  const int table = std::max(r.micro_batch, 1), ga = notes_int(r, "GA"), dp = dp_of(r);
  if (batch_exceeds_stated_ga(r) && recipe_micro_batch(r) > 0) return recipe_micro_batch(r);
  if (modern_source_group(r) != "Megatron-Bridge" || cp_of(r) > 1) return table;
  if (ga <= 0 || dp <= 0 || r.global_batch % (dp * ga) != 0) return table;
  const int derived = r.global_batch / (dp * ga);
  return derived > 0 ? derived : table;
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
//     deepseek_workload_base_configs.py, mirror lkk12014402/Megatron-Bridge): ["mla_up_proj"] on
//     GB200, B200 and B300 (every precision), ["mla_up_proj", "mlp"] on H100 (the dense "mlp"
//     recompute of its 3 dense layers is not modelled). GB300 had two presets: pp 4 x vp 4, EP 64
//     with ["moe_act"] (commits c3e43e6a 2025-12-03 and 67b8806 2026-01-14), replaced by
//     DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_V1/_V2 = pp 2 x vp 8, pp_layout "Et*4|(t*4|)*14tmL", EP 32,
//     micro-batch 2, ["mla_up_proj"] in every commit from cc31be26 (2026-02-03, "Dsv3 Recipe
//     Update") to 5acef930 (2026-04-18) and at the mirror's head (793bb600, 2026-04-24); the
//     VR200 preset with the same layout at micro-batch 1 also sets ["mla_up_proj"]. So a GB300 row
//     on pp 2 x vp 8 (the 26.02 - 26.08 tables) takes ["mla_up_proj"] and any other GB300 row
//     (25.11: pp 2 x vp 4, w/o MTP; no preset read has that layout) ["moe_act"]. The 26.06 and
//     26.08 presets are newer than the mirror (UNSURE for those four rows).
//   * dgxc-benchmarking v25.05 and v25.05.04 (deepseek_v3/pretraining/launch.sh, commits 68eaf7e and
//     1f6d9f4): --recompute_modules mla_up_proj on H100; core_attn on GB200, which with flash
//     attention frees nothing the model keeps (the kernel's saved Q, K, V, O are the checkpoint's
//     inputs and the out-projection's input), so it is not written.
// Kimi-K2's are not checked.
std::string deepseek_recompute_modules(const ModernRow& r) {
  if (!has(r.model, "DeepSeek-V3")) return "";
  if (modern_source_group(r) == "dgxc-benchmarking") return has(r.gpu, "H100") ? "[\"mla_up_proj\"]" : "";
  if (modern_source_group(r) != "Megatron-Bridge") return "";
  if (r.gpu.starts_with("GB300")) return r.pp == 2 && virtual_stages_of(r) == 8 ? "[\"mla_up_proj\"]" : "[\"moe_act\"]";
  if (r.gpu.starts_with("GB200") || r.gpu == "B200" || r.gpu == "B300" || has(r.gpu, "H100")) return "[\"mla_up_proj\"]";
  return "";
}

void write_layout(std::ostringstream& t, const ModernRow& r) {
  const int tp = std::max(r.tp, 1), pp = std::max(r.pp, 1);
  const bool fsdp = has(r.zero_or_fsdp, "FSDP");
  t << "\n[parallelism]\ntp = " << tp << "\npp = " << pp << "\ndp = " << dp_of(r);
  if (cp_of(r) > 1) t << "\ncp = " << cp_of(r) << "\ncp_comm_type = \"p2p\"";  // Megatron's default
  if (slot_split_recipe(r))
    t << "\naccount_for_embedding_in_pipeline_split = true\naccount_for_loss_in_pipeline_split = true";
  if (const std::vector<int> chunks = recipe_stage_layers(r); !chunks.empty()) {
    t << "\nstage_layers = [";
    for (std::size_t i = 0; i < chunks.size(); ++i) t << (i ? ", " : "") << chunks[i];
    t << "]";
  }
  t << "\nvirtual_stages = " << virtual_stages_of(r) << "\nsequence_parallel = " << (tp > 1 ? "true" : "false")
    << "\n" << (fsdp ? "zero = 3" : lora_rank_of(r) > 0 ? "distributed_optimizer = false" : "distributed_optimizer = true") << "\n";
  if (has_experts(r)) {
    t << "ep = " << notes_int(r, "EP") << "\n";
    if (expert_tp_of(r) > 0) t << "etp = " << expert_tp_of(r) << "\n";
  }
  t << "\n[training]\nglobal_batch = " << r.global_batch << "\nmicro_batch = " << micro_batch_of(r)
    << "\nprecision = \"" << precision_for(r) << "\"\noptimizer = \"adam\"\nrecompute = \"" << (jax_stack(r) ? "full" : "none") << "\"\niterations = 1\n";
  const bool nemotron4_dgxc = has(r.model, "Nemotron-4") && modern_source_group(r) == "dgxc-benchmarking";
  if (nemotron4_dgxc || (nemo_stack(r) && fp8_row(r)) || gpt_oss_bridge(r)) t << "grad_dtype = \"bf16\"\n";
  if (gpt_oss_recompute_modules(r)) t << "recompute_modules = [\"layernorm\", \"moe_act\"]\n";
  if (const std::string modules = deepseek_recompute_modules(r); !modules.empty())
    t << "recompute_modules = " << modules << "\n";
  if (nemotron4_dgxc) t << "optimizer_dtype = \"bf16\"\n";
  if (const int off = activation_offload_layers_of(r); off > 0) t << "activation_offload_layers = " << off << "\n";
  t << "\n[sync]\nalgorithm = \"ring\"\noverlap = true\n";
  if (nemo_stack(r) && tp > 1) t << "tp_comm_overlap = true\n";
  if (lora_rank_of(r) > 0)
    t << "\n[finetune]\nmethod = \"lora\"\nlora_rank = " << lora_rank_of(r)
      << "\nlora_targets = [\"q\", \"k\", \"v\", \"o\", \"gate\", \"up\", \"down\"]\n";
}


}  // namespace

std::string_view to_string(Generation g) {
  switch (g) {
    case Generation::Volta: return "Volta";
    case Generation::Ampere: return "Ampere";
    case Generation::Hopper: return "Hopper";
    case Generation::Blackwell: return "Blackwell";
    case Generation::Other: return "other";
  }
  return "other";
}

Generation generation_of(std::string_view gpu) {
  if (has(gpu, "V100") || has(gpu, "v100")) return Generation::Volta;
  if (has(gpu, "A100") || has(gpu, "a100")) return Generation::Ampere;
  if (has(gpu, "H100") || has(gpu, "H200") || has(gpu, "h100") || has(gpu, "h200")) return Generation::Hopper;
  if (has(gpu, "B200") || has(gpu, "B300") || has(gpu, "b200")) return Generation::Blackwell;
  return Generation::Other;
}

std::vector<ModernRow> load_modern_rows(const std::string& path) {
  const std::vector<CsvRecord> records = read_csv_file(path);
  if (records.empty()) throw std::runtime_error(path + ": empty file");
  check_header(records.front().fields, path);
  const std::string file = path.substr(path.find_last_of('/') + 1);
  std::vector<ModernRow> rows;
  for (std::size_t i = 1; i < records.size(); ++i) rows.push_back(row_of(records[i], path, file));
  return rows;
}

std::vector<ModernRow> load_modern_set(const std::string& dir) {
  std::vector<ModernRow> all;
  for (const char* file : kModernTrainingFiles) {
    std::vector<ModernRow> rows = load_modern_rows(dir + "/" + file);
    all.insert(all.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
  }
  return all;
}

std::string modern_source_group(const ModernRow& row) {
  if (has(row.source, "dgxc-benchmarking")) return "dgxc-benchmarking";
  if (has(row.source, "Megatron-Bridge")) return "Megatron-Bridge";
  if (has(row.source, "NVIDIA/NeMo") || has(row.file, "nemo_docs")) return "NeMo docs";
  if (has(row.source, "Megatron-LM")) return "Megatron-LM";
  return "other";
}

bool is_step_metric(const ModernRow& row) {
  return row.metric == "step_time" || row.metric == "throughput_total" || row.metric == "throughput_per_gpu";
}

std::optional<double> measured_step_time_s(const ModernRow& row, std::string* why_not) {
  const auto refuse = [&](std::string why) -> std::optional<double> {
    if (why_not) *why_not = std::move(why);
    return std::nullopt;
  };
  if (!is_step_metric(row)) return refuse("metric " + row.metric + " is not scored (FLOP conventions differ, README §1)");
  if (row.value <= 0) return refuse("no measured value");
  if (row.metric == "step_time") return row.value;
  if (row.global_batch <= 0 || row.seq_len <= 0) return refuse("batch or sequence length not stated");
  const double tokens = static_cast<double>(row.global_batch) * row.seq_len;
  if (row.metric == "throughput_total") return tokens / row.value;
  if (row.num_gpus <= 0) return refuse("GPU count not stated");
  return tokens / (row.value * row.num_gpus);
}

namespace {

// The one value `field` takes in the rows of `rows` that `same` accepts and that state a virtual
// stage count; 0 when none does or when they disagree.
template <class Same, class Field>
int agreed_value(const std::vector<ModernRow>& rows, Same same, Field field) {
  int stated = 0;
  bool agree = true;
  for (const ModernRow& other : rows) {
    if (other.virtual_stages <= 0 || !same(other)) continue;
    agree = agree && (stated == 0 || stated == field(other));
    stated = field(other);
  }
  return agree ? stated : 0;
}

}  // namespace

int fill_unstated_virtual_stages(std::vector<ModernRow>& rows) {
  const auto repository = [](const ModernRow& r) { return r.source.substr(0, r.source.find('@')); };
  const auto same_recipe = [&](const ModernRow& a, const ModernRow& b) {
    return repository(a) == repository(b) && a.model == b.model && a.gpu == b.gpu && a.tp == b.tp && a.pp == b.pp &&
           a.layers == b.layers;
  };
  struct Fill { std::size_t row; int vp, micro_batch; };
  std::vector<Fill> fills;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ModernRow& r = rows[i];
    if (r.pp <= 1 || r.virtual_stages > 0) continue;
    const int vp = agreed_value(rows, [&](const ModernRow& o) { return same_recipe(r, o); },
                                [](const ModernRow& o) { return o.virtual_stages; });
    if (vp <= 0) continue;
    // The cell that drops VP may also carry another layout's micro-batch: take the one the same
    // recipe states at the same precision and global batch in the other releases when they agree
    // on it. A release with another global batch ran another configuration, so its micro-batch is
    // no evidence: Megatron-Bridge's GPT-OSS-120B H100 cells state MBS 1 at GBS 1280 (26.02-26.04.01)
    // where 25.11 states MBS 4 at GBS 512, and taking 4 made the layout need 93 GiB of 80.
    const auto same_precision = [&](const ModernRow& o) {
      return same_recipe(r, o) && o.precision == r.precision && o.cp == r.cp && o.global_batch == r.global_batch;
    };
    const int mbs = agreed_value(rows, same_precision, [](const ModernRow& o) { return o.micro_batch; });
    fills.push_back({i, vp, mbs > 0 && mbs != r.micro_batch ? mbs : 0});
  }
  for (const Fill& f : fills) {
    ModernRow& r = rows[f.row];
    r.virtual_stages = f.vp;
    r.notes += "; virtual_stages " + std::to_string(f.vp) + " assumed from the same recipe's other releases";
    if (f.micro_batch > 0) {
      r.notes += "; micro_batch " + std::to_string(f.micro_batch) + " (table: " + std::to_string(r.micro_batch) +
                 ") from the same recipe's other releases at this precision";
      r.micro_batch = f.micro_batch;
    }
  }
  return static_cast<int>(fills.size());
}

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

std::string modern_scenario_toml(const ModernRow& published) {
  const ModernRow r = as_run(published);
  std::ostringstream t;
  const int per_node = gpus_per_node_of(r);
  const bool segment = node_preset_for(r).ends_with("-nvl72") && per_node != 72;
  t << "name = " << scenarios::quote_str(r.file + ":" + std::to_string(r.line) + " " + r.model) << "\n\n[cluster]\n";
  if (!segment) t << "node = \"" << node_preset_for(r) << "\"\n";
  t << "nodes = " << (r.num_gpus + per_node - 1) / per_node << "\n";
  if (r.num_gpus % per_node != 0) t << "gpus = " << r.num_gpus << "\n";
  if (segment)  // the rack's trays the job holds: 2 GPUs per Grace CPU, one NIC per GPU (as the preset)
    t << "\n[cluster.node]\npreset = \"" << node_preset_for(r) << "\"\ngpus = " << per_node
      << "\nsockets = " << per_node / 2 << "\nnics = " << per_node << "\n";
  write_model(t, r);
  write_layout(t, with_hybrid_shape(r));
  return t.str();
}

std::optional<scenarios::ScenarioSpec> scenario_for_modern_row(const ModernRow& row, std::string* why_not) {
  if (std::string why = modern_skip_reason(row); !why.empty()) {
    if (why_not) *why_not = why;
    return std::nullopt;
  }
  try {
    return scenarios::parse_scenario(modern_scenario_toml(row), row.file + ":" + std::to_string(row.line));
  } catch (const scenarios::ScenarioError& e) {
    if (why_not) *why_not = "scenario rejected: " + e.diagnostics().front().message;
    return std::nullopt;
  }
}

}  // namespace clustersim::analysis
