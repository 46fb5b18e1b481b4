// NVLS inside each NVLink domain, a tree of domains across the NICs (see nvls_tree_collective.h).
#include "workloads/collectives/nvls_tree_collective.h"

#include <algorithm>
#include <map>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

// The GPU's links up to the first NVSwitch of `r`, as a route of their own.
topology::Route up_to_switch(const topology::Topology& topo, const topology::Route& r) {
  topology::Route out;
  out.bottleneck = sim::BytesPerSec{1e300};
  for (int k = 0; k < r.hops; ++k) {
    const topology::LinkId l = r.links[static_cast<std::size_t>(k)];
    out.links[out.hops++] = l;
    out.latency += topo.link(l).latency;
    out.bottleneck = std::min(out.bottleneck, topo.link(l).bandwidth);
    if (topo.device(topo.link(l).dst).kind == topology::DeviceKind::NvSwitch) return out;
  }
  CLUSTERSIM_CHECK(false, "every GPU of an NVLS domain reaches its NVSwitch");
  return out;
}

topology::Route reversed(const topology::Route& r) {
  topology::Route out = r;
  for (int k = 0; k < r.hops; ++k) {
    out.links[static_cast<std::size_t>(k)] = topology::Topology::reverse(r.links[static_cast<std::size_t>(r.hops - 1 - k)]);
  }
  return out;
}

}  // namespace

NvlsTreeCollective::NvlsTreeCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener,
                                       std::uint64_t tag)
    : CollectiveAlgorithm(ctx, std::move(plan), listener, tag),
      n_(static_cast<int>(plan_.request.ranks.size())),
      pieces_(static_cast<std::uint32_t>(plan_.chunks)) {
  CLUSTERSIM_CHECK(plan_.request.op == CollectiveOp::AllReduce, "NVLSTree runs all-reduce only");
  const auto& ranks = plan_.request.ranks;
  std::map<int, int> domain_of_server;
  members_.resize(static_cast<std::size_t>(n_));
  for (int i = 0; i < n_; ++i) {
    const int server = ctx_.topo.server_of_gpu(ranks[static_cast<std::size_t>(i)]);
    auto [it, fresh] = domain_of_server.emplace(server, static_cast<int>(domains_.size()));
    if (fresh) domains_.emplace_back();
    members_[static_cast<std::size_t>(i)].domain = it->second;
    domains_[static_cast<std::size_t>(it->second)].members.push_back(i);
  }
  CLUSTERSIM_CHECK(domains_.size() >= 2, "NVLSTree spans at least two NVLink domains");
  std::size_t smallest = domains_.front().members.size();
  for (const Domain& d : domains_) smallest = std::min(smallest, d.members.size());
  CLUSTERSIM_CHECK(smallest >= 2, "every NVLink domain of an NVLSTree holds two GPUs or more");
  heads_ = std::min(nccl::kMaxNvlsArity, static_cast<int>(smallest));
  for (Domain& d : domains_) {
    for (int i : d.members) {
      const int r = ranks[static_cast<std::size_t>(i)];
      const int peer = ranks[static_cast<std::size_t>(d.members[i == d.members.front() ? 1 : 0])];
      Member& m = members_[static_cast<std::size_t>(i)];
      m.up = up_to_switch(ctx_.topo, ctx_.router.route(r, peer, static_cast<std::uint64_t>(r)));
      m.down = reversed(m.up);
    }
  }
  const double c = plan_.request.bytes.value / pieces_;
  nvlink_bytes_ = c * (1.0 + 1.0 / heads_) / plan_.in_network_efficiency;
  head_bytes_ = c / heads_;
  build_trees();
  sim_heads_ = heads_;
  if (plan_.fold_channels && !plan_.shares_links) fold();
  if (plan_.nvls_head_rate > 0 && plan_.nvls_head_rate < sim::kUnlimited) {
    head_links_.resize(domains_.size() * static_cast<std::size_t>(sim_heads_) * 2);
    for (topology::VirtualLinkId& v : head_links_) v = ctx_.net.add_virtual_link(plan_.nvls_head_rate);
  }
  up_arrivals_.assign(domains_.size() * pieces_, 0);
  down_arrivals_.assign(domains_.size() * pieces_, 0);
  summed_.assign(domains_.size() * pieces_, 0);
  has_result_.assign(domains_.size() * pieces_, 0);
  edge_heads_.resize(2 * domains_.size() * 2 * static_cast<std::size_t>(heads_));
  for (std::size_t t = 0; t < 2; ++t) {
    for (std::size_t child = 0; child < domains_.size(); ++child) {
      for (const bool up : {true, false}) {
        for (int h = 0; h < heads_; ++h) {
          edge_heads_[edge(t, child, up) * static_cast<std::size_t>(heads_) + static_cast<std::size_t>(h)].next = static_cast<std::uint32_t>(t);
        }
      }
    }
  }
}

