// Modern training rows -> scenarios and measured step times (see modern_rows.h). The recipe
// assumptions for settings the tables leave out are written beside the code that applies them.
#include "analysis/modern_rows.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "analysis/csv.h"
#include "scenarios/loader.h"
#include "scenarios/toml_text.h"
#include "scenarios/scenario_error.h"

namespace clustersim::analysis {
namespace {

constexpr std::string_view kColumns[] = {"source", "model", "params_B", "layers", "hidden", "heads", "kv_heads",
                                    "ffn_hidden", "seq_len", "vocab", "global_batch", "micro_batch", "tp", "pp",
                                    "cp", "dp", "virtual_stages", "zero_or_fsdp", "recompute", "seq_parallel",
                                    "precision", "gpu", "num_gpus", "interconnect", "metric", "value", "unit",
                                    "notes"};
constexpr std::size_t kColumnCount = std::size(kColumns);

bool has(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }


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

// The MoE architectures the tables leave out (they give layers, hidden and heads only), from each
// model's Hugging Face config.json: Mixtral-8x7B / 8x22B (mistralai, num_local_experts 8,
// num_experts_per_tok 2, intermediate_size per expert), Llama-4-Maverick (meta-llama
// Llama-4-Maverick-17B-128E: num_local_experts 128, top-1, 1 shared expert, intermediate_size 8192
// per expert, intermediate_size_mlp 16384 in the dense layers, interleave_moe_layer_step 2: layers
// 1, 3, 5, ... are MoE). Rows of other MoE models stay skipped.
struct MoeArch {
  const char* model;  // matched against the row's model name
  int experts, top_k, moe_ffn, shared, first_dense, freq, dense_ffn;
};
constexpr MoeArch kMoeArchs[] = {
    {"Mixtral-8x7B", 8, 2, 14336, 0, 0, 1, 14336},
    {"Mixtral-8x22B", 8, 2, 16384, 0, 0, 1, 16384},
    {"Llama4-Maverick", 128, 1, 8192, 1, 1, 2, 16384},
};

const MoeArch* moe_arch_of(const ModernRow& r) {
  for (const MoeArch& a : kMoeArchs)
    if (has(r.model, a.model)) return &a;
  return nullptr;
}

// "EP=8", "ETP=1" in the row's notes; 0 when not stated.
int notes_int(const ModernRow& r, const std::string& key) {
  std::size_t at = 0;
  while ((at = r.notes.find(key + "=", at)) != std::string::npos) {
    if (at == 0 || !std::isalpha(static_cast<unsigned char>(r.notes[at - 1]))) {
      return std::atoi(r.notes.c_str() + at + key.size() + 1);
    }
    at += key.size();
  }
  return 0;
}

// Expert parallelism as Megatron-Core lays it out (parallelism.etp): expert tensor parallelism ETP
// (tp when unstated) times EP must divide the GPUs of a pipeline stage, tp x cp x dp (expert data
// parallel = world / (etp x ep x pp)).
std::string moe_skip_reason(const ModernRow& r) {
  const int ep = notes_int(r, "EP"), etp = notes_int(r, "ETP"), tp = std::max(r.tp, 1);
  if (ep <= 0) return "mixture of experts without a stated expert-parallel size";
  const int dp = r.dp > 0 ? r.dp : r.num_gpus / (tp * std::max(r.pp, 1) * std::max(r.cp, 1));
  const int stage_gpus = tp * std::max(r.cp, 1) * dp, grid = (etp > 0 ? etp : tp) * ep;
  if (stage_gpus % grid != 0)
    return "etp x ep = " + std::to_string(grid) + " does not divide the " + std::to_string(stage_gpus) + " GPUs of a stage";
  return "";
}

std::string unsupported_model(const ModernRow& r) {
  const std::string& model = r.model;
  if (moe_arch_of(r) != nullptr) return "";  // expressible; its layout is checked after the others'
  for (const char* moe : {"DeepSeek", "Grok", "Mixtral", "Qwen3", "GPT-OSS", "Kimi", "Llama4"})
    if (has(model, moe)) return "mixture of experts whose architecture is not in modern_rows.cpp kMoeArchs (issue #11)";
  if (has(model, "Nemotron-H") || has(model, "Nemotron_3")) return "hybrid Mamba / MoE layers not modelled";
  if (has(model, "SFT") || has(model, "LoRA"))
    return "fine-tuning recipe (SFT packed sequences, LoRA frozen base weights) not modelled";
  return "";
}

// The node a row ran on. DGX H100 and DGX B200 are catalog presets (8 GPUs on NVSwitch, 8 NDR
// 400 Gb/s NICs; the default fabric is the DGX SuperPOD's rail-optimized one, which is how these
// benchmark clusters are built: EOS for dgxc-benchmarking). A GB200 NVL72 rack is one 72-GPU
// NVLink domain behind NVLink switch trays with Grace CPUs: the gb200-nvl72 preset, whose "node" is
// the rack; a run on N GPUs takes ceil(N / 72) racks and uses the first N GPUs (gpus_per_node_of).
// GB300 (Blackwell Ultra in the NVL72 rack) and B300 have no node preset.
// Megatron-LM's FP8 table does not name its GPU; the dataset assumes H100 (its notes), and so do we.
std::string node_preset_for(const ModernRow& r) {
  if (has(r.gpu, "H100")) return "dgx-h100";
  if (r.gpu == "B200") return "dgx-b200";
  if (r.gpu.starts_with("GB200")) return "gb200-nvl72";
  return "";
}

int gpus_per_node_of(const ModernRow& r) { return node_preset_for(r) == "gb200-nvl72" ? 72 : 8; }

std::string node_skip_reason(const ModernRow& r) {
  if (!node_preset_for(r).empty()) return "";
  if (r.gpu.starts_with("GB300")) return "GB300 NVL72 rack (Blackwell Ultra) has no node preset yet";
  return "GPU " + r.gpu + " has no node preset";
}

// NVFP4 runs 4-bit GEMMs with two-level scaling: no FP4 path in the compute model. MXFP8 (and
// Megatron-Bridge's "FP8-MX") is FP8 E4M3 with one shared scale per 32 elements (OCP
// Microscaling spec v1.0); Blackwell's tensor cores apply the block scales in the MMA at the FP8
// rate (NVIDIA Blackwell architecture technical brief), so it is modelled as fp8. FP8-CS
// (current scaling) and plain FP8 (delayed scaling) are fp8. The quantisation kernels themselves
// are not modelled separately.
std::string precision_for(const ModernRow& r) {
  if (has(r.precision, "FP4")) return "";
  if (has(r.precision, "FP8")) return "fp8";
  if (has(r.precision, "BF16")) return "bf16";
  return "";
}

int cp_of(const ModernRow& r) { return std::max(r.cp, 1); }
int dp_of(const ModernRow& r) {
  if (r.dp > 0) return r.dp;
  const int per_replica = std::max(r.tp, 1) * std::max(r.pp, 1) * cp_of(r);
  return r.num_gpus / per_replica;
}
// Virtual stages only mean something with a pipeline; Megatron-LM's table lists VP 1 for rows
// without one.
int virtual_stages_of(const ModernRow& r) { return r.pp > 1 ? std::max(r.virtual_stages, 1) : 1; }

bool nemo_stack(const ModernRow& r);

// Megatron-Bridge's Llama 3.1 405B recipe (src/megatron/bridge/recipes/llama/llama31_405b.py,
// model_config) sets account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split:
// 126 layers + 2 slots = 128 split over pp x vp chunks (pp 8 vp 8: 2 per chunk; pp 16 vp 8: 1).
bool slot_split_recipe(const ModernRow& r) {
  const int chunks = std::max(r.pp, 1) * virtual_stages_of(r);
  return r.pp > 1 && has(r.model, "405B") && nemo_stack(r) && r.layers % chunks != 0 && (r.layers + 2) % chunks == 0;
}

std::string layout_skip_reason(const ModernRow& r) {
  if (r.layers <= 0 || r.hidden <= 0 || r.heads <= 0 || r.seq_len <= 0) return "model shape not stated";
  if (r.global_batch <= 0 || r.num_gpus <= 0) return "batch or GPU count not stated";
  const int tp = std::max(r.tp, 1), pp = std::max(r.pp, 1);
  if (tp * pp * cp_of(r) * dp_of(r) != r.num_gpus) return "tp x pp x cp x dp differs from the GPU count (CHECK in source)";
  if (r.layers % (pp * virtual_stages_of(r)) != 0 && !slot_split_recipe(r))
    return "uneven pipeline stages (layers not a multiple of pp x virtual stages; issue #10 item 7)";
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
  const bool llama = has(r.model, "Llama") || has(r.model, "Mixtral");
  const bool untied = llama || has(r.model, "Nemotron");
  t << "\n[model]\nlayers = " << r.layers << "\nhidden = " << r.hidden << "\nheads = " << r.heads
    << "\nkv_heads = " << (r.kv_heads > 0 ? r.kv_heads : r.heads) << "\nseq_len = " << r.seq_len
    << "\nvocab = " << vocab_for(r);
  const MoeArch* moe = moe_arch_of(r);
  if (moe != nullptr) {
    t << "\nffn_hidden = " << moe->dense_ffn << "\nexperts = " << moe->experts << "\nexperts_per_token = " << moe->top_k
      << "\nmoe_ffn_hidden = " << moe->moe_ffn << "\nshared_experts = " << moe->shared
      << "\nfirst_dense_layers = " << moe->first_dense << "\nmoe_layer_freq = " << moe->freq;
  } else if (r.ffn_hidden > 0) {
    t << "\nffn_hidden = " << r.ffn_hidden;
  }
  t << "\nmlp = \"" << (llama ? "swiglu" : "gelu") << "\"\nnorm = \"" << (llama ? "rmsnorm" : "layernorm")
    << "\"\ntied_embeddings = " << (untied ? "false" : "true") << "\nflash_attention = true\n";
  // Llama and Nemotron train without dropout (Meta's configs have none; Nemotron-4: hidden,
  // attention and ffn dropout 0.0 in dgxc-benchmarking nemotron/nemotron4-340b-synth.yaml).
  if (untied) t << "dropout = false\n";
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
bool fp8_row(const ModernRow& r) { return precision_for(r) == "fp8"; }

// The micro-batch: the table's, unless the notes state the gradient-accumulation steps (GA=k) and
// they disagree with it; then global batch / (dp x GA), which is what the run must have used
// (Megatron-Bridge's 25.09 table lists one MBS per cell while its parenthesised MXFP8 layouts run
// with their own: training_megatron_bridge.csv:538 says MBS 2 but GA=16 with GBS 128 and dp 8).
// Only Megatron-Bridge's tables list GA themselves; elsewhere (dgxc-benchmarking) the notes' GA
// counts context-parallel ranks as data-parallel ones (Llama3.1-405B, cp 2: GA=32 for GBS 256 over
// dp 4 at MBS 1), so it is not used there, nor with cp > 1.
int micro_batch_of(const ModernRow& r) {
  const int table = std::max(r.micro_batch, 1), ga = notes_int(r, "GA"), dp = dp_of(r);
  if (modern_source_group(r) != "Megatron-Bridge" || cp_of(r) > 1) return table;
  if (ga <= 0 || dp <= 0 || r.global_batch % (dp * ga) != 0) return table;
  const int derived = r.global_batch / (dp * ga);
  return derived > 0 ? derived : table;
}

void write_layout(std::ostringstream& t, const ModernRow& r) {
  const int tp = std::max(r.tp, 1), pp = std::max(r.pp, 1);
  const bool fsdp = has(r.zero_or_fsdp, "FSDP");
  t << "\n[parallelism]\ntp = " << tp << "\npp = " << pp << "\ndp = " << dp_of(r);
  if (cp_of(r) > 1) t << "\ncp = " << cp_of(r) << "\ncp_comm_type = \"p2p\"";  // Megatron's default
  if (slot_split_recipe(r))
    t << "\naccount_for_embedding_in_pipeline_split = true\naccount_for_loss_in_pipeline_split = true";
  t << "\nvirtual_stages = " << virtual_stages_of(r) << "\nsequence_parallel = " << (tp > 1 ? "true" : "false")
    << "\n" << (fsdp ? "zero = 3" : "distributed_optimizer = true") << "\n";
  if (moe_arch_of(r) != nullptr) {
    t << "ep = " << notes_int(r, "EP") << "\n";
    if (notes_int(r, "ETP") > 0) t << "etp = " << notes_int(r, "ETP") << "\n";
  }
  t << "\n[training]\nglobal_batch = " << r.global_batch << "\nmicro_batch = " << micro_batch_of(r)
    << "\nprecision = \"" << precision_for(r) << "\"\noptimizer = \"adam\"\nrecompute = \"" << (jax_stack(r) ? "full" : "none") << "\"\niterations = 1\n";
  const bool nemotron4_dgxc = has(r.model, "Nemotron-4") && modern_source_group(r) == "dgxc-benchmarking";
  if (nemotron4_dgxc || (nemo_stack(r) && fp8_row(r))) t << "grad_dtype = \"bf16\"\n";
  if (nemotron4_dgxc) t << "optimizer_dtype = \"bf16\"\n";
  t << "\n[sync]\nalgorithm = \"ring\"\noverlap = true\n";
  if (nemo_stack(r) && tp > 1) t << "tp_comm_overlap = true\n";
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

int fill_unstated_virtual_stages(std::vector<ModernRow>& rows) {
  const auto repository = [](const ModernRow& r) { return r.source.substr(0, r.source.find('@')); };
  const auto same_recipe = [&](const ModernRow& a, const ModernRow& b) {
    return repository(a) == repository(b) && a.model == b.model && a.gpu == b.gpu && a.tp == b.tp && a.pp == b.pp &&
           a.layers == b.layers;
  };
  std::vector<std::pair<std::size_t, int>> fills;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].pp <= 1 || rows[i].virtual_stages > 0) continue;
    int stated = 0;
    bool agree = true;
    for (const ModernRow& other : rows) {
      if (other.virtual_stages <= 0 || !same_recipe(rows[i], other)) continue;
      agree = agree && (stated == 0 || stated == other.virtual_stages);
      stated = other.virtual_stages;
    }
    if (stated > 0 && agree) fills.emplace_back(i, stated);
  }
  for (const auto& [i, vp] : fills) {
    rows[i].virtual_stages = vp;
    rows[i].notes += "; virtual_stages " + std::to_string(vp) + " assumed from the same recipe's other releases";
  }
  return static_cast<int>(fills.size());
}

// Megatron-Bridge's Blackwell Megatron-FSDP recipes (B200, GB200, GB300) offload the activations
// of 5-40 layers to the CPU (cpu_offloading_num_layers in scripts/performance/configs/llama/
// llama3_workload_base_configs.py, e.g. LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V1: 40 layers):
// without that the layout does not fit (70B at mbs 2, seq 8192, tp 1: 319 GiB of 186), and
// activation offloading is not modelled, so these rows are skipped rather than refused.
std::string offload_skip_reason(const ModernRow& row) {
  if (generation_of(row.gpu) == Generation::Blackwell && has(row.zero_or_fsdp, "FSDP") && nemo_stack(row))
    return "Megatron-FSDP recipe on Blackwell with activation CPU offloading (cpu_offloading_num_layers) not modelled";
  return "";
}

std::string modern_skip_reason(const ModernRow& row) {
  if (std::string why = node_skip_reason(row); !why.empty()) return why;
  if (std::string why = unsupported_model(row); !why.empty()) return why;
  if (std::string why = offload_skip_reason(row); !why.empty()) return why;
  if (std::string why = layout_skip_reason(row); !why.empty()) return why;
  if (moe_arch_of(row) != nullptr) {
    if (std::string why = moe_skip_reason(row); !why.empty()) return why;
  }
  if (precision_for(row).empty()) return "precision " + row.precision + " not modelled";
  return "";
}

std::string modern_scenario_toml(const ModernRow& r) {
  std::ostringstream t;
  t << "name = " << scenarios::quote_str(r.file + ":" + std::to_string(r.line) + " " + r.model) << "\n\n[cluster]\nnode = \""
    << node_preset_for(r) << "\"\nnodes = " << (r.num_gpus + gpus_per_node_of(r) - 1) / gpus_per_node_of(r) << "\n";
  if (r.num_gpus % gpus_per_node_of(r) != 0) t << "gpus = " << r.num_gpus << "\n";
  write_model(t, r);
  write_layout(t, r);
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
