// The router probability applied to the routed experts' input (ModelSpec::moe_apply_probs_on_input,
// workloads/model/expert_probs.h; Llama 4): the op's numbers, where it runs in the layer, and that a
// model without the flag builds the same layer as before.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/expert_probs.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {

// A Llama-4-Scout-like MoE layer: 5120 wide, 16 experts top-1 of 8192, one shared expert.
ModelSpec scout_like(bool probs_on_input) {
  ModelSpec m;
  m.layers = 4;
  m.hidden = 5120;
  m.heads = 40;
  m.kv_heads = 8;
  m.ffn_hidden = 16384;
  m.seq_len = 4096;
  m.vocab = 202048;
  m.mlp = MlpKind::SwiGlu;
  m.norm = NormKind::RmsNorm;
  m.experts = 16;
  m.experts_per_token = 1;
  m.moe_ffn_hidden = 8192;
  m.shared_experts = 1;
  m.moe_apply_probs_on_input = probs_on_input;
  return m;
}

std::size_t index_of(const std::vector<OpCost>& ops, const std::string& name) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].name == name) return i;
  return ops.size();
}

}  // namespace

TEST_CASE("workloads::layer_ops: moe_apply_probs_on_input multiplies the dispatched rows before the grouped GEMM") {
  // ep 8: 2 local experts; 4096 tokens x top-1 = 4096 slots x 5120 wide at 2 bytes: forward one
  // read and one write of the rows, backward six accesses (grad x probs, and the probs' row sum).
  const std::vector<OpCost> ops = layer_ops(scout_like(true), shape_with_ep(8), true);
  const OpCost& probs = op_named(ops, "moe_probs_on_input");
  const double elements = 4096.0 * 5120.0;
  CHECK(probs.kind == OpKind::Elementwise);
  CHECK(probs.fwd_bytes.value == doctest::Approx(2.0 * 2.0 * elements));
  CHECK(probs.bwd_bytes.value == doctest::Approx(6.0 * 2.0 * elements));
  CHECK(probs.fwd_flops.value == doctest::Approx(elements));
  CHECK(probs.bwd_flops.value == doctest::Approx(2.0 * elements));
  // After the shared experts and the chunk sort, right before the routed experts' first linear.
  const std::size_t at = index_of(ops, "moe_probs_on_input");
  CHECK(index_of(ops, "shared_expert_down") < at);
  CHECK(index_of(ops, "moe_sort_chunks") < at);
  CHECK(at + 1 == index_of(ops, "expert_up_gate"));
  // Memory bound on an H100: the backward at least three times the forward.
  const ComputeModel cm(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, topology::Precision::Bf16, ComputeConstants{});
  CHECK(cm.op_time(probs, Pass::Forward).seconds() > 2.0 * 2.0 * elements / 3.35e12);
  CHECK(cm.op_time(probs, Pass::Backward).seconds() > 2.5 * cm.op_time(probs, Pass::Forward).seconds());
}

TEST_CASE("workloads::layer_ops: under fp8 the probabilities multiply the padded rows") {
  OpShape sh = shape_with_ep(8);
  sh.quantized_experts = true;
  const std::vector<OpCost> ops = layer_ops(scout_like(true), sh, true);
  REQUIRE(find_op(ops, "expert_pad") != nullptr);
  CHECK(index_of(ops, "expert_pad") + 1 == index_of(ops, "moe_probs_on_input"));
}

TEST_CASE("workloads::layer_ops: without moe_apply_probs_on_input the layer is the same as before") {
  const std::vector<OpCost> with = layer_ops(scout_like(true), shape_with_ep(8), true);
  const std::vector<OpCost> without = layer_ops(scout_like(false), shape_with_ep(8), true);
  CHECK(find_op(without, "moe_probs_on_input") == nullptr);
  REQUIRE(with.size() == without.size() + 1);
  std::size_t j = 0;
  for (const OpCost& op : with) {
    if (op.name == "moe_probs_on_input") continue;
    CHECK(op.name == without[j].name);
    CHECK(op.fwd_bytes.value == doctest::Approx(without[j].fwd_bytes.value));
    ++j;
  }
  // The dense layer of the same model has no such op either.
  CHECK(find_op(layer_ops(scout_like(true), shape_with_ep(8), false), "moe_probs_on_input") == nullptr);
}
