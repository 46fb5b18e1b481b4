// Double binary tree (see tree_collective.h).
#include "workloads/collectives/tree_collective.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/check.h"
#include "sim/rng.h"
#include "workloads/collectives/channel_folding.h"
#include "workloads/collectives/ring_collective.h"

namespace clustersim::workloads {
namespace {

int btree(int q, int m) {
  if (q == 0) return -1;
  const int bit = q & -q;
  int up = (q ^ bit) | (bit << 1);
  if (up >= m) up = q ^ bit;
  return up;
}

std::uint64_t route_key(int src, int dst, int ch) {
  return sim::splitmix64((static_cast<std::uint64_t>(src) << 32) ^ (static_cast<std::uint64_t>(dst) << 8) ^
                         static_cast<std::uint64_t>(ch) ^ 0x7e3ULL);
}

// A route streamed without its physical latency: the latency is paid at hand-over instead (see
// tree_collective.h), so back-to-back chunks leave no gap on the link.
topology::Route streamed(topology::Route r) {
  r.latency = sim::SimTime{};
  return r;
}

constexpr std::uint64_t kDeliver = 1ULL << 63;

}  // namespace

double tree_chunk_bytes(Protocol p, double per_channel, int ppn, int nodes) {
  int log2_nodes = 0;
  while ((2 << log2_nodes) <= nodes) ++log2_nodes;
  // Integer division on the left of NCCL's comparisons: whole chunks per channel.
  auto chunks = [per_channel](double c) { return std::floor(per_channel / c); };
  double chunk;
  switch (p) {
    case Protocol::Simple: {
      chunk = 524288.0;
      const double depth = std::max(1, ppn - 1 + log2_nodes);
      while (chunks(chunk) < depth * 8 && chunk > 131072) chunk /= 2;
      while (chunks(chunk) < depth * 4 && chunk > 65536) chunk /= 2;
      while (chunks(chunk) < depth && chunk > 32768) chunk /= 2;
      return chunk;
    }
    case Protocol::LL128: {
      chunk = 576000.0;
      const double steps = 1 + log2_nodes + 0.1 * ppn;
      while (chunks(chunk) < steps * 64 / ppn && chunk > 131072) chunk /= 2;
      while (chunks(chunk) < steps * 16 / ppn && chunk > 32768) chunk /= 2;
      return chunk;
    }
    case Protocol::LL: return 32768.0;
  }
  return 524288.0;
}

int btree_parent(int q, int m, bool second) {
  if (!second) return btree(q, m);
  if (m % 2 == 0) {  // mirror
    const int u = btree(m - 1 - q, m);
    return u < 0 ? -1 : m - 1 - u;
  }
  const int u = btree((q - 1 + m) % m, m);  // shift by one
  return u < 0 ? -1 : (u + 1) % m;
}

TreeCollective::TreeCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener,
                               std::uint64_t tag)
    : CollectiveAlgorithm(ctx, std::move(plan), listener, tag), n_(static_cast<int>(plan_.request.ranks.size())) {
  const CollectiveOp op = plan_.request.op;
  CLUSTERSIM_CHECK(op == CollectiveOp::AllReduce || op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce,
                   "a tree runs allreduce, broadcast or reduce");
  CLUSTERSIM_CHECK(n_ >= 2, "a tree needs at least two ranks");
  up_phase_ = op != CollectiveOp::Broadcast;
  down_phase_ = op != CollectiveOp::Reduce;
  pieces_ = static_cast<std::uint32_t>(plan_.chunks);
  piece_bytes_ = plan_.request.bytes / (static_cast<double>(plan_.channels) * plan_.chunks);
  // NCCL's graph channels decide which channels pair up on one chain (launches may use fewer).
  graph_channels_ = std::max(plan_.channels, nccl_graph(ctx_.topo, ctx_.router, plan_.request.ranks,
                                                        plan_.gpu_compute_capability, plan_.hints).channels);
  const std::size_t total = static_cast<std::size_t>(plan_.channels) * static_cast<std::size_t>(n_);
  nodes_.resize(total);
  up_routes_.resize(total);
  up_latency_.resize(total);
  down_routes_.resize(total * kMaxChildren);
  down_latency_.resize(total * kMaxChildren);
  for (int ch = 0; ch < plan_.channels; ++ch) build_channel(ch);
  if (plan_.fold_channels && op == CollectiveOp::AllReduce) {
    fold();
    if (folded_copies_ == 1) fold_mirror();
  }
  // Done means: every rank has the result (all-reduce, broadcast), or the root has it (reduce).
  needed_ = op == CollectiveOp::Reduce ? static_cast<std::size_t>(plan_.channels) : nodes_.size();
}

