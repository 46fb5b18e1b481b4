// [training] cross_entropy (model/cross_entropy_kernels.h): PyTorch's eager F.cross_entropy on a
// .float() copy of the logits streams 22 B per logit element in 3 kernels forward and 26 B in 4
// backward (16 B forward where the row fits shared memory), holds 12 B per element at the loss's
// peak where the fused pass holds 4, and "megatron-unfused" charges exactly what the constant
// cross_entropy_unfused = 1 does.
#include <doctest/doctest.h>

#include "tests/workloads/memory_test_util.h"
#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/memory/allocator_replay.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {

ComputeModel h100(bool unfused_constant = false) {
  ComputeConstants c;
  if (unfused_constant) c.set("cross_entropy_unfused", 1.0);
  return ComputeModel(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, Precision::Bf16, c);
}

OpShape shape(CrossEntropy impl, int tp) {
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 4096;
  sh.tp = tp;
  sh.sequence_parallel = tp > 1;
  sh.precision_bytes = activation_bytes(Precision::Bf16);
  sh.cross_entropy = impl;
  return sh;
}

// GPT-3 1.3B on one GPU of eight data-parallel ranks, micro-batch 4 of 2048 tokens.
MemoryRequest small_request(CrossEntropy impl) {
  MemoryRequest q = gpt3_1_3b_dp8_request();
  q.training.cross_entropy = impl;
  q.options.include_runtime = false;
  return q;
}

const MemoryLine& loss_line(const MemoryBreakdown& b) {
  for (const MemoryLine& l : b.lines)
    if (l.phases == kLoss && l.name.find("MTP") == std::string::npos) return l;
  FAIL("no loss line");
  return b.lines.front();
}

}  // namespace

TEST_CASE("workloads::ComputeModel: the eager cross-entropy streams its counted bytes and kernels at the HBM rate") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  const ComputeModel m = h100();
  const ComputeConstants& c = m.constants();
  const double stream = m.memory_bandwidth().value * c.get("hbm_stream_eff") * c.get("pointwise_mem_eff");
  const double launch = c.get("kernel_launch_us") * 1e-6;
  // tp 1: 128256 classes a row, wider than shared memory holds: the three-read softmax.
  {
    const auto fused_head = head_ops(llama, shape(CrossEntropy::Fused, 1));
    const auto eager_head = head_ops(llama, shape(CrossEntropy::TorchEager, 1));
    const OpCost& fused = op_named(fused_head, "cross_entropy");
    const OpCost& eager = op_named(eager_head, "cross_entropy");
    const double elements = 4096.0 * llama.vocab;
    // .float() 6 + log_softmax 16 (+ nll, no bytes per element); zero fill 4 + log_softmax backward
    // 16 + the cast back 6 (+ the nll scatter).
    CHECK(m.op_time(eager, Pass::Forward).seconds() == doctest::Approx(elements * 22 / stream + 3 * launch).epsilon(1e-6));
    CHECK(m.op_time(eager, Pass::Backward).seconds() == doctest::Approx(elements * 26 / stream + 4 * launch).epsilon(1e-6));
    CHECK(m.launches(eager, Pass::Forward) == 3);
    CHECK(m.launches(eager, Pass::Backward) == 4);
    // Over the fused pass (6 B a way, one kernel): 16 B and 2 kernels forward, 20 B and 3 backward.
    CHECK((m.op_time(eager, Pass::Forward) - m.op_time(fused, Pass::Forward)).seconds() ==
          doctest::Approx(elements * 16 / stream + 2 * launch).epsilon(1e-5));
    CHECK((m.op_time(eager, Pass::Backward) - m.op_time(fused, Pass::Backward)).seconds() ==
          doctest::Approx(elements * 20 / stream + 3 * launch).epsilon(1e-5));
    // The logits GEMM and the final norm do not change.
    for (std::size_t i = 0; i + 1 < eager_head.size(); ++i) {
      CHECK(m.op_time(eager_head[i], Pass::Forward) == m.op_time(fused_head[i], Pass::Forward));
      CHECK(m.op_time(eager_head[i], Pass::Backward) == m.op_time(fused_head[i], Pass::Backward));
    }
  }
  // tp 16: 8016 classes a row fit in 48 KiB of shared memory: cunn_SoftMaxForwardSmem reads once.
  {
    const auto head = head_ops(llama, shape(CrossEntropy::TorchEager, 16));
    const OpCost& eager = op_named(head, "cross_entropy");
    const double elements = 4096.0 * llama.vocab / 16;
    CHECK(m.op_time(eager, Pass::Forward).seconds() == doctest::Approx(elements * 14 / stream + 3 * launch).epsilon(1e-6));
    CHECK(m.op_time(eager, Pass::Backward).seconds() == doctest::Approx(elements * 26 / stream + 4 * launch).epsilon(1e-6));
  }
}

