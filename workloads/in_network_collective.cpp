// Switch reduction trees for NVLS and SHARP (see in_network_collective.h).
#include "workloads/in_network_collective.h"

#include <algorithm>
#include <map>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

bool is_switch(const topology::Topology& topo, topology::DeviceId d) {
  const auto k = topo.device(d).kind;
  return k == topology::DeviceKind::NvSwitch || k == topology::DeviceKind::NetworkSwitch;
}

// links[from, to) of a route as a route of its own.
topology::Route sub_route(const topology::Topology& topo, const topology::Route& r, int from, int to) {
  topology::Route out;
  out.bottleneck = sim::BytesPerSec{1e300};
  for (int k = from; k < to; ++k) {
    const topology::LinkId l = r.links[static_cast<std::size_t>(k)];
    out.links[out.hops++] = l;
    out.latency += topo.link(l).latency;
    out.bottleneck = std::min(out.bottleneck, topo.link(l).bandwidth);
  }
  return out;
}

topology::Route reversed(const topology::Topology& topo, const topology::Route& r) {
  topology::Route out = r;
  for (int k = 0; k < r.hops; ++k) {
    out.links[static_cast<std::size_t>(k)] = topology::Topology::reverse(r.links[static_cast<std::size_t>(r.hops - 1 - k)]);
  }
  (void)topo;
  return out;
}

int first_switch_hop(const topology::Topology& topo, const topology::Route& r) {
  for (int k = 0; k < r.hops; ++k) {
    if (is_switch(topo, topo.link(r.links[static_cast<std::size_t>(k)]).dst)) return k;
  }
  return -1;
}
int last_switch_hop(const topology::Topology& topo, const topology::Route& r) {
  for (int k = r.hops - 1; k >= 0; --k) {
    if (is_switch(topo, topo.link(r.links[static_cast<std::size_t>(k)]).dst)) return k;
  }
  return -1;
}

}  // namespace

InNetworkCollective::InNetworkCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener,
                                         std::uint64_t tag)
    : CollectiveAlgorithm(ctx, std::move(plan), listener, tag), n_(static_cast<int>(plan_.request.ranks.size())) {
  const auto& ranks = plan_.request.ranks;
  CLUSTERSIM_CHECK(n_ >= 2, "in-network reduction needs at least two ranks");
  nvls_ = ctx_.topo.server_of_gpu(ranks.front()) == ctx_.topo.server_of_gpu(ranks.back());
  pieces_ = static_cast<std::uint32_t>(plan_.chunks);
  const double c = plan_.request.bytes.value / pieces_ / plan_.in_network_efficiency;
  const double nn = static_cast<double>(n_);
  const CollectiveOp op = plan_.request.op;
  const int root = plan_.request.root;
  switch (op) {
    case CollectiveOp::AllReduce: up_bytes_ = down_bytes_ = c * (nvls_ ? 1.0 + 1.0 / nn : 1.0); break;
    case CollectiveOp::ReduceScatter: up_bytes_ = c, down_bytes_ = c / nn; break;
    case CollectiveOp::AllGather: up_bytes_ = c / nn, down_bytes_ = c; break;
    default: up_bytes_ = down_bytes_ = c; break;
  }
  // The root member and its up path define the root switch.
  members_.resize(static_cast<std::size_t>(n_));
  std::map<topology::DeviceId, int> group_of_switch;
  const int anchor = ranks[static_cast<std::size_t>(root)];
  for (int j = 0; j < n_; ++j) {  // from the root, so that its switch is group 0
    const int i = (root + j) % n_;
    const int r = ranks[static_cast<std::size_t>(i)];
    const int other = r != anchor ? anchor : ranks[static_cast<std::size_t>((i + 1) % n_)];
    const topology::Route full = ctx_.router.route(r, other, static_cast<std::uint64_t>(r));
    const int k = first_switch_hop(ctx_.topo, full);
    CLUSTERSIM_CHECK(k >= 0, "every member reaches a switch");
    Member& m = members_[static_cast<std::size_t>(i)];
    m.up = sub_route(ctx_.topo, full, 0, k + 1);
    m.down = reversed(ctx_.topo, m.up);
    const topology::DeviceId sw = ctx_.topo.link(full.links[static_cast<std::size_t>(k)]).dst;
    auto [it, fresh] = group_of_switch.emplace(sw, static_cast<int>(groups_.size()));
    if (fresh) groups_.emplace_back();
    m.group = it->second;
    Group& g = groups_[static_cast<std::size_t>(m.group)];
    g.members.push_back(i);
    if (fresh && i != root && r != anchor) {
      // This leaf forwards its partial result to the root's switch: the fabric part of the route.
      const int last = last_switch_hop(ctx_.topo, full);
      g.to_root = sub_route(ctx_.topo, full, k + 1, last + 1);
      g.from_root = reversed(ctx_.topo, g.to_root);
    }
    m.sends = op == CollectiveOp::Broadcast ? i == root : true;
    m.receives = op == CollectiveOp::Reduce ? i == root : (op == CollectiveOp::Broadcast ? i != root : true);
    g.senders += m.sends;
    g.receivers += m.receives;
    needed_ += m.receives;
  }
  const std::size_t root_group = static_cast<std::size_t>(members_[static_cast<std::size_t>(root)].group);
  CLUSTERSIM_CHECK(root_group == 0, "the root's switch is group 0");
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].expected = groups_[g].senders;
    if (g != root_group && groups_[g].senders > 0) ++groups_[root_group].expected;
  }
  arrivals_.assign(groups_.size() * pieces_, 0);
}