// Folds the chain pairs onto pair 0 (see tree_collective.h): channel_folding's channels are the
// pairs, its positions the up and down routes of the pair's two channels. Changes nothing unless
// every pair is complete, the trees of a half have one shape, and the routes prove the symmetry.
void TreeCollective::fold() {
  const int pairs = chain_pairs();
  if (pairs < 2 || plan_.channels != 2 * pairs) return;
  const std::size_t n = static_cast<std::size_t>(n_);
  for (int ch = 0; ch < plan_.channels; ++ch) {
    const std::size_t base = static_cast<std::size_t>(ch) * n, first = static_cast<std::size_t>(ch < pairs ? 0 : pairs) * n;
    for (std::size_t i = 0; i < n; ++i) {
      if (nodes_[base + i].parent != nodes_[first + i].parent) return;
    }
  }
  const std::size_t per_channel = n + n * kMaxChildren;  // up routes, then down routes
  std::vector<topology::Route> routes;
  std::vector<sim::SimTime> overheads;
  for (int pair = 0; pair < pairs; ++pair) {
    for (const int ch : {pair, pair + pairs}) {
      const std::size_t base = static_cast<std::size_t>(ch) * n;
      routes.insert(routes.end(), up_routes_.begin() + static_cast<std::ptrdiff_t>(base),
                    up_routes_.begin() + static_cast<std::ptrdiff_t>(base + n));
      overheads.insert(overheads.end(), up_latency_.begin() + static_cast<std::ptrdiff_t>(base),
                       up_latency_.begin() + static_cast<std::ptrdiff_t>(base + n));
      routes.insert(routes.end(), down_routes_.begin() + static_cast<std::ptrdiff_t>(base * kMaxChildren),
                    down_routes_.begin() + static_cast<std::ptrdiff_t>((base + n) * kMaxChildren));
      overheads.insert(overheads.end(), down_latency_.begin() + static_cast<std::ptrdiff_t>(base * kMaxChildren),
                       down_latency_.begin() + static_cast<std::ptrdiff_t>((base + n) * kMaxChildren));
    }
  }
  const int positions = static_cast<int>(2 * per_channel);
  const auto folded = fold_channels(ctx_.topo, routes, overheads, pairs, positions, plan_.shares_links);
  if (!folded) return;
  // Keep channels 0 and `pairs` as simulated channels 0 and 1, with pair 0's folded routes.
  std::vector<Node> kept(nodes_.begin(), nodes_.begin() + static_cast<std::ptrdiff_t>(n));
  kept.insert(kept.end(), nodes_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(pairs) * n),
              nodes_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(pairs + 1) * n));
  nodes_ = std::move(kept);
  up_routes_.assign(2 * n, {});
  down_routes_.assign(2 * n * kMaxChildren, {});
  up_weights_.assign(2 * n, {});
  down_weights_.assign(2 * n * kMaxChildren, {});
  up_latency_.resize(2 * n);  // the latencies of channel 0, and of channel `pairs` below
  std::vector<sim::SimTime> down_latency(2 * n * kMaxChildren);
  for (std::size_t h = 0; h < 2; ++h) {
    for (std::size_t i = 0; i < n; ++i) {
      const FoldedHop& up = (*folded)[h * per_channel + i];
      up_routes_[h * n + i] = up.route;
      up_weights_[h * n + i] = up.weights;
      up_latency_[h * n + i] = overheads[h * per_channel + i];
    }
    for (std::size_t d = 0; d < n * kMaxChildren; ++d) {
      const FoldedHop& down = (*folded)[h * per_channel + n + d];
      down_routes_[h * n * kMaxChildren + d] = down.route;
      down_weights_[h * n * kMaxChildren + d] = down.weights;
      down_latency[h * n * kMaxChildren + d] = overheads[h * per_channel + n + d];
    }
  }
  down_latency_ = std::move(down_latency);
  folded_copies_ = static_cast<std::uint64_t>(pairs);
}

