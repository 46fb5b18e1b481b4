// Ring collectives (all-reduce, reduce-scatter, all-gather), pipelined in chunks, over one or more
// channels (parallel rings).
//
// All-reduce on N ranks is 2(N-1) steps (N-1 of reduce-scatter, N-1 of all-gather); in each step
// every rank sends one N-th of its channel's share of the buffer to the next rank. Each step's
// block is cut into `chunks` pieces; a rank may send chunk c of step k once it has received chunk
// c of step k-1 from its predecessor, with at most NCCL_STEPS sends in flight (NCCL's buffer
// slots). Every piece is a flow on the network model, so a ring crossing a slow or shared link is
// slowed exactly there. Channels are rings over the same ranks whose order inside each server is
// rotated by the channel index, so their inter-server hops leave through different NICs, as
// NCCL's rings on multi-NIC nodes do. An inter-server hop leaves through the NIC on the
// destination's rail (PXN: over NVLink to the GPU that owns that NIC first), so rings stay on
// their rail switches (see hop_route).
//
// When the plan allows it and the channels are provably symmetric (channel_folding.h), only
// channel 0 is simulated, each of its flows standing for its copies in the other channels. Alone
// on its network (fold_channels without shares_links), a ring whose hops are invariant under a
// shift of its positions by k also runs positions 0..k-1 only (ring_folding.h: on a star k = 1,
// one flow per step), composed with the channel folding.
#pragma once

#include <vector>

#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

// The ring order of channel `ch` of `channels`: ranks grouped by server (in order of first
// appearance), each server's list rotated by ch * stride, with stride = max(1, local GPUs /
// channels), so that consecutive channels enter and leave each server through GPUs that sit on
// different NICs (with 4 GPUs and 2 NICs, channel 1 starts two GPUs on), as NCCL's rings do.
inline std::size_t ring_rotation_stride(int local_gpus, int channels) {
  return static_cast<std::size_t>(channels > 0 && local_gpus / channels > 1 ? local_gpus / channels : 1);
}
std::vector<int> ring_order(const topology::Topology& topo, const std::vector<int>& ranks, int ch, int channels);

class RingCollective final : public CollectiveAlgorithm {
 public:
  RingCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag);

  void on_transfer_done(std::uint64_t tag) override;
  // Ring order of channel `ch` (global GPU ranks).
  const std::vector<int>& order(int ch) const { return orders_[static_cast<std::size_t>(ch)]; }
  int steps() const { return steps_; }
  // Channels simulated: 1 when folded, else the plan's.
  int simulated_channels() const { return simulated_channels_; }
  // Positions simulated per channel: k when the ranks fold (ring_folding.h), else every rank.
  int simulated_positions() const { return classes_; }
  // Transfers the collective stands for (a folded flow counts once per channel).
  std::uint64_t transfers_issued() const override;
  bool flow_routes(FlowRoutes& out) const override;

 private:
  struct Position {
    std::uint32_t issued = 0;       // sends started (index j = step * chunks + chunk)
    std::uint32_t received = 0;     // contiguous prefix of pieces received from the predecessor
    std::uint64_t window = 0;       // out-of-order receipts: bit i = piece received + i
    std::uint32_t in_flight = 0;
  };
  void begin() override;
  void try_send(int ch, int pos);
  topology::Route hop_route(int src, int dst, std::uint64_t key) const;
  void fold();
  Position& at(int ch, int pos) { return positions_[static_cast<std::size_t>(ch * classes_ + pos)]; }

  int n_;
  int classes_;                     // positions simulated per channel (n_ unless the ranks fold)
  int steps_;
  std::uint32_t pieces_;            // steps * chunks per position
  sim::Bytes piece_bytes_;
  std::vector<std::vector<int>> orders_;
  std::vector<topology::Route> routes_;     // [ch * classes + pos]: pos -> pos + 1
  std::vector<sim::SimTime> overheads_;     // per route
  std::vector<topology::HopWeights> weights_;  // per route simulated, when folded
  int simulated_channels_;
  std::vector<Position> positions_;
  std::size_t complete_positions_ = 0;
};

}  // namespace clustersim::workloads
