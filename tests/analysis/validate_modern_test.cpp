// The modern training validation (analysis/modern_rows.h, analysis/validate_modern.h): a published
// row becomes the layout it states, throughput becomes seconds per step, rows the simulator cannot
// express are refused with their reason, the per-generation table is computed from its runs, and
// the constants fit improves the rows it was fitted on. Small fixtures only: the whole modern set
// is scored by `clustersim validate --training`, not here.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/modern_rows.h"
#include "analysis/validate_modern.h"

using namespace clustersim;
using namespace clustersim::analysis;

namespace {

const ModernRow& row_at(const std::vector<ModernRow>& rows, const std::string& file, int line) {
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const ModernRow& r) { return r.file == file && r.line == line; });
  REQUIRE(it != rows.end());
  return *it;
}

const std::vector<ModernRow>& modern_set() {
  static const std::vector<ModernRow> rows = load_modern_set(validation_data_dir() + "/modern");
  return rows;
}

// A dense Llama 3 8B run on one DGX H100 (Megatron-Bridge 25.09 layout), with the given value.
ModernRow llama8b(const std::string& gpu, const std::string& metric, double value) {
  ModernRow r;
  r.file = "fixture.csv";
  r.line = 2;
  r.source = "NVIDIA-NeMo/Megatron-Bridge@fixture";
  r.model = "Llama3-8B";
  r.layers = 32, r.hidden = 4096, r.heads = 32, r.kv_heads = 8, r.ffn_hidden = 14336, r.seq_len = 8192;
  r.vocab = 128256, r.global_batch = 128, r.micro_batch = 1, r.tp = 1, r.pp = 1, r.cp = 1, r.dp = 8;
  r.precision = "FP8", r.gpu = gpu, r.num_gpus = 8, r.metric = metric, r.value = value;
  return r;
}

}  // namespace

TEST_CASE("analysis::load_modern_set: every modern file is read, with its rows' file and line") {
  const auto& rows = modern_set();
  CHECK(rows.size() == 1001 + 586 + 77 + 6);
  const ModernRow& r = row_at(rows, "training_nemo_docs.csv", 4);
  CHECK(r.model == "Llama2-13B");
  CHECK(r.num_gpus == 16);
  CHECK(r.value == 8715);
  CHECK(modern_source_group(r) == "NeMo docs");
  CHECK(generation_of(r.gpu) == Generation::Hopper);
  CHECK(generation_of("B200") == Generation::Blackwell);
  CHECK(generation_of("a100_80gb") == Generation::Ampere);
}

TEST_CASE("analysis::scenario_for_modern_row: NeMo 24.07's Llama 2 13B row becomes its stated layout") {
  std::string why;
  const auto spec = scenario_for_modern_row(row_at(modern_set(), "training_nemo_docs.csv", 4), &why);
  REQUIRE_MESSAGE(spec.has_value(), why);
  CHECK(spec->cluster.node.gpu == "h100-sxm5-80gb");
  CHECK(spec->cluster.used_gpus() == 16);
  CHECK(spec->parallel.tp == 1);
  CHECK(spec->parallel.pp == 4);
  CHECK(spec->parallel.dp == 4);
  CHECK(spec->parallel.virtual_stages == 10);
  CHECK(spec->parallel.schedule == workloads::Schedule::Interleaved);
  CHECK_FALSE(spec->parallel.sequence_parallel);  // tp = 1
  CHECK(spec->parallel.distributed_optimizer);
  CHECK(spec->parallel.zero == 0);
  CHECK(spec->model.heads == 40);
  CHECK(spec->model.kv_heads == 40);
  CHECK(spec->model.ffn_hidden == 13824);
  CHECK(spec->model.mlp == workloads::MlpKind::SwiGlu);
  CHECK_FALSE(spec->model.tied_embeddings);
  CHECK(spec->training.precision == topology::Precision::Fp8);
  CHECK(spec->training.global_batch == 128);
  CHECK(spec->training.recompute == workloads::Recompute::None);
}