// Folds the second tree onto the first where the chain pairs do not fold (see tree_collective.h):
// channel_folding's two channels are the two halves, channel c of the first and c + C/2 of the
// second on one chain; position (c, node i, slot s) of the first is matched with (c + C/2, μ(i),
// the slot of μ(child)), μ the mirror of the servers (server q <-> m - 1 - q, the same place in
// its chain). The parents must commute with μ, so the two halves run one state machine up to μ;
// fold_channels proves the routes' part. Changes nothing otherwise (an odd server count: the
// second tree is the first shifted by one server, which is no involution).
void TreeCollective::fold_mirror() {
  const int pairs = chain_pairs();
  if (plan_.channels != 2 * pairs || pairs >= graph_channels_) return;  // the halves run the two trees
  const std::size_t n = static_cast<std::size_t>(n_);
  // Servers in node order: every server's chain is one block of equal size g.
  std::vector<int> server_at(n);
  for (std::size_t i = 0; i < n; ++i) server_at[i] = ctx_.topo.server_of_gpu(nodes_[i].rank);
  std::size_t g = 1;
  while (g < n && server_at[g] == server_at[0]) ++g;
  if (n % g != 0 || n / g < 2) return;
  for (std::size_t i = 0; i < n; ++i) {
    if (server_at[i] != server_at[i - i % g]) return;
  }
  const std::size_t m = n / g;
  auto mu = [g, m](std::size_t i) { return (m - 1 - i / g) * g + i % g; };
  for (int c = 0; c < pairs; ++c) {
    const std::size_t a = static_cast<std::size_t>(c) * n, b = static_cast<std::size_t>(c + pairs) * n;
    for (std::size_t i = 0; i < n; ++i) {
      const Node& x = nodes_[a + i];
      const Node& y = nodes_[b + mu(i)];
      if ((x.parent < 0) != (y.parent < 0) || x.nchildren != y.nchildren) return;
      if (x.parent >= 0 && static_cast<std::size_t>(y.parent) != mu(static_cast<std::size_t>(x.parent))) return;
    }
  }
  const std::size_t per_channel = n + n * kMaxChildren;  // up routes, then down routes
  const std::size_t positions = static_cast<std::size_t>(pairs) * per_channel;
  std::vector<topology::Route> routes(2 * positions);
  std::vector<sim::SimTime> overheads(2 * positions);
  for (int c = 0; c < pairs; ++c) {
    const std::size_t a = static_cast<std::size_t>(c) * n, b = static_cast<std::size_t>(c + pairs) * n;
    const std::size_t at = static_cast<std::size_t>(c) * per_channel;
    for (std::size_t i = 0; i < n; ++i) {
      routes[at + i] = up_routes_[a + i];
      overheads[at + i] = up_latency_[a + i];
      routes[positions + at + i] = up_routes_[b + mu(i)];
      overheads[positions + at + i] = up_latency_[b + mu(i)];
      const Node& x = nodes_[a + i];
      const Node& y = nodes_[b + mu(i)];
      for (std::size_t s = 0; s < kMaxChildren; ++s) {
        std::size_t t = s;  // the image's slot: that of μ(child), or s where there is no child
        if (static_cast<int>(s) < x.nchildren) {
          const int image = static_cast<int>(mu(static_cast<std::size_t>(x.children[s])));
          t = static_cast<std::size_t>(std::find(y.children.begin(), y.children.begin() + y.nchildren, image) - y.children.begin());
          if (static_cast<int>(t) == y.nchildren) return;
        }
        routes[at + n + i * kMaxChildren + s] = down_routes_[(a + i) * kMaxChildren + s];
        overheads[at + n + i * kMaxChildren + s] = down_latency_[(a + i) * kMaxChildren + s];
        routes[positions + at + n + i * kMaxChildren + s] = down_routes_[(b + mu(i)) * kMaxChildren + t];
        overheads[positions + at + n + i * kMaxChildren + s] = down_latency_[(b + mu(i)) * kMaxChildren + t];
      }
    }
  }
  const auto folded = fold_channels(ctx_.topo, routes, overheads, 2, static_cast<int>(positions), plan_.shares_links);
  if (!folded) return;
  // Keep the first half, its routes weighted for the second.
  nodes_.resize(static_cast<std::size_t>(pairs) * n);
  const std::size_t kept = nodes_.size();
  up_routes_.resize(kept);
  up_latency_.resize(kept);
  down_routes_.resize(kept * kMaxChildren);
  down_latency_.resize(kept * kMaxChildren);
  up_weights_.assign(kept, {});
  down_weights_.assign(kept * kMaxChildren, {});
  for (int c = 0; c < pairs; ++c) {
    const std::size_t a = static_cast<std::size_t>(c) * n, at = static_cast<std::size_t>(c) * per_channel;
    for (std::size_t i = 0; i < n; ++i) {
      up_routes_[a + i] = (*folded)[at + i].route;
      up_weights_[a + i] = (*folded)[at + i].weights;
    }
    for (std::size_t d = 0; d < n * kMaxChildren; ++d) {
      down_routes_[a * kMaxChildren + d] = (*folded)[at + n + d].route;
      down_weights_[a * kMaxChildren + d] = (*folded)[at + n + d].weights;
    }
  }
  folded_copies_ = 2;
}

