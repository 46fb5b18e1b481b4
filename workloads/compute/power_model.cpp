// Board power under a power limit (see power_model.h).
#include "workloads/compute/power_model.h"

#include <algorithm>

#include "workloads/compute/compute_model.h"

namespace clustersim::workloads {

double PowerDraw::at_busy_share(double u) const {
  const double share = std::clamp(u, 0.0, 1.0);
  return idle_w + (busy_w - idle_w) * share;
}

PowerDraw power_draw(const topology::GpuSpec& gpu, double power_limit_w, const ComputeConstants& constants) {
  PowerDraw p;
  const double tdp = gpu.tdp.value;
  p.limit_w = power_limit_w > 0 ? std::min(power_limit_w, tdp) : tdp;
  const double demand = tdp * constants.get("power_demand_ratio");
  if (demand <= p.limit_w) {
    p.busy_w = demand;
  } else {
    // The controller lowers the clock to r; the board then draws demand x (s + (1-s) r^3), which is
    // the limit itself unless r sits at its floor (a limit below the static share): the board still
    // never exceeds the limit, the clock just cannot go lower (the compute model uses the floor).
    const double s = constants.get("power_static_fraction");
    const double r = power_limited_clock_ratio(p.limit_w / tdp, s, constants.get("power_demand_ratio"));
    p.busy_w = std::min(p.limit_w, demand * (s + (1.0 - s) * r * r * r));
  }
  p.idle_w = std::min(constants.get("idle_power_fraction") * tdp, p.limit_w);
  p.busy_w = std::max(p.busy_w, p.idle_w);
  return p;
}

}  // namespace clustersim::workloads
