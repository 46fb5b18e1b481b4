// The engine for collectives written as stages of point-to-point sends: recursive halving and
// doubling, direct (everyone to everyone at once), all-to-all and send/recv.
//
// Every rank walks the same numbered stages. In a stage it starts all its sends at once and
// moves on when it has received every message the stage brings it (a data dependency: what it
// sends next is built from what it received). A rank does not wait for its own sends to land, so
// stages of neighbouring ranks overlap where the data allows. Stages that give a rank nothing to
// do pass at once, which is how non-power-of-two pre- and post-steps line up.
//
// The schedule is a template parameter, not a virtual interface: the engine asks it, per send,
// for the peer and the bytes, with no virtual call and no allocation per transfer. A Schedule has
//   int stages() const;
//   int sends(int pos, int stage) const;  StageSend send(int pos, int stage, int i) const;
//   int recvs(int pos, int stage) const;
// over positions 0..n-1 (the engine maps positions to GPU ranks with `order`).
//
// A transfer's tag is (sender position << 40) | (receiver position << 16) | stage. Unfolded, the
// engine starts its sends with NetworkModel::start_rebuilt and builds a waiting send's route again
// from its tag when the send starts streaming (route_of): the route is a pure function of the two
// ranks, and a direct stage's n(n-1) waiting sends then keep no links (issue #12). A schedule with
// send_to(pos, stage, peer) (direct, halving-doubling) gives the send's bytes from the tag too, and
// the engine starts it with start_regenerated: a waiting send keeps only its 8-byte batch entry.
//
// With a RankFolding (rank_folding.h: shift-invariant schedules only, the caller's part) only the
// positions of the first `classes` are simulated, each standing for `copies` ranks: a message to
// position q counts for q's class (q mod classes), and every representative flow carries the
// weights of its images.
#pragma once

#include <algorithm>
#include <concepts>
#include <optional>
#include <utility>
#include <vector>

#include "sim/check.h"
#include "sim/rng.h"
#include "workloads/collectives/collective_algorithm.h"
#include "workloads/collectives/rank_folding.h"

namespace clustersim::workloads {

struct StageSend {
  int peer = 0;        // position of the receiver
  double bytes = 0;    // payload
};

template <class Schedule>
class StagedCollective final : public CollectiveAlgorithm {
 public:
  StagedCollective(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener, std::uint64_t tag,
                   Schedule schedule, std::vector<int> order, std::optional<RankFolding> folding = std::nullopt)
      : CollectiveAlgorithm(ctx, std::move(plan), listener, tag),
        schedule_(std::move(schedule)),
        order_(std::move(order)),
        folding_(std::move(folding)),
        n_(static_cast<int>(order_.size())),
        classes_(folding_ ? folding_->classes() : n_),
        stages_(schedule_.stages()),
        stage_(static_cast<std::size_t>(classes_), 0),
        issued_(static_cast<std::size_t>(classes_), 0),
        received_(static_cast<std::size_t>(classes_) * static_cast<std::size_t>(stages_), 0) {
    CLUSTERSIM_CHECK(stages_ < (1 << 16), "stage index fits the transfer tag");
    CLUSTERSIM_CHECK(n_ < (1 << 24), "positions fit the transfer tag");
  }

  void on_transfer_done(std::uint64_t tag) override {
    const int dst = static_cast<int>((tag >> 16) & kPositionMask) % classes_;
    const int stage = static_cast<int>(tag & 0xffffU);
    ++received_[index(dst, stage)];
    advance(dst);
    if (complete_ == classes_) finish();
  }
  const Schedule& schedule() const { return schedule_; }
  // Every rank's transfers, the folded-away ones included.
  std::uint64_t transfers_issued() const override {
    return CollectiveAlgorithm::transfers_issued() * static_cast<std::uint64_t>(folding_ ? folding_->copies() : 1);
  }
  // Ranks simulated (classes of the rank folding; all ranks unfolded).
  int simulated_ranks() const { return classes_; }

