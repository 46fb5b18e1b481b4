// Pipelined chain for broadcast and reduce (see chain_collective.h).
#include "workloads/collectives/chain_collective.h"

#include <algorithm>

#include "sim/check.h"
#include "sim/rng.h"
#include "workloads/collectives/ring_collective.h"

namespace clustersim::workloads {

ChainCollective::ChainCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener,
                                 std::uint64_t tag)
    : CollectiveAlgorithm(ctx, std::move(plan), listener, tag), n_(static_cast<int>(plan_.request.ranks.size())) {
  const CollectiveOp op = plan_.request.op;
  CLUSTERSIM_CHECK(op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce, "a chain runs broadcast or reduce");
  CLUSTERSIM_CHECK(n_ >= 2, "a chain needs at least two ranks");
  const int channels = plan_.channels;
  pieces_ = static_cast<std::uint32_t>(plan_.chunks);
  piece_bytes_ = plan_.request.bytes / (static_cast<double>(channels) * plan_.chunks);
  const int root = plan_.request.ranks[static_cast<std::size_t>(plan_.request.root)];
  positions_.resize(static_cast<std::size_t>(channels * n_));
  routes_.resize(positions_.size());
  overheads_.resize(positions_.size());
  for (int ch = 0; ch < channels; ++ch) {
    std::vector<int> ord = ring_order(ctx_.topo, plan_.request.ranks, ch, channels);
    // Broadcast starts at the root; reduce follows the ring from the root's successor to the root.
    std::rotate(ord.begin(), std::find(ord.begin(), ord.end(), root), ord.end());
    if (op == CollectiveOp::Reduce) std::rotate(ord.begin(), ord.begin() + 1, ord.end());
    orders_.push_back(ord);
    for (int p = 0; p + 1 < n_; ++p) {
      const int src = ord[static_cast<std::size_t>(p)];
      const int dst = ord[static_cast<std::size_t>(p + 1)];
      const std::size_t i = static_cast<std::size_t>(ch * n_ + p);
      routes_[i] = ctx_.router.route(src, dst, sim::splitmix64((static_cast<std::uint64_t>(src) << 32) ^
                                                               (static_cast<std::uint64_t>(dst) << 8) ^ static_cast<std::uint64_t>(ch)));
      overheads_[i] = step_overhead(routes_[i]);
    }
    at(ch, 0).received = pieces_;  // the first rank has its data
  }
}

bool ChainCollective::flow_routes(FlowRoutes& out) const {
  out.structure.insert(out.structure.end(), {static_cast<double>(n_), static_cast<double>(plan_.channels),
                                             static_cast<double>(pieces_), piece_bytes_.value});
  for (std::size_t i = 0; i < routes_.size(); ++i) out.add(routes_[i], overheads_[i]);
  return true;
}

void ChainCollective::begin() {
  for (int ch = 0; ch < plan_.channels; ++ch) try_send(ch, 0);
}

void ChainCollective::try_send(int ch, int pos) {
  if (pos + 1 >= n_) return;
  Position& me = at(ch, pos);
  while (me.issued < me.received && me.in_flight < static_cast<std::uint32_t>(nccl::kPipelineInFlight)) {
    const std::size_t i = static_cast<std::size_t>(ch * n_ + pos);
    ++me.issued;
    ++me.in_flight;
    send(routes_[i], piece_bytes_, i, overheads_[i], plan_.channel_rate_cap);
  }
}

void ChainCollective::on_transfer_done(std::uint64_t tag) {
  const int ch = static_cast<int>(tag / static_cast<std::uint64_t>(n_));
  const int pos = static_cast<int>(tag % static_cast<std::uint64_t>(n_));
  --at(ch, pos).in_flight;
  Position& next = at(ch, pos + 1);
  ++next.received;
  if (next.received == pieces_) ++complete_;
  try_send(ch, pos + 1);
  try_send(ch, pos);
  if (complete_ == static_cast<std::size_t>(plan_.channels * (n_ - 1))) finish();
}

}  // namespace clustersim::workloads
