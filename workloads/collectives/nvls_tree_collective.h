// NCCL's NVLSTree all-reduce: NVLS (NVLink SHARP) inside each NVLink domain, a tree between the
// domains over the NICs. It is what NCCL runs for a large all-reduce across GB200 NVL72 racks (or
// DGX H100 nodes) when CollNet/SHARP is off, which is NCCL's default (tuning.cc disables NVLS across
// nodes without CollNet and NVLSTree on one node).
//
// Mechanism (NCCL src/device/all_reduce.h, RunWorkColl<..., NCCL_ALGO_NVLS_TREE, ...>), per chunk c of
// the buffer, pipelined chunk after chunk:
//   1. every GPU of a domain sends c to its NVLink switch, which reduces it (multimem.ld_reduce
//      issued by the domain's NVLS heads, h = min(32, GPUs) of them: NCCL_MAX_NVLS_ARITY);
//   2. the heads carry the domain's partial sum up a binary tree of domains, head i to head i of
//      the parent domain over its own NIC (c/h bytes each); a parent adds its children's sums;
//   3. the root's result comes down the same tree and each domain's heads multicast it through the
//      switch to every GPU (multimem.st).
// NVLink bytes per GPU and chunk are c(1 + 1/h) each way (the GPU's data plus a head's share), at
// nvlsEfficiency of the link rate, as in in_network_collective.h. NCCL builds two trees and gives
// half of the channels to each (connect.cc connectNvls: treeUp[c % 2]); here even chunks take
// tree 0 (domain order) and odd chunks its mirror (reverse order), so that with two domains each
// one is the root of half the chunks and both directions of every NIC carry data.
// Chunks: NCCL's NVLSTree loop (channels x heads x chunk, nccl::nvls_tree_chunk_bytes), chosen by
// the runner. NCCL's NVLSTree latency (hwLat NVLINK 25 us + 2 log2(nodes) x NET 20.9 us) is paid
// once, at launch.
#pragma once

#include <array>
#include <vector>

#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

class NvlsTreeCollective final : public CollectiveAlgorithm {
 public:
  NvlsTreeCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag);

  void on_transfer_done(std::uint64_t tag) override;
  int domains() const { return static_cast<int>(domains_.size()); }
  int heads() const { return heads_; }

 protected:
  nccl::NcclAlgo nccl_algo() const override { return nccl::NcclAlgo::NvlsTree; }
  double launch_latency_us() const override;

 private:
  struct Member {
    topology::Route up;
    topology::Route down;
    int domain = 0;
    std::uint32_t up_sent = 0;
    std::uint32_t up_in_flight = 0;
    std::uint32_t down_recv = 0;
  };
  struct Domain {
    std::vector<int> members;                  // indices into members_
    std::array<int, 2> parent{-1, -1};         // per tree
    std::array<std::vector<int>, 2> children;  // per tree
    std::array<std::vector<topology::Route>, 2> to_parent;  // head i -> parent's head i, per tree
  };
  enum Kind : std::uint64_t { kMemberUp = 0, kTreeUp = 1, kTreeDown = 2, kMemberDown = 3 };
  static std::uint64_t encode(Kind k, std::size_t id, std::uint32_t chunk) {
    return (static_cast<std::uint64_t>(k) << 62) | (static_cast<std::uint64_t>(id) << 32) | chunk;
  }
  void build_trees();
  void begin() override;
  void try_send(std::size_t m);
  void reduced_part(std::size_t d, std::uint32_t chunk);
  void result_down(std::size_t d, std::uint32_t chunk);

  int n_;
  int heads_ = 1;
  std::uint32_t pieces_;
  double nvlink_bytes_ = 0;   // per GPU and chunk, each way, on the wire
  double head_bytes_ = 0;     // per head and chunk across the network
  std::vector<Member> members_;
  std::vector<Domain> domains_;
  std::vector<int> up_arrivals_;    // [domain * pieces + chunk]: members' data and children's sums
  std::vector<int> down_arrivals_;  // [domain * pieces + chunk]: the parent's heads
  int complete_ = 0;
};

}  // namespace clustersim::workloads
