// Double binary tree (see tree_collective.h).
#include "workloads/collectives/tree_collective.h"

#include <algorithm>
#include <map>

#include "sim/check.h"
#include "sim/rng.h"
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

}  // namespace

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
  const std::size_t total = static_cast<std::size_t>(plan_.channels) * static_cast<std::size_t>(n_);
  nodes_.resize(total);
  up_routes_.resize(total);
  up_overheads_.resize(total);
  down_routes_.resize(total * kMaxChildren);
  down_overheads_.resize(total * kMaxChildren);
  for (int ch = 0; ch < plan_.channels; ++ch) build_channel(ch);
  // Done means: every rank has the result (all-reduce, broadcast), or the root has it (reduce).
  needed_ = op == CollectiveOp::Reduce ? static_cast<std::size_t>(plan_.channels) : total;
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
  const bool second = !rooted && ch % 2 == 1;
  // Node indices: servers in order, each server's chain in (rotated) order.
  std::vector<int> head(static_cast<std::size_t>(m));
  const std::size_t base = static_cast<std::size_t>(ch) * static_cast<std::size_t>(n_);
  std::size_t next = base;
  for (int q = 0; q < m; ++q) {
    auto local = servers[static_cast<std::size_t>(q)];
    if (!(rooted && q == 0)) {
      const std::size_t shift =
          static_cast<std::size_t>(ch) * ring_rotation_stride(static_cast<int>(local.size()), plan_.channels) % local.size();
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
    up_routes_[i] = ctx_.router.route(node.rank, parent.rank, route_key(node.rank, parent.rank, ch));
    up_overheads_[i] = step_overhead(up_routes_[i]);
    const std::size_t d = (base + static_cast<std::size_t>(node.parent)) * kMaxChildren + static_cast<std::size_t>(node.slot);
    down_routes_[d] = ctx_.router.route(parent.rank, node.rank, route_key(parent.rank, node.rank, ch));
    down_overheads_[d] = step_overhead(down_routes_[d]);
  }
}

int TreeCollective::parent_of(int ch, int rank) const {
  const std::size_t base = static_cast<std::size_t>(ch) * static_cast<std::size_t>(n_);
  for (std::size_t i = base; i < base + static_cast<std::size_t>(n_); ++i) {
    if (nodes_[i].rank == rank) return nodes_[i].parent < 0 ? -1 : nodes_[base + static_cast<std::size_t>(nodes_[i].parent)].rank;
  }
  return -1;
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
  const std::uint32_t window = static_cast<std::uint32_t>(nccl::kPipelineInFlight);
  if (up_phase_ && node.parent >= 0) {
    const std::uint32_t have = have_up(node);
    while (node.up_sent < have && node.up_in_flight < window) {
      ++node.up_sent;
      ++node.up_in_flight;
      send(up_routes_[i], piece_bytes_, static_cast<std::uint64_t>(i) << 4, up_overheads_[i], plan_.channel_rate_cap);
    }
  }
  if (!down_phase_) return;
  const std::uint32_t have = have_down(node);
  for (int c = 0; c < node.nchildren; ++c) {
    const std::size_t s = static_cast<std::size_t>(c);
    while (node.down_sent[s] < have && node.down_in_flight[s] < window) {
      ++node.down_sent[s];
      ++node.down_in_flight[s];
      const std::size_t d = i * kMaxChildren + s;
      send(down_routes_[d], piece_bytes_, (static_cast<std::uint64_t>(i) << 4) | 8u | s, down_overheads_[d],
           plan_.channel_rate_cap);
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

void TreeCollective::on_transfer_done(std::uint64_t tag) {
  const std::size_t i = static_cast<std::size_t>(tag >> 4);
  const std::size_t base = i - i % static_cast<std::size_t>(n_);
  Node& node = nodes_[i];
  std::size_t other;
  if ((tag & 8u) == 0) {  // up: i -> parent
    --node.up_in_flight;
    other = base + static_cast<std::size_t>(node.parent);
    ++nodes_[other].up_recv[static_cast<std::size_t>(node.slot)];
  } else {  // down: i -> child
    const std::size_t s = tag & 7u;
    --node.down_in_flight[s];
    other = base + static_cast<std::size_t>(node.children[s]);
    ++nodes_[other].down_recv;
  }
  check_done(other);
  try_send(other);
  try_send(i);
  if (complete_ == needed_) finish();
}

}  // namespace clustersim::workloads
