// Symmetries of the cluster that routing respects: a relabelling φ of devices, with σ of links,
// under which the graph and every route are unchanged. Rank folding (workloads/collectives/
// rank_folding.h) simulates one representative of each class of ranks that such a symmetry
// permutes; this file is where the symmetry is proved, cheaply (per device and per link, never per
// route: a 4,096-rank all-pairs collective has 16.7 M routes).
//
// What is checked, and why it is enough. φ is grown from the requested GPU pairs along out-links:
// an out-link of u to a device already mapped maps to the out-link of φ(u) to its image, the
// others pair in order with φ(u)'s out-links to devices not yet images. It must end a bijection
// of all devices that keeps each device's kind and tier (and a server device's local index) and
// maps servers to servers (one server's devices to one server's), and σ must keep every link's
// kind, bandwidth, latency, lane count and its duplex partner (σ(reverse l) = reverse σ(l)). Then
// σ is a graph automorphism that keeps every hop-distance table of the Router (breadth-first
// distances, server membership and device kinds are all kept) and so every set of downhill next
// hops. The Router chooses among several next hops by the flow key's hash (which no relabelling
// keeps) or, in a destination-routed fabric, as the i-th in out-link order with i the destination
// NIC's port; so the check also requires that no route depends on its flow key (Router::key_free:
// a single downhill hop wherever a hash would choose), that φ keeps every NIC's destination port
// and σ the out-link order of every switch that has such a choice, and that φ maps each GPU's NIC
// to its image's NIC. Then, by induction over the hops of a walk, route(φ a, φ b, k) =
// σ(route(a, b, k')) for every pair of GPU ranks and any keys k, k'
// (tests/topology/symmetry_test.cpp checks it on every pair of a small fat-tree).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "topology/routing.h"
#include "topology/topology.h"

namespace clustersim::topology {

struct Automorphism {
  std::vector<DeviceId> device;  // φ, over every device
  std::vector<LinkId> link;      // σ, over every link
};

// The automorphism that maps GPU rank from[i] to GPU rank to[i] for every i and commutes with
// `router` as described above, or nullopt when there is none (or it cannot be proved this way).
// O(devices + links) plus Router::key_free.
std::optional<Automorphism> routing_automorphism(const Topology& topo, const Router& router, std::span<const int> from,
                                                 std::span<const int> to);

}  // namespace clustersim::topology
