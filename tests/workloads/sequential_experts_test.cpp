// The routed experts as Megatron-Core's SequentialMLP runs them (OpShape::moe_grouped_gemm =
// false; workloads/model/sequential_experts.h) against TEGroupedMLP's grouped GEMM: the ops each
// expert gets, the concatenation, SequentialMLP's fp8 row padding, its host work, and on a GPU a
// device time no lower than the grouped GEMM's with as many GEMM launches.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/sequential_experts.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {

const ModelSpec& mixtral() {
  const ModelSpec* m = find_model_preset("mixtral-8x7b");
  REQUIRE(m != nullptr);
  return *m;
}

// A toy MoE layer whose experts' GEMMs are small: 8 experts, top-2, hidden 1024, expert FFN 1024.
ModelSpec toy() {
  ModelSpec m = mixtral();
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = m.moe_ffn_hidden = 1024;
  return m;
}

OpShape sequential(OpShape sh) {
  sh.moe_grouped_gemm = false;
  return sh;
}

std::vector<const OpCost*> all_named(const std::vector<OpCost>& ops, std::string_view name) {
  std::vector<const OpCost*> out;
  for (const OpCost& op : ops)
    if (op.name == name) out.push_back(&op);
  return out;
}

bool expert_op(const OpCost& op) { return op.name.starts_with("expert_"); }

ComputeModel h100(topology::Precision p) {
  return ComputeModel(gpu("h100-sxm5-80gb"), topology::ClusterSpec{}, p, ComputeConstants{});
}

struct PassSums {
  double device_s = 0, host_s = 0, launches = 0;
};

// The expert ops' device time, host time and launches in one pass (the experts only: the rest of
// the layer is the same in both paths).
PassSums expert_sums(const ComputeModel& cm, const std::vector<OpCost>& ops, Pass pass, bool gemms_only) {
  PassSums s;
  for (const OpCost& op : ops) {
    if (!expert_op(op) || (gemms_only && op.kind != OpKind::Gemm)) continue;
    s.device_s += cm.op_time(op, pass).seconds();
    s.host_s += cm.host_time(op, pass).seconds();
    // The model lists a gated fc1's up half as its own op with one kernel in every path (its
    // convention for gated MLPs, dense ones too); the launches compared are the real linears'.
    if (!op.second_fc1_half) s.launches += cm.launches(op, pass);
  }
  return s;
}

}  // namespace

TEST_CASE("workloads::layer_ops: SequentialMLP gives each local expert its own fc1, activation and fc2 at its rows, then one concatenation") {
  const ModelSpec& m = mixtral();
  // ep 2: 4 local experts; 4096 tokens x top-2 = 8192 slots on this GPU, 2048 per expert.
  const std::vector<OpCost> grouped = layer_ops(m, shape_with_ep(2), true);
  const std::vector<OpCost> seq = layer_ops(m, sequential(shape_with_ep(2)), true);
  CHECK(all_named(grouped, "expert_up_gate").size() == 1);
  CHECK(op_named(grouped, "expert_up_gate").batch == 4);
  for (const char* name : {"expert_up_gate", "expert_up", "expert_act", "expert_down"}) {
    const std::vector<const OpCost*> each = all_named(seq, name);
    REQUIRE_MESSAGE(each.size() == 4, name);
    double flops = 0;
    for (const OpCost* op : each) {
      if (op->kind == OpKind::Gemm) {
        CHECK(op->batch == 1);
        CHECK(op->m == 2048);
      }
      flops += op->fwd_flops.value;
    }
    // The same work as the grouped op, split four ways.
    CHECK(flops == doctest::Approx(op_named(grouped, name).fwd_flops.value));
  }
  // Expert 0's fc1 halves, activation and fc2 come before expert 1's.
  std::vector<std::string> order;
  for (const OpCost& op : seq)
    if (expert_op(op)) order.emplace_back(op.name);
  REQUIRE(order.size() >= 5);
  CHECK(order[0] == "expert_up_gate");
  CHECK(order[3] == "expert_down");
  CHECK(order[4] == "expert_up_gate");
  // torch.cat of the outputs forward, of torch.split's input gradients backward: every slot's
  // 4096-wide row read and written once per pass. The grouped path has none.
  const OpCost& cat = op_named(seq, "expert_concat");
  CHECK(cat.fwd_bytes.value == doctest::Approx(8192.0 * 4096.0 * 2.0 * 2.0));
  CHECK(cat.bwd_bytes.value == doctest::Approx(cat.fwd_bytes.value));
  CHECK(find_op(grouped, "expert_concat") == nullptr);
  // One local expert (ep 8): one MLP on all rows, no split and no concatenation.
  const std::vector<OpCost> one = layer_ops(m, sequential(shape_with_ep(8)), true);
  CHECK(all_named(one, "expert_down").size() == 1);
  CHECK(find_op(one, "expert_concat") == nullptr);
}

