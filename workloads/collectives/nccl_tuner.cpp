// NCCL's cost model and selection (see nccl_tuner.h). Formulas follow hardware.md §3.4-3.6
// line by line; the comments name the NCCL expression each one ports.
#include "workloads/collectives/nccl_tuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>

namespace clustersim::workloads {
namespace {

using nccl::HwClass;
using nccl::NcclAlgo;

int log2i(double v) {
  if (v < 1) return -1;
  int r = 0;
  while (v >= 2) {
    v /= 2;
    ++r;
  }
  return r;
}

std::span<const double> speeds(int cc, bool inter) {
  if (cc >= 100 && cc < 200) {
    return inter ? std::span<const double>(nccl::kSm100SpeedArrayInter) : std::span<const double>(nccl::kSm100SpeedArrayIntra);
  }
  if (cc >= 90 && cc < 100) {
    return inter ? std::span<const double>(nccl::kSm90SpeedArrayInter) : std::span<const double>(nccl::kSm90SpeedArrayIntra);
  }
  return inter ? std::span<const double>(nccl::kSpeedArrayInter) : std::span<const double>(nccl::kSpeedArrayIntra);
}

// search.cc: start at the highest speed <= the bottleneck.
double fitting_speed(std::span<const double> arr, double limit) {
  for (double s : arr) {
    if (s <= limit + 1e-9) return s;
  }
  return arr.back();
}

// The NVLS graph's speed across nodes (search.cc, tags v2.26.2-1 and v2.30.7-1): ncclTopoCompute
// takes the inter speed array once the system has NICs; each NVLS search channel is one head, a GPU
// with its own NIC (ncclTopoSearchRecNet: the NIC needs bwInter and loses it), and takes bwIntra =
// bwInter of every GPU's NVLink, twice of its head's (ncclTopoSearchTryNvls); ncclTopoCompareGraphs
// prefers more channels, so the first pass ends at the fastest speed with the most heads, at most
// min(GPUs, NCCL_MAX_NVLS_ARITY): (heads + 1) x speed within a GPU's NVLink and speed within a NIC.
// GB200 NVL72: 32 heads, 20 GB/s (33 x 22 = 726 > 721.8); 8 H100s: 40 (9 x 40 = 360). The second
// pass (search.cc "pass 2") may then raise bwInter alone, below 2 x bwIntra, where the NICs allow;
// not modelled (it would undo the bwInter / 2 that NCCL's model has beyond two nodes, while the
// CoreWeave rows halve from 2 to 20 racks).
double nvls_head_inter_speed(std::span<const double> inter, int heads, double path, double nic) {
  for (double s : inter) {
    if ((heads + 1) * s <= path + 1e-9 && s <= nic + 1e-9) return s;
  }
  return 0.0;
}

bool route_has_nvswitch(const topology::Topology& topo, const topology::Route& r) {
  for (int k = 0; k < r.hops; ++k) {
    if (topo.device(topo.link(r.links[k]).dst).kind == topology::DeviceKind::NvSwitch) return true;
  }
  return false;
}

// tuning.cc (ncclTopoTuneModel): LL128 relies on a 128-byte store arriving whole and in order,
// so NCCL turns it on by default only on paths where that was verified (NVIDIA/nccl#786): compute
// capability 7.0+, NVLink between the GPUs of a node (typeIntra <= NVB; one GPU per node needs
// none), and across nodes a GPU-NIC path of PXB or closer before Hopper; from Hopper on also PXN
// (NVLink to a GPU next to the NIC). A NIC on a root port of its own (PHB: HPE Apollo 6500, ALCF
// Polaris) therefore runs multi-node collectives on an A100 with LL and Simple only. NCCL_PROTO
// can still force LL128 (`--proto LL128`).
bool ll128_enabled(const NcclGraph& g, int compute_capability, bool all_nvlink, std::size_t local_gpus) {
  if (compute_capability < 70) return false;
  if (local_gpus >= 2 && !all_nvlink) return false;
  if (g.nodes == 1 || g.nic_path <= topology::PathType::Pxb) return true;
  return compute_capability >= 90 && all_nvlink && local_gpus >= 2;  // PXN
}

// The closest GPU-NIC PCIe path of a node's GPUs (NET when none has a NIC).
topology::PathType closest_nic_path(const topology::Topology& topo, const topology::Router& router,
                                    const std::vector<int>& local) {
  topology::PathType best = topology::PathType::Net;
  for (int r : local) {
    if (router.has_nic(r)) best = std::min(best, router.pcie_path_type(topo.gpu(r), router.nic_of(r)));
  }
  return best;
}

}  // namespace

NcclGraph nccl_graph(const topology::Topology& topo, const topology::Router& router, const std::vector<int>& ranks,
                     int compute_capability, const GraphHints& hints) {
  NcclGraph g;
  g.ranks = static_cast<int>(ranks.size());
  g.compute_capability = compute_capability;
  g.cc_row = nccl::compcap_row(compute_capability);
  g.cpu_amd = hints.cpu_amd;
  std::map<int, std::vector<int>> by_server;
  for (int r : ranks) by_server[topo.server_of_gpu(r)].push_back(r);
  g.nodes = static_cast<int>(by_server.size());
  int ppn_min = g.ranks;
  for (const auto& [s, local] : by_server) {
    g.ppn = std::max(g.ppn, static_cast<int>(local.size()));
    ppn_min = std::min(ppn_min, static_cast<int>(local.size()));
  }

  // The slowest intra-node path of the first server's GPUs (every server is built alike).
  const std::vector<int>& local = by_server.begin()->second;
  double path = std::numeric_limits<double>::infinity();
  bool all_nvlink = true, all_nvswitch = true;
  double lane = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < local.size(); ++i) {
    for (std::size_t j = 0; j < local.size(); ++j) {
      if (i == j) continue;
      const topology::Route r = router.route(local[i], local[j]);
      path = std::min(path, r.bottleneck.value / 1e9);
      for (int k = 0; k < r.hops; ++k) {
        const topology::Link& link = topo.link(r.links[static_cast<std::size_t>(k)]);
        if (link.kind == topology::LinkKind::NvLink && link.nvlinks > 0) lane = std::min(lane, link.bandwidth.value / 1e9 / link.nvlinks);
      }
      all_nvlink = all_nvlink && router.path_type(local[i], local[j]) == topology::PathType::NvLink;
      all_nvswitch = all_nvswitch && route_has_nvswitch(topo, r);
    }
  }
  g.intra_hw = all_nvlink ? HwClass::NvLink : HwClass::Pci;
  g.nvlink_lane_GBps = all_nvlink && std::isfinite(lane) ? lane : 0.0;

