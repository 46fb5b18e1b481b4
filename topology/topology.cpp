#include "topology/topology.h"

#include <algorithm>
#include <utility>

#include "sim/check.h"

namespace clustersim::topology {

std::string_view to_string(PathType p) {
  switch (p) {
    case PathType::Self: return "X";
    case PathType::NvLink: return "NV";
    case PathType::Pix: return "PIX";
    case PathType::Pxb: return "PXB";
    case PathType::Phb: return "PHB";
    case PathType::Node: return "NODE";
    case PathType::Sys: return "SYS";
    case PathType::Net: return "NET";
  }
  return "?";
}

std::string_view to_string(DeviceKind k) {
  switch (k) {
    case DeviceKind::Gpu: return "gpu";
    case DeviceKind::NvSwitch: return "nvswitch";
    case DeviceKind::PcieSwitch: return "pcie-switch";
    case DeviceKind::CpuRootComplex: return "cpu";
    case DeviceKind::Nic: return "nic";
    case DeviceKind::NetworkSwitch: return "switch";
  }
  return "?";
}

std::string_view to_string(LinkKind k) {
  switch (k) {
    case LinkKind::NvLink: return "nvlink";
    case LinkKind::Pcie: return "pcie";
    case LinkKind::CpuInterconnect: return "cpu-link";
    case LinkKind::Network: return "network";
  }
  return "?";
}

std::string_view to_string(FabricRouting r) { return sim::name_of(kFabricRoutingNames, r); }

DeviceId Topology::add_device(Device d) {
  const auto id = static_cast<DeviceId>(devices_.size());
  devices_.push_back(std::move(d));
  out_.emplace_back();
  return id;
}

LinkId Topology::add_duplex(DeviceId a, DeviceId b, LinkKind kind, sim::BytesPerSec bw,
                            sim::SimTime lat, int nvlinks) {
  CLUSTERSIM_CHECK(a < devices_.size() && b < devices_.size() && a != b, "bad link endpoints");
  CLUSTERSIM_CHECK(bw.value > 0, "link bandwidth must be positive");
  const auto ab = static_cast<LinkId>(links_.size());
  links_.push_back(Link{a, b, kind, bw, lat, nvlinks});
  links_.push_back(Link{b, a, kind, bw, lat, nvlinks});
  out_[a].push_back(ab);
  out_[b].push_back(ab + 1);
  return ab;
}

void Topology::set_gpu_layout(int servers, int gpus_per_server, std::vector<DeviceId> gpus) {
  CLUSTERSIM_CHECK(servers >= 1 && gpus_per_server >= 1, "empty GPU layout");
  CLUSTERSIM_CHECK(gpus.size() == static_cast<std::size_t>(servers) * static_cast<std::size_t>(gpus_per_server),
                   "GPU list does not match servers x gpus_per_server");
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    CLUSTERSIM_CHECK(gpus[r] < devices_.size() && devices_[gpus[r]].kind == DeviceKind::Gpu,
                     "GPU layout names a device that is not a GPU");
    CLUSTERSIM_CHECK(devices_[gpus[r]].server == static_cast<int>(r) / gpus_per_server,
                     "GPU rank order must be server-major");
  }
  servers_ = servers;
  gpus_per_server_ = gpus_per_server;
  gpus_ = std::move(gpus);
}

std::optional<LinkKind> widest_link_kind(const Topology& topo, const Route& route) {
  std::optional<LinkKind> widest;
  for (int k = 0; k < route.hops; ++k) {
    const LinkKind kind = topo.link(route.links[static_cast<std::size_t>(k)]).kind;
    widest = widest ? std::max(*widest, kind) : kind;
  }
  return widest;
}

}  // namespace clustersim::topology
