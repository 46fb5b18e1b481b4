// Router: shortest paths by hop count over three kinds of segment, each with its own tables.
//
// - Server NVLink plane: GPUs joined by NvLink links, forwarding only through NVSwitches.
// - Server PCIe plane: GPUs and NICs joined by Pcie/CpuInterconnect links, forwarding only through
//   PCIe switches and CPU root complexes.
// - Fabric: network switches joined by Network links, from the source NIC's edge switch to the
//   destination NIC's.
// Every link is one half of a duplex pair, so a breadth-first search outwards from a target gives
// every device's distance to it; a route walks downhill, one hop at a time, choosing among equal
// next hops by hash, except in a fabric routed by destination (InfiniBand), where a switch's
// up-port is the destination NIC's port on its edge switch modulo the number of up-ports (see
// FabricRouting).
#include "topology/routing.h"

#include <algorithm>
#include <limits>

#include "sim/check.h"

namespace clustersim::topology {

namespace {
constexpr std::uint8_t kFar = std::numeric_limits<std::uint8_t>::max();
constexpr std::uint32_t kFarFabric = std::numeric_limits<std::uint32_t>::max();
constexpr LinkId kNoLink = std::numeric_limits<LinkId>::max();

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Which of `count` equal next hops a flow takes at `device`.
std::uint32_t pick(std::uint64_t flow_key, DeviceId device, std::uint32_t count) {
  return count <= 1 ? 0 : static_cast<std::uint32_t>(splitmix64(flow_key ^ device) % count);
}
}  // namespace

struct Router::Tables {
  std::vector<std::int32_t> local;          // device -> index among its server's devices; -1: fabric
  std::vector<std::int32_t> endpoint;       // device -> index among its server's GPUs and NICs; -1: other
  std::vector<std::uint32_t> server_size;   // per server: number of devices
  std::vector<std::size_t> server_offset;   // per server: first entry of its rows in pcie / nvlink
  // Rows [endpoint][local]: hop distance from each device of the server to that endpoint.
  std::vector<std::uint8_t> pcie, nvlink;
  std::vector<std::vector<DeviceId>> nics;  // per server: NICs by local index
  std::vector<std::int32_t> switch_slot;    // device -> index among network switches; -1: other
  std::vector<LinkId> nic_uplink;           // NIC device -> its link to its edge switch
  std::vector<std::int32_t> edge_row;       // NIC device -> its edge switch's row in dist_
  std::vector<std::uint32_t> nic_port;      // NIC device -> its port among its edge switch's NICs

  const std::vector<std::uint8_t>& plane(Plane p) const { return p == Plane::Pcie ? pcie : nvlink; }
  std::size_t row_start(int server, DeviceId target) const {
    const auto s = static_cast<std::size_t>(server);
    return server_offset[s] + static_cast<std::size_t>(endpoint[target]) * server_size[s];
  }
  const std::uint8_t* row(Plane p, int server, DeviceId target) const {
    return plane(p).data() + row_start(server, target);
  }
};

namespace {

bool plane_link(bool pcie, LinkKind k) {
  return pcie ? (k == LinkKind::Pcie || k == LinkKind::CpuInterconnect) : k == LinkKind::NvLink;
}
bool plane_transit(bool pcie, DeviceKind k) {
  return pcie ? (k == DeviceKind::PcieSwitch || k == DeviceKind::CpuRootComplex) : k == DeviceKind::NvSwitch;
}
bool is_endpoint(DeviceKind k) { return k == DeviceKind::Gpu || k == DeviceKind::Nic; }

// BFS outwards from `target` inside one server's plane; endpoints other than the target are
// reached but never expanded (a GPU or NIC does not forward).
void bfs_server(const Topology& topo, const std::vector<std::int32_t>& local, bool pcie, DeviceId target,
                std::uint8_t* row, std::vector<DeviceId>& queue) {
  const int server = topo.device(target).server;
  queue.clear();
  queue.push_back(target);
  row[local[target]] = 0;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const DeviceId u = queue[head];
    if (u != target && !plane_transit(pcie, topo.device(u).kind)) continue;
    for (const LinkId l : topo.out_links(u)) {
      const Link& link = topo.link(l);
      const Device& v = topo.device(link.dst);
      if (!plane_link(pcie, link.kind) || v.server != server) continue;
      std::uint8_t& dv = row[local[link.dst]];
      if (dv != kFar) continue;
      CLUSTERSIM_CHECK(row[local[u]] + 1 < kFar, "server path too long");
      dv = static_cast<std::uint8_t>(row[local[u]] + 1);
      queue.push_back(link.dst);
    }
  }
}

}  // namespace

