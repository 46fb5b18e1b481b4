// The event engine's own invariants, checked as a simulation runs when a user asks (--check) and
// in tests: time never goes back, no link carries more than its capacity, and every byte a flow
// injects is delivered.
//
//  - Time monotone: each event's time is >= the clock when it is popped (Simulator::run).
//  - No link above capacity: after every re-solve, Σ weight × rate over the variables of each
//    constraint the solve touched is <= its capacity × (1 + kCapacityTolerance). The sums are kept
//    incrementally from the rate changes the network model reports (O(changed flows) per solve);
//    a sum over the limit is recomputed exactly from the solver before it counts as a violation,
//    so rounding drift in the running sums never reports a false one.
//  - Bytes sent equal bytes received: a flow's bytes integrated over its rates up to its completion
//    event equal the bytes it injected, within the completion's rounding (one picosecond at its
//    rate, times round up) plus kBytesTolerance of its size; and when the event queue runs dry every
//    injected flow has been delivered, the byte totals equal.
//
// Cost: a null test per event, per solve and per flow when off; when on, a few adds per rate change
// and nothing allocated per event once the per-constraint sums have grown to the largest id seen.
// Findings go to an InvariantReport (not owned), which must outlive this object.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/fair_share.h"
#include "sim/invariant_report.h"
#include "sim/units.h"

namespace clustersim::sim {

inline constexpr const char* kTimeMonotone = "time monotone";
inline constexpr const char* kLinkCapacity = "no link above capacity";
inline constexpr const char* kBytesConserved = "bytes sent equal bytes received";

// A link's rate sum may exceed its capacity by this fraction: progressive filling subtracts each
// fixed rate from the capacity once per flow, so the sum carries about one rounding (2^-52) per flow
// on the link; 1e-9 covers a million flows on one link with room to spare.
inline constexpr double kCapacityTolerance = 1e-9;
// A flow's integrated bytes may differ from its size by this fraction: remaining bytes are updated
// by rate × elapsed time at each rate change (one rounding each), far fewer than 1e7 per flow.
inline constexpr double kBytesTolerance = 1e-9;

class EngineInvariants {
 public:
  explicit EngineInvariants(InvariantReport& report);
  EngineInvariants(const EngineInvariants&) = delete;
  EngineInvariants& operator=(const EngineInvariants&) = delete;

  // Time monotone: an event at `next` is about to run with the clock at `now`.
  void event_time(SimTime now, SimTime next) {
    ++time_checks_;
    if (next < now) [[unlikely]] time_went_back(now, next);
  }

  // A variable crossing `constraints` (weights: identical flows per constraint, null = 1 each)
  // went from `old_rate` to `new_rate` (bytes/s; 0 when it starts or ends).
  void rate_changed(std::span<const ConstraintId> constraints, const std::uint16_t* weights, double old_rate,
                    double new_rate);
  // After a solve: the constraints touched since the last call hold their capacities.
  void check_capacities(const FairShareSolver& solver, SimTime now);

  // Bytes: a flow of `bytes` was injected; a flow of `bytes` completed with `undelivered` bytes
  // left by its rate integral (negative: delivered a little more) while streaming at `rate` bytes/s.
  void flow_injected(double bytes);
  void flow_delivered(double bytes, double undelivered, double rate, SimTime now);
  // A flow that never streamed (zero bytes, or no hop to cross) landed whole.
  void flow_landed(double bytes);

  // The event queue ran dry at `now`: everything injected has landed. Moves the counts to the report.
  void at_rest(SimTime now);

 private:
  void time_went_back(SimTime now, SimTime next);
  double exact_usage(const FairShareSolver& solver, ConstraintId c) const;

  InvariantReport& report_;
  InvariantReport::Handle time_, capacity_, bytes_;
  std::uint64_t time_checks_ = 0, capacity_checks_ = 0, byte_checks_ = 0;
  // Running Σ weight × rate per constraint, and the constraints touched since the last check.
  std::vector<double> usage_;
  std::vector<ConstraintId> touched_;
  std::vector<char> is_touched_;
  std::int64_t in_flight_ = 0;  // injected minus delivered flows
  double injected_bytes_ = 0, landed_bytes_ = 0;
};

}  // namespace clustersim::sim