void TreeCollective::build_channel(int ch) {
  const auto& ranks = plan_.request.ranks;
  const bool rooted = plan_.request.op != CollectiveOp::AllReduce;
  const int root_rank = ranks[static_cast<std::size_t>(plan_.request.root)];
  // Servers in order of first appearance; the root's server first for rooted operations.
  std::vector<std::vector<int>> servers;
  std::map<int, std::size_t> index;
  for (int r : ranks) {
    auto [it, fresh] = index.emplace(ctx_.topo.server_of_gpu(r), servers.size());
    if (fresh) servers.emplace_back();
    servers[it->second].push_back(r);
  }
  if (rooted) {
    const std::size_t rs = index[ctx_.topo.server_of_gpu(root_rank)];
    std::rotate(servers.begin(), servers.begin() + static_cast<std::ptrdiff_t>(rs), servers.end());
    auto& local = servers.front();
    std::rotate(local.begin(), std::find(local.begin(), local.end(), root_rank), local.end());
  }
  const int m = static_cast<int>(servers.size());
  // connectTrees: channel c and c + C/2 share a chain; the second half runs the second tree.
  const int pairs = chain_pairs();
  const bool second = !rooted && pairs < graph_channels_ && ch >= pairs;
  const int chain = rooted ? ch : ch % pairs;
  // Node indices: servers in order, each server's chain in (rotated) order.
  std::vector<int> head(static_cast<std::size_t>(m));
  const std::size_t base = static_cast<std::size_t>(ch) * static_cast<std::size_t>(n_);
  std::size_t next = base;
  for (int q = 0; q < m; ++q) {
    auto local = servers[static_cast<std::size_t>(q)];
    if (!(rooted && q == 0)) {
      const std::size_t shift =
          static_cast<std::size_t>(chain) * ring_rotation_stride(static_cast<int>(local.size()), pairs) % local.size();
      std::rotate(local.begin(), local.begin() + static_cast<std::ptrdiff_t>(shift), local.end());
    }
    head[static_cast<std::size_t>(q)] = static_cast<int>(next - base);
    for (std::size_t i = 0; i < local.size(); ++i, ++next) {
      nodes_[next].rank = local[i];
      nodes_[next].parent = i == 0 ? -1 : static_cast<int>(next - base) - 1;
    }
  }
  for (int q = 0; q < m; ++q) {
    const int pq = btree_parent(q, m, second);
    if (pq >= 0) nodes_[base + static_cast<std::size_t>(head[static_cast<std::size_t>(q)])].parent = head[static_cast<std::size_t>(pq)];
  }
  for (std::size_t i = base; i < base + static_cast<std::size_t>(n_); ++i) {
    Node& node = nodes_[i];
    if (node.parent < 0) continue;
    Node& parent = nodes_[base + static_cast<std::size_t>(node.parent)];
    CLUSTERSIM_CHECK(parent.nchildren < kMaxChildren, "tree nodes have at most 4 children");
    node.slot = parent.nchildren;
    parent.children[static_cast<std::size_t>(parent.nchildren++)] = static_cast<int>(i - base);
    const topology::Route up = ctx_.router.route(node.rank, parent.rank, route_key(node.rank, parent.rank, ch));
    up_routes_[i] = streamed(up);
    up_latency_[i] = up.latency + step_overhead(up);
    const std::size_t d = (base + static_cast<std::size_t>(node.parent)) * kMaxChildren + static_cast<std::size_t>(node.slot);
    const topology::Route down = ctx_.router.route(parent.rank, node.rank, route_key(parent.rank, node.rank, ch));
    down_routes_[d] = streamed(down);
    down_latency_[d] = down.latency + step_overhead(down);
  }
}

