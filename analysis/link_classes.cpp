// Links grouped by class (see link_classes.h).
#include "analysis/link_classes.h"

#include <algorithm>

namespace clustersim::analysis {

std::string_view link_class_name(LinkClass c) {
  switch (c) {
    case LinkClass::NvLink: return "NVLink";
    case LinkClass::Pcie: return "PCIe";
    case LinkClass::CpuInterconnect: return "CPU interconnect";
    case LinkClass::Nic: return "NIC";
    case LinkClass::LeafSpine: return "leaf-spine";
  }
  return "?";
}

LinkClass link_class(const topology::Topology& topo, topology::LinkId l) {
  const topology::Link& link = topo.link(l);
  switch (link.kind) {
    case topology::LinkKind::NvLink: return LinkClass::NvLink;
    case topology::LinkKind::Pcie: return LinkClass::Pcie;
    case topology::LinkKind::CpuInterconnect: return LinkClass::CpuInterconnect;
    case topology::LinkKind::Network: break;
  }
  const bool nic = topo.device(link.src).kind == topology::DeviceKind::Nic ||
                   topo.device(link.dst).kind == topology::DeviceKind::Nic;
  return nic ? LinkClass::Nic : LinkClass::LeafSpine;
}

std::vector<LinkClassSeries> link_class_series(const LinkTrafficGrid& grid, const topology::Topology& topo,
                                               double duration_s) {
  constexpr int kClasses = 5;
  std::vector<LinkClassSeries> all(kClasses);
  const auto bins = static_cast<std::size_t>(grid.bins);
  for (int c = 0; c < kClasses; ++c) {
    all[static_cast<std::size_t>(c)].cls = static_cast<LinkClass>(c);
    all[static_cast<std::size_t>(c)].mean_util.assign(bins, 0.0);
    all[static_cast<std::size_t>(c)].peak_util.assign(bins, 0.0);
  }
  for (topology::LinkId l = 0; l < topo.link_count(); ++l) {
    LinkClassSeries& s = all[static_cast<std::size_t>(link_class(topo, l))];
    ++s.links;
    s.capacity_Bps += topo.link(l).bandwidth.value;
    const LinkSeries* used = grid.find(l);
    if (used == nullptr) continue;
    ++s.links_used;
    s.total_bytes += used->total_bytes;
    s.busiest.push_back(used);
    for (std::size_t b = 0; b < bins; ++b) {
      s.mean_util[b] += used->bytes[b];  // bytes for now; divided below
      if (used->capacity_Bps > 0 && grid.bin_s > 0)
        s.peak_util[b] = std::max(s.peak_util[b], used->bytes[b] / (used->capacity_Bps * grid.bin_s));
    }
  }
  std::vector<LinkClassSeries> out;
  for (LinkClassSeries& s : all) {
    if (s.links == 0) continue;
    for (double& v : s.mean_util) v = s.capacity_Bps > 0 && grid.bin_s > 0 ? v / (s.capacity_Bps * grid.bin_s) : 0.0;
    std::stable_sort(s.busiest.begin(), s.busiest.end(), [duration_s](const LinkSeries* a, const LinkSeries* b) {
      return a->utilisation(duration_s) > b->utilisation(duration_s);
    });
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace clustersim::analysis
