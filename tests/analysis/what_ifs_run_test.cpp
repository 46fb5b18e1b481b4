// The what-ifs end to end (docs/model.md, "What-ifs"): fp16 loss scaling's skipped steps in
// time-to-train, CUDA_LAUNCH_BLOCKING's cost, and the input pipeline's stall and PCIe contention,
// each against what can be worked out by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/run.h"
#include "analysis/run_report.h"
#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"

using namespace clustersim;

namespace {

const std::string kLibrary = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/";

analysis::RunReport run(const std::string& file, const std::vector<std::string>& overrides, bool timeline = false) {
  analysis::RunOptions o;
  o.timeline = timeline;
  return analysis::run_scenario(scenarios::load_scenario(kLibrary + file, overrides), o);
}

}  // namespace

TEST_CASE("analysis::run_scenario: skipped fp16 steps lengthen time-to-train by total steps / updates") {
  // max|g| pinned at 0.5 (sigma ~0): 2^16 is clean, 2^17 overflows; with growth_interval 3 every
  // fourth step is skipped (workloads what_ifs_model_test has the sequence): 9 updates, 11 steps.
  const std::vector<std::string> fp16 = {"training.precision=\"fp16\""};
  std::vector<std::string> amp = fp16;
  for (const char* o : {"amp.growth_interval=3", "amp.grad_max_median=0.5", "amp.grad_max_sigma=1e-9", "amp.steps=9"})
    amp.push_back(o);
  const analysis::RunReport plain = run("tier2-mid-2x-a100-40gb.toml", fp16);
  const analysis::RunReport scaled = run("tier2-mid-2x-a100-40gb.toml", amp);
  REQUIRE(scaled.amp);
  CHECK(scaled.amp->skipped_steps == 2);
  CHECK(scaled.iteration.iteration_time_s == doctest::Approx(plain.iteration.iteration_time_s));
  REQUIRE(plain.time_to_train_s);
  REQUIRE(scaled.time_to_train_s);
  CHECK(*scaled.time_to_train_s == doctest::Approx(*plain.time_to_train_s * 11.0 / 9.0));
  const std::string text = analysis::run_text(scaled);
  CHECK(text.find("2 of 11 steps skipped") != std::string::npos);
  CHECK(text.find("scale at step") != std::string::npos);
}

TEST_CASE("scenarios::load_scenario: [amp] with bf16 is refused where [amp] is written, with the reason") {
  try {
    (void)scenarios::load_scenario(kLibrary + "tier2-mid-2x-a100-40gb.toml", {"amp.growth_interval=100"});
    FAIL("bf16 with [amp] loaded");
  } catch (const scenarios::ScenarioError& e) {
    const std::string what = e.what();
    CHECK(what.find("needs precision = \"fp16\"") != std::string::npos);
    CHECK(what.find("bf16") != std::string::npos);
  }
}

TEST_CASE("analysis::run_scenario: launch_blocking exposes the overlapped communication and adds a round trip per kernel") {
  const analysis::RunReport base = run("tier2-mid-2x-a100-40gb.toml", {});
  const analysis::RunReport blocking = run("tier2-mid-2x-a100-40gb.toml", {"training.launch_blocking=true"});
  const auto& b = base.iteration.breakdown;
  REQUIRE(b.dp_overlapped > 0);  // the scenario overlaps its gradient reduction
  CHECK(blocking.launch_blocking_base_s == doctest::Approx(base.iteration.iteration_time_s));
  // Nothing hides behind anything: at least the hidden communication comes out.
  CHECK(blocking.iteration.iteration_time_s >= base.iteration.iteration_time_s + b.dp_overlapped + b.tp_overlapped);
  CHECK(blocking.iteration.breakdown.dp_overlapped == doctest::Approx(0.0));
  // The round trips are linear in launch_blocking_sync_us: 5 -> 10 -> 15 us add the same twice.
  const double t5 = blocking.iteration.iteration_time_s;
  const double t10 = run("tier2-mid-2x-a100-40gb.toml", {"training.launch_blocking=true", "model_constants.launch_blocking_sync_us=10"})
                         .iteration.iteration_time_s;
  const double t15 = run("tier2-mid-2x-a100-40gb.toml", {"training.launch_blocking=true", "model_constants.launch_blocking_sync_us=15"})
                         .iteration.iteration_time_s;
  CHECK(t10 > t5);
  CHECK(t15 - t10 == doctest::Approx(t10 - t5).epsilon(0.01));
}