TEST_CASE("workloads::layer_ops: SequentialMLP pads an expert's rows under fp8 only when its count is not a multiple of 16") {
  ModelSpec m = mixtral();
  OpShape sh = sequential(shape_with_ep(2));
  sh.quantized_experts = true;
  // Dropless routing: counts are random, so each expert's _pad_tensor_for_fp8 copies its rows;
  // there is no TEGroupedMLP Fp8Unpadding.
  const std::vector<OpCost> dropless = layer_ops(m, sh, true);
  const std::vector<const OpCost*> pads = all_named(dropless, "expert_pad");
  REQUIRE(pads.size() == 4);
  CHECK(pads[0]->fwd_bytes.value == doctest::Approx(2048.0 * 4096.0 * 2.0 * 2.0));
  CHECK(pads[0]->bwd_bytes.value == doctest::Approx(2048.0 * 4096.0 * 2.0 * 3.0));
  CHECK(find_op(dropless, "expert_unpad") == nullptr);
  // Drop-and-pad to capacity: every expert gets 2048 rows, a multiple of 16, so nothing is copied.
  m.capacity_factor = 1.0;
  CHECK(find_op(layer_ops(m, sh, true), "expert_pad") == nullptr);
  // 2040 rows (capacity at 4080 tokens) are padded to 2048 for the GEMMs.
  OpShape odd = sh;
  odd.seq_len = 4080;
  const std::vector<OpCost> padded = layer_ops(m, odd, true);
  CHECK(all_named(padded, "expert_pad").size() == 4);
  CHECK(op_named(padded, "expert_down").m == 2048);
  // The grouped path keeps its Fp8Padding and Fp8Unpadding, once each.
  sh.moe_grouped_gemm = true;
  const std::vector<OpCost> grouped = layer_ops(m, sh, true);
  CHECK(all_named(grouped, "expert_pad").size() == 1);
  CHECK(all_named(grouped, "expert_unpad").size() == 1);
  // bf16: no padding at all.
  CHECK(find_op(layer_ops(mixtral(), sequential(shape_with_ep(2)), true), "expert_pad") == nullptr);
}

TEST_CASE("workloads::layer_ops: SequentialMLP's host work is charged once, to the first expert's activation") {
  OpShape sh = sequential(shape_with_ep(2));
  sh.quantized_experts = true;
  const std::vector<OpCost> ops = layer_ops(mixtral(), sh, true);
  const std::vector<const OpCost*> acts = all_named(ops, "expert_act");
  REQUIRE(acts.size() == 4);
  // tolist and split, and each of the 4 experts' output slice under fp8.
  CHECK(acts[0]->fwd_host_ops == doctest::Approx(2.0 + 4.0));
  CHECK(acts[0]->bwd_host_ops == doctest::Approx(0.0));
  CHECK(acts[1]->fwd_host_ops == doctest::Approx(0.0));
  CHECK(sequential_experts_host_fwd(1, false).ops == doctest::Approx(0.0));
  CHECK(sequential_experts_host_fwd(4, false).ops == doctest::Approx(2.0));
  // TEGroupedMLP's count stays on the grouped path's single activation.
  CHECK(op_named(layer_ops(mixtral(), shape_with_ep(2), true), "expert_act").fwd_host_ops == doctest::Approx(6.0));
}

TEST_CASE("workloads::ComputeModel: sequential experts take at least the grouped GEMM's device time with as many GEMM launches") {
  const ComputeModel bf16 = h100(topology::Precision::Bf16);
  const ComputeConstants& c = bf16.constants();
  for (int ep : {1, 2, 4}) {
    const double local = 8.0 / ep;
    for (const ModelSpec& m : {toy(), mixtral()}) {
      const std::vector<OpCost> g = layer_ops(m, shape_with_ep(ep), true);
      const std::vector<OpCost> s = layer_ops(m, sequential(shape_with_ep(ep)), true);
      for (Pass pass : {Pass::Forward, Pass::Backward}) {
        const PassSums gs = expert_sums(bf16, g, pass, true), ss = expert_sums(bf16, s, pass, true);
        // Per-expert waves never pack tighter than the grouped kernel's pooled tiles, and each
        // expert GEMM is its own launch gap on the one stream.
        CHECK_MESSAGE(ss.device_s >= gs.device_s, m.hidden, " ep ", ep);
        // Launches: the grouped GEMM issues one cuBLAS GEMM per expert (grouped_gemm_launches_per_expert
        // 1), SequentialMLP one per expert too.
        CHECK_MESSAGE(ss.launches == doctest::Approx(gs.launches), m.hidden, " ep ", ep);
        if (pass == Pass::Forward) {
          // Host: per further expert, the three GEMM kernels and two Linear modules against
          // GroupedLinear's two per-expert GEMM costs (gate and down).
          const double diff = (local - 1.0) * (3.0 * c.get("host_launch_us") + 2.0 * c.get("te_module_host_us") -
                                               2.0 * c.get("grouped_gemm_expert_host_us"));
          CHECK_MESSAGE((ss.host_s - gs.host_s) * 1e6 == doctest::Approx(diff), m.hidden, " ep ", ep);
        }
      }
    }
  }
  // The toy's experts are small: 1024 rows x 1024 of fc2 is 64 tiles per expert, under one wave
  // of 132 SMs each when run alone, so the sequential device time is strictly larger.
  const std::vector<OpCost> g = layer_ops(toy(), shape_with_ep(1), true);
  const std::vector<OpCost> s = layer_ops(toy(), sequential(shape_with_ep(1)), true);
  CHECK(expert_sums(bf16, s, Pass::Forward, true).device_s > 1.2 * expert_sums(bf16, g, Pass::Forward, true).device_s);
  // Under fp8 each expert's Linear casts its own input and output gradient: (local - 1) more cast
  // kernels per linear module (fc1, fc2) and pass.
  const ComputeModel fp8 = h100(topology::Precision::Fp8);
  OpShape q = shape_with_ep(2);
  q.quantized_experts = true;
  const std::vector<OpCost> gq = layer_ops(toy(), q, true);
  const std::vector<OpCost> sq = layer_ops(toy(), sequential(q), true);
  for (Pass pass : {Pass::Forward, Pass::Backward})
    CHECK(expert_sums(fp8, sq, pass, true).launches == doctest::Approx(expert_sums(fp8, gq, pass, true).launches + 3.0 * 2.0));
}