double InNetworkCollective::launch_latency_us() const {
  return nccl::hw_latency_us(nvls_ ? nccl::HwClass::NvLink : nccl::HwClass::Net, nccl_algo(), Protocol::Simple);
}

void InNetworkCollective::begin() {
  for (std::size_t m = 0; m < members_.size(); ++m) try_send(m);
}

void InNetworkCollective::try_send(std::size_t i) {
  Member& m = members_[i];
  if (!m.sends) return;
  while (m.up_sent < pieces_ && m.up_in_flight < static_cast<std::uint32_t>(nccl::kPipelineInFlight)) {
    send(m.up, sim::Bytes{up_bytes_}, encode(kMemberUp, i, m.up_sent), sim::SimTime{});
    ++m.up_sent;
    ++m.up_in_flight;
  }
}

void InNetworkCollective::arrive(std::size_t g, std::uint32_t chunk) {
  Group& group = groups_[g];
  if (++arrivals_[g * pieces_ + chunk] < group.expected) return;
  if (g != 0) {
    send(group.to_root, sim::Bytes{up_bytes_}, encode(kGroupUp, g, chunk), sim::SimTime{});
    return;
  }
  multicast(0, chunk);
  for (std::size_t o = 1; o < groups_.size(); ++o) {
    if (groups_[o].receivers > 0) send(groups_[o].from_root, sim::Bytes{down_bytes_}, encode(kGroupDown, o, chunk), sim::SimTime{});
  }
}

void InNetworkCollective::multicast(std::size_t g, std::uint32_t chunk) {
  for (int i : groups_[g].members) {
    const Member& m = members_[static_cast<std::size_t>(i)];
    if (m.receives) send(m.down, sim::Bytes{down_bytes_}, encode(kMemberDown, static_cast<std::size_t>(i), chunk), sim::SimTime{});
  }
}

void InNetworkCollective::on_transfer_done(std::uint64_t tag) {
  const Kind kind = static_cast<Kind>(tag >> 62);
  const std::size_t id = static_cast<std::size_t>((tag >> 32) & 0x3fffffffULL);
  const std::uint32_t chunk = static_cast<std::uint32_t>(tag & 0xffffffffULL);
  switch (kind) {
    case kMemberUp:
      --members_[id].up_in_flight;
      arrive(static_cast<std::size_t>(members_[id].group), chunk);
      try_send(id);
      break;
    case kGroupUp: arrive(0, chunk); break;
    case kGroupDown: multicast(id, chunk); break;
    case kMemberDown:
      if (++members_[id].down_recv == pieces_ && ++complete_ == needed_) finish();
      break;
  }
}

}  // namespace clustersim::workloads
