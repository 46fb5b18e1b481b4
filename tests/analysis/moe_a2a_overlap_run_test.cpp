// Megatron-Core's MoE all-to-all overlaps on whole runs ([parallelism] moe_a2a_overlap,
// moe_shared_expert_overlap): with either on, less of the expert all-to-all is exposed and the
// iteration is faster; the bytes sent do not change.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {

// A shortened DeepSeek-V3 (MLA, 256 routed experts top-8, one shared expert) on two DGX H100 with
// EP 16 across the two nodes.
const std::string kDeepSeek =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"deepseek-v3\"\nlayers = 8\nmtp_layers = 0\n"
    "[parallelism]\ntp = 1\npp = 1\ndp = 16\nep = 16\n[training]\nglobal_batch = 64\nmicro_batch = 1\n";

analysis::RunReport run(const std::string& body, std::vector<std::string> sets) {
  analysis::RunOptions o;
  o.ignore_memory = true;
  return analysis::run_scenario(scenarios::parse_scenario(body, "a2a.toml", sets), o);
}

}  // namespace

TEST_CASE("analysis::run_scenario: moe_a2a_overlap hides the expert all-to-all behind the paired micro-batch") {
  const auto off = run(kDeepSeek, {});
  const auto on = run(kDeepSeek, {"parallelism.moe_a2a_overlap=true"});
  CHECK(off.iteration.breakdown.ep_comm > 0.0);
  CHECK(on.iteration.breakdown.ep_comm < 0.8 * off.iteration.breakdown.ep_comm);
  CHECK(on.iteration.iteration_time_s < off.iteration.iteration_time_s);
  // The first forward and the last backward run alone: some of it stays exposed.
  CHECK(on.iteration.breakdown.ep_comm > 0.0);
  CHECK(on.iteration.ep_bytes_per_gpu == doctest::Approx(off.iteration.ep_bytes_per_gpu));
  // The SMs the all-to-alls take: with none taken the pair hides more.
  const auto free = run(kDeepSeek, {"parallelism.moe_a2a_overlap=true", "model_constants.ep_overlap_sm_share=0"});
  CHECK(free.iteration.iteration_time_s < on.iteration.iteration_time_s);
}

TEST_CASE("analysis::run_scenario: the flex dispatcher's SMs set how much compute the combined pair loses beside its all-to-alls") {
  // HybridEP with the SMs of Megatron-Bridge's scripts (32), DeepEP's default (20) and its own
  // default across nodes (8): the same bytes; more SMs held, less compute beside the all-to-alls,
  // a longer step.
  auto with = [&](std::vector<std::string> sets) {
    sets.push_back("parallelism.moe_a2a_overlap=true");
    return run(kDeepSeek, sets).iteration;
  };
  const auto hybrid32 = with({"parallelism.moe_dispatcher=\"hybridep\"", "parallelism.moe_dispatcher_sms=32"});
  const auto hybrid20 = with({"parallelism.moe_dispatcher=\"hybridep\"", "parallelism.moe_dispatcher_sms=20"});
  const auto hybrid8 = with({"parallelism.moe_dispatcher=\"hybridep\""});
  CHECK(hybrid32.ep_bytes_per_gpu == doctest::Approx(hybrid8.ep_bytes_per_gpu));
  CHECK(hybrid32.iteration_time_s > hybrid20.iteration_time_s);
  CHECK(hybrid20.iteration_time_s > hybrid8.iteration_time_s);
  // DeepEP's default is 20 SMs; the NCCL all-to-all's constant does not reach it.
  const auto deepep = with({"parallelism.moe_dispatcher=\"deepep\""});
  CHECK(with({"parallelism.moe_dispatcher=\"deepep\"", "parallelism.moe_dispatcher_sms=20"}).iteration_time_s ==
        doctest::Approx(deepep.iteration_time_s));
  CHECK(with({"parallelism.moe_dispatcher=\"deepep\"", "model_constants.ep_overlap_sm_share=0"}).iteration_time_s ==
        doctest::Approx(deepep.iteration_time_s));
  CHECK(with({"parallelism.moe_dispatcher=\"deepep\"", "parallelism.moe_dispatcher_sms=40"}).iteration_time_s >
        deepep.iteration_time_s);
}

TEST_CASE("analysis::run_scenario: moe_shared_expert_overlap hides part of each all-to-all behind the shared experts") {
  const auto off = run(kDeepSeek, {});
  const auto on = run(kDeepSeek, {"parallelism.moe_shared_expert_overlap=true"});
  CHECK(on.iteration.breakdown.ep_comm < off.iteration.breakdown.ep_comm);
  CHECK(on.iteration.iteration_time_s < off.iteration.iteration_time_s);
  CHECK(on.iteration.ep_bytes_per_gpu == doctest::Approx(off.iteration.ep_bytes_per_gpu));
}

