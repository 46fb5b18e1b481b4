// The SM clock a GPU sustains: below TDP under a power limit, along a DVFS curve fitted to the Zeus
// NSDI'23 medians (power_limited_clock_ratio), and, on Blackwell, below the clock its peaks are
// quoted at because its TDP cannot feed its tensor lanes at that clock (power_density_clock_ratio).
// ComputeModel's constructor multiplies both into its clock ratio.
#include "workloads/compute/compute_model.h"

#include <algorithm>
#include <cmath>

namespace clustersim::workloads {

double power_limited_clock_ratio(double power_ratio, double static_fraction, double demand_ratio) {
  const double q = power_ratio / demand_ratio;
  if (q >= 1.0) return 1.0;
  const double dynamic = (q - static_fraction) / (1.0 - static_fraction);
  // Below the static floor the GPU cannot hold the cap at any clock; it idles at its lowest clock.
  return std::max(std::cbrt(std::max(dynamic, 0.0)), 0.05);
}

namespace {
// Tensor FLOPs per clock of the whole GPU (SMs x dense FLOP/clk/SM): the bf16 peak over the clock
// it is quoted at. 0 when the catalog knows no tensor clock.
double tensor_flops_per_clock(const topology::GpuSpec& g) {
  const double clock_mhz = g.tensor_clock_mhz > 0 ? g.tensor_clock_mhz : g.boost_clock_mhz;
  const double peak = g.bf16.value > 0 ? g.bf16.value : g.fp16.value;
  return clock_mhz > 0 ? peak / (clock_mhz * 1e6) : 0.0;
}
}  // namespace

// Dynamic power ~ tensor FLOP/clk x energy per FLOP x f x V^2 with V ~ f (the law
// power_limited_clock_ratio uses), so on one process the clock a GPU holds at its TDP is
//   f = f_ref x cbrt((TDP / TDP_ref) x (lanes_ref / lanes) / energy_ratio),
// the static share of the board power taken as the same fraction of TDP on both (it cancels). The
// reference is the H100 SXM (4N) with the sustained_clock_ratio every generation shares; Blackwell
// (4NP, the same process class) quotes its peaks at a clock its TDP does not hold under a dense
// load, so its sustained clock falls below sustained_clock_ratio x its quoted clock. Other
// generations keep their quoted clocks (1.0): Ampere is the fit's anchor and Hopper the reference.
double power_density_clock_ratio(const topology::GpuSpec& gpu, const ComputeConstants& constants) {
  if (gpu.compute_capability < 100 || gpu.compute_capability >= 200) return 1.0;
  const topology::GpuSpec* ref = topology::find_gpu("h100-sxm5-80gb");
  const double lanes = tensor_flops_per_clock(gpu);
  if (ref == nullptr || lanes <= 0 || gpu.tdp.value <= 0 || gpu.tensor_clock_mhz <= 0) return 1.0;
  const double budget = (gpu.tdp.value / ref->tdp.value) * (tensor_flops_per_clock(*ref) / lanes) /
                        constants.get("lane_energy_ratio_sm100");
  return std::min(1.0, ref->tensor_clock_mhz * std::cbrt(budget) / gpu.tensor_clock_mhz);
}

}  // namespace clustersim::workloads
