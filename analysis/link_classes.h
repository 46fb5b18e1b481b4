// Links grouped by what they are, for the HTML report's utilisation over time and fabric view:
// NVLink (GPU <-> GPU or NVSwitch), PCIe (GPU/NIC <-> switch <-> root complex), CPU interconnect
// (socket <-> socket), NIC (a server's NIC <-> its leaf or rail switch) and leaf-spine (switch <->
// switch). Per class and time bin: the mean utilisation over all the class's links (bytes carried
// / (their summed one-direction capacity x bin)) and the peak of any one link, so a class whose
// traffic piles onto a few links shows a high peak over a low mean.
#pragma once

#include <string_view>
#include <vector>

#include "analysis/link_traffic.h"
#include "topology/topology.h"

namespace clustersim::analysis {

enum class LinkClass { NvLink, Pcie, CpuInterconnect, Nic, LeafSpine };

std::string_view link_class_name(LinkClass c);  // "NVLink", "PCIe", "CPU interconnect", "NIC", "leaf-spine"
LinkClass link_class(const topology::Topology& topo, topology::LinkId l);

struct LinkClassSeries {
  LinkClass cls = LinkClass::NvLink;
  int links = 0;                  // links of the class in the cluster
  int links_used = 0;             // of those, how many carried traffic
  double capacity_Bps = 0;        // summed one-direction capacity of all its links
  double total_bytes = 0;
  std::vector<double> mean_util;  // per bin, 0..1
  std::vector<double> peak_util;  // per bin, the busiest link's utilisation (may pass 1 where memoised
                                  // collectives are spread evenly over their spans)
  std::vector<const LinkSeries*> busiest;  // links that carried traffic, busiest (average) first
};

// The classes present in `topo`, in LinkClass order, each with the grid's bins.
std::vector<LinkClassSeries> link_class_series(const LinkTrafficGrid& grid, const topology::Topology& topo,
                                               double duration_s);

}  // namespace clustersim::analysis