Router::Router(const Topology& topo) : topo_(topo) {
  auto t = std::make_shared<Tables>();
  const std::size_t n = topo.device_count();
  const auto servers = static_cast<std::size_t>(std::max(topo.servers(), 0));
  t->local.assign(n, -1);
  t->endpoint.assign(n, -1);
  t->switch_slot.assign(n, -1);
  t->nic_uplink.assign(n, kNoLink);
  t->edge_row.assign(n, -1);
  t->nic_port.assign(n, 0);
  t->server_size.assign(servers, 0);
  t->nics.resize(servers);
  std::vector<std::uint32_t> endpoints(servers, 0);
  std::int32_t switches = 0;
  for (DeviceId d = 0; d < n; ++d) {
    const Device& dev = topo.device(d);
    if (dev.kind == DeviceKind::NetworkSwitch) t->switch_slot[d] = switches++;
    if (dev.server < 0) continue;
    const auto s = static_cast<std::size_t>(dev.server);
    CLUSTERSIM_CHECK(s < servers, "device on a server beyond the GPU layout");
    t->local[d] = static_cast<std::int32_t>(t->server_size[s]++);
    if (is_endpoint(dev.kind)) t->endpoint[d] = static_cast<std::int32_t>(endpoints[s]++);
    if (dev.kind == DeviceKind::Nic) t->nics[s].push_back(d);
  }
  for (auto& list : t->nics)
    std::stable_sort(list.begin(), list.end(),
                     [&](DeviceId a, DeviceId b) { return topo.device(a).local_index < topo.device(b).local_index; });

  // Per-server tables.
  t->server_offset.assign(servers, 0);
  std::size_t total = 0;
  for (std::size_t s = 0; s < servers; ++s) {
    t->server_offset[s] = total;
    total += static_cast<std::size_t>(endpoints[s]) * t->server_size[s];
  }
  t->pcie.assign(total, kFar);
  t->nvlink.assign(total, kFar);
  std::vector<DeviceId> queue;
  for (DeviceId d = 0; d < n; ++d) {
    if (t->endpoint[d] < 0) continue;
    const int s = topo.device(d).server;
    const std::size_t start = t->row_start(s, d);
    bfs_server(topo, t->local, true, d, t->pcie.data() + start, queue);
    if (topo.device(d).kind == DeviceKind::Gpu) bfs_server(topo, t->local, false, d, t->nvlink.data() + start, queue);
  }

  // Fabric: each NIC's uplink, each edge switch's distance row.
  for (DeviceId d = 0; d < n; ++d) {
    if (topo.device(d).kind != DeviceKind::Nic) continue;
    for (const LinkId l : topo.out_links(d)) {
      const Link& link = topo.link(l);
      if (link.kind != LinkKind::Network || t->switch_slot[link.dst] < 0) continue;
      t->nic_uplink[d] = l;
      break;
    }
  }
  // Destination routing numbers a NIC by its down port on its edge switch (attachment order), as
  // the subnet manager's fat-tree routing does: consecutive ports spread over the up-links.
  std::vector<std::uint32_t> ports_used(n, 0);
  for (DeviceId d = 0; d < n; ++d) {
    if (t->nic_uplink[d] != kNoLink) t->nic_port[d] = ports_used[topo.link(t->nic_uplink[d]).dst]++;
  }
  std::vector<std::int32_t> row_of_switch(static_cast<std::size_t>(switches), -1);
  for (DeviceId d = 0; d < n; ++d) {
    if (t->nic_uplink[d] == kNoLink) continue;
    const DeviceId edge = topo.link(t->nic_uplink[d]).dst;
    auto& row = row_of_switch[static_cast<std::size_t>(t->switch_slot[edge])];
    if (row < 0) {
      row = static_cast<std::int32_t>(dist_.size());
      dist_.emplace_back(static_cast<std::size_t>(switches), kFarFabric);
      auto& dist = dist_.back();
      queue.clear();
      queue.push_back(edge);
      dist[static_cast<std::size_t>(t->switch_slot[edge])] = 0;
      for (std::size_t head = 0; head < queue.size(); ++head) {
        const DeviceId u = queue[head];
        const std::uint32_t du = dist[static_cast<std::size_t>(t->switch_slot[u])];
        for (const LinkId l : topo.out_links(u)) {
          const Link& link = topo.link(l);
          const std::int32_t slot = t->switch_slot[link.dst];
          if (link.kind != LinkKind::Network || slot < 0) continue;
          if (dist[static_cast<std::size_t>(slot)] != kFarFabric) continue;
          dist[static_cast<std::size_t>(slot)] = du + 1;
          queue.push_back(link.dst);
        }
      }
    }
    t->edge_row[d] = row;
  }
  tables_ = std::move(t);
}

