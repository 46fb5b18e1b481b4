// Default resolution and isolated replay of one collective (see collective_runner.h).
#include "workloads/collectives/collective_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "topology/catalog.h"
#include "workloads/collectives/chain_collective.h"
#include "workloads/collectives/collective_replay.h"
#include "workloads/collectives/direct_collective.h"
#include "workloads/collectives/halving_doubling_collective.h"
#include "workloads/collectives/hierarchical_collective.h"
#include "workloads/collectives/in_network_collective.h"
#include "workloads/collectives/node_alltoall_collective.h"
#include "workloads/collectives/nvls_tree_collective.h"
#include "workloads/collectives/p2p_channels.h"
#include "workloads/collectives/ring_collective.h"
#include "workloads/collectives/tree_collective.h"

namespace clustersim::workloads {
namespace {

// Chunk size targeted when pipelining: NCCL's Simple protocol moves a 4 MiB buffer in
// NCCL_STEPS = 8 slots, i.e. 512 KiB per slot (DEFAULT_BUFFSIZE, hardware.md §3.6).
constexpr double kTargetChunkBytes = 4.0 * 1048576.0 / nccl::kSteps;
// Most chunks a chain, tree or in-network pipeline is cut into (bounds transfers per size; at
// the bound a chunk is > 512 KiB, which only shortens an already negligible pipeline fill).
constexpr double kMaxPipelineChunks = 1024;

bool is_p2p(CollectiveOp op) { return op == CollectiveOp::AllToAll || op == CollectiveOp::SendRecv; }
bool is_rooted(CollectiveOp op) { return op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce; }

std::string op_name(CollectiveOp op) { return std::string(to_string(op)); }

CollectiveAlgo from_nccl(nccl::NcclAlgo a) {
  switch (a) {
    case nccl::NcclAlgo::Tree: return CollectiveAlgo::Tree;
    case nccl::NcclAlgo::Ring: return CollectiveAlgo::Ring;
    case nccl::NcclAlgo::CollNetDirect:
    case nccl::NcclAlgo::Nvls:
    case nccl::NcclAlgo::NvlsTree: return CollectiveAlgo::InNetwork;
  }
  return CollectiveAlgo::Ring;
}

void check_in_network(const NcclGraph& g, const GraphHints& h, const CollectiveRequest& req) {
  if (!h.nvls_enabled && h.gpu_nvls && !g.collnet) {
    throw CollectiveError("in-network reduction needs NVLS here, and NVLS is off (--nvls off, [collectives] nvls = "
                          "false: NCCL_NVLS_ENABLE=0); use --algo ring, tree or auto");
  }
  if (g.nodes == 1 && !g.nvls) {
    throw CollectiveError("in-network reduction inside a node needs NVLS (NVSwitch gen3+ with Hopper or Blackwell "
                          "GPUs); " + (h.gpu_name.empty() ? std::string("these GPUs") : h.gpu_name) + " on " +
                          (g.intra_hw == nccl::HwClass::NvLink ? "this NVLink fabric" : "PCIe") +
                          " cannot reduce in the switch; use --algo ring, tree or auto");
  }
  if (g.nodes > 1 && !g.collnet && !(g.nvls && req.op == CollectiveOp::AllReduce)) {
    throw CollectiveError("in-network reduction across nodes needs SHARP switches (InfiniBand HDR/NDR Quantum), or NVLS "
                          "nodes for an all-reduce (NVLSTree); the "
                          "fabric of " + (h.nic_name.empty() ? std::string("this NIC") : h.nic_name) +
                          " cannot reduce in the switch; use --algo ring, tree, hierarchical or auto");
  }
  if (req.protocol && *req.protocol != Protocol::Simple) {
    throw CollectiveError("in-network reduction runs the Simple protocol only (NCCL: NVLS and CollNet are Simple-only); "
                          "drop --proto or use --proto Simple");
  }
}

// Which algorithm and protocol run, and what NCCL's model says about it.
void resolve(const CollectiveEnvironment& env, const NcclGraph& g, const CollectiveRequest& req, CollectivePlan& plan) {
  const CollectiveOp op = req.op;
  const Protocol* proto = req.protocol ? &*req.protocol : nullptr;
  const double bytes = req.bytes.value;
  const NcclTuner tuner(g, op);
  CollectiveAlgo algo = req.algo;
  if (op == CollectiveOp::AllToAll && algo == CollectiveAlgo::Hierarchical) {
    // Node-deduplicated all-to-all (DeepEP): SM-driven copies, no NCCL channel ceiling.
    plan.protocol = req.protocol.value_or(Protocol::Simple);
    return;
  }
  if (is_p2p(op)) {
    if (algo != CollectiveAlgo::Direct && algo != CollectiveAlgo::Auto) {
      throw CollectiveError(op_name(op) + " is point-to-point traffic (NCCL runs it as grouped send/recv); '" +
                            std::string(to_string(algo)) + "' has nothing to reduce or forward: use --algo direct or auto" +
                            (op == CollectiveOp::AllToAll ? " (or hierarchical: one copy per node over the network, forwarded over NVLink)" : ""));
    }
    plan.request.algo = CollectiveAlgo::Direct;
    plan.protocol = req.protocol.value_or(Protocol::Simple);
    return;
  }
  auto take = [&](const NcclChoice& c) {
    plan.protocol = c.protocol;
    plan.nccl_algo = c.algo;
    plan.nccl_model_us = c.time_us;
  };
  const nccl::NcclAlgo ring = nccl::NcclAlgo::Ring, tree = nccl::NcclAlgo::Tree;
  switch (algo) {
    case CollectiveAlgo::Auto: {
      const NcclChoice c = tuner.choose(bytes, nullptr, proto);
      take(c);
      algo = from_nccl(c.algo);
      break;
    }
    case CollectiveAlgo::Ring: take(tuner.choose(bytes, &ring, proto)); break;
    case CollectiveAlgo::Tree:
      if (op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter) {
        throw CollectiveError(op_name(op) + " has no tree form: a tree moves whole buffers up or down, while " + op_name(op) +
                              " gives each rank a different piece (NCCL runs it as a ring); use --algo ring, "
                              "halving-doubling, direct or in-network");
      }
      if (op == CollectiveOp::AllReduce) {
        take(tuner.choose(bytes, &tree, proto));
      } else {
        plan.protocol = tuner.choose(bytes, &ring, proto).protocol;  // NCCL has no tree broadcast/reduce
        plan.nccl_algo = tree;
      }
      break;
    case CollectiveAlgo::InNetwork: {
      check_in_network(g, env.hints, req);
      plan.protocol = Protocol::Simple;
      // Across nodes SHARP where the fabric has it, else NVLS inside the nodes and a tree between
      // them (NVLSTree: all-reduce only, check_in_network).
      plan.nccl_algo = g.nodes == 1 ? nccl::NcclAlgo::Nvls
                       : g.collnet  ? nccl::NcclAlgo::CollNetDirect
                                    : nccl::NcclAlgo::NvlsTree;
      const double t = tuner.time_us(plan.nccl_algo, Protocol::Simple, bytes);
      plan.nccl_model_us = t;
      break;
    }
    case CollectiveAlgo::Hierarchical:
      plan.protocol = req.protocol.value_or(Protocol::Simple);
      break;
    case CollectiveAlgo::HalvingDoubling:
    case CollectiveAlgo::Direct:
      plan.protocol = req.protocol.value_or(Protocol::Simple);
      break;
  }
  plan.request.algo = algo;
  // NVLS moves payload at the rate NCCL's cost model gives it (nvlsEfficiency at the NVLS graph's
  // channel speed, nccl::nvls_wire_efficiency); SHARP has no such NCCL constant.
  if (algo == CollectiveAlgo::InNetwork) {
    const bool nvls = plan.nccl_algo == nccl::NcclAlgo::Nvls || plan.nccl_algo == nccl::NcclAlgo::NvlsTree;
    plan.in_network_efficiency = nvls ? nccl::nvls_wire_efficiency(g.cc_row, g.nvls_heads, g.ppn, g.ranks, g.path_GBps) : 1.0;
    // NVLSTree: each head's NIC at the rate the NVLS graph reserves for it (nvls_tree_collective.h).
    if (plan.nccl_algo == nccl::NcclAlgo::NvlsTree && g.nvls_bw_inter_GBps > 0) plan.nvls_head_rate = g.nvls_bw_inter_GBps * 1e9;
  }
}

void shape(const NcclGraph& g, CollectivePlan& plan) {
  const CollectiveRequest& req = plan.request;
  const double S = req.bytes.value;
  const int n = static_cast<int>(req.ranks.size());
  const CollectiveAlgo algo = req.algo;
  plan.channels = 1;
  plan.chunks = 1;
  if (algo == CollectiveAlgo::Ring || algo == CollectiveAlgo::Tree) {
    const NcclTuner tuner(g, req.op);
    const nccl::NcclAlgo a = algo == CollectiveAlgo::Tree ? nccl::NcclAlgo::Tree : nccl::NcclAlgo::Ring;
    const LaunchShape ls = tuner.launch_shape(a, plan.protocol, S);
    plan.channels = req.channels > 0 ? req.channels : ls.channels;
    plan.nccl_channels = req.channels > 0 ? req.channels : ls.nccl_channels;
    // The channel's ceiling on the wire (its search speed, the protocol's ceiling and, for trees,
    // NCCL's size correction), for the threads launched.
    const double threads = static_cast<double>(ls.threads) / ls.max_threads;
    plan.channel_rate_cap = tuner.channel_wire_cap_GBps(a, plan.protocol, S) * 1e9 * threads;
  }
  if (algo == CollectiveAlgo::Direct) {
    // Bytes of one send: a whole buffer for send/recv, broadcast and reduce, a 1/n piece otherwise.
    const CollectiveOp op = req.op;
    const bool whole = op == CollectiveOp::SendRecv || op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce;
    const double peer = whole ? S : S / std::max(1, n);
    const P2pChannels p2p = nccl_p2p_channels(g, peer);
    plan.channels = req.channels > 0 ? req.channels : p2p.channels;
    if (g.intra_hw == nccl::HwClass::NvLink && g.nvlink_lane_GBps > 0) {
      plan.p2p_nvlink_cap = plan.channels * g.nvlink_lane_GBps * 1e9;
      if (is_p2p(op)) plan.p2p_drain_us = plan.hints.p2p_drain_steps * p2p_drain_us(p2p, g.nvlink_lane_GBps);
    }
  }
  if (algo != CollectiveAlgo::Ring && algo != CollectiveAlgo::Tree) plan.nccl_channels = plan.channels;
  if (req.chunks > 0) {
    plan.chunks = req.chunks;
    return;
  }
  if (algo == CollectiveAlgo::Ring && !is_rooted(req.op)) {
    const double step_bytes = S / (plan.channels * std::max(1, n));
    plan.chunks = static_cast<int>(std::clamp(std::ceil(step_bytes / kTargetChunkBytes), 1.0, 8.0));
  } else if (algo == CollectiveAlgo::Tree && req.op == CollectiveOp::AllReduce) {
    // NCCL's tree chunk for the protocol, halved to keep the pipeline fill short (tree_collective.h).
    const double per_channel = S / plan.channels;
    const double chunk = tree_chunk_bytes(plan.protocol, per_channel, g.ppn, g.nodes);
    plan.chunks = static_cast<int>(std::clamp(std::ceil(per_channel / chunk), 1.0, kMaxPipelineChunks));
  } else if (algo == CollectiveAlgo::InNetwork &&
             (plan.nccl_algo == nccl::NcclAlgo::Nvls || plan.nccl_algo == nccl::NcclAlgo::NvlsTree)) {
    // One piece per NCCL NVLS loop: channels x heads x NCCL's chunk for the size (enqueue.cc). A
    // loop is the unit the scatter, reduce/multicast and gather warps hand on to each other, so
    // its time is the pipeline's fill and drain.
    const bool tree = plan.nccl_algo == nccl::NcclAlgo::NvlsTree;
    const double chunk = tree ? nccl::nvls_tree_chunk_bytes(S, g.nvls_channels, g.nvls_heads, g.nodes)
                              : nccl::nvls_chunk_bytes(S, g.nvls_channels, g.nvls_heads);
    const double loop = static_cast<double>(g.nvls_channels) * g.nvls_heads * chunk;
    plan.channels = g.nvls_channels;
    plan.nccl_channels = g.nvls_channels;
    plan.chunks = static_cast<int>(std::clamp(std::ceil(S / loop), 1.0, kMaxPipelineChunks));
  } else if (algo == CollectiveAlgo::Ring || algo == CollectiveAlgo::Tree || algo == CollectiveAlgo::InNetwork) {
    plan.chunks = static_cast<int>(std::clamp(std::ceil(S / plan.channels / kTargetChunkBytes), 1.0, kMaxPipelineChunks));
  }
}

std::vector<int> rotated(const std::vector<int>& ranks, int root) {
  std::vector<int> out = ranks;
  std::rotate(out.begin(), out.begin() + root, out.end());
  return out;
}

}  // namespace

std::string budget_count_text(std::uint64_t count) {
  const double n = static_cast<double>(count);
  const auto scaled = [&](double unit, const char* name) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3g %s", n / unit, name);
    return std::string(buf);
  };
  if (n >= 999.5e6) return scaled(1e9, "billion");  // 999.6 million would print as "1e+03 million"
  if (n >= 999.5e3) return scaled(1e6, "million");
  if (n >= 1e4) return scaled(1e3, "thousand");
  return std::to_string(count);
}

