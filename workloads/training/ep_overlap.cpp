// The MoE all-to-all overlaps (see ep_overlap.h): the combined 1F1B layer pair run on two streams,
// an MoE layer split at its dispatch, and the shared experts beside the all-to-alls.
#include "workloads/training/ep_overlap.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

// A node of the pair's schedule: its stream, its seconds alone, and the node of the same pass it
// waits for (-1: none).
struct Node {
  bool comm = false;
  double work = 0;
  int after = -1;
};

// Index of the op that ends the pre-dispatch computation (moe_permute), or ops.size().
std::size_t permute_index(const std::vector<OpCost>& ops) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].name == "moe_permute") return i;
  return ops.size();
}

double time_of(const ComputeModel& cm, const std::vector<OpCost>& ops, std::size_t from, std::size_t to, Pass pass) {
  if (from >= to) return 0.0;
  const std::vector<OpCost> part(ops.begin() + static_cast<std::ptrdiff_t>(from), ops.begin() + static_cast<std::ptrdiff_t>(to));
  return cm.ops_time(part, pass).seconds();
}

}  // namespace

double ep_overlap_sm_share(const ParallelSpec& p, int gpu_sms, bool across_nodes, double nccl_share) {
  if (p.moe_dispatcher == MoeDispatcher::AllToAll || gpu_sms <= 0) return nccl_share;
  // Defaults: Megatron-Core token_dispatcher.py (DeepEP, 20) and DeepEP hybrid-ep
  // csrc/hybrid_ep/config.cuh:366-367 (num_sms_dispatch_api / num_sms_combine_api unset: 24 SMs
  // on one NVLink domain, 8 across them).
  const int fallback = p.moe_dispatcher == MoeDispatcher::DeepEp ? 20 : across_nodes ? 8 : 24;
  const int sms = p.moe_dispatcher_sms > 0 ? p.moe_dispatcher_sms : fallback;
  return std::min(0.9, static_cast<double>(sms) / gpu_sms);
}

double combined_layer_pair_s(const EpLayerPass& f, const EpLayerPass& b, double sm_share) {
  // TransformerLayerSchedulePlan.run: combine_bwd, attention_fwd, experts_bwd, dispatch_fwd,
  // (experts wgrad,) dispatch_bwd, experts_fwd, combine_fwd, attention_bwd (, attention wgrad).
  // Without delay_wgrad_compute the wgrad nodes are empty and each backward node holds its wgrad.
  enum : int { kCombineB, kAttnW, kAttnF, kExpertsB, kExpertsW, kDispatchF, kDispatchB, kExpertsF, kCombineF, kAttnB, kNodes };
  std::array<Node, kNodes> n{};
  n[kCombineB] = {true, b.combine, -1};
  n[kAttnW] = {false, b.attention_wgrad, -1};
  n[kAttnF] = {false, f.attention, -1};
  n[kExpertsB] = {false, b.experts, kCombineB};
  n[kExpertsW] = {false, b.experts_wgrad, kExpertsB};
  n[kDispatchF] = {true, f.dispatch, kAttnF};
  n[kDispatchB] = {true, b.dispatch, kExpertsB};
  n[kExpertsF] = {false, f.experts, kDispatchF};
  n[kCombineF] = {true, f.combine, kExpertsF};
  n[kAttnB] = {false, b.attention, kDispatchB};
  // Each stream's order.
  constexpr std::array<int, 6> kCompute = {kAttnW, kAttnF, kExpertsB, kExpertsW, kExpertsF, kAttnB};
  constexpr std::array<int, 4> kComm = {kCombineB, kDispatchF, kDispatchB, kCombineF};
  std::array<double, kNodes> left{};
  std::array<bool, kNodes> done{};
  for (int i = 0; i < kNodes; ++i) left[static_cast<std::size_t>(i)] = std::max(0.0, n[static_cast<std::size_t>(i)].work);
  std::size_t ci = 0, mi = 0;  // next node of each stream
  double t = 0;
  const auto ready = [&](int node) {
    const int a = n[static_cast<std::size_t>(node)].after;
    return a < 0 || done[static_cast<std::size_t>(a)];
  };
  for (int guard = 0; guard < 4 * kNodes && (ci < kCompute.size() || mi < kComm.size()); ++guard) {
    const int c = ci < kCompute.size() && ready(kCompute[ci]) ? kCompute[ci] : -1;
    const int m = mi < kComm.size() && ready(kComm[mi]) ? kComm[mi] : -1;
    CLUSTERSIM_CHECK(c >= 0 || m >= 0, "the combined layer schedule has no cycle");
    const double rate = m >= 0 ? 1.0 - sm_share : 1.0;  // compute beside an all-to-all
    const double inf = std::numeric_limits<double>::infinity();
    const double c_end = c >= 0 ? left[static_cast<std::size_t>(c)] / rate : inf;
    const double m_end = m >= 0 ? left[static_cast<std::size_t>(m)] : inf;
    const double dt = std::min(c_end, m_end);
    t += dt;
    if (c >= 0) {
      left[static_cast<std::size_t>(c)] -= dt * rate;
      if (dt == c_end) {
        done[static_cast<std::size_t>(c)] = true;
        ++ci;
      }
    }
    if (m >= 0) {
      left[static_cast<std::size_t>(m)] -= dt;
      if (dt == m_end) {
        done[static_cast<std::size_t>(m)] = true;
        ++mi;
      }
    }
  }
  return t;
}

