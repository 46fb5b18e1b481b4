// Tree collectives as NCCL builds them: all-reduce on a double binary tree, pipelined in chunks;
// also broadcast (down only) and reduce (up only) on one binary tree rooted at the root.
//
// The tree spans servers (a binary tree of servers, NCCL's ncclGetBtree), and inside each server
// a chain from the server's head GPU through its other GPUs. All-reduce: every chunk is reduced
// up the tree (a GPU forwards chunk c once it has chunk c from every child) and broadcast back
// down from the root, so the up and down halves overlap in a pipeline.
//
// Channels and NICs as NCCL's connectTrees lays them out: channel c and channel c + C/2 (C the
// channels of NCCL's graph) share one intra-node chain, hence one head GPU and one NIC; the first
// half runs the first tree, the second half the second tree of the double binary tree
// (ncclGetDtree: the mirror image for an even server count, shifted by one for an odd count). A
// server that is an inner node of one tree is a leaf of the other, so every NIC carries one
// channel of each tree and the load per NIC is the same on every server. Chains of successive
// channel pairs start at GPUs rotated by the pair index, as the ring's channels do, so the pairs
// leave through different NICs.
//
// A connection (one edge, one direction, one channel) is one thread block copying its chunks in
// order: chunks stream back to back, one at a time, and each is handed to the receiver one step
// latency (NCCL's hwLat for the link class, at least the route's physical latency) after its last
// byte left, so the step latency of one chunk overlaps the streaming of the next, as NCCL's
// NCCL_STEPS buffer slots allow; at most NCCL_STEPS chunks are sent and not yet handed over.
// Chunk sizes follow NCCL's enqueue.cc rules per protocol (tree_chunk_bytes).
//
// Channel folding (channel_folding.h), all-reduce only: the unit that repeats is a chain pair
// (channel c of the first tree and channel c + C/2 of the second, on one chain and NIC); pair c + 1
// is pair c with every server's GPUs and rails rotated by one. When the plan allows folding and
// the routes prove the pairs symmetric (and their trees have the same shape), only pair 0 is
// simulated, its flows weighted for the other pairs.
//
// Where the pairs do not fold (GB200 NVL72: 16 chains over 72 GPUs start 4 GPUs apart, and no
// relabelling of a rack's links maps the set of chains onto itself, docs/benchmarks.md), the only
// symmetry left is the mirror: for an even server count the second tree is the first with server q
// and server m - 1 - q swapped, and channel c + C/2 runs channel c's chain, so the second half is
// the first with every server's links mapped onto its mirror's. When the routes prove it, the
// first half alone is simulated (C/2 channels), its flows weighted for the second.
#pragma once

#include <array>
#include <vector>

#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

// NCCL's binary tree over m positions (src/graph/trees.cc ncclGetBtree): the parent of q, -1 at
// the root (position 0). `second` gives the second tree of the double binary tree.
int btree_parent(int q, int m, bool second = false);

// NCCL's chunk size (payload bytes) for a tree all-reduce of `per_channel` bytes per channel
// (src/enqueue.cc computeColl): one step of the protocol's buffer (Simple 512 KiB, LL128
// 576,000 = 4,915,200 / NCCL_STEPS x 120/128, LL 32 KiB = 64 KiB of lines / 2), then halved
// while the channel would have too few chunks to fill the tree's pipeline: Simple against the
// tree depth (ppn - 1 + log2 nodes) x 8, x 4, x 1 down to 128, 64, 32 KiB; LL128 against
// (1 + log2 nodes + 0.1 ppn) x 64 / ppn and x 16 / ppn down to 128 and 32 KiB.
double tree_chunk_bytes(Protocol p, double per_channel, int ppn, int nodes);

class TreeCollective final : public CollectiveAlgorithm {
 public:
  static constexpr int kMaxChildren = 4;
  TreeCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag);

  void on_transfer_done(std::uint64_t tag) override;
  void on_event(std::uint64_t tag) override;
  // The parent (global GPU rank, -1 at the root) of global GPU rank `rank` in channel `ch`.
  int parent_of(int ch, int rank) const;
  bool flow_routes(FlowRoutes& out) const override;
  // Channels simulated: 2 (one chain pair) when the pairs fold, half the plan's when only the
  // mirror folds, else the plan's.
  int simulated_channels() const { return static_cast<int>(nodes_.size()) / n_; }
  // Transfers the collective stands for (a folded flow counts once per copy it stands for).
  std::uint64_t transfers_issued() const override { return CollectiveAlgorithm::transfers_issued() * folded_copies_; }
  // Exactly the transfers simulated: every edge of every simulated channel carries each chunk once
  // per phase (up for all-reduce and reduce, down for all-reduce and broadcast).
  std::uint64_t simulated_transfers_at_least() const override;

 protected:
  nccl::NcclAlgo nccl_algo() const override { return nccl::NcclAlgo::Tree; }

 private:
  struct Node {
    int rank = -1;
    int parent = -1;  // index within the channel, -1 at the root
    int slot = 0;     // index among the parent's children
    int nchildren = 0;
    std::array<int, kMaxChildren> children{};
    std::array<std::uint32_t, kMaxChildren> up_recv{};
    std::array<std::uint32_t, kMaxChildren> down_sent{};
    std::array<std::uint32_t, kMaxChildren> down_streaming{};
    std::array<std::uint32_t, kMaxChildren> down_unread{};
    std::uint32_t up_sent = 0;
    std::uint32_t up_streaming = 0;  // 0 or 1: a connection streams one chunk at a time
    std::uint32_t up_unread = 0;     // sent, not yet handed to the receiver (<= NCCL_STEPS)
    std::uint32_t down_recv = 0;
    bool done = false;
  };
  void begin() override;
  void build_channel(int ch);
  void try_send(std::size_t i);
  std::uint32_t have_up(const Node& node) const;
  std::uint32_t have_down(const Node& node) const;
  void check_done(std::size_t i);
  void deliver(std::uint64_t tag);
  int chain_pairs() const;
  void fold();
  void fold_mirror();

  int n_;
  bool up_phase_;
  bool down_phase_;
  std::uint32_t pieces_;
  sim::Bytes piece_bytes_;
  std::vector<Node> nodes_;                  // [ch * n + index]
  int graph_channels_;                       // channels of NCCL's graph (C above)
  std::vector<topology::Route> up_routes_;   // node -> parent, streamed without latency
  std::vector<sim::SimTime> up_latency_;     // step latency before the parent may use a chunk
  std::vector<topology::Route> down_routes_; // [node * kMaxChildren + slot]
  std::vector<sim::SimTime> down_latency_;
  std::vector<topology::HopWeights> up_weights_;    // per up route, when folded
  std::vector<topology::HopWeights> down_weights_;  // per down route, when folded
  std::uint64_t folded_copies_ = 1;          // chain pairs, or 2 for the mirror
  std::size_t complete_ = 0;
  std::size_t needed_ = 0;
};

}  // namespace clustersim::workloads
