// The compute model's construction and what it is built from (compute_model.h says what it models):
// the GPU's or MIG slice's SMs, memory and bandwidth, the clock ratio, the datasheet peaks per
// precision, the optimizer step. Its parts live in one file per mechanism:
//   compute_constants.cpp  the named constants with their sources (ComputeConstants);
//   sustained_clock.cpp    the clock under a power limit and Blackwell's power density;
//   gemm_efficiency.cpp    tiles, waves, k depth, epilogue store, fp8 / nvfp4 per-tile costs;
//   op_roofline.cpp        one op's device time: FLOPs and bytes rooflines, attention, casts, launches;
//   op_stream_time.cpp     a stream of ops: the host's issuing, host syncs, launch blocking, CUDA graphs.
#include "workloads/compute/compute_model.h"

#include <algorithm>
#include <utility>

#include "sim/check.h"
#include "workloads/compute/measured_matmul.h"
#include "workloads/model/module_precision.h"

namespace clustersim::workloads {

// --- free functions ----------------------------------------------------------------------------

int activation_bytes(topology::Precision p) {
  return p == topology::Precision::Fp32 || p == topology::Precision::Tf32 ? 4 : 2;
}

// --- ComputeModel -------------------------------------------------------------------------------

ComputeModel::ComputeModel(const topology::GpuSpec& gpu, const topology::ClusterSpec& cluster,
                           topology::Precision precision, ComputeConstants constants)
    : gpu_(topology::gpu_as_configured(gpu, cluster)), precision_(precision), tf32_(cluster.tf32), constants_(std::move(constants)) {
  sms_ = gpu_.sms > 0 ? gpu_.sms : 1;
  sm_fraction_ = 1.0;
  mem_fraction_ = 1.0;
  memory_capacity_ = topology::gpu_memory_capacity(gpu_, cluster.mig);
  if (!cluster.mig.empty()) {
    const topology::MigSlice slice = topology::resolve_mig(gpu_, cluster.mig);
    sms_ = slice.sms;
    sm_fraction_ = static_cast<double>(slice.sms) / std::max(gpu_.sms, 1);
    mem_fraction_ = slice.memory_slices / 8.0;
  }
  double power = 1.0;
  if (cluster.power_limit_w > 0 && gpu_.tdp.value > 0)
    power = power_limited_clock_ratio(cluster.power_limit_w / gpu_.tdp.value,
                                      constants_.get("power_static_fraction"),
                                      constants_.get("power_demand_ratio"));
  clock_ratio_ = constants_.get("sustained_clock_ratio") * power * power_density_clock_ratio(gpu_, constants_);
  matmul_measured_ratio_ = measured_matmul_ratio(gpu_, constants_);
}

sim::FlopsPerSec ComputeModel::datasheet_peak() const {
  using topology::Precision;
  if (precision_ == Precision::Tf32 && !tf32_) return gpu_.fp32;
  return gpu_.peak(precision_);
}

sim::FlopsPerSec ComputeModel::sustained_peak() const { return datasheet_peak() * (clock_ratio_ * sm_fraction_); }

sim::BytesPerSec ComputeModel::memory_bandwidth() const { return gpu_.memory_bandwidth * mem_fraction_; }

sim::BytesPerSec ComputeModel::pointwise_bandwidth() const {
  return memory_bandwidth() * (constants_.get("hbm_stream_eff") * constants_.get("pointwise_mem_eff"));
}

sim::FlopsPerSec ComputeModel::matmul_peak(const OpCost& op) const {
  using topology::Precision;
  switch (precision_) {
    case Precision::Fp8:
    case Precision::Nvfp4:
      if (linear_format(op) == Precision::Fp8) return gpu_.fp8;
      if (linear_format(op) == Precision::Nvfp4) return gpu_.fp4;
      return gpu_.bf16.value > 0 ? gpu_.bf16 : gpu_.fp16;
    case Precision::Tf32: return tf32_ ? gpu_.peak(Precision::Tf32) : gpu_.fp32;
    default: return gpu_.peak(precision_);
  }
}

// An fp8-eligible linear of an fp8 / nvfp4 run runs at the run's format unless a per-module recipe
// keeps it in bf16 or drops it from nvfp4 to fp8 (OpCost::linear_precision, model/module_precision.h);
// every other matmul is unquantized (Bf16 here: the 16-bit rate).
topology::Precision ComputeModel::linear_format(const OpCost& op) const {
  return workloads::linear_format(op, precision_);
}

double ComputeModel::sustained_clock_mhz() const {
  const double reference = gpu_.tensor_clock_mhz > 0 ? gpu_.tensor_clock_mhz : gpu_.boost_clock_mhz;
  return reference * clock_ratio_;
}

// Fused Adam (apex/Megatron multi-tensor apply) per parameter, mixed precision with fp32 master
// weights: reads fp32 master 4 + fp32 main grad 4 + m 4 + v 4, writes master 4 + m 4 + v 4 + the
// 16-bit model copy 2 = 30 bytes. Without master weights (fp32 training, or pure-bf16 states):
// params, grads and states at 4 bytes, no copy: reads 16, writes 12 = 28. SGD with momentum:
// reads p, g, momentum, writes p, momentum (+ copy); plain SGD: reads p, g, writes p (+ copy).
double ComputeModel::optimizer_bytes_per_param(Optimizer opt, bool fp32_master_weights) {
  const double copy = fp32_master_weights ? 2.0 : 0.0;
  switch (opt) {
    case Optimizer::Adam: return 28.0 + copy;
    case Optimizer::SgdMomentum: return 20.0 + copy;
    case Optimizer::Sgd: return 12.0 + copy;
  }
  return 28.0 + copy;
}

// A per-parameter loop (Composer DecoupledAdamW.adamw at v0.17.2, composer/optim/
// decoupled_weight_decay.py), fp32 parameter, gradient and moments, each kernel reading its operands
// and writing its result in full (bytes per parameter):
//   param.mul_(1 - decay)                        8   (only with weight decay)
//   exp_avg.mul_(beta1).add_(grad)               8 + 12
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad)  8 + 12 (grad read once from DRAM)
//   denom = (exp_avg_sq.sqrt() / c).add_(eps)    8 + 8 + 8
//   param.addcdiv_(exp_avg, denom)               16
// = 80 (88 with weight decay), against the fused kernel's 28-30. No 16-bit copy: the loop updates
// the fp32 parameters, and the 16-bit ones are cast elsewhere (autocast, FSDP's unshard).
// DecoupledSGDW.sgdw: buf.mul_(m).add_(g) 8 + 12, param.add_(g) 12, weight decay 8.
double ComputeModel::per_parameter_optimizer_bytes(Optimizer opt, bool weight_decay) {
  const double decay = weight_decay ? 8.0 : 0.0;
  switch (opt) {
    case Optimizer::Adam: return 80.0 + decay;
    case Optimizer::SgdMomentum: return 32.0 + decay;
    case Optimizer::Sgd: return 12.0 + decay;
  }
  return 80.0 + decay;
}

sim::SimTime ComputeModel::optimizer_step_time(double params_on_gpu, Optimizer opt, bool fp32_master_weights,
                                               OptimizerKernels kernels, bool weight_decay) const {
  CLUSTERSIM_CHECK(params_on_gpu >= 0, "negative parameter count");
  if (params_on_gpu <= 0) return sim::SimTime::zero();
  const bool loop = kernels == OptimizerKernels::PerParameter;
  const double per_param =
      loop ? per_parameter_optimizer_bytes(opt, weight_decay) : optimizer_bytes_per_param(opt, fp32_master_weights);
  const sim::Bytes bytes{params_on_gpu * per_param};
  const double seconds = loop ? bytes / pointwise_bandwidth() : bytes / (memory_bandwidth() * constants_.get("hbm_stream_eff"));
  return sim::SimTime::from_seconds(seconds + constants_.get("kernel_launch_us") * 1e-6);
}

}  // namespace clustersim::workloads