TEST_CASE("analysis::scenario_for_modern_row: GPT-3 175B pads the unstated vocabulary and turns on sequence parallelism") {
  std::string why;
  const ModernRow& row = row_at(modern_set(), "training_dgxc_benchmarking.csv", 194);
  REQUIRE(row.model == "GPT-3 175B");
  const auto spec = scenario_for_modern_row(row, &why);
  REQUIRE_MESSAGE(spec.has_value(), why);
  CHECK(spec->model.vocab == 50688);  // 50257 up to a multiple of 128 x tp 4
  CHECK(spec->parallel.sequence_parallel);
  CHECK(spec->parallel.tp * spec->parallel.pp * spec->parallel.dp == row.num_gpus);
  CHECK(spec->model.tied_embeddings);
}

TEST_CASE("analysis::scenario_for_modern_row: JAX FSDP rows shard fully and recompute, as their frameworks default") {
  std::string why;
  const ModernRow& row = row_at(modern_set(), "training_dgxc_benchmarking.csv", 158);
  REQUIRE(row.model == "Llama2-70B (MaxText)");
  const auto spec = scenario_for_modern_row(row, &why);
  REQUIRE_MESSAGE(spec.has_value(), why);
  CHECK(spec->parallel.zero == 3);
  CHECK(spec->parallel.dp == 64);  // empty in the row: GPUs / (tp x pp)
  CHECK(spec->training.recompute == workloads::Recompute::Full);
}

TEST_CASE("analysis::measured_step_time_s: step time as published, throughput converted with the row's batch") {
  // NeMo 24.07 Llama 2 7B: 16,934 tokens/s/GPU on 8 GPUs at 128 x 4096 tokens per step.
  const ModernRow& per_gpu = row_at(modern_set(), "training_nemo_docs.csv", 2);
  REQUIRE(per_gpu.metric == "throughput_per_gpu");
  CHECK(*measured_step_time_s(per_gpu) == doctest::Approx(128.0 * 4096 / (16934.0 * 8)));
  ModernRow total = llama8b("H100", "throughput_total", 100000);
  CHECK(*measured_step_time_s(total) == doctest::Approx(128.0 * 8192 / 100000));
  ModernRow step = llama8b("H100", "step_time", 9.5);
  CHECK(*measured_step_time_s(step) == 9.5);
  std::string why;
  CHECK_FALSE(measured_step_time_s(llama8b("H100", "mfu", 50), &why).has_value());
  CHECK(why.find("not scored") != std::string::npos);
}

