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
  // Volta: every V100 part is the GV100 die on TSMC 12FFN; the reference is the SXM2 (300 W) its
  // 125 TF peak is quoted for, so the DGX-2 (350 W) and DGX-2H (450 W) SXM3 parts hold
  // cbrt(TDP / 300 W) x its clock (energy per FLOP identical: the same die).
  const int cc = gpu.compute_capability;
  const bool blackwell = cc >= 100 && cc < 200, volta = cc == 70;
  if (!blackwell && !volta) return 1.0;
  const topology::GpuSpec* ref = topology::find_gpu(blackwell ? "h100-sxm5-80gb" : "v100-sxm2-32gb");
  const double lanes = tensor_flops_per_clock(gpu);
  if (ref == nullptr || lanes <= 0 || gpu.tdp.value <= 0 || gpu.tensor_clock_mhz <= 0) return 1.0;
  const double energy = blackwell ? constants.get("lane_energy_ratio_sm100") : 1.0;
  const double budget = (gpu.tdp.value / ref->tdp.value) * (tensor_flops_per_clock(*ref) / lanes) / energy;
  // No GPU runs above the clock its peak is quoted at: the ratio stops at 1 / sustained_clock_ratio.
  const double cap = 1.0 / constants.get("sustained_clock_ratio");
  return std::min(cap, ref->tensor_clock_mhz * std::cbrt(budget) / gpu.tensor_clock_mhz);
}

}  // namespace clustersim::workloads
