// The library's Llama 3 405B scenario (Meta's TP 8 x PP 16 x DP 128, interleaved with one layer per
// chunk and the embedding and the loss in chunks of their own, so 126 = 7 + 14 x 8 + 7 layers): it
// loads, fits an H100 80GB with the most loaded stage named, and runs.
#include <doctest/doctest.h>

#include <string>

#include "analysis/memory_report.h"
#include "analysis/run.h"
#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {
const std::string kFile = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/llama3-405b-dgx-h100.toml";
}

TEST_CASE("analysis::memory_for_scenario: Llama 3 405B with Meta's uneven stages fits, the peak on stage 1") {
  const scenarios::ScenarioSpec spec = scenarios::load_scenario(kFile);
  CHECK(spec.model.layers == 126);
  CHECK(spec.parallel.layers_on_stage(126, 0) == 7);
  CHECK(spec.parallel.layers_on_stage(126, 1) == 8);
  CHECK(spec.parallel.layers_on_stage(126, 15) == 7);
  // Meta's balance (Llama 3 paper, Section 3.3.2): the first chunk of the first stage is only the
  // embedding, the last chunk of the last stage only the output layer and loss; every other chunk
  // one layer.
  REQUIRE(spec.parallel.virtual_stages == 8);
  CHECK(spec.parallel.layers_in_chunk(126, 0) == 0);
  CHECK(spec.parallel.layers_in_chunk(126, 16 * 8 - 1) == 0);
  for (int c = 1; c < 16 * 8 - 1; ++c) CHECK(spec.parallel.layers_in_chunk(126, c) == 1);
  analysis::MemoryReportOptions opt;
  opt.advice = false;
  const analysis::MemoryReport r = analysis::memory_for_scenario(spec, opt);
  INFO("required ", static_cast<double>(r.required) / 1073741824.0, " GiB");
  CHECK(r.fits);
  // Stage 1: 8 layers x 16 micro-batches in flight (the interleaved warm-up reaches all 16 of the
  // replica's micro-batches) x 533,200,896 B = 63.6 GiB of activations, more than stage 0's 7 x 16
  // (55.6 GiB) with the embedding (0.5 GiB of bf16 weights per GPU).
  CHECK(r.breakdown.stage == 1);
  const double activations_gib = r.breakdown.activations.value / 1073741824.0;
  CHECK(activations_gib == doctest::Approx(8.0 * 16 * 533200896.0 / 1073741824.0));
  CHECK(memory_report_text(r).find("Stage layers, first to last: 7 + 14 x 8 + 7") != std::string::npos);
}

TEST_CASE("analysis::run_scenario: Llama 3 405B with Meta's uneven interleaved stages runs and reports its stage layers") {
  const scenarios::ScenarioSpec spec = scenarios::load_scenario(kFile);
  const analysis::RunReport r = analysis::run_scenario(spec, analysis::RunOptions{});
  CHECK(r.memory.fits);
  CHECK(r.iteration.iteration_time_s > 0);
  CHECK(r.mfu > 0.0);
  CHECK(r.mfu < 1.0);
  // Interleaving is what the layout is for: the same stages without it (1F1B) spend far more of the
  // step in the pipeline bubble, (pp - 1) / v of a micro-batch's passes against (pp - 1).
  scenarios::ScenarioSpec plain = spec;
  plain.parallel.virtual_stages = 1;
  const analysis::RunReport r1 = analysis::run_scenario(plain, analysis::RunOptions{});
  CHECK(r1.mfu < r.mfu);
  CHECK(analysis::run_text(r).find("(stage layers 7 + 14 x 8 + 7)") != std::string::npos);
}
