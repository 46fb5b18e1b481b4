// A plain PyTorch Llama block in eager mode ([model] eager_layer_ops; workloads/model/
// eager_layer_ops.h): RMSNorm, the complex-form rotary embedding and SwiGLU at their eager ops'
// bytes and kernels, a repeat_kv copy before attention under grouped-query attention, nothing else
// changed; and the flag off builds the layer as before.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/workloads/dense_layer_fixture.h"
#include "tests/workloads/op_test_util.h"
#include "workloads/model/eager_layer_ops.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

TEST_CASE("workloads::layer_ops: an eager Llama block charges its RMSNorm, RoPE, SwiGLU and repeat_kv as eager ops") {
  ModelSpec m = dense(MlpKind::SwiGlu);  // GQA 32 / 8 heads, RMSNorm, ffn 14336, s 4096, bf16
  const std::vector<OpCost> fused = ops_of(m);
  m.eager_layer_ops = true;
  const std::vector<OpCost> eager = ops_of(m);
  const double tokens = 4096.0, p = 2.0;
  // RMSNorm over [tokens, 4096]: 4p + 28 bytes an element forward in 8 kernels, 8p + 76 backward in 14.
  for (const char* name : {"input_norm", "post_attention_norm"}) {
    CAPTURE(name);
    const OpCost& n = op_named(eager, name);
    CHECK(n.fwd_bytes.value == doctest::Approx(tokens * 4096 * (4 * p + 28)));
    CHECK(n.bwd_bytes.value == doctest::Approx(tokens * 4096 * (8 * p + 76)));
    CHECK(n.fwd_kernels == 8);
    CHECK(n.bwd_kernels == 14);
    CHECK(n.fwd_flops.value == op_named(fused, name).fwd_flops.value);  // the same arithmetic
  }
  // RoPE over Q and K, (32 + 8) heads x 128: 2p + 16 bytes an element each pass, 6 kernels.
  const OpCost& rope = op_named(eager, "rotary_embedding");
  CHECK(rope.fwd_bytes.value == doctest::Approx(tokens * 40 * 128 * (2 * p + 16)));
  CHECK(rope.bwd_bytes.value == rope.fwd_bytes.value);
  CHECK(rope.fwd_kernels == 6);
  // SwiGLU over [tokens, 14336]: 5 accesses forward in 2 kernels, 9 backward in 3 (fused: 3 and 5).
  const OpCost& act = op_named(eager, "swiglu");
  CHECK(act.fwd_bytes.value == doctest::Approx(tokens * 14336 * 5 * p));
  CHECK(act.bwd_bytes.value == doctest::Approx(tokens * 14336 * 9 * p));
  CHECK(op_named(fused, "swiglu").fwd_bytes.value == doctest::Approx(tokens * 14336 * 3 * p));
  CHECK(act.bwd_kernels == 3);
  // repeat_kv: K and V written at the 32 query heads' width, read at the 8 kv heads'.
  REQUIRE(find_op(eager, "repeat_kv") != nullptr);
  CHECK(find_op(fused, "repeat_kv") == nullptr);
  const OpCost& rep = op_named(eager, "repeat_kv");
  CHECK(rep.fwd_bytes.value == doctest::Approx(2 * tokens * 32 * 128 * p * (1 + 8.0 / 32)));
  // It sits between the rotary embedding and the attention core.
  std::size_t at_rope = 0, at_rep = 0, at_attn = 0;
  for (std::size_t i = 0; i < eager.size(); ++i) {
    if (eager[i].name == "rotary_embedding") at_rope = i;
    if (eager[i].name == "repeat_kv") at_rep = i;
    if (eager[i].name == "flash_attention") at_attn = i;
  }
  CHECK(at_rope < at_rep);
  CHECK(at_rep < at_attn);
  // Everything else is the fused layer's op for op.
  CHECK(eager.size() == fused.size() + 1);
  for (const OpCost& op : fused) {
    if (op.name == "input_norm" || op.name == "post_attention_norm" || op.name == "rotary_embedding" || op.name == "swiglu") continue;
    CAPTURE(op.name);
    CHECK(op_named(eager, op.name).fwd_bytes.value == op.fwd_bytes.value);
    CHECK(op_named(eager, op.name).bwd_bytes.value == op.bwd_bytes.value);
  }
  // The eager layer is slower on the device, all of it in memory-bound time.
  H100 h;
  CHECK(h.cm.ops_time(eager, Pass::Forward).seconds() > h.cm.ops_time(fused, Pass::Forward).seconds());
  CHECK(h.cm.ops_time(eager, Pass::Backward).seconds() > h.cm.ops_time(fused, Pass::Backward).seconds());
}

TEST_CASE("workloads::layer_ops: eager_layer_ops leaves a LayerNorm / GELU / MHA layer as it was") {
  // nn.LayerNorm and GELU are one kernel a pass in eager PyTorch too; full multi-head attention
  // repeats nothing; learned positions have no rotation.
  ModelSpec m = dense(MlpKind::Gelu);
  m.positions = PositionKind::Learned;
  const std::vector<OpCost> fused = ops_of(m);
  m.eager_layer_ops = true;
  const std::vector<OpCost> eager = ops_of(m);
  REQUIRE(eager.size() == fused.size());
  for (std::size_t i = 0; i < fused.size(); ++i) {
    CAPTURE(fused[i].name);
    CHECK(eager[i].name == fused[i].name);
    CHECK(eager[i].fwd_bytes.value == fused[i].fwd_bytes.value);
    CHECK(eager[i].bwd_bytes.value == fused[i].bwd_bytes.value);
  }
}
