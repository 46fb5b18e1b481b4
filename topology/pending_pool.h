// Transfers waiting out their latency (network_model.h): what a pending transfer needs when it
// starts streaming (bytes, rate cap, listener, tag and its route's links; hop weights when folded)
// kept as one variable-length record in a pool of 4-byte words, with no fixed-size record beside
// it. A record is 6 words (bytes, listener, tag) + 2 (its rate cap, only when it has one) + 1 per
// link: 32 + 4·hops bytes uncapped, 40 + 4·hops capped, where a 40-byte record plus a separate
// route block was 40 + 4·hops (issue #12: at the reduce-scatter -> all-gather boundary of a direct
// all-reduce every all-gather send waits here while every reduce-scatter flow still streams).
// The record's offset, hop count and flags travel in the 64-bit handle the caller keeps (the
// network model's activation batch entry), so the record itself holds no header.
//
// A transfer whose listener can build its route again (NetworkModel::start_rebuilt) keeps no
// links here: 24 bytes uncapped, 32 capped, whatever its route's length.
//
// Hop weights (2 bytes per link) are kept in a parallel pool grown only by folded transfers.
// Freed records are reused by records of the same size (a stack per size, chained through the
// record's first word: last freed, first reused); nothing is allocated once the pool has grown to
// its peak, and release() gives the storage back when nothing waits.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>

#include "sim/check.h"
#include "sim/fair_share.h"
#include "sim/pod_vector.h"
#include "topology/topology.h"

namespace clustersim::topology {

class TransferListener;

// Virtual links a flow may cross besides its route (network_model.h); they follow the route's
// links in a record.
inline constexpr int kMaxVirtualLinks = 2;

class PendingPool {
 public:
  struct Transfer {
    double bytes = 0;
    double rate_cap = 0;
    TransferListener* who = nullptr;
    std::uint64_t tag = 0;
  };
  // A record of `t` and `links` (a route's, then its virtual links'; `weights`, when not empty:
  // one per link); the returned handle names it until free().
  std::uint64_t alloc(const Transfer& t, std::span<const LinkId> links, std::span<const std::uint16_t> weights) {
    return alloc_record(t, links, weights, 0);
  }
  // A record without links, for a transfer whose listener builds its route again when it starts
  // streaming (TransferListener::route_of): 6 words, 8 capped. `hops` (the route's length) is
  // kept in the handle only, so that the rebuilt route can be checked against it.
  std::uint64_t alloc_rebuilt(const Transfer& t, std::size_t hops) {
    CLUSTERSIM_CHECK(hops <= static_cast<std::size_t>(kMaxHops), "a route has at most kMaxHops links");
    return alloc_record(t, {}, {}, kRebuilt | (static_cast<std::uint64_t>(hops) << kRouteHopsShift));
  }
  static bool rebuilt(std::uint64_t h) { return (h & kRebuilt) != 0; }
  static std::size_t route_hops(std::uint64_t h) { return static_cast<std::size_t>((h >> kRouteHopsShift) & 0xffU); }
  Transfer transfer(std::uint64_t h) const {
    const std::uint32_t* w = words_.data() + offset(h);
    Transfer t;
    std::memcpy(&t.bytes, w, 8);
    std::memcpy(&t.who, w + 2, sizeof(t.who));
    std::memcpy(&t.tag, w + 4, 8);
    t.rate_cap = kUncapped;
    if ((h & kCapped) != 0) std::memcpy(&t.rate_cap, w + kFixedWords, 8);
    return t;
  }
  std::span<const LinkId> links(std::uint64_t h) const {
    static_assert(sizeof(LinkId) == sizeof(std::uint32_t), "one word per link");
    return {reinterpret_cast<const LinkId*>(words_.data() + links_at(h)), hops(h)};
  }
  // Empty unless the transfer is folded.
  std::span<const std::uint16_t> weights(std::uint64_t h) const {
    if ((h & kFolded) == 0) return {};
    return {weights_.data() + links_at(h), hops(h)};
  }
  void free(std::uint64_t h) {
    const std::size_t size = links_at(h) - offset(h) + hops(h);
    words_[offset(h)] = free_[size];
    free_[size] = offset(h);
  }
  std::size_t words() const { return words_.size(); }
  // Gives the storage back; only when every record is free.
  void release() {
    words_.release();
    weights_.release();
    free_.fill(kNone);
  }

