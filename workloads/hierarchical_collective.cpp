// Stage composition for hierarchical collectives (see hierarchical_collective.h).
#include "workloads/hierarchical_collective.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "sim/check.h"

namespace clustersim::workloads {

std::vector<std::vector<CollectiveRequest>> hierarchical_stages(const topology::Topology& topo, const CollectiveRequest& req) {
  std::vector<std::vector<int>> servers;
  std::map<int, std::size_t> index;
  for (int r : req.ranks) {
    auto [it, fresh] = index.emplace(topo.server_of_gpu(r), servers.size());
    if (fresh) servers.emplace_back();
    servers[it->second].push_back(r);
  }
  const std::size_t ppn = servers.front().size();
  if (servers.size() < 2) {
    throw std::invalid_argument("hierarchical splits intra-node and inter-node stages, but all " +
                                std::to_string(req.ranks.size()) + " GPUs are on one node; use ring, tree or in-network");
  }
  for (const auto& s : servers) {
    if (s.size() != ppn) {
      throw std::invalid_argument("hierarchical needs the same number of GPUs on every node (rails line up); "
                                  "use --gpus as a multiple of the GPUs per node");
    }
  }
  if (ppn < 2) {
    throw std::invalid_argument("hierarchical needs several GPUs per node; with one GPU per node it is the flat "
                                "inter-node algorithm: use ring or tree");
  }
  const int root_rank = req.ranks[static_cast<std::size_t>(req.root)];
  std::size_t root_local = 0;
  for (const auto& s : servers) {
    const auto it = std::find(s.begin(), s.end(), root_rank);
    if (it != s.end()) root_local = static_cast<std::size_t>(it - s.begin());
  }
  auto sub = [&](CollectiveOp op, std::vector<int> ranks, double bytes, CollectiveAlgo algo, int root) {
    CollectiveRequest r = req;
    r.op = op;
    r.ranks = std::move(ranks);
    r.bytes = sim::Bytes{bytes};
    r.algo = algo;
    r.root = root;
    r.channels = 0;
    r.chunks = 0;
    return r;
  };
  const double S = req.bytes.value;
  const double shard = S / static_cast<double>(ppn);
  auto intra = [&](CollectiveOp op, double bytes) {
    std::vector<CollectiveRequest> out;
    for (const auto& s : servers) out.push_back(sub(op, s, bytes, CollectiveAlgo::Ring, static_cast<int>(root_local)));
    return out;
  };
  auto inter = [&](CollectiveOp op, double bytes, bool root_rail_only) {
    std::vector<CollectiveRequest> out;
    std::size_t root_server = 0;
    for (std::size_t k = 0; k < servers.size(); ++k) {
      if (std::find(servers[k].begin(), servers[k].end(), root_rank) != servers[k].end()) root_server = k;
    }
    for (std::size_t i = 0; i < ppn; ++i) {
      if (root_rail_only && i != root_local) continue;
      std::vector<int> rail;
      for (const auto& s : servers) rail.push_back(s[i]);
      out.push_back(sub(op, rail, bytes, req.inter_algo, static_cast<int>(root_server)));
    }
    return out;
  };
  switch (req.op) {
    case CollectiveOp::AllReduce:
      return {intra(CollectiveOp::ReduceScatter, S), inter(CollectiveOp::AllReduce, shard, false),
              intra(CollectiveOp::AllGather, S)};
    case CollectiveOp::ReduceScatter:
      return {intra(CollectiveOp::ReduceScatter, S), inter(CollectiveOp::ReduceScatter, shard, false)};
    case CollectiveOp::AllGather:
      return {inter(CollectiveOp::AllGather, shard, false), intra(CollectiveOp::AllGather, S)};
    case CollectiveOp::Broadcast:
      return {inter(CollectiveOp::Broadcast, S, true), intra(CollectiveOp::Broadcast, S)};
    case CollectiveOp::Reduce:
      return {intra(CollectiveOp::Reduce, S), inter(CollectiveOp::Reduce, S, true)};
    default: break;
  }
  throw std::invalid_argument(std::string(to_string(req.op)) +
                              " is point-to-point traffic with nothing to reduce or share per node; use --algo direct");
}

HierarchicalCollective::HierarchicalCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener,
                                               std::uint64_t tag, StageMaker maker)
    : CollectiveAlgorithm(ctx, std::move(plan), listener, tag),
      maker_(std::move(maker)),
      stages_(hierarchical_stages(ctx_.topo, plan_.request)) {}

void HierarchicalCollective::begin() { start_stage(0); }

void HierarchicalCollective::start_stage(std::size_t s) {
  stage_ = s;
  for (auto& done : running_) finished_.push_back(std::move(done));
  running_.clear();
  pending_ = stages_[s].size();
  for (const CollectiveRequest& r : stages_[s]) running_.push_back(maker_(r, this));
  for (auto& a : running_) a->start();
}

void HierarchicalCollective::on_collective_done(std::uint64_t) {
  CLUSTERSIM_CHECK(pending_ > 0, "a stage finishes once");
  if (--pending_ > 0) return;
  if (stage_ + 1 < stages_.size()) {
    start_stage(stage_ + 1);
  } else {
    finish();
  }
}

std::uint64_t HierarchicalCollective::transfers_issued() const {
  std::uint64_t t = 0;
  for (const auto& a : running_) t += a->transfers_issued();
  for (const auto& a : finished_) t += a->transfers_issued();
  return t;
}

}  // namespace clustersim::workloads
