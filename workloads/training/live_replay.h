// Time folding of `run --full`'s live data-parallel collectives: a collective that provably has
// its links to itself from launch to end is not run as flows again; it ends after the duration its
// own flow simulation alone on the cluster took (simulated once per distinct collective).
//
// Why this is exact. A pipeline rank launches its bucket reductions one at a time (one
// communication stream: the next starts when the last of its tensor-parallel collectives has
// ended), so two collectives of one (rank, position) never overlap. If, in addition,
//   (a) no link of that (rank, position)'s collectives is crossed by any other simulated rank's or
//       position's collectives, nor by an input copy (checked once, on the routes of every
//       collective the run can launch; with expert buckets a rank's units are its positions and
//       its expert-data-parallel groups, and the rank's own units of the other kind do not count:
//       they are launched on the same stream, never at the same time), and
//   (b) no pipeline send that crosses one of its links is in flight at launch or can start before
//       it ends (checked at launch: a send starts only when its sender's compute step ends; a
//       step that is running ends when it was scheduled to, an idle rank's next step ends no
//       sooner than its shortest step from now, and a running step that sends elsewhere lets its
//       rank's next send wait one more shortest step),
// then every flow of the collective shares its links only with flows of the same collective, so
// the max-min rates it sees, and with them every completion, are those of the same collective
// alone on the cluster, shifted in time. The network model is shift-invariant: rates depend on the
// flows present, remaining bytes on integer picosecond differences. Where (a) or (b) fails the
// collective runs as flows, as before. The launch's completion is then an event of its own at
// start + duration; ties with other events at that picosecond may run in another order than the
// flow's completion would have (tests compare replayed and unreplayed iterations to the picosecond).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "sim/units.h"
#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collectives/collective_algorithm.h"

namespace clustersim::workloads {

// A pipeline send's route and the pipeline rank whose step end starts it.
struct SentRoute {
  topology::Route route;
  int sender = 0;
};

class LiveReplay {
 public:
  // plans[r][k]: every collective pipeline rank r may launch for its simulated unit k (one per
  // distinct bucket size): its simulated tensor-parallel positions (dense buckets) first, then,
  // with expert buckets, its simulated expert-data-parallel groups; dense_units[r] of them are
  // dense (empty: all). A rank's dense and expert units never run at once (one communication
  // stream), so they may cross the same links; any other two units may not. `sends`: the pipeline
  // sends by route index. `blocking`: other live flows (input copies); a collective crossing one
  // never replays. min_step[r]: rank r's shortest step.
  LiveReplay(const topology::Topology& topo, const topology::Router& router,
             const std::vector<std::vector<std::vector<CollectivePlan>>>& plans, const std::vector<SentRoute>& sends,
             const std::vector<topology::Route>& blocking, std::vector<sim::SimTime> min_step,
             const std::vector<std::size_t>& dense_units = {});

  // Run time of the pipeline: what (b) needs.
  void begin_iteration();
  // A step of `rank` ending at `end` that then sends over route `send` and, a combined 1F1B pair's
  // backward, over `held` too, its forward's output (kNoSend: none).
  void step_started(int rank, sim::SimTime end, std::size_t send, std::size_t held = kNoSend) {
    step_end_[static_cast<std::size_t>(rank)] = end;
    step_send_[static_cast<std::size_t>(rank)] = send;
    step_held_[static_cast<std::size_t>(rank)] = held;
  }
  // The running step of `rank` now ends at `end`, later (its compute slowed beside a collective:
  // iteration_run.h extend_step); a send it makes then starts no sooner than before.
  void step_extended(int rank, sim::SimTime end) { step_end_[static_cast<std::size_t>(rank)] = end; }
  void step_finished(int rank) { step_end_[static_cast<std::size_t>(rank)] = kIdle; }
  static constexpr std::size_t kNoSend = static_cast<std::size_t>(-1);
  void send_started(std::size_t route) { ++in_flight_[route]; }
  void send_finished(std::size_t route) { --in_flight_[route]; }

  // The duration to replay rank r's collective `plan` of position k launched now, or nothing when
  // it must run as flows.
  std::optional<sim::SimTime> replay(int r, std::size_t k, const CollectivePlan& plan, sim::SimTime now);

  // Work of the simulations alone (counted once each, as the memo counts its simulations).
  std::uint64_t transfers() const { return transfers_; }
  std::uint64_t events() const { return events_; }
  std::uint64_t replays() const { return replays_; }

 private:
  static constexpr sim::SimTime kIdle = sim::SimTime{-1};
  struct Unit {
    bool isolated = true;             // (a)
    std::vector<std::size_t> sends;   // pipeline sends crossing its links
  };
  Unit& unit(int r, std::size_t k) { return units_[first_unit_[static_cast<std::size_t>(r)] + k]; }
  sim::SimTime alone(int r, std::size_t k, const CollectivePlan& plan);
  bool sends_stay_off(const Unit& u, sim::SimTime now, sim::SimTime end) const;

  const topology::Topology& topo_;
  const topology::Router& router_;
  std::vector<std::size_t> first_unit_;  // per rank: its first unit's index in units_
  std::vector<Unit> units_;
  std::vector<int> senders_;  // per send route
  std::vector<sim::SimTime> min_step_, step_end_;
  std::vector<std::size_t> step_send_;  // per rank: the route its running step sends over
  std::vector<std::size_t> step_held_;  // per rank: a held forward output it sends then too
  std::vector<int> in_flight_;
  std::map<std::tuple<int, std::size_t, int, double>, sim::SimTime> durations_;
  std::uint64_t transfers_ = 0, events_ = 0, replays_ = 0;
};

}  // namespace clustersim::workloads
