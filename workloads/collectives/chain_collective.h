// Broadcast and reduce as NCCL runs them: a pipeline along the ring (NCCL's "PipelineFrom" /
// "PipelineTo" patterns), over one or more channels.
//
// Broadcast: the root sends chunk c to the next rank of the ring, which forwards it as soon as it
// has arrived, and so on to the last rank: n-1 hops, every chunk in flight on a different hop, so
// the time is about (n - 2 + chunks) chunk times. Reduce is the mirror image: the chain ends at the
// root, and each rank adds its own data to what it received before forwarding. Channels split the
// buffer and use rings whose order inside each server is rotated (ring_order), so their
// inter-server hops use different NICs. Each hop streams its chunks one after the other (nccl::kPipelineInFlight).
#pragma once

#include <vector>

#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

class ChainCollective final : public CollectiveAlgorithm {
 public:
  ChainCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag);

  void on_transfer_done(std::uint64_t tag) override;
  // Rank order of channel `ch`, from the first sender to the last receiver.
  const std::vector<int>& order(int ch) const { return orders_[static_cast<std::size_t>(ch)]; }
  bool flow_routes(FlowRoutes& out) const override;

 private:
  struct Position {
    std::uint32_t issued = 0;
    std::uint32_t received = 0;
    std::uint32_t in_flight = 0;
  };
  void begin() override;
  void try_send(int ch, int pos);
  Position& at(int ch, int pos) { return positions_[static_cast<std::size_t>(ch * n_ + pos)]; }

  int n_;
  std::uint32_t pieces_;
  sim::Bytes piece_bytes_;
  std::vector<std::vector<int>> orders_;
  std::vector<topology::Route> routes_;   // [ch * n + pos]: pos -> pos + 1
  std::vector<sim::SimTime> overheads_;
  std::vector<Position> positions_;
  std::size_t complete_ = 0;
};

}  // namespace clustersim::workloads
