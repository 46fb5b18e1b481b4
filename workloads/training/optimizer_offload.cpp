// ZeRO-Offload's optimizer step: gradients down, CPU Adam, parameters up (optimizer_offload.h).
#include "workloads/training/optimizer_offload.h"

#include <algorithm>

#include "sim/check.h"
#include "workloads/compute/compute_model.h"

namespace clustersim::workloads {

OffloadStep offload_step(double params, const TrainingSpec& training, int gpus_per_host, sim::BytesPerSec pcie,
                         double cpu_adam_params_per_s) {
  CLUSTERSIM_CHECK(params >= 0 && pcie.value > 0 && cpu_adam_params_per_s > 0, "bad offload step inputs");
  OffloadStep s;
  // DeepSpeed copies the reduced gradients in the training dtype (fp16/bf16; fp32 training: 4 B)
  // and sends back the updated parameters in the same dtype.
  const double element = activation_bytes(training.precision);
  s.d2h_s = params * element / pcie.value;
  s.h2d_s = params * element / pcie.value;
  s.cpu_adam_s = params * std::max(1, gpus_per_host) / cpu_adam_params_per_s;
  s.pcie_bytes = 2.0 * params * element;
  return s;
}

}  // namespace clustersim::workloads
