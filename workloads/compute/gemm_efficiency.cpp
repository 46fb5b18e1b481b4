// GEMM efficiency (ComputeModel::gemm_efficiency*): the fraction of the sustained tensor rate a
// cuBLAS/CUTLASS GEMM reaches from its shape, through tile and wave quantisation over the SMs, the
// per-tile prologue / epilogue against the main loop's reduction depth, the wave's epilogue store
// of its C tiles through HBM, and the fixed per-tile costs that weigh more when the main loop runs
// at the fp8 or nvfp4 rate; times the GPU's measured matmul throughput relative to the A100 anchor
// (measured_matmul.h).
#include "workloads/compute/compute_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace clustersim::workloads {
namespace {

double ceil_div(double a, double b) { return std::ceil(a / b); }

}  // namespace

// Tile-and-wave utilisation x k-depth efficiency x gemm_eff_max.
//   tiles = ceil(m/tm) ceil(n/tn) batch, waves = ceil(tiles / SMs),
//   utilisation = m n batch / (waves SMs tm tn)   -- padding in the last tile row/column and the
//                                                    idle SMs of the last wave, in one ratio
// The kernel picks the tile among (tm,tn), (tm,tn/2), (tm/2,tn/2) that maximises utilisation x
// (intensity(tile)/intensity(tm,tn))^gemm_small_tile_exponent: small GEMMs take small tiles to fill
// the SMs, at the cost of more operand traffic per FLOP. k efficiency = k / (k + gemm_k_half +
// k_store), k_store the epilogue store (epilogue_store_k) at the GEMM's main-loop rate.
double ComputeModel::gemm_efficiency(double m, double n, double k, double batch) const {
  const double k_store = epilogue_store_k(matmul_peak(OpCost{}) * (clock_ratio_ * sm_fraction_));
  return gemm_efficiency_on(m, n, k, batch, sms_, k_store);
}

// The epilogue store of a wave of output tiles, in elements of reduction depth (see the constant
// gemm_epilogue_store_share). Per tile the main loop runs 2 tm tn k FLOPs at the SM's share of
// `tensor_rate` x gemm_eff_max; the wave's SMs then write SMs x tm x tn x C-bytes at the streaming
// HBM bandwidth. The store equals the main loop at
//   k_store = C-bytes x tensor_rate x gemm_eff_max / (2 x HBM bandwidth x hbm_stream_eff),
// tile sizes and SM count cancelling: a GPU whose tensor rate outgrew its HBM bandwidth (Hopper,
// fp8, nvfp4) pays relatively more per tile. C is written at the activation element size (bf16
// under fp8 and nvfp4). NOT counted: the fp32 main_grad read-modify-write of weight-gradient GEMMs
// under gradient-accumulation fusion (docs/validation.md, branch dense). Blackwell's GEMMs overlap
// the store with the next tile's MMA (accumulators in Tensor Memory): its own share, 0.
double ComputeModel::epilogue_store_k(sim::FlopsPerSec tensor_rate) const {
  return gemm_epilogue_store_k(constants_, gpu_.compute_capability, memory_bandwidth(), activation_bytes(precision_),
                               tensor_rate);
}

double gemm_epilogue_store_k(const ComputeConstants& constants, int compute_capability, sim::BytesPerSec hbm,
                             double c_bytes, sim::FlopsPerSec tensor_rate) {
  const double bandwidth = hbm.value * constants.get("hbm_stream_eff");
  if (bandwidth <= 0) return 0.0;
  const int cc = compute_capability;
  const char* share = cc >= 100 && cc < 200 ? "gemm_epilogue_store_share_sm100" : "gemm_epilogue_store_share";
  return constants.get(share) * c_bytes * tensor_rate.value * constants.get("gemm_eff_max") / (2.0 * bandwidth);
}

// Tile and wave quantization over `sms` SMs (fewer than the GPU's while a collective holds some).
// Times measured_matmul_ratio: the GPU's measured matmul throughput against the shape model, over
// the same on the A100 the clock was fitted on (measured_matmul.h).
double ComputeModel::gemm_efficiency_on(double m, double n, double k, double batch, double sms, double k_store) const {
  return std::min(1.0, gemm_shape_efficiency(constants_, m, n, k, batch, sms, k_store) * matmul_measured_ratio_);
}