TEST_CASE("analysis::modern_skip_reason: what cannot be expressed yet is refused with its reason") {
  CHECK(modern_skip_reason(llama8b("H100", "step_time", 1)).empty());
  CHECK(modern_skip_reason(llama8b("B200", "step_time", 1)).empty());
  CHECK(modern_skip_reason(llama8b("GB200", "step_time", 1)).empty());  // the gb200-nvl72 rack preset
  CHECK(modern_skip_reason(llama8b("MI300X", "step_time", 1)) == "GPU MI300X has no node preset");
  {
    // Blackwell Ultra: DGX B300 rows on the dgx-b300 preset, GB300 rows on one gb300-nvl72 rack.
    const auto b300 = scenario_for_modern_row(llama8b("B300", "step_time", 1), nullptr);
    REQUIRE(b300.has_value());
    CHECK(b300->cluster.node.id == "dgx-b300");
    CHECK(b300->cluster.nodes == 1);
    const auto gb300 = scenario_for_modern_row(llama8b("GB300", "step_time", 1), nullptr);
    REQUIRE(gb300.has_value());
    CHECK(gb300->cluster.node.id == "gb300-nvl72");
    CHECK(gb300->cluster.used_gpus() == 8);
    ModernRow big = llama8b("GB300", "step_time", 1);
    big.num_gpus = 256, big.dp = 256, big.global_batch = 256;
    const auto racks = scenario_for_modern_row(big, nullptr);
    REQUIRE(racks.has_value());
    CHECK(racks->cluster.nodes == 4);  // ceil(256 / 72)
    CHECK(racks->cluster.used_gpus() == 256);
  }
  {
    // 8 GB200 GPUs: one rack, 8 of its 72 GPUs used.
    const auto gb = scenario_for_modern_row(llama8b("GB200", "step_time", 1), nullptr);
    REQUIRE(gb.has_value());
    CHECK(gb->cluster.node.id == "gb200-nvl72");
    CHECK(gb->cluster.nodes == 1);
    CHECK(gb->cluster.used_gpus() == 8);
    // Megatron-FSDP on Blackwell in a NeMo-based recipe is expressed since activation offloading
    // is modelled ([training] activation_offload_layers; the recipes' counts: the test below).
    ModernRow fsdp = llama8b("GB200", "step_time", 1);
    fsdp.zero_or_fsdp = "FSDP=8";
    CHECK(modern_skip_reason(fsdp).empty());
    fsdp.gpu = "H100";
    CHECK(modern_skip_reason(fsdp).empty());
    // The notes' gradient-accumulation steps decide the micro-batch when the table disagrees.
    ModernRow ga = llama8b("H100", "step_time", 1);
    ga.micro_batch = 2, ga.notes = "EP=1; GA=16";  // 128 / (8 x 16) = 1
    CHECK(scenario_for_modern_row(ga, nullptr)->training.micro_batch == 1);
    ga.notes = "GA=8";  // 128 / (8 x 8) = 2: agrees
    CHECK(scenario_for_modern_row(ga, nullptr)->training.micro_batch == 2);
    ga.notes = "GA=16", ga.source = "NVIDIA/dgxc-benchmarking@fixture";  // not a Megatron-Bridge table
    CHECK(scenario_for_modern_row(ga, nullptr)->training.micro_batch == 2);
  }
  ModernRow r = llama8b("H100", "step_time", 1);
  r.cp = 2, r.dp = 4;
  CHECK(modern_skip_reason(r).empty());  // context parallelism is modelled: 1 x 1 x 2 x 4 = 8 GPUs
  std::string why;
  const auto cp = scenario_for_modern_row(r, &why);
  REQUIRE_MESSAGE(cp.has_value(), why);
  CHECK(cp->parallel.cp == 2);
  CHECK(cp->parallel.dp == 4);
  r.dp = 8;  // 1 x 1 x 2 x 8 != 8
  CHECK(modern_skip_reason(r).find("differs from the GPU count") != std::string::npos);
  r = llama8b("B200", "step_time", 1);
  r.precision = "NVFP4";
  CHECK(modern_skip_reason(r).empty());  // the nvfp4 precision on Blackwell (modern_layout_rows_test.cpp)
  r.precision = "MXFP8";
  CHECK(modern_skip_reason(r).empty());  // runs as fp8 (documented in modern_rows.cpp)
  r = llama8b("H100", "step_time", 1);
  r.model = "DeepSeek-V3 671B (w/o MTP)";  // the recipes' MTP is on otherwise (modern_deepseek_layout_test.cpp)
  CHECK(modern_skip_reason(r).find("without a stated expert-parallel size") != std::string::npos);
  r.notes = "EP=8";  // DeepSeek-V3's published architecture: MLA and 256 experts over the row's shape
  REQUIRE(scenario_for_modern_row(r, nullptr).has_value());
  CHECK(scenario_for_modern_row(r, nullptr)->model.kv_lora_rank == 512);
  CHECK(scenario_for_modern_row(r, nullptr)->model.experts == 256);
  r.model = "DeepSeek-V3 671B (w/ MTP)";  // the multi-token-prediction module (model/mtp.h)
  CHECK(modern_skip_reason(r).empty());
  REQUIRE(scenario_for_modern_row(r, nullptr).has_value());
  CHECK(scenario_for_modern_row(r, nullptr)->model.mtp_layers == 1);
  r.model = "GPT-OSS-120B";  // sliding windows on every other layer, attention sinks, head_dim 64
  // On H100 and B200 Megatron-Bridge's GPT-OSS presets reduce gradients in bf16 and recompute the
  // norms and the experts' activation (recompute_modules); GB200 in fp8 (MXFP8) does not recompute.
  REQUIRE(scenario_for_modern_row(r, nullptr).has_value());  // on H100
  CHECK(scenario_for_modern_row(r, nullptr)->training.recompute_modules ==
        (workloads::kRecomputeLayernorm | workloads::kRecomputeMoeAct));
  r.gpu = "B200";
  REQUIRE(scenario_for_modern_row(r, nullptr).has_value());
  CHECK(scenario_for_modern_row(r, nullptr)->training.grad_dtype == workloads::StateDtype::Bf16);
  CHECK(scenario_for_modern_row(r, nullptr)->training.recompute_modules ==
        (workloads::kRecomputeLayernorm | workloads::kRecomputeMoeAct));
  r.gpu = "GB200";
  REQUIRE(scenario_for_modern_row(r, nullptr).has_value());
  CHECK(scenario_for_modern_row(r, nullptr)->model.sliding_window == 128);
  CHECK(scenario_for_modern_row(r, nullptr)->model.full_attention_every == 2);
  CHECK(scenario_for_modern_row(r, nullptr)->model.attention_head_dim == 64);
  CHECK(scenario_for_modern_row(r, nullptr)->training.recompute_modules == 0u);
  // A mixture of experts whose architecture is known runs with the notes' EP when it divides dp and
  // the expert tensor parallelism is tp's.
  r = llama8b("B200", "step_time", 1);
  r.model = "Mixtral-8x7B";
  CHECK(modern_skip_reason(r).find("without a stated expert-parallel size") != std::string::npos);
  r.notes = "EP=8; GA=16";  // 1 x 16 x dp 8 = the global batch 128
  CHECK(modern_skip_reason(r).empty());
  REQUIRE(scenario_for_modern_row(r, nullptr).has_value());
  CHECK(scenario_for_modern_row(r, nullptr)->parallel.ep == 8);
  CHECK(scenario_for_modern_row(r, nullptr)->model.experts == 8);
  r.notes = "EP=4, ETP=2";  // Megatron-Core's expert grid: etp x ep = 8 divides tp x cp x dp = 8
  CHECK(modern_skip_reason(r).empty());
  CHECK(scenario_for_modern_row(r, nullptr)->parallel.etp == 2);
  r.notes = "EP=16";
  CHECK(modern_skip_reason(r).find("etp x ep = 16 exceeds the 8 GPUs of a stage") != std::string::npos);
  r = llama8b("H100", "step_time", 1);
  r.layers = 126, r.pp = 8, r.dp = 1, r.virtual_stages = 8;
  CHECK(modern_skip_reason(r).find("uneven pipeline stages") != std::string::npos);
  r = llama8b("H100", "step_time", 1);
  r.dp = 2;  // 1 x 1 x 1 x 2 != 8
  CHECK(modern_skip_reason(r).find("differs from the GPU count") != std::string::npos);
}

