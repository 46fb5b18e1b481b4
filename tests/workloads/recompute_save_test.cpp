// [training] recompute_save (JAX save_only_these_names under full recompute): each named op leaves
// the backward's rerun (its forward time) and its output joins the kept layer input (its bytes);
// with nothing named the layer is exactly "full".
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/workloads/dense_layer_fixture.h"
#include "tests/workloads/op_test_util.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/stage_cost_parts.h"

using namespace clustersim;
using namespace clustersim::workloads;
using testing::op_named;

namespace {

using testing::dense;
using testing::H100;
using testing::ops_of;

MemoryRequest request(const ModelSpec& m, unsigned save) {
  MemoryRequest q;
  q.model = m;
  q.parallel.dp = 8;
  q.training.global_batch = 8;
  q.training.micro_batch = 1;
  q.training.recompute = Recompute::Full;
  q.training.recompute_save = save;
  return q;
}

double activations(const MemoryRequest& q) {
  const MemoryBreakdown b = stage_memory(q, 0);  // kept alive: find_line points into it
  const MemoryLine* l = b.find_line("layers: activations");
  REQUIRE(l != nullptr);
  return l->bytes.value;
}

}  // namespace

TEST_CASE("workloads::layer_compute: recompute_save with no op named is full recompute, the whole forward rerun") {
  H100 h;
  for (const MlpKind mlp : {MlpKind::Gelu, MlpKind::SwiGlu}) {
    const std::vector<OpCost> ops = ops_of(dense(mlp));
    const LayerCompute none = layer_compute(h.cm, ops, Recompute::None);
    const LayerCompute full = layer_compute(h.cm, ops, Recompute::Full, 0, 0);
    CHECK(full.fwd == none.fwd);
    CHECK(full.bwd == none.bwd + none.fwd);
    CHECK(full.bwd_tensor == none.bwd_tensor + none.fwd_tensor);
    CHECK(full_recompute_ops(ops, 0).size() == ops.size());
  }
  // Memory: the layer input alone, as "full" keeps it (e*s*b*h per layer and micro-batch).
  const ModelSpec m = dense(MlpKind::SwiGlu);
  CHECK(activations(request(m, 0)) == doctest::Approx(2.0 * 4096 * 4096 * m.layers));
}

TEST_CASE("workloads::layer_compute: each recompute_save op leaves the rerun by its forward time and adds its output bytes") {
  H100 h;
  struct Case {
    MlpKind mlp;
    unsigned bit;
    const char* op;
    double width;  // the op's output elements per token on one GPU (tp 1)
  };
  const double qkv_gelu = (32 + 2 * 32) * 128.0, qkv_gqa = (32 + 2 * 8) * 128.0;
  const Case cases[] = {{MlpKind::Gelu, kSaveQkvProj, "qkv_proj", qkv_gelu},
                        {MlpKind::Gelu, kSaveAttentionOutProj, "attention_out_proj", 4096},
                        {MlpKind::Gelu, kSaveMlpFc1, "mlp_fc1", 16384},
                        {MlpKind::Gelu, kSaveMlpFc2, "mlp_fc2", 4096},
                        {MlpKind::SwiGlu, kSaveQkvProj, "qkv_proj", qkv_gqa},
                        {MlpKind::SwiGlu, kSaveAttentionOutProj, "attention_out_proj", 4096},
                        {MlpKind::SwiGlu, kSaveMlpGate, "mlp_gate", 14336},
                        {MlpKind::SwiGlu, kSaveMlpUp, "mlp_up", 14336},
                        {MlpKind::SwiGlu, kSaveMlpDown, "mlp_down", 4096}};
  for (const Case& c : cases) {
    CAPTURE(c.op);
    const ModelSpec m = dense(c.mlp);
    const std::vector<OpCost> ops = ops_of(m);
    const LayerCompute full = layer_compute(h.cm, ops, Recompute::Full);
    const LayerCompute saved = layer_compute(h.cm, ops, Recompute::Full, 0, c.bit);
    const OpCost& op = op_named(ops, c.op);
    // Time: the backward loses exactly the op's forward (device-bound layer), the forward is unchanged.
    CHECK(saved.fwd == full.fwd);
    CHECK(full.bwd - saved.bwd == doctest::Approx(h.cm.op_time(op, Pass::Forward).seconds()).epsilon(1e-6));
    CHECK(full.bwd_tensor - saved.bwd_tensor ==
          doctest::Approx(tensor_busy_s(h.cm, {op}, Pass::Forward)).epsilon(1e-6));
    CHECK(full_recompute_ops(ops, c.bit).size() == ops.size() - 1);
    // Memory: the op's bf16 output, s*b*width*2 B, in each of the 8 layers (one micro-batch in flight).
    const double bytes = 4096.0 * 1 * c.width * 2.0;
    CHECK(activations(request(m, c.bit)) - activations(request(m, 0)) == doctest::Approx(bytes * m.layers));
    // Hardware FLOPs: the op's forward leaves the recompute, per layer and sequence.
    CHECK(hardware_flops_per_iteration(m, 8, Recompute::Full).value -
              hardware_flops_per_iteration(m, 8, Recompute::Full, c.bit).value ==
          doctest::Approx(op.fwd_flops.value * m.layers * 8));
  }
}