namespace {

// The shortened DeepSeek-V3 on two pipeline stages of two chunks each (EP 8 inside a node).
const std::string kDeepSeekPipelined =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"deepseek-v3\"\nlayers = 8\nmtp_layers = 0\n"
    "[parallelism]\ntp = 1\npp = 2\nvirtual_stages = 2\ndp = 8\nep = 8\n[training]\nglobal_batch = 64\nmicro_batch = 1\niterations = 1\n";

// Rank 0's activation sends ("send F...") that start when one of its backward passes ends (a
// flow's span starts after the send's launch latency, microseconds; passes last milliseconds).
int forward_sends_at_backward_ends(const analysis::RunReport& r) {
  std::vector<double> backward_ends;
  for (const auto& s : r.iteration.timeline)
    if (s.rank == 0 && s.stream == 0 && s.kind == workloads::SpanKind::Backward) backward_ends.push_back(s.end_s);
  int n = 0;
  for (const auto& s : r.iteration.timeline) {
    if (s.rank != 0 || s.stream != 1 || s.name.rfind("send F", 0) != 0) continue;
    for (const double end : backward_ends)
      if (s.start_s >= end && s.start_s - end < 1e-5) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("analysis::run_scenario: a combined 1F1B pair sends its forward's output when the pair ends") {
  // Megatron-Core's TransformerModelChunkSchedulePlan.run posts post_forward (the activation send)
  // after every layer of the pair, the paired backward's included: every steady-phase forward
  // output of rank 0 leaves at the end of the backward it ran with. Without the overlap a forward's
  // output leaves at the forward's own end, never at a backward's.
  analysis::RunOptions o;
  o.ignore_memory = true;
  o.timeline = true;
  o.check = true;
  const auto off = analysis::run_scenario(scenarios::parse_scenario(kDeepSeekPipelined, "a2a.toml", {}), o);
  const auto on = analysis::run_scenario(
      scenarios::parse_scenario(kDeepSeekPipelined, "a2a.toml", {"parallelism.moe_a2a_overlap=true"}), o);
  CHECK(forward_sends_at_backward_ends(off) == 0);
  // m = 8 micro-batches x 2 chunks = 16 forwards on rank 0; warm-up (1 x 2 + 1 x 2 + 1 = 5) run
  // alone, the other 11 are paired, and all 16 send (rank 0's chunks feed rank 1).
  CHECK(forward_sends_at_backward_ends(on) == 11);
  REQUIRE(on.invariants.has_value());
  CHECK_MESSAGE(on.invariants->all_hold(), on.invariants->summary());
}

namespace {

// A shortened Llama 4 Maverick (top-1 of 16 experts and one shared expert on every other layer)
// on two DGX H100 at tp 2 with sequence parallelism, EP 8 across the two nodes.
const std::string kLlama4 =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\nlayers = 8\nhidden = 5120\nheads = 40\nkv_heads = 8\n"
    "seq_len = 8192\nvocab = 202048\nffn_hidden = 16384\nexperts = 16\nexperts_per_token = 1\nmoe_ffn_hidden = 8192\n"
    "shared_experts = 1\nfirst_dense_layers = 1\nmoe_layer_freq = 2\nmlp = \"swiglu\"\nnorm = \"rmsnorm\"\n"
    "[parallelism]\ntp = 2\npp = 1\ndp = 8\nep = 8\nsequence_parallel = true\n"
    "[training]\nglobal_batch = 32\nmicro_batch = 1\n";

}  // namespace

TEST_CASE("analysis::run_scenario: with tp and the shared-expert overlap the shared experts gather and scatter their own tokens") {
  const auto off = run(kLlama4, {});
  const auto on = run(kLlama4, {"parallelism.moe_shared_expert_overlap=true"});
  // The shared experts' own all-gather and reduce-scatter run either way (on the compute stream
  // without the overlap, on their own stream with it: shared_expert_tp_test.cpp has the bytes);
  // on their stream fc1 keeps the gathered input, so the backward does not re-gather it.
  CHECK(on.iteration.tp_bytes_per_gpu < off.iteration.tp_bytes_per_gpu);
  CHECK(on.iteration.ep_bytes_per_gpu == doctest::Approx(off.iteration.ep_bytes_per_gpu));
  CHECK(on.iteration.breakdown.ep_comm < off.iteration.breakdown.ep_comm);
  // At tp 1 the shared experts hold whole tokens: no exchange of their own.
  const auto tp1_off = run(kLlama4, {"parallelism.tp=1", "parallelism.dp=16", "parallelism.sequence_parallel=false"});
  const auto tp1_on = run(kLlama4, {"parallelism.tp=1", "parallelism.dp=16", "parallelism.sequence_parallel=false",
                                    "parallelism.moe_shared_expert_overlap=true"});
  CHECK(tp1_on.iteration.tp_bytes_per_gpu == doctest::Approx(tp1_off.iteration.tp_bytes_per_gpu));
  // moe_apply_probs_on_input adds device time, no traffic.
  const auto probs = run(kLlama4, {"model.moe_apply_probs_on_input=true"});
  CHECK(probs.iteration.iteration_time_s > off.iteration.iteration_time_s);
  CHECK(probs.iteration.tp_bytes_per_gpu == doctest::Approx(off.iteration.tp_bytes_per_gpu));
  CHECK(probs.iteration.ep_bytes_per_gpu == doctest::Approx(off.iteration.ep_bytes_per_gpu));
}
