// The matmul throughput measured on each GPU, against what the GEMM shape model gives it, relative
// to the A100 on which the training clock was fitted.
//
// sustained_clock_ratio is one fraction of the quoted tensor clock for every GPU, fitted on A100
// runs, and gemm_eff_max one main-loop efficiency. A dense GEMM does not reach the same fraction of
// peak on every GPU: the maximum achievable matmul FLOPS (MAMF, the best of a brute-force search
// over shapes, bf16) is 86.9% of the datasheet peak on an A100 SXM (400 W) but 80.3% on an H100
// SXM (700 W), where the shape model gives both about the same fraction. Whether the H100 holds
// less of its quoted clock under a dense load or its kernels less of their main loop, the
// measurement does not say; it fixes the product. ComputeModel multiplies every GEMM's efficiency
// by (measured / modelled at this GPU's best shape) / (the same on the A100 anchor), raised to
// measured_matmul_share. Other kernels (attention, the Mamba scan, pointwise) keep their own
// measurements. A GPU without a measurement of its own (or of its die at the same power) takes the
// geometric mean of the ratios of the measured GPUs of its SM design (same compute capability):
// the ratio is how far the shape and clock model sits from that tensor core and its cuBLAS, which
// the SKUs of one design share (Blackwell: B200 1.03, B300 1.05, GB200 1.05 -> GB300 1.05; Hopper:
// H100 0.93 -> H100 PCIe / NVL, H20). A design nobody measured keeps 1.
#pragma once

#include <string_view>

#include "topology/catalog.h"

namespace clustersim::workloads {

class ComputeConstants;

// One MAMF measurement: TFLOP/s (bf16, dense) and the shape it was reached at.
struct MeasuredMatmul {
  std::string_view gpu;          // catalog id it applies to
  double tflops;                 // measured, bf16 inputs
  int m, n, k;                   // the best shape MxNxK the search found
};

// The measurement that applies to a catalog GPU id, or nullptr.
const MeasuredMatmul* measured_matmul(std::string_view gpu_id);

// The modelled bf16 throughput (FLOP/s) of one m x n x k GEMM on the catalog GPU at the shared
// sustained_clock_ratio (and Blackwell's power density), without the measured correction.
double modelled_matmul_flops(const topology::GpuSpec& gpu, const ComputeConstants& constants, int m, int n, int k);

// (measured / modelled on this GPU) / (measured / modelled on the A100 SXM anchor), raised to
// measured_matmul_share; without a row of its own, the mean over its SM design (above), else 1. A factor on GEMM efficiency. Uses the catalog entry of gpu.id, so a
// [cluster.gpu_overrides] peak does not rescale it.
double measured_matmul_ratio(const topology::GpuSpec& gpu, const ComputeConstants& constants);

}  // namespace clustersim::workloads
