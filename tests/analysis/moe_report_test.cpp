// A mixture-of-experts run end to end: the report shows the expert all-to-all (text line, JSON
// fields, timeline spans), its bytes match the layout, and the router's imbalance and the expert
// parallelism move the time the way the physics says.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/run.h"
#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {
// Mixtral 8x7B with 8 layers on one DGX H100, tp 1, dp 8.
const std::string kBody =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"mixtral-8x7b\"\nlayers = 8\n"
    "[parallelism]\ntp = 1\npp = 1\n[training]\nglobal_batch = 16\nmicro_batch = 1\nprecision = \"bf16\"\n";

// The body with expert parallelism 8, plus `extra` sections.
analysis::RunReport with_ep8(const std::string& extra, bool timeline) {
  std::string body = kBody;
  body.replace(body.find("pp = 1\n"), 7, "pp = 1\nep = 8\n");
  return analysis::run_scenario(scenarios::parse_scenario(body + extra, "moe.toml"),
                                analysis::RunOptions{false, false, timeline, nullptr});
}
}  // namespace

TEST_CASE("analysis::run_scenario: an MoE run reports its expert all-to-all in text, JSON and the timeline") {
  const analysis::RunReport ep8 = with_ep8("", true);
  const std::string text = analysis::run_text(ep8);
  CHECK(text.find("expert all-to-all") != std::string::npos);
  CHECK(text.find("over ep = 8") != std::string::npos);
  const auto j = nlohmann::json::parse(analysis::run_json(ep8));
  CHECK(j["details"]["ep_comm_s"].get<double>() > 0);
  CHECK(j["details"]["expert_parallel"]["ep"] == 8);
  CHECK(j["details"]["expert_parallel"]["expert_data_parallel"] == 1);
  // Per iteration: 8 MoE layers x 2 micro-batches x 4 all-to-alls (dispatch and combine, forward
  // and backward), each sending 7/8 of k x s x h x 2 B.
  const double buffer = 2.0 * 4096 * 4096 * 2;
  CHECK(j["comm"]["ep_bytes_per_gpu"].get<double>() == doctest::Approx(8 * 2 * 4 * buffer * 7 / 8).epsilon(1e-6));
  int spans = 0;
  for (const auto& s : ep8.iteration.timeline) spans += s.kind == workloads::SpanKind::ExpertParallel ? 1 : 0;
  CHECK(spans == 2 * 2);  // one per pass: 2 micro-batches, forward and backward
  // The all-to-all is part of the exposed communication, not of its tensor-parallel share.
  const auto& b = ep8.iteration.breakdown;
  CHECK(b.ep_comm > 0);
  CHECK(b.tp_comm == doctest::Approx(0.0));
  CHECK(b.exposed_comm >= b.ep_comm);
  // A dense run (the same preset with experts = 0) prints no MoE line and carries no MoE fields.
  const std::string dense_body = std::string(kBody).replace(kBody.find("layers = 8\n"), 11, "layers = 8\nexperts = 0\n");
  const analysis::RunReport dense = analysis::run_scenario(scenarios::parse_scenario(dense_body, "dense.toml"), {});
  CHECK(analysis::run_text(dense).find("expert all-to-all") == std::string::npos);
  const auto dj = nlohmann::json::parse(analysis::run_json(dense));
  CHECK_FALSE(dj["details"].contains("ep_comm_s"));
  CHECK_FALSE(dj["comm"].contains("ep_bytes_per_gpu"));
}

TEST_CASE("analysis::run_scenario: a skewed router slows an MoE iteration, expert parallelism 1 sends nothing") {
  const analysis::RunReport balanced = with_ep8("", false);
  const analysis::RunReport skewed = with_ep8("[model_constants]\nmoe_load_imbalance = 2.0\n", false);
  CHECK(skewed.iteration.iteration_time_s > balanced.iteration.iteration_time_s * 1.1);
  CHECK(skewed.iteration.breakdown.ep_comm > balanced.iteration.breakdown.ep_comm * 1.5);
  // Model FLOPs do not depend on the router's balance or on ep.
  CHECK(skewed.iteration.model_flops == doctest::Approx(balanced.iteration.model_flops));
  // Without expert parallelism every GPU holds all 64 experts of the 8 layers (11 B parameters):
  // it does not fit, so simulate it regardless.
  const analysis::RunReport no_ep =
      analysis::run_scenario(scenarios::parse_scenario(kBody, "moe.toml"), analysis::RunOptions{false, true, false, nullptr});
  CHECK_FALSE(no_ep.memory.fits);
  CHECK(no_ep.iteration.ep_bytes_per_gpu == 0);
  CHECK(no_ep.iteration.breakdown.ep_comm == 0);
  CHECK(no_ep.iteration.model_flops == doctest::Approx(balanced.iteration.model_flops));
}