TEST_CASE("workloads::ComputeModel: cross_entropy = megatron-unfused charges exactly what cross_entropy_unfused = 1 does") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  const auto key_head = head_ops(llama, shape(CrossEntropy::MegatronUnfused, 4));
  const auto fused_head = head_ops(llama, shape(CrossEntropy::Fused, 4));
  const auto eager_head = head_ops(llama, shape(CrossEntropy::TorchEager, 4));
  const OpCost& by_key = op_named(key_head, "cross_entropy");
  const OpCost& fused = op_named(fused_head, "cross_entropy");
  const ComputeModel plain = h100(), constant = h100(true);
  for (Pass p : {Pass::Forward, Pass::Backward}) {
    CHECK(plain.op_time(by_key, p) == constant.op_time(fused, p));
    CHECK(plain.launches(by_key, p) == constant.launches(fused, p));
    CHECK(plain.op_time(by_key, p) != plain.op_time(fused, p));
  }
  // The key wins over the constant: torch-eager stays torch-eager under cross_entropy_unfused = 1.
  const OpCost& eager = op_named(eager_head, "cross_entropy");
  CHECK(constant.op_time(eager, Pass::Forward) == plain.op_time(eager, Pass::Forward));
}

TEST_CASE("workloads::estimate_memory: the eager cross-entropy's loss line is 12 B per logit element, 8 B over fused") {
  const double elements = 2048.0 * 4 * find_model_preset("gpt3-1.3b")->vocab;  // s * b * V / t
  const MemoryBreakdown fused = stage_memory(small_request(CrossEntropy::Fused), 0);
  const MemoryBreakdown eager = stage_memory(small_request(CrossEntropy::TorchEager), 0);
  CHECK(loss_line(fused).bytes.value == doctest::Approx(elements * 4));
  CHECK(loss_line(eager).bytes.value == doctest::Approx(elements * 12));
  CHECK(loss_line(eager).formula.find("grad_input 4") != std::string::npos);
  CHECK(loss_line(eager).formula.find(".float() copy 4") != std::string::npos);
  // The loss is this stage's largest transient either way, so the total moves by the same 8 B.
  REQUIRE(loss_line(fused).at_peak);
  REQUIRE(loss_line(eager).at_peak);
  CHECK((eager.total - fused.total).value == doctest::Approx(elements * 8));
}

TEST_CASE("workloads::replay_training_iteration: the eager cross-entropy's backward peak allocates 8 B per logit element over fused") {
  const double elements = 2048.0 * 4 * find_model_preset("gpt3-1.3b")->vocab;
  const AllocatorReplay fused = replay_training_iteration(small_request(CrossEntropy::Fused), AllocatorOptions{});
  const AllocatorReplay eager = replay_training_iteration(small_request(CrossEntropy::TorchEager), AllocatorOptions{});
  CHECK_FALSE(eager.out_of_memory);
  // Fused: the 4 B copy beside the last forward's activations. Eager: those activations, the
  // held log-probs 4, nll_loss's gradient 4 and log_softmax's gradInput 4 = 12 B.
  CHECK(static_cast<double>(eager.stats.peak_allocated - fused.stats.peak_allocated) == elements * 8);
}
