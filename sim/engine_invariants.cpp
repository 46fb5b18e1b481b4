// The engine's invariant checks (see engine_invariants.h for what each one states and its tolerance).
#include "sim/engine_invariants.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace clustersim::sim {

namespace {
std::string format(const char* fmt, double a, double b, double c) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}
}  // namespace

EngineInvariants::EngineInvariants(InvariantReport& report)
    : report_(report),
      time_(report.declare(kTimeMonotone)),
      capacity_(report.declare(kLinkCapacity)),
      bytes_(report.declare(kBytesConserved)) {}

void EngineInvariants::time_went_back(SimTime now, SimTime next) {
  report_.violated(time_, "an event at t = " + std::to_string(next.ps) + " ps ran after the clock reached " +
                              std::to_string(now.ps) + " ps");
}

void EngineInvariants::rate_changed(std::span<const ConstraintId> constraints, const std::uint16_t* weights,
                                    double old_rate, double new_rate) {
  const double delta = new_rate - old_rate;
  for (std::size_t k = 0; k < constraints.size(); ++k) {
    const ConstraintId c = constraints[k];
    if (c >= usage_.size()) {
      usage_.resize(c + 1, 0.0);
      is_touched_.resize(c + 1, 0);
    }
    usage_[c] += (weights == nullptr ? 1.0 : weights[k]) * delta;
    if (!is_touched_[c]) {
      is_touched_[c] = 1;
      touched_.push_back(c);
    }
  }
}

// Σ weight × rate over the solver's variables on c, from scratch.
double EngineInvariants::exact_usage(const FairShareSolver& solver, ConstraintId c) const {
  double sum = 0;
  for (VariableId v : solver.variables_of(c)) {
    const std::vector<ConstraintId> cons = solver.constraints_of(v);
    for (std::size_t k = 0; k < cons.size(); ++k) {
      if (cons[k] == c) sum += solver.weight(v, static_cast<int>(k)) * solver.rate(v);
    }
  }
  return sum;
}

void EngineInvariants::check_capacities(const FairShareSolver& solver, SimTime now) {
  for (ConstraintId c : touched_) {
    is_touched_[c] = 0;
    ++capacity_checks_;
    const double capacity = solver.capacity(c);
    const double limit = capacity * (1 + kCapacityTolerance);
    if (usage_[c] <= limit) continue;
    usage_[c] = exact_usage(solver, c);  // drop the running sum's rounding drift
    if (usage_[c] <= limit) continue;
    report_.violated(capacity_, format("link %.0f carries %.6g B/s, above its capacity %.6g B/s", c, usage_[c],
                                       capacity) +
                                    " at t = " + std::to_string(now.ps) + " ps");
  }
  touched_.clear();
}

void EngineInvariants::flow_injected(double bytes) {
  ++in_flight_;
  injected_bytes_ += bytes;
}

void EngineInvariants::flow_delivered(double bytes, double undelivered, double rate, SimTime now) {
  ++byte_checks_;
  --in_flight_;
  landed_bytes_ += bytes;
  // Completion times round up to the picosecond: at most one picosecond's worth delivered extra.
  const double slack = rate * 1e-12 + kBytesTolerance * bytes;
  if (std::abs(undelivered) <= slack) return;
  report_.violated(bytes_, format("a flow of %.6g B delivered %.6g B by its completion event (rate %.6g B/s)", bytes,
                                  bytes - undelivered, rate) +
                               " at t = " + std::to_string(now.ps) + " ps");
}

void EngineInvariants::flow_landed(double bytes) {
  ++byte_checks_;
  --in_flight_;
  landed_bytes_ += bytes;
}

void EngineInvariants::at_rest(SimTime now) {
  ++byte_checks_;
  if (in_flight_ != 0 || std::abs(injected_bytes_ - landed_bytes_) > kBytesTolerance * injected_bytes_) {
    report_.violated(bytes_, format("the event queue ran dry with %.0f flows undelivered: %.6g B injected, %.6g B landed",
                                    static_cast<double>(in_flight_), injected_bytes_, landed_bytes_) +
                                 " at t = " + std::to_string(now.ps) + " ps");
  }
  report_.checked(time_, time_checks_);
  report_.checked(capacity_, capacity_checks_);
  report_.checked(bytes_, byte_checks_);
  time_checks_ = capacity_checks_ = byte_checks_ = 0;
}

}  // namespace clustersim::sim
