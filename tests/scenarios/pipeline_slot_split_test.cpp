// The embedding and loss as pipeline layer slots (Megatron-Core's account_for_embedding_in_
// pipeline_split / account_for_loss_in_pipeline_split, set by Megatron-Bridge's Llama 3.1 405B
// recipe): chunk and stage layer counts, the loader's checks and what the stage costs build.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "workloads/specs.h"

using namespace clustersim;

namespace {

workloads::ParallelSpec slots(int pp, int vp) {
  workloads::ParallelSpec p;
  p.pp = pp;
  p.virtual_stages = vp;
  p.embedding_in_split = p.loss_in_split = true;
  return p;
}

std::string scenario(int pp, int vp, int nodes, int global_batch, const std::string& extra = "") {
  return "name = \"405b\"\n[cluster]\nnode = \"dgx-h100\"\nnodes = " + std::to_string(nodes) +
         "\n[model]\npreset = \"llama3-405b\"\nseq_len = 8192\n[parallelism]\ntp = 8\npp = " + std::to_string(pp) +
         "\ndp = 1\nvirtual_stages = " + std::to_string(vp) +
         "\nsequence_parallel = true\ndistributed_optimizer = true\n"
         "account_for_embedding_in_pipeline_split = true\naccount_for_loss_in_pipeline_split = true\n" + extra +
         "[training]\nglobal_batch = " + std::to_string(global_batch) + "\nmicro_batch = 1\nprecision = \"bf16\"\n";
}

}  // namespace

TEST_CASE("workloads::ParallelSpec::layers_in_chunk: the embedding and the loss each take one layer slot") {
  // 126 layers + 2 slots over pp 8 x vp 8 = 64 chunks of 2: the first and last chunks hold 1.
  const workloads::ParallelSpec p = slots(8, 8);
  CHECK(p.layers_in_chunk(126, 0) == 1);
  CHECK(p.layers_in_chunk(126, 1) == 2);
  CHECK(p.layers_in_chunk(126, 63) == 1);
  int total = 0;
  for (int vs = 0; vs < 64; ++vs) total += p.layers_in_chunk(126, vs);
  CHECK(total == 126);
  CHECK(p.layers_on_stage(126, 0) == 15);
  CHECK(p.layers_on_stage(126, 3) == 16);
  CHECK(p.layers_on_stage(126, 7) == 15);
  CHECK(p.uneven_stages());
  // pp 16 x vp 8: one slot per chunk, so the first chunk is the embedding alone.
  const workloads::ParallelSpec q = slots(16, 8);
  CHECK(q.layers_in_chunk(126, 0) == 0);
  CHECK(q.layers_in_chunk(126, 127) == 0);
  CHECK(q.layers_on_stage(126, 0) == 7);
  CHECK(q.layers_on_stage(126, 8) == 8);
  // Only the embedding: 126 + 1 = 127 does not split; 63 + 1 over 8 chunks does.
  workloads::ParallelSpec e;
  e.pp = 4, e.virtual_stages = 2, e.embedding_in_split = true;
  CHECK(e.layers_in_chunk(63, 0) == 7);
  CHECK(e.layers_in_chunk(63, 7) == 8);
  CHECK(e.layers_on_stage(63, 0) == 15);
  CHECK(e.layers_on_stage(63, 3) == 16);
}

TEST_CASE("scenarios::parse_scenario: account_for_embedding/loss_in_pipeline_split are checked and shown") {
  const scenarios::ScenarioSpec s = scenarios::parse_scenario(scenario(8, 8, 8, 64), "slots.toml");
  CHECK(s.parallel.embedding_in_split);
  CHECK(s.parallel.loss_in_split);
  CHECK(s.parallel.layers_on_stage(s.model.layers, 0) == 15);
  // 128 slots do not split over pp 8 x vp 3 = 24 chunks.
  try {
    (void)scenarios::parse_scenario(scenario(8, 3, 8, 64), "bad.toml");
    FAIL("expected an error");
  } catch (const scenarios::ScenarioError& e) {
    const std::string what = e.what();
    CHECK(what.find("does not divide over pp * virtual_stages = 24") != std::string::npos);
  }
  // Exclusive with explicit first/last stage counts.
  try {
    (void)scenarios::parse_scenario(scenario(8, 8, 8, 64, "first_stage_layers = 15\n"), "both.toml");
    FAIL("expected an error");
  } catch (const scenarios::ScenarioError& e) {
    CHECK(std::string(e.what()).find("two ways to split") != std::string::npos);
  }
}