 private:
  static constexpr double kUncapped = sim::kUnlimited;
  static constexpr std::size_t kFixedWords = 6;  // bytes, listener, tag
  static constexpr std::uint64_t kCapped = std::uint64_t{1} << 40;
  static constexpr std::uint64_t kFolded = std::uint64_t{1} << 41;
  static constexpr std::uint64_t kRebuilt = std::uint64_t{1} << 42;
  static constexpr int kRouteHopsShift = 48;
  std::uint64_t alloc_record(const Transfer& t, std::span<const LinkId> links, std::span<const std::uint16_t> weights,
                             std::uint64_t extra) {
    CLUSTERSIM_CHECK(links.size() <= static_cast<std::size_t>(kMaxHops + kMaxVirtualLinks),
                     "a route has at most kMaxHops links, plus kMaxVirtualLinks virtual links");
    const bool capped = t.rate_cap != kUncapped;  // (exact: an unlimited cap is the one value left out)
    const std::size_t size = kFixedWords + (capped ? 2 : 0) + links.size();
    std::uint32_t off;
    if (free_[size] != kNone) {
      off = free_[size];
      free_[size] = words_[off];
    } else {
      CLUSTERSIM_CHECK(words_.size() + size <= kNone, "the pending pool is addressed by 32-bit offsets");
      off = static_cast<std::uint32_t>(words_.size());
      words_.resize(words_.size() + size);
    }
    std::uint32_t* w = words_.data() + off;
    std::memcpy(w, &t.bytes, 8);
    std::memcpy(w + 2, &t.who, sizeof(t.who));
    std::memcpy(w + 4, &t.tag, 8);
    std::size_t at = kFixedWords;
    if (capped) {
      std::memcpy(w + at, &t.rate_cap, 8);
      at += 2;
    }
    if (!links.empty()) std::memcpy(w + at, links.data(), links.size() * sizeof(LinkId));
    if (!weights.empty()) {
      if (weights_.size() < words_.size()) weights_.resize(words_.size());
      std::memcpy(weights_.data() + off + at, weights.data(), weights.size() * sizeof(std::uint16_t));
    }
    return static_cast<std::uint64_t>(off) | (static_cast<std::uint64_t>(links.size()) << 32) |
           (capped ? kCapped : 0) | (weights.empty() ? 0 : kFolded) | extra;
  }
  static std::uint32_t offset(std::uint64_t h) { return static_cast<std::uint32_t>(h); }
  static std::size_t hops(std::uint64_t h) { return static_cast<std::size_t>((h >> 32) & 0xffU); }
  static std::uint32_t links_at(std::uint64_t h) {
    return offset(h) + static_cast<std::uint32_t>(kFixedWords) + ((h & kCapped) != 0 ? 2U : 0U);
  }
  sim::PodVector<std::uint32_t> words_;
  sim::PodVector<std::uint16_t> weights_;  // at the same offsets as the links; grown only by folded records
  static constexpr std::uint32_t kNone = 0xffffffffU;
  static constexpr std::size_t kMaxWords = kFixedWords + 2 + kMaxHops + kMaxVirtualLinks;
  // Free records of each size in words, chained through their first word.
  std::array<std::uint32_t, kMaxWords + 1> free_ = make_free();
  static std::array<std::uint32_t, kMaxWords + 1> make_free() {
    std::array<std::uint32_t, kMaxWords + 1> a{};
    a.fill(kNone);
    return a;
  }
};

}  // namespace clustersim::topology
