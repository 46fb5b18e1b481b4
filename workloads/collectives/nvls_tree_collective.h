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
// The heads' budget across domains: NCCL's NVLS graph (search.cc ncclTopoSearchRecNet) gives each
// head one search channel and reserves bwInter of its NIC for it; NCCL's cost model charges the
// tree at that rate (tuning.cc). Each head has a virtual link per direction of that capacity
// (plan.nvls_head_rate, NetworkModel::add_virtual_link) which every flow it sends, or receives,
// across domains crosses, so the max-min solver holds a head to its budget however many chunks and
// tree edges it has in flight: an inner domain of a 3+-domain tree passes 2 S per direction through
// its heads and so runs at half the rate of two domains, as NCCL's model halves bwInter beyond 2 nodes.
// Each head's connection along a tree edge is FIFO (nccl::kPipelineInFlight chunks at once, in
// chunk order), as every other pipeline here: one NCCL channel sends its steps in order.
// Symmetry folding (a collective alone on its network: CollectivePlan::fold_channels without
// shares_links). Where every member's NVLink route and every head's set of routes across domains
// cross links that nothing else of the collective crosses, the max-min problem splits into one
// independent part per member and one per head index h (head h of every domain, with its virtual
// links). A domain's members then run one and the same part (their routes differ only by a
// relabelling that keeps bandwidths, with equal latencies: checked), and so do heads 0 and h when
// one bijection σ_h of links maps every route of head 0 onto head h's, hop by hop, keeping
// bandwidths and route latencies (checked). The solver's canonical filling gives corresponding
// flows of isomorphic independent parts the same rates bit for bit (sim/fair_share.h), so by
// induction over events every member of a domain, and every head, moves in lockstep: one member
// per domain and head 0 are simulated, each arrival counting for its copies (exact to the
// picosecond: ctest workloads::NvlsTreeCollective folding). Each folded flow stands for copies on
// private links, so it needs no fold weight. Shared links anywhere (a spine two heads cross, a
// link a head and a member cross) and the collective runs unfolded.
// Chunks: NCCL's NVLSTree loop (channels x heads x chunk, nccl::nvls_tree_chunk_bytes), chosen by
// the runner. NCCL's NVLSTree latency (hwLat NVLINK 25 us + 2 log2(nodes) x NET 20.9 us) is paid
// once, at launch.
#pragma once

#include <array>
#include <vector>

#include "workloads/collectives/collective_algorithm.h"
#include "workloads/collectives/transfer_tag.h"

namespace clustersim::workloads {

class NvlsTreeCollective final : public CollectiveAlgorithm {
 public:
  NvlsTreeCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag);

  void on_transfer_done(std::uint64_t tag) override;
  int domains() const { return static_cast<int>(domains_.size()); }
  int heads() const { return heads_; }
  // Symmetry folding (see the header comment): one member per domain, head 0 for every head.
  bool members_folded() const { return fold_members_; }
  bool heads_folded() const { return sim_heads_ < heads_; }
  std::uint64_t transfers_issued() const override { return CollectiveAlgorithm::transfers_issued() + folded_transfers_; }
  // Head h (< simulated heads) of domain d's virtual link, sending (tx) or receiving; none without
  // a head rate.
  bool has_head_links() const { return !head_links_.empty(); }
  topology::VirtualLinkId head_link(int d, int h, bool tx) const {
    return head_links_[(static_cast<std::size_t>(d) * static_cast<std::size_t>(sim_heads_) + static_cast<std::size_t>(h)) * 2 + (tx ? 0 : 1)];
  }

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
  // One head's connection along one tree edge and direction: the next chunk it sends (chunks of
  // its tree only) and how many are in flight.
  struct EdgeHead {
    std::uint32_t next = 0;
    std::uint32_t in_flight = 0;
  };
  enum Kind : std::uint64_t { kMemberUp = 0, kTreeUp = 1, kTreeDown = 2, kMemberDown = 3 };
  static std::uint64_t encode(Kind k, std::size_t id, std::uint32_t chunk) { return TransferTag::encode(k, id, chunk); }
  void build_trees();
  // Decides fold_members_ and sim_heads_ (see the header comment).
  void fold();
  // The arrivals one simulated transfer stands for.
  int member_copies(std::size_t d) const { return fold_members_ ? static_cast<int>(domains_[d].members.size()) : 1; }
  int head_copies() const { return heads_ / sim_heads_; }
  void begin() override;
  void try_send(std::size_t m);
  void reduced_part(std::size_t d, std::uint32_t chunk, int parts);
  void result_down(std::size_t d, std::uint32_t chunk);
  // Edge of child domain c in tree t, up (c to its parent) or down: index into edge_heads_ / heads_.
  std::size_t edge(std::size_t t, std::size_t c, bool up) const { return ((t * domains_.size() + c) * 2) + (up ? 0 : 1); }
  // Sends what head h may send along edge e now: ready chunks, in order, within the window.
  void pump(std::size_t e, int h);
  // Sends a head's share from head h of domain `from` to head h of domain `to` along r.
  void send_head(const topology::Route& r, int from, int to, int h, std::uint64_t tag);
  // Gives the head links back once the last transfer landed (a collective destroyed in flight
  // keeps them: its flows may still run).
  void release_head_links();

  int n_;
  int heads_ = 1;
  int sim_heads_ = 1;          // heads simulated: heads_, or 1 when folded
  bool fold_members_ = false;  // one member per domain simulated
  std::uint64_t folded_transfers_ = 0;  // transfers the folded members and heads stand for
  std::uint32_t pieces_;
  double nvlink_bytes_ = 0;   // per GPU and chunk, each way, on the wire
  double head_bytes_ = 0;     // per head and chunk across the network
  std::vector<Member> members_;
  std::vector<Domain> domains_;
  std::vector<int> up_arrivals_;    // [domain * pieces + chunk]: members' data and children's sums
  std::vector<int> down_arrivals_;  // [domain * pieces + chunk]: the parent's heads
  std::vector<std::uint8_t> summed_;      // [domain * pieces + chunk]: the domain's partial sum is complete
  std::vector<std::uint8_t> has_result_;  // [domain * pieces + chunk]: the domain holds the result
  std::vector<EdgeHead> edge_heads_;      // [edge * heads + head]
  int complete_ = 0;
  std::vector<topology::VirtualLinkId> head_links_;  // see head_link()
};

}  // namespace clustersim::workloads
