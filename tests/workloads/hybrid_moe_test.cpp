// Hybrid Mamba + MoE models (Nemotron 3, 'E' layers): the Nano preset's total and active parameter
// counts against its model card, an 'E' layer's parameters and ops as the MoE half of an MoE
// transformer layer, and expert parallelism dividing only the routed experts.
#include <doctest/doctest.h>

#include "tests/workloads/op_test_util.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/mtp.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using clustersim::testing::active_parameters;

namespace {

const ModelSpec& nano() {
  const ModelSpec* m = find_model_preset("nemotron-3-nano-30b-a3b");
  REQUIRE(m != nullptr);
  return *m;
}

}  // namespace

TEST_CASE("workloads::ModelSpec: Nemotron 3 Nano has 31.6 B parameters, 3.6 B active, within 2% of its card") {
  const ModelSpec& m = nano();
  CHECK(m.layers == 52);
  CHECK(m.layers_of_kind_in(LayerKind::Mamba, 0, 52) == 23);
  CHECK(m.layers_of_kind_in(LayerKind::Moe, 0, 52) == 23);
  CHECK(m.layers_of_kind_in(LayerKind::Attention, 0, 52) == 6);
  CHECK(m.moe_layers_in(0, 52) == 23);
  // Model card (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B): 31.6 B total, 3.6 B active with embeddings.
  CHECK(m.parameters() == doctest::Approx(31.6e9).epsilon(0.02));
  CHECK(active_parameters(m) == doctest::Approx(3.6e9).epsilon(0.02));
}

TEST_CASE("workloads::ModelSpec: an 'E' layer is its norm, router, shared and routed experts, counted by hand") {
  const ModelSpec& m = nano();
  // relu2 experts, two 2688 x 1856 matrices each; 128 of them; the shared expert 2688 x 3712 x 2;
  // the router 2688 x 128; the pre-norm 2688.
  const double h = 2688, expert = 2.0 * h * 1856;
  CHECK(m.expert_parameters() == doctest::Approx(128 * expert));
  CHECK(m.layer_parameters_of(LayerKind::Moe) == doctest::Approx(128 * expert + 2.0 * h * 3712 + h * 128 + h));
  CHECK(m.moe_layer_dense_parameters() == doctest::Approx(2.0 * h * 3712 + h * 128 + h));
  // ep = 8 divides only the routed experts of the 23 'E' layers.
  const double saved = (m.layer_parameters_per_ep_rank(1) - m.layer_parameters_per_ep_rank(8)) * m.layers;
  CHECK(saved == doctest::Approx(23 * 128 * expert * 7.0 / 8.0));
}

TEST_CASE("workloads::layer_ops_of_kind: an 'E' layer is the MoE half of an MoE transformer layer") {
  const ModelSpec& m = nano();
  OpShape shape;
  shape.micro_batch = 1;
  shape.seq_len = 8192;
  shape.ep = 8;
  const std::vector<OpCost> e = layer_ops_of_kind(m, shape, LayerKind::Moe);
  const std::vector<OpCost> mlp = layer_ops_of_kind(m, shape, LayerKind::Mlp);
  bool router = false, expert = false, attention = false;
  for (const OpCost& op : e) {
    router = router || op.name == "moe_router";
    expert = expert || op.name == "expert_down";
    attention = attention || op.kind == OpKind::Attention;
  }
  CHECK(router);
  CHECK(expert);
  CHECK_FALSE(attention);
  // Forward matmul FLOPs per token: the router, top-6 experts and the shared expert, 2 x 2 x h x
  // width each, against the dense MLP of width 1856.
  const double tokens = 8192, h = 2688;
  const double expected = 2.0 * h * 128 + 2.0 * 2.0 * h * (6 * 1856 + 3712);
  CHECK(sum_ops(e).fwd_matmul_flops.value / tokens == doctest::Approx(expected).epsilon(0.01));
  CHECK(sum_ops(mlp).fwd_matmul_flops.value < sum_ops(e).fwd_matmul_flops.value);
}

TEST_CASE("workloads::mtp: Nemotron 3.5 Lightning is Nano's shape plus one '*E' MTP module, as its verification card counts") {
  // Megatron-Bridge r0.6.0 examples/model_verification_cards/nemotron-3.5-lightning/card.yaml: the
  // import and export match "32,913,266,240 parameters". Nano's layers and one MTP module (eh_proj,
  // its norms, an attention and an MoE block) count 32,913,263,168; the 3,072 left are the routers'
  // expert-bias vectors (moe_router_enable_expert_bias: 128 per MoE layer, 23 + 1 layers), which
  // clustersim does not count.
  ModelSpec m = nano();
  m.mtp_layers = 1;
  CHECK(mtp_layer_is_moe(m));
  const double counted = nano().parameters() + mtp_module_parameters(m);
  CHECK(counted == doctest::Approx(32913263168.0).epsilon(1e-12));
  CHECK(32913266240.0 - counted == doctest::Approx(24 * 128));
}
