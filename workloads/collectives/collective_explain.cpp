// The --explain report (see collective_explain.h).
#include "workloads/collectives/collective_explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace clustersim::workloads {
namespace {

std::string f(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}
std::string num(double v) { return f("%.4g", v); }
std::string hw(nccl::HwClass h) { return h == nccl::HwClass::NvLink ? "NVLINK" : (h == nccl::HwClass::Pci ? "PCI" : "NET"); }

std::string graph_part(const NcclGraph& g) {
  std::string out = "NCCL's view of the group (topology search, hardware.md 3.3):\n";
  out += "  " + std::to_string(g.ranks) + " GPUs on " + std::to_string(g.nodes) + " node(s), up to " + std::to_string(g.ppn) +
         " per node; intra-node hops are " + hw(g.intra_hw) + ", the slowest GPU-to-GPU path is " + num(g.path_GBps) + " GB/s\n";
  if (g.nodes > 1) out += "  " + std::to_string(g.nics_per_node) + " NIC(s) of " + num(g.nic_GBps) + " GB/s per node\n";
  out += "  " + std::to_string(g.channels) + " channels x " + num(g.bw_intra_GBps) + " GB/s = " +
         num(g.channels * g.bw_intra_GBps) + " GB/s (speed array top " + num(g.channel_speed_max_GBps) + " GB/s per channel)\n";
  out += std::string("  NVLS (in-switch reduction): ") + (g.nvls ? "yes, " + std::to_string(g.nvls_channels) + " channels" : "no") +
         "; SHARP across nodes: " + (g.collnet ? "yes (NCCL needs NCCL_COLLNET_ENABLE=1)" : "no") + "\n";
  if (std::string_view(g.release.version) != nccl::default_release().version) {
    out += std::string("  NCCL release rules: ") + g.release.version + " (nccl_release.h; default " +
           nccl::default_release().version + ")\n";
  }
  if (!g.ll128) {
    out += "  LL128 off by default (tuning.cc): ";
    if (g.intra_hw != nccl::HwClass::NvLink && g.ppn > 1) {
      out += "the GPUs of a node are not joined by NVLink\n";
    } else {
      out += "the GPU-NIC path is " + std::string(topology::to_string(g.nic_path)) +
             ", and before Hopper NCCL needs PXB or closer across nodes (--proto LL128 forces it)\n";
    }
  }
  return out;
}

std::string table_part(const NcclTuner& t, CollectiveOp op, double bytes) {
  std::string out = "NCCL's cost model for " + std::string(to_string(op)) + " (tuning.cc; time = latency + bytes / (1000 x bw)):\n";
  out += "  algo/proto        latency(us)  algbw(GB/s)   time at " + num(bytes) + " B (us)\n";
  for (nccl::NcclAlgo a : NcclTuner::kAlgos) {
    for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
      const NcclCost& c = t.cost(a, p);
      if (!c.eligible) continue;
      const double time = t.time_us(a, p, bytes);
      out += "  " + std::string(NcclTuner::name(a)) + "/" + std::string(to_string(p));
      out += std::string(18 - NcclTuner::name(a).size() - to_string(p).size() - 1, ' ');
      out += f("%11.2f", c.latency_us) + f("  %11.2f", c.alg_bw_GBps) + f("   %10.2f", time) + "\n";
    }
  }
  try {
    const NcclChoice c = t.choose(bytes);
    out += "  NCCL picks " + std::string(NcclTuner::name(c.algo)) + "/" + std::string(to_string(c.protocol)) +
           " (the lowest time; ties go to the lower algorithm index)\n";
  } catch (const std::invalid_argument&) {
    out += "  NCCL has no collective algorithm for this operation (it runs grouped send/recv)\n";
  }
  return out;
}