EpLayerSplit split_moe_layer(const ComputeModel& cm, const std::vector<OpCost>& layer, double fwd_compute_s,
                             double bwd_compute_s, double fwd_blocking_s, double bwd_blocking_s, double a2a_fwd_s,
                             double a2a_bwd_s, double experts_fwd_blocking_s, double experts_bwd_blocking_s,
                             bool delay_wgrad) {
  const std::size_t cut = std::min(permute_index(layer) + 1, layer.size());
  EpLayerSplit s;
  const auto split = [&](EpLayerPass& p, Pass pass, double compute, double blocking, double a2a, double experts_blocking) {
    const double pre = time_of(cm, layer, 0, cut, pass);
    const double post = time_of(cm, layer, cut, layer.size(), pass);
    const double share = pre + post > 0 ? pre / (pre + post) : 0.0;
    p.attention = compute * share + blocking;
    p.experts = compute * (1.0 - share) + experts_blocking;
    p.dispatch = a2a / 2;
    p.combine = a2a / 2;
  };
  split(s.fwd, Pass::Forward, fwd_compute_s, fwd_blocking_s, a2a_fwd_s, experts_fwd_blocking_s);
  split(s.bwd, Pass::Backward, bwd_compute_s, bwd_blocking_s, a2a_bwd_s, experts_bwd_blocking_s);
  if (delay_wgrad) {
    // Each side's compute share that is weight gradient: half the backward of its trained GEMMs
    // over the backward of all its ops.
    const auto wgrad_share = [&](std::size_t from, std::size_t to) {
      double wgrad = 0;
      for (std::size_t i = from; i < to; ++i)
        if (layer[i].kind == OpKind::Gemm && !layer[i].frozen) wgrad += cm.op_time(layer[i], Pass::Backward).seconds() / 2;
      const double all = time_of(cm, layer, from, to, Pass::Backward);
      return all > 0 ? std::min(1.0, wgrad / all) : 0.0;
    };
    const double pre = time_of(cm, layer, 0, cut, Pass::Backward), post = time_of(cm, layer, cut, layer.size(), Pass::Backward);
    const double share = pre + post > 0 ? pre / (pre + post) : 0.0;
    s.bwd.attention_wgrad = bwd_compute_s * share * wgrad_share(0, cut);
    s.bwd.experts_wgrad = bwd_compute_s * (1.0 - share) * wgrad_share(cut, layer.size());
    s.bwd.attention -= s.bwd.attention_wgrad;
    s.bwd.experts -= s.bwd.experts_wgrad;
  }
  return s;
}

double combined_layer_saving_s(const EpLayerSplit& s, double sm_share) {
  return std::max(0.0, s.fwd.alone() + s.bwd.alone() - combined_layer_pair_s(s.fwd, s.bwd, sm_share));
}

double shared_expert_hidden_s(const ComputeModel& cm, const std::vector<OpCost>& layer, Pass pass, double a2a_s,
                              double sm_share, double dispatch_comm_s, double combine_comm_s) {
  const std::size_t first = permute_index(layer) + 1;
  std::size_t down = layer.size();
  for (std::size_t i = first; i < layer.size(); ++i)
    if (layer[i].name == "shared_expert_down") down = i;
  if (first >= layer.size() || down >= layer.size()) return 0.0;
  // A compute of c beside a comm of d, the compute at 1 - share while the comm runs: it ends at
  // max(d, c + d x share) instead of c + d, a saving of min(c, d x (1 - share)). The side
  // stream's own exchange first takes its seconds of the window, hidden at full speed.
  const double d = std::max(0.0, a2a_s / 2);
  const auto window = [&](double comm, double compute) {
    const double c = std::min(std::max(0.0, comm), d);
    return c + std::min(compute, (d - c) * (1.0 - sm_share));
  };
  const double fc1 = time_of(cm, layer, first, down, pass);
  const double fc2 = time_of(cm, layer, down, down + 1, pass);
  return window(dispatch_comm_s, fc1) + window(combine_comm_s, fc2);
}

}  // namespace clustersim::workloads
