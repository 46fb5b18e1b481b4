// The training-iteration simulator against what can be derived by hand: schedule bubbles, overlap,
// the memoised collectives against the full flow simulation, determinism.
#include <doctest/doctest.h>

#include <string>

#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {
scenarios::ScenarioSpec scenario(const std::string& body) { return scenarios::parse_scenario(body, "test.toml"); }

analysis::RunReport run(const std::string& body, bool full = false) {
  analysis::RunOptions o;
  o.full = full;
  o.ignore_memory = true;
  return analysis::run_scenario(scenario(body), o);
}

std::string pipeline(int pp, int v, const std::string& schedule, int batch, bool overlap = true) {
  return "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = " + std::to_string(pp) +
         "\n[model]\npreset = \"gpt3-13b\"\nvocab = 1024\n[parallelism]\ntp = 8\npp = " + std::to_string(pp) +
         "\ndp = 1\nvirtual_stages = " + std::to_string(v) + "\nschedule = \"" + schedule +
         "\"\n[training]\nglobal_batch = " + std::to_string(batch) +
         "\nmicro_batch = 1\nprecision = \"bf16\"\n[sync]\noverlap = " + (overlap ? "true" : "false") + "\n";
}
}  // namespace

TEST_CASE("analysis::run_scenario: one GPU runs m forwards and backwards and the optimizer, nothing else") {
  const auto r = run(
      "[cluster]\nnode = \"dgx-a100-80gb\"\ngpus = 1\n[model]\npreset = \"gpt3-125m\"\n[parallelism]\ntp = 1\npp = 1\n"
      "dp = 1\n[training]\nglobal_batch = 8\nmicro_batch = 2\nprecision = \"bf16\"\n");
  const auto& b = r.iteration.breakdown;
  CHECK(b.exposed_comm == 0.0);
  CHECK(b.pipeline_bubble == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(r.iteration.iteration_time_s == doctest::Approx(b.compute + b.optimizer).epsilon(1e-9));
  CHECK(r.mfu > 0.0);
  CHECK(r.mfu < 1.0);
}

TEST_CASE("analysis::run_scenario: the 1F1B bubble is (p - 1) / (m + p - 1) of the pipeline time") {
  // p = 4 stages, m = 16 micro-batches, equal stages (a small vocabulary keeps the embedding and
  // logits negligible): rank 0 idles (p-1)(tf+tb) out of (m+p-1)(tf+tb) (Narayanan et al. 2021).
  // Point-to-point transfers add a little on top.
  const int p = 4, m = 16;
  const auto r = run(pipeline(p, 1, "1f1b", m));
  const auto& b = r.iteration.breakdown;
  const double pipeline_time = b.compute + b.tp_comm + b.pipeline_bubble;
  const double expected = static_cast<double>(p - 1) / (m + p - 1);
  CHECK(b.pipeline_bubble / pipeline_time >= expected * 0.99);
  CHECK(b.pipeline_bubble / pipeline_time <= expected * 1.10);
}

TEST_CASE("analysis::run_scenario: interleaving v chunks cuts the bubble by about v") {
  const auto plain = run(pipeline(4, 1, "1f1b", 16));
  const auto inter = run(pipeline(4, 2, "interleaved", 16));
  CHECK(inter.iteration.breakdown.pipeline_bubble < plain.iteration.breakdown.pipeline_bubble * 0.6);
  CHECK(inter.iteration.iteration_time_s < plain.iteration.iteration_time_s);
  // GPipe has the same bubble as 1F1B (it differs in memory, not time).
  const auto gpipe = run(pipeline(4, 1, "gpipe", 16));
  CHECK(gpipe.iteration.iteration_time_s == doctest::Approx(plain.iteration.iteration_time_s).epsilon(0.02));
}

TEST_CASE("analysis::run_scenario: overlapping gradient buckets with the backward pass hides communication") {
  const std::string base =
      "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 4\n[model]\npreset = \"gpt3-1.3b\"\n[parallelism]\ntp = 1\npp = 1\n"
      "dp = 32\n[training]\nglobal_batch = 64\nmicro_batch = 2\nprecision = \"bf16\"\n[sync]\noverlap = ";
  const auto with = run(base + "true\n");
  const auto without = run(base + "false\n");
  CHECK(with.iteration.breakdown.dp_exposed < without.iteration.breakdown.dp_exposed);
  CHECK(with.iteration.iteration_time_s < without.iteration.iteration_time_s);
  // Without overlap every bucket is exposed: the exposed time is at least the bytes over the NIC.
  CHECK(without.iteration.breakdown.dp_exposed > 0.0);
}

TEST_CASE("analysis::run_scenario: memoised data-parallel collectives equal the full flow simulation") {
  // One pipeline stage, so the memo's claim (the stage's tp concurrent DP groups alone on the
  // fabric) holds exactly; the full simulation runs every bucket's collectives as live flows.
  const std::string body =
      "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 2\n[model]\npreset = \"gpt3-1.3b\"\n[parallelism]\ntp = 8\npp = 1\n"
      "dp = 2\n[training]\nglobal_batch = 8\nmicro_batch = 1\nprecision = \"bf16\"\n[sync]\nbucket_mb = 100\n";
  const auto memo = run(body, false);
  const auto full = run(body, true);
  CHECK(memo.iteration.iteration_time_s == doctest::Approx(full.iteration.iteration_time_s).epsilon(1e-6));
  CHECK(full.iteration.flows > memo.iteration.flows / 2);
}

TEST_CASE("analysis::run_scenario: the same scenario gives the same numbers") {
  const auto a = analysis::run_json(run(pipeline(4, 2, "interleaved", 8)));
  const auto b = analysis::run_json(run(pipeline(4, 2, "interleaved", 8)));
  const auto strip = [](std::string s) { return s.substr(0, s.find("\"wall_s\"")); };
  CHECK(strip(a) == strip(b));
}

TEST_CASE("analysis::run_scenario: model FLOPs follow the SC'21 formula and MFU uses them") {
  const auto r = run(pipeline(2, 1, "1f1b", 8));
  const auto& m = r.spec.model;
  const double B = 8, s = m.seq_len, l = m.layers, h = m.hidden, V = m.vocab;
  const double sc21 = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  CHECK(r.iteration.model_flops == doctest::Approx(sc21).epsilon(1e-9));
  CHECK(r.mfu == doctest::Approx(sc21 / r.iteration.iteration_time_s / r.gpus / 312e12).epsilon(1e-9));
}