void NvlsTreeCollective::release_head_links() {
  for (const topology::VirtualLinkId v : head_links_) ctx_.net.release_virtual_link(v);
  head_links_.clear();
}

void NvlsTreeCollective::send_head(const topology::Route& r, int from, int to, int h, std::uint64_t tag) {
  folded_transfers_ += static_cast<std::uint64_t>(head_copies() - 1);
  if (head_links_.empty()) {
    send(r, sim::Bytes{head_bytes_}, tag, sim::SimTime{});
    return;
  }
  const std::array<topology::VirtualLinkId, 2> budget{head_link(from, h, true), head_link(to, h, false)};
  send(r, sim::Bytes{head_bytes_}, tag, sim::SimTime{}, sim::kUnlimited, nullptr, budget);
}

// Tree 0: the domains as a binary heap in their order (parent of position p is (p - 1) / 2);
// tree 1: the same heap over the reversed order, so that leaves of one are inner nodes of the other.
void NvlsTreeCollective::build_trees() {
  const int count = static_cast<int>(domains_.size());
  const auto& ranks = plan_.request.ranks;
  for (int t = 0; t < 2; ++t) {
    for (int pos = 1; pos < count; ++pos) {
      const int d = t == 0 ? pos : count - 1 - pos;
      const int parent_pos = (pos - 1) / 2;
      const int p = t == 0 ? parent_pos : count - 1 - parent_pos;
      Domain& dom = domains_[static_cast<std::size_t>(d)];
      dom.parent[static_cast<std::size_t>(t)] = p;
      domains_[static_cast<std::size_t>(p)].children[static_cast<std::size_t>(t)].push_back(d);
      const Domain& par = domains_[static_cast<std::size_t>(p)];
      for (int h = 0; h < heads_; ++h) {
        const int from = ranks[static_cast<std::size_t>(dom.members[static_cast<std::size_t>(h)])];
        const int to = ranks[static_cast<std::size_t>(par.members[static_cast<std::size_t>(h)])];
        dom.to_parent[static_cast<std::size_t>(t)].push_back(ctx_.router.route(from, to, static_cast<std::uint64_t>(from)));
      }
    }
  }
}

