// An MoE layer's shared experts run their own sequence-parallel pair over tp (stage_cost_parts.h,
// shared_expert_tensor_parallel): an all-gather before fc1 and a reduce-scatter after fc2 each pass,
// on the compute stream without moe_shared_expert_overlap (blocking, or behind the shared GEMMs with
// tp_comm_overlap), on the shared experts' stream with it. None at tp 1 or without shared experts.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analysis/run.h"
#include "analysis/run_report.h"
#include "scenarios/loader.h"
#include "workloads/model/mamba_ops.h"

using namespace clustersim;

namespace {

// A shortened Llama 4 Maverick shape (top-1 of 16 experts and one shared expert on every other
// layer: 4 MoE and 4 dense layers) on two DGX H100 at tp 2 with sequence parallelism, EP 8.
// dp 8 x micro-batch 1 of a global batch of 32: 4 micro-batches.
const std::string kMoe =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\nlayers = 8\nhidden = 5120\nheads = 40\nkv_heads = 8\n"
    "seq_len = 8192\nvocab = 202048\nffn_hidden = 16384\nexperts = 16\nexperts_per_token = 1\nmoe_ffn_hidden = 8192\n"
    "shared_experts = 1\nfirst_dense_layers = 1\nmoe_layer_freq = 2\nmlp = \"swiglu\"\nnorm = \"rmsnorm\"\n"
    "[parallelism]\ntp = 2\npp = 1\ndp = 8\nep = 8\nsequence_parallel = true\n"
    "[training]\nglobal_batch = 32\nmicro_batch = 1\n";

// One b.s.h activation of the micro-batch in bf16, and what one GPU sends of it in one ring
// all-gather or reduce-scatter over tp 2: (tp - 1) / tp of it.
constexpr double kAct = 1.0 * 8192.0 * 5120.0 * 2.0;
constexpr double kStep = kAct * (2.0 - 1.0) / 2.0;

analysis::RunReport run(const std::string& body, std::vector<std::string> sets, bool explain = false) {
  analysis::RunOptions o;
  o.ignore_memory = true;
  o.explain = explain;
  return analysis::run_scenario(scenarios::parse_scenario(body, "shared.toml", sets), o);
}

const workloads::ExplainedComm* comm_of(const analysis::RunReport& r, const std::string& kind, const std::string& what) {
  for (const auto& x : r.iteration.explained)
    for (const auto& k : x.kinds)
      if (k.kind == kind)
        for (const auto& c : k.comm)
          if (c.what == what) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("analysis::run_scenario: the shared experts' all-gather and reduce-scatter are charged without the overlap") {
  const auto none = run(kMoe, {"model.shared_experts=0"});
  const auto off = run(kMoe, {});
  const auto on = run(kMoe, {"parallelism.moe_shared_expert_overlap=true"});
  // Without shared experts: per micro-batch a dense layer sends two all-gathers and two
  // reduce-scatters forward (4 steps) and backward those and the two column-parallel inputs'
  // re-gathers (6 steps), an MoE layer its attention's share (2 + 3 steps); 4 dense + 4 MoE
  // layers, 4 micro-batches.
  CHECK(none.iteration.tp_bytes_per_gpu == doctest::Approx((4 * (4 + 6) + 4 * (2 + 3)) * kStep * 4));
  // The shared experts add one gather and one scatter per MoE layer and pass:
  // 2 x (tp - 1) / tp x s x b x h x 2 B forward, the same backward and, their TE fc1 re-gathering
  // its input for the weight gradient, one more gather.
  const double added = (2.0 + 3.0) * kStep * 4 * 4;
  CHECK(off.iteration.tp_bytes_per_gpu - none.iteration.tp_bytes_per_gpu == doctest::Approx(added));
  // On their own stream (parallel_mode None linears after a torch.distributed gather) fc1 keeps
  // the gathered input: no re-gather.
  CHECK(on.iteration.tp_bytes_per_gpu - none.iteration.tp_bytes_per_gpu == doctest::Approx(2.0 * kStep * 2 * 4 * 4));
  // Blocking on the compute stream: more exposed tensor-parallel time, a longer iteration.
  CHECK(off.iteration.breakdown.tp_comm > none.iteration.breakdown.tp_comm);
  CHECK(off.iteration.iteration_time_s > none.iteration.iteration_time_s);
  CHECK(off.iteration.ep_bytes_per_gpu == doctest::Approx(none.iteration.ep_bytes_per_gpu));
}

TEST_CASE("analysis::run_scenario: full recompute reruns the shared experts' pair, tp_comm_overlap hides part of it") {
  const auto none = run(kMoe, {"model.shared_experts=0", "training.recompute=full"});
  const auto off = run(kMoe, {"training.recompute=full"});
  // Forward 2 steps, backward 3 (the re-gather) and the rerun forward's 2.
  CHECK(off.iteration.tp_bytes_per_gpu - none.iteration.tp_bytes_per_gpu == doctest::Approx((2.0 + 3.0 + 2.0) * kStep * 4 * 4));
  const auto blocking = run(kMoe, {});
  const auto blocking_none = run(kMoe, {"model.shared_experts=0"});
  const auto ub = run(kMoe, {"sync.tp_comm_overlap=true"});
  const auto ub_none = run(kMoe, {"model.shared_experts=0", "sync.tp_comm_overlap=true"});
  CHECK(ub.iteration.tp_bytes_per_gpu - ub_none.iteration.tp_bytes_per_gpu == doctest::Approx((2.0 + 3.0) * kStep * 4 * 4));
  const double exposed_blocking = blocking.iteration.breakdown.tp_comm - blocking_none.iteration.breakdown.tp_comm;
  const double exposed_ub = ub.iteration.breakdown.tp_comm - ub_none.iteration.breakdown.tp_comm;
  CHECK(exposed_blocking > 0.0);
  CHECK(exposed_ub < 0.5 * exposed_blocking);
}

TEST_CASE("analysis::run_scenario: at tp 1 the shared experts exchange nothing of their own") {
  const std::vector<std::string> tp1{"parallelism.tp=1", "parallelism.dp=16", "parallelism.sequence_parallel=false"};
  std::vector<std::string> tp1_none = tp1;
  tp1_none.push_back("model.shared_experts=0");
  const auto with = run(kMoe, tp1);
  const auto without = run(kMoe, tp1_none);
  CHECK(with.iteration.tp_bytes_per_gpu == 0.0);
  CHECK(without.iteration.tp_bytes_per_gpu == 0.0);
  CHECK(with.iteration.breakdown.tp_comm == 0.0);
}

TEST_CASE("analysis::run --explain: the MoE layer lists its shared experts' pair, how it runs and its bytes") {
  const auto off = run(kMoe, {}, true);
  const workloads::ExplainedComm* c = comm_of(off, "moe", "shared-expert tensor-parallel");
  REQUIRE(c != nullptr);
  CHECK(c->fwd_bytes == doctest::Approx(2.0 * kStep));
  CHECK(c->bwd_bytes == doctest::Approx(3.0 * kStep));  // the output-gradient gather, the re-gather, the scatter
  CHECK(c->fwd_s > 0.0);
  CHECK(c->overlap.find("blocking") != std::string::npos);
  CHECK(comm_of(off, "dense", "shared-expert tensor-parallel") == nullptr);
  const auto on = run(kMoe, {"parallelism.moe_shared_expert_overlap=true"}, true);
  const workloads::ExplainedComm* s = comm_of(on, "moe", "shared-expert tensor-parallel");
  REQUIRE(s != nullptr);
  CHECK(s->overlap.find("moe_shared_expert_overlap") != std::string::npos);
  const auto ub = run(kMoe, {"sync.tp_comm_overlap=true"}, true);
  const workloads::ExplainedComm* u = comm_of(ub, "moe", "shared-expert tensor-parallel");
  REQUIRE(u != nullptr);
  CHECK(u->hidden_s > 0.0);
  CHECK(comm_of(run(kMoe, {"model.shared_experts=0"}, true), "moe", "shared-expert tensor-parallel") == nullptr);
}

TEST_CASE("analysis::run_scenario: a hybrid model's MoE layers charge their shared experts' pair at tp 2") {
  // Nemotron 3 Nano (Mamba-2, attention and MoE layers; one shared expert of width 3712) at tp 2.
  const std::string nano =
      "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"nemotron-3-nano-30b-a3b\"\n"
      "[parallelism]\ntp = 2\npp = 1\ndp = 4\nep = 4\nsequence_parallel = true\n"
      "[training]\nglobal_batch = 8\nmicro_batch = 1\n";
  const auto with = run(nano, {});
  const auto without = run(nano, {"model.shared_experts=0"});
  const workloads::ModelSpec& m = with.spec.model;
  const int moe_layers = m.layers_of_kind_in(workloads::LayerKind::Moe, 0, m.layers);
  REQUIRE(moe_layers > 0);
  const double act = 1.0 * m.seq_len * m.hidden * 2.0;
  // 2 micro-batches; one gather and one scatter of (tp - 1) / tp of the activation a pass, and
  // backward fc1's input re-gather.
  const double added = (2.0 + 3.0) * act / 2.0 * moe_layers * 2;
  CHECK(with.iteration.tp_bytes_per_gpu - without.iteration.tp_bytes_per_gpu == doctest::Approx(added));
  CHECK(with.iteration.breakdown.tp_comm > without.iteration.breakdown.tp_comm);
}
