// Collective operations, algorithms and NCCL protocols: names, parsing and nccl-tests' factors.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/units.h"

namespace clustersim::workloads {

enum class CollectiveOp : std::uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };
enum class CollectiveAlgo : std::uint8_t { Ring, Tree, HalvingDoubling, Hierarchical, Direct, InNetwork, Auto };
// NCCL's protocols: LL (8-byte lines, 4 bytes of data + 4 of flag), LL128 (128-byte lines with
// 120 bytes of data), Simple (bulk copies with a fence per step).
enum class Protocol : std::uint8_t { LL, LL128, Simple };

std::string_view to_string(CollectiveOp op);   // nccl-tests names without "_": "allreduce", …
std::string_view to_string(CollectiveAlgo a);  // "ring", "tree", "halving-doubling", …
std::string_view to_string(Protocol p);        // "LL", "LL128", "Simple"
std::optional<CollectiveOp> parse_op(std::string_view s);
std::optional<CollectiveAlgo> parse_algo(std::string_view s);
std::optional<Protocol> parse_protocol(std::string_view s);
std::vector<std::string_view> op_names();
std::vector<std::string_view> algo_names();

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
};

}  // namespace clustersim::workloads
