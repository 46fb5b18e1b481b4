// Topology reports for people and scripts: an nvidia-smi-style matrix, Graphviz and JSON.
//
// All three are pure functions of an immutable Topology (and its Router for path types) and print
// in device/link id order, so the same cluster always gives byte-identical text.
#pragma once

#include <string>

#include "topology/routing.h"
#include "topology/topology.h"

namespace clustersim::analysis {

// `nvidia-smi topo -m` layout: GPU0.. and NIC0.. columns, one row per GPU and NIC, a NUMA affinity
// column (the GPU's socket) and nvidia-smi's legend. Clusters larger than kMatrixMaxGpus show the
// first two servers only (enough to see NET), with a note saying so.
inline constexpr int kMatrixMaxGpus = 64;
std::string topo_matrix(const topology::Topology& topo, const topology::Router& router);

// Graphviz (undirected; one edge per duplex link, labelled with its per-direction rate), one
// `cluster_*` subgraph per server, fabric switches outside.
std::string topo_dot(const topology::Topology& topo);

// {"servers", "gpus_per_server", "gpus": [device ids by rank], "nodes": [{id, kind, name, server,
// local_index, tier}], "links": [{id, src, dst, kind, bandwidth_Bps, latency_s, nvlinks}]}; every
// directed link is listed (ids match LinkId; a duplex cable is ids 2k and 2k+1).
std::string topo_json(const topology::Topology& topo);

}  // namespace clustersim::analysis
