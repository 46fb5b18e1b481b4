// Link traffic over time: an iteration's LinkTraffic records (pipeline flows, collectives spread
// evenly over their spans) binned on a regular time grid, per link that carried bytes. Used by the
// Chrome trace's link counters, `--dmon`'s NVLink/PCIe throughput and the HTML report's link
// utilisation. Bytes are conserved: a record's bytes are split over the bins its span overlaps in
// proportion to the overlap (a zero-length span goes into the bin of its start).
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"
#include "workloads/training/iteration_sim.h"

namespace clustersim::analysis {

struct LinkSeries {
  topology::LinkId link = 0;
  std::string name;             // "node3/nic2 -> leaf0"
  topology::LinkKind kind = topology::LinkKind::Network;
  double capacity_Bps = 0;      // bytes/s, one direction
  double total_bytes = 0;
  std::vector<double> bytes;    // per bin
  // Average utilisation over `duration_s`: total_bytes / (capacity x duration).
  double utilisation(double duration_s) const {
    return capacity_Bps > 0 && duration_s > 0 ? total_bytes / (capacity_Bps * duration_s) : 0.0;
  }
};

struct LinkTrafficGrid {
  double bin_s = 0;
  int bins = 0;
  std::vector<LinkSeries> links;  // links that carried traffic, in link id order
  std::vector<int> index;         // [link id] -> position in `links`, or -1
  const LinkSeries* find(topology::LinkId l) const {
    return l < index.size() && index[l] >= 0 ? &links[static_cast<std::size_t>(index[l])] : nullptr;
  }
};

// Bins [0, bins x bin_s) of the iteration's traffic (records past the end go into the last bin).
LinkTrafficGrid link_traffic_grid(const workloads::IterationResult& it, const topology::Topology& topo, double bin_s,
                                  int bins);

std::string link_name(const topology::Topology& topo, topology::LinkId l);

}  // namespace clustersim::analysis