bool Router::has_nic(int rank) const {
  return !tables_->nics[static_cast<std::size_t>(topo_.server_of_gpu(rank))].empty();
}

DeviceId Router::nic_of(int rank) const {
  const auto& nics = tables_->nics[static_cast<std::size_t>(topo_.server_of_gpu(rank))];
  CLUSTERSIM_CHECK(!nics.empty(), "GPU's server has no NIC");
  const auto local = static_cast<std::size_t>(rank % topo_.gpus_per_server());
  return nics[local * nics.size() / static_cast<std::size_t>(topo_.gpus_per_server())];
}

void Router::append(Route& r, LinkId l) const {
  CLUSTERSIM_CHECK(r.hops < kMaxHops, "route longer than kMaxHops");
  const Link& link = topo_.link(l);
  r.links[r.hops++] = l;
  r.latency += link.latency;
  r.bottleneck = std::min(r.bottleneck, link.bandwidth);
}

bool Router::reachable(Plane plane, DeviceId from, DeviceId to) const {
  CLUSTERSIM_CHECK(tables_->endpoint[to] >= 0 && tables_->local[from] >= 0,
                   "server routes run between a server's GPUs and NICs");
  const int s = topo_.device(to).server;
  return topo_.device(from).server == s && tables_->row(plane, s, to)[tables_->local[from]] != kFar;
}

bool Router::walk_server(Plane plane, DeviceId from, DeviceId to, std::uint64_t key, Route& r) const {
  if (!reachable(plane, from, to)) return false;
  const Tables& t = *tables_;
  const bool pcie = plane == Plane::Pcie;
  const int s = topo_.device(to).server;
  const std::uint8_t* row = t.row(plane, s, to);
  auto next_hop = [&](const Link& link, std::uint8_t d) {
    const Device& v = topo_.device(link.dst);
    return plane_link(pcie, link.kind) && v.server == s && row[t.local[link.dst]] + 1 == d &&
           (link.dst == to || plane_transit(pcie, v.kind));
  };
  for (DeviceId u = from; u != to;) {
    const std::uint8_t d = row[t.local[u]];
    std::uint32_t count = 0;
    for (const LinkId l : topo_.out_links(u)) count += next_hop(topo_.link(l), d) ? 1 : 0;
    CLUSTERSIM_CHECK(count > 0, "server distance table has no downhill hop");
    std::uint32_t chosen = pick(key, u, count);
    for (const LinkId l : topo_.out_links(u)) {
      if (!next_hop(topo_.link(l), d) || chosen-- != 0) continue;
      append(r, l);
      u = topo_.link(l).dst;
      break;
    }
  }
  return true;
}

