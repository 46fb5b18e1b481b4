// NCCL's algorithm, protocol and channel selection, emulated so that clustersim runs what NCCL
// would run (hardware.md §3.3-3.6; NCCL v2.30.7 src/graph/tuning.cc ncclTopoTuneModel,
// src/enqueue.cc topoGetAlgoInfo and the channel/thread tuning that follows it).
//
// Three steps, each a plain function of the inputs:
//  1. nccl_graph(): what NCCL's topology search would report for the communicator: channels and
//     per-channel bandwidth (intra, inter), the link class of the intra-node hops, NVLS and
//     CollNet (SHARP) support. The search itself is not replicated; it is approximated the way
//     hardware.md §3.3 suggests: the highest speed of NCCL's speed array (per GPU generation) that
//     fits the slowest path a GPU of the group has, as many channels of it as fit, duplicated
//     when the speed is >= 25 GB/s (search.cc dupChannels).
//  2. NcclTuner: NCCL's cost table, latency (us) and algorithm bandwidth (GB/s) for every
//     (algorithm, protocol), and time(bytes) = latency + bytes / (1000 * bw) with the tree
//     correction and ring plateau factors; choose() returns the cheapest eligible pair (ties go
//     to the lower NCCL index, as topoGetAlgoInfo's strict '<').
//  3. launch_shape(): how many channels and threads NCCL really launches for the size.
//
// The simulator does not use the table's time; it replays the chosen algorithm as flows. The
// table picks the algorithm and protocol and explains the choice (--explain).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collectives/collective_types.h"
#include "workloads/collectives/nccl_constants.h"
#include "workloads/collectives/nccl_release.h"

namespace clustersim::workloads {

struct NcclGraph {
  int ranks = 0;
  int nodes = 1;
  int ppn = 1;                      // GPUs of the group per node (max)
  int compute_capability = 80;
  int cc_row = 1;                   // row of NCCL's per-generation tables
  nccl::HwClass intra_hw = nccl::HwClass::NvLink;
  int channels = 1;                 // ring/tree channels (after duplication)
  double bw_intra_GBps = 0;         // per channel
  double bw_inter_GBps = 0;         // per channel
  double path_GBps = 0;             // slowest intra-node path of a GPU of the group (per direction)
  double nvlink_lane_GBps = 0;      // one NVLink lane of that path (0 when the path is not NVLink)
  double nic_GBps = 0;              // one NIC, per direction (0 on one node)
  int nics_per_node = 0;
  double channel_speed_max_GBps = 40;  // top of the speed array: one channel never beats it
  bool nvls = false;                // NVSwitch multicast/reduction usable by every node's GPUs of the group
  int nvls_channels = 0;
  int nvls_heads = 0;               // GPUs per node that reduce and multicast a share (<= 32)
  double nvls_bw_inter_GBps = 0;    // across nodes: what the NVLS graph reserves on each head's NIC (bwInter)
  bool collnet = false;             // in-network reduction on the fabric switches (SHARP)
  bool cpu_amd = true;              // CPU vendor row of llMaxBws for multi-node (AMD vs Intel)
  bool ll128 = true;                // LL128 on by default (tuning.cc's platform rule; see nccl_graph)
  topology::PathType nic_path = topology::PathType::Pix;  // closest GPU-NIC PCIe path of the group
  nccl::NcclRelease release{};      // the NCCL release whose rules apply (GraphHints::nccl_release)
};

// Hardware facts a graph needs that the topology does not carry.
struct GraphHints {
  bool gpu_nvls = false;    // GpuSpec::nvls
  bool fabric_sharp = false;// NicSpec::sharp
  bool cpu_amd = true;
  std::string gpu_name;     // for messages
  std::string nic_name;
  // Not hardware: the model constant p2p_drain_steps (p2p_channels.h, [model_constants]), carried
  // here because every CollectiveEnvironment, and so every plan, carries the hints.
  double p2p_drain_steps = 1.0;
  // Not hardware: the NCCL release whose rules the plan follows (nccl_release.h; `collective
  // --nccl-version`, a validation row's stated NCCL). Default v2.30.7.
  nccl::NcclRelease nccl_release{};
  // NCCL_NVLS_ENABLE=0: no NVLS nor NVLSTree (`collective --nvls off`).
  bool nvls_enabled = true;
};

NcclGraph nccl_graph(const topology::Topology& topo, const topology::Router& router, const std::vector<int>& ranks,
                     int compute_capability, const GraphHints& hints);

struct NcclCost {
  bool eligible = false;
  double latency_us = 0;
  double bus_bw_GBps = 0;   // NCCL's busBw (before conversion)
  double alg_bw_GBps = 0;   // what time() divides by
};

struct NcclChoice {
  nccl::NcclAlgo algo = nccl::NcclAlgo::Ring;
  Protocol protocol = Protocol::Simple;
  double time_us = 0;
};

// Channels and threads NCCL launches for a size. `channels` is what the replay runs: for rings and
// trees the topology search's channels (NcclGraph::channels) reduced for small sizes. NCCL itself
// launches twice as many (connect.cc ncclTopoPostset duplicates every searched ring and tree:
// "Duplication should be complete now", comm->nChannels = 2 x graph channels, at most
// MAXCHANNELS) and reduces those the same way: `nccl_channels`. A duplicated pair follows the
// same GPUs and links at half the searched speed each (NCCL's cost model charges the searched
// channels at their speed: busBw = graph nChannels x bw), so the replay folds each pair into one
// channel; the launched count matters for the host's per-channel work (host_launch.h).
struct LaunchShape {
  int channels = 1;
  int nccl_channels = 1;
  int threads = 512;
  int max_threads = 512;
};

class NcclTuner {
 public:
  NcclTuner(const NcclGraph& graph, CollectiveOp op);

