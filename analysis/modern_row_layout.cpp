// How a modern row's run was laid out (see modern_row_layout.h): the node and rack segment it ran
// on, its parallel sizes, its pipeline's layer split and its micro-batch, each rule beside the
// launcher or recipe it comes from.
#include "analysis/modern_row_layout.h"

#include <algorithm>

#include "analysis/modern_row_archs.h"
#include "analysis/modern_row_defaults.h"
#include "analysis/modern_row_recipes.h"

namespace clustersim::analysis::modern_detail {

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
// one rack") applies the same rule, so the NeMo docs rows are placed so too. So are
// dgxc-benchmarking's: its GB200 rows (release v25.05, 68eaf7e) are launched by each recipe's
// launch.sh (deepseek_v3/pretraining, grok1, llama3.1, llama4, nemotron) as NeMo's
// `scripts.performance.llm.pretrain_*` with `--gpus_per_node 4`, from the NeMo checkout setup.sh
// pins (NEMO_COMMIT 7a8f1cc7, nemotron b4148d21), whose scripts/performance/utils.py slurm_executor
// holds the segment rule (added in NeMo PR #12791, 96578928a7).
int gpus_per_node_of(const ModernRow& r) {
  if (!node_preset_for(r).ends_with("-nvl72")) return 8;
  const std::string source = modern_source_group(r);
  const bool segments = source == "Megatron-Bridge" || source == "NeMo docs" || source == "dgxc-benchmarking";
  if (!segments || r.num_gpus % 4 != 0) return 72;
  const int trays = r.num_gpus / 4;
  if (trays <= 18) return 72;
  for (int segment = 18; segment > 1; --segment)
    if (trays % segment == 0) return 4 * segment;
  return 72;
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

// A Megatron-Bridge cell whose global batch exceeds its printed MBS x GA x dp (cp 1).
bool batch_exceeds_stated_ga(const ModernRow& r) {
  const int ga = notes_int(r, "GA");
  return modern_source_group(r) == "Megatron-Bridge" && cp_of(r) == 1 && ga > 0 &&
         r.global_batch > std::max(r.micro_batch, 1) * ga * dp_of(r);
}

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

}  // namespace clustersim::analysis::modern_detail
