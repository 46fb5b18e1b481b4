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
// The inter-node stage is a ring, a tree or in-network (SHARP) as `inter_algo` says. A stage
// starts when the previous one has finished everywhere: every group of the next stage needs a
// piece from every server (all-reduce) or every rail, so this barrier is what the data requires.
// Stages are full collectives (their own channels, chunks and protocol) built by the runner.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "workloads/collective_algorithm.h"

namespace clustersim::workloads {

class HierarchicalCollective final : public CollectiveAlgorithm, public CollectiveListener {
 public:
  // Builds one stage's collective for a sub-request; the result must not pay the launch latency.
  using StageMaker = std::function<std::unique_ptr<CollectiveAlgorithm>(const CollectiveRequest&, CollectiveListener*)>;

  HierarchicalCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag,
                         StageMaker maker);

  void on_transfer_done(std::uint64_t) override {}
  void on_collective_done(std::uint64_t tag) override;
  std::uint64_t transfers_issued() const override;
  // The stages' requests, for --explain and tests: stage -> groups.
  const std::vector<std::vector<CollectiveRequest>>& stages() const { return stages_; }

 private:
  void begin() override;
  void start_stage(std::size_t s);

  StageMaker maker_;
  std::vector<std::vector<CollectiveRequest>> stages_;
  std::vector<std::unique_ptr<CollectiveAlgorithm>> running_;
  std::vector<std::unique_ptr<CollectiveAlgorithm>> finished_;
  std::size_t stage_ = 0;
  std::size_t pending_ = 0;
};

// The hierarchical stages of a request (empty stages dropped); throws std::invalid_argument when
// the group is on one server or has one GPU per server (nothing to split).
std::vector<std::vector<CollectiveRequest>> hierarchical_stages(const topology::Topology& topo, const CollectiveRequest& req);

}  // namespace clustersim::workloads
