// Switch reduction trees for NVLS and SHARP (see in_network_collective.h).
#include "workloads/collectives/in_network_collective.h"

#include <algorithm>
#include <map>

#include "sim/check.h"
#include "workloads/collectives/group_folding.h"

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
    case CollectiveOp::AllReduce: {
      // NVLS: the heads (at most NCCL_MAX_NVLS_ARITY) carry their share on top of their data.
      const double heads = std::min(nn, static_cast<double>(nccl::kMaxNvlsArity));
      up_bytes_ = down_bytes_ = c * (nvls_ ? 1.0 + 1.0 / heads : 1.0);
      break;
    }
    case CollectiveOp::ReduceScatter: up_bytes_ = c, down_bytes_ = c / nn; break;
    case CollectiveOp::AllGather: up_bytes_ = c / nn, down_bytes_ = c; break;
    default: up_bytes_ = down_bytes_ = c; break;
  }
  // The root member and its up path define the root switch.
  members_.resize(static_cast<std::size_t>(n_));
  std::map<topology::DeviceId, int> group_of_switch;
  const int anchor = ranks[static_cast<std::size_t>(root)];
  topology::DeviceId top = 0;
  bool have_top = false;
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
    if (fresh && i != root && r != anchor && !have_top) {
      // The aggregation root: the spine this leaf's route to the root GPU crosses (so the trees of
      // different rails sit on different spines under destination routing).
      for (int h = k + 1; h < full.hops; ++h) {
        const topology::Device& d = ctx_.topo.device(ctx_.topo.link(full.links[static_cast<std::size_t>(h)]).dst);
        if (d.kind == topology::DeviceKind::NetworkSwitch && d.tier == 1) {
          top = ctx_.topo.link(full.links[static_cast<std::size_t>(h)]).dst;
          have_top = true;
          break;
        }
      }
      CLUSTERSIM_CHECK(have_top, "leaves of one fabric meet at a spine");
    }
    m.sends = op == CollectiveOp::Broadcast ? i == root : true;
    m.receives = op == CollectiveOp::Reduce ? i == root : (op == CollectiveOp::Broadcast ? i != root : true);
    g.senders += m.sends;
    g.receivers += m.receives;
    needed_ += m.receives;
  }
  // Every leaf forwards its partial result to the spine on its one link there and receives the
  // result back on the reverse link: a two-level SHARP tree, one stream per link.
  for (Group& g : groups_) {
    g.expected = g.senders;
    if (!have_top) continue;
    const topology::DeviceId leaf = ctx_.topo.link(members_[static_cast<std::size_t>(g.members.front())].up.links[
        static_cast<std::size_t>(members_[static_cast<std::size_t>(g.members.front())].up.hops - 1)]).dst;
    for (const topology::LinkId l : ctx_.topo.out_links(leaf)) {
      if (ctx_.topo.link(l).dst != top) continue;
      topology::Route one;
      one.links[0] = l;
      one.hops = 1;
      g.to_root = sub_route(ctx_.topo, one, 0, 1);
      g.from_root = reversed(ctx_.topo, g.to_root);
      break;
    }
    CLUSTERSIM_CHECK(g.to_root.hops == 1, "every leaf links to the aggregation spine");
    top_expected_ += g.senders > 0 ? 1 : 0;
  }
  two_level_ = have_top;
  arrivals_.assign(groups_.size() * pieces_, 0);
  top_arrivals_.assign(two_level_ ? pieces_ : 0, 0);
}

double InNetworkCollective::launch_latency_us() const {
  return nccl::hw_latency_us(nvls_ ? nccl::HwClass::NvLink : nccl::HwClass::Net, nccl_algo(), Protocol::Simple);
}

void InNetworkCollective::group_structure(const Group& g, std::vector<double>& out) const {
  out.insert(out.end(), {static_cast<double>(g.members.size()), static_cast<double>(g.senders),
                         static_cast<double>(g.receivers), static_cast<double>(g.expected)});
  for (const int i : g.members) {
    const Member& m = members_[static_cast<std::size_t>(i)];
    out.push_back(m.sends ? 1.0 : 0.0);
    out.push_back(m.receives ? 1.0 : 0.0);
  }
}

