// The training-measurement table: its CSV reader, the row-to-scenario mapping and the source
// formulas that turn a simulated iteration into each row's metric.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <unistd.h>

#include "analysis/training_rows.h"

using namespace clustersim;
using namespace clustersim::analysis;

namespace {
const std::vector<TrainingRow>& rows() {
  static const std::vector<TrainingRow> r = load_training_rows(validation_data_dir() + "/training.csv");
  return r;
}

// The header of training.csv, and rows parsed from CSV text (through a file, as the reader takes one).
std::string header_line() {
  return "source,model,params_B,layers,hidden,heads,seq_len,vocab,global_batch,micro_batch,tp,pp,dp,virtual_stages,"
         "recompute,seq_parallel,gpu,num_gpus,interconnect,precision,metric,value,unit,notes";
}

std::vector<TrainingRow> rows_of_text(const std::string& text) {
  // One file per process: other checkouts may run this test at the same time.
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("clustersim_training_rows_test." + std::to_string(::getpid()) + ".csv");
  std::ofstream(path, std::ios::binary) << text;
  struct Remove {
    const std::filesystem::path& p;
    ~Remove() { std::filesystem::remove(p); }
  } remove_after{path};
  return load_training_rows(path.string());
}

bool is_sc21_or_readme_a100(const TrainingRow& r) {
  const bool megatron = r.source.find("Megatron-LM") != std::string::npos || r.source.find("SC'21") != std::string::npos;
  return megatron && r.source.find("README 2020") == std::string::npos && r.gpu.find("A100") != std::string::npos;
}
bool is_foundry(const TrainingRow& r) { return r.source.find("llm-foundry") != std::string::npos; }

// The iteration time that makes predicted_value give `value` (every metric is proportional to the
// iteration time or to its inverse).
PredictedMetrics metrics_from_published(const TrainingRow& r, double value) {
  PredictedMetrics m;
  m.gpus = r.num_gpus;
  m.tokens_per_iteration = static_cast<double>(r.global_batch) * r.seq_len;
  m.datasheet_peak_flops = 312e12;
  m.iteration_time_s = 1.0;
  const double at_one = *predicted_value(r, m);
  const bool time_metric = r.metric == "iteration_time" || r.metric == "training_time_300B_tokens";
  m.iteration_time_s = time_metric ? value / at_one : at_one / value;
  return m;
}
}  // namespace

TEST_CASE("analysis::training rows: every row of the published table parses with its trust tag") {
  const auto& r = rows();
  CHECK(r.size() == 555);
  std::set<std::string> metrics;
  for (const TrainingRow& row : r) {
    CHECK(row.trust != Trust::Unknown);
    CHECK(row.value > 0);
    CHECK(!row.metric.empty());
    CHECK(row.num_gpus > 0);
    metrics.insert(row.metric);
  }
  CHECK(metrics.count("achieved_tflops_per_gpu"));
  CHECK(metrics.count("mfu"));
  // Quoted fields keep their commas and quotes: the first data row's source has a comma.
  CHECK(r[0].line == 2);
  CHECK(r[0].source.find("2021-04-08); same numbers") != std::string::npos);
  CHECK(r[0].notes.find("\"FLOPs are measured for end-to-end training\"") != std::string::npos);
  CHECK(r[0].trust == Trust::A);
}

