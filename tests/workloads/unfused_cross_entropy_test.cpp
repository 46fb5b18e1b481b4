// Megatron-Core's unfused vocab-parallel cross-entropy (the constant cross_entropy_unfused = 1, which
// the modern rows of dgxc-benchmarking's NeMo 1 Grok-1 and GPT-3 175B yamls set): the loss op moves
// 38 B per logit element in 6 kernels forward and 14 B in 2 kernels backward, over the default's
// single fused pass (the bf16 logits and their fp32 copy, 6 B each way); no other op changes.
#include <doctest/doctest.h>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;
using topology::Precision;

namespace {

ComputeModel model(bool unfused) {
  ComputeConstants c;
  if (unfused) c.set("cross_entropy_unfused", 1.0);
  return ComputeModel(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, Precision::Bf16, c);
}

OpShape shape() {
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 4096;
  sh.tp = 4;
  sh.sequence_parallel = true;
  sh.precision_bytes = activation_bytes(Precision::Bf16);
  return sh;
}

}  // namespace

TEST_CASE("workloads::ComputeModel: the unfused cross-entropy streams its six forward and two backward passes") {
  const ModelSpec llama = *find_model_preset("llama3-8b");
  const auto head = head_ops(llama, shape());
  const ComputeModel fused = model(false), unfused = model(true);
  const ComputeConstants& c = unfused.constants();
  CHECK(fused.constants().get("cross_entropy_unfused") == 0.0);  // the fused pass by default
  const OpCost& loss = op_named(head, "cross_entropy");
  const double elements = 4096.0 * llama.vocab / 4;  // [tokens, vocab / tp]
  const double stream = unfused.memory_bandwidth().value * c.get("hbm_stream_eff") * c.get("pointwise_mem_eff");
  const double launch = c.get("kernel_launch_us") * 1e-6;
  // Default: the bf16 read and fp32 write (and back), one kernel each pass.
  CHECK(fused.op_time(loss, Pass::Forward).seconds() == doctest::Approx(elements * 6 / stream + launch).epsilon(1e-6));
  CHECK(fused.op_time(loss, Pass::Backward).seconds() == doctest::Approx(elements * 6 / stream + launch).epsilon(1e-6));
  // Unfused: .float(), max, subtract, exp, sum, divide; then multiply and the cast back.
  CHECK(unfused.op_time(loss, Pass::Forward).seconds() ==
        doctest::Approx(elements * 38 / stream + 6 * launch).epsilon(1e-6));
  CHECK(unfused.op_time(loss, Pass::Backward).seconds() ==
        doctest::Approx(elements * 14 / stream + 2 * launch).epsilon(1e-6));
  CHECK(unfused.launches(loss, Pass::Forward) == 6);
  CHECK(unfused.launches(loss, Pass::Backward) == 2);
  // The logits GEMM, the final norm and every layer op are the same either way.
  const auto layer = layer_ops(llama, shape());
  for (const auto* ops : {&head, &layer}) {
    for (const OpCost& op : *ops) {
      if (op.kind == OpKind::Loss) continue;
      CAPTURE(op.name);
      CHECK(unfused.op_time(op, Pass::Forward) == fused.op_time(op, Pass::Forward));
      CHECK(unfused.op_time(op, Pass::Backward) == fused.op_time(op, Pass::Backward));
    }
  }
}
