// Collective operations, algorithms and NCCL protocols: names and nccl-tests' factors.
// CollectiveAlgo and its names live in workloads/specs.h, which the gradient synchronization shares.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/enum_names.h"
#include "sim/units.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

enum class CollectiveOp : std::uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };
// nccl-tests' names without "_" (what `collective --op` takes); parse with sim::parse.
inline constexpr sim::Choice<CollectiveOp> kCollectiveOpNames[] = {
    {"allreduce", CollectiveOp::AllReduce}, {"allgather", CollectiveOp::AllGather},
    {"reducescatter", CollectiveOp::ReduceScatter}, {"broadcast", CollectiveOp::Broadcast},
    {"reduce", CollectiveOp::Reduce}, {"alltoall", CollectiveOp::AllToAll},
    {"sendrecv", CollectiveOp::SendRecv}};
// NCCL's protocols: LL (8-byte lines, 4 bytes of data + 4 of flag), LL128 (128-byte lines with
// 120 bytes of data), Simple (bulk copies with a fence per step).
enum class Protocol : std::uint8_t { LL, LL128, Simple };
// NCCL_PROTO's spelling (what `collective --proto` takes); parse with sim::parse.
inline constexpr sim::Choice<Protocol> kProtocolNames[] = {
    {"LL", Protocol::LL}, {"LL128", Protocol::LL128}, {"Simple", Protocol::Simple}};

std::string_view to_string(CollectiveOp op);   // sim::name_of(kCollectiveOpNames, op)
std::string_view to_string(CollectiveAlgo a);  // sim::name_of(kCollectiveAlgoNames, a)
std::string_view to_string(Protocol p);        // sim::name_of(kProtocolNames, p)

// nccl-tests' bus-bandwidth factor: busbw = algbw * factor (doc/PERFORMANCE.md of nccl-tests):
// allreduce 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce, sendrecv 1.
double busbw_factor(CollectiveOp op, int n);

// Bytes on the wire per byte of payload for a protocol: LL moves 8 bytes per 4 of data, LL128
// 128 per 120, Simple 1 (NCCL src/device/prims_ll.h, prims_ll128.h; hardware.md §3.6).
double wire_factor(Protocol p);

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::AllReduce;
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  std::vector<int> ranks;          // global GPU ranks taking part, in rank order
  sim::Bytes bytes;                // nccl-tests "size": the buffer size of the operation
  int root = 0;                    // index into ranks (broadcast, reduce); sendrecv: peer offset
  int chunks = 0;                  // pipelining chunks per step; 0 = chosen by size
  int channels = 0;                // parallel rings/trees; 0 = chosen from the topology
  std::optional<Protocol> protocol;// empty = what NCCL's tuner picks for the size
  // hierarchical: the algorithm of the inter-node stage (ring, tree or in-network).
  CollectiveAlgo inter_algo = CollectiveAlgo::Ring;
  // Hierarchical all-to-all (node_alltoall_collective.h): the fraction of the bytes bound for
  // another node's GPUs that crosses the network, once per destination node (MoE token dispatch
  // deduplicated per node, DeepEP); 1 = every copy crosses.
  double remote_share = 1.0;
};

}  // namespace clustersim::workloads