std::string steps_part(const CollectivePlan& plan, const NcclGraph& g) {
  const CollectiveRequest& r = plan.request;
  const int n = static_cast<int>(r.ranks.size());
  const double S = r.bytes.value;
  std::string out = "What clustersim replays: " + std::string(to_string(r.algo)) + " with " + std::string(to_string(plan.protocol)) +
                    ", " + std::to_string(plan.channels) + " channel(s), " + std::to_string(plan.chunks) + " chunk(s)\n";
  const bool ar = r.op == CollectiveOp::AllReduce;
  switch (r.algo) {
    case CollectiveAlgo::Ring: {
      const int steps = ar ? 2 * (n - 1) : (r.op == CollectiveOp::Broadcast || r.op == CollectiveOp::Reduce ? n - 1 : n - 1);
      out += "  " + std::to_string(steps) + " steps; in each, every rank sends " + num(S / (plan.channels * n)) +
             " B per channel to the next rank (S / (channels x n))\n";
      out += "  latency term ~ baseLat + steps x hwLat = " + num(nccl::base_latency_us(nccl::NcclAlgo::Ring, plan.protocol)) + " + " +
             std::to_string(steps) + " x " + num(nccl::hw_latency_us(g.intra_hw, nccl::NcclAlgo::Ring, plan.protocol)) + " us (" +
             hw(g.intra_hw) + " " + std::string(to_string(plan.protocol)) + ")\n";
      if (ar) out += "  bandwidth term = 2(n-1)/n x S x wire / bus bandwidth = " + num(2.0 * (n - 1) / n * S * wire_factor(plan.protocol)) + " B / bottleneck\n";
      break;
    }
    case CollectiveAlgo::Tree:
      out += "  each channel carries S/channels = " + num(S / plan.channels) + " B in " + std::to_string(plan.chunks) +
             " chunks up a binary tree of nodes (chains inside nodes) and back down; channels c and c + C/2 share a chain and NIC and run the two trees\n";
      break;
    case CollectiveAlgo::InNetwork:
      if (plan.nccl_algo == nccl::NcclAlgo::NvlsTree) {
        out += "  NVLSTree: each node's GPUs send every chunk to their NVSwitch (NVLS, S(1+1/" + std::to_string(g.nvls_heads) +
               ") each way at nvlsEfficiency " + num(plan.in_network_efficiency) + "); the node's " +
               std::to_string(g.nvls_heads) + " heads carry the partial sum up a binary tree of nodes over their NICs (S/" +
               std::to_string(g.nvls_heads) + " each), the result comes down the tree and is multicast to every GPU; two "
               "mirrored trees take alternate chunks\n";
        break;
      }
      if (g.nodes > 1 && g.ppn > 1) {
        out += "  " + std::to_string(g.ppn) + " GPUs per node: intra-node reduce-scatter (NVLS where the NVSwitch can, else a ring), " +
               "then per rail a SHARP reduction of S/" + std::to_string(g.ppn) + " = " + num(S / g.ppn) +
               " B (each leaf reduces its nodes' chunks and sends one stream up to the aggregation spine, which returns "
               "the result down the same links), then an intra-node all-gather; the stages are pipelined\n";
        break;
      }
      out += "  each GPU sends its data to the switch once and receives the result once" +
             std::string(g.nodes == 1 ? " (NVLS: S(1+1/n) each way, at nvlsEfficiency " + num(plan.in_network_efficiency) + ")" : " (SHARP)") +
             "; launch latency " + num(nccl::hw_latency_us(g.nodes == 1 ? nccl::HwClass::NvLink : nccl::HwClass::Net,
                                                            g.nodes == 1 ? nccl::NcclAlgo::Nvls : nccl::NcclAlgo::CollNetDirect,
                                                            Protocol::Simple)) + " us\n";
      break;
    case CollectiveAlgo::HalvingDoubling:
      out += "  log2(p) halving stages (S/2, S/4, ...) then log2(p) doubling stages, p = largest power of two <= " +
             std::to_string(n) + "; extra ranks hand off before and receive after\n";
      break;
    case CollectiveAlgo::Direct:
      if (r.op == CollectiveOp::SendRecv) {
        out += "  every rank sends S to one peer and receives S from another: " + std::to_string(n) + " flows\n";
      } else if (r.op == CollectiveOp::Broadcast || r.op == CollectiveOp::Reduce) {
        out += "  the root exchanges S with each of the other ranks at once: " + std::to_string(n - 1) + " flows\n";
      } else {
        out += "  every rank sends S/n to every peer at once: " + std::to_string(n * (n - 1)) + " flows per stage" +
               (ar ? " (a reduce-scatter stage, then an all-gather stage)" : "") + "\n";
      }
      if (plan.p2p_nvlink_cap < sim::kUnlimited) {
        out += "  NCCL p2p channels for this size: " + std::to_string(plan.channels) + "; a send over NVLink is capped at " +
               std::to_string(plan.channels) + " x one lane (" + num(g.nvlink_lane_GBps) + " GB/s) = " +
               num(plan.p2p_nvlink_cap / 1e9) + " GB/s\n";
      }
      break;
    case CollectiveAlgo::Hierarchical:
      out += "  intra-node stage, inter-node stage among same-index GPUs (rails) on S/ppn, intra-node stage\n";
      break;
    case CollectiveAlgo::Auto: break;
  }
  if (plan.channel_rate_cap < sim::kUnlimited) {
    out += "  protocol ceiling per channel: " + num(plan.channel_rate_cap / 1e9) + " GB/s on the wire (NCCL llMaxBw / perChMax, the channel's search speed, tree size correction)\n";
  }
  return out;
}