void InNetworkCollective::group_routes(const Group& g, FlowRoutes& out) const {
  out.add(g.to_root, sim::SimTime{});
  out.add(g.from_root, sim::SimTime{});
  for (const int i : g.members) {
    out.add(members_[static_cast<std::size_t>(i)].up, sim::SimTime{});
    out.add(members_[static_cast<std::size_t>(i)].down, sim::SimTime{});
  }
}

// Groups in order, each with its members; the tree's level and per-chunk bytes.
bool InNetworkCollective::flow_routes(FlowRoutes& out) const {
  out.structure.insert(out.structure.end(), {static_cast<double>(groups_.size()), two_level_ ? 1.0 : 0.0,
                                             static_cast<double>(top_expected_), static_cast<double>(pieces_), up_bytes_,
                                             down_bytes_, static_cast<double>(needed_)});
  for (const Group& g : groups_) {
    group_structure(g, out.structure);
    group_routes(g, out);
  }
  return true;
}

void InNetworkCollective::fold_groups() {
  std::vector<FoldUnit> units(groups_.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    group_structure(groups_[g], units[g].shape);
    group_routes(groups_[g], units[g].flows);
  }
  const UnitFolding folding = fold_units(ctx_.topo, units);
  for (std::size_t g = 0; g < groups_.size(); ++g) groups_[g].copies = folding.multiplicity[g];
}

int InNetworkCollective::simulated_groups() const {
  return static_cast<int>(std::count_if(groups_.begin(), groups_.end(), [](const Group& g) { return g.copies > 0; }));
}

void InNetworkCollective::send_for(std::size_t g, const topology::Route& route, double bytes, std::uint64_t tag) {
  folded_transfers_ += static_cast<std::uint64_t>(groups_[g].copies - 1);
  send(route, sim::Bytes{bytes}, tag, sim::SimTime{});
}

void InNetworkCollective::begin() {
  // Leaves fold only in a two-level tree (one switch is one group) with nothing else on the links.
  if (two_level_ && plan_.fold_channels && !plan_.shares_links) fold_groups();
  for (std::size_t m = 0; m < members_.size(); ++m) {
    if (groups_[static_cast<std::size_t>(members_[m].group)].copies > 0) try_send(m);
  }
}

void InNetworkCollective::try_send(std::size_t i) {
  Member& m = members_[i];
  if (!m.sends) return;
  while (m.up_sent < pieces_ && m.up_in_flight < static_cast<std::uint32_t>(nccl::kPipelineInFlight)) {
    send_for(static_cast<std::size_t>(m.group), m.up, up_bytes_, encode(kMemberUp, i, m.up_sent));
    ++m.up_sent;
    ++m.up_in_flight;
  }
}

void InNetworkCollective::arrive(std::size_t g, std::uint32_t chunk) {
  Group& group = groups_[g];
  if (++arrivals_[g * pieces_ + chunk] < group.expected) return;
  if (two_level_) {
    send_for(g, group.to_root, up_bytes_, encode(kGroupUp, g, chunk));
  } else {
    multicast(g, chunk);
  }
}

// A leaf's partial result arrives at the spine, once for every leaf it stands for.
void InNetworkCollective::arrive_at_top(std::size_t g, std::uint32_t chunk) {
  top_arrivals_[chunk] += groups_[g].copies;
  if (top_arrivals_[chunk] < top_expected_) return;
  for (std::size_t o = 0; o < groups_.size(); ++o) {
    if (groups_[o].receivers > 0 && groups_[o].copies > 0) send_for(o, groups_[o].from_root, down_bytes_, encode(kGroupDown, o, chunk));
  }
}

void InNetworkCollective::multicast(std::size_t g, std::uint32_t chunk) {
  for (int i : groups_[g].members) {
    const Member& m = members_[static_cast<std::size_t>(i)];
    if (m.receives) send_for(g, m.down, down_bytes_, encode(kMemberDown, static_cast<std::size_t>(i), chunk));
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
    case kGroupUp: arrive_at_top(id, chunk); break;
    case kGroupDown: multicast(id, chunk); break;
    case kMemberDown:
      if (++members_[id].down_recv < pieces_) break;
      complete_ += groups_[static_cast<std::size_t>(members_[id].group)].copies;
      if (complete_ == needed_) finish();
      break;
  }
}

}  // namespace clustersim::workloads