  if (g.nodes > 1 && router.has_nic(ranks.front())) {
    const topology::DeviceId nic = router.nic_of(ranks.front());
    for (topology::LinkId l : topo.out_links(nic)) {
      if (topo.link(l).kind == topology::LinkKind::Network) g.nic_GBps = topo.link(l).bandwidth.value / 1e9;
    }
    for (const auto& d : topo.devices()) g.nics_per_node += (d.kind == topology::DeviceKind::Nic && d.server == 0);
  }
  if (local.size() < 2) path = g.nic_GBps > 0 ? g.nic_GBps : 1.0;
  g.path_GBps = path;
  if (g.nodes > 1) g.nic_path = closest_nic_path(topo, router, local);
  g.ll128 = ll128_enabled(g, compute_capability, all_nvlink, local.size());

  const std::span<const double> intra = speeds(compute_capability, false);
  g.channel_speed_max_GBps = intra.front();
  double speed;
  int channels;
  if (g.nodes == 1) {
    speed = fitting_speed(intra, path);
    channels = std::max(1, static_cast<int>(std::floor(path / speed + 1e-9)));
  } else {
    // One ring per channel leaves through one NIC; the group reaches min(NICs, local GPUs) NICs.
    // With more NICs than MAXCHANNELS / 2 (the 72 of an NVL72 rack) the channel count is set by
    // NVLink, not by the NICs: every ring channel crosses each local GPU's NVLink at the channel's
    // speed (search.cc follows GPU->GPU paths at bwIntra = bwInter and subtracts it from the
    // link), so the search steps down the speed array until 32 channels fit a GPU's NVLink: 32 x
    // 22 GB/s = 704 GB/s on GB200, not 32 x 48 duplicated to 64 x 24 = 1,536 GB/s (which no ring
    // can reach through a GPU's 721.8 GB/s). With a NIC per channel or fewer (DGX: 8 NICs, 16
    // channels after duplication as NCCL reports on DGX H100) the NICs set it, as before.
    const int nics = std::max(1, std::min(g.nics_per_node, g.ppn));
    const std::span<const double> inter = speeds(compute_capability, true);
    speed = fitting_speed(inter, std::min(g.nic_GBps, path));
    if (nics > nccl::kMaxChannels / 2) {
      for (double s : inter) {
        if (s <= speed + 1e-9 && nccl::kMaxChannels / 2 * s <= path + 1e-9) {
          speed = s;
          break;
        }
      }
    }
    channels = nics * std::max(1, static_cast<int>(std::floor(g.nic_GBps / speed + 1e-9)));
  }
  channels = std::min(channels, nccl::kMaxChannels / 2);
  if (speed >= 25.0) {  // search.cc: duplicate channels, halve the per-channel speed
    channels *= 2;
    speed /= 2;
  }
  g.channels = channels;
  g.bw_intra_GBps = speed;
  g.bw_inter_GBps = speed;

