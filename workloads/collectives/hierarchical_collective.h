// Hierarchical collectives: the intra-node and inter-node parts run as separate stages, so the
// slow network carries only 1/ppn of the data per GPU and every NIC (rail) works in parallel.
//
//   all-reduce      intra-node ring reduce-scatter (S) -> inter-node all-reduce of S/ppn among
//                   same-index GPUs (one group per local index: rail-aligned) -> intra-node
//                   ring all-gather (S)
//   reduce-scatter  intra-node reduce-scatter (S) -> inter-node reduce-scatter (S/ppn)
//   all-gather      inter-node all-gather (S/ppn) -> intra-node all-gather (S)
//   broadcast       inter-node broadcast among the root's local index -> intra-node broadcast
//   reduce          intra-node reduce to the root's local index -> inter-node reduce
// The inter-node stage is a ring, a tree or in-network (SHARP) as `inter_algo` says. Within one
// slice of the buffer a stage starts when the previous one has finished everywhere: every group of
// the next stage needs a piece from every server (all-reduce) or every rail, so this barrier is
// what the data requires. Stages are full collectives (their own channels, chunks and protocol)
// built by the runner.
//
// Pipelining: the buffer is cut into K equal slices (hierarchical_pipeline_chunks) and each slice
// runs the stages in order, while different slices run different stages at once, as NCCL's
// pipelined hierarchical algorithms do: slice k crosses the network while slice k+1 is reduced
// inside the node and slice k-1 gathered, so at large sizes the time approaches the slowest stage
// (or the busiest link, where stages share one) instead of the sum. Every stage is elementwise
// over the buffer, so slicing is natural for every operation above. Up to two slices occupy a
// stage at once, entering it one stage completion apart: a stage collective's step latencies
// (30 steps of ~14 us for a 16-server ring, ~0.45 ms) leave its links idle, which NCCL hides
// behind its slot-level pipeline; here the second slice's transfers fill that gap. With one slice
// per stage those latencies add up K times; with slices admitted together they run in lockstep
// and hide nothing. Stages that share links (intra reduce-scatter and all-gather on NVLink)
// contend for them in the network model.
//
// Symmetry folding (group_folding.h), when the plan is alone on its network: the groups of all
// stages that share a link form one unit (a server's reduce-scatter and all-gather rings; the
// rails' inter-node groups where their spines meet), and of the units that are relabellings of
// one another (every server's NVLink rings; every rail's all-reduce when rails keep to their own
// leaves and spines) one is simulated and counted for all. Contention between units (rails that
// share a spine, an oversubscribed fabric, flow-hash collisions) merges them into one unit, which
// runs in full. Stage groups fold their channels where the channels cross identical links
// (channel_folding.h, exact whatever else runs); a group that is a unit on its own (a rail's SHARP
// tree) may fold inside itself as if alone: its other flows are its own instances in other slices,
// which fold the same way, so the symmetry it folds holds for all of them together.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

// Slices the hierarchical pipeline cuts `bytes` into. Each slice's stage is a whole collective that
// pays its own per-step latencies (the inter-node ring of 16 servers: 30 steps of ~14 us), so a
// slice is kept at >= 64 MiB, where that latency is small next to the slice's transfer time; and
// 8 slices at most, since the fill and drain (one slice's other stages) is already <= 1/8 of
// the run there. Below 128 MiB there is one slice: the stages run one after another.
constexpr double kHierarchicalSliceBytes = 64.0 * 1048576.0;
constexpr int kHierarchicalMaxSlices = 8;
// Slices a stage may hold at once (see above).
constexpr int kHierarchicalSlicesPerStage = 2;
int hierarchical_pipeline_chunks(sim::Bytes bytes);

class HierarchicalCollective final : public CollectiveAlgorithm {
 public:
  // Builds one stage's collective for a sub-request; the result must not pay the launch latency.
  // `private_links`: no flow but this group's own (its instances in other slices included) crosses
  // its links, so it may fold inside itself as a collective alone on its network does.
  using StageMaker =
      std::function<std::unique_ptr<CollectiveAlgorithm>(const CollectiveRequest&, CollectiveListener*, bool private_links)>;

  HierarchicalCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag,
                         StageMaker maker);

  void on_transfer_done(std::uint64_t) override {}
  std::uint64_t transfers_issued() const override;
  // The stages' requests over the whole buffer, for --explain and tests: stage -> groups.
  const std::vector<std::vector<CollectiveRequest>>& stages() const { return stages_; }
  int slices() const { return static_cast<int>(slices_.size()); }
  // Groups of one slice's stages simulated, and in all (equal when nothing was folded).
  std::size_t simulated_groups() const;
  std::size_t total_groups() const;

 private:
  // Tells the collective which slice's stage ended (stages are built with tag 0).
  struct SliceListener final : CollectiveListener {
    HierarchicalCollective* owner = nullptr;
    std::size_t slice = 0;
    void on_collective_done(std::uint64_t) override { owner->on_slice_stage_done(slice); }
  };
  struct Slice {
    SliceListener listener;
    std::size_t stage = 0;    // the stage it is in or waits for
    std::size_t pending = 0;  // groups of that stage still running
  };

  void begin() override;
  void on_slice_stage_done(std::size_t k);
  void admit();
  void start_stage(std::size_t k);
  void fold_groups();

  StageMaker maker_;
  std::vector<std::vector<CollectiveRequest>> stages_;
  std::vector<std::vector<CollectiveRequest>> slice_stages_;  // the same for one slice
  std::vector<Slice> slices_;
  std::vector<std::deque<std::size_t>> waiting_;  // per stage: slices ready for it, in order
  std::vector<int> busy_;                         // per stage: slices in it
  // Per stage and group: groups it stands for (1 unfolded; 0: folded onto another, not run).
  std::vector<std::vector<int>> copies_;
  std::vector<std::vector<char>> private_;  // per stage and group: a unit of its own (see StageMaker)
  std::vector<std::unique_ptr<CollectiveAlgorithm>> started_;
  std::vector<int> started_copies_;  // per started collective
  std::size_t slices_done_ = 0;
};

// The hierarchical stages of a request (empty stages dropped); throws std::invalid_argument when
// the group is on one server or has one GPU per server (nothing to split).
std::vector<std::vector<CollectiveRequest>> hierarchical_stages(const topology::Topology& topo, const CollectiveRequest& req);

}  // namespace clustersim::workloads