 private:
  static constexpr std::uint64_t kPositionMask = (std::uint64_t{1} << 24) - 1;
  // The route from position `from` to position `to` (what issue() sends on, unfolded).
  topology::Route route_between(int from, int to) const {
    const int src = order_[static_cast<std::size_t>(from)];
    const int dst = order_[static_cast<std::size_t>(to)];
    return ctx_.router.route(src, dst,
                             sim::splitmix64((static_cast<std::uint64_t>(src) << 32) ^ static_cast<std::uint64_t>(dst)));
  }
  void route_of(std::uint64_t tag, topology::Route& route) const override {
    route = route_between(static_cast<int>(tag >> 40), static_cast<int>((tag >> 16) & kPositionMask));
  }
  // Schedules that name a send by its receiver (send_to(pos, stage, peer), the send(pos, stage, i)
  // whose peer it is) let a waiting unfolded send keep nothing but its tag (start_regenerated).
  static constexpr bool kRegenerates = requires(const Schedule& sc) {
    { sc.send_to(0, 0, 0) } -> std::same_as<StageSend>;
  };
  void transfer_of(std::uint64_t tag, topology::Route& route, double& bytes, double& rate_cap) const override {
    if constexpr (kRegenerates) {
      const int p = static_cast<int>(tag >> 40);
      const int peer = static_cast<int>((tag >> 16) & kPositionMask);
      route = route_between(p, peer);
      bytes = wire_bytes(sim::Bytes{schedule_.send_to(p, static_cast<int>(tag & 0xffffU), peer).bytes});
      rate_cap = rate_cap_of(route);
    } else {
      CollectiveAlgorithm::transfer_of(tag, route, bytes, rate_cap);
    }
  }
  static bool nvlink_first(const topology::Topology& topo, const topology::Route& route) {
    return route.hops > 0 && topo.link(route.links[0]).kind == topology::LinkKind::NvLink;
  }
  // A send's rate cap on `route` (what issue() passes, and transfer_of gives again).
  double rate_cap_of(const topology::Route& route) const {
    return nvlink_first(ctx_.topo, route) ? std::min(plan_.channel_rate_cap, plan_.p2p_nvlink_cap) : plan_.channel_rate_cap;
  }
  std::size_t index(int pos, int stage) const {
    return static_cast<std::size_t>(pos) * static_cast<std::size_t>(stages_) + static_cast<std::size_t>(stage);
  }
  void begin() override {
    for (int p = 0; p < classes_; ++p) advance(p);
    if (complete_ == classes_) finish();
  }
  void advance(int p) {
    int& s = stage_[static_cast<std::size_t>(p)];
    char& issued = issued_[static_cast<std::size_t>(p)];
    while (s < stages_) {
      if (!issued) {
        issue(p, s);
        issued = 1;
      }
      if (received_[index(p, s)] < schedule_.recvs(p, s)) return;
      ++s;
      issued = 0;
    }
    if (s == stages_) {
      ++s;  // counted once
      ++complete_;
    }
  }
  void issue(int p, int s) {
    const int count = schedule_.sends(p, s);
    for (int i = 0; i < count; ++i) {
      const StageSend m = schedule_.send(p, s, i);
      const topology::Route route = route_between(p, m.peer);
      const bool nvlink = nvlink_first(ctx_.topo, route);
      const std::uint64_t tag = (static_cast<std::uint64_t>(p) << 40) | (static_cast<std::uint64_t>(m.peer) << 16) |
                                static_cast<std::uint64_t>(s);
      const double cap = rate_cap_of(route);
      const sim::SimTime drain = sim::SimTime::from_us(nvlink && plan_.protocol_latencies ? plan_.p2p_drain_us : 0.0);
      if (!folding_) {
        if constexpr (kRegenerates) {
          send_regenerated(route, sim::Bytes{m.bytes}, tag, step_overhead(route) + drain, cap);
        } else {
          send_rebuilt(route, sim::Bytes{m.bytes}, tag, step_overhead(route) + drain, cap);
        }
        continue;
      }
      FoldedHop hop;
      const bool folded = folding_->fold(route, hop);
      CLUSTERSIM_CHECK(folded, "rank folding weights fit HopWeights (checked when folded)");
      send(hop.route, sim::Bytes{m.bytes}, tag, step_overhead(route) + drain, cap, &hop.weights);
    }
  }

  Schedule schedule_;
  std::vector<int> order_;
  std::optional<RankFolding> folding_;
  int n_;
  int classes_;  // positions simulated: 0..classes_-1
  int stages_;
  std::vector<int> stage_;
  std::vector<char> issued_;
  std::vector<int> received_;
  int complete_ = 0;
};

}  // namespace clustersim::workloads
