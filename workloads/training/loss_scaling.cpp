// fp16 dynamic loss scaling, step by step (see loss_scaling.h).
#include "workloads/training/loss_scaling.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/rng.h"

namespace clustersim::workloads {
namespace {

constexpr long long kMaxSteps = 50'000'000;
constexpr int kCheckpoints = 10;

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// A standard normal draw (Box-Muller on two uniforms; our own, so every platform agrees).
double standard_normal(sim::Rng& rng) {
  const double u1 = 1.0 - rng.uniform();  // (0, 1]
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

double overflow_probability(const AmpSpec& amp, double scale) {
  const double z = (std::log(kFp16Max / scale) - std::log(amp.grad_max_median)) / amp.grad_max_sigma;
  return 1.0 - normal_cdf(z);
}

double underflow_fraction(const AmpSpec& amp, double scale) {
  const double z = (std::log(kFp16MinSubnormal / scale) - std::log(amp.grad_median)) / amp.grad_sigma;
  return normal_cdf(z);
}

LossScaleResult simulate_loss_scaling(const AmpSpec& amp, long long successful_steps) {
  LossScaleResult r;
  sim::Rng rng = sim::Rng::substream(amp.seed, "amp.grad_max");
  double scale = amp.init_scale;
  int clean_in_a_row = 0;
  double log2_sum = 0;
  const long long checkpoint_every = std::max(1LL, successful_steps / kCheckpoints);
  long long next_checkpoint = 0;  // successful steps at which the next checkpoint is taken
  const double log_median = std::log(amp.grad_max_median);
  while (r.successful_steps < successful_steps && r.total_steps() < kMaxSteps) {
    const long long step = r.total_steps();
    if (r.successful_steps >= next_checkpoint) {
      r.checkpoints.emplace_back(step, scale);
      next_checkpoint += checkpoint_every;
    }
    log2_sum += std::log2(scale);
    const double grad_max = std::exp(log_median + amp.grad_max_sigma * standard_normal(rng));
    if (scale * grad_max > kFp16Max) {  // inf in the scaled gradients: skip the update
      ++r.skipped_steps;
      if (r.first_skip_step < 0) r.first_skip_step = step;
      if (amp.dynamic) {
        scale *= amp.backoff_factor;
        ++r.backoffs;
      }
      clean_in_a_row = 0;
      continue;
    }
    ++r.successful_steps;
    if (amp.dynamic && ++clean_in_a_row == amp.growth_interval) {
      scale *= amp.growth_factor;
      ++r.growths;
      clean_in_a_row = 0;
    }
  }
  r.final_scale = scale;
  r.mean_log2_scale = r.total_steps() > 0 ? log2_sum / static_cast<double>(r.total_steps()) : std::log2(scale);
  r.underflow_fraction = underflow_fraction(amp, std::exp2(r.mean_log2_scale));
  return r;
}

}  // namespace clustersim::workloads
