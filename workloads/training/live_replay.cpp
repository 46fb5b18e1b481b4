// Replaying live data-parallel collectives that provably run alone (see live_replay.h).
#include "workloads/training/live_replay.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>

#include "sim/check.h"
#include "sim/simulator.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_runner.h"

namespace clustersim::workloads {
namespace {

constexpr int kFree = -1;    // a link no unit crosses
constexpr int kShared = -2;  // a link two units (or a unit and an input copy) cross

// Marks `link` as crossed by unit `u`.
void claim(std::vector<int>& owner, topology::LinkId link, int u) {
  int& o = owner[link];
  if (o == kFree) {
    o = u;
  } else if (o != u) {
    o = kShared;
  }
}

// The links each unit's collectives cross, in unit order (rank by rank, then k), from routes built
// without starting anything; nothing when an algorithm does not list its routes.
std::optional<std::vector<std::vector<topology::LinkId>>> unit_links(
    const topology::Topology& topo, const topology::Router& router,
    const std::vector<std::vector<std::vector<CollectivePlan>>>& plans) {
  sim::Simulator scratch;
  topology::NetworkModel net(scratch, topo);
  const CollectiveContext ctx{scratch, net, topo, router};
  std::vector<std::vector<topology::LinkId>> out;
  for (const auto& rank : plans) {
    for (const auto& unit : rank) {
      std::vector<topology::LinkId>& mine = out.emplace_back();
      for (const CollectivePlan& plan : unit) {
        FlowRoutes flows;
        if (!make_collective(ctx, plan, nullptr, 0)->flow_routes(flows)) return std::nullopt;
        for (const topology::Route& route : flows.routes) {
          mine.insert(mine.end(), route.links.begin(), route.links.begin() + route.hops);
        }
      }
      std::sort(mine.begin(), mine.end());
      mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    }
  }
  return out;
}

// Counts nothing; the duration is read from the collective itself.
struct NoListener final : CollectiveListener {
  void on_collective_done(std::uint64_t) override {}
};

}  // namespace

LiveReplay::LiveReplay(const topology::Topology& topo, const topology::Router& router,
                       const std::vector<std::vector<std::vector<CollectivePlan>>>& plans,
                       const std::vector<SentRoute>& sends, const std::vector<topology::Route>& blocking,
                       std::vector<sim::SimTime> min_step, const std::vector<std::size_t>& dense_units)
    : topo_(topo),
      router_(router),
      min_step_(std::move(min_step)),
      step_end_(min_step_.size(), kIdle),
      step_send_(min_step_.size(), kNoSend),
      step_held_(min_step_.size(), kNoSend),
      in_flight_(sends.size(), 0) {
  CLUSTERSIM_CHECK(min_step_.size() == plans.size(), "one shortest step per pipeline rank");
  CLUSTERSIM_CHECK(dense_units.empty() || dense_units.size() == plans.size(), "dense units given per pipeline rank");
  std::vector<int> unit_rank, unit_kind;  // per unit: its rank, and 0 dense / 1 expert
  for (std::size_t r = 0; r < plans.size(); ++r) {
    first_unit_.push_back(unit_rank.size());
    for (std::size_t k = 0; k < plans[r].size(); ++k) {
      unit_rank.push_back(static_cast<int>(r));
      unit_kind.push_back(!dense_units.empty() && k >= dense_units[r] ? 1 : 0);
    }
  }
  units_.resize(unit_rank.size());
  const auto listed = unit_links(topo, router, plans);
  if (!listed) {  // routes unknown: nothing is proved isolated, nothing replays
    for (Unit& u : units_) u.isolated = false;
    return;
  }
  const std::vector<std::vector<topology::LinkId>>& links = *listed;
  // Per link: the one rank whose units cross it, and per kind the one unit that does (or shared).
  std::vector<int> rank_owner(topo.link_count(), kFree);
  std::array<std::vector<int>, 2> owner{std::vector<int>(topo.link_count(), kFree), std::vector<int>(topo.link_count(), kFree)};
  for (std::size_t u = 0; u < links.size(); ++u) {
    for (const topology::LinkId l : links[u]) {
      claim(rank_owner, l, unit_rank[u]);
      claim(owner[static_cast<std::size_t>(unit_kind[u])], l, static_cast<int>(u));
    }
  }
  for (const topology::Route& route : blocking) {
    for (int h = 0; h < route.hops; ++h) claim(rank_owner, route.links[static_cast<std::size_t>(h)], kShared);
  }
  // (a): a unit is isolated when it lists its routes and every link it crosses is its own, but
  // for its own rank's units of the other kind, which never run beside it.
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const std::vector<int>& mine = owner[static_cast<std::size_t>(unit_kind[u])];
    for (const topology::LinkId l : links[u]) {
      if (rank_owner[l] != unit_rank[u] || mine[l] != static_cast<int>(u)) units_[u].isolated = false;
    }
  }
  // (b)'s inputs: which sends cross which unit's links.
  for (std::size_t s = 0; s < sends.size(); ++s) {
    senders_.push_back(sends[s].sender);
    std::vector<int> touched;
    for (int h = 0; h < sends[s].route.hops; ++h) {
      const topology::LinkId l = sends[s].route.links[static_cast<std::size_t>(h)];
      for (const std::vector<int>& o : owner) {
        if (o[l] >= 0) touched.push_back(o[l]);
      }
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (const int u : touched) units_[static_cast<std::size_t>(u)].sends.push_back(s);
  }
}

void LiveReplay::begin_iteration() {
  std::fill(step_end_.begin(), step_end_.end(), kIdle);
  std::fill(step_send_.begin(), step_send_.end(), kNoSend);
  std::fill(step_held_.begin(), step_held_.end(), kNoSend);
  for (const int n : in_flight_) CLUSTERSIM_CHECK(n == 0, "no pipeline send is in flight between iterations");
}

// (b): no send crossing the unit's links is in flight now, and none starts before `end` (or at it:
// a start at the very picosecond of the last completion would meet the collective's last flows in
// the same re-solve).
bool LiveReplay::sends_stay_off(const Unit& u, sim::SimTime now, sim::SimTime end) const {
  for (const std::size_t s : u.sends) {
    if (in_flight_[s] > 0) return false;
    const auto r = static_cast<std::size_t>(senders_[s]);
    // The earliest end of a step of the sender that sends over s.
    sim::SimTime next = now + min_step_[r];
    const bool sends_then = step_send_[r] == s || step_held_[r] == s;
    if (step_end_[r] != kIdle) next = step_end_[r] + (sends_then ? sim::SimTime::zero() : min_step_[r]);
    if (next <= end) return false;
  }
  return true;
}

std::optional<sim::SimTime> LiveReplay::replay(int r, std::size_t k, const CollectivePlan& plan, sim::SimTime now) {
  const Unit& u = unit(r, k);
  if (!u.isolated) return std::nullopt;
  const sim::SimTime d = alone(r, k, plan);
  if (!sends_stay_off(u, now, now + d)) return std::nullopt;
  ++replays_;
  return d;
}

// The collective's duration alone on the cluster, from its own flow simulation (once per plan).
sim::SimTime LiveReplay::alone(int r, std::size_t k, const CollectivePlan& plan) {
  const auto key = std::make_tuple(r, k, static_cast<int>(plan.request.op), plan.request.bytes.value);
  if (const auto it = durations_.find(key); it != durations_.end()) return it->second;
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo_);
  NoListener listener;
  // Alone on this network: channels and ranks fold as for a replayed collective (ring_folding.h).
  CollectivePlan p = plan;
  p.shares_links = false;
  const std::unique_ptr<CollectiveAlgorithm> c = make_collective(CollectiveContext{sim, net, topo_, router_}, p, &listener, 0);
  c->start();
  sim.run();
  CLUSTERSIM_CHECK(c->done(), "a collective alone on the cluster finishes");
  transfers_ += net.stats().transfers_finished;
  events_ += sim.events_processed();
  const sim::SimTime d = c->finish_time() - c->start_time();
  durations_.emplace(key, d);
  return d;
}

}  // namespace clustersim::workloads
