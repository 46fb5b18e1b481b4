// Stage composition for hierarchical collectives (see hierarchical_collective.h).
#include "workloads/collectives/hierarchical_collective.h"

#include <algorithm>
#include <cmath>
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
                                std::to_string(req.ranks.size()) + " GPUs are on one node; use ring, tree or auto");
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

int hierarchical_pipeline_chunks(sim::Bytes bytes) {
  const double slices = std::floor(bytes.value / kHierarchicalSliceBytes);
  return static_cast<int>(std::clamp(slices, 1.0, static_cast<double>(kHierarchicalMaxSlices)));
}

HierarchicalCollective::HierarchicalCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener,
                                               std::uint64_t tag, StageMaker maker)
    : CollectiveAlgorithm(ctx, std::move(plan), listener, tag),
      maker_(std::move(maker)),
      stages_(hierarchical_stages(ctx_.topo, plan_.request)),
      slices_(static_cast<std::size_t>(hierarchical_pipeline_chunks(plan_.request.bytes))) {
  CollectiveRequest slice = plan_.request;
  slice.bytes = plan_.request.bytes / static_cast<double>(slices_.size());
  slice_stages_ = hierarchical_stages(ctx_.topo, slice);
  CLUSTERSIM_CHECK(slice_stages_.size() == stages_.size(), "a slice has the stages of the whole buffer");
  for (std::size_t k = 0; k < slices_.size(); ++k) {
    slices_[k].listener.owner = this;
    slices_[k].listener.slice = k;
  }
  waiting_.resize(stages_.size());
  busy_.assign(stages_.size(), 0);
}

void HierarchicalCollective::begin() {
  for (std::size_t k = 0; k < slices_.size(); ++k) waiting_[0].push_back(k);
  admit();
}

// Later stages first, so a slice leaving a stage is followed into it by the next one at once. One
// slice per stage per call: slices that became ready together enter one completion apart, so the
// two in a stage are staggered and one's step latencies overlap the other's transfers.
void HierarchicalCollective::admit() {
  for (std::size_t s = stages_.size(); s-- > 0;) {
    if (busy_[s] < kHierarchicalSlicesPerStage && !waiting_[s].empty()) {
      const std::size_t k = waiting_[s].front();
      waiting_[s].pop_front();
      ++busy_[s];
      start_stage(k);
    }
  }
}

void HierarchicalCollective::start_stage(std::size_t k) {
  Slice& slice = slices_[k];
  const auto& groups = slice_stages_[slice.stage];
  slice.pending = groups.size();
  const std::size_t first = started_.size();
  for (const CollectiveRequest& r : groups) started_.push_back(maker_(r, &slice.listener));
  for (std::size_t i = first; i < started_.size(); ++i) started_[i]->start();
}

void HierarchicalCollective::on_slice_stage_done(std::size_t k) {
  Slice& slice = slices_[k];
  CLUSTERSIM_CHECK(slice.pending > 0, "a slice's stage finishes once");
  if (--slice.pending > 0) return;
  --busy_[slice.stage];
  if (++slice.stage < stages_.size()) {
    waiting_[slice.stage].push_back(k);
  } else {
    ++slices_done_;
  }
  if (slices_done_ == slices_.size()) {
    finish();
    return;
  }
  admit();
}

std::uint64_t HierarchicalCollective::transfers_issued() const {
  std::uint64_t t = 0;
  for (const auto& a : started_) t += a->transfers_issued();
  return t;
}

}  // namespace clustersim::workloads