// The conditions of the header comment, on the concrete routes. Every link a member's route (up
// or down) crosses belongs to that member alone, and every link a head's routes cross (up and down
// each tree edge) to that head index alone; then members fold when each domain's members' routes
// match its first member's hop by hop (bandwidth) with equal latencies, and heads when one link
// bijection per head maps head 0's routes onto its own (bandwidths, latencies).
void NvlsTreeCollective::fold() {
  const topology::Topology& topo = ctx_.topo;
  constexpr std::int32_t kNone = -1;
  std::vector<std::int32_t> owner(topo.link_count(), kNone);
  auto claim = [&](const topology::Route& r, std::int32_t who) {
    bool ok = true;
    for (int k = 0; k < r.hops; ++k) {
      std::int32_t& o = owner[r.links[static_cast<std::size_t>(k)]];
      if (o == kNone) o = who;
      ok = ok && o == who;
    }
    return ok;
  };
  // A head's routes in a fixed order: per tree, per domain with a parent, up then down.
  auto head_routes = [&](int h) {
    std::vector<topology::Route> out;
    for (std::size_t t = 0; t < 2; ++t) {
      for (const Domain& d : domains_) {
        if (d.parent[t] < 0) continue;
        out.push_back(d.to_parent[t][static_cast<std::size_t>(h)]);
        out.push_back(reversed(out.back()));
      }
    }
    return out;
  };
  bool disjoint = true;
  for (int i = 0; i < n_; ++i) {
    const Member& m = members_[static_cast<std::size_t>(i)];
    disjoint = claim(m.up, i) && claim(m.down, i) && disjoint;
  }
  std::vector<std::vector<topology::Route>> routes(static_cast<std::size_t>(heads_));
  for (int h = 0; h < heads_; ++h) {
    routes[static_cast<std::size_t>(h)] = head_routes(h);
    for (const topology::Route& r : routes[static_cast<std::size_t>(h)]) disjoint = claim(r, n_ + h) && disjoint;
  }
  if (!disjoint) return;
  auto same_shape = [&](const topology::Route& a, const topology::Route& b) {
    if (a.hops != b.hops || a.latency != b.latency) return false;
    for (int k = 0; k < a.hops; ++k) {
      const std::size_t i = static_cast<std::size_t>(k);
      if (topo.link(a.links[i]).bandwidth != topo.link(b.links[i]).bandwidth) return false;
    }
    return true;
  };
  bool members = true;
  for (const Domain& d : domains_) {
    const Member& first = members_[static_cast<std::size_t>(d.members.front())];
    for (int i : d.members) {
      const Member& m = members_[static_cast<std::size_t>(i)];
      members = members && same_shape(first.up, m.up) && same_shape(first.down, m.down);
    }
  }
  fold_members_ = members;
  // σ_h and its inverse, over the links touched (reset after each head).
  constexpr topology::LinkId kUnmapped = ~topology::LinkId{0};
  std::vector<topology::LinkId> image(topo.link_count(), kUnmapped), preimage(topo.link_count(), kUnmapped);
  bool heads = heads_ > 1;
  for (int h = 1; h < heads_ && heads; ++h) {
    const auto& r0 = routes[0];
    const auto& rh = routes[static_cast<std::size_t>(h)];
    for (std::size_t j = 0; j < r0.size() && heads; ++j) {
      heads = same_shape(r0[j], rh[j]);
      for (int k = 0; k < r0[j].hops && heads; ++k) {
        const topology::LinkId a = r0[j].links[static_cast<std::size_t>(k)];
        const topology::LinkId b = rh[j].links[static_cast<std::size_t>(k)];
        if (image[a] == kUnmapped && preimage[b] == kUnmapped) {
          image[a] = b;
          preimage[b] = a;
        }
        heads = image[a] == b && preimage[b] == a;
      }
    }
    for (const topology::Route& r : r0) {
      for (int k = 0; k < r.hops; ++k) image[r.links[static_cast<std::size_t>(k)]] = kUnmapped;
    }
    for (const topology::Route& r : rh) {
      for (int k = 0; k < r.hops; ++k) preimage[r.links[static_cast<std::size_t>(k)]] = kUnmapped;
    }
  }
  if (heads) sim_heads_ = 1;
}

// tuning.cc: NVLSTree latency = hwLat[NVLINK] + 2 x log2i(nodes) x hwLat[NET] (log2i rounds down).
double NvlsTreeCollective::launch_latency_us() const {
  int levels = 0;
  for (int k = 2; k <= static_cast<int>(domains_.size()); k *= 2) ++levels;
  return nccl::hw_latency_us(nccl::HwClass::NvLink, nccl::NcclAlgo::NvlsTree, Protocol::Simple) +
         2.0 * levels * nccl::hw_latency_us(nccl::HwClass::Net, nccl::NcclAlgo::NvlsTree, Protocol::Simple);
}

void NvlsTreeCollective::begin() {
  if (!fold_members_) {
    for (std::size_t m = 0; m < members_.size(); ++m) try_send(m);
    return;
  }
  for (const Domain& d : domains_) try_send(static_cast<std::size_t>(d.members.front()));
}

void NvlsTreeCollective::try_send(std::size_t i) {
  Member& m = members_[i];
  while (m.up_sent < pieces_ && m.up_in_flight < static_cast<std::uint32_t>(nccl::kPipelineInFlight)) {
    folded_transfers_ += static_cast<std::uint64_t>(member_copies(static_cast<std::size_t>(m.domain)) - 1);
    send(m.up, sim::Bytes{nvlink_bytes_}, encode(kMemberUp, i, m.up_sent), sim::SimTime{});
    ++m.up_sent;
    ++m.up_in_flight;
  }
}

