#include "analysis/training_rows.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "analysis/csv.h"
#include "scenarios/loader.h"
#include "scenarios/toml_text.h"

#ifndef CLUSTERSIM_DATA_DIR
#error "CLUSTERSIM_DATA_DIR must be defined for the analysis library"
#endif

namespace clustersim::analysis {
namespace {

constexpr std::string_view kColumns[] = {"source",  "model", "params_B", "layers", "hidden",  "heads",
                                    "seq_len", "vocab", "global_batch", "micro_batch", "tp", "pp",
                                    "dp", "virtual_stages", "recompute", "seq_parallel", "gpu",
                                    "num_gpus", "interconnect", "precision", "metric", "value", "unit",
                                    "notes"};
constexpr std::size_t kColumnCount = std::size(kColumns);


Trust parse_trust(const std::string& notes) {
  if (notes.find("[trust:A/B]") != std::string::npos) return Trust::AB;
  if (notes.find("[trust:A]") != std::string::npos) return Trust::A;
  if (notes.find("[trust:B]") != std::string::npos) return Trust::B;
  if (notes.find("[trust:C]") != std::string::npos) return Trust::C;
  return Trust::Unknown;
}

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

// --- which publication a row comes from ---------------------------------------------------------

enum class Family : std::uint8_t { Sc21, Megatron2020, MtNlg, NeMo, LlmFoundry, Unknown };

Family family_of(const TrainingRow& r) {
  if (contains(r.source, "llm-foundry")) return Family::LlmFoundry;
  if (contains(r.source, "NeMo")) return Family::NeMo;
  if (contains(r.source, "MT-NLG")) return Family::MtNlg;
  if (contains(r.source, "README 2020")) return Family::Megatron2020;
  if (contains(r.source, "Megatron-LM") || contains(r.source, "SC'21")) return Family::Sc21;
  return Family::Unknown;
}

// --- the node a row ran on ----------------------------------------------------------------------

struct NodeChoice {
  std::string toml;  // `node = "<preset>"` or a [cluster.node] table (written after [cluster])
  bool table = false;
  int gpus_per_node = 8;
};

std::string explicit_node(const std::string& gpu, int gpus, const std::string& nic, int nics) {
  return "[cluster.node]\ngpu = \"" + gpu + "\"\ngpus = " + std::to_string(gpus) +
         "\nintra = \"nvswitch\"\nnic = \"" + nic + "\"\nnics = " + std::to_string(nics) + "\n";
}

// GPU names in the CSV -> catalog nodes. Assumptions:
//   * Selene and every "A100 80GB" Megatron/NeMo row: DGX A100 80GB (Selene was built from DGX A100
//     80GB nodes; SC'21 states 80 GB). MT-NLG's "llm-analysis says SXM 40GB; Selene blog says 80GB":
//     80 GB, as the run was on Selene.
//   * "A100 (DGX-A100)" in the 2020 README tables: DGX A100 40 GB (the 80 GB part shipped in Nov
//     2020, after those tables); compute is identical, only capacity differs.
//   * llm-foundry a100_40gb / a100_80gb: 8 GPUs on NVSwitch with "1600 Gbps node-node RoCE" =
//     8 x RoCE 200 Gb/s NICs (the interconnect column), not the DGX preset's InfiniBand.
//   * llm-foundry h100_80gb (holdout/llm_foundry_h100.csv): the README's H100 sections state no
//     interconnect. ASSUMPTION: an HGX H100 node, 8 x H100 SXM5 80GB on NVSwitch with 8 x 400 Gb/s
//     InfiniBand NDR (ConnectX-7), the configuration NVIDIA's HGX H100 reference and the clouds of
//     2023 shipped; only the 16- to 512-GPU rows cross nodes.
//   * V100 (DGX-2): 16 x V100 SXM3 32 GB on NVSwitch, 8 x EDR 100 Gb/s. The DGX-2H part
//     (v100-sxm3-32gb-h, 450 W): ASSUMPTION that the README 2020 tables ran on ADLR's DGX-2H
//     SuperPOD, as the 2019 paper (Sec. 5: "32 DGX-2H servers") and ADLR's Megatron v1.0 post
//     (nv-adlr.github.io/MegatronLMV1, 2020-05-15: the same four GPT-2 configs at batch 8, 1288 /
//     1242 / 1357 / 1508 ms "in a DGX2-H server", the README's 1121 / 1093 / 1238 / 1407 ms a later
//     release) did; the README says only "DGX-2" (350 W: v100-sxm3-32gb).
std::optional<NodeChoice> node_for(const TrainingRow& r, Family fam) {
  const std::string& g = r.gpu;
  if (g == "V100 (DGX-2)") return NodeChoice{explicit_node("v100-sxm3-32gb-h", 16, "ib-edr-100", 8), true, 16};
  if (g == "a100_40gb") return NodeChoice{explicit_node("a100-sxm4-40gb", 8, "roce-200", 8), true, 8};
  if (g == "a100_80gb") return NodeChoice{explicit_node("a100-sxm4-80gb", 8, "roce-200", 8), true, 8};
  if (g == "h100_80gb") return NodeChoice{explicit_node("h100-sxm5-80gb", 8, "ib-ndr-400", 8), true, 8};
  if (fam == Family::Megatron2020 && contains(g, "A100"))
    return NodeChoice{explicit_node("a100-sxm4-40gb", 8, "ib-hdr-200", 8), true, 8};
  if (contains(g, "A100")) return NodeChoice{"node = \"dgx-a100-80gb\"\n", false, 8};
  return std::nullopt;
}

// --- fields a source leaves empty ---------------------------------------------------------------

// Recompute when the row leaves it empty. SC'21 (Sec. 5.1) trains every Table 1/2 configuration
// with activation recomputation, and its "achieved TFLOP/s" counts it (Eq. 3); the 2020 README runs
// used --checkpoint-activations (the README's example GPT scripts); MT-NLG used gradient
// checkpointing (Smith et al. 2022 Sec. 2). NeMo's "none (granularity full, num_layers 0)" is none.
std::string recompute_for(const TrainingRow& r, Family fam) {
  if (r.recompute.empty())
    return fam == Family::NeMo || fam == Family::LlmFoundry ? "none" : "full";
  if (contains(r.recompute, "full")) return contains(r.recompute, "num_layers 0") ? "none" : "full";
  if (contains(r.recompute, "selective")) return "selective";
  return "none";
}

// Micro-batch when the row leaves it empty: SC'21 README/Table 1 and MT-NLG: 1 (the SC'21
// pipeline experiments and MT-NLG's run use micro-batch 1; the README does not state it); the
// 2020 README (tensor parallelism only, no pipeline): the whole per-replica batch in one step;
// NeMo's converged 5B run: 1 (its 9 sequences per replica rule out the 5B config's 2).
// llm-foundry (Composer) also runs micro-batches that do not divide the per-replica batch
// (48 = 11+11+11+11+4); the scenario needs equal micro-batches, so the largest divisor of the
// per-replica batch not above the published micro-batch is used.
int micro_batch_for(const TrainingRow& r, Family fam, int dp) {
  const int per_replica = dp > 0 && r.global_batch % dp == 0 ? r.global_batch / dp : 0;
  int mb = r.micro_batch;
  if (mb <= 0) mb = fam == Family::Megatron2020 && per_replica > 0 ? per_replica : 1;
  if (per_replica > 0)
    while (mb > 1 && per_replica % mb != 0) --mb;
  return mb;
}

// NeMo rows leave the vocabulary empty: GPT-2 BPE (50257) padded by Megatron to a multiple of
// 128 x tp (make-vocab-size-divisible-by 128).
int vocab_for(const TrainingRow& r) {
  if (r.vocab > 0) return r.vocab;
  const int multiple = 128 * std::max(r.tp, 1);
  return (50257 + multiple - 1) / multiple * multiple;
}


// Composer's amp_fp8 runs the te.Linear layers under Transformer Engine's fp8_autocast with its
// default DelayedScaling recipe (the scenario's "fp8"); attention and the rest stay bf16.
std::string precision_for(const TrainingRow& r) {
  if (contains(r.precision, "fp8")) return "fp8";
  return contains(r.precision, "fp16") ? "fp16" : "bf16";
}

// The attention kernel of an llm-foundry benchmark run; none has Hopper's wgmma / TMA path, which
// arrived with FlashAttention-3 (July 2024). scripts/train/benchmarking/submit_benchmarks.py
// defaults to `--attn_impl triton` at every commit that added a table (1ef7b4d2 .. b2a43a14 for the
// A100 sections and the "H100 80GB BF16" / "FP8" ones, 5e85bd62), and those commits' setup.py
// installs triton-pre-mlir (sm90 branch) for it: the 2022 Triton FlashAttention of
// llmfoundry/models/layers/flash_attn_triton.py. The "Large Scale, >= 128 GPUs" section
// (5e85bd62, 2024-01-06) was run by its sweep.py, which passes `--attn_impl flash` (flash-attn
// 2.3.2, the `gpu-flash2` extras: FlashAttention-2) for the 1B, 3B, 7B and 70B models and
// `--attn_impl triton` for 13B and 30B.
const char* foundry_attention_kernel(const TrainingRow& r) {
  const bool large_scale_sweep = contains(r.source, "Large Scale");
  const bool triton_in_sweep = contains(r.model, "13b") || contains(r.model, "30b");
  return large_scale_sweep && !triton_in_sweep ? "fa2" : "flash-attn-triton";
}

std::string scenario_toml(const TrainingRow& r, Family fam, const NodeChoice& node) {
  const int dp = r.dp > 0 ? r.dp : r.num_gpus / std::max(r.tp * r.pp, 1);
  const int nodes = (r.num_gpus + node.gpus_per_node - 1) / node.gpus_per_node;
  std::ostringstream t;
  t << "name = " << scenarios::quote_str(r.file + ":" + std::to_string(r.line) + " " + r.model) << "\n\n[cluster]\n";
  if (!node.table) t << node.toml;
  t << "nodes = " << nodes << "\n";
  if (r.num_gpus % node.gpus_per_node != 0) t << "gpus = " << r.num_gpus << "\n";
  if (node.table) t << "\n" << node.toml;
  // llm-foundry MPT: GELU MLP with expansion 4, LayerNorm, tied embeddings, learned positions (the
  // published NumParams grow by seq_len x d_model with the sequence length), FlashAttention.
  // Megatron 2020-2021, MT-NLG and NeMo 2022 ran without FlashAttention (it appeared in 2022 and
  // reached Megatron/NeMo in 2023); the s x s scores are materialised.
  const bool flash = fam == Family::LlmFoundry;
  t << "\n[model]\nlayers = " << r.layers << "\nhidden = " << r.hidden << "\nheads = " << r.heads
    << "\nseq_len = " << r.seq_len << "\nvocab = " << vocab_for(r) << "\nmlp = \"gelu\"\nnorm = \"layernorm\""
    << "\ntied_embeddings = true\nflash_attention = " << (flash ? "true" : "false") << "\n";
  if (fam == Family::LlmFoundry) t << "attention_kernel = \"" << foundry_attention_kernel(r) << "\"\n";
  // MPT trains without dropout: MPTConfig's attn_pdrop, resid_pdrop and emb_pdrop default to 0.0
  // (llmfoundry/models/mpt/configuration_mpt.py at 1ef7b4d2, b2a43a14 and 5e85bd62) and the
  // benchmark yamls (scripts/train/yamls/pretrain/mpt-*.yaml) set none of them; PyTorch's dropout
  // at p = 0 returns its input without launching a kernel (ATen Dropout.cpp, _dropout_impl).
  // Megatron's GPT rows keep the GELU default (0.1 hidden and attention dropout).
  if (fam == Family::LlmFoundry) t << "dropout = false\n";
  // Interleaving (virtual_stages) is empty in every row: 1F1B is assumed.
  t << "\n[parallelism]\ntp = " << std::max(r.tp, 1) << "\npp = " << std::max(r.pp, 1) << "\ndp = " << dp
    << "\nvirtual_stages = " << std::max(r.virtual_stages, 1)
    << "\nsequence_parallel = " << (r.seq_parallel == "yes" ? "true" : "false");
  // ZeRO-3 rows of SC'21 Table 2 (DeepSpeed) and llm-foundry's FSDP FULL_SHARD shard everything.
  const bool zero3 = fam == Family::LlmFoundry || contains(r.model, "ZeRO-3");
  // NeMo's launcher configs of those runs (conf/training/gpt3/*.yaml at 3579cdb3) train with
  // optim.name = distributed_fused_adam: apex's DistributedFusedAdam, which "implements the ZeRO-2
  // algorithm" (its docstring): optimizer states and gradients sharded over the replicas.
  // FSDP's SHARD_GRAD_OP (llm-foundry's 1B and 3B rows at >= 128 GPUs) gathers the parameters once
  // for the forward and keeps them through the backward, and reduce-scatters the gradients: ZeRO-2's
  // traffic (one parameter all-gather, one gradient reduce-scatter a step).
  const bool shard_grad_op = fam == Family::LlmFoundry && contains(r.notes, "sharding=SHARD_GRAD_OP");
  const int zero = shard_grad_op ? 2 : zero3 ? 3 : fam == Family::NeMo ? 2 : 0;
  t << "\nzero = " << zero << "\n";
  // SC'21 Table 2's ZeRO-3 is DeepSpeed's: it gathers per submodule within
  // stage3_max_live_parameters (zero3_gather = "module"), keeps fp16 gradient partitions (the ZeRO
  // paper's 2 + 2 + K) and reduces through reduce_bucket_size = 5e8 elements (DeepSpeed config
  // docs' default; 1000 MB at 2 B). llm-foundry's FSDP gathers whole blocks (the default).
  const bool deepspeed = zero3 && fam == Family::Sc21;
  if (deepspeed) t << "zero3_gather = \"module\"\n";
  const std::string recompute = recompute_for(r, fam);
  t << "\n[training]\nglobal_batch = " << r.global_batch << "\nmicro_batch = " << micro_batch_for(r, fam, dp)
    << "\nprecision = \"" << precision_for(r) << "\"\noptimizer = \"adam\"\nrecompute = \"" << recompute
    << "\"\niterations = 1\n";
  // The H100 sections ran torch 2.1.0 (sweep.sh IMAGE mosaicml/pytorch:2.1.0_cu121 at b2a43a14;
  // setup.py torch>=2.1,<2.1.1 at 5e85bd62) with the yamls' activation_checkpointing_reentrant:
  // false, i.e. torch.utils.checkpoint's non-reentrant variant, which since PyTorch 2.1 stops the
  // rerun once the last tensor the backward saved is packed again (early stop on by default,
  // pytorch/pytorch PR #96866, 2023-03): the MLP output projection and the last residual add are
  // not rerun, as recompute_dce prunes them. The A100 sections ran torch 1.13.1 (sweep.sh IMAGE
  // at 1ef7b4d2), whose non-reentrant checkpoint reruns the whole block.
  if (fam == Family::LlmFoundry && contains(r.gpu, "h100") && recompute == "full")
    t << "recompute_dce = true\n";
  if (deepspeed) t << "grad_dtype = \"" << precision_for(r) << "\"\n";
  // Composer's FSDP mixed precision (composer/trainer/mosaic_fsdp_utils.py get_mixed_precision,
  // v0.16.4 and v0.17.2): "DEFAULT" reduces in fp32 (the default grad_dtype), "PURE" in the
  // autocast precision, so its gradients are reduce-scattered in 16 bits.
  if (fam == Family::LlmFoundry && contains(r.notes, "mp_mode=PURE")) t << "grad_dtype = \"" << precision_for(r) << "\"\n";
  // llm-foundry's pretrain yamls (scripts/train/yamls/pretrain/mpt-*.yaml at b2a43a147 and
  // 5e85bd62d) train with `decoupled_adamw`, weight_decay 0.0: Composer's DecoupledAdamW, whose
  // step (composer/optim/decoupled_weight_decay.py, v0.16.4 and v0.17.2, the versions those
  // setup.py pins allow) loops over the parameters issuing one eager kernel per op.
  if (fam == Family::LlmFoundry) t << "optimizer_kernels = \"per-parameter\"\nweight_decay = false\n";
  if (contains(r.metric, "300B")) t << "tokens = 300e9\n";
  t << "\n[sync]\nalgorithm = \"ring\"\noverlap = true\n";
  // Megatron-LM's asynchronous input-gradient all-reduce (tensor parallelism without sequence
  // parallelism) arrived in 16c90445e7 and became the default in 3f65246911 (both 2021-09-02),
  // after the 2020 tables, the January and April 2021 README images and SC'21's runs: their
  // backward all-reduce blocks. MT-NLG's Megatron-DeepSpeed fork of 2021 is not at hand: kept
  // blocking as well.
  if (fam == Family::Sc21 || fam == Family::Megatron2020 || fam == Family::MtNlg) t << "tp_async_dgrad_allreduce = false\n";
  // FSDP collectives run per FSDP unit, and llm-foundry wraps each MPTBlock as one (its
  // fsdp_wrap_fn): under SHARD_GRAD_OP one reduce-scatter of a block's gradients in the backward
  // and one all-gather of its parameters in the forward, prefetched (forward_prefetch, the
  // benchmark sweep's setting). As ZeRO-2: buckets of one block's parameters (12 h^2 weights, two
  // bias-free LayerNorms of h), the parameter gather behind the forward.
  if (shard_grad_op) {
    const double block_params = 12.0 * r.hidden * static_cast<double>(r.hidden) + 2.0 * r.hidden;
    t << "bucket_params = " << static_cast<long long>(block_params) << "\noverlap_param_gather = true\n";
  }
  // DeepSpeed of April 2021 (v0.3.13-v0.3.16): per-parameter collectives, each gather behind a
  // torch.cuda.synchronize (workloads/training/deepspeed_zero3_2021.h).
  if (deepspeed) t << "bucket_mb = 1000\nzero3_impl = \"deepspeed-2021\"\n";
  // llm-foundry's FULL_SHARD runs are PyTorch FSDP1 (torch 2.0-2.1 by the setup.py pins of
  // b2a43a147 and 5e85bd62d; torch 1.13 for the older A100 sections, the same FlatParameter) with
  // Composer's use_orig_params = True default (composer/trainer/dist_strategy.py, v0.16.4 and
  // v0.17.2): its gradient copy-out and mixed-precision casts (workloads/training/torch_fsdp1.h).
  if (fam == Family::LlmFoundry && zero == 3) t << "zero3_impl = \"torch-fsdp1\"\n";
  return t.str();
}

void set_reason(std::string* why_not, std::string reason) {
  if (why_not) *why_not = std::move(reason);
}

double hardware_tflops_per_gpu(const TrainingRow& r, const PredictedMetrics& m) {
  const double flops = sc21_hardware_flops(r.global_batch, r.seq_len, r.layers, r.hidden, vocab_for(r));
  return flops / (m.iteration_time_s * m.gpus) / 1e12;
}

// llm-foundry benchmarking README: flops_per_seq = 2 N s, attn_flops_per_seq = 4 l h s^2;
// MFU = 3 (flops + attn) seq/s / (gpus peak); HFU uses 4 (one more forward) when activations are
// checkpointed, else equals MFU. N = the row's NumParams (params_B).
double foundry_utilisation(const TrainingRow& r, const PredictedMetrics& m, bool hardware) {
  const double s = r.seq_len;
  const double per_seq = 2.0 * r.params_b * 1e9 * s + 4.0 * r.layers * static_cast<double>(r.hidden) * s * s;
  const bool checkpointed = recompute_for(r, Family::LlmFoundry) == "full";
  const double passes = hardware && checkpointed ? 4.0 : 3.0;
  const double seq_per_s = m.tokens_per_iteration / s / m.iteration_time_s;
  return 100.0 * passes * per_seq * seq_per_s / (m.gpus * m.datasheet_peak_flops);
}

}  // namespace

std::string_view to_string(Trust t) {
  switch (t) {
    case Trust::A: return "A";
    case Trust::AB: return "A/B";
    case Trust::B: return "B";
    case Trust::C: return "C";
    case Trust::Unknown: return "?";
  }
  return "?";
}

std::string validation_data_dir() { return CLUSTERSIM_DATA_DIR; }

std::vector<TrainingRow> load_training_rows(const std::string& path, const std::string& file) {
  const std::vector<CsvRecord> records = read_csv_file(path);
  if (records.empty()) throw std::runtime_error(path + ": empty file");
  const auto& header = records.front().fields;
  check_csv_header(header, kColumns, path);
  std::vector<TrainingRow> rows;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const CsvRecord& rec = records[i];
    const std::string where = path + ":" + std::to_string(rec.line);
    if (rec.fields.size() != kColumnCount)
      throw std::runtime_error(where + ": expected " + std::to_string(kColumnCount) + " fields, found " +
                               std::to_string(rec.fields.size()));
    const auto& f = rec.fields;
    TrainingRow r;
    r.file = file;
    r.line = rec.line;
    r.source = f[0];
    r.model = f[1];
    r.params_b = csv_number(f[2], where, "params_B");
    r.layers = csv_integer(f[3], where, "layers");
    r.hidden = csv_integer(f[4], where, "hidden");
    r.heads = csv_integer(f[5], where, "heads");
    r.seq_len = csv_integer(f[6], where, "seq_len");
    r.vocab = csv_integer(f[7], where, "vocab");
    r.global_batch = csv_integer(f[8], where, "global_batch");
    r.micro_batch = csv_integer(f[9], where, "micro_batch");
    r.tp = csv_integer(f[10], where, "tp");
    r.pp = csv_integer(f[11], where, "pp");
    r.dp = csv_integer(f[12], where, "dp");
    r.virtual_stages = csv_integer(f[13], where, "virtual_stages");
    r.recompute = f[14];
    r.seq_parallel = f[15];
    r.gpu = f[16];
    r.num_gpus = csv_integer(f[17], where, "num_gpus");
    r.interconnect = f[18];
    r.precision = f[19];
    r.metric = f[20];
    r.value = csv_number(f[21], where, "value");
    r.unit = f[22];
    r.notes = f[23];
    r.trust = parse_trust(r.notes);
    rows.push_back(std::move(r));
  }
  return rows;
}