  // NVLS needs NVSwitch multicast between the group's GPUs of every node (each node's domain is
  // alike); whether NCCL may run it across nodes is the tuner's business (NVLS needs CollNet
  // there, NVLSTree does not).
  // NCCL_NVLS_ENABLE=0 (src/transport/nvls.cc ncclNvlsInit: nvlsSupport stays 0) turns both off.
  g.release = hints.nccl_release;
  g.nvls = hints.nvls_enabled && hints.gpu_nvls && all_nvswitch && ppn_min >= 2 && g.cc_row >= 2;
  g.nvls_channels = nccl::nvls_channels(g.release, g.cc_row, g.nodes);
  // NVLS heads (connect.cc): one per NVLS search channel, each a GPU (with its NIC across nodes),
  // at most NCCL_MAX_NVLS_ARITY.
  g.nvls_heads = std::min({ppn_min, nccl::kMaxNvlsArity, g.nodes > 1 ? std::max(1, g.nics_per_node) : g.ppn});
  if (g.nvls && g.nodes > 1) {
    g.nvls_bw_inter_GBps = nvls_head_inter_speed(speeds(compute_capability, true), g.nvls_heads, g.path_GBps, g.nic_GBps);
  }
  g.collnet = hints.fabric_sharp && g.nodes > 1;
  return g;
}

NcclTuner::NcclTuner(const NcclGraph& graph, CollectiveOp op) : graph_(graph), op_(op) {
  for (NcclAlgo a : kAlgos) {
    for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) table_[index(a)][static_cast<int>(p)] = compute(a, p);
  }
}

int NcclTuner::index(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::Tree: return 0;
    case NcclAlgo::Ring: return 1;
    case NcclAlgo::CollNetDirect: return 2;
    case NcclAlgo::Nvls: return 3;
    case NcclAlgo::NvlsTree: return 4;
  }
  return 1;
}

std::string_view NcclTuner::name(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::Tree: return "Tree";
    case NcclAlgo::Ring: return "Ring";
    case NcclAlgo::CollNetDirect: return "CollNetDirect";
    case NcclAlgo::Nvls: return "NVLS";
    case NcclAlgo::NvlsTree: return "NVLSTree";
  }
  return "?";
}

