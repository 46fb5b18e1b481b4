// One op's device time (ComputeModel::op_time): the larger of its FLOPs at the tensor or FP32
// rate (GEMMs at their shape's efficiency, flash attention at its generation's kernel efficiency,
// Mamba's scan at its own) and its bytes at the HBM streaming rate, with the SMs and HBM bandwidth
// a collective beside it leaves; plus the fp8 / nvfp4 operand cast and the kernel launch gaps.
#include "workloads/compute/compute_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include "sim/check.h"

namespace clustersim::workloads {
namespace {
bool is_flash(const OpCost& op) { return op.kind == OpKind::Attention && op.name == "flash_attention"; }
// mamba_ssm's SSD Triton kernels (model/mamba_ops.h: every op named "ssd_...").
bool is_ssd_kernel(const OpCost& op) { return op.name.starts_with("ssd_"); }

// The constant(s) that give the fused attention kernel's efficiency on a compute capability. An
// Ampere-generation kernel (Fa2, FlashAttnTriton) is the generation's own up to Ada; on Hopper
// FlashAttention-2 has its own measured constant (mma.sync without wgmma / TMA), and the 2022
// Triton kernel runs at its Ampere efficiency times the share of Hopper's tensor rate that mma.sync
// reaches per SM and clock; Blackwell has neither (the scenario refuses them there), so they fall
// back to the Hopper figures.
bool ampere_kernel_on_hopper_rate(int cc, AttentionKernel kernel) {
  return kernel == AttentionKernel::FlashAttnTriton && cc >= 90 && cc < 200;
}

const char* attention_efficiency_constant(int cc, AttentionKernel kernel) {
  if (ampere_kernel_on_hopper_rate(cc, kernel)) return "flash_attention_eff x mma_sync_fraction_sm90";
  if (kernel == AttentionKernel::FlashAttnTriton) return "flash_attention_eff";
  if (kernel == AttentionKernel::Fa2 && cc >= 90 && cc < 200) return "flash_attention_eff_fa2_sm90";
  if (cc >= 100 && cc < 200) return "flash_attention_eff_sm100";
  if (cc >= 90 && cc < 100) return "flash_attention_eff_sm90";
  return "flash_attention_eff";
}
}  // namespace

// The fused attention kernel of the GPU's generation: FlashAttention-2 era kernels up to Ampere
// and Ada, FlashAttention-3 / cuDNN on Hopper, cuDNN on Blackwell; or an Ampere-generation kernel
// where the stack predates the GPU's own (AttentionKernel::Fa2, AttentionKernel::FlashAttnTriton).
// compute_capability 942 is AMD CDNA3 (no Hopper-class kernel assumed: the Ampere-era value).
double ComputeModel::attention_efficiency(AttentionKernel kernel) const {
  if (ampere_kernel_on_hopper_rate(gpu_.compute_capability, kernel))
    return constants_.get("flash_attention_eff") * constants_.get("mma_sync_fraction_sm90");
  return constants_.get(attention_efficiency_constant(gpu_.compute_capability, kernel));
}

// FlashAttention's softmax evaluates flash_exps_per_pair exponentials per query-key pair and pass
// on the SM's special-function units (GpuSpec::sfu_exp_per_clk per clock), while the pair's tensor
// work is 4 d FLOPs forward (QK^T and PV over head dim d) and flash_bwd_flops_factor x 8 d backward
// at T = dense peak / (SMs x tensor clock) FLOPs per clock per SM. The exponentials do not shrink
// with d, so a narrow head spends relatively more of its time on them (FlashAttention-4, Zadouri
// et al. 2026: on B200 at d 128 the exponentials already take as long as the matmuls). Taking the
// two in series per pair, t(d) ~ tensor(d) + exp, the kernel's time over its FLOPs at the
// efficiency measured at d_ref = flash_eff_ref_head_dim is (1 + r(d)) / (1 + r(d_ref)) with
// r(d) = exp cycles / tensor cycles per pair. H100 forward: r(128) = 0.5, r(64) = 1, so d 64 runs
// at 0.75 of d 128's FLOP rate: FlashAttention-3's own H100 BF16 benchmark (Shah et al. 2024,
// Fig. 5, non-causal, seq 4k) has 476 / 638 TF/s = 0.75 (cuDNN 408 / 609 = 0.67). B200 forward:
// r(128) = 1, r(64) = 2 -> 1.5x. Hopper and Blackwell only: their efficiencies come from
// head-dim-128 benchmarks, while Ampere's flash_attention_eff is fitted on rows of mixed head dims.
// The reference r(d_ref) is the benchmark GPU's, not this GPU's: flash_attention_eff_sm90 was
// measured on the H100 SXM (FlashAttention-3 paper) and flash_attention_eff_sm100 on the B200
// (FlashAttention-4 paper), both 16 exponentials / clk / SM. Blackwell Ultra (B300, GB300: 32, the
// same 8,192 tensor FLOP/clk/SM) halves r: forward r(128) = 0.5 against the B200's 1, so its
// head-dim-128 attention runs (1 + 0.5) / (1 + 1) = 0.75 of the time per FLOP at the B200's
// efficiency (backward 1.2 / 1.4), and head dim 64 runs at the B200's d-128 rate.
namespace {
// Tensor FLOPs per clock per SM at bf16 (0 when the catalog knows no clock).
double bf16_per_clk_per_sm(const topology::GpuSpec& g) {
  const double clock_mhz = g.tensor_clock_mhz > 0 ? g.tensor_clock_mhz : g.boost_clock_mhz;
  return clock_mhz > 0 && g.sms > 0 ? g.bf16.value / (g.sms * clock_mhz * 1e6) : 0.0;
}
}  // namespace

double ComputeModel::softmax_exp_factor(const OpCost& op, Pass pass) const {
  const int cc = gpu_.compute_capability;
  const double exps = constants_.get("flash_exps_per_pair");
  const double clock_mhz = gpu_.tensor_clock_mhz > 0 ? gpu_.tensor_clock_mhz : gpu_.boost_clock_mhz;
  if (cc < 90 || cc >= 200 || exps <= 0 || op.k <= 0 || gpu_.sfu_exp_per_clk <= 0 || clock_mhz <= 0) return 1.0;
  const double tensor_per_clk = matmul_peak(op).value / (gpu_.sms * clock_mhz * 1e6);
  const double bwd = pass == Pass::Backward ? 2.0 * constants_.get("flash_bwd_flops_factor") : 1.0;
  const auto ratio = [&](double d) { return exps * tensor_per_clk / (gpu_.sfu_exp_per_clk * 4.0 * d * bwd); };
  // The benchmark GPU's r at the reference head dim: this GPU's r scaled by the two tensor rates
  // per SM and clock and the two exponential rates.
  const topology::GpuSpec* ref = topology::find_gpu(cc >= 100 ? "b200" : "h100-sxm5-80gb");
  double ref_scale = 1.0;
  if (ref != nullptr && ref->sfu_exp_per_clk > 0 && bf16_per_clk_per_sm(gpu_) > 0)
    ref_scale = (bf16_per_clk_per_sm(*ref) / bf16_per_clk_per_sm(gpu_)) * (gpu_.sfu_exp_per_clk / ref->sfu_exp_per_clk);
  return (1.0 + ratio(op.k)) / (1.0 + ref_scale * ratio(constants_.get("flash_eff_ref_head_dim")));
}

double ComputeModel::flops_seconds(const OpCost& op, Pass pass, double sm_share) const {
  const sim::Flops flops = pass == Pass::Forward ? op.fwd_flops : op.bwd_flops;
  if (flops.value <= 0) return 0.0;
  // A collective beside the op holds whole SMs: the op's CTAs run in waves over the ones left.
  // (+1e-9: 132 x (1 - 24/132) is 108 SMs, not 107.99999.)
  const double sms = sm_share > 0 ? std::max(1.0, std::floor(sms_ * (1 - sm_share) + 1e-9)) : double(sms_);
  const double scale = clock_ratio_ * sm_fraction_ * sms / sms_;
  if (!op.is_matmul()) return flops / (gpu_.fp32 * scale);
  const sim::FlopsPerSec peak = matmul_peak(op) * scale;
  const double k_store = epilogue_store_k(peak * low_precision_gemm_eff(op));
  const auto eff_of = [&](double m, double n, double k, double b) {
    return gemm_efficiency_on(m, n, k, b, sms, k_store);
  };
  if (is_ssd_kernel(op)) return flops / (peak * constants_.get("mamba_scan_eff"));
  if (is_flash(op)) {
    double work = flops.value * constants_.get("attention_causal_fraction");
    if (pass == Pass::Backward) work *= constants_.get("flash_bwd_flops_factor");
    return sim::Flops{work} / (peak * attention_efficiency(op.attention_kernel)) * softmax_exp_factor(op, pass);
  }
  const double fp8 = low_precision_gemm_eff(op);
  const double m = op.m, n = op.n, k = op.k, b = op.batch;
  if (pass == Pass::Forward) return flops / (peak * (eff_of(m, n, k, b) * fp8));
  if (op.frozen) return flops / (peak * (eff_of(m, k, n, b) * fp8));  // data gradient only
  // Backward: data gradient dA[m,k] = dC[m,n] B^T (reduces over n) and weight gradient
  // dB[k,n] = A^T dC (reduces over m), each half of the backward FLOPs.
  const sim::Flops half = flops * 0.5;
  return half / (peak * (eff_of(m, k, n, b) * fp8)) + half / (peak * (eff_of(k, n, m, b) * fp8));
}

// The loss op's unfused implementation (model/cross_entropy_kernels.h counts the bytes per logit
// element and the kernels of each pass from the source): the op's own ([training] cross_entropy),
// or Megatron-Core's unfused vocab-parallel cross-entropy where the constant cross_entropy_unfused
// = 1 asks for it on an otherwise fused loss (the two spellings charge the same).
std::optional<LossKernelCounts> ComputeModel::unfused_loss(const OpCost& op) const {
  if (op.kind != OpKind::Loss) return std::nullopt;
  CrossEntropy impl = op.cross_entropy;
  if (impl == CrossEntropy::Fused && constants_.get("cross_entropy_unfused") > 0) impl = CrossEntropy::MegatronUnfused;
  return unfused_loss_counts(impl, op.loss_classes);
}

double ComputeModel::bytes_seconds(const OpCost& op, Pass pass, double hbm_taken_bytes_per_s) const {
  sim::Bytes bytes = pass == Pass::Forward ? op.fwd_bytes : op.bwd_bytes;
  if (const auto loss = unfused_loss(op)) {
    const double elements = op.fwd_flops.value / kCrossEntropyFlopsPerElement;
    bytes = sim::Bytes{elements * (pass == Pass::Forward ? loss->fwd_bytes_per_element : loss->bwd_bytes_per_element)};
  }
  if (runs_fp8(op)) {
    const double m = op.m, n = op.n, k = op.k, b = std::max(op.batch, 1);
    const double in = linear_format(op) == topology::Precision::Nvfp4 ? kNvfp4BytesPerElement : 1.0;
    const double fwd = b * (in * (m * k + k * n) + 2.0 * m * n);  // fp8 / nvfp4 A and B, bf16 C
    bytes = sim::Bytes{pass == Pass::Forward ? fwd : 2.0 * fwd};
  }
  if (bytes.value <= 0) return 0.0;
  double eff = constants_.get("hbm_stream_eff");
  if (!op.is_matmul()) eff *= constants_.get("pointwise_mem_eff");
  // A collective streaming beside the op takes its bytes/s off the bandwidth the op streams at.
  const double total = std::min(memory_bandwidth().value, mamba_kernel_bandwidth_cap(op));
  const double left = std::max(total - hbm_taken_bytes_per_s, constants_.get("min_hbm_share") * total);
  return bytes / (sim::BytesPerSec{left} * eff);
}

// Mamba-2's own kernels (mamba_ssm's Triton SSD kernels, causal_conv1d, the gated RMSNorm) stream
// on sm100 no faster than on the H200 (mamba_kernels_sm100_tbps: state-spaces/mamba#904's H200 and
// GB200 training rates); every other op, and these on other generations, are not capped (infinity).
double ComputeModel::mamba_kernel_bandwidth_cap(const OpCost& op) const {
  const int cc = gpu_.compute_capability;
  const bool mamba_kernel = is_ssd_kernel(op) || op.name == "mamba_conv1d" || op.name == "mamba_gated_norm";
  if (!mamba_kernel || cc < 100 || cc >= 110) return std::numeric_limits<double>::infinity();
  return constants_.get("mamba_kernels_sm100_tbps") * 1e12 * mem_fraction_;
}

bool ComputeModel::runs_fp8(const OpCost& op) const {
  return topology::quantized_linears(linear_format(op)) && op.m > 0;
}

namespace {
// The column-wise (transposed) FP8 copy a cast writes where the GEMMs need TN layouts: one byte an
// element (fp8_cast_bytes_per_element counts it).
constexpr double kFp8TransposeBytesPerElement = 1.0;

// Whether the GPU's FP8 GEMMs take non-TN layouts (Transformer Engine's
// nvte_is_non_tn_fp8_gemm_supported, 2.3+: sm_100 - sm_119 and sm_130 on; Hopper and Ada need TN).
bool non_tn_fp8_gemm(int compute_capability) {
  return (compute_capability >= 100 && compute_capability < 120) || compute_capability >= 130;
}
}  // namespace

// Transformer Engine's cast of the operand that changes every micro-batch: the activation A[m,k]
// before the forward GEMM, the output gradient dY[m,n] before the two backward GEMMs (weights are
// cast once per step). A streaming kernel at the pointwise efficiency. Under FP8 current scaling
// (fp8_amax_bytes_per_element > 0) the amax kernel's read of the same operand comes first (TE 2.x
// csrc/extensions/cast.cpp and quantizer.cpp Float8CurrentScalingQuantizer::quantize_impl:
// nvte_compute_amax, then nvte_compute_scale_from_amax, then the cast). A LayerNormLinear's input
// (OpCost::norm_fed) skips the amax pass forward: from Transformer Engine 2.8
// (csrc/extensions/normalization.cpp, Impl::FUSED_NORM_AMAX_FP8) the norm kernel writes its bf16
// output and its amax together and quantize_with_amax runs the scale and the cast alone; every
// current-scaling row runs TE 2.9 or later (Megatron-Bridge v0.2.0, NeMo 25.11: pyproject.toml
// transformer-engine >= 2.9.0a0). NVFP4's cast constant holds its own amax pass.
// A gated MLP's fc1 is one module (OpCost::second_fc1_half): its input is cast once, charged to
// the gate half, and its output gradient [m, 2 ffn] in one kernel, each half charged its own
// elements (TE 2.x module/layernorm_linear.py: one input_quantizer call or quantized norm per
// forward; base.py grad_output_preprocess: one quantizer call on the whole grad_output;
// grouped_linear.py: one split_quantize over all experts' inputs, one over their grad_outputs).
double ComputeModel::fp8_cast_seconds(const OpCost& op, Pass pass) const {
  if (!runs_fp8(op)) return 0.0;
  if (pass == Pass::Forward && op.second_fc1_half) return 0.0;
  const double b = std::max(op.batch, 1);
  const double elements = b * static_cast<double>(op.m) * (pass == Pass::Forward ? op.k : op.n);
  const bool nvfp4 = linear_format(op) == topology::Precision::Nvfp4;
  double per_element = constants_.get(nvfp4 ? "nvfp4_cast_bytes_per_element" : "fp8_cast_bytes_per_element");
  // Per-tensor FP8 on Blackwell writes no transposed copy: its GEMMs take FP8 operands in any
  // layout, so the quantizer leaves the column-wise usage to the row-wise data (Transformer Engine
  // 2.0+ csrc quantizer.cpp: create_transpose = columnwise_usage && !non_tn_fp8_gemm_supported(),
  // true from compute capability 10.0; 2.3+ nvte_is_non_tn_fp8_gemm_supported: sm_100 - sm_119 and
  // sm_130+). MXFP8's block scales run along one dimension, so it still writes both copies.
  if (!nvfp4 && !fp8_linears_mxfp8() && non_tn_fp8_gemm(gpu_.compute_capability))
    per_element = std::max(0.0, per_element - kFp8TransposeBytesPerElement);
  if (!nvfp4 && !(pass == Pass::Forward && op.norm_fed))
    per_element += constants_.get("fp8_amax_bytes_per_element");  // 0 under delayed scaling
  const sim::Bytes bytes{elements * per_element};
  return bytes / pointwise_bandwidth();
}

bool ComputeModel::fp8_linears_mxfp8() const {
  return precision_ == topology::Precision::Nvfp4 || fp8_scaling() == Fp8Scaling::Block;
}

Fp8Scaling ComputeModel::fp8_scaling() const {
  if (constants_.get("fp8_amax_bytes_per_element") > 0) return Fp8Scaling::Current;
  if (constants_.get("fp8_block_scale_bytes_per_element") > 0) return Fp8Scaling::Block;
  return Fp8Scaling::Delayed;
}

// A cast is one kernel; under current scaling it is four, or three where the norm in front took
// the amax (OpCost::norm_fed, forward). Transformer Engine 2.8 - 2.18
// Float8CurrentScalingQuantizer::quantize_impl (pytorch/csrc/quantizer.cpp) runs
// nvte_compute_amax_with_config, whose launch_amax_kernel (common/recipe/current_scaling.cu)
// first launches zero_amax_kernel <<<1, 1>>> (the amax is taken by atomic max, so it starts at 0;
// a cudaMemsetAsync up to 2.5), then the amax kernel, nvte_compute_scale_from_amax's one-thread
// kernel and the cast (nvte_quantize_v2). A norm-fed input skips the amax kernel
// (quantize_with_amax) but its amax buffer is at::zeros (create_unquantized_tensor_with_amax), one
// fill kernel: fill, scale, cast. The up half of a gated MLP's fc1 shares the gate half's
// (OpCost::second_fc1_half).
// A grouped expert GEMM's cast (Transformer Engine's GroupedLinear: one tex.split_quantize of the
// input forward, one of grad_output backward, grouped_linear.py v2.9 - v2.16) is one kernel over
// all local experts only under delayed scaling: split_quantize's multi_tensor_quantize_impl
// (csrc/extensions/cast.cpp, v2.8 - v2.15) fuses them into nvte_multi_cast_transpose for
// Float8Quantizer alone, and otherwise calls each expert's quantizer in turn ("Quantize kernels
// individually"): current scaling's amax, scale and cast per expert
// (Float8CurrentScalingQuantizer::quantize_impl, four kernels with the amax zeroing), MXFP8's one
// quantize per expert
// (MXFP8Quantizer::quantize; fp8_block_scale_bytes_per_element > 0 marks an MXFP8 run). So those
// casts are the per-cast kernels times the local experts: each a launch on the one stream and, in
// an eager step, on the host. NVFP4 keeps one: split_quantize_nvfp4_impl groups its experts from
// v2.11. The bytes do not change (the experts' slices are the same rows).
int ComputeModel::kernels(const OpCost& op, Pass pass) const {
  const int stated = pass == Pass::Forward ? op.fwd_kernels : op.bwd_kernels;
  if (stated >= 0) return stated;
  const bool fp8 = linear_format(op) == topology::Precision::Fp8;
  const Fp8Scaling scaling = fp8_scaling();
  const bool current = fp8 && scaling == Fp8Scaling::Current;
  const bool grouped = op.kind == OpKind::Gemm && op.batch > 1 && op.name.starts_with("expert_");
  const int quantize_calls = grouped && fp8 && scaling != Fp8Scaling::Delayed ? op.batch : 1;
  const int current_cast = pass == Pass::Forward && op.norm_fed ? 3 : 4;  // (zero | fill), [amax], scale, cast
  const int cast = !runs_fp8(op) || op.second_fc1_half ? 0 : quantize_calls * (current ? current_cast : 1);
  if (pass == Pass::Backward && op.is_matmul()) return (op.frozen ? 1 : 2) + cast;  // dgrad + wgrad (flash: dq/dk/dv + preprocess)
  if (const auto loss = unfused_loss(op)) return pass == Pass::Forward ? loss->fwd_kernels : loss->bwd_kernels;
  return 1 + cast;
}

sim::SimTime ComputeModel::op_time(const OpCost& op, Pass pass) const {
  const double roofline = std::max(flops_seconds(op, pass), bytes_seconds(op, pass));
  const double launch = kernels(op, pass) * constants_.get("kernel_launch_us") * 1e-6;
  return sim::SimTime::from_seconds(roofline + fp8_cast_seconds(op, pass) + launch);
}

OpTimeParts ComputeModel::op_time_parts(const OpCost& op, Pass pass) const {
  OpTimeParts p;
  p.flops = (pass == Pass::Forward ? op.fwd_flops : op.bwd_flops).value;
  p.flops_s = flops_seconds(op, pass);
  p.bytes_s = bytes_seconds(op, pass);
  p.cast_s = fp8_cast_seconds(op, pass);
  p.kernels = kernels(op, pass);
  p.launch_s = p.kernels * constants_.get("kernel_launch_us") * 1e-6;
  const double scale = clock_ratio_ * sm_fraction_;
  p.peak = op.is_matmul() ? (matmul_peak(op) * scale).value : gpu_.fp32.value * scale;
  if (op.is_matmul()) {
    p.efficiency_constant = is_ssd_kernel(op) ? "mamba_scan_eff"
                            : !is_flash(op)       ? "gemm_eff_max"
                                                  : attention_efficiency_constant(gpu_.compute_capability, op.attention_kernel);
  }
  if (p.flops_s > 0 && p.peak > 0) p.efficiency = p.flops / (p.peak * p.flops_s);
  p.hbm = std::min(memory_bandwidth().value, mamba_kernel_bandwidth_cap(op));  // the rate bytes_seconds streams at
  p.memory_efficiency = constants_.get("hbm_stream_eff") * (op.is_matmul() ? 1.0 : constants_.get("pointwise_mem_eff"));
  p.memory_constant = op.is_matmul() ? "hbm_stream_eff" : "hbm_stream_eff x pointwise_mem_eff";
  p.bytes = p.bytes_s * p.hbm * p.memory_efficiency;  // as bytes_seconds counted them (fp8 operands, unfused loss)
  return p;
}

sim::SimTime ComputeModel::op_time(const OpCost& op, Pass pass, const Contention& beside) const {
  CLUSTERSIM_CHECK(beside.sm_share >= 0 && beside.sm_share < 1, "a collective holds a share of the SMs in [0, 1)");
  CLUSTERSIM_CHECK(beside.hbm_bytes_per_s >= 0, "a collective's HBM traffic is not negative");
  const double roofline = std::max(flops_seconds(op, pass, beside.sm_share),
                                   bytes_seconds(op, pass, beside.hbm_bytes_per_s));
  const double launch = kernels(op, pass) * constants_.get("kernel_launch_us") * 1e-6;
  return sim::SimTime::from_seconds(roofline + fp8_cast_seconds(op, pass) + launch);
}

}  // namespace clustersim::workloads