GraphHints graph_hints(const topology::ClusterSpec& spec) {
  GraphHints h;
  const topology::GpuSpec* gpu = topology::find_gpu(spec.node.gpu);
  const topology::NicSpec* nic = topology::find_nic(spec.node.nic);
  h.gpu_nvls = gpu != nullptr && gpu->nvls && spec.node.intra == topology::IntraKind::NvSwitch;
  h.fabric_sharp = nic != nullptr && nic->sharp && spec.node.nics > 0;
  h.gpu_name = gpu != nullptr ? gpu->name : spec.node.gpu;
  h.nic_name = nic != nullptr ? nic->name : spec.node.nic;
  return h;
}

CollectivePlan plan_collective(const CollectiveEnvironment& env, const CollectiveRequest& req) {
  if (req.ranks.size() < 2) throw CollectiveError("a collective needs at least 2 GPUs");
  if (req.root < 0 || req.root >= static_cast<int>(req.ranks.size())) {
    throw CollectiveError("the root must be one of the " + std::to_string(req.ranks.size()) + " GPUs");
  }
  const NcclGraph g = nccl_graph(env.topo, env.router, req.ranks, env.gpu_compute_capability, env.hints);
  CollectivePlan plan;
  plan.request = req;
  plan.gpu_compute_capability = env.gpu_compute_capability;
  plan.hints = env.hints;
  try {
    resolve(env, g, req, plan);
  } catch (const CollectiveError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw CollectiveError(e.what());
  }
  shape(g, plan);
  return plan;
}