// NCCL-style latency term of the replayed schedule: NCCL's own model where the schedule is one of
// NCCL's algorithms, else steps x NCCL's per-step hardware latency of the links they cross.
struct LatencyTerm {
  double us = 0;
  std::string formula;
};
LatencyTerm latency_term(const CollectivePlan& plan, const NcclGraph& g, const NcclTuner& tuner, CollectiveOp op) {
  const int n = static_cast<int>(plan.request.ranks.size());
  const Protocol p = plan.protocol;
  const nccl::HwClass link = g.nodes > 1 ? nccl::HwClass::Net : g.intra_hw;
  const double step = nccl::hw_latency_us(link, nccl::NcclAlgo::Ring, p);
  auto steps = [&](int k, const std::string& what) {
    return LatencyTerm{k * step, std::to_string(k) + " steps (" + what + ") x " + num(step) + " us (" + hw(link) + " " +
                                     std::string(to_string(p)) + " hwLat)"};
  };
  const bool ar = op == CollectiveOp::AllReduce;
  switch (plan.request.algo) {
    case CollectiveAlgo::Ring:
    case CollectiveAlgo::Tree: {
      const nccl::NcclAlgo a = plan.request.algo == CollectiveAlgo::Tree ? nccl::NcclAlgo::Tree : nccl::NcclAlgo::Ring;
      const NcclCost& c = tuner.cost(a, p);
      if (c.eligible) return {c.latency_us, "NCCL's " + std::string(NcclTuner::name(a)) + "/" + std::string(to_string(p)) + " latency"};
      return steps(ar ? 2 * (n - 1) : n - 1, "one per ring hop");
    }
    case CollectiveAlgo::InNetwork: {
      if (plan.nccl_algo == nccl::NcclAlgo::NvlsTree) {
        const NcclCost& c = tuner.cost(nccl::NcclAlgo::NvlsTree, Protocol::Simple);
        char what[96];
        std::snprintf(what, sizeof what, "NCCL's NVLSTree latency (25 us + 2 log2(nodes) x %g us, paid once)",
                      g.release.nvls_tree_net_latency_us);
        return {c.latency_us, what};
      }
      const bool nvls = g.nodes == 1;
      const double us = nccl::hw_latency_us(nvls ? nccl::HwClass::NvLink : nccl::HwClass::Net,
                                            nvls ? nccl::NcclAlgo::Nvls : nccl::NcclAlgo::CollNetDirect, Protocol::Simple);
      return {us, std::string(nvls ? "NVLS" : "CollNet") + " launch latency (paid once)"};
    }
    case CollectiveAlgo::HalvingDoubling: {
      int p2 = 1, k = 0;
      while (p2 * 2 <= n) p2 *= 2, ++k;
      const int extra = p2 < n ? 2 : 0;
      return steps((ar ? 2 * k : k) + extra, ar ? "log2 p halving + log2 p doubling" : "log2 p");
    }
    case CollectiveAlgo::Direct: return steps(ar ? 2 : 1, ar ? "reduce-scatter, all-gather" : "one exchange");
    case CollectiveAlgo::Hierarchical: {
      const double intra = nccl::hw_latency_us(g.intra_hw, nccl::NcclAlgo::Ring, p);
      const double net = nccl::hw_latency_us(nccl::HwClass::Net, nccl::NcclAlgo::Ring, p);
      const int k_intra = 2 * std::max(0, g.ppn - 1), k_net = 2 * std::max(0, g.nodes - 1);
      return {k_intra * intra + k_net * net, std::to_string(k_intra) + " intra-node steps x " + num(intra) + " us + " +
                                                 std::to_string(k_net) + " inter-node steps x " + num(net) + " us"};
    }
    case CollectiveAlgo::Auto: break;
  }
  return {};
}

}  // namespace

