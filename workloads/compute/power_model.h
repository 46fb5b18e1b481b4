// Board power of a GPU in training, under its power limit: what `run` charges as energy and what
// `--dmon` shows as POWER (DCGM field 155).
//
// A busy GPU (dense GEMMs) would draw `power_demand_ratio` x TDP at its unconstrained clock. Under a
// power limit L below that, the board's power controller lowers the SM clock until the rolling
// average power is L (shared/reference/hardware.md §4.3: DVFS, clock event reason SW_POWER_CAP);
// power_limited_clock_ratio (compute_model.h) gives that clock, P/P_max = s + (1-s)(f/f_max)^3. So a
// busy GPU draws min(demand, L) watts, never more than L, and the compute it does per second falls
// by the clock ratio. An idle-but-allocated GPU draws idle_power_fraction x TDP (a model constant; also capped at L).
// Averaged over a sample or an iteration with a busy share u in [0, 1]:
//   P(u) = idle_w + (busy_w - idle_w) u.
// Energy per token under a cap is then usually lower: power falls faster than the clock (cubic),
// until the static share s dominates.
#pragma once

#include "topology/catalog.h"

namespace clustersim::workloads {

class ComputeConstants;

struct PowerDraw {
  double limit_w = 0;  // the enforced power limit: the scenario's power_limit_w, else the TDP
  double busy_w = 0;   // a GPU running dense kernels, after the limit
  double idle_w = 0;   // a GPU waiting (communication, bubbles), after the limit

  // Average board power with a busy share u (clamped to [0, 1]).
  double at_busy_share(double u) const;
};

// `power_limit_w` <= 0 means the GPU's TDP. Reads power_static_fraction, power_demand_ratio and
// idle_power_fraction.
PowerDraw power_draw(const topology::GpuSpec& gpu, double power_limit_w, const ComputeConstants& constants);

}  // namespace clustersim::workloads
