// [training] recompute_dce (full recompute whose rerun is pruned by dead-code elimination, as JAX's
// remat_partial_eval prunes the staged rerun): the dead tail of a layer is derived from its op
// list (rerun_dead_from), leaves the backward by its forward time and the hardware FLOPs by its
// matmul FLOPs, composes with recompute_save, and is off by default (Megatron's full recompute).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/workloads/dense_layer_fixture.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/stage_cost_parts.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

using testing::dense;
using testing::H100;
using testing::ops_of;

std::vector<std::string> names_from(const std::vector<OpCost>& ops, std::size_t from) {
  std::vector<std::string> v;
  for (std::size_t i = from; i < ops.size(); ++i) v.emplace_back(ops[i].name);
  return v;
}

double forward_s(const ComputeModel& cm, const std::vector<OpCost>& ops, std::size_t from) {
  double s = 0;
  for (std::size_t i = from; i < ops.size(); ++i) s += cm.op_time(ops[i], Pass::Forward).seconds();
  return s;
}

}  // namespace

TEST_CASE("workloads::rerun_dead_from: the dead tail is the MLP output projection, its dropout and the last residual add") {
  ModelSpec gelu = dense(MlpKind::Gelu);  // GELU models train with dropout by default
  const std::vector<OpCost> g = ops_of(gelu);
  CHECK(names_from(g, rerun_dead_from(g)) == std::vector<std::string>{"mlp_fc2", "mlp_dropout", "mlp_residual"});
  gelu.dropout = false;
  const std::vector<OpCost> g0 = ops_of(gelu);
  CHECK(names_from(g0, rerun_dead_from(g0)) == std::vector<std::string>{"mlp_fc2", "mlp_residual"});
  const std::vector<OpCost> s = ops_of(dense(MlpKind::SwiGlu));
  CHECK(names_from(s, rerun_dead_from(s)) == std::vector<std::string>{"mlp_down", "mlp_residual"});
  // The activation before it stays: the output projection's weight gradient reads it.
  CHECK(s[rerun_dead_from(s) - 1].name == "swiglu");
  // A lone residual add is dead; an op list ending in an op that reads its input ends one op early.
  std::vector<OpCost> tail(s.end() - 3, s.end());  // swiglu, mlp_down, mlp_residual
  CHECK(rerun_dead_from(tail) == 1);
  tail.pop_back();  // swiglu, mlp_down: mlp_down's weight gradient reads swiglu's output
  CHECK(rerun_dead_from(tail) == 1);
  CHECK(rerun_dead_from({}) == 0);
}

TEST_CASE("workloads::layer_compute: recompute_dce lowers full recompute's backward by the dead tail's forward, fc2 / mlp_down first") {
  H100 h;
  for (const MlpKind mlp : {MlpKind::Gelu, MlpKind::SwiGlu}) {
    CAPTURE(static_cast<int>(mlp));
    const ModelSpec m = dense(mlp);
    const std::vector<OpCost> ops = ops_of(m);
    const LayerCompute full = layer_compute(h.cm, ops, Recompute::Full);
    const LayerCompute dce = layer_compute(h.cm, ops, Recompute::Full, 0, 0, true);
    const std::size_t from = rerun_dead_from(ops);
    const OpCost& out = ops[from];
    CHECK(out.name == std::string(mlp == MlpKind::Gelu ? "mlp_fc2" : "mlp_down"));
    CHECK(dce.fwd == full.fwd);
    CHECK(full.bwd - dce.bwd == doctest::Approx(forward_s(h.cm, ops, from)).epsilon(1e-6));
    // The output projection is most of it (the rest: dropout and the residual add, memory-bound).
    CHECK(full.bwd - dce.bwd > h.cm.op_time(out, Pass::Forward).seconds());
    CHECK(full.bwd - dce.bwd < 1.2 * h.cm.op_time(out, Pass::Forward).seconds());
    CHECK(full.bwd_tensor - dce.bwd_tensor == doctest::Approx(tensor_busy_s(h.cm, {out}, Pass::Forward)).epsilon(1e-6));
    CHECK(full_recompute_ops(ops, 0, true).size() == from);
    // Hardware FLOPs: the projection's forward leaves the recompute, per layer and sequence.
    CHECK(hardware_flops_per_iteration(m, 8, Recompute::Full).value -
              hardware_flops_per_iteration(m, 8, Recompute::Full, 0, true).value ==
          doctest::Approx(out.fwd_flops.value * m.layers * 8));
    // Off (Megatron's torch.utils.checkpoint): the whole layer reruns, as before.
    CHECK(layer_compute(h.cm, ops, Recompute::Full, 0, 0, false).bwd == full.bwd);
    CHECK(full_recompute_ops(ops, 0).size() == ops.size());
    // Not full recompute: the flag prunes nothing.
    CHECK(layer_compute(h.cm, ops, Recompute::Selective, 0, 0, true).bwd == layer_compute(h.cm, ops, Recompute::Selective).bwd);
  }
}

TEST_CASE("workloads::layer_compute: recompute_dce and recompute_save compose, the saved output projection counted once") {
  H100 h;
  const ModelSpec m = dense(MlpKind::SwiGlu);
  const std::vector<OpCost> ops = ops_of(m);
  const std::size_t from = rerun_dead_from(ops);
  const double tail = forward_s(h.cm, ops, from);
  const LayerCompute full = layer_compute(h.cm, ops, Recompute::Full);
  // Saves before the tail: the two savings add.
  const unsigned qkv_out = kSaveQkvProj | kSaveAttentionOutProj;
  const LayerCompute saved = layer_compute(h.cm, ops, Recompute::Full, 0, qkv_out);
  const LayerCompute both = layer_compute(h.cm, ops, Recompute::Full, 0, qkv_out, true);
  CHECK(saved.bwd - both.bwd == doctest::Approx(tail).epsilon(1e-6));
  CHECK(full.bwd - both.bwd == doctest::Approx((full.bwd - saved.bwd) + tail).epsilon(1e-6));
  CHECK(full_recompute_ops(ops, qkv_out, true).size() == from - 2);
  // mlp_down saved and dead: it leaves the rerun once; dce then drops only the residual add.
  const unsigned down = qkv_out | kSaveMlpDown;
  const LayerCompute saved_down = layer_compute(h.cm, ops, Recompute::Full, 0, down);
  const LayerCompute both_down = layer_compute(h.cm, ops, Recompute::Full, 0, down, true);
  CHECK(saved_down.bwd - both_down.bwd == doctest::Approx(h.cm.op_time(ops.back(), Pass::Forward).seconds()).epsilon(1e-6));
  CHECK(hardware_flops_per_iteration(m, 8, Recompute::Full, down, true).value ==
        doctest::Approx(hardware_flops_per_iteration(m, 8, Recompute::Full, down).value));
  CHECK(hardware_flops_per_iteration(m, 8, Recompute::Full, qkv_out, true).value <
        hardware_flops_per_iteration(m, 8, Recompute::Full, qkv_out).value);
}