std::uint64_t TreeCollective::simulated_transfers_at_least() const {
  std::uint64_t edges = 0;
  for (const Node& node : nodes_) edges += node.parent >= 0 ? 1 : 0;
  const std::uint64_t phases = (up_phase_ ? 1 : 0) + (down_phase_ ? 1 : 0);
  return edges * phases * pieces_;
}

int TreeCollective::chain_pairs() const {
  return graph_channels_ >= 2 ? graph_channels_ / 2 : 1;
}

int TreeCollective::parent_of(int ch, int rank) const {
  const std::size_t base = static_cast<std::size_t>(ch) * static_cast<std::size_t>(n_);
  for (std::size_t i = base; i < base + static_cast<std::size_t>(n_); ++i) {
    if (nodes_[i].rank == rank) return nodes_[i].parent < 0 ? -1 : nodes_[base + static_cast<std::size_t>(nodes_[i].parent)].rank;
  }
  return -1;
}

// Up routes, then every child slot's down route (empty where there is no child), per node: the
// node's place in its channel's tree fixes the index. A chunk's step latency is paid at hand-over.
bool TreeCollective::flow_routes(FlowRoutes& out) const {
  out.structure.push_back(static_cast<double>(nodes_.size()));
  for (const Node& node : nodes_) out.structure.push_back(node.parent);
  for (std::size_t i = 0; i < up_routes_.size(); ++i) out.add(up_routes_[i], up_latency_[i], up_weights_.empty() ? nullptr : &up_weights_[i]);
  for (std::size_t d = 0; d < down_routes_.size(); ++d)
    out.add(down_routes_[d], down_latency_[d], down_weights_.empty() ? nullptr : &down_weights_[d]);
  return true;
}

std::uint32_t TreeCollective::have_up(const Node& node) const {
  std::uint32_t have = pieces_;
  for (int c = 0; c < node.nchildren; ++c) have = std::min(have, node.up_recv[static_cast<std::size_t>(c)]);
  return have;
}

