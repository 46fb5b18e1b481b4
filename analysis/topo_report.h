// Topology reports for people and scripts: an nvidia-smi-style matrix, Graphviz and JSON.
//
// All three are pure functions of an immutable Topology (and its Router for path types) and print
// in device/link id order, so the same cluster always gives byte-identical text.
#pragma once

#include <string>

#include "topology/catalog.h"
#include "topology/routing.h"
#include "topology/topology.h"

namespace clustersim::analysis {

// `nvidia-smi topo -m` layout: GPU0.. and NIC0.. columns, one row per GPU and NIC; on GPU rows the
// CPU Affinity (the logical CPUs of the GPU's socket, from the node's cores and threads per core),
// NUMA Affinity (its socket) and GPU NUMA ID (N/A: discrete GPU memory is no NUMA node) columns;
// nvidia-smi's legend. With the node's description, PCIe cells read as on the real machine: PXB
// between a GPU and a NIC below cascaded switches, NODE between switches on separate host bridges
// of one socket (without it: PIX / PHB as the PCIe tree alone gives). Clusters larger than
// kMatrixMaxGpus show the first two servers only (enough to see NET), with a note saying so;
// `cluster_servers` / `cluster_gpus` (when > 0) are the whole cluster's counts for that note, for
// callers that build only the servers shown.
inline constexpr int kMatrixMaxGpus = 64;
std::string topo_matrix(const topology::Topology& topo, const topology::Router& router,
                        const topology::NodeSpec* node = nullptr, long long cluster_servers = 0,
                        long long cluster_gpus = 0);

// Graphviz (undirected; one edge per duplex link, labelled with its per-direction rate), one
// `cluster_*` subgraph per server, fabric switches outside.
std::string topo_dot(const topology::Topology& topo);

// {"servers", "gpus_per_server", "gpus": [device ids by rank], "nodes": [{id, kind, name, server,
// local_index, tier}], "links": [{id, src, dst, kind, bandwidth_Bps, latency_s, nvlinks}]}; every
// directed link is listed (ids match LinkId; a duplex cable is ids 2k and 2k+1).
std::string topo_json(const topology::Topology& topo);

}  // namespace clustersim::analysis