TEST_CASE("analysis::training rows: the CSV reader handles quotes, escaped quotes and newlines in fields") {
  // Row 1 (lines 2-3): a quoted source with a comma, notes with "" escapes and an embedded newline.
  // Row 2 (line 4): CRLF line ends, an unquoted last field that must not keep the '\r'.
  const std::string row_tail = ",GPT 1B,1.3,24,2048,16,2048,51200,512,8,1,1,64,0,full,no,A100 80GB SXM,64,NVLink,bf16,mfu,0.5,fraction,";
  const std::string text = header_line() + "\n" +
                           "\"Paper, 2021\"" + row_tail + "\"says \"\"hi\"\",\nthen [trust:A]\"\r\n" +
                           "\"\"\"Quoted\"\" start\"" + row_tail + "plain [trust:B]\r\n";
  const std::vector<TrainingRow> r = rows_of_text(text);
  REQUIRE(r.size() == 2);
  CHECK(r[0].line == 2);
  CHECK(r[0].source == "Paper, 2021");
  CHECK(r[0].model == "GPT 1B");
  CHECK(r[0].notes == "says \"hi\",\nthen [trust:A]");
  CHECK(r[0].trust == Trust::A);
  CHECK(r[1].line == 4);
  CHECK(r[1].source == "\"Quoted\" start");
  CHECK(r[1].notes == "plain [trust:B]");
  CHECK(r[1].trust == Trust::B);
  CHECK(r[1].value == 0.5);
  CHECK(r[1].num_gpus == 64);
  // A quote that never closes is an error naming the line the field starts on.
  CHECK_THROWS_WITH_AS(rows_of_text(header_line() + "\n\"open" + row_tail + "x\n"), doctest::Contains(":2: unterminated"),
                       std::runtime_error);
  CHECK_THROWS_AS(load_training_rows(validation_data_dir() + "/no_such_file.csv"), std::runtime_error);
}

TEST_CASE("analysis::training rows: the mapping covers the Megatron SC'21/README A100 rows and llm-foundry") {
  int sc21 = 0, sc21_ok = 0, foundry = 0, foundry_ok = 0, total_ok = 0;
  std::map<std::string, int> skipped;
  for (const TrainingRow& row : rows()) {
    std::string why;
    const auto spec = scenario_for_row(row, &why);
    if (spec) ++total_ok;
    else ++skipped[row.metric + ": " + why.substr(0, 160)];
    if (is_sc21_or_readme_a100(row)) {
      ++sc21;
      sc21_ok += spec ? 1 : 0;
    }
    if (is_foundry(row)) {
      ++foundry;
      foundry_ok += spec ? 1 : 0;
    }
    if (spec) {
      CHECK(spec->cluster.used_gpus() == row.num_gpus);
      CHECK(spec->parallel.tp * spec->parallel.pp * spec->parallel.dp == row.num_gpus);
      CHECK(spec->training.global_batch == row.global_batch);
      CHECK(spec->model.layers == row.layers);
    }
  }
  for (const auto& [reason, count] : skipped) MESSAGE("skipped " << count << " rows: " << reason);
  MESSAGE("mapped " << total_ok << " of " << rows().size() << " rows; SC'21/README A100 " << sc21_ok << "/" << sc21
                    << ", llm-foundry " << foundry_ok << "/" << foundry);
  CHECK(sc21_ok >= 0.9 * sc21);
  CHECK(foundry_ok >= 0.9 * foundry);
}

TEST_CASE("analysis::training rows: a mapped row keeps its configuration and the documented assumptions") {
  for (const TrainingRow& row : rows()) {
    if (row.model != "GPT 530B" || row.metric != "achieved_tflops_per_gpu" || row.gpu != "A100 80GB SXM") continue;
    const auto spec = scenario_for_row(row, nullptr);
    REQUIRE(spec);
    CHECK(spec->cluster.node.gpu == "a100-sxm4-80gb");
    CHECK(spec->cluster.nodes == 2520 / 8);
    CHECK(spec->parallel.tp == 8);
    CHECK(spec->parallel.pp == 35);
    CHECK(spec->training.precision == topology::Precision::Fp16);
    CHECK(spec->training.recompute == workloads::Recompute::Full);
    CHECK(spec->training.micro_batch == 1);
    CHECK_FALSE(spec->model.flash_attention);
    CHECK(spec->sync.algorithm == workloads::CollectiveAlgo::Ring);
  }
  for (const TrainingRow& row : rows()) {
    if (!is_foundry(row) || row.gpu != "a100_40gb") continue;
    const auto spec = scenario_for_row(row, nullptr);
    REQUIRE(spec);
    CHECK(spec->cluster.node.gpu == "a100-sxm4-40gb");
    CHECK(spec->cluster.node.nic == "roce-200");
    CHECK(spec->parallel.zero == 3);
    CHECK(spec->model.flash_attention);
    CHECK(spec->training.precision == topology::Precision::Bf16);
    CHECK(row.global_batch % (spec->training.micro_batch * spec->parallel.dp) == 0);
    break;
  }
  std::string why;
  for (const TrainingRow& row : rows())
    if (row.metric == "weak_scaling_efficiency") {
      CHECK_FALSE(scenario_for_row(row, &why));
      CHECK(why.find("weak_scaling") != std::string::npos);
      break;
    }
}