// The library's data-loader scenario (GPT-3 125M on two RTX 4090, dp 2, 32 samples per GPU and
// iteration in micro-batches of 2), its input pipeline replaced by each test's.
const char* const kStall = "gpt3-125m-2x-rtx4090-dataloader-stall.toml";
const std::vector<std::string> kNoInput = {"data.cpu_ms_per_sample=0", "data.bytes_per_sample=0"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_CASE("analysis::run_scenario: a loader in the training loop stalls by its CPU time plus the copies") {
  // loader_workers = 0: each micro-batch of 2 samples is made in the loop (2 x 1 ms), then copied.
  // Per GPU and iteration: 32 samples -> 32 ms of loading, 32 x 1 MB pinned over PCIe 4.0 x16.
  const analysis::RunReport base = run(kStall, kNoInput);
  const analysis::RunReport slow = run(kStall, {"data.loader_workers=0", "data.cpu_ms_per_sample=1.0",
                                                "data.bytes_per_sample=1e6", "data.pinned_memory=true"});
  REQUIRE(slow.data);
  CHECK(base.iteration.breakdown.data_stall == doctest::Approx(0.0));
  CHECK(slow.data->loader_s == doctest::Approx(0.032));
  CHECK(slow.data->h2d_bytes == doctest::Approx(32e6));
  CHECK(slow.data->h2d_s > 0);
  const double expected = 0.032 + slow.data->h2d_s;
  CHECK(slow.iteration.breakdown.data_stall == doctest::Approx(expected).epsilon(0.01));
  CHECK(slow.iteration.iteration_time_s == doctest::Approx(base.iteration.iteration_time_s + expected).epsilon(0.01));
}

TEST_CASE("analysis::run_scenario: too few loader workers stall by the loader's excess, enough workers do not") {
  const std::vector<std::string> eight = {"training.iterations=8"};
  const analysis::RunReport base = run(kStall, with(eight, kNoInput));
  const double gpu_s = base.iteration.iteration_time_s;
  // Two workers that need twice the GPU's iteration for the 32 samples: T x 32 / 2 = 2 x gpu_s.
  const double cpu_ms = 2.0 * gpu_s * 2 / 32 * 1e3;
  const std::vector<std::string> loader = {"data.cpu_ms_per_sample=" + std::to_string(cpu_ms), "data.bytes_per_sample=0"};
  const analysis::RunReport few = run(kStall, with(with(eight, loader), {"data.loader_workers=2"}));
  // Steady state: every iteration waits gpu_s for the loader. The queue (2 workers x 2 batches)
  // starts full, which saves 4 of the run's 8 x 16 batches' loader time (1/32 of it).
  CHECK(few.iteration.breakdown.data_stall == doctest::Approx(gpu_s).epsilon(0.08));
  CHECK(few.iteration.iteration_time_s == doctest::Approx(2.0 * gpu_s).epsilon(0.04));
  CHECK(few.iteration.breakdown.data_stall == doctest::Approx(few.data->stall_s()).epsilon(0.08));
  const analysis::RunReport enough = run(kStall, with(with(eight, loader), {"data.loader_workers=8"}));
  CHECK(enough.iteration.breakdown.data_stall < 0.01 * gpu_s);
  CHECK(enough.iteration.iteration_time_s == doctest::Approx(gpu_s).epsilon(0.01));
}

TEST_CASE("analysis::run_scenario: input copies are flows that slow the data-parallel reductions they overlap on PCIe") {
  // Two RTX 4090 without P2P, ZeRO-2: each micro-batch's gradients are reduce-scattered as live
  // flows (--full) GPU -> root complex -> GPU in 100 MB buckets, the last of them (ready when the
  // backward ends) while the next micro-batch's copy (root complex -> GPU 0, 2 x 400 MB, ~33 ms)
  // runs. Those share GPU 0's downlink and take longer than the same reductions without copies.
  const std::vector<std::string> common = {"training.iterations=1", "data.loader_workers=8", "data.pinned_memory=true",
                                           "data.cpu_ms_per_sample=0", "sync.bucket_mb=100"};
  analysis::RunOptions o;
  o.full = true;
  o.timeline = true;
  const auto full_run = [&](const std::string& bytes) {
    return analysis::run_scenario(scenarios::load_scenario(kLibrary + kStall, with(common, {"data.bytes_per_sample=" + bytes})), o);
  };
  const analysis::RunReport alone = full_run("0"), shared = full_run("400e6");
  const auto spans = [](const analysis::RunReport& r, workloads::SpanKind kind) {
    std::vector<workloads::TimelineSpan> v;
    for (const auto& s : r.iteration.timeline)
      if (s.kind == kind) v.push_back(s);
    return v;
  };
  const auto copies = spans(shared, workloads::SpanKind::DataStall);
  REQUIRE(!copies.empty());
  const auto alone_dp = spans(alone, workloads::SpanKind::DataParallel);
  const auto shared_dp = spans(shared, workloads::SpanKind::DataParallel);
  REQUIRE(alone_dp.size() == shared_dp.size());
  int overlapping = 0;
  for (std::size_t i = 0; i < shared_dp.size(); ++i) {
    const auto& s = shared_dp[i];
    bool overlaps = false;
    for (const auto& c : copies) overlaps = overlaps || (c.start_s < s.end_s && c.end_s > s.start_s);
    if (!overlaps) continue;
    ++overlapping;
    CHECK(s.end_s - s.start_s > 1.01 * (alone_dp[i].end_s - alone_dp[i].start_s));
  }
  CHECK(overlapping > 0);
  CHECK(analysis::run_text(shared).find("data stall") != std::string::npos);
}
