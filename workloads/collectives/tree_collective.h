// Tree collectives as NCCL builds them: all-reduce on a double binary tree, pipelined in chunks;
// also broadcast (down only) and reduce (up only) on one binary tree rooted at the root.
//
// The tree spans servers (a binary tree of servers, NCCL's ncclGetBtree), and inside each server
// a chain from the server's head GPU through its other GPUs. All-reduce: every chunk is reduced
// up the tree (a GPU forwards chunk c once it has chunk c from every child) and broadcast back
// down from the root, so the up and down halves overlap in a pipeline. Channels split the buffer;
// even channels use the first tree, odd channels the second tree of NCCL's double binary tree
// (ncclGetDtree: the mirror image for an even server count, shifted by one for an odd count), so
// a server that is a leaf in one tree is an inner node in the other and both halves of the data
// keep every NIC busy. Inside each server the chain starts at a GPU rotated by the channel index,
// as the ring's channels do. At most NCCL_STEPS chunks are in flight per edge and direction.
#pragma once

#include <array>
#include <vector>

#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

// NCCL's binary tree over m positions (src/graph/trees.cc ncclGetBtree): the parent of q, -1 at
// the root (position 0). `second` gives the second tree of the double binary tree.
int btree_parent(int q, int m, bool second = false);

class TreeCollective final : public CollectiveAlgorithm {
 public:
  static constexpr int kMaxChildren = 4;
  TreeCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag);

  void on_transfer_done(std::uint64_t tag) override;
  // The parent (global GPU rank, -1 at the root) of global GPU rank `rank` in channel `ch`.
  int parent_of(int ch, int rank) const;

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
    std::array<std::uint32_t, kMaxChildren> down_in_flight{};
    std::uint32_t up_sent = 0;
    std::uint32_t up_in_flight = 0;
    std::uint32_t down_recv = 0;
    bool done = false;
  };
  void begin() override;
  void build_channel(int ch);
  void try_send(std::size_t i);
  std::uint32_t have_up(const Node& node) const;
  std::uint32_t have_down(const Node& node) const;
  void check_done(std::size_t i);

  int n_;
  bool up_phase_;
  bool down_phase_;
  std::uint32_t pieces_;
  sim::Bytes piece_bytes_;
  std::vector<Node> nodes_;                  // [ch * n + index]
  std::vector<topology::Route> up_routes_;   // node -> parent
  std::vector<sim::SimTime> up_overheads_;
  std::vector<topology::Route> down_routes_; // [node * kMaxChildren + slot]
  std::vector<sim::SimTime> down_overheads_;
  std::size_t complete_ = 0;
  std::size_t needed_ = 0;
};

}  // namespace clustersim::workloads