NcclCost NcclTuner::compute(NcclAlgo a, Protocol p) const {
  const NcclGraph& g = graph_;
  const int n = g.ranks;
  const bool ar = op_ == CollectiveOp::AllReduce;
  const bool ag_rs = op_ == CollectiveOp::AllGather || op_ == CollectiveOp::ReduceScatter;
  const bool bcast_reduce = op_ == CollectiveOp::Broadcast || op_ == CollectiveOp::Reduce;
  NcclCost c;
  // Eligibility (hardware.md §3.6). CollNet needs NCCL_COLLNET_ENABLE=1 (off by default): it is
  // never picked here; `--algo in-network` runs SHARP explicitly where the fabric has it.
  switch (a) {
    case NcclAlgo::Ring: c.eligible = ar || ag_rs || bcast_reduce; break;
    case NcclAlgo::Tree: c.eligible = ar; break;
    case NcclAlgo::Nvls:
      // Across nodes NCCL runs NVLS only with CollNet (tuning.cc: "Disable ... Collnet+NVLS if
      // collnet is not supported"), which is off by default; all-gather and reduce-scatter on one
      // node of <= NCCL_MAX_NVLS_ARITY GPUs (enqueue.cc).
      c.eligible = p == Protocol::Simple && g.nvls && g.nodes == 1 && g.nvls_channels >= 2 &&
                   (ar || (ag_rs && g.ppn <= nccl::kMaxNvlsArity));
      break;
    case NcclAlgo::NvlsTree:
      // All-reduce only, never on one node (tuning.cc: "Disable NVLS Tree on a single node").
      c.eligible = p == Protocol::Simple && g.nvls && g.nodes > 1 && g.nvls_channels >= 2 && ar;
      break;
    case NcclAlgo::CollNetDirect: c.eligible = false; break;
  }
  if (n < 2 || !c.eligible) return c;

  const int idx2 = g.nodes <= 2 ? g.nodes - 1 : 2;
  const int row = g.cc_row;
  const double ll_max = nccl::kLlMaxBwGBps[g.nodes == 1 ? row : (g.cpu_amd ? 1 : 0)][idx2];
  const int nsteps = ar ? 2 * (n - 1) : (ag_rs ? n - 1 : n);
  const double nch = g.channels;
  double bus = nch * (g.nodes <= 2 ? g.bw_intra_GBps : g.bw_inter_GBps);
  if (a == NcclAlgo::Nvls || a == NcclAlgo::NvlsTree) {
    // tuning.cc (v2.30.7): per channel, intraBw = bwIntra x nvlsEfficiency x (nCh - 1) / nCh, x 2
    // for all-reduce (two operations pipelined); interBw = bwInter (x 2 for NVLSTree on <= 2
    // nodes, so half of it beyond: an inner node of the tree passes 2 S each way); NVLSTree also
    // capped by perChMaxNVLSTreeBws. bwIntra: the GPU's NVLink split over the NVLS channels;
    // bwInter: what the NVLS graph reserves on the heads' NICs (NcclGraph::nvls_bw_inter_GBps, one
    // search channel per head) split over them.
    const double nv = g.nvls_channels;
    if (g.release.nvls_efficiency_model) {
      double intra_bw = (g.path_GBps / nv) * nccl::kNvlsEfficiency[row] * (nv - 1) / nv;
      intra_bw *= ar ? 2.0 : static_cast<double>(g.ppn - 1) / g.ppn;
      double bw = intra_bw;
      if (a == NcclAlgo::NvlsTree) {
        const double inter_bw = g.nvls_heads * g.nvls_bw_inter_GBps / nv * (g.nodes <= 2 ? 2.0 : 1.0);
        bw = std::min({intra_bw, inter_bw, nccl::kPerChannelMaxNvlsTreeGBps[row][idx2]});
      }
      bus = nv * bw;
    } else {
      // Releases to 2.27 (tuning.cc v2.25.1-1 .. v2.27.3-1): bw = min(bwIntra, bwInter), NVLSTree
      // bwInter / 2 beyond two nodes, no efficiency and no per-channel cap; algBw = busBw x 5/6.
      const double intra_bw = g.path_GBps / nv;
      double bw = intra_bw;
      if (g.nodes > 1) {
        const double inter_bw = g.nvls_heads * g.nvls_bw_inter_GBps / nv;
        bw = std::min(intra_bw, a == NcclAlgo::NvlsTree && g.nodes > 2 ? inter_bw / 2.0 : inter_bw);
      }
      bus = nv * bw;
    }
  } else if (a == NcclAlgo::Ring) {
    if (p == Protocol::LL) bus = std::min(ll_max, bus * 0.5);
    if (p == Protocol::LL128) bus = std::min(bus * 0.92, nch * nccl::kPerChannelMaxRingLl128GBps[row][idx2]);
  } else if (a == NcclAlgo::Tree) {
    bus = std::min(bus * 0.92, nch * nccl::kPerChannelMaxTreeGBps[row][idx2]);
    if (p == Protocol::LL) bus = std::min(bus / 3.8, ll_max);
    if (p == Protocol::LL128) {
      bus = std::min(bus * (g.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * nccl::kPerChannelMaxTreeLl128GBps[row][idx2]);
    }
  }
  c.bus_bw_GBps = bus;
  const bool nvls = a == NcclAlgo::Nvls || a == NcclAlgo::NvlsTree;
  if (nvls && !g.release.nvls_efficiency_model) {
    // Releases to 2.27: algBw = busBw x 5/6 for all-reduce (tuning.cc v2.25.1-1 .. v2.27.3-1).
    c.alg_bw_GBps = ar ? bus * 5.0 / 6.0 : bus;
  } else if (a == NcclAlgo::Ring || (nvls && ar)) {
    c.alg_bw_GBps = bus * n / nsteps;
  } else if (a == NcclAlgo::Tree) {
    c.alg_bw_GBps = bus * 0.5;
  } else {
    c.alg_bw_GBps = bus;
  }
  c.latency_us = latency(a, p);
  return c;
}

double NcclTuner::latency(NcclAlgo a, Protocol p) const {
  const NcclGraph& g = graph_;
  const int n = g.ranks;
  const bool ar = op_ == CollectiveOp::AllReduce;
  const bool ag_rs = op_ == CollectiveOp::AllGather || op_ == CollectiveOp::ReduceScatter;
  const int nsteps = ar ? 2 * (n - 1) : (ag_rs ? n - 1 : n);
  double lat = nccl::base_latency_us(a, p);
  double intra_lat = nccl::hw_latency_us(g.intra_hw, a, p, g.release);
  const double inter_lat =
      g.ppn == 1 ? nccl::hw_latency_us(HwClass::Net, NcclAlgo::Tree, p) : nccl::hw_latency_us(HwClass::Net, a, p, g.release);
  switch (a) {
    case NcclAlgo::Ring:
      if (ar || ag_rs) {
        double net_overhead = 0;
        if (g.nodes > 1) {
          net_overhead = (g.cpu_amd ? nccl::kNetOverheadAmdUs : nccl::kNetOverheadIntelUs) * (p == Protocol::Simple ? 3 : 1);
        }
        intra_lat = std::max(intra_lat, net_overhead);
        const int n_inter = g.nodes == 1 ? 0 : (ar ? 2 * (g.nodes - 1) : g.nodes - 1);
        lat += (nsteps - n_inter) * intra_lat + n_inter * inter_lat;
      } else {
        const HwClass hw = g.nodes == 1 ? g.intra_hw : HwClass::Net;
        lat += nsteps * (p == Protocol::Simple ? nccl::hw_latency_us(hw, NcclAlgo::Tree, Protocol::Simple)
                                               : nccl::hw_latency_us(hw, NcclAlgo::Ring, p));
      }
      break;
    case NcclAlgo::Tree: lat += 2 * ((g.ppn - 1) * intra_lat + log2i(g.nodes) * inter_lat); break;
    case NcclAlgo::Nvls: lat = intra_lat + (g.nodes > 1 ? inter_lat : 0.0); break;
    case NcclAlgo::NvlsTree: lat += intra_lat + 2 * log2i(g.nodes) * inter_lat; break;
    case NcclAlgo::CollNetDirect:
      lat += 2 * (std::min(1, g.ppn - 1) * intra_lat + (g.ppn - 1) * 0.4) + inter_lat;
      break;
  }
  return lat;
}

double NcclTuner::time_us(NcclAlgo a, Protocol p, double bytes) const {
  const NcclCost& c = cost(a, p);
  if (!c.eligible || c.alg_bw_GBps <= 0) return -1;
  double bw = c.alg_bw_GBps;
  double lat = c.latency_us;
  if (a == NcclAlgo::Tree && op_ == CollectiveOp::AllReduce) {
    const int log_size = log2i(std::floor(bytes / 64));
    if (log_size >= 0 && log_size < 23) bw *= nccl::kTreeCorrectionFactor[static_cast<int>(p)][log_size];
  }
  if (a == NcclAlgo::Ring && p == Protocol::Simple && op_ == CollectiveOp::AllReduce && graph_.nodes > 1 &&
      bytes / (graph_.channels * graph_.ranks) >= 64) {
    lat *= graph_.compute_capability < 80 ? nccl::kRingSimpleMultiNodeLatencyFactorVolta
                                          : nccl::kRingSimpleMultiNodeLatencyFactor;
  }
  return lat + bytes / (1000.0 * bw);
}

NcclChoice NcclTuner::choose(double bytes, const NcclAlgo* only, const Protocol* proto) const {
  NcclChoice best;
  bool found = false;
  for (NcclAlgo a : kAlgos) {
    if (only != nullptr && *only != a) continue;
    for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
      if (proto != nullptr && *proto != p) continue;
      if (proto == nullptr && p == Protocol::LL128 && !graph_.ll128) continue;  // off by default here
      const double t = time_us(a, p, bytes);
      if (t < 0) continue;
      if (!found || t < best.time_us) {
        best = NcclChoice{a, p, t};
        found = true;
      }
    }
  }
  if (!found) {
    throw std::invalid_argument(std::string("NCCL's tuner has no eligible ") +
                                (only != nullptr ? std::string(name(*only)) + " " : std::string()) + "algorithm" +
                                (proto != nullptr ? " with protocol " + std::string(to_string(*proto)) : std::string()) +
                                " for " + std::string(to_string(op_)) + " on this group");
  }
  return best;
}