// `parts` more parts of chunk `chunk`'s sum reached domain d (members' data or child heads' shares).
void NvlsTreeCollective::reduced_part(std::size_t d, std::uint32_t chunk, int parts) {
  const Domain& dom = domains_[d];
  const std::size_t t = chunk % 2;
  const int needed = static_cast<int>(dom.members.size()) + static_cast<int>(dom.children[t].size()) * heads_;
  if ((up_arrivals_[d * pieces_ + chunk] += parts) < needed) return;
  if (dom.parent[t] < 0) {
    result_down(d, chunk);
    return;
  }
  summed_[d * pieces_ + chunk] = 1;
  for (int h = 0; h < sim_heads_; ++h) pump(edge(t, d, true), h);
}

// Domain d has chunk `chunk`'s result: pass it to its children and multicast it to its GPUs.
void NvlsTreeCollective::result_down(std::size_t d, std::uint32_t chunk) {
  const std::size_t t = chunk % 2;
  has_result_[d * pieces_ + chunk] = 1;
  for (int child : domains_[d].children[t]) {
    for (int h = 0; h < sim_heads_; ++h) pump(edge(t, static_cast<std::size_t>(child), false), h);
  }
  for (int i : domains_[d].members) {
    folded_transfers_ += static_cast<std::uint64_t>(member_copies(d) - 1);
    send(members_[static_cast<std::size_t>(i)].down, sim::Bytes{nvlink_bytes_},
         encode(kMemberDown, static_cast<std::size_t>(i), chunk), sim::SimTime{});
    if (fold_members_) break;  // the first member stands for the domain's
  }
}

void NvlsTreeCollective::pump(std::size_t e, int h) {
  const std::size_t id = e * static_cast<std::size_t>(heads_) + static_cast<std::size_t>(h);
  EdgeHead& s = edge_heads_[id];
  const std::size_t t = e / 2 / domains_.size();
  const std::size_t c = (e / 2) % domains_.size();
  const bool up = e % 2 == 0;
  const int p = domains_[c].parent[t];
  while (s.in_flight < static_cast<std::uint32_t>(nccl::kPipelineInFlight) && s.next < pieces_) {
    const bool ready = up ? summed_[c * pieces_ + s.next] != 0 : has_result_[static_cast<std::size_t>(p) * pieces_ + s.next] != 0;
    if (!ready) return;
    const topology::Route& r = domains_[c].to_parent[t][static_cast<std::size_t>(h)];
    if (up) {
      send_head(r, static_cast<int>(c), p, h, encode(kTreeUp, id, s.next));
    } else {
      send_head(reversed(r), p, static_cast<int>(c), h, encode(kTreeDown, id, s.next));
    }
    s.next += 2;
    ++s.in_flight;
  }
}

void NvlsTreeCollective::on_transfer_done(std::uint64_t tag) {
  const auto [kind_bits, id, chunk] = TransferTag::decode(tag);
  const Kind kind = static_cast<Kind>(kind_bits);
  switch (kind) {
    case kMemberUp:
      --members_[id].up_in_flight;
      reduced_part(static_cast<std::size_t>(members_[id].domain), chunk, member_copies(static_cast<std::size_t>(members_[id].domain)));
      try_send(id);
      break;
    case kTreeUp:
    case kTreeDown: {
      // id = edge x heads + head (pump): the edge's child domain c, its tree t = chunk % 2.
      const std::size_t e = id / static_cast<std::size_t>(heads_);
      --edge_heads_[id].in_flight;
      pump(e, static_cast<int>(id % static_cast<std::size_t>(heads_)));
      const std::size_t c = (e / 2) % domains_.size();
      if (kind == kTreeUp) {
        reduced_part(static_cast<std::size_t>(domains_[c].parent[chunk % 2]), chunk, head_copies());
      } else if ((down_arrivals_[c * pieces_ + chunk] += head_copies()) == heads_) {
        result_down(c, chunk);
      }
      break;
    }
    case kMemberDown:
      if (++members_[id].down_recv == pieces_ &&
          (complete_ += member_copies(static_cast<std::size_t>(members_[id].domain))) == n_) {
        release_head_links();  // every head's transfer has landed before the last multicast
        finish();
      }
      break;
  }
}

}  // namespace clustersim::workloads
