// In-network reduction: the switch adds the GPUs' data up and multicasts the result, so each GPU
// sends its data once and receives the result once, whatever the GPU count.
//
// Two kinds of switch do it: NVSwitch gen3+ (NVLS, "NVLink SHARP", Hopper and Blackwell GPUs)
// inside a node, and InfiniBand switches with SHARP (Quantum HDR/NDR) across nodes. The group's
// GPUs each reach a reducing switch over their own up path (GPU -> NVSwitch, or GPU -> NIC ->
// leaf); when the group spans several leaves, each leaf reduces its GPUs' chunks and sends the
// partial result up its one link to an aggregation spine (the spine its route to the root GPU
// crosses), which completes the reduction and multicasts back down the same tree: SHARP's
// aggregation tree, where every link carries one stream each way however many leaves there are.
// Pipelined in chunks, each GPU streaming its chunks one after the other.
//
// Bytes per chunk c of S/chunks, per operation (nccl-tests sizes):
//   all-reduce      up c·f, down c·f  (NVLS f = 1 + 1/h, h = min(n, 32) heads (NCCL_MAX_NVLS_ARITY):
//                   a head reduces its 1/h share with multimem.ld_reduce and stores it back with a
//                   multicast, so its link carries its whole buffer plus its share each way; SHARP
//                   f = 1)
//   reduce-scatter  up c, down c/n;   all-gather up c/n, down c
//   broadcast       the root up c, the others down c;   reduce  all up c, the root down c
// NVLS payload moves at nvlsEfficiency (0.85 Hopper, 0.74 Blackwell; tuning.cc) of the link rate,
// modelled as payload / efficiency bytes on the wire. NCCL's NVLS latency (hwLat NVLINK NVLS 25 us,
// baseLat 0; SHARP: NET CollNetDirect 31 us) is paid once, at launch.
//
// Symmetry folding (group_folding.h), when no flow outside this collective crosses its links
// (CollectivePlan::shares_links off): the leaves of a two-level tree are units (a leaf's members'
// paths and its cables to and from the aggregation spine); of the leaves that are relabellings of
// one another one is simulated, and its arrivals at the spine and its members' completions count
// once per leaf it stands for. A leaf whose links another leaf's flows cross runs for itself.
#pragma once

#include <vector>

#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

class InNetworkCollective final : public CollectiveAlgorithm {
 public:
  InNetworkCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag);

  void on_transfer_done(std::uint64_t tag) override;
  int switch_groups() const { return static_cast<int>(groups_.size()); }
  // Switch groups simulated (fewer than switch_groups() when leaves were folded).
  int simulated_groups() const;
  bool flow_routes(FlowRoutes& out) const override;
  std::uint64_t transfers_issued() const override { return CollectiveAlgorithm::transfers_issued() + folded_transfers_; }

 protected:
  nccl::NcclAlgo nccl_algo() const override { return nvls_ ? nccl::NcclAlgo::Nvls : nccl::NcclAlgo::CollNetDirect; }
  double launch_latency_us() const override;

 private:
  struct Member {
    topology::Route up;
    topology::Route down;
    int group = 0;
    bool sends = false;
    bool receives = false;
    std::uint32_t up_sent = 0;
    std::uint32_t up_in_flight = 0;
    std::uint32_t down_recv = 0;
  };
  struct Group {
    topology::Route to_root;    // leaf -> aggregation spine (empty in a one-switch tree)
    topology::Route from_root;
    std::vector<int> members;
    int senders = 0;
    int receivers = 0;
    int expected = 0;           // arrivals that complete a chunk here
    int copies = 1;             // leaves it stands for (0: folded onto another, not simulated)
  };
  enum Kind : std::uint64_t { kMemberUp = 0, kGroupUp = 1, kGroupDown = 2, kMemberDown = 3 };
  static std::uint64_t encode(Kind k, std::size_t id, std::uint32_t chunk) {
    return (static_cast<std::uint64_t>(k) << 62) | (static_cast<std::uint64_t>(id) << 32) | chunk;
  }
  void begin() override;
  void try_send(std::size_t m);
  void arrive(std::size_t g, std::uint32_t chunk);
  void arrive_at_top(std::size_t g, std::uint32_t chunk);
  void fold_groups();
  void send_for(std::size_t g, const topology::Route& route, double bytes, std::uint64_t tag);
  void group_structure(const Group& g, std::vector<double>& out) const;
  void group_routes(const Group& g, FlowRoutes& out) const;
  void multicast(std::size_t g, std::uint32_t chunk);

  bool nvls_;
  int n_;
  std::uint32_t pieces_;
  double up_bytes_ = 0;
  double down_bytes_ = 0;
  std::vector<Member> members_;
  std::vector<Group> groups_;
  std::vector<int> arrivals_;   // [group * pieces + chunk]
  bool two_level_ = false;      // leaves under an aggregation spine
  int top_expected_ = 0;        // leaves with senders
  std::vector<int> top_arrivals_;  // [chunk] at the spine
  int complete_ = 0;
  int needed_ = 0;
  std::uint64_t folded_transfers_ = 0;  // transfers the folded leaves stand for
};

}  // namespace clustersim::workloads
