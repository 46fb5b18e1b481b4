// `run --explain` (workloads/training/stage_explain.h, analysis/run_explain.h): the explanation is
// the numbers the simulation ran with. Its ops add up to the stage's compute, the stage's parts to
// the iteration time, its formulas reproduce their results, and the MoE and context-parallel
// library scenarios show their all-to-all and K/V ring.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/run.h"
#include "analysis/run_explain.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {

analysis::RunReport explained(const std::string& library_file, int stage = -1) {
  const scenarios::ScenarioSpec spec =
      scenarios::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/" + library_file, {});
  analysis::RunOptions options;
  options.explain = true;
  options.explain_stage = stage;
  return analysis::run_scenario(spec, options);
}

const workloads::ExplainedComm* comm_of(const workloads::StageExplanation& x, const std::string& what) {
  for (const auto& k : x.kinds)
    for (const auto& c : k.comm)
      if (c.what == what) return &c;
  return nullptr;
}

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

}  // namespace

TEST_CASE("analysis::run --explain: Llama 3 8B on HGX H100, the ops add up to the stage compute and the parts to the iteration") {
  const analysis::RunReport r = explained("llama3-8b-hgx-h100.toml");
  REQUIRE(r.iteration.explained.size() == 1);
  const workloads::StageExplanation& x = r.iteration.explained.front();
  CHECK(x.stage == r.iteration.critical_rank);
  REQUIRE(x.kinds.size() == 1);
  CHECK(x.kinds[0].kind == "dense");
  CHECK(x.kinds[0].count == r.spec.model.layers);
  // GPU-bound passes: each pass is its ops' device times summed, so the ops' device times x the
  // layers, plus the embedding and head, are the planned compute per micro-batch.
  double per_micro_batch = 0;
  for (const auto& k : x.kinds) {
    REQUIRE(k.fwd.binds == "GPU");
    REQUIRE(k.bwd.binds == "GPU");
    for (const auto& op : k.ops) per_micro_batch += k.count * op.device_s;
  }
  for (const auto& op : x.extras) per_micro_batch += op.device_s;
  CHECK(close(per_micro_batch, x.planned_compute_s, 1e-9));
  CHECK(close(x.itemised_compute_s, x.planned_compute_s, 1e-9));
  // The planned compute of every micro-batch, and the compute slowed beside the in-flight
  // gradient reductions (charged as the run goes; no ZeRO-3 here), is the simulated compute; the
  // parts are the iteration; the text names that charge.
  CHECK(r.iteration.breakdown.dp_sm_cost > 0);
  CHECK(close(x.micro_batches * x.planned_compute_s + r.iteration.breakdown.dp_sm_cost, r.iteration.breakdown.compute,
              1e-9));
  CHECK(analysis::run_explain_text(r).find("its SM / HBM cost") != std::string::npos);
  CHECK(close(analysis::explained_iteration_s(r), r.iteration.iteration_time_s, 1e-9));
  const std::string text = analysis::run_explain_text(r);
  CHECK(text.find("agree") != std::string::npos);
  CHECK(text.find("DIFFER") == std::string::npos);
  CHECK(comm_of(x, "tensor-parallel") != nullptr);
  // The H100's GEMMs carry its measured matmul ratio, and the text names it (an A100 run's does not).
  REQUIRE(r.compute);
  CHECK(r.compute->matmul_measured_ratio() < 0.97);
  CHECK(text.find(fmt::format("include x {:.3f}", r.compute->matmul_measured_ratio())) != std::string::npos);
  CHECK(analysis::run_explain_text(explained("gpt3-175b-dgx-a100.toml")).find("GEMM efficiencies below include") ==
        std::string::npos);
}

TEST_CASE("analysis::run --explain: a GEMM's formula reproduces its FLOPs and its time") {
  const analysis::RunReport r = explained("llama3-8b-hgx-h100.toml");
  REQUIRE(!r.iteration.explained.empty());
  int checked = 0;
  for (const auto& op : r.iteration.explained.front().kinds.front().ops) {
    double m = 0, n = 0, k = 0, flops = 0, tflops = 0, eff = 0, t_us = 0;
    if (op.pass != "forward" || op.bound != "tensor cores") continue;
    if (std::sscanf(op.formula.c_str(), "max(2 x %lf x %lf x %lf = %lf FLOP / (%lf TFLOP/s x %lf gemm_eff_max) = %lf us", &m,
                    &n, &k, &flops, &tflops, &eff, &t_us) != 7)
      continue;
    INFO(op.name, ": ", op.formula);
    CHECK(close(2 * m * n * k, op.flops, 1e-9));
    CHECK(close(flops, op.flops, 5e-3));                   // printed to 3 digits
    CHECK(close(flops / (tflops * 1e12 * eff) * 1e6, t_us, 5e-3));  // peak and efficiency as printed
    // A tensor-bound GEMM's time is that term plus its launch gaps, as the line's end says.
    const std::string end = op.formula.substr(op.formula.rfind("= ") + 2);
    CHECK(close(std::stod(end) * 1e-6, op.device_s, 1e-3));
    CHECK(op.device_s >= t_us * 1e-6 * (1 - 1e-3));
    ++checked;
  }
  CHECK(checked >= 3);  // qkv, attention projection, the MLP's GEMMs
}

TEST_CASE("analysis::run --explain: Mixtral 8x7B shows the expert all-to-all of its MoE layers") {
  const analysis::RunReport r = explained("mixtral-8x7b-dgx-h100.toml");
  REQUIRE(!r.iteration.explained.empty());
  const workloads::StageExplanation& x = r.iteration.explained.front();
  REQUIRE(!x.kinds.empty());
  CHECK(x.kinds.back().kind == "moe");
  const workloads::ExplainedComm* a2a = comm_of(x, "expert all-to-all");
  REQUIRE(a2a != nullptr);
  CHECK(a2a->fwd_bytes > 0);
  CHECK(a2a->fwd_s > 0);
  CHECK(close(analysis::explained_iteration_s(r), r.iteration.iteration_time_s, 1e-9));
  CHECK(close(x.micro_batches * x.planned_compute_s + r.iteration.breakdown.dp_sm_cost, r.iteration.breakdown.compute,
              1e-9));
  CHECK(analysis::run_explain_text(r).find("expert all-to-all: ep ") != std::string::npos);
}

TEST_CASE("analysis::run --explain: Llama 3 8B at 128k with cp 8 shows the context-parallel ring, and a named stage too") {
  const analysis::RunReport r = explained("llama3-8b-128k-cp-dgx-h100.toml", 1);
  REQUIRE(r.iteration.explained.size() == (r.iteration.critical_rank == 1 ? 1u : 2u));
  const workloads::ExplainedComm* ring = comm_of(r.iteration.explained.front(), "context-parallel");
  REQUIRE(ring != nullptr);
  CHECK(ring->fwd_bytes > 0);
  CHECK(ring->algorithm.find("ring") != std::string::npos);
  CHECK(r.iteration.explained.back().stage == 1);
  CHECK(close(analysis::explained_iteration_s(r), r.iteration.iteration_time_s, 1e-9));
  const std::string json = analysis::run_json_with_explain(r);
  CHECK(json.find("\"explain\"") != std::string::npos);
  CHECK(json.find("\"context-parallel\"") != std::string::npos);
}