TEST_CASE("workloads::layer_compute: recompute_save of several ops adds their savings and their bytes") {
  H100 h;
  const ModelSpec m = dense(MlpKind::SwiGlu);
  const std::vector<OpCost> ops = ops_of(m);
  const unsigned all = kSaveQkvProj | kSaveAttentionOutProj | kSaveMlpDown;
  const LayerCompute full = layer_compute(h.cm, ops, Recompute::Full);
  const LayerCompute saved = layer_compute(h.cm, ops, Recompute::Full, 0, all);
  double ops_s = 0;
  for (const char* name : {"qkv_proj", "attention_out_proj", "mlp_down"}) ops_s += h.cm.op_time(op_named(ops, name), Pass::Forward).seconds();
  CHECK(full.bwd - saved.bwd == doctest::Approx(ops_s).epsilon(1e-6));
  // The rerun keeps the norms, the attention core, fc1 and the activation: more than zero, less than the forward.
  CHECK(saved.bwd > layer_compute(h.cm, ops, Recompute::None).bwd);
  const double bytes = 4096.0 * 2.0 * ((32 + 2 * 8) * 128.0 + 4096 + 4096);
  CHECK(activations(request(m, all)) - activations(request(m, 0)) == doctest::Approx(bytes * m.layers));
  // Outside full recompute the bits change nothing (the loader refuses them there).
  CHECK(layer_compute(h.cm, ops, Recompute::Selective, 0, all).bwd == layer_compute(h.cm, ops, Recompute::Selective).bwd);
}

TEST_CASE("workloads::layer_compute: recompute_save of the flash attention core keeps its output and log-sum-exp, no attention rerun") {
  // torchtitan's op SAC saves torch's _scaled_dot_product_flash_attention (output, logsumexp):
  // the backward's rerun skips the attention kernel, the forward keeps O and the fp32 statistics.
  H100 h;
  for (const MlpKind mlp : {MlpKind::Gelu, MlpKind::SwiGlu}) {
    const ModelSpec m = dense(mlp);
    const std::vector<OpCost> ops = ops_of(m);
    const LayerCompute full = layer_compute(h.cm, ops, Recompute::Full);
    const LayerCompute saved = layer_compute(h.cm, ops, Recompute::Full, 0, kSaveFlashAttention);
    const OpCost& attention = op_named(ops, "flash_attention");
    CHECK(saved.fwd == full.fwd);
    CHECK(full.bwd - saved.bwd == doctest::Approx(h.cm.op_time(attention, Pass::Forward).seconds()).epsilon(1e-6));
    CHECK(full.bwd_tensor - saved.bwd_tensor == doctest::Approx(tensor_busy_s(h.cm, {attention}, Pass::Forward)).epsilon(1e-6));
    // Per layer: O in bf16 over 32 heads x 128 and the fp32 log-sum-exp per head, for 4,096 tokens.
    const double bytes = 4096.0 * 32 * (2.0 * 128 + 4.0);
    CHECK(activations(request(m, kSaveFlashAttention)) - activations(request(m, 0)) == doctest::Approx(bytes * m.layers));
    CHECK(hardware_flops_per_iteration(m, 8, Recompute::Full).value -
              hardware_flops_per_iteration(m, 8, Recompute::Full, kSaveFlashAttention).value ==
          doctest::Approx(attention.fwd_flops.value * m.layers * 8));
  }
}