void Router::walk_fabric(DeviceId from, DeviceId dst_nic, std::uint64_t key, Route& r) const {
  const Tables& t = *tables_;
  const auto& dist = dist_[static_cast<std::size_t>(t.edge_row[dst_nic])];
  auto at = [&](DeviceId d) { return dist[static_cast<std::size_t>(t.switch_slot[d])]; };
  CLUSTERSIM_CHECK(at(from) != kFarFabric, "fabric does not connect the two NICs");
  auto next_hop = [&](const Link& link, std::uint32_t d) {
    return link.kind == LinkKind::Network && t.switch_slot[link.dst] >= 0 && at(link.dst) + 1 == d;
  };
  const bool by_destination = topo_.fabric_routing() == FabricRouting::DestinationModK;
  for (DeviceId u = from; at(u) != 0;) {
    const std::uint32_t d = at(u);
    std::uint32_t count = 0;
    for (const LinkId l : topo_.out_links(u)) count += next_hop(topo_.link(l), d) ? 1 : 0;
    std::uint32_t chosen = by_destination ? t.nic_port[dst_nic] % count : pick(key, u, count);
    for (const LinkId l : topo_.out_links(u)) {
      if (!next_hop(topo_.link(l), d) || chosen-- != 0) continue;
      append(r, l);
      u = topo_.link(l).dst;
      break;
    }
  }
}

Route Router::route(int src, int dst, std::uint64_t flow_key) const {
  Route r;
  r.bottleneck = sim::BytesPerSec{std::numeric_limits<double>::infinity()};
  if (src == dst) return r;  // no links: a GPU's copy to itself
  const DeviceId a = topo_.gpu(src);
  const DeviceId b = topo_.gpu(dst);
  if (topo_.server_of_gpu(src) == topo_.server_of_gpu(dst)) {
    const bool ok = walk_server(Plane::NvLink, a, b, flow_key, r) || walk_server(Plane::Pcie, a, b, flow_key, r);
    CLUSTERSIM_CHECK(ok, "two GPUs of one server are connected neither by NVLink nor by PCIe");
    return r;
  }
  const DeviceId src_nic = nic_of(src);
  const DeviceId dst_nic = nic_of(dst);
  const Tables& t = *tables_;
  CLUSTERSIM_CHECK(t.nic_uplink[src_nic] != kNoLink && t.nic_uplink[dst_nic] != kNoLink,
                   "NIC is not attached to the fabric");
  CLUSTERSIM_CHECK(walk_server(Plane::Pcie, a, src_nic, flow_key, r), "GPU cannot reach its NIC over PCIe");
  append(r, t.nic_uplink[src_nic]);
  walk_fabric(topo_.link(t.nic_uplink[src_nic]).dst, dst_nic, flow_key, r);
  append(r, Topology::reverse(t.nic_uplink[dst_nic]));
  CLUSTERSIM_CHECK(walk_server(Plane::Pcie, dst_nic, b, flow_key, r), "NIC cannot reach its GPU over PCIe");
  return r;
}

bool Router::server_plane_has_ties() const {
  const Tables& t = *tables_;
  std::vector<std::vector<DeviceId>> members(t.server_size.size());
  for (DeviceId d = 0; d < topo_.device_count(); ++d) {
    if (t.local[d] >= 0) members[static_cast<std::size_t>(topo_.device(d).server)].push_back(d);
  }
  auto downhill = [&](Plane plane, DeviceId target, DeviceId u) {
    const bool pcie = plane == Plane::Pcie;
    const int s = topo_.device(target).server;
    const std::uint8_t* row = t.row(plane, s, target);
    const std::uint8_t d = row[t.local[u]];
    std::uint32_t count = 0;
    for (const LinkId l : topo_.out_links(u)) {
      const Link& link = topo_.link(l);
      const Device& v = topo_.device(link.dst);
      const bool hop = d != kFar && plane_link(pcie, link.kind) && v.server == s &&
                       row[t.local[link.dst]] + 1 == d && (link.dst == target || plane_transit(pcie, v.kind));
      count += hop ? 1 : 0;
    }
    return count;
  };
  for (const auto& server : members) {
    for (const DeviceId target : server) {
      if (t.endpoint[target] < 0) continue;
      const bool gpu = topo_.device(target).kind == DeviceKind::Gpu;
      for (const DeviceId u : server) {
        if (u == target) continue;
        if (downhill(Plane::Pcie, target, u) > 1 || (gpu && downhill(Plane::NvLink, target, u) > 1)) return true;
      }
    }
  }
  return false;
}