TEST_CASE("analysis::training rows: predicted_value round-trips every row's published number") {
  int checked = 0;
  for (const TrainingRow& row : rows()) {
    if (row.metric == "weak_scaling_efficiency") continue;
    const PredictedMetrics m = metrics_from_published(row, row.value);
    const auto v = predicted_value(row, m);
    REQUIRE(v);
    CHECK(*v == doctest::Approx(row.value).epsilon(1e-9));
    ++checked;
  }
  CHECK(checked > 500);
}

TEST_CASE("analysis::training rows: metrics of one run agree with each other through the source formulas") {
  // Rows of the same run (source, model, GPUs, batch, sequence) publish several metrics; the
  // iteration time implied by one must give the others within the published rounding (3%, or
  // half a unit for integers).
  using Key = std::tuple<std::string, std::string, int, int, int, int>;
  std::map<Key, std::vector<const TrainingRow*>> runs;
  for (const TrainingRow& row : rows())
    if (row.metric != "weak_scaling_efficiency")
      runs[{row.source, row.model, row.num_gpus, row.global_batch, row.seq_len, row.micro_batch}].push_back(&row);
  int compared = 0;
  for (const auto& [key, group] : runs) {
    const TrainingRow* anchor = group.front();
    const PredictedMetrics m = metrics_from_published(*anchor, anchor->value);
    for (const TrainingRow* other : group) {
      if (other == anchor) continue;
      const double v = *predicted_value(*other, m);
      INFO("training.csv:" << other->line << " " << other->model << " " << other->metric << " published "
                           << other->value << " implied " << v);
      // Values printed without decimals (the Jan-2021 README's "4" PFLOP/s) carry +-0.5.
      const double rounding = other->value == std::floor(other->value) ? 0.5 : 0.0;
      CHECK(std::abs(v - other->value) <= std::max(0.03 * other->value, rounding));
      ++compared;
    }
  }
  MESSAGE("cross-checked " << compared << " metric pairs");
  CHECK(compared > 200);
}

TEST_CASE("analysis::training rows: SC'21 Eq. 3 reproduces the 2020 README's V100 row exactly") {
  // GPT-2 style 1B on one V100: B 8, s 1024, l 24, h 1920, V 51200; 1121 ms -> 71.9 TFLOP/s.
  const double flops = sc21_hardware_flops(8, 1024, 24, 1920, 51200);
  CHECK(flops / 1.121 / 1e12 == doctest::Approx(71.9).epsilon(0.002));
}

TEST_CASE("analysis::training rows: the 2020-2021 Megatron rows all-reduce the input gradient blocking") {
  // Megatron-LM's asynchronous dgrad all-reduce came in 16c90445e7 / 3f65246911 (2021-09), after these runs;
  // llm-foundry (tp 1) and NeMo (sequence parallel) keep the default.
  int megatron = 0, others = 0;
  for (const TrainingRow& row : rows()) {
    const auto spec = scenario_for_row(row, nullptr);
    if (!spec) continue;
    if (is_sc21_or_readme_a100(row) || row.source.find("README 2020") != std::string::npos) {
      CHECK_FALSE(spec->sync.tp_async_dgrad_allreduce);
      ++megatron;
    } else if (is_foundry(row) || row.source.find("NeMo") != std::string::npos) {
      CHECK(spec->sync.tp_async_dgrad_allreduce);
      ++others;
    }
  }
  CHECK(megatron > 20);
  CHECK(others > 0);
}