CollectivePlan plan_collective(const CollectiveEnvironment& env, const CollectiveRequest& req, Protocol proto) {
  CollectiveRequest r = req;
  r.protocol = proto;
  return plan_collective(env, r);
}

std::unique_ptr<CollectiveAlgorithm> make_collective(CollectiveContext ctx, const CollectivePlan& plan,
                                                     CollectiveListener* listener, std::uint64_t tag) {
  const CollectiveRequest& req = plan.request;
  const CollectiveOp op = req.op;
  const int n = static_cast<int>(req.ranks.size());
  const double S = req.bytes.value;
  switch (req.algo) {
    case CollectiveAlgo::Ring:
      if (is_rooted(op)) return std::make_unique<ChainCollective>(ctx, plan, listener, tag);
      if (!is_p2p(op)) return std::make_unique<RingCollective>(ctx, plan, listener, tag);
      break;
    case CollectiveAlgo::Tree:
      if (op == CollectiveOp::AllReduce || is_rooted(op)) return std::make_unique<TreeCollective>(ctx, plan, listener, tag);
      break;
    case CollectiveAlgo::HalvingDoubling:
      if (!is_p2p(op)) {
        return std::make_unique<HalvingDoublingCollective>(ctx, plan, listener, tag, HalvingDoublingSchedule(op, n, S),
                                                           rotated(req.ranks, req.root));
      }
      break;
    case CollectiveAlgo::Direct: {
      const bool rooted = is_rooted(op);
      // Every schedule but the rooted ones is invariant under shifting positions (rank_folding.h);
      // folding needs the collective alone on its network.
      std::optional<RankFolding> folding;
      if (plan.fold_channels && !plan.shares_links && !rooted) folding = fold_ranks(ctx.topo, ctx.router, req.ranks);
      return std::make_unique<DirectCollective>(ctx, plan, listener, tag,
                                                DirectSchedule(op, n, S, op == CollectiveOp::SendRecv ? std::max(1, req.root) : 1),
                                                rooted ? rotated(req.ranks, req.root) : req.ranks, std::move(folding));
    }
    case CollectiveAlgo::InNetwork:
    case CollectiveAlgo::Hierarchical: {
      if (op == CollectiveOp::AllToAll && req.algo == CollectiveAlgo::Hierarchical) {
        // Positions in request order, nodes numbered in order of first appearance.
        std::map<int, int> node_index;
        std::vector<int> node_of;
        for (int r : req.ranks) node_of.push_back(node_index.emplace(ctx.topo.server_of_gpu(r), static_cast<int>(node_index.size())).first->second);
        try {
          return std::make_unique<NodeAllToAllCollective>(ctx, plan, listener, tag,
                                                          NodeAllToAllSchedule(std::move(node_of), S, req.remote_share), req.ranks);
        } catch (const std::invalid_argument& e) {
          throw CollectiveError(e.what());
        }
      }
      std::map<int, int> per_server;
      for (int r : req.ranks) ++per_server[ctx.topo.server_of_gpu(r)];
      const bool flat = per_server.size() == 1 || static_cast<int>(per_server.size()) == n;
      if (req.algo == CollectiveAlgo::InNetwork && flat) return std::make_unique<InNetworkCollective>(ctx, plan, listener, tag);
      if (req.algo == CollectiveAlgo::InNetwork && plan.nccl_algo == nccl::NcclAlgo::NvlsTree && op == CollectiveOp::AllReduce) {
        return std::make_unique<NvlsTreeCollective>(ctx, plan, listener, tag);
      }
      CollectiveRequest composite = req;
      if (req.algo == CollectiveAlgo::InNetwork) composite.inter_algo = CollectiveAlgo::InNetwork;
      CollectivePlan cplan = plan;
      cplan.request = composite;
      const int cc = plan.gpu_compute_capability;
      const GraphHints hints = plan.hints;
      const bool fold = plan.fold_channels;
      auto maker = [ctx, cc, hints, fold](const CollectiveRequest& r, CollectiveListener* l, bool private_links) {
        const CollectiveEnvironment env{ctx.topo, ctx.router, cc, hints};
        CollectivePlan p = plan_collective(env, r);
        p.launch_latency = false;
        // Other stages and groups may share the links: then fold only channels that cross identical
        // ones; a group on links of its own folds as if alone (hierarchical_collective.h).
        p.fold_channels = fold;
        p.shares_links = !private_links;
        return make_collective(ctx, p, l, 0);
      };
      try {
        return std::make_unique<HierarchicalCollective>(ctx, cplan, listener, tag, maker);
      } catch (const CollectiveError&) {
        throw;
      } catch (const std::invalid_argument& e) {
        throw CollectiveError(e.what());
      }
    }
    case CollectiveAlgo::Auto: break;
  }
  throw CollectiveError("algorithm '" + std::string(to_string(req.algo)) + "' does not implement '" + op_name(op) + "'");
}

CollectiveResult simulate_plan(const CollectiveEnvironment& env, const CollectivePlan& plan,
                               std::vector<double>* link_bytes) {
  const auto t0 = std::chrono::steady_clock::now();
  CollectiveReplay replay = replay_collectives(env, std::span(&plan, 1), link_bytes != nullptr);
  CollectiveResult r;
  r.time = replay.durations.front();
  r.protocol = plan.protocol;
  r.algo = plan.request.algo;
  r.channels = plan.channels;
  r.nccl_channels = plan.nccl_channels;
  r.chunks = plan.chunks;
  r.transfers = replay.transfers_issued;
  r.events = replay.events;
  r.solver_components = replay.solver_components;
  r.peak_flows = replay.peak_flows;
  r.nccl_model_us = plan.nccl_model_us;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (link_bytes != nullptr) *link_bytes = std::move(replay.link_bytes);
  return r;
}

CollectiveResult simulate_collective(const CollectiveEnvironment& env, const CollectiveRequest& req) {
  return simulate_plan(env, plan_collective(env, req));
}

}  // namespace clustersim::workloads