TEST_CASE("analysis::fill_unstated_virtual_stages: an unstated VP comes from the same recipe's other releases") {
  ModernRow stated = llama8b("H100", "step_time", 1);
  stated.source = "NVIDIA/dgxc-benchmarking@aaa:x (release v25.03)";
  stated.layers = 96, stated.pp = 8, stated.dp = 1, stated.virtual_stages = 12;
  ModernRow unstated = stated;
  unstated.source = "NVIDIA/dgxc-benchmarking@bbb:x (release v25.04)";
  unstated.virtual_stages = 0;
  ModernRow other_tp = unstated;
  other_tp.tp = 2;
  std::vector<ModernRow> rows = {stated, unstated, other_tp};
  CHECK(fill_unstated_virtual_stages(rows) == 1);
  CHECK(rows[1].virtual_stages == 12);
  CHECK(rows[1].notes.find("assumed") != std::string::npos);
  CHECK(rows[2].virtual_stages == 0);  // no row of its recipe states one
  CHECK(rows[1].micro_batch == 1);      // the releases agree with the table's micro-batch: kept
}

TEST_CASE("analysis::fill_unstated_virtual_stages: a VP-less cell's micro-batch follows the same recipe at its precision") {
  ModernRow stated = llama8b("GB300", "throughput_per_gpu", 1);
  stated.source = "NVIDIA-NeMo/Megatron-Bridge@aaa:x (26.04)";
  stated.layers = 80, stated.pp = 4, stated.dp = 2, stated.virtual_stages = 5, stated.precision = "MXFP8";
  ModernRow unstated = stated;
  unstated.source = "NVIDIA-NeMo/Megatron-Bridge@aaa:x (26.02.01)";
  unstated.virtual_stages = 0, unstated.micro_batch = 2;
  ModernRow other_precision = unstated;
  other_precision.precision = "NVFP4";
  std::vector<ModernRow> rows = {stated, unstated, other_precision};
  CHECK(fill_unstated_virtual_stages(rows) == 2);
  CHECK(rows[1].virtual_stages == 5);
  CHECK(rows[1].micro_batch == 1);
  CHECK(rows[1].notes.find("micro_batch 1 (table: 2)") != std::string::npos);
  CHECK(rows[2].virtual_stages == 5);
  CHECK(rows[2].micro_batch == 2);  // no release states this precision's micro-batch
}