LaunchShape NcclTuner::launch_shape(NcclAlgo a, Protocol p, double bytes) const {
  LaunchShape s;
  const int pi = static_cast<int>(p);
  s.max_threads = a == NcclAlgo::Tree ? nccl::kTreeThreads
                                      : nccl::kMaxThreads[pi] + (a == NcclAlgo::Ring && p == Protocol::Simple ? nccl::kWarpSize : 0);
  s.threads = s.max_threads;
  if (a == NcclAlgo::Nvls || a == NcclAlgo::NvlsTree || a == NcclAlgo::CollNetDirect) {
    s.channels = a == NcclAlgo::CollNetDirect ? graph_.channels : graph_.nvls_channels;
    s.nccl_channels = s.channels;
    return s;
  }
  const double threshold = nccl::kThreadThreshold[pi] * (a == NcclAlgo::Ring && p == Protocol::LL ? graph_.ranks : 1);
  // enqueue.cc: while bytes < channels x threads x threshold, drop a channel, then halve threads.
  auto reduce = [&](int channels, int& threads) {
    while (bytes < static_cast<double>(channels) * threads * threshold) {
      if (channels >= 2) {
        --channels;
      } else if (threads % 128 == 0) {
        threads /= 2;
      } else {
        break;
      }
    }
    return channels;
  };
  int launched_threads = s.max_threads;
  s.nccl_channels = reduce(std::min(nccl::kMaxChannels, 2 * graph_.channels), launched_threads);
  s.channels = reduce(graph_.channels, s.threads);
  return s;
}

