// Squared ReLU run as eager PyTorch ops ([model] eager_squared_relu; workloads/model/
// eager_squared_relu.h): NeMo 2's NemotronConfig runs relu, then pow(., 2), and autograd's
// backward of each, where the "gelu" kind charges one fused kernel a pass. The op's bytes and
// kernels put in, its time against the fused kernel's, and that the flag off builds the layer as
// before.
#include <doctest/doctest.h>

#include <vector>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/eager_squared_relu.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {
// Nemotron-4 15B's layer (Parmar et al. 2024 Table 1): hidden 6144, 48 heads, 8 KV heads, ffn 24576.
ModelSpec nemotron4_15b_layer() {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 6144;
  m.heads = 48;
  m.kv_heads = 8;
  m.ffn_hidden = 24576;
  m.seq_len = 4096;
  m.vocab = 256000;
  m.mlp = MlpKind::Gelu;
  m.dropout = false;
  return m;
}
OpShape two_sequences() {
  OpShape sh;
  sh.micro_batch = 2;
  sh.seq_len = 4096;
  return sh;
}
}  // namespace

TEST_CASE("workloads::layer_ops: eager squared ReLU streams 4 accesses forward and 10 backward in 2 and 4 kernels") {
  ModelSpec m = nemotron4_15b_layer();
  m.eager_squared_relu = true;
  const std::vector<OpCost> ops = layer_ops(m, two_sequences(), false);
  CHECK(find_op(ops, "gelu") == nullptr);
  const OpCost& act = op_named(ops, "squared_relu");
  // 8192 tokens x 24576 at 2 bytes an element.
  const double elements = 8192.0 * 24576.0;
  CHECK(act.fwd_bytes.value == doctest::Approx(4.0 * 2.0 * elements));
  CHECK(act.bwd_bytes.value == doctest::Approx(10.0 * 2.0 * elements));
  CHECK(act.fwd_kernels == 2);
  CHECK(act.bwd_kernels == 4);
  // Between the two linears, in the MLP's part of the layer.
  std::size_t fc1 = ops.size(), at = ops.size(), fc2 = ops.size();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == "mlp_fc1") fc1 = i;
    if (ops[i].name == "squared_relu") at = i;
    if (ops[i].name == "mlp_fc2") fc2 = i;
  }
  CHECK(fc1 + 1 == at);
  CHECK(at + 1 == fc2);
  CHECK(act.graph_part == GraphPart::Mlp);

  // On a B200 the eager backward takes 10 / 3 of the fused kernel's streaming time, plus 3 more launches.
  m.eager_squared_relu = false;
  const std::vector<OpCost> fused_ops = layer_ops(m, two_sequences(), false);
  const OpCost& fused = op_named(fused_ops, "gelu");
  CHECK(fused.fwd_bytes.value == doctest::Approx(2.0 * 2.0 * elements));
  CHECK(fused.bwd_bytes.value == doctest::Approx(3.0 * 2.0 * elements));
  const ComputeModel cm(gpu("b200"), topology::ClusterSpec{}, topology::Precision::Bf16, ComputeConstants{});
  const double launch = cm.constants().get("kernel_launch_us") * 1e-6;
  const double fused_bwd = cm.op_time(fused, Pass::Backward).seconds() - launch;
  const double eager_bwd = cm.op_time(act, Pass::Backward).seconds() - kEagerSquaredReluBwdKernels * launch;
  CHECK(eager_bwd == doctest::Approx(10.0 / 3.0 * fused_bwd).epsilon(1e-6));
  CHECK(cm.op_time(act, Pass::Forward).seconds() > 1.9 * cm.op_time(fused, Pass::Forward).seconds());
}

TEST_CASE("workloads::layer_ops: without eager_squared_relu a two-matrix MLP keeps its fused activation") {
  ModelSpec m = nemotron4_15b_layer();
  const std::vector<OpCost> fused = layer_ops(m, two_sequences(), false);
  m.eager_squared_relu = true;
  const std::vector<OpCost> eager = layer_ops(m, two_sequences(), false);
  REQUIRE(fused.size() == eager.size());
  for (std::size_t i = 0; i < fused.size(); ++i) {
    CAPTURE(fused[i].name);
    if (fused[i].name == "gelu") {
      CHECK(eager[i].name == "squared_relu");
      continue;
    }
    CHECK(eager[i].name == fused[i].name);
    CHECK(eager[i].fwd_bytes.value == fused[i].fwd_bytes.value);
    CHECK(eager[i].bwd_bytes.value == fused[i].bwd_bytes.value);
  }
  CHECK(find_op(fused, "squared_relu") == nullptr);
}