double sc21_hardware_flops(double batch, double seq, double layers, double hidden, double vocab) {
  return 96.0 * batch * seq * layers * hidden * hidden *
         (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden));
}

std::optional<scenarios::ScenarioSpec> scenario_for_row(const TrainingRow& row, std::string* why_not) {
  const std::optional<std::string> toml = scenario_toml_for_row(row, why_not);
  if (!toml) return std::nullopt;
  try {
    return scenarios::parse_scenario(*toml, row.file + ":" + std::to_string(row.line));
  } catch (const scenarios::ScenarioError& e) {
    set_reason(why_not, std::string("scenario rejected: ") + e.what());
    return std::nullopt;
  }
}

std::optional<std::string> scenario_toml_for_row(const TrainingRow& row, std::string* why_not) {
  const Family fam = family_of(row);
  if (fam == Family::Unknown) {
    set_reason(why_not, "unknown source '" + row.source.substr(0, 60) + "'");
    return std::nullopt;
  }
  if (row.metric == "weak_scaling_efficiency") {
    set_reason(why_not, "weak_scaling_efficiency compares several runs, not one iteration");
    return std::nullopt;
  }
  const std::optional<NodeChoice> node = node_for(row, fam);
  if (!node) {
    set_reason(why_not, "GPU '" + row.gpu + "' has no catalog entry");
    return std::nullopt;
  }
  if (row.layers <= 0 || row.hidden <= 0 || row.heads <= 0 || row.seq_len <= 0 || row.global_batch <= 0 ||
      row.num_gpus <= 0) {
    set_reason(why_not, "the row lacks the model shape, batch or GPU count");
    return std::nullopt;
  }
  return scenario_toml(row, fam, *node);
}

