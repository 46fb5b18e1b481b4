// Pipelined multi-channel ring (see ring_collective.h).
#include "workloads/collectives/ring_collective.h"

#include <algorithm>
#include <map>

#include "sim/check.h"
#include "sim/rng.h"
#include "workloads/collectives/channel_folding.h"
#include "workloads/collectives/ring_folding.h"

namespace clustersim::workloads {
namespace {

int ring_steps(CollectiveOp op, int n) {
  switch (op) {
    case CollectiveOp::AllReduce: return 2 * (n - 1);
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter: return n - 1;
    default: break;
  }
  CLUSTERSIM_CHECK(false, "ring handles allreduce, allgather and reducescatter only");
  return 0;
}

}  // namespace

std::vector<int> ring_order(const topology::Topology& topo, const std::vector<int>& ranks, int ch, int channels) {
  std::vector<std::vector<int>> by_server;
  std::map<int, std::size_t> index;
  for (int r : ranks) {
    const int s = topo.server_of_gpu(r);
    auto [it, fresh] = index.emplace(s, by_server.size());
    if (fresh) by_server.emplace_back();
    by_server[it->second].push_back(r);
  }
  std::vector<int> out;
  out.reserve(ranks.size());
  for (const auto& local : by_server) {
    const std::size_t g = local.size();
    const std::size_t shift = static_cast<std::size_t>(ch) * ring_rotation_stride(static_cast<int>(g), channels);
    for (std::size_t i = 0; i < g; ++i) out.push_back(local[(i + shift) % g]);
  }
  return out;
}

// A ring hop between servers leaves through the NIC on the destination's rail, as NCCL's PXN does
// (PCI x NVLink, default since NCCL 2.12): when that NIC belongs to another local GPU reachable
// over NVLink, the data first crosses NVLink to that GPU, then its PCIe switch and NIC, so the hop
// stays on one rail switch instead of crossing the spine.
topology::Route RingCollective::hop_route(int src, int dst, std::uint64_t key) const {
  const auto& topo = ctx_.topo;
  const auto& router = ctx_.router;
  const int g = topo.gpus_per_server();
  const int src_server = topo.server_of_gpu(src), dst_server = topo.server_of_gpu(dst);
  if (src_server == dst_server) return router.route(src, dst, key);
  const int proxy = src_server * g + dst % g;
  if (proxy == src || proxy >= topo.gpu_count() || router.path_type(src, proxy) != topology::PathType::NvLink ||
      !router.has_nic(proxy) || !router.has_nic(src) || router.nic_of(proxy) == router.nic_of(src)) {
    return router.route(src, dst, key);
  }
  const topology::Route a = router.route(src, proxy, key);
  const topology::Route b = router.route(proxy, dst, key);
  if (a.hops + b.hops > topology::kMaxHops) return router.route(src, dst, key);
  topology::Route r = a;
  for (int k = 0; k < b.hops; ++k) r.links[static_cast<std::size_t>(r.hops++)] = b.links[static_cast<std::size_t>(k)];
  r.latency = a.latency + b.latency;
  r.bottleneck = std::min(a.bottleneck, b.bottleneck);
  return r;
}

RingCollective::RingCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener,
                               std::uint64_t tag)
    : CollectiveAlgorithm(ctx, std::move(plan), listener, tag),
      n_(static_cast<int>(plan_.request.ranks.size())),
      classes_(n_),
      steps_(ring_steps(plan_.request.op, n_)),
      simulated_channels_(plan_.channels) {
  CLUSTERSIM_CHECK(n_ >= 2, "a ring needs at least two ranks");
  const int channels = plan_.channels;
  const int chunks = plan_.chunks;
  pieces_ = static_cast<std::uint32_t>(steps_ * chunks);
  // Each channel carries 1/channels of the buffer; each step moves 1/n of that, in `chunks` pieces.
  piece_bytes_ = plan_.request.bytes / (static_cast<double>(channels) * n_ * chunks);
  positions_.resize(static_cast<std::size_t>(channels * n_));
  routes_.resize(positions_.size());
  overheads_.resize(positions_.size());
  for (int ch = 0; ch < channels; ++ch) {
    orders_.push_back(ring_order(ctx_.topo, plan_.request.ranks, ch, channels));
    const auto& ord = orders_.back();
    for (int p = 0; p < n_; ++p) {
      const int src = ord[static_cast<std::size_t>(p)];
      const int dst = ord[static_cast<std::size_t>((p + 1) % n_)];
      const std::uint64_t key = sim::splitmix64((static_cast<std::uint64_t>(src) << 32) ^
                                                (static_cast<std::uint64_t>(dst) << 8) ^ static_cast<std::uint64_t>(ch));
      const std::size_t i = static_cast<std::size_t>(ch * n_ + p);
      routes_[i] = hop_route(src, dst, key);
      overheads_[i] = step_overhead(routes_[i]);
    }
  }
  if (plan_.fold_channels) fold();
}