double gemm_shape_efficiency(const ComputeConstants& constants, double m, double n, double k, double batch, double sms,
                             double k_store) {
  if (m <= 0 || n <= 0 || k <= 0) return 1.0;
  batch = std::max(batch, 1.0);
  sms = std::max(sms, 1.0);
  const double tm0 = constants.get("gemm_tile_m"), tn0 = constants.get("gemm_tile_n");
  const double exponent = constants.get("gemm_small_tile_exponent");
  const double intensity0 = tm0 * tn0 / (tm0 + tn0);
  double best = 0.0;
  const std::array<std::pair<double, double>, 3> tiles = {{{tm0, tn0}, {tm0, tn0 / 2}, {tm0 / 2, tn0 / 2}}};
  for (const auto& [tm, tn] : tiles) {
    const double count = ceil_div(m, tm) * ceil_div(n, tn) * batch;
    const double waves = ceil_div(count, sms);
    const double utilisation = m * n * batch / (waves * sms * tm * tn);
    const double intensity = tm * tn / (tm + tn);
    best = std::max(best, utilisation * std::pow(intensity / intensity0, exponent));
  }
  const double k_eff = k / (k + constants.get("gemm_k_half") + k_store);
  return std::clamp(constants.get("gemm_eff_max") * best * k_eff, 1e-6, 1.0);
}

double ComputeModel::gemm_efficiency(const OpCost& op) const {
  if (!op.is_matmul()) return 1.0;
  return gemm_efficiency(op.m, op.n, op.k, op.batch);
}

// fp8_gemm_eff_ratio r says a twice-faster main loop makes the fixed per-tile costs (prologue,
// epilogue, scales) weigh more. With a bf16 tile = main loop L + fixed F and x = F / L, fp8 runs
// at (1 + x) / (1 + 2x) = r of the bf16 efficiency, so x = (1 - r) / (2r - 1); NVFP4's main loop
// is L / q with q the GPU's own dense FP4 / BF16 peak ratio, giving (1 + x) / (1 + q x): q = 4 on
// B200 / GB200 (0.75 at r = 0.9), 6 on B300 / GB300 (0.64), whose FP4 rate is three times their
// FP8 one. No new constant: the fp8 one's mechanism carried one format further, at the rate the
// datasheet gives that format. Transformer Engine's GEMM profiling guide (B300, pre-quantized
// kernels of a 5B layer, `validate --gemm`) measures NVFP4 at 3.48x BF16 where a fixed q = 4
// gave 4.47x and q = 6 gives 3.84x.
// MXFP8 GEMMs (block scaling: an fp8 format under fp8_block_scale_bytes_per_element > 0, and the
// linears an nvfp4 recipe keeps in fp8, which run MXFP8) run at mxfp8_gemm_eff_ratio of the
// per-tensor fp8 kernel: the block-scaled MMA loads an E8M0 scale per 32 elements of A and B beside
// the data (the same guide: 7.161 vs 6.812 ms for the layer's twelve GEMMs on the B300).
double ComputeModel::low_precision_gemm_eff(const OpCost& op) const {
  const topology::Precision format = linear_format(op);
  const double ratio = constants_.get("fp8_gemm_eff_ratio");
  if (format == topology::Precision::Fp8) return ratio * (fp8_linears_mxfp8() ? constants_.get("mxfp8_gemm_eff_ratio") : 1.0);
  if (format != topology::Precision::Nvfp4) return 1.0;
  const double x = ratio > 0.5 ? (1.0 - ratio) / (2.0 * ratio - 1.0) : 1e9;
  const double bf16 = gpu_.bf16.value > 0 ? gpu_.bf16.value : gpu_.fp16.value;
  const double q = bf16 > 0 && gpu_.fp4.value > 0 ? std::max(2.0, gpu_.fp4.value / bf16) : 4.0;
  return (1.0 + x) / (1.0 + q * x);
}

}  // namespace clustersim::workloads