std::vector<char> Router::fabric_tie_switches() const {
  const Tables& t = *tables_;
  std::vector<char> ties(topo_.device_count(), 0);
  for (const auto& dist : dist_) {
    for (DeviceId u = 0; u < topo_.device_count(); ++u) {
      if (t.switch_slot[u] < 0 || ties[u]) continue;
      const std::uint32_t d = dist[static_cast<std::size_t>(t.switch_slot[u])];
      if (d == kFarFabric || d == 0) continue;
      std::uint32_t count = 0;
      for (const LinkId l : topo_.out_links(u)) {
        const Link& link = topo_.link(l);
        const std::int32_t slot = t.switch_slot[link.dst];
        count += link.kind == LinkKind::Network && slot >= 0 && dist[static_cast<std::size_t>(slot)] + 1 == d ? 1 : 0;
      }
      ties[u] = count > 1 ? 1 : 0;
    }
  }
  return ties;
}

bool Router::fabric_has_ties() const {
  const std::vector<char> ties = fabric_tie_switches();
  return std::find(ties.begin(), ties.end(), 1) != ties.end();
}

bool Router::key_free() const {
  if (server_plane_has_ties()) return false;
  return topo_.fabric_routing() == FabricRouting::DestinationModK || !fabric_has_ties();
}

std::uint32_t Router::destination_port(DeviceId nic) const { return tables_->nic_port[nic]; }

PathType Router::path_type(int a, int b) const {
  if (a == b) return PathType::Self;
  if (topo_.server_of_gpu(a) != topo_.server_of_gpu(b)) return PathType::Net;
  if (reachable(Plane::NvLink, topo_.gpu(a), topo_.gpu(b))) return PathType::NvLink;
  return pcie_path_type(topo_.gpu(a), topo_.gpu(b));
}

PathType Router::pcie_path_type(DeviceId a, DeviceId b) const {
  if (a == b) return PathType::Self;
  if (topo_.device(a).server != topo_.device(b).server || topo_.device(a).server < 0) return PathType::Net;
  Route r;
  CLUSTERSIM_CHECK(walk_server(Plane::Pcie, a, b, 0, r), "devices of one server not connected over PCIe");
  int switches = 0;
  int roots = 0;
  bool cpu_link = false;
  for (int h = 0; h < r.hops; ++h) {
    const Link& link = topo_.link(r.links[static_cast<std::size_t>(h)]);
    cpu_link = cpu_link || link.kind == LinkKind::CpuInterconnect;
    const DeviceKind k = topo_.device(link.dst).kind;
    switches += k == DeviceKind::PcieSwitch ? 1 : 0;
    roots += k == DeviceKind::CpuRootComplex ? 1 : 0;
  }
  if (cpu_link) return PathType::Sys;
  if (roots > 1) return PathType::Node;
  if (roots == 1) return PathType::Phb;
  return switches > 1 ? PathType::Pxb : PathType::Pix;
}

int Router::nvlink_count(int a, int b) const {
  if (a == b || topo_.server_of_gpu(a) != topo_.server_of_gpu(b)) return 0;
  Route r;
  if (!walk_server(Plane::NvLink, topo_.gpu(a), topo_.gpu(b), 0, r)) return 0;
  int lanes = std::numeric_limits<int>::max();
  for (int h = 0; h < r.hops; ++h) lanes = std::min(lanes, topo_.link(r.links[static_cast<std::size_t>(h)]).nvlinks);
  return lanes;
}

}  // namespace clustersim::topology