TEST_CASE("analysis::fill_unstated_virtual_stages: a release with another global batch lends no micro-batch") {
  // Megatron-Bridge's GPT-OSS-120B H100 cells: 25.11 states VP 1, MBS 4 at GBS 512; 26.04 drops VP
  // and states MBS 1 at GBS 1280, another configuration, whose micro-batch stays the table's.
  ModernRow stated = llama8b("H100", "throughput_per_gpu", 1);
  stated.source = "NVIDIA-NeMo/Megatron-Bridge@aaa:x (25.11)";
  stated.layers = 36, stated.pp = 4, stated.dp = 2, stated.virtual_stages = 1;
  stated.global_batch = 512, stated.micro_batch = 4;
  ModernRow unstated = stated;
  unstated.source = "NVIDIA-NeMo/Megatron-Bridge@aaa:x (26.04)";
  unstated.virtual_stages = 0, unstated.global_batch = 1280, unstated.micro_batch = 1;
  std::vector<ModernRow> rows = {stated, unstated};
  CHECK(fill_unstated_virtual_stages(rows) == 1);
  CHECK(rows[1].virtual_stages == 1);  // the pipeline split is still the recipe's
  CHECK(rows[1].micro_batch == 1);
  CHECK(rows[1].notes.find("micro_batch") == std::string::npos);
  rows[1] = unstated;
  rows[1].global_batch = 512;  // the same configuration: its micro-batch is taken
  CHECK(fill_unstated_virtual_stages(rows) == 1);
  CHECK(rows[1].micro_batch == 4);
}

TEST_CASE("analysis::error_stats: MAPE and the median signed error") {
  const ErrorStats odd = error_stats({0.3, -0.1, 0.2});
  CHECK(odd.runs == 3);
  CHECK(odd.mape == doctest::Approx(0.2));
  CHECK(odd.median_signed == doctest::Approx(0.2));
  CHECK(error_stats({-0.4, 0.1, 0.2, -0.3}).median_signed == doctest::Approx(-0.1));
  CHECK(error_stats({}).runs == 0);
}

