// A layout that a published table says ran must fit: every row of the bundled training data
// (analysis/validation/data/training.csv and modern/training_*.csv) that states its layout goes
// through the same report as `clustersim memory` and must not come out as out of memory.
//
// training.csv rows become scenarios through analysis::scenario_for_row (its documented
// assumptions). Modern rows leave recompute, sequence parallelism and the optimizer unstated (see
// modern/README.md); the NeMo / Megatron-Bridge performance recipes' defaults are assumed: no
// recompute, sequence parallelism whenever tp > 1, Megatron's distributed optimizer, flash
// attention; FSDP rows shard like ZeRO-3. FP8/MXFP8/NVFP4 rows are modelled as fp8: 16-bit
// master-weight copies and activations, the FP8 GEMM inputs Transformer Engine saves at 1 B.
// Further assumptions, each from the recipe that ran the row:
//   * FP8 rows of NeMo / Megatron-Bridge / dgxc-benchmarking reduce gradients in 16 bits:
//     NeMo's performance scripts set `recipe.trainer.plugins.grad_reduce_in_fp32 = False` for
//     fp8 (NVIDIA/NeMo scripts/performance/llm/pretrain_llama3_70b.py at 07a643a8, and the other
//     pretrain_*.py there); Megatron-Bridge's performance configs likewise set
//     `cfg.ddp.grad_reduce_in_fp32 = False`. BF16 rows keep fp32 gradients (the default).
//     Megatron-LM's own rows keep fp32 (it forces accumulate_allreduce_grads_in_fp32 with bf16).
//   * Llama and Nemotron models train without dropout (Llama: none in Meta's configs;
//     Nemotron-4: hidden/attention/ffn dropout 0.0 in dgxc-benchmarking
//     nemotron/nemotron4-340b-synth.yaml at 8f5cbb37).
//   * Nemotron-4 340B (dgxc-benchmarking, that yaml): untied output layer
//     (share_embeddings_and_output_weights: false), apex distributed_fused_adam with
//     grad_sync_dtype: bf16 and dtype: bf16 (16-bit gradients and optimizer states).
// Rows that cannot be checked yet are skipped with a counted reason, printed by the test.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/csv.h"
#include "analysis/memory_report.h"
#include "analysis/training_rows.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"
#include "scenarios/scenario_error.h"

using namespace clustersim;

namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> read_rows(const std::string& path) {
  const std::vector<analysis::CsvRecord> records = analysis::read_csv_file(path);
  REQUIRE_FALSE(records.empty());
  const std::vector<std::string>& header = records.front().fields;
  std::vector<Row> rows;
  for (std::size_t k = 1; k < records.size(); ++k) {
    const std::vector<std::string>& cells = records[k].fields;
    REQUIRE(cells.size() == header.size());
    Row r;
    for (std::size_t i = 0; i < header.size(); ++i) r[header[i]] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }
int num(const Row& r, const char* key) { return r.at(key).empty() ? 0 : std::stoi(r.at(key)); }

struct Tally {
  int rows = 0, checked = 0;
  std::set<std::string> layouts;          // distinct scenario texts checked
  std::map<std::string, int> skipped;     // reason -> rows
  std::vector<std::string> out_of_memory; // one line per distinct layout refused

  void skip(const std::string& why) { ++skipped[why]; }
  // `spec` with its name line dropped identifies a layout: each distinct one is estimated once.
  void check(const std::string& label, const scenarios::ScenarioSpec& spec) {
    ++checked;
    std::string key = scenarios::show_config(spec);  // a comment line with the file, then `name = ...`
    key.erase(0, key.find("\n\n"));
    if (!layouts.insert(key).second) return;
    analysis::MemoryReportOptions opt;
    opt.advice = false;
    const analysis::MemoryReport r = analysis::memory_for_scenario(spec, opt);
    if (!r.fits) {
      char buf[160];
      std::snprintf(buf, sizeof buf, ": needs %.1f GiB of %.1f", static_cast<double>(r.required) / 1073741824.0,
                    static_cast<double>(r.capacity) / 1073741824.0);
      out_of_memory.push_back(label + buf);
      if (std::getenv("DUMP_OOM")) std::printf("%s\n", scenarios::show_config(spec).c_str());
    }
  }
  void print(const char* what) const {
    std::printf("%s: %d rows, %d checked (%zu distinct layouts), %zu out of memory\n", what, rows, checked,
                layouts.size(), out_of_memory.size());
    for (const auto& [why, n] : skipped) std::printf("  skipped %4d: %s\n", n, why.c_str());
    for (const std::string& l : out_of_memory) std::printf("  OUT OF MEMORY %s\n", l.c_str());
  }
};

// Models whose layers the memory model does not describe yet.
std::string unsupported_model(const std::string& model) {
  for (const char* moe : {"DeepSeek", "Grok", "Mixtral", "Qwen3", "GPT-OSS", "Kimi", "Llama4"}) {
    if (has(model, moe)) return "mixture of experts (issue #11)";
  }
  if (has(model, "Nemotron-H") || has(model, "Nemotron_3")) return "hybrid Mamba / MoE layers not modelled";
  if (has(model, "LoRA")) return "LoRA fine-tuning: frozen base weights have no gradients or optimizer states";
  return "";
}

std::string modern_node(const std::string& gpu, int num_gpus) {
  std::ostringstream t;
  t << "[cluster]\nnodes = " << (num_gpus + 7) / 8 << "\n";
  if (num_gpus % 8 != 0) t << "gpus = " << num_gpus << "\n";
  const char* id = has(gpu, "H100") ? "h100-sxm5-80gb" : "b200";
  t << "\n[cluster.node]\ngpu = \"" << id << "\"\ngpus = 8\nintra = \"nvswitch\"\nnic = \"ib-ndr-400\"\nnics = 8\n";
  return t.str();
}

bool is_fp8(const Row& r) { return !has(r.at("precision"), "BF16"); }

// The [training] dtypes the row's recipe sets (see the header comment).
std::string recipe_dtypes(const Row& r, const std::string& file) {
  const bool nemotron4 = has(r.at("model"), "Nemotron-4") && has(file, "dgxc");
  const bool nemo_family = !has(file, "megatron_lm");
  std::string out;
  if (nemotron4 || (nemo_family && is_fp8(r))) out += "grad_dtype = \"bf16\"\n";
  if (nemotron4) out += "optimizer_dtype = \"bf16\"\n";
  return out;
}

std::string modern_toml(const Row& r, const std::string& file) {
  const bool llama = has(r.at("model"), "Llama");
  const bool nemotron = has(r.at("model"), "Nemotron");
  const bool fsdp = has(r.at("zero_or_fsdp"), "FSDP");
  const int tp = num(r, "tp"), pp = num(r, "pp"), v = std::max(1, num(r, "virtual_stages"));
  std::ostringstream t;
  t << "name = \"" << r.at("model") << "\"\n\n" << modern_node(r.at("gpu"), num(r, "num_gpus"));
  t << "\n[model]\nlayers = " << r.at("layers") << "\nhidden = " << r.at("hidden") << "\nheads = " << r.at("heads")
    << "\nkv_heads = " << (r.at("kv_heads").empty() ? r.at("heads") : r.at("kv_heads"))
    << "\nseq_len = " << r.at("seq_len") << "\nvocab = " << r.at("vocab");
  if (!r.at("ffn_hidden").empty()) t << "\nffn_hidden = " << r.at("ffn_hidden");
  // Llama: SwiGLU, RMSNorm, untied output layer. GPT-3 and Nemotron-4 (squared-ReLU, 2 matrices)
  // are two-matrix MLPs: the GELU kind.
  t << "\nmlp = \"" << (llama ? "swiglu" : "gelu") << "\"\nnorm = \"" << (llama ? "rmsnorm" : "layernorm")
    << "\"\ntied_embeddings = " << (llama || nemotron ? "false" : "true") << "\nflash_attention = true\n";
  if (llama || nemotron) t << "dropout = false\n";
  t << "\n[parallelism]\ntp = " << tp << "\npp = " << pp << "\ndp = " << r.at("dp") << "\nvirtual_stages = " << v
    << "\nschedule = \"" << (v > 1 ? "interleaved" : "1f1b") << "\"\nsequence_parallel = " << (tp > 1 ? "true" : "false")
    << "\n" << (fsdp ? "zero = 3" : "distributed_optimizer = true") << "\n";
  t << "\n[training]\nglobal_batch = " << r.at("global_batch") << "\nmicro_batch = " << r.at("micro_batch")
    << "\nprecision = \"" << (is_fp8(r) ? "fp8" : "bf16") << "\"\nrecompute = \"none\"\n" << recipe_dtypes(r, file);
  return t.str();
}

// Why a modern row cannot be checked yet, or "" when it can.
std::string modern_skip_reason(const Row& r) {
  const std::string& gpu = r.at("gpu");
  if (!has(gpu, "H100") && gpu != "B200") return "GPU " + gpu + " not in the catalog";
  for (const char* k : {"layers", "hidden", "heads", "seq_len", "vocab", "global_batch", "micro_batch", "tp", "pp",
                        "dp", "num_gpus"}) {
    if (r.at(k).empty()) return "layout or model shape not stated";
  }
  const std::string model = unsupported_model(r.at("model"));
  if (!model.empty()) return model;
  if (num(r, "cp") > 1) return "context parallelism (issue #11)";
  const int pp = num(r, "pp"), v = std::max(1, num(r, "virtual_stages"));
  if (num(r, "layers") % (pp * v) != 0) return "layers not a multiple of pp x virtual stages (uneven stages)";
  if (r.at("ffn_hidden").empty() && has(r.at("model"), "Llama")) return "layout or model shape not stated";
  return "";
}

}  // namespace

