// The JAX rows (issue #10): each runs full recompute with the tensors its remat policy saves
// ([training] recompute_save, analysis/modern_row_defaults.cpp jax_recompute_save), and the
// memory model still fits each published PaxML GPT-3 175B run with the saves.
#include <doctest/doctest.h>

#include "analysis/modern_rows.h"
#include "analysis/run.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::modern_set;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

TEST_CASE("analysis::scenario_for_modern_row: the MaxText and PaxML rows keep what their remat policies save") {
  using namespace workloads;
  const char* file = "training_dgxc_benchmarking.csv";
  struct Expect {
    int line;
    const char* model;
    unsigned save;
  };
  // Llama2 BF16 (custom + mlpwo), Llama2 FP8 (custom), GPT-3 175B (SAVE_QKV_OUT_PROJ), Llama3
  // BF16 and FP8 (save_qkv_proj). GPT 5B PaxML's rows state no model shape and map to no scenario.
  const Expect rows[] = {{158, "Llama2-70B (MaxText)", kSaveQkvProj | kSaveAttentionOutProj | kSaveMlpDown},
                         {176, "Llama2-70B (MaxText)", kSaveQkvProj | kSaveAttentionOutProj},
                         {302, "GPT-3 175B (PaxML)", kSaveQkvProj | kSaveAttentionOutProj},
                         {557, "Llama3-70B (MaxText)", kSaveQkvProj},
                         {572, "Llama3-70B (MaxText)", kSaveQkvProj}};
  for (const Expect& e : rows) {
    CAPTURE(e.line);
    const ModernRow& r = row_at(file, e.line);
    REQUIRE(r.model == e.model);
    const scenarios::ScenarioSpec s = scenario_of(r);
    CHECK(s.training.recompute == Recompute::Full);
    CHECK(s.training.recompute_save == e.save);
    CHECK(s.training.recompute_dce);  // JAX prunes every row's rerun, with or without saves
  }
  // No other row names any, and none prunes its rerun (torch.utils.checkpoint reruns it whole).
  int jax = 0;
  for (const ModernRow& r : modern_set()) {
    std::string why;
    const auto s = scenario_for_modern_row(r, &why);
    if (!s) continue;
    if (r.model.find("MaxText") == std::string::npos && r.model.find("PaxML") == std::string::npos) {
      CHECK(s->training.recompute_save == 0);
      CHECK_FALSE(s->training.recompute_dce);
    } else {
      CHECK(s->training.recompute_dce);
      ++jax;
    }
  }
  CHECK(jax == 81);  // 22 MaxText runs and 5 PaxML GPT-3 175B runs, three metric lines each
}

TEST_CASE("analysis::run_scenario: GPT-3 175B PaxML fits with its saved QKV and out-projection outputs and steps faster") {
  scenarios::ScenarioSpec spec = scenario_of(row_at("training_dgxc_benchmarking.csv", 302));
  const RunReport with = run_scenario(spec, RunOptions{});
  spec.training.recompute_save = 0;
  const RunReport without = run_scenario(spec, RunOptions{});
  CHECK(with.memory.fits);
  CHECK(with.memory.required > without.memory.required);
  CHECK(with.iteration.iteration_time_s < without.iteration.iteration_time_s);
}

TEST_CASE("analysis::run_scenario: pruning GPT-3 175B PaxML's rerun drops fc2's forward from its step and hardware FLOPs") {
  scenarios::ScenarioSpec spec = scenario_of(row_at("training_dgxc_benchmarking.csv", 302));
  REQUIRE(spec.training.recompute_dce);
  const RunReport dce = run_scenario(spec, RunOptions{});
  spec.training.recompute_dce = false;
  const RunReport whole = run_scenario(spec, RunOptions{});
  CHECK(dce.memory.fits);
  CHECK(dce.memory.required == whole.memory.required);
  CHECK(dce.iteration.iteration_time_s < whole.iteration.iteration_time_s);
  // fc2: 2 x tokens x 4h x h a layer; 96 layers, 256 sequences of 2048 tokens (h 12288).
  const double fc2 = 2.0 * 2048 * 4 * 12288.0 * 12288.0 * 96 * 256;
  CHECK(whole.iteration.hardware_flops - dce.iteration.hardware_flops == doctest::Approx(fc2).epsilon(1e-6));
}