// Keeps positions 0..k-1 (of channel 0 when the channels fold too) with folded routes when the ring
// is alone and shift-invariant; else channel 0 when the channels are symmetric; otherwise changes
// nothing.
void RingCollective::fold() {
  if (!plan_.shares_links) {
    if (auto ring = fold_ring(ctx_.topo, routes_, overheads_, plan_.channels, n_)) {
      classes_ = ring->classes;
      simulated_channels_ = ring->channels;
      // Overheads of the kept routes (ch, p), p < k, moved down to [ch * k + p] in order (a write
      // never reaches a source still to be read, whose index ch' * n + p' is larger), then the
      // rest dropped.
      for (int ch = 0; ch < simulated_channels_; ++ch) {
        for (int p = 0; p < classes_; ++p) {
          overheads_[static_cast<std::size_t>(ch * classes_ + p)] = overheads_[static_cast<std::size_t>(ch * n_ + p)];
        }
      }
      positions_.resize(ring->hops.size());
      routes_.resize(ring->hops.size());
      overheads_.resize(ring->hops.size());
      for (const FoldedHop& h : ring->hops) {
        routes_[weights_.size()] = h.route;
        weights_.push_back(h.weights);
      }
      return;
    }
  }
  const auto folded = fold_channels(ctx_.topo, routes_, overheads_, plan_.channels, n_, plan_.shares_links);
  if (!folded) return;
  simulated_channels_ = 1;
  positions_.resize(static_cast<std::size_t>(n_));
  routes_.resize(positions_.size());
  overheads_.resize(positions_.size());
  for (const FoldedHop& h : *folded) {
    routes_[weights_.size()] = h.route;
    weights_.push_back(h.weights);
  }
}

std::uint64_t RingCollective::transfers_issued() const {
  const std::uint64_t copies = static_cast<std::uint64_t>(plan_.channels / simulated_channels_) *
                               static_cast<std::uint64_t>(n_ / classes_);
  return CollectiveAlgorithm::transfers_issued() * copies;
}

bool RingCollective::flow_routes(FlowRoutes& out) const {
  out.structure.insert(out.structure.end(), {static_cast<double>(n_), static_cast<double>(simulated_channels_),
                                             static_cast<double>(steps_), piece_bytes_.value,
                                             static_cast<double>(classes_)});
  for (std::size_t i = 0; i < routes_.size(); ++i) out.add(routes_[i], overheads_[i], weights_.empty() ? nullptr : &weights_[i]);
  return true;
}

void RingCollective::begin() {
  for (int ch = 0; ch < simulated_channels_; ++ch) {
    for (int p = 0; p < classes_; ++p) try_send(ch, p);
  }
}

void RingCollective::try_send(int ch, int pos) {
  Position& me = at(ch, pos);
  const std::uint32_t chunks = static_cast<std::uint32_t>(plan_.chunks);
  while (me.issued < pieces_ && me.in_flight < static_cast<std::uint32_t>(nccl::kSteps)) {
    const std::uint32_t j = me.issued;
    // Piece j (step k = j / chunks) forwards what arrived as piece j - chunks (step k - 1).
    if (j >= chunks && me.received <= j - chunks) break;
    const std::size_t i = static_cast<std::size_t>(ch * classes_ + pos);
    const std::uint64_t tag = (static_cast<std::uint64_t>(i) << 32) | j;
    ++me.issued;
    ++me.in_flight;
    send(routes_[i], piece_bytes_, tag, overheads_[i], plan_.channel_rate_cap, weights_.empty() ? nullptr : &weights_[i]);
  }
}

void RingCollective::on_transfer_done(std::uint64_t tag) {
  const std::size_t i = static_cast<std::size_t>(tag >> 32);
  const std::uint32_t j = static_cast<std::uint32_t>(tag & 0xffffffffU);
  const int ch = static_cast<int>(i / static_cast<std::size_t>(classes_));
  const int pos = static_cast<int>(i % static_cast<std::size_t>(classes_));
  // Folded, position pos + 1 = k is the image of position 0: class 0 receives (ring_folding.h).
  const int next = (pos + 1) % classes_;
  Position& sender = at(ch, pos);
  Position& receiver = at(ch, next);
  --sender.in_flight;
  const std::uint32_t offset = j - receiver.received;
  CLUSTERSIM_CHECK(offset < 64, "ring pieces arrive within the in-flight window");
  receiver.window |= (1ULL << offset);
  while (receiver.window & 1ULL) {
    receiver.window >>= 1;
    ++receiver.received;
  }
  // The prefix reaches pieces_ exactly once: at the receipt that completes this position.
  if (receiver.received == pieces_) ++complete_positions_;
  try_send(ch, next);
  try_send(ch, pos);
  if (complete_positions_ == positions_.size()) finish();
}

}  // namespace clustersim::workloads
