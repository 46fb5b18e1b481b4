// The library's Llama 3 8B at 128K scenario (NeMo's llama3_8b_128k recipe: TP 4 x PP 2 x CP 8 on
// 8 DGX H100): it loads, fits an H100 80GB, runs, and reports its context-parallel exchange.
#include <doctest/doctest.h>

#include <string>

#include "analysis/run.h"
#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

TEST_CASE("analysis::run_scenario: Llama 3 8B at 128K with context parallel 8 fits, runs and shows its ring traffic") {
  const scenarios::ScenarioSpec spec =
      scenarios::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/llama3-8b-128k-cp-dgx-h100.toml");
  CHECK(spec.model.seq_len == 131072);
  CHECK(spec.parallel.cp == 8);
  CHECK(spec.parallel.dp == 1);  // 64 GPUs / (4 x 2 x 8)
  const analysis::RunReport r = analysis::run_scenario(spec, analysis::RunOptions{});
  CHECK(r.memory.fits);
  CHECK(r.mfu > 0.0);
  CHECK(r.mfu < 1.0);
  // 16 layers per stage x 512 micro-batches x (7 + 14) chunks of 16 MiB (2 kv heads per tp rank).
  CHECK(r.iteration.cp_bytes_per_gpu == doctest::Approx(16.0 * 512 * 21 * 16777216.0));
  CHECK(r.iteration.breakdown.cp_overlapped > 0.0);
  const std::string text = analysis::run_text(r);
  CHECK(text.find("tp 4 x cp 8 x pp 2 x dp 1") != std::string::npos);
  CHECK(text.find("context-parallel") != std::string::npos);
  CHECK(analysis::run_json(r).find("\"cp_exposed_s\"") != std::string::npos);
}
