// Board power under a power limit: a busy GPU draws min(demand, limit), never more than the limit;
// idle power is a fixed share of TDP, also capped.
#include <doctest/doctest.h>

#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/compute/power_model.h"

using namespace clustersim;
using workloads::ComputeConstants;
using workloads::power_draw;

TEST_CASE("workloads::power_draw: without a limit a busy H100 draws its TDP and an idle one 30% of it") {
  const topology::GpuSpec& h100 = *topology::find_gpu("h100-sxm5-80gb");  // TDP 700 W
  const workloads::PowerDraw p = power_draw(h100, 0.0, ComputeConstants{});
  CHECK(p.limit_w == doctest::Approx(700.0));
  CHECK(p.busy_w == doctest::Approx(700.0));  // power_demand_ratio 1: dense GEMMs run at the limit
  CHECK(p.idle_w == doctest::Approx(210.0));
  CHECK(p.at_busy_share(0.5) == doctest::Approx(455.0));
  CHECK(p.at_busy_share(2.0) == doctest::Approx(700.0));  // shares clamp to [0, 1]
}

TEST_CASE("workloads::power_draw: under a 500 W limit a busy H100 draws exactly the limit, never more") {
  const topology::GpuSpec& h100 = *topology::find_gpu("h100-sxm5-80gb");
  for (double limit : {650.0, 500.0, 400.0, 300.0, 250.0, 150.0}) {
    const workloads::PowerDraw p = power_draw(h100, limit, ComputeConstants{});
    INFO("limit ", limit, " W: busy ", p.busy_w, " W, idle ", p.idle_w, " W");
    CHECK(p.busy_w <= limit + 1e-9);
    CHECK(p.idle_w <= limit + 1e-9);
    CHECK(p.at_busy_share(1.0) <= limit + 1e-9);
  }
  // 500 W: r = cbrt((500/700 - 0.42) / 0.58) = 0.7972, and 700 (0.42 + 0.58 r^3) = 500 W.
  CHECK(power_draw(h100, 500.0, ComputeConstants{}).busy_w == doctest::Approx(500.0));
  CHECK(workloads::power_limited_clock_ratio(500.0 / 700.0, 0.42, 1.0) == doctest::Approx(0.7972).epsilon(1e-3));
}

TEST_CASE("workloads::power_draw: energy per unit of work falls under a moderate limit") {
  // Compute-bound work W at clock r takes W / r; energy = busy power x time. 500 W: 500 / 0.7972 =
  // 627 J per unit against 700 at the TDP (10% less); the static share makes deep caps less useful.
  const topology::GpuSpec& h100 = *topology::find_gpu("h100-sxm5-80gb");
  const ComputeConstants c;
  const auto energy_per_work = [&](double limit) {
    const double r = workloads::power_limited_clock_ratio(limit / 700.0, 0.42, 1.0);
    return power_draw(h100, limit, c).busy_w / r;
  };
  CHECK(energy_per_work(500.0) < energy_per_work(700.0));
  CHECK(energy_per_work(600.0) < energy_per_work(700.0));
  CHECK(energy_per_work(500.0) == doctest::Approx(627.2).epsilon(1e-3));
}
