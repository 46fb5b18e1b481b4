// Stage composition for hierarchical collectives (see hierarchical_collective.h).
#include "workloads/collectives/hierarchical_collective.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "sim/check.h"
#include "workloads/collectives/group_folding.h"

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
  for (const auto& groups : slice_stages_) {
    copies_.emplace_back(groups.size(), 1);
    private_.emplace_back(groups.size(), 0);
  }
}

// Union-find root with path halving.
namespace {
std::size_t find_root(std::vector<std::size_t>& parent, std::size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}
}  // namespace

// Builds one slice's groups (never started) for their routes, joins groups that share a link into
// units, and keeps one unit per class of relabellings (see hierarchical_collective.h). Slices
// run the same groups, so one slice's classes hold for all.
void HierarchicalCollective::fold_groups() {
  std::vector<std::size_t> stage_of;
  std::vector<FlowRoutes> flows;
  std::vector<std::vector<double>> shapes;
  for (std::size_t st = 0; st < slice_stages_.size(); ++st) {
    for (const CollectiveRequest& r : slice_stages_[st]) {
      const auto group = maker_(r, nullptr, false);
      flows.emplace_back();
      if (!group->flow_routes(flows.back())) return;
      stage_of.push_back(st);
      shapes.push_back(plan_shape(group->plan()));
    }
  }
  const std::size_t n = flows.size();
  std::vector<std::size_t> parent(n);
  for (std::size_t i = 0; i < n; ++i) parent[i] = i;
  std::vector<std::int64_t> first(ctx_.topo.link_count(), -1);
  for (std::size_t i = 0; i < n; ++i) {
    for (const topology::Route& r : flows[i].routes) {
      for (int k = 0; k < r.hops; ++k) {
        std::int64_t& f = first[r.links[static_cast<std::size_t>(k)]];
        if (f < 0) f = static_cast<std::int64_t>(i);
        parent[find_root(parent, i)] = find_root(parent, static_cast<std::size_t>(f));
      }
    }
  }
  std::vector<FoldUnit> units;
  std::vector<std::size_t> unit_of(n), unit_of_root(n, n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t& u = unit_of_root[find_root(parent, i)];
    if (u == n) {
      u = units.size();
      units.emplace_back();
    }
    unit_of[i] = u;
    FoldUnit& unit = units[u];
    unit.shape.push_back(static_cast<double>(stage_of[i]));
    unit.shape.push_back(static_cast<double>(flows[i].routes.size()));
    unit.shape.insert(unit.shape.end(), shapes[i].begin(), shapes[i].end());
    unit.shape.insert(unit.shape.end(), flows[i].structure.begin(), flows[i].structure.end());
    for (std::size_t k = 0; k < flows[i].routes.size(); ++k)
      unit.flows.add(flows[i].routes[k], flows[i].overheads[k], &flows[i].weights[k]);
  }
  const UnitFolding folding = fold_units(ctx_.topo, units);
  std::vector<int> groups_in(units.size(), 0);
  for (std::size_t i = 0; i < n; ++i) ++groups_in[unit_of[i]];
  std::size_t i = 0;
  for (std::size_t st = 0; st < copies_.size(); ++st) {
    for (std::size_t g = 0; g < copies_[st].size(); ++g, ++i) {
      copies_[st][g] = folding.multiplicity[unit_of[i]];
      private_[st][g] = groups_in[unit_of[i]] == 1 ? 1 : 0;
    }
  }
}

std::size_t HierarchicalCollective::simulated_groups() const {
  std::size_t out = 0;
  for (const auto& groups : copies_) out += static_cast<std::size_t>(std::count_if(groups.begin(), groups.end(), [](int c) { return c > 0; }));
  return out;
}

std::size_t HierarchicalCollective::total_groups() const {
  std::size_t out = 0;
  for (const auto& groups : copies_) out += groups.size();
  return out;
}

void HierarchicalCollective::begin() {
  if (plan_.fold_channels && !plan_.shares_links) fold_groups();
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
  const auto& copies = copies_[slice.stage];
  slice.pending = 0;
  const std::size_t first = started_.size();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (copies[g] == 0) continue;  // folded: its representative's completion stands for it
    started_.push_back(maker_(groups[g], &slice.listener, private_[slice.stage][g] != 0));
    started_copies_.push_back(copies[g]);
    ++slice.pending;
  }
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
  for (std::size_t i = 0; i < started_.size(); ++i) t += started_[i]->transfers_issued() * static_cast<std::uint64_t>(started_copies_[i]);
  return t;
}

}  // namespace clustersim::workloads