// What one channel can carry, payload GB/s, beyond the links: the protocol ceilings of NCCL's
// model turned per channel. Ring LL: llMaxBws is a ceiling on the whole bus bandwidth, so one
// channel gets llMax / nChannels; LL128: perChMaxRingLL128Bws is per channel already; trees:
// perChMaxTreeBws (Simple), /1.9 more for LL (NCCL's /3.8 less the 2x LL wire factor that the
// flows already pay), perChMaxTreeLL128Bws. Everything is bounded by the top of NCCL's search
// speed array for the GPU generation: the most one channel (one thread block) ever gets.
double NcclTuner::channel_cap_GBps(NcclAlgo a, Protocol p) const {
  const NcclGraph& g = graph_;
  const int idx2 = g.nodes <= 2 ? g.nodes - 1 : 2;
  const int row = g.cc_row;
  const double ll_max = nccl::kLlMaxBwGBps[g.nodes == 1 ? row : (g.cpu_amd ? 1 : 0)][idx2];
  double cap = g.channel_speed_max_GBps;
  if (a == NcclAlgo::Ring) {
    if (p == Protocol::LL) cap = std::min(cap, ll_max / g.channels);
    if (p == Protocol::LL128) cap = std::min(cap, nccl::kPerChannelMaxRingLl128GBps[row][idx2]);
  } else if (a == NcclAlgo::Tree) {
    const double tree = nccl::kPerChannelMaxTreeGBps[row][idx2];
    if (p == Protocol::Simple) cap = std::min(cap, tree);
    if (p == Protocol::LL) cap = std::min({cap, tree / 1.9, ll_max / g.channels});
    if (p == Protocol::LL128) cap = std::min(cap, nccl::kPerChannelMaxTreeLl128GBps[row][idx2]);
  }
  return cap;
}