TEST_CASE("analysis::memory_for_scenario: no published training layout is refused as out of memory") {
  const std::string dir = analysis::validation_data_dir();

  Tally a100;
  for (const analysis::TrainingRow& row : analysis::load_training_rows(dir + "/training.csv")) {
    ++a100.rows;
    std::string why;
    const std::optional<scenarios::ScenarioSpec> spec = analysis::scenario_for_row(row, &why);
    if (!spec) {
      a100.skip(why.substr(0, why.find(':')));
      continue;
    }
    a100.check("training.csv:" + std::to_string(row.line) + " " + row.model, *spec);
  }
  a100.print("training.csv");
  // DUMP_OOM=1 prints the scenario of each refused layout (show_config) to study it.
  // Known misses, listed by the print above and in docs/memory.md: the goal is none. A ratchet so
  // that no new layout is refused; lower the bound as they are fixed.
  constexpr std::size_t kKnownTrainingMisses = 0, kKnownModernMisses = 1;
  CHECK(a100.out_of_memory.size() <= kKnownTrainingMisses);

  Tally modern;
  for (const char* file : {"training_dgxc_benchmarking.csv", "training_megatron_bridge.csv", "training_nemo_docs.csv",
                           "training_megatron_lm_llama_fp8.csv"}) {
    int line = 1;
    for (const Row& r : read_rows(dir + "/modern/" + file)) {
      ++line;
      ++modern.rows;
      const std::string why = modern_skip_reason(r);
      if (!why.empty()) {
        modern.skip(why);
        continue;
      }
      const std::string label = std::string(file) + ":" + std::to_string(line) + " " + r.at("model") + " on " + r.at("gpu");
      try {
        modern.check(label, scenarios::parse_scenario(modern_toml(r, file), label));
      } catch (const scenarios::ScenarioError& e) {
        modern.skip("rejected by the scenario loader: " + e.diagnostics().front().message);
      }
    }
  }
  modern.print("modern/training_*.csv");
  CHECK(modern.checked > 100);
  CHECK(modern.out_of_memory.size() <= kKnownModernMisses);
}

TEST_CASE("analysis::memory_for_scenario: Llama 3 405B at seq 8192 on TP8 x PP16 x DP128 fits an H100 80GB") {
  // Meta's layout (tests/workloads/data/llama3-405b-tp8-pp16-h100.toml, 128 layers for 126):
  // 63.6 GiB of activations + 6.4 GiB weights + 0.4 GiB sharded grads and optimizer + runtime,
  // about 71.4 GiB required (728.5 GiB before flash attention was modelled).
  const scenarios::ScenarioSpec spec =
      scenarios::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/workloads/data/llama3-405b-tp8-pp16-h100.toml");
  analysis::MemoryReportOptions opt;
  opt.advice = false;
  const analysis::MemoryReport r = analysis::memory_for_scenario(spec, opt);
  INFO("required ", static_cast<double>(r.required) / 1073741824.0, " GiB");
  CHECK(r.fits);
  CHECK(static_cast<double>(r.required) / 1073741824.0 == doctest::Approx(71.4).epsilon(0.01));
}
