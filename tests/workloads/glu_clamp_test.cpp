// GPT-OSS's clamped quick-GeGLU under Megatron-Core's eager TEGroupedMLP (workloads/model/glu_clamp.h):
// the clamp-and-cat op's bytes and host work as counted from the source, its host sync (the
// linear offset's blocking copy) and where it sits, its rerun under recompute_modules "moe_act",
// and that Transformer Engine's op fuser (OpShape::te_op_fuser) drops it and the eager bias loop.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/glu_clamp.h"
#include "workloads/model/hf_config.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/stage_cost_parts.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {

const ModelSpec& gpt_oss_120b() {
  const ModelSpec* m = find_model_preset("gpt-oss-120b");
  REQUIRE(m != nullptr);
  return *m;
}

std::size_t index_of(const std::vector<OpCost>& ops, std::string_view name) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].name == name) return i;
  return ops.size();
}

ComputeModel h100() {
  return ComputeModel(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, topology::Precision::Bf16, ComputeConstants{});
}

}  // namespace

TEST_CASE("workloads::layer_ops: GPT-OSS's GLU clamp is charged as the eager clamps, cat and offset copy before the activation") {
  const ModelSpec& m = gpt_oss_120b();
  CHECK(m.glu_clamp);
  // 4096 tokens x top-4 = 16,384 slots on this GPU's experts, 2880 wide per half, 2 bytes:
  // forward 8 x 2 = 16 bytes per element, backward 11 x 2 + 8 = 30.
  const double elements = 16384.0 * 2880.0;
  const std::vector<OpCost> ep8 = layer_ops(m, shape_with_ep(8), true);
  const OpCost& clamp = op_named(ep8, "expert_act_clamp");
  CHECK(clamp.fwd_bytes.value == doctest::Approx(16.0 * elements));
  CHECK(clamp.bwd_bytes.value == doctest::Approx(30.0 * elements));
  CHECK(clamp.fwd_flops.value == 0.0);
  CHECK(clamp.kind == OpKind::Elementwise);
  // Host: 3 kernels, the chunk, the view and the copy forward; 9 kernels and 2 narrows backward;
  // one kernel of each pass is the op's own. The copy blocks: a host sync after the forward.
  CHECK(clamp.fwd_host_ops == doctest::Approx(5.0));
  CHECK(clamp.bwd_host_ops == doctest::Approx(10.0));
  CHECK(clamp.host_sync_after);
  // Between fc1's second half and the activation.
  CHECK(index_of(ep8, "expert_up") + 1 == index_of(ep8, "expert_act_clamp"));
  CHECK(index_of(ep8, "expert_act_clamp") + 1 == index_of(ep8, "expert_act"));
  CHECK(clamp.graph_part == GraphPart::MoeRest);

  // The same per-GPU slots at ep 64 (2 local experts): the bytes and host work do not scale with
  // the local experts (one call over the grouped tensor), unlike the bias loop.
  const std::vector<OpCost> ep64 = layer_ops(m, shape_with_ep(64), true);
  const OpCost& clamp64 = op_named(ep64, "expert_act_clamp");
  CHECK(clamp64.fwd_bytes.value == doctest::Approx(clamp.fwd_bytes.value));
  CHECK(clamp64.bwd_host_ops == doctest::Approx(clamp.bwd_host_ops));
  CHECK(op_named(ep64, "expert_bias").fwd_host_ops < op_named(ep8, "expert_bias").fwd_host_ops);
  // Micro-batch 4 (the Blackwell BF16 rows): 4x the slots.
  OpShape mb4 = shape_with_ep(64);
  mb4.micro_batch = 4;
  CHECK(op_named(layer_ops(m, mb4, true), "expert_act_clamp").bwd_bytes.value == doctest::Approx(4.0 * 30.0 * elements));
  // The bytes follow the activation width: fp32 (p = 4) 32 and 52 bytes per element.
  OpShape fp32 = shape_with_ep(8);
  fp32.precision_bytes = 4;
  const std::vector<OpCost> fp32_ops = layer_ops(m, fp32, true);
  const OpCost& wide = op_named(fp32_ops, "expert_act_clamp");
  CHECK(wide.fwd_bytes.value == doctest::Approx(32.0 * elements));
  CHECK(wide.bwd_bytes.value == doctest::Approx(52.0 * elements));
  // Expert tensor parallelism 2 over tp 2: each GPU's experts see the same slots, half the width.
  OpShape etp = shape_with_ep(8);
  etp.tp = 2;
  etp.etp = 2;
  CHECK(op_named(layer_ops(m, etp, true), "expert_act_clamp").fwd_bytes.value == doctest::Approx(8.0 * elements));
  // The dense layers of a model are untouched (only the routed experts clamp).
  CHECK(find_op(layer_ops(m, shape_with_ep(8), false), "expert_act_clamp") == nullptr);
}