  const NcclGraph& graph() const { return graph_; }
  const NcclCost& cost(nccl::NcclAlgo a, Protocol p) const { return table_[index(a)][static_cast<int>(p)]; }
  // NCCL's predicted time for `bytes` (nccl-tests size), or a negative value when ineligible.
  double time_us(nccl::NcclAlgo a, Protocol p, double bytes) const;
  // Cheapest eligible (algorithm, protocol); `only` restricts to one NCCL algorithm (NCCL_ALGO),
  // `proto` to one protocol (NCCL_PROTO). Throws std::invalid_argument when nothing is eligible.
  NcclChoice choose(double bytes, const nccl::NcclAlgo* only = nullptr, const Protocol* proto = nullptr) const;
  LaunchShape launch_shape(nccl::NcclAlgo a, Protocol p, double bytes) const;
  // Protocol ceiling per channel for the simulator (payload bytes/s), see nccl_tuner.cpp.
  double channel_cap_GBps(nccl::NcclAlgo a, Protocol p) const;
  // What one channel moves on each hop, GB/s on the wire, for a collective of `bytes`: the
  // protocol ceiling above (as wire bytes), the channel's speed from the topology search, and for
  // tree all-reduce NCCL's treeCorrectionFactor for the size (see nccl_tuner.cpp).
  double channel_wire_cap_GBps(nccl::NcclAlgo a, Protocol p, double bytes) const;

  static constexpr std::array<nccl::NcclAlgo, 5> kAlgos{nccl::NcclAlgo::Tree, nccl::NcclAlgo::Ring,
                                                        nccl::NcclAlgo::CollNetDirect, nccl::NcclAlgo::Nvls,
                                                        nccl::NcclAlgo::NvlsTree};
  static std::string_view name(nccl::NcclAlgo a);

 private:
  static int index(nccl::NcclAlgo a);
  NcclCost compute(nccl::NcclAlgo a, Protocol p) const;
  double latency(nccl::NcclAlgo a, Protocol p) const;

  NcclGraph graph_;
  CollectiveOp op_;
  std::array<std::array<NcclCost, 3>, 5> table_{};
};

}  // namespace clustersim::workloads