std::uint32_t TreeCollective::have_down(const Node& node) const {
  if (node.parent >= 0) return node.down_recv;
  return up_phase_ ? have_up(node) : pieces_;
}

void TreeCollective::begin() {
  for (std::size_t i = 0; i < nodes_.size(); ++i) check_done(i);  // a broadcast root has it all
  for (std::size_t i = 0; i < nodes_.size(); ++i) try_send(i);
}

void TreeCollective::try_send(std::size_t i) {
  Node& node = nodes_[i];
  const std::uint32_t slots = static_cast<std::uint32_t>(nccl::kSteps);
  if (up_phase_ && node.parent >= 0) {
    if (node.up_sent < have_up(node) && node.up_streaming == 0 && node.up_unread < slots) {
      ++node.up_sent;
      ++node.up_streaming;
      ++node.up_unread;
      send(up_routes_[i], piece_bytes_, static_cast<std::uint64_t>(i) << 4, sim::SimTime{}, plan_.channel_rate_cap,
           up_weights_.empty() ? nullptr : &up_weights_[i]);
    }
  }
  if (!down_phase_) return;
  const std::uint32_t have = have_down(node);
  for (int c = 0; c < node.nchildren; ++c) {
    const std::size_t s = static_cast<std::size_t>(c);
    if (node.down_sent[s] < have && node.down_streaming[s] == 0 && node.down_unread[s] < slots) {
      ++node.down_sent[s];
      ++node.down_streaming[s];
      ++node.down_unread[s];
      send(down_routes_[i * kMaxChildren + s], piece_bytes_, (static_cast<std::uint64_t>(i) << 4) | 8u | s, sim::SimTime{},
           plan_.channel_rate_cap, down_weights_.empty() ? nullptr : &down_weights_[i * kMaxChildren + s]);
    }
  }
}

void TreeCollective::check_done(std::size_t i) {
  Node& node = nodes_[i];
  if (node.done) return;
  const bool has_all = down_phase_ ? have_down(node) == pieces_ : (node.parent < 0 && have_up(node) == pieces_);
  if (!has_all) return;
  node.done = true;
  ++complete_;
}

// The last byte has left: the connection streams its next chunk while this one's step latency
// runs; the receiver gets it when that latency is over.
void TreeCollective::on_transfer_done(std::uint64_t tag) {
  const std::size_t i = static_cast<std::size_t>(tag >> 4);
  Node& node = nodes_[i];
  sim::SimTime latency;
  if ((tag & 8u) == 0) {
    --node.up_streaming;
    latency = up_latency_[i];
  } else {
    --node.down_streaming[tag & 7u];
    latency = down_latency_[i * kMaxChildren + (tag & 7u)];
  }
  try_send(i);
  if (latency > sim::SimTime{}) {
    ctx_.sim.schedule_in(latency, this, kDeliver | tag);
  } else {
    deliver(tag);
  }
}

void TreeCollective::on_event(std::uint64_t tag) {
  if ((tag & kDeliver) == 0) {
    CollectiveAlgorithm::on_event(tag);  // the launch
    return;
  }
  deliver(tag & ~kDeliver);
}

void TreeCollective::deliver(std::uint64_t tag) {
  const std::size_t i = static_cast<std::size_t>(tag >> 4);
  const std::size_t base = i - i % static_cast<std::size_t>(n_);
  Node& node = nodes_[i];
  std::size_t other;
  if ((tag & 8u) == 0) {  // up: i -> parent
    --node.up_unread;
    other = base + static_cast<std::size_t>(node.parent);
    ++nodes_[other].up_recv[static_cast<std::size_t>(node.slot)];
  } else {  // down: i -> child
    const std::size_t s = tag & 7u;
    --node.down_unread[s];
    other = base + static_cast<std::size_t>(node.children[s]);
    ++nodes_[other].down_recv;
  }
  check_done(other);
  try_send(other);
  try_send(i);
  if (complete_ == needed_ && !done()) finish();
}

}  // namespace clustersim::workloads
