// The node-deduplicated all-to-all of DeepEP's and HybridEP's normal (throughput) kernels, as
// Megatron-Core's flex token dispatcher runs them (moe_flex_dispatcher_backend "deepep" /
// "hybridep"): a token bound for experts on another node crosses the network once, to the GPU of
// that node with the sender's local index (its rail peer), which forwards it over NVLink to the
// GPUs of its node that hold the experts (DeepEP README, "normal kernels ... NVLink and RDMA
// forwarding"; DeepSeek-V3 technical report §3.2.2). The combine is the mirror image (reduce inside
// the node, then one network transfer per source node) and moves the same bytes the other way.
//
// `CollectiveRequest::bytes` is what the same ranks' all-to-all would carry (S per rank, S/n to
// each peer), and `remote_share` the fraction of the bytes bound for another node's GPUs that
// crosses the network (the dispatcher's distinct remote nodes per token over its remote expert
// copies, workloads/training/moe_node_routing.h; 1 = no deduplication). With n ranks in N nodes of
// g each, rank p sends in total
//   to each GPU of its own node (NVLink)        S/n             (its own tokens' copies)
//   to its rail peer in each other node (net)   share x g S/n   (the deduplicated tokens)
//   to each GPU of its own node (NVLink)        (N-1) S/n       (copies it forwards for the other
//                                                                nodes' senders)
// DeepEP streams this: the forwarding warps pass a chunk on as soon as it lands. Here it is cut
// into K slices run as K + 1 stages of the staged engine (staged_collective.h): in stage s a rank
// sends slice s of its network and own-node traffic and forwards slice s - 1 of what it received,
// so the network and NVLink work overlap but for one slice's fill and drain.
//
// Every node must hold the same number of the ranks (Megatron-Core's expert groups on whole nodes
// do); the runner refuses other groups. Copies to several experts on one GPU are sent once per
// expert, as the alltoall dispatcher does (DeepEP sends a token once per GPU: an upper bound on
// the NVLink bytes).
#pragma once

#include <vector>

#include "workloads/collectives/staged_collective.h"

namespace clustersim::workloads {

// Slices of the streamed pipeline: at most kNodeAllToAllMaxSlices (the fill and drain are then
// <= 1/8 of the run, as kHierarchicalMaxSlices), and none smaller than kNodeAllToAllSliceBytes
// per rail message, so a small dispatch pays few per-stage latencies. DeepEP's own chunks are
// finer (num_max_rdma_chunked_send_tokens tokens of a hidden vector each).
constexpr int kNodeAllToAllMaxSlices = 8;
constexpr double kNodeAllToAllSliceBytes = 256.0 * 1024.0;

class NodeAllToAllSchedule {
 public:
  // node_of[p]: the node (0..N-1) of position p; every node holds the same number of positions.
  // Throws std::invalid_argument otherwise.
  NodeAllToAllSchedule(std::vector<int> node_of, double bytes, double remote_share);
  int stages() const { return slices_ + 1; }
  int sends(int pos, int stage) const;
  StageSend send(int pos, int stage, int i) const;
  int recvs(int pos, int stage) const { return sends(pos, stage); }
  int nodes() const { return nodes_; }
  int per_node() const { return g_; }
  int slices() const { return slices_; }
  // Bytes one rank sends over the network and over NVLink in the whole collective.
  double network_bytes_per_rank() const;
  double nvlink_bytes_per_rank() const;

 private:
  double local_bytes(int stage) const;  // one message to a GPU of the own node in `stage`

  int n_ = 0, nodes_ = 0, g_ = 0, slices_ = 1;
  double b_ = 0, share_ = 1;
  std::vector<int> node_of_, local_of_;
  std::vector<int> members_;  // [node * g + local index] -> position
};

using NodeAllToAllCollective = StagedCollective<NodeAllToAllSchedule>;

}  // namespace clustersim::workloads