TEST_CASE("workloads::layer_ops: no GLU clamp op without glu_clamp, and none nor the bias loop under the TE op fuser") {
  ModelSpec m = gpt_oss_120b();
  const std::vector<OpCost> eager = layer_ops(m, shape_with_ep(8), true);
  OpShape fused = shape_with_ep(8);
  fused.te_op_fuser = true;
  const std::vector<OpCost> fuser = layer_ops(m, fused, true);
  CHECK(find_op(fuser, "expert_act_clamp") == nullptr);
  CHECK(find_op(fuser, "expert_bias") == nullptr);
  CHECK(fuser.size() + 2 == eager.size());
  m.glu_clamp = false;
  const std::vector<OpCost> unclamped = layer_ops(m, shape_with_ep(8), true);
  CHECK(find_op(unclamped, "expert_act_clamp") == nullptr);
  CHECK(find_op(unclamped, "expert_bias") != nullptr);
  CHECK(unclamped.size() + 1 == eager.size());
  // Other MoE presets have no clamp: their layers are as before.
  for (const char* id : {"mixtral-8x7b", "deepseek-v3"}) {
    const ModelSpec* other = find_model_preset(id);
    REQUIRE(other != nullptr);
    CHECK_FALSE(other->glu_clamp);
  }
}

TEST_CASE("workloads::layer_ops: the clamp's host sync leaves the dispatch's host work after the dispatcher's sync") {
  ModelSpec m = gpt_oss_120b();
  const std::vector<OpCost> clamped = layer_ops(m, shape_with_ep(8), true);
  m.glu_clamp = false;
  const std::vector<OpCost> plain = layer_ops(m, shape_with_ep(8), true);
  // Every op the two layers share carries the same host work: the clamp adds its own, and the
  // dispatch's split-size lists and all-to-all calls stay on the first op after the permute.
  for (const OpCost& op : plain) {
    const OpCost& same = op_named(clamped, op.name);
    CHECK_MESSAGE(same.fwd_host_ops == doctest::Approx(op.fwd_host_ops), op.name);
    CHECK_MESSAGE(same.fwd_dist_calls == doctest::Approx(op.fwd_dist_calls), op.name);
    CHECK_MESSAGE(same.bwd_host_ops == doctest::Approx(op.bwd_host_ops), op.name);
  }
}

TEST_CASE("workloads::ComputeModel::ops_time: the clamp's offset copy syncs the host a second time per MoE forward") {
  const ComputeModel cm = h100();
  ModelSpec m = gpt_oss_120b();
  const std::vector<OpCost> clamped = layer_ops(m, shape_with_ep(8), true);
  m.glu_clamp = false;
  const std::vector<OpCost> plain = layer_ops(m, shape_with_ep(8), true);
  const OpCost& clamp = op_named(clamped, "expert_act_clamp");
  const double sync_s = cm.constants().get("launch_blocking_sync_us") * 1e-6;
  const double fwd_added = cm.ops_time(clamped, Pass::Forward).seconds() - cm.ops_time(plain, Pass::Forward).seconds();
  // At least its device time and a round trip; the host then issues the activation, fc2 and the
  // bias loop onto an empty queue, so the layer can lose more.
  CHECK(fwd_added >= cm.op_time(clamp, Pass::Forward).seconds() + sync_s);
  CHECK(fwd_added < cm.op_time(clamp, Pass::Forward).seconds() + sync_s + cm.host_time(op_named(clamped, "expert_bias"), Pass::Forward).seconds() +
                        cm.host_time(clamp, Pass::Forward).seconds() + cm.host_time(op_named(clamped, "expert_act"), Pass::Forward).seconds() +
                        cm.host_time(op_named(clamped, "expert_down"), Pass::Forward).seconds());
  // The backward has no sync: it adds the op's time or its host time, whichever bounds.
  const double bwd_added = cm.ops_time(clamped, Pass::Backward).seconds() - cm.ops_time(plain, Pass::Backward).seconds();
  CHECK(bwd_added <= cm.op_time(clamp, Pass::Backward).seconds() + cm.host_time(clamp, Pass::Backward).seconds() + 1e-12);
  CHECK(bwd_added > 0.0);
}

TEST_CASE("workloads::layer_compute: recompute_modules moe_act reruns the GLU clamp with the activation, sync included") {
  const ComputeModel cm = h100();
  const std::vector<OpCost> layer = layer_ops(gpt_oss_120b(), shape_with_ep(8), true);
  const LayerCompute none = layer_compute(cm, layer, Recompute::None, 0);
  const LayerCompute act = layer_compute(cm, layer, Recompute::None, kRecomputeMoeAct);
  const std::vector<OpCost> rerun = {op_named(layer, "expert_act_clamp"), op_named(layer, "expert_act")};
  CHECK(act.fwd == doctest::Approx(none.fwd));
  CHECK(act.bwd - none.bwd == doctest::Approx(cm.ops_time(rerun, Pass::Forward).seconds()));
  // The rerun pays the copy's round trip again.
  CHECK(act.bwd - none.bwd >= cm.op_time(rerun[0], Pass::Forward).seconds() + cm.op_time(rerun[1], Pass::Forward).seconds() +
                                  cm.constants().get("launch_blocking_sync_us") * 1e-6);
}

TEST_CASE("workloads::load_hf_config: a gpt_oss config.json's swiglu_limit turns the GLU clamp on") {
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/workloads/data/gpt_oss_120b_config.json";
  CHECK(load_hf_config(path).glu_clamp);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const std::string limit = "\"swiglu_limit\": 7.0,";
  REQUIRE(json.find(limit) != std::string::npos);
  std::string without = json;
  without.erase(without.find(limit), limit.size());
  CHECK_FALSE(parse_hf_config(without, "no-limit").glu_clamp);
  std::string bad = json;
  bad.replace(bad.find(limit), limit.size(), "\"swiglu_limit\": \"seven\",");
  CHECK_THROWS_AS(parse_hf_config(bad, "bad-limit"), HfConfigError);
}
