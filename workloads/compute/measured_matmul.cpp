// Maximum achievable matmul FLOPS per GPU (see measured_matmul.h). Source of every row:
// stas00/ml-engineering, compute/accelerator/README.md at b9e29720, "Maximum Achievable Matmul
// FLOPS comparison table", BF16: mamf-finder.py, the mean of 100 iterations after 50 warm-ups at
// each shape of a brute-force search; the torch build is the table's. The table's own caveat: each
// row is the best shape found on that accelerator with its software of the day, a rough estimate.
#include "workloads/compute/measured_matmul.h"

#include <array>
#include <cmath>

#include "workloads/compute/compute_model.h"

namespace clustersim::workloads {
namespace {

constexpr std::string_view kAnchor = "a100-sxm4-80gb";  // where sustained_clock_ratio was fitted

constexpr std::array<MeasuredMatmul, 10> kMeasured = {{
    // "NVIDIA A100 SXM 271.2 / 312, 86.9%, 1024x10240x5120, torch 2.6.0+cu126". The 40GB SXM4
    // part has the same die, clocks and 400 W; the A800 is the A100 die with NVLink cut to 400 GB/s.
    {"a100-sxm4-80gb", 271.2, 1024, 10240, 5120},
    {"a100-sxm4-40gb", 271.2, 1024, 10240, 5120},
    {"a800-sxm4-80gb", 271.2, 1024, 10240, 5120},
    // "NVIDIA A100 PCIe 252.9 / 312, 81.1%, 2048x5120x6144, torch 2.5.1+cu124" (the 300 W part).
    {"a100-pcie-80gb", 252.9, 2048, 5120, 6144},
    // "NVIDIA H100 SXM 794.5 / 989, 80.3%, 2048x2048x13312, torch 2.7.0+cu126; H200 is the same".
    // The H800 is the H100 SXM die at 700 W with NVLink cut to 400 GB/s.
    {"h100-sxm5-80gb", 794.5, 2048, 2048, 13312},
    {"h200-sxm-141gb", 794.5, 2048, 2048, 13312},
    {"h800-sxm5-80gb", 794.5, 2048, 2048, 13312},
    // "NVIDIA B200 SXM 1745.0 / 2250, 77.6%, 1792x16128x3072, torch 2.7.1+cu128".
    {"b200", 1745.0, 1792, 16128, 3072},
    // "NVIDIA B300 SXM 1769.0 / 2250, 78.6%, 12288x18432x1024, torch 2.9.1+cu130; same as B200".
    {"b300", 1769.0, 12288, 18432, 1024},
    // "NVIDIA GB200 SXM 1822.0 / 2500, 72.9%, 4096x9728x2048, torch 2.10.0.dev20250916+cu130".
    {"gb200", 1822.0, 4096, 9728, 2048},
}};

}  // namespace

const MeasuredMatmul* measured_matmul(std::string_view gpu_id) {
  for (const MeasuredMatmul& m : kMeasured)
    if (m.gpu == gpu_id) return &m;
  return nullptr;
}

double modelled_matmul_flops(const topology::GpuSpec& gpu, const ComputeConstants& constants, int m, int n, int k) {
  const double clock = constants.get("sustained_clock_ratio") * power_density_clock_ratio(gpu, constants);
  const sim::FlopsPerSec rate = gpu.bf16 * clock;
  const double k_store =
      gemm_epilogue_store_k(constants, gpu.compute_capability, gpu.memory_bandwidth, activation_bytes(topology::Precision::Bf16), rate);
  return rate.value * gemm_shape_efficiency(constants, m, n, k, 1.0, gpu.sms, k_store);
}

namespace {

// Measured over modelled bf16 throughput of one MAMF row on its catalog GPU.
double measured_over_modelled(const MeasuredMatmul& row, const topology::GpuSpec& gpu, const ComputeConstants& constants) {
  return row.tflops * 1e12 / modelled_matmul_flops(gpu, constants, row.m, row.n, row.k);
}

}  // namespace

double measured_matmul_ratio(const topology::GpuSpec& gpu, const ComputeConstants& constants) {
  const topology::GpuSpec* catalog = topology::find_gpu(gpu.id);
  const MeasuredMatmul* anchor = measured_matmul(kAnchor);
  const topology::GpuSpec* anchor_gpu = topology::find_gpu(kAnchor);
  if (catalog == nullptr || anchor == nullptr || anchor_gpu == nullptr) return 1.0;
  const double ref = measured_over_modelled(*anchor, *anchor_gpu, constants);  // the A100 anchor's
  double ratio = 1.0;
  if (const MeasuredMatmul* mine = measured_matmul(gpu.id)) {
    ratio = measured_over_modelled(*mine, *catalog, constants) / ref;
  } else {
    // No row of its own: the geometric mean over the measured parts of its SM design (the same
    // compute capability: one tensor core and one cuBLAS kernel family; the catalog keeps 100 for
    // Blackwell Ultra), each on its own catalog entry; 1 when none is measured (Volta, GA102,
    // Ada, CDNA).
    double log_sum = 0;
    int n = 0;
    for (const MeasuredMatmul& m : kMeasured) {
      const topology::GpuSpec* g = topology::find_gpu(m.gpu);
      if (g == nullptr || g->compute_capability != catalog->compute_capability) continue;
      log_sum += std::log(measured_over_modelled(m, *g, constants) / ref);
      ++n;
    }
    if (n > 0) ratio = std::exp(log_sum / n);
  }
  return std::pow(ratio, constants.get("measured_matmul_share"));
}

}  // namespace clustersim::workloads