TEST_CASE("analysis::training rows: the held-out llm-foundry H100 rows map to H100 nodes, their sharding and precision") {
  const std::vector<TrainingRow> held = load_training_rows(validation_data_dir() + "/" + kHoldoutFoundryH100, kHoldoutFoundryH100);
  REQUIRE(held.size() == 231);  // 77 runs x (tokens/s/GPU, MFU, HFU)
  int grad_op = 0, fp8 = 0;
  for (const TrainingRow& row : held) {
    CHECK(row.file == kHoldoutFoundryH100);
    CHECK(row.trust == Trust::A);
    std::string why;
    const auto spec = scenario_for_row(row, &why);
    REQUIRE_MESSAGE(spec, row.line << ": " << why);
    CHECK(spec->name.rfind(std::string(kHoldoutFoundryH100) + ":" + std::to_string(row.line) + " ", 0) == 0);
    CHECK(spec->cluster.node.gpu == "h100-sxm5-80gb");
    CHECK(spec->cluster.node.nic == "ib-ndr-400");
    CHECK(spec->cluster.used_gpus() == row.num_gpus);
    const bool shard_grad_op = row.notes.find("sharding=SHARD_GRAD_OP") != std::string::npos;
    CHECK(spec->parallel.zero == (shard_grad_op ? 2 : 3));
    grad_op += shard_grad_op ? 1 : 0;
    const bool is_fp8 = row.precision == "amp_fp8";
    CHECK(spec->training.precision == (is_fp8 ? topology::Precision::Fp8 : topology::Precision::Bf16));
    fp8 += is_fp8 ? 1 : 0;
    // Every metric of a run is the same measurement: the source formulas round-trip it.
    CHECK(*predicted_value(row, metrics_from_published(row, row.value)) == doctest::Approx(row.value).epsilon(1e-9));
  }
  CHECK(grad_op == 6 * 3);  // the 1B and 3B runs at 128, 256 and 512 GPUs
  CHECK(fp8 == 7 * 3);
}

TEST_CASE("analysis::training rows: llm-foundry rows step Composer's DecoupledAdamW loop without weight decay, the others a fused optimizer") {
  int foundry = 0;
  for (const TrainingRow& row : rows()) {
    std::string why;
    const auto spec = scenario_for_row(row, &why);
    if (!spec) continue;
    const bool is = is_foundry(row);
    foundry += is ? 1 : 0;
    CHECK(spec->training.optimizer_kernels ==
          (is ? workloads::OptimizerKernels::PerParameter : workloads::OptimizerKernels::Fused));
    CHECK(spec->training.weight_decay == !is);
  }
  CHECK(foundry > 0);
  const std::vector<TrainingRow> held = load_training_rows(validation_data_dir() + "/" + kHoldoutFoundryH100, kHoldoutFoundryH100);
  for (const TrainingRow& row : held) {
    const auto spec = scenario_for_row(row, nullptr);
    REQUIRE(spec);
    CHECK(spec->training.optimizer_kernels == workloads::OptimizerKernels::PerParameter);
    CHECK_FALSE(spec->training.weight_decay);
  }
}