// The channel's speed bounds every hop of the channel. NCCL's topology search gives a ring or tree
// channel one speed (graph->bwIntra, graph->bwInter: equal for multi-node graphs, search.cc) and
// its cost model charges every step of the channel at that speed (tuning.cc: busBw = nChannels x
// bw, time = latency + bytes / busBw); one channel is one thread block that copies each step of
// its connection at the pace the search sized it for. A flow model without this bound lets the
// NVLink hops of a multi-node ring stream at the protocol ceiling (36.7 GB/s per LL128 channel
// on H100, 60 GB/s for Simple) while the network hops of the same channel get 24, and a ring step
// that waits on its predecessor then finishes 15-18% before NCCL's model on 8-16 DGX H100 at
// 64-128 MiB. The bound is on the wire: payload moves at speed / wire_factor, as NCCL's LL
// (x 0.5) and LL128 (x 0.92) bus bandwidths say.
//
// Tree all-reduce: NCCL scales the tree's bandwidth by treeCorrectionFactor[proto][log2(bytes /
// 64)] (tuning.cc, measured per size by NVIDIA; 0.5-0.9 between 64 KiB and 64 MiB, 1.0 above
// 256 MiB for LL128). The replay takes it as the channel's efficiency at that size: a tree's
// chunks shrink with the size (tree_chunk_bytes), and the per-chunk work NCCL measured is what
// the factor captures.
double NcclTuner::channel_wire_cap_GBps(NcclAlgo a, Protocol p, double bytes) const {
  double wire = channel_cap_GBps(a, p) * wire_factor(p);
  if (a != NcclAlgo::Ring && a != NcclAlgo::Tree) return wire;
  const NcclGraph& g = graph_;
  wire = std::min(wire, g.nodes <= 2 ? g.bw_intra_GBps : g.bw_inter_GBps);
  if (a == NcclAlgo::Tree && op_ == CollectiveOp::AllReduce) {
    const int log_size = log2i(std::floor(bytes / 64));
    if (log_size >= 0 && log_size < 23) wire *= nccl::kTreeCorrectionFactor[static_cast<int>(p)][log_size];
  }
  return wire;
}

}  // namespace clustersim::workloads
