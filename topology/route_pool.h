// The routes of transfers waiting out their latency (network_model.h): a pending transfer needs
// its links (and, when folded, its hop weights) only when it starts streaming, so they are kept
// here, 4 bytes per hop (2 more per hop only for folded transfers, in a pool unfolded runs never
// grow), and handed to the fair-share solver at activation. Blocks are reused by routes of the
// same hop count; nothing is allocated once the pool has grown to its peak.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/check.h"
#include "sim/pod_vector.h"
#include "topology/topology.h"

namespace clustersim::topology {

// Virtual links a flow may cross besides its route (network_model.h); they follow the route's
// links in a pool block.
inline constexpr int kMaxVirtualLinks = 2;

class RoutePool {
 public:
  // A copy of `links` (a route's, then its virtual links'; and `weights`, when not empty: one per
  // link) at the returned offset.
  std::uint32_t alloc(std::span<const LinkId> links, std::span<const std::uint16_t> weights) {
    CLUSTERSIM_CHECK(links.size() <= static_cast<std::size_t>(kMaxHops + kMaxVirtualLinks),
                     "a route has at most kMaxHops links, plus kMaxVirtualLinks virtual links");
    std::uint32_t off;
    if (!links.empty() && free_[links.size()] != kNone) {
      off = free_[links.size()];
      free_[links.size()] = links_[off];
    } else {
      off = static_cast<std::uint32_t>(links_.size());
      links_.resize(links_.size() + links.size());
    }
    std::copy(links.begin(), links.end(), links_.begin() + off);
    if (!weights.empty()) {
      if (weights_.size() < links_.size()) weights_.resize(links_.size());
      std::copy(weights.begin(), weights.end(), weights_.begin() + off);
    }
    return off;
  }
  void free(std::uint32_t off, std::size_t hops) {
    if (hops == 0) return;  // no storage
    links_[off] = free_[hops];
    free_[hops] = off;
  }
  // Gives the storage back; only when every block is free.
  void release() {
    links_.release();
    weights_.release();
    free_.fill(kNone);
  }
  std::span<const LinkId> links(std::uint32_t off, std::size_t hops) const { return {links_.data() + off, hops}; }
  std::span<const std::uint16_t> weights(std::uint32_t off, std::size_t hops) const { return {weights_.data() + off, hops}; }

 private:
  sim::PodVector<LinkId> links_;
  sim::PodVector<std::uint16_t> weights_;  // grown only by folded routes
  // Free blocks of each hop count, chained through their first link (a stack, last freed first
  // reused); nothing is kept per freed block beyond the block itself.
  static constexpr std::uint32_t kNone = 0xffffffffU;
  std::array<std::uint32_t, kMaxHops + kMaxVirtualLinks + 1> free_ = make_free();
  static std::array<std::uint32_t, kMaxHops + kMaxVirtualLinks + 1> make_free() {
    std::array<std::uint32_t, kMaxHops + kMaxVirtualLinks + 1> a{};
    a.fill(kNone);
    return a;
  }
};

}  // namespace clustersim::topology
