// Board power of a GPU in training, under its power limit: what `run` charges as energy and what
// `--dmon` shows as POWER (DCGM field 155).
//
// A busy GPU (dense GEMMs) would draw `power_demand_ratio` x TDP at its unconstrained clock. Under a
// power limit L below that, the board's power controller lowers the SM clock until the rolling
// average power is L (shared/reference/hardware.md §4.3: DVFS, clock event reason SW_POWER_CAP);
// power_limited_clock_ratio (compute_model.h) gives that clock, P/P_max = s + (1-s)(f/f_max)^3. So a
// busy GPU draws min(demand, L) watts, never more than L, and the compute it does per second falls
// by the clock ratio. An idle-but-allocated GPU draws kIdlePowerFraction x TDP (also capped at L).
// Averaged over a sample or an iteration with a busy share u in [0, 1]:
//   P(u) = idle_w + (busy_w - idle_w) u.
// Energy per token under a cap is then usually lower: power falls faster than the clock (cubic),
// until the static share s dominates.
#pragma once

#include "topology/catalog.h"

namespace clustersim::workloads {

class ComputeConstants;

// Board power of an idle-but-allocated GPU (CUDA context, HBM refresh, clocks up between kernels) /
// TDP. Estimate: nvidia-smi shows ~60-100 W of 400 W on an idle allocated A100 and ~120 W of 700 W
// on an H100 between steps; 0.30 is at the high end, since training never idles at low clocks
// (UNSURE; no published measurement in shared/reference).
inline constexpr double kIdlePowerFraction = 0.30;

struct PowerDraw {
  double limit_w = 0;  // the enforced power limit: the scenario's power_limit_w, else the TDP
  double busy_w = 0;   // a GPU running dense kernels, after the limit
  double idle_w = 0;   // a GPU waiting (communication, bubbles), after the limit

  // Average board power with a busy share u (clamped to [0, 1]).
  double at_busy_share(double u) const;
};

// `power_limit_w` <= 0 means the GPU's TDP. Reads power_static_fraction and power_demand_ratio.
PowerDraw power_draw(const topology::GpuSpec& gpu, double power_limit_w, const ComputeConstants& constants);

}  // namespace clustersim::workloads