std::optional<double> predicted_value(const TrainingRow& row, const PredictedMetrics& m) {
  if (m.iteration_time_s <= 0 || m.gpus <= 0) return std::nullopt;
  const std::string& metric = row.metric;
  if (metric == "iteration_time") return row.unit == "ms" ? m.iteration_time_s * 1e3 : m.iteration_time_s;
  if (metric == "tokens_per_sec") return m.tokens_per_iteration / m.iteration_time_s;
  if (metric == "tokens_per_sec_per_gpu") return m.tokens_per_iteration / m.iteration_time_s / m.gpus;
  if (metric == "mfu") return foundry_utilisation(row, m, false);
  if (metric == "hfu") return foundry_utilisation(row, m, true);
  if (metric == "achieved_tflops_per_gpu") return hardware_tflops_per_gpu(row, m);
  if (metric == "pct_of_theoretical_peak") return 100.0 * hardware_tflops_per_gpu(row, m) / 312.0;
  if (metric == "aggregate_pflops") return hardware_tflops_per_gpu(row, m) * m.gpus / 1e3;
  if (metric == "training_time_300B_tokens") {
    const double iterations = 300e9 / m.tokens_per_iteration;
    return iterations * m.iteration_time_s / 86400.0;  // days
  }
  return std::nullopt;  // weak_scaling_efficiency and anything unknown
}

}  // namespace clustersim::analysis