std::string explain_collective(const CollectiveEnvironment& env, const CollectiveRequest& req) {
  const CollectivePlan plan = plan_collective(env, req);
  const NcclGraph g = nccl_graph(env.topo, env.router, req.ranks, env.gpu_compute_capability, env.hints);
  std::string out = "# explain: " + std::string(to_string(req.op)) + " of " + num(req.bytes.value) + " B on " +
                    std::to_string(req.ranks.size()) + " GPUs\n";
  out += graph_part(g);
  const NcclTuner tuner(g, req.op);
  out += table_part(tuner, req.op, req.bytes.value);
  out += steps_part(plan, g);

  std::vector<double> carried;
  const double t = simulate_plan(env, plan, &carried).time.seconds();
  topology::LinkId busiest = 0;
  double worst = -1;
  for (topology::LinkId l = 0; l < env.topo.link_count(); ++l) {
    const double busy = carried[l] / env.topo.link(l).bandwidth.value;
    if (busy > worst) {
      worst = busy;
      busiest = l;
    }
  }
  const auto& link = env.topo.link(busiest);
  const int n = static_cast<int>(req.ranks.size());
  out += "Simulated: " + f("%.2f", t * 1e6) + " us, algbw " + f("%.2f", req.bytes.value / t / 1e9) + " GB/s, busbw " +
         f("%.2f", req.bytes.value / t / 1e9 * busbw_factor(req.op, n)) + " GB/s";
  if (plan.nccl_model_us > 0) out += " (NCCL's model: " + f("%.2f", plan.nccl_model_us) + " us)";
  // A link busy for most of the run is the bottleneck; otherwise a per-flow ceiling held the flows
  // below the link rate (NCCL's per-channel protocol ceiling, or the p2p channel count).
  const double cap = std::min(plan.channel_rate_cap, plan.p2p_nvlink_cap);
  const bool saturated = worst >= 0.9 * t || !(cap < sim::kUnlimited);
  out += std::string("\n  ") + (saturated ? "bottleneck link: " : "busiest link: ") + env.topo.device(link.src).name +
         " -> " + env.topo.device(link.dst).name + " carried " + num(carried[busiest]) + " B at " +
         num(link.bandwidth.value / 1e9) + " GB/s = " + f("%.2f", worst * 1e6) + " us of the " + f("%.2f", t * 1e6) + " us busy";
  const LatencyTerm lat = latency_term(plan, g, tuner, req.op);
  const double bw_us = worst * 1e6;
  if (saturated) {
    out += " (the rest is latency and pipeline fill)\n";
    out += "  latency term ~ " + lat.formula + " = " + f("%.2f", lat.us) + " us; bandwidth term = the busiest link's " +
           f("%.2f", bw_us) + " us; sum " + f("%.2f", lat.us + bw_us) + " us vs " + f("%.2f", t * 1e6) +
           " us simulated (pipelined steps hide part of the latency; pipeline fill and drain and links idle between steps add time)\n";
  } else {
    out += "; no link is saturated: each flow runs at its ceiling of " + num(cap / 1e9) + " GB/s" +
           (plan.p2p_nvlink_cap <= plan.channel_rate_cap ? " (NCCL p2p channels x one NVLink lane)" : " (the channel's speed and protocol ceiling)") +
           ", plus latency and pipeline fill\n";
    out += "  latency term ~ " + lat.formula + " = " + f("%.2f", lat.us) + " us\n";
  }
  return out;
}

}  // namespace clustersim::workloads