TEST_CASE("analysis::training rows: llm-foundry runs attend with the kernel their benchmark script chose") {
  // submit_benchmarks.py defaults to attn_impl "triton" (the 2022 Triton FlashAttention); the
  // large-scale sweep.py passes "flash" (FlashAttention-2) for 1B, 3B, 7B and 70B only.
  int triton = 0, fa2 = 0;
  const auto count = [&](const TrainingRow& row) {
    const auto spec = scenario_for_row(row, nullptr);
    REQUIRE(spec);
    const bool sweep_flash = row.source.find("Large Scale") != std::string::npos &&
                             row.model.find("13b") == std::string::npos && row.model.find("30b") == std::string::npos;
    CHECK(spec->model.attention_kernel ==
          (sweep_flash ? workloads::AttentionKernel::Fa2 : workloads::AttentionKernel::FlashAttnTriton));
    (sweep_flash ? fa2 : triton) += 1;
  };
  for (const TrainingRow& row : rows())
    if (is_foundry(row) && scenario_for_row(row, nullptr)) count(row);
  const int a100_triton = triton;
  CHECK(a100_triton > 0);
  CHECK(fa2 == 0);  // the A100 sections came from submit_benchmarks.py's default
  for (const TrainingRow& row : load_training_rows(validation_data_dir() + "/" + kHoldoutFoundryH100, kHoldoutFoundryH100))
    count(row);
  CHECK(fa2 == 12 * 3);                 // 1B, 3B, 7B and 70B at 128, 256 and 512 GPUs
  CHECK(triton - a100_triton == 65 * 3);  // the 2023 sections (52 + 7 runs) and the sweep's 13B / 30B (6)
}

TEST_CASE("analysis::training rows: llm-foundry FULL_SHARD runs are PyTorch FSDP1, and Composer's PURE mode reduces in 16 bits") {
  int pure = 0, fsdp1 = 0;
  for (const TrainingRow& row : rows()) {
    if (!is_foundry(row)) continue;
    const auto spec = scenario_for_row(row, nullptr);
    REQUIRE(spec);
    const bool is_pure = row.notes.find("mp_mode=PURE") != std::string::npos;
    pure += is_pure ? 1 : 0;
    CHECK(spec->training.grad_dtype == (is_pure ? workloads::StateDtype::Bf16 : workloads::StateDtype::Fp32));
    const bool full_shard = spec->parallel.zero == 3;
    fsdp1 += full_shard ? 1 : 0;
    CHECK((spec->sync.zero3_impl == workloads::Zero3Impl::TorchFsdp1) == full_shard);
  }
  CHECK(pure > 0);
  CHECK(fsdp1 > 0);
  for (const TrainingRow& row : rows()) {
    if (is_foundry(row)) continue;
    const auto spec = scenario_for_row(row, nullptr);
    if (spec) CHECK(spec->sync.zero3_impl != workloads::Zero3Impl::TorchFsdp1);
  }
}

TEST_CASE("analysis::training rows: MPT trains without dropout, and torch 2.1's checkpoint prunes the H100 runs' rerun") {
  // MPTConfig's pdrop defaults are 0.0 (no kernel at p = 0); Megatron's GPT rows keep 0.1. The
  // H100 sections ran torch 2.1.0 (non-reentrant checkpoint with early stop), the A100 ones 1.13.1.
  int foundry = 0, megatron = 0;
  for (const TrainingRow& row : rows()) {
    const auto spec = scenario_for_row(row, nullptr);
    if (!spec) continue;
    const bool is = is_foundry(row);
    (is ? foundry : megatron) += 1;
    CHECK(spec->model.trains_with_dropout() == !is);
    CHECK_FALSE(spec->training.recompute_dce);
  }
  CHECK(foundry > 0);
  CHECK(megatron > 0);
  int pruned = 0, checkpointed = 0;
  for (const TrainingRow& row : load_training_rows(validation_data_dir() + "/" + kHoldoutFoundryH100, kHoldoutFoundryH100)) {
    const auto spec = scenario_for_row(row, nullptr);
    REQUIRE(spec);
    CHECK_FALSE(spec->model.trains_with_dropout());
    const bool full = spec->training.recompute == workloads::Recompute::Full;
    checkpointed += full ? 1 : 0;
    CHECK(spec->training.recompute_dce == full);
    pruned += spec->training.recompute_dce ? 1 : 0;
  }
  CHECK(checkpointed > 0);
  CHECK(pruned == checkpointed);
}
