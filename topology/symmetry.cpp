// routing_automorphism: grow φ from GPU pairs along ordered out-links, then check what the Router
// reads (see symmetry.h).
#include "topology/symmetry.h"

#include <cstdint>
#include <limits>

#include "sim/check.h"

namespace clustersim::topology {
namespace {

constexpr std::uint32_t kUnset = std::numeric_limits<std::uint32_t>::max();

// φ and σ under construction, with the inverses that keep them injective.
class Growth {
 public:
  explicit Growth(const Topology& topo)
      : topo_(topo),
        phi_(topo.device_count(), kUnset),
        inv_(topo.device_count(), kUnset),
        server_(static_cast<std::size_t>(topo.servers()), -2),
        server_inv_(static_cast<std::size_t>(topo.servers()), -2) {
    sigma_.assign(topo.link_count(), kUnset);
  }

  // Maps a to b (or confirms it); false when that contradicts φ so far or the devices differ.
  bool map(DeviceId a, DeviceId b) {
    if (phi_[a] != kUnset || inv_[b] != kUnset) return phi_[a] == b && inv_[b] == a;
    const Device& x = topo_.device(a);
    const Device& y = topo_.device(b);
    // A fabric switch's index is only its name; a server device's orders the NICs (nic_of).
    if (x.kind != y.kind || x.tier != y.tier || (x.server >= 0 && x.local_index != y.local_index)) return false;
    if (topo_.out_links(a).size() != topo_.out_links(b).size() || !map_server(x.server, y.server)) return false;
    phi_[a] = b;
    inv_[b] = a;
    queue_.push_back(a);
    return true;
  }

  // Follows the out-links of every mapped device; false on a contradiction or an unmapped device.
  bool grow() {
    std::vector<char> used;
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const DeviceId u = queue_[head];
      const auto& from = topo_.out_links(u);
      const auto& to = topo_.out_links(phi_[u]);
      used.assign(to.size(), 0);
      // Links to devices already mapped first (by their image), then the others in order.
      for (const bool mapped : {true, false}) {
        for (const LinkId l : from) {
          if ((phi_[topo_.link(l).dst] != kUnset) != mapped) continue;
          if (!match(l, to, used)) return false;
        }
      }
    }
    if (queue_.size() != topo_.device_count()) return false;
    for (LinkId l = 0; l < topo_.link_count(); ++l) {
      if (sigma_[Topology::reverse(l)] != Topology::reverse(sigma_[l])) return false;
    }
    return true;
  }

  Automorphism take() { return Automorphism{std::move(phi_), std::move(sigma_)}; }
  DeviceId phi(DeviceId d) const { return phi_[d]; }
  LinkId sigma(LinkId l) const { return sigma_[l]; }

 private:
  // σ(l) = the first unused link of `to` that l can map to: to φ(dst l) when that is known, else
  // to a device not yet an image.
  bool match(LinkId l, const std::vector<LinkId>& to, std::vector<char>& used) {
    const Link& x = topo_.link(l);
    const DeviceId want = phi_[x.dst];
    for (std::size_t i = 0; i < to.size(); ++i) {
      const Link& y = topo_.link(to[i]);
      if (used[i] || x.kind != y.kind || x.bandwidth.value != y.bandwidth.value || x.latency != y.latency ||
          x.nvlinks != y.nvlinks) {
        continue;
      }
      if (want != kUnset ? y.dst != want : inv_[y.dst] != kUnset) continue;
      if (!map(x.dst, y.dst)) return false;
      used[i] = 1;
      sigma_[l] = to[i];
      return true;
    }
    return false;
  }

  bool map_server(int a, int b) {
    if (a < 0 || b < 0) return a == b;
    int& s = server_[static_cast<std::size_t>(a)];
    int& t = server_inv_[static_cast<std::size_t>(b)];
    if (s == -2 && t == -2) {
      s = b;
      t = a;
    }
    return s == b && t == a;
  }

  const Topology& topo_;
  std::vector<DeviceId> phi_, inv_;
  std::vector<LinkId> sigma_;
  std::vector<int> server_, server_inv_;
  std::vector<DeviceId> queue_;
};

// Every GPU's NIC maps to its image's NIC, and (where the fabric chooses by it) every NIC keeps
// its destination port.
bool routing_commutes(const Topology& topo, const Router& router, const Growth& g) {
  std::vector<int> rank_of(topo.device_count(), -1);
  for (int r = 0; r < topo.gpu_count(); ++r) rank_of[topo.gpu(r)] = r;
  for (int r = 0; r < topo.gpu_count(); ++r) {
    const int image = rank_of[g.phi(topo.gpu(r))];
    if (topo.device(topo.gpu(r)).server != topo.server_of_gpu(r)) return false;  // route() compares ranks' servers
    if (image < 0 || router.has_nic(r) != router.has_nic(image)) return false;
    if (router.has_nic(r) && g.phi(router.nic_of(r)) != router.nic_of(image)) return false;
  }
  if (topo.fabric_routing() != FabricRouting::DestinationModK || !router.fabric_has_ties()) return true;
  for (DeviceId d = 0; d < topo.device_count(); ++d) {
    if (topo.device(d).kind == DeviceKind::Nic && router.destination_port(g.phi(d)) != router.destination_port(d)) {
      return false;
    }
  }
  // Where a switch chooses the i-th of several downhill links, σ must keep their order.
  const std::vector<char> ties = router.fabric_tie_switches();
  for (DeviceId u = 0; u < topo.device_count(); ++u) {
    if (!ties[u]) continue;
    const auto& from = topo.out_links(u);
    const auto& to = topo.out_links(g.phi(u));
    for (std::size_t i = 0; i < from.size(); ++i) {
      if (g.sigma(from[i]) != to[i]) return false;
    }
  }
  return true;
}

}  // namespace

std::optional<Automorphism> routing_automorphism(const Topology& topo, const Router& router, std::span<const int> from,
                                                 std::span<const int> to) {
  CLUSTERSIM_CHECK(from.size() == to.size(), "one image per GPU rank");
  Growth g(topo);
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (!g.map(topo.gpu(from[i]), topo.gpu(to[i]))) return std::nullopt;
  }
  if (!g.grow() || !router.key_free() || !routing_commutes(topo, router, g)) return std::nullopt;
  return g.take();
}

}  // namespace clustersim::topology
