// [sync] zero3_impl = "torch-fsdp1": PyTorch FSDP1's gradient copy-out on the compute stream, and
// its casts and divides around the per-layer collectives (workloads/training/torch_fsdp1.h).
// gpt3-1.3b at sequence 512 on one DGX H100, ZeRO-3 over dp 8, bf16 with fp32 gradient reduction.
#include <doctest/doctest.h>

#include "workloads/training/iteration_sim.h"
#include "workloads/training/torch_fsdp1.h"
#include "iteration_fixture.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

testing::Job fsdp_job(Zero3Impl impl) {
  testing::Job j;
  j.cluster = testing::nodes_of("dgx-h100", 1);
  j.model = testing::model_preset("gpt3-1.3b");
  j.model.seq_len = 512;
  j.parallel.dp = 8;
  j.parallel.zero = 3;
  j.training.global_batch = 8;
  j.training.micro_batch = 1;
  j.training.precision = topology::Precision::Bf16;
  j.sync.zero3_impl = impl;
  return j;
}

const ExplainedOp* find_op(const ExplainedLayerKind& k, std::string_view name, std::string_view pass) {
  for (const ExplainedOp& op : k.ops)
    if (op.name == name && op.pass == pass) return &op;
  return nullptr;
}

}  // namespace

TEST_CASE("workloads::fsdp1_predivide_factor: doubles from 1 while it divides n and stays below n / factor") {
  CHECK(fsdp1_predivide_factor(1) == 1);
  CHECK(fsdp1_predivide_factor(2) == 2);
  CHECK(fsdp1_predivide_factor(8) == 4);
  CHECK(fsdp1_predivide_factor(16) == 4);
  CHECK(fsdp1_predivide_factor(64) == 8);
  CHECK(fsdp1_predivide_factor(6) == 4);  // 6 % 2 == 0 and 6 / 2 > 2: 2 doubles to 4 (the loop tests before doubling)
}

TEST_CASE("workloads::fsdp1_layer_bytes: bf16 parameters with fp32 reduction over 8 ranks") {
  const Fsdp1LayerBytes b = fsdp1_layer_bytes(2, 4, 4, 8);
  CHECK(b.grad_copy == 4);            // read + write of the bf16 gradient
  CHECK(b.before_scatter == 6 + 8);   // upcast 2 + 4, pre-divide by 4 in place 4 + 4
  CHECK(b.after_scatter == 8.0 / 8);  // post-divide by 2 of the fp32 shard
  CHECK(b.before_gather == 6.0 / 8);  // fp32 shard to bf16
  // Pure bf16 (reduce dtype = parameter dtype) over 2 ranks: no upcast, pre-divide 2, no post-divide.
  const Fsdp1LayerBytes pure = fsdp1_layer_bytes(2, 2, 2, 2);
  CHECK(pure.before_scatter == 4);
  CHECK(pure.after_scatter == 0);
  CHECK(pure.before_gather == 0);
  CHECK(fsdp1_layer_bytes(2, 4, 4, 1).grad_copy == 0);  // nothing is sharded
}

TEST_CASE("workloads::simulate_iteration: torch-fsdp1 copies each layer's gradient in the backward and lengthens the step") {
  const IterationResult coalesced = testing::simulate_job(fsdp_job(Zero3Impl::Coalesced), {.explain = true});
  const IterationResult fsdp1 = testing::simulate_job(fsdp_job(Zero3Impl::TorchFsdp1), {.explain = true});
  REQUIRE(!fsdp1.explained.empty());
  REQUIRE(!coalesced.explained.empty());
  const ExplainedLayerKind& with = fsdp1.explained[0].kinds.at(0);
  const ExplainedLayerKind& without = coalesced.explained[0].kinds.at(0);
  CHECK(find_op(without, "fsdp_flat_grad_copy", "backward") == nullptr);
  const ExplainedOp* copy = find_op(with, "fsdp_flat_grad_copy", "backward");
  REQUIRE(copy != nullptr);
  const ExplainedOp* fwd = find_op(with, "fsdp_flat_grad_copy", "forward");
  if (fwd != nullptr) CHECK(fwd->device_s == 0);
  const ModelSpec m = fsdp_job(Zero3Impl::TorchFsdp1).model;
  CHECK(copy->bytes == doctest::Approx(4.0 * m.layer_parameters_per_ep_rank(1)).epsilon(1e-9));
  CHECK(with.bwd_s == doctest::Approx(without.bwd_s + copy->device_s).epsilon(1e-9));
  CHECK(with.fwd_s == doctest::Approx(without.fwd_s).epsilon(1e-12));
  CHECK(fsdp1.iteration_time_s > coalesced.iteration_time_s);
}