TEST_CASE("analysis::validate_modern_rows: runs are scored once, per source and per GPU generation") {
  // One H100 run published as step time and tokens/s (one run, scored on step time), one B200 run,
  // one MFU-only run and one MI300X run (both skipped).
  ModernRow h100_step = llama8b("H100", "step_time", 9.0);
  ModernRow h100_tps = llama8b("H100", "throughput_total", 1.0);  // would be a 1e6 s step if scored
  ModernRow b200 = llama8b("B200", "throughput_per_gpu", 30000);
  b200.line = 3;
  ModernRow mfu_only = llama8b("H100", "mfu", 50);
  mfu_only.micro_batch = 2, mfu_only.line = 4;
  ModernRow mi300x = llama8b("MI300X", "step_time", 3.0);
  mi300x.line = 5;
  const ModernValidation v = validate_modern_rows({h100_step, h100_tps, b200, mfu_only, mi300x}, {});
  REQUIRE(v.runs.size() == 4);
  CHECK(v.rows == 5);
  const ModernRun& h = v.runs[0];
  CHECK(h.rows == 2);
  CHECK(h.row.metric == "step_time");
  REQUIRE(h.skip_reason.empty());
  CHECK(h.error == doctest::Approx(h.predicted_step_s / 9.0 - 1.0));
  const ModernRun& b = v.runs[1];
  REQUIRE(b.skip_reason.empty());
  CHECK(b.measured_step_s == doctest::Approx(128.0 * 8192 / (30000.0 * 8)));
  CHECK(b.predicted_step_s < h.predicted_step_s);  // B200 has 2.3x the FP8 peak of H100
  CHECK(v.skipped.size() == 2);
  REQUIRE(v.by_generation.count("Hopper") == 1);
  REQUIRE(v.by_generation.count("Blackwell") == 1);
  CHECK(v.by_generation.at("Hopper").runs == 1);
  CHECK(v.by_generation.at("Hopper").mape == doctest::Approx(std::abs(h.error)));
  CHECK(v.by_source.at("Megatron-Bridge").runs == 2);

  TrainingValidation a100;
  TrainingCheck c;
  c.row.gpu = "A100 80GB";
  c.simulated = c.counted = true;
  c.error = -0.05;
  a100.rows.push_back(c);
  const auto table = generation_table(a100, v);
  CHECK(table.at("Ampere").runs == 1);
  CHECK(table.at("Ampere").median_signed == doctest::Approx(-0.05));
  CHECK(table.at("Hopper").runs == 1);
}

TEST_CASE("analysis::cross_fit: fitting the sustained clock on a set lowers that set's error") {
  // Published H100 runs (NeMo 24.07 Llama 2 7B and 13B, Megatron-Bridge Llama 3 8B) fitted; a
  // B200 run scored.
  std::vector<ModernRow> hopper = {row_at(modern_set(), "training_nemo_docs.csv", 2),
                                   row_at(modern_set(), "training_nemo_docs.csv", 4),
                                   row_at(modern_set(), "training_megatron_bridge.csv", 574)};
  std::vector<ModernRow> blackwell = {row_at(modern_set(), "training_megatron_bridge.csv", 556)};
  ClusterCache clusters;
  const auto errors_of = [&](const std::vector<ModernRow>& rows) {
    return [&clusters, rows](const std::map<std::string, double>& constants) {
      ModernOptions o;
      o.constants = constants;
      o.clusters = &clusters;
      std::vector<double> e;
      for (const ModernRun& r : validate_modern_rows(rows, o).runs) {
        REQUIRE(r.skip_reason.empty());
        e.push_back(r.error);
      }
      return e;
    };
  };
  const CrossFit f = cross_fit({"sustained_clock_ratio"}, errors_of(hopper), errors_of(blackwell), 8);
  REQUIRE(f.values.size() == 1);
  CHECK(f.fitted_before.runs == 3);
  CHECK(f.scored_after.runs == 1);
  CHECK(f.fitted_before.mape > 0.02);  // there is something to fit
  CHECK(f.fitted_after.mape < f.fitted_before.mape);
  CHECK(f.values[0] != doctest::Approx(f.defaults[0]));
}

TEST_CASE("analysis::modern rows: Blackwell Megatron-FSDP rows run with their recipe's activation offloading") {
  // Megatron-Bridge 25.11 Llama3-70B GB200 FP8-CS, FSDP over 64, mbs 2: LLAMA3_70B_PRETRAIN_CONFIG_
  // GB200_FP8_CS_V2 offloads 40 layers; without them the layout does not fit 186 GB.
  const ModernRow& row = row_at(modern_set(), "training_megatron_bridge.csv", 490);
  CHECK(modern_skip_reason(row).empty());
  std::string why;
  const auto spec = scenario_for_modern_row(row, &why);
  REQUIRE_MESSAGE(spec.has_value(), why);
  CHECK(spec->training.activation_offload_layers == 40);
  CHECK(spec->parallel.zero == 3);
  // A Hopper row of a non-FSDP recipe offloads nothing.
  const auto h100 = scenario_for_modern_row(row_at(modern_set(), "training_megatron_bridge.csv", 574), &why);
  REQUIRE(h100.has_value());
  CHECK(h100->training.activation_offload_layers == 0);
}
