// fp16 loss scaling (torch.cuda.amp.GradScaler, apex/Megatron DynamicGradScaler): fp16 has a
// 5-bit exponent, so gradients are multiplied by a scale S before the backward pass. A step whose
// scaled gradients overflow (S x max|g| > 65504, the largest finite fp16) holds an inf/nan: its
// update is skipped and a dynamic scaler multiplies S by backoff_factor; after growth_interval
// clean steps in a row it multiplies S by growth_factor. Gradients below the smallest fp16
// subnormal (S x |g| < 2^-24) flush to zero (underflow). bf16, fp8 (with bf16 master) and fp32
// keep fp32's 8-bit exponent and need none of this (the loader refuses [amp] for them).
//
// The gradient model is an ASSUMPTION, stated so it can be changed ([amp] keys):
//   * the per-step max |g| (unscaled) is lognormal: ln max|g| ~ N(ln grad_max_median, grad_max_sigma);
//   * element magnitudes |g| are lognormal: ln |g| ~ N(ln grad_median, grad_sigma).
// Steps are drawn from a seeded substream (sim/rng.h), so a scenario always gives the same
// trajectory. Skipped steps cost a whole iteration each and make no progress, so time-to-train
// grows by total steps / successful steps.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace clustersim::workloads {

inline constexpr double kFp16Max = 65504.0;                 // largest finite fp16 (IEEE 754 binary16)
inline constexpr double kFp16MinSubnormal = 0x1.0p-24;      // smallest positive fp16 subnormal

struct AmpSpec {
  bool dynamic = true;            // loss_scale = "dynamic"; false: a static scale of init_scale
  double init_scale = 65536.0;    // 2^16, GradScaler's default
  double growth_factor = 2.0;     // GradScaler's defaults
  double backoff_factor = 0.5;
  int growth_interval = 2000;
  // Gradient-magnitude model (see above). Defaults: an estimate for a well-behaved LLM run, which
  // puts the equilibrium dynamic scale near 2^15..2^16 with a skip every few thousand steps.
  double grad_max_median = 0.05;
  double grad_max_sigma = 1.0;    // natural-log units
  double grad_median = 1e-6;
  double grad_sigma = 2.5;        // natural-log units
  long long steps = 0;            // successful steps to simulate; 0: from [training] tokens, else 10000
  std::uint64_t seed = 1;
};

struct LossScaleResult {
  long long successful_steps = 0;  // updates applied
  long long skipped_steps = 0;     // updates skipped: inf/nan in the scaled gradients
  int backoffs = 0, growths = 0;
  double final_scale = 0;
  double mean_log2_scale = 0;      // over all steps
  double underflow_fraction = 0;   // share of gradient elements flushed to zero, at the mean scale
  // (step, scale before the step) at checkpoints: the first step and each tenth of the run.
  std::vector<std::pair<long long, double>> checkpoints;
  long long first_skip_step = -1;

  long long total_steps() const { return successful_steps + skipped_steps; }
  double skipped_per_1000() const {
    return total_steps() > 0 ? 1000.0 * static_cast<double>(skipped_steps) / static_cast<double>(total_steps()) : 0.0;
  }
  // Time-to-train multiplier: every step costs an iteration, only successful ones count.
  double time_factor() const {
    return successful_steps > 0 ? static_cast<double>(total_steps()) / static_cast<double>(successful_steps) : 1.0;
  }
};

// Runs the scaler until `successful_steps` updates have been applied (at most 50 M steps in all,
// then the run stops where it is).
LossScaleResult simulate_loss_scaling(const AmpSpec& amp, long long successful_steps);

// P(scale x max|g| > fp16 max) for one step at `scale` under the spec's gradient model.
double overflow_probability(const AmpSpec& amp, double scale);
// Share of gradient elements with scale x |g| < 2^-24.
double underflow_fraction(const AmpSpec& amp, double scale);

}  // namespace clustersim::workloads
