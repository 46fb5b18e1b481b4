#include "workloads/compute/compute_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

struct ConstantDef {
  std::string_view name;
  double value;
  double lo, hi;
  std::string_view description;
};

// Every constant of the compute model, with its source. "Estimate" marks a value no measurement
// pins down; those are the first candidates for `clustersim calibrate`.
//
// The big-GEMM anchor (a lone GEMM, which sustains the HPL clock: sustained_clock_ratio 0.925; the
// default 0.837 is the clock under a whole training step, fitted): with 0.925 and gemm_eff_max 0.82, an 8192^3 bf16 GEMM
// gets 0.925 x 0.82 x 0.977 (k depth: 64 + the epilogue store's 129) x 0.998 (waves, 108 SMs) =
// 74 % of 312 TF on A100, and 0.925 x 0.82 x 0.963 (64 + 249) x 0.97 (waves, 132 SMs) = 71 % of
// 989 TF on H100 (0.99 k depth, 75 % and 73 %, before the store was charged, branch hopper). Published cuBLAS/CUTLASS
// measurements: H100 SXM bf16 4224x8192x2048 GEMM 780 TF (79 %) with max-autotune and the
// `nvidia-smi boost-slider --vboost 1` power shift to tensor cores (H. He, PyTorch,
// gist.github.com/Chillee/2ec89696db8b7ed1c24461159e325405), i.e. an upper bound above the
// default-power 60-75 % range; A100: NVIDIA's HPL Rpeak is computed at the 1305 MHz clock A100
// sustains at its power limit (glennklockwood.com/garden/peak-FLOPS), 92.5 % of the 1410 MHz the
// 312 TF datasheet figure assumes, and cuBLAS reaches ~70-80 % of 312 TF on large bf16 GEMMs.
constexpr std::array<ConstantDef, 38> kConstants = {{
    {"sustained_clock_ratio", 0.837, 0.3, 1.0,
     "SM clock sustained during training at TDP / clock the tensor peak is quoted at (ratio). "
     "A lone GEMM or HPL sustains 1305/1410 = 0.925 on A100 (NVIDIA HPL Rpeak clock, "
     "glennklockwood.com/garden/peak-FLOPS); training also powers HBM, NVLink and the NICs, so "
     "the SM clock settles lower. 0.837 (1.18 GHz on A100; 1.53 GHz of H100 SXM's 1830 MHz tensor "
     "clock, topology::GpuSpec::tensor_clock_mhz) is FITTED: clustersim calibrate --params "
     "sustained_clock_ratio,flash_attention_eff --rows source=llm-foundry,gpu=a100_80gb,metric=mfu "
     "(61 rows; held-out Megatron-LM and llm-foundry A100-40GB rows: docs/validation.md)"},
    {"gemm_eff_max", 0.82, 0.05, 1.0,
     "fraction of sustained-clock tensor throughput a large, well-shaped cuBLAS GEMM main loop "
     "reaches (ratio); set so 8192^3 bf16 gives 74% of 312 TF on A100 and 71% of 989 TF on H100 "
     "with the epilogue store (75% and 73% before it, branch hopper) "
     "(H100 best case 780 TF: Chillee gist 2ec89696, PyTorch)"},
    {"gemm_tile_m", 128, 16, 512,
     "rows of the largest CTA output tile cuBLAS/CUTLASS uses (elements); tile and wave "
     "quantization per NVIDIA Deep Learning Performance Guide, Matrix Multiplication Background"},
    {"gemm_tile_n", 128, 16, 512,
     "columns of the largest CTA output tile (elements); NVIDIA DL Performance Guide, Matrix "
     "Multiplication Background (128x128 / 256x128 tiles on Ampere and Hopper)"},
    {"gemm_small_tile_exponent", 0.5, 0.0, 2.0,
     "penalty for halving a tile side to fill SMs: eff x (intensity ratio)^exponent, intensity = "
     "tm*tn/(tm+tn) (dimensionless); estimate"},
    {"gemm_k_half", 64, 0, 8192,
     "reduction depth at which per-tile prologue/epilogue equals the main loop: k-efficiency = "
     "k/(k + gemm_k_half) (elements); estimate (a few 32-deep main-loop stages)"},
    {"gemm_epilogue_store_share", 1.0, 0.0, 1.0,
     "share of a GEMM tile's epilogue store (its C tile written to HBM after the main loop) that "
     "is not overlapped with a main loop (ratio). A wave of tiles finishes together and writes "
     "SMs x tm x tn x C-bytes through HBM, so per tile the store costs as much as k_store = "
     "C-bytes x (sustained tensor rate x gemm_eff_max) / (2 x HBM bandwidth x hbm_stream_eff) "
     "elements of reduction depth, added to gemm_k_half: 225 on H100 SXM bf16 (405 fp8), 117 on "
     "A100 80GB (compute_model.cpp, gemm_efficiency_on). 1 (fully serialised) from tilelang's "
     "H800 SXM (H100 die) K sweeps at M = N = 8192, K = 256 ... 16384 (benchmark/matmul/README.md "
     "@17bd0a6, fp16 386 ... 766 TFLOP/s; benchmark/matmul_fp8/README.md @6b1faf7, fp8 569 ... "
     "1541): time = 44.8 us + K x 0.171 us (fp16, within 1.2%) and 38.1 us + K x 0.083 us (fp8, "
     "within 2%), a per-tile fixed cost of 262 and 458 elements of K, where gemm_k_half 64 + the "
     "store give 313 and 512 at a lone GEMM's clock (0.925) and gemm_k_half alone 64; 0: the store "
     "fully hidden behind the next tile (persistent ping-pong kernels). UNSURE which cuBLAS "
     "kernels the published runs used"},
    {"gemm_epilogue_store_share_sm100", 0.0, 0.0, 1.0,
     "Blackwell (sm100): the same share (ratio). tcgen05 MMAs accumulate in Tensor Memory (512 "
     "columns per SM), which holds two 128 x 256 fp32 accumulators, so Blackwell GEMMs drain one "
     "tile's accumulator through the epilogue while the MMA of the next runs (CUTLASS SM100 "
     "epilogue flow: TMEM -> registers -> SMEM -> TMA store, docs.nvidia.com/cutlass "
     "utils_sm100; Triton's Gluon example 'overlapping accumulator': double-buffered TMEM "
     "accumulators). 0: hidden. ASSUMPTION from the architecture, no Blackwell K sweep found"},
    {"hbm_stream_eff", 0.90, 0.1, 1.0,
     "fraction of datasheet HBM bandwidth a streaming kernel sustains (ratio); H100 SXM D2D copy / "
     "STREAM triad 3.02-3.09 of 3.35 TB/s measured"},
    {"pointwise_mem_eff", 0.85, 0.1, 1.0,
     "framework elementwise/norm/softmax kernels relative to a tuned stream (ratio); estimate"},
    {"kernel_launch_us", 2.0, 0.0, 1000.0,
     "device-side gap per kernel launched back to back on one stream when the host runs ahead "
     "(microseconds); estimate, cf. SuperBench kernel-launch event_time"},
    {"host_launch_us", 8.0, 0.0, 1000.0,
     "host (CPU) time to issue one kernel from an eager framework: Python/C++ op dispatch, "
     "autograd bookkeeping and cudaLaunchKernel (microseconds). A pass runs no faster than its "
     "kernels can be issued: time = max(device time, kernels x host_launch_us). Estimate: "
     "PyTorch eager ops cost ~5-10 us of CPU each (H. He, 'Making Deep Learning Go Brrrr From "
     "First Principles', 2022, overhead section; cudaLaunchKernel alone ~2-4 us)"},
    {"flash_attention_eff", 0.377, 0.05, 1.0,
     "Ampere and older (sm80/86/89): fraction of sustained-clock bf16 tensor throughput the "
     "flash-attention kernel reaches on the work it does (ratio). FlashAttention-2 reaches 50-73% "
     "of A100 peak forward, less backward (Dao 2023); 0.377 is FITTED with sustained_clock_ratio on "
     "the llm-foundry A100-80GB MFU rows (their Triton/FlashAttention-1-era kernels, long "
     "sequences), see docs/validation.md"},
    {"flash_attention_eff_sm90", 0.58, 0.05, 1.0,
     "Hopper (sm90): the same fraction for FlashAttention-3 / cuDNN fused attention, which use "
     "wgmma, TMA and warp specialisation (ratio). Shah et al. 2024 (FlashAttention-3): bf16 forward "
     "up to 740 TF = 75% of H100 peak, ~610-660 TF causal at head dim 128, backward 1.5-1.75x "
     "FlashAttention-2 (~0.5 of peak); FLOP-weighted over forward (1) and backward (2.5) = 0.54 of "
     "peak at the benchmark's clock, / 0.925 (a lone kernel's clock, as for gemm_eff_max) = 0.58. "
     "From the paper, not fitted"},
    {"flash_attention_eff_sm100", 0.51, 0.05, 1.0,
     "Blackwell (sm100): the same fraction for cuDNN fused attention, what NeMo 25.x containers run "
     "(ratio). Tensor throughput per SM doubles from Hopper while the exponential units (16/clk/SM) "
     "and shared-memory bandwidth (128 B/clk/SM) do not, so softmax (forward) and shared-memory "
     "traffic (backward) bind (Zadouri et al. 2026, FlashAttention-4): FA4 forward up to 71% of "
     "B200 peak, cuDNN 9.13 up to 1.3x slower (~55%); backward taken as 0.45 (UNSURE); "
     "FLOP-weighted 0.47, / 0.925 = 0.51. From the paper, not fitted"},
    {"flash_bwd_flops_factor", 1.25, 1.0, 3.0,
     "FlashAttention backward FLOPs / the 2x-forward the op counts: 5 matmuls instead of 4, as it "
     "recomputes QK^T (ratio); Dao 2023 Sec. 3.2"},
    {"attention_causal_fraction", 0.5, 0.1, 1.0,
     "fraction of the s x s attention work a causal flash kernel executes (fully masked blocks "
     "skipped), while the op counts all of it as SC'21 does (ratio); GPT training is causal"},
    {"mamba_scan_eff", 0.30, 0.02, 1.0,
     "Mamba-2's SSD chunked scan (Dao & Gu 2024, arXiv 2405.21060, Sec. 6; mamba_ssm's Triton "
     "kernels chunk_cumsum, chunk_state, state_passing, bmm_chunk, chunk_scan): fraction of the "
     "sustained-clock tensor peak its matmul FLOPs reach (ratio; op ssd_scan, model/mamba_ops.h). "
     "Its GEMMs are chunk-sized (inner dims Q = 128, N = 128-256, P = 64) and split over five "
     "kernels, so far below a large GEMM's 0.7-0.8; the paper (Fig. 10) shows SSD about as fast as "
     "FlashAttention-2 at 2K tokens, i.e. a comparable tensor-core fraction. ESTIMATE, not fitted: "
     "at Nemotron-H's shapes the scan's HBM traffic (fp32 chunk states) binds before this does"},
    {"fp8_gemm_eff_ratio", 0.90, 0.1, 1.0,
     "FP8 GEMM efficiency relative to bf16 at the same shape: per-tensor scaling and a twice "
     "faster main loop make fixed per-tile costs weigh more (ratio); estimate"},
    {"fp8_cast_bytes_per_element", 4.0, 0.0, 16.0,
     "HBM bytes per element of the Transformer Engine cast that feeds an FP8 GEMM, one extra "
     "memory-bound kernel per operand cast (bytes): the bf16 input read (2) and written as fp8 "
     "row-wise and column-wise (1 + 1, the transposed copy the backward GEMM needs), amax taken in "
     "the same pass (TE cast_transpose, delayed scaling). Forward casts the activation A[m,k], "
     "backward the output gradient dY[m,n]; weights are cast once per step (TE caches them across "
     "micro-batches) and not charged. Current scaling (FP8-CS) first reads the tensor for its amax: "
     "6"},
    {"nvfp4_cast_bytes_per_element", 5.125, 0.0, 16.0,
     "HBM bytes per element of the Transformer Engine cast that feeds an NVFP4 GEMM (bytes): the "
     "per-tensor FP32 scale needs the tensor's amax first (a read, 2), then the bf16 read (2) "
     "written row-wise (1x16 blocks, for the forward / data-gradient GEMM) and column-wise (16x1, "
     "after the 16x16 random Hadamard transform, for the weight-gradient GEMM), each 0.5 byte per "
     "E2M1 element + 1/16 byte of E4M3 block scale: 2 x 0.5625. NVIDIA's NVFP4 recipe (Pretraining "
     "LLMs with NVFP4, arXiv 2509.25149, as Transformer Engine's NVFP4BlockScaling implements it: "
     "1x16 activation / gradient scaling, 16x16 weights, RHT on wgrad inputs, stochastic rounding "
     "of gradients). Weights are cast once per step and not charged, as for fp8"},
    {"power_static_fraction", 0.42, 0.0, 0.95,
     "share of board power that does not scale with SM clock, in P/P_max = s + (1-s)(f/f_max)^3 "
     "(ratio); least-squares fit to Zeus NSDI'23 V100/A40 medians (hardware.md 4.3), rms 0.052"},
    {"tp_overlap_sm_share", 0.10, 0.0, 0.9,
     "share of the SMs Transformer Engine's userbuffers kernels hold while a tensor-parallel "
     "collective is overlapped with a GEMM ([sync] tp_comm_overlap), so the GEMM runs at 1 - share "
     "meanwhile (ratio); estimate: NeMo/Megatron-Bridge H100 userbuffers presets give the chunked "
     "reduce-scatters num_sm 16-24, the bulk overlaps 2-24, ring-exchange all-gathers 1 of 132 SMs"},
    {"collective_hbm_bytes_per_byte", 2.0, 0.0, 8.0,
     "HBM bytes a GPU reads and writes per byte a tensor-parallel collective step sends while it "
     "runs beside a GEMM ([sync] tp_comm_overlap): an all-gather step reads what it sends and "
     "writes what it receives (2); a reduce-scatter step also reads the local partial it adds "
     "(one more, added by the overlap model). Counted from a ring step's data movement (the "
     "userbuffers live in HBM), not measured; the bytes/s it takes are subtracted from the GEMM's "
     "HBM bandwidth (ComputeModel::op_time with a Contention)"},
    {"moe_load_imbalance", 1.0, 1.0, 64.0,
     "mixture of experts: token-slots the busiest GPU's experts receive / the mean over the "
     "expert-parallel group (ratio); its experts' GEMMs and the all-to-all it waits for scale with "
     "it, and a capacity factor caps it. ASSUMPTION 1.0: a router trained with a load-balancing "
     "loss (Switch, Fedus et al. 2021) or DeepSeek-V3's bias-based balancing keeps loads near the "
     "mean; raise it to study a skewed router"},
    {"grouped_gemm_launches_per_expert", 1.0, 0.0, 1.0,
     "mixture of experts: host launches a grouped expert GEMM issues per local expert beyond the "
     "first (ratio). 1: Transformer Engine's GroupedLinear (what Megatron-Core's TEGroupedMLP runs) "
     "issues one cuBLAS GEMM per expert, round-robin over a few compute streams "
     "(general_grouped_gemm -> nvte_multi_stream_cublas_gemm), so the host pays a launch per expert "
     "and per backward GEMM; 0: one fused grouped kernel (CUTLASS / cuBLASLt grouped GEMM, CUDA "
     "graphs). Counted from the code path, not measured; UNSURE which releases of the published "
     "runs use a fused grouped kernel on Blackwell. The device-side gaps are not multiplied: the "
     "streams hide them"},
    {"launch_blocking_sync_us", 5.0, 0.0, 1000.0,
     "[training] launch_blocking (CUDA_LAUNCH_BLOCKING=1): host round trip after each kernel -- the "
     "launch call returns only when the kernel has finished, then the host wakes and issues the next "
     "(microseconds); the same round trip ends a dropless MoE forward's token-count copy to the host "
     "(OpCost::host_sync_after). Estimate: an empty kernel's launch-and-synchronize round trip is ~5-10 us on "
     "current GPUs and drivers (cf. SuperBench kernel-launch wall_time vs event_time)"},
    {"pageable_h2d_ratio", 0.5, 0.05, 1.0,
     "[data] pinned_memory = false: host-to-device copy bandwidth from pageable memory / from pinned "
     "memory (ratio). The driver stages pageable data through a pinned bounce buffer with a CPU "
     "memcpy (CUDA C++ Best Practices Guide, Pinned Memory). Measured ratios range from ~0.87 "
     "(NVS 4200M, PCIe Gen2: 5.4 vs 6.2 GB/s, M. Harris, 'How to Optimize Data Transfers in CUDA "
     "C/C++', NVIDIA blog 2012) to about half on Gen4/Gen5 hosts where the memcpy bounds it; "
     "ASSUMPTION 0.5"},
    {"gpu_decode_speedup", 8.0, 0.1, 1000.0,
     "[data] gpu_decode (NVIDIA DALI / nvJPEG): one sample's decode on the GPU takes "
     "cpu_ms_per_sample / this of compute-stream time (ratio of one CPU core's time to the GPU's). "
     "ESTIMATE: a CPU core decodes an ImageNet-sized JPEG in a few ms (libjpeg-turbo), a GPU's "
     "nvJPEG decode handles thousands of images per second (NVIDIA DALI and nvJPEG documentation); "
     "8 keeps part of the GPU's time for the rest of DALI's pipeline. UNSURE: not measured here"},
    {"gpu_decode_cpu_share", 0.2, 0.0, 1.0,
     "[data] gpu_decode: share of cpu_ms_per_sample left on the CPU workers (file reading, parsing, "
     "collation) when the decode runs on the GPU (ratio). ESTIMATE: JPEG decoding is most of an "
     "image pipeline's CPU time (the reason DALI moves it; NVIDIA DALI documentation), so 0.2 is left"},
    {"cpu_adam_gparams_per_s", 4.5, 0.01, 1000.0,
     "ZeRO-Offload ([sync] offload_optimizer = \"cpu\"): parameters per second one host's CPU-Adam "
     "updates, shared by the node's GPUs (billions of parameters per second). Ren et al. 2021 "
     "(ZeRO-Offload, USENIX ATC '21) time DeepSpeed's AVX-512 CPU-Adam at about 0.22 s per 1B "
     "parameters on a DGX-2 host (2x Xeon Platinum 8168), 5-7x PyTorch's CPU Adam (DeepSpeed "
     "ZeRO-Offload tutorial): 4.5. UNSURE: the 0.22 s figure is quoted from the paper's Adam latency "
     "table from memory, not re-checked; a desktop CPU with fewer cores is slower"},
    {"lane_energy_ratio_sm100", 1.0, 0.2, 5.0,
     "Blackwell (sm100): energy one tensor FLOP costs at a given clock and voltage, relative to "
     "Hopper's (ratio). Blackwell is built on TSMC 4NP, a 4N-class process like Hopper's 4N (NVIDIA "
     "Blackwell architecture technical brief), so 1.0 (ASSUMPTION: no architectural gain per FLOP; "
     "UNSURE). With it the clock a Blackwell GPU sustains at its TDP follows from H100 SXM's by the "
     "cubic DVFS law (power_density_clock_ratio): B200 2.24x the tensor FLOP/clk at 1.43x the power "
     "sustains 0.86 x H100's clock, 0.85 of its quoted 1856 MHz; GB200 at 1200 W 0.81 of 2062 MHz. "
     "Lower it to credit Blackwell with a per-FLOP energy gain; 0.61 makes B200 hold its quoted clock"},
    {"min_hbm_share", 0.1, 0.01, 1.0,
     "share of HBM bandwidth an op keeps however much a collective beside it streams (ratio): the "
     "memory controllers arbitrate between requesters rather than starve one. ASSUMPTION, a floor "
     "that keeps the roofline finite; it binds only above 90% of the bandwidth taken"},
    {"idle_power_fraction", 0.30, 0.0, 1.0,
     "board power of an idle-but-allocated GPU / TDP (ratio): CUDA context, HBM refresh, clocks up "
     "between kernels. Estimate: nvidia-smi shows ~60-100 W of 400 W on an idle allocated A100 and "
     "~120 W of 700 W on an H100 between steps; 0.30 is the high end, as training never idles at "
     "low clocks (UNSURE; no published measurement in shared/reference)"},
    {"nccl_kernel_launch_us", 5.2, 0.0, 1000.0,
     "collective/host_launch.h: host CPU time of one cudaLaunchKernel of NCCL's kernel "
     "(microseconds). Read off the DGX A100 nccl-tests log (stas00 ml-engineering, all_reduce_perf "
     "-g 8) at 32-512 KiB: least squares 41.8 us + 2.42 us x channels for 8 GPUs; checked on its "
     "1-4 MiB rows (99 us modelled, 101-102 measured)"},
    {"nccl_channel_enqueue_us", 0.30, 0.0, 100.0,
     "collective/host_launch.h: NCCL's host work per channel of one GPU's collective, a work "
     "descriptor and proxy/plan bookkeeping each (src/enqueue.cc) (microseconds); the slope of the "
     "same nccl-tests fit, 2.42 us / 8 GPUs"},
    {"torch_distributed_call_us", 10.0, 0.0, 10000.0,
     "collective/host_launch.h: torch.distributed's own per-call work above NCCL (Python dispatch, "
     "c10d ProcessGroupNCCL's work object and stream-ordering events) (microseconds): the H200 "
     "torch.distributed log's 38-40 us floor at 32-512 KiB less ~20 us device and 5.5-10 us launch"},
    {"p2p_drain_steps", 1.0, 0.0, 64.0,
     "collective/p2p_channels.h: NCCL p2p steps (min(chunk, NCCL_P2P_NVL_CHUNKSIZE 512 KiB)) of a "
     "grouped send over NVLink that no transfer overlaps, each copied at one NVLink lane's rate "
     "(count): the receiver's copy out of the staging FIFO trails the wire by one step (sender's "
     "first local copy on A100 P2P read). 1 from NCCL's step-wise FIFO protocol, not fitted"},
}};
// power_demand_ratio is kept apart from the table above only so the fit comment can sit with it.
constexpr ConstantDef kPowerDemand = {
    "power_demand_ratio", 1.0, 0.3, 2.0,
    "power a dense-GEMM training load draws at its unconstrained clock / TDP (ratio); 1: it runs "
    "at the power limit (why sustained_clock_ratio < 1); the Zeus CNN/BERT workloads fit 0.75"};
// Fit of the power curve (tools: least squares over s and d, exponent 3 fixed; points: the V100 and
// A40 medians of hardware.md §4.3, power limit / max limit -> relative throughput):
//   joint:  s = 0.42, d = 0.75, rms error 0.052, max 0.146 (A40 at 125 W: 0.47 measured);
//   V100 alone: s = 0.19, d = 0.83, rms 0.018; A40 alone: s = 0.41, d = 0.78, rms 0.047.
// Exponents 2 and 1.5 (a voltage floor) fit worse (rms 0.056, 0.058). Dense-GEMM training draws the
// TDP at full clock (d = 1), so a cap bites at once: H100 at 600 of 700 W -> 0.91x compute, inside
// the -10-15 % practitioners quote (hardware.md §4.3, UNSURE).

constexpr std::size_t kCount = kConstants.size() + 1;

const ConstantDef& def(std::size_t i) { return i < kConstants.size() ? kConstants[i] : kPowerDemand; }

const std::array<std::string_view, kCount>& name_table() {
  static const std::array<std::string_view, kCount> names = [] {
    std::array<std::string_view, kCount> n{};
    for (std::size_t i = 0; i < kCount; ++i) n[i] = def(i).name;
    return n;
  }();
  return names;
}

std::size_t index_of(std::string_view name) {
  const auto& names = name_table();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  throw std::invalid_argument("unknown compute model constant '" + std::string(name) + "'");
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double ceil_div(double a, double b) { return std::ceil(a / b); }

}  // namespace

// --- ComputeConstants ------------------------------------------------------------------------

ComputeConstants::ComputeConstants() : values_(kCount) {
  for (std::size_t i = 0; i < kCount; ++i) values_[i] = def(i).value;
}

std::span<const std::string_view> ComputeConstants::names() { return name_table(); }

std::string_view ComputeConstants::describe(std::string_view name) const { return def(index_of(name)).description; }

double ComputeConstants::get(std::string_view name) const { return values_[index_of(name)]; }

std::pair<double, double> ComputeConstants::range(std::string_view name) const {
  const ConstantDef& d = def(index_of(name));
  return {d.lo, d.hi};
}

void ComputeConstants::set(std::string_view name, double value) {
  const std::size_t i = index_of(name);
  const ConstantDef& d = def(i);
  if (!std::isfinite(value) || value < d.lo || value > d.hi)
    throw std::invalid_argument("compute model constant '" + std::string(name) + "' = " + number(value) +
                                " is outside [" + number(d.lo) + ", " + number(d.hi) + "]");
  values_[i] = value;
}

void ComputeConstants::apply(const std::map<std::string, double>& overrides) {
  for (const auto& [name, value] : overrides) set(name, value);
}

// --- free functions ----------------------------------------------------------------------------

int activation_bytes(topology::Precision p) {
  return p == topology::Precision::Fp32 || p == topology::Precision::Tf32 ? 4 : 2;
}

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

// --- ComputeModel -------------------------------------------------------------------------------

ComputeModel::ComputeModel(const topology::GpuSpec& gpu, const topology::ClusterSpec& cluster,
                           topology::Precision precision, ComputeConstants constants)
    : gpu_(gpu), precision_(precision), tf32_(cluster.tf32), constants_(std::move(constants)) {
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
}

sim::FlopsPerSec ComputeModel::datasheet_peak() const {
  using topology::Precision;
  if (precision_ == Precision::Tf32 && !tf32_) return gpu_.fp32;
  return gpu_.peak(precision_);
}

sim::FlopsPerSec ComputeModel::sustained_peak() const { return datasheet_peak() * (clock_ratio_ * sm_fraction_); }

sim::BytesPerSec ComputeModel::memory_bandwidth() const { return gpu_.memory_bandwidth * mem_fraction_; }

sim::FlopsPerSec ComputeModel::matmul_peak(const OpCost& op) const {
  using topology::Precision;
  switch (precision_) {
    case Precision::Fp8:
    case Precision::Nvfp4:
      if (op.fp8_eligible && op.kind == OpKind::Gemm) return precision_ == Precision::Fp8 ? gpu_.fp8 : gpu_.fp4;
      return gpu_.bf16.value > 0 ? gpu_.bf16 : gpu_.fp16;
    case Precision::Tf32: return tf32_ ? gpu_.peak(Precision::Tf32) : gpu_.fp32;
    default: return gpu_.peak(precision_);
  }
}

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
  const double bandwidth = memory_bandwidth().value * constants_.get("hbm_stream_eff");
  if (bandwidth <= 0) return 0.0;
  const double c_bytes = activation_bytes(precision_);
  const int cc = gpu_.compute_capability;
  const char* share = cc >= 100 && cc < 200 ? "gemm_epilogue_store_share_sm100" : "gemm_epilogue_store_share";
  return constants_.get(share) * c_bytes * tensor_rate.value * constants_.get("gemm_eff_max") / (2.0 * bandwidth);
}

// Tile and wave quantization over `sms` SMs (fewer than the GPU's while a collective holds some).
double ComputeModel::gemm_efficiency_on(double m, double n, double k, double batch, double sms, double k_store) const {
  if (m <= 0 || n <= 0 || k <= 0) return 1.0;
  batch = std::max(batch, 1.0);
  sms = std::max(sms, 1.0);
  const double tm0 = constants_.get("gemm_tile_m"), tn0 = constants_.get("gemm_tile_n");
  const double exponent = constants_.get("gemm_small_tile_exponent");
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
  const double k_eff = k / (k + constants_.get("gemm_k_half") + k_store);
  return std::clamp(constants_.get("gemm_eff_max") * best * k_eff, 1e-6, 1.0);
}

double ComputeModel::gemm_efficiency(const OpCost& op) const {
  if (!op.is_matmul()) return 1.0;
  return gemm_efficiency(op.m, op.n, op.k, op.batch);
}

namespace {
bool is_flash(const OpCost& op) { return op.kind == OpKind::Attention && op.name == "flash_attention"; }
}  // namespace

// The fused attention kernel of the GPU's generation: FlashAttention-2 era kernels up to Ampere
// and Ada, FlashAttention-3 / cuDNN on Hopper, cuDNN on Blackwell. compute_capability 942 is AMD
// CDNA3 (no Hopper-class kernel assumed: the Ampere-era value).
double ComputeModel::attention_efficiency() const {
  const int cc = gpu_.compute_capability;
  if (cc >= 100 && cc < 200) return constants_.get("flash_attention_eff_sm100");
  if (cc >= 90 && cc < 100) return constants_.get("flash_attention_eff_sm90");
  return constants_.get("flash_attention_eff");
}

double ComputeModel::sustained_clock_mhz() const {
  const double reference = gpu_.tensor_clock_mhz > 0 ? gpu_.tensor_clock_mhz : gpu_.boost_clock_mhz;
  return reference * clock_ratio_;
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
  if (op.name == "ssd_scan") return flops / (peak * constants_.get("mamba_scan_eff"));
  if (is_flash(op)) {
    double work = flops.value * constants_.get("attention_causal_fraction");
    if (pass == Pass::Backward) work *= constants_.get("flash_bwd_flops_factor");
    return sim::Flops{work} / (peak * attention_efficiency());
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

double ComputeModel::bytes_seconds(const OpCost& op, Pass pass, double hbm_taken_bytes_per_s) const {
  sim::Bytes bytes = pass == Pass::Forward ? op.fwd_bytes : op.bwd_bytes;
  if (runs_fp8(op)) {
    const double m = op.m, n = op.n, k = op.k, b = std::max(op.batch, 1);
    const double in = precision_ == topology::Precision::Nvfp4 ? kNvfp4BytesPerElement : 1.0;
    const double fwd = b * (in * (m * k + k * n) + 2.0 * m * n);  // fp8 / nvfp4 A and B, bf16 C
    bytes = sim::Bytes{pass == Pass::Forward ? fwd : 2.0 * fwd};
  }
  if (bytes.value <= 0) return 0.0;
  double eff = constants_.get("hbm_stream_eff");
  if (!op.is_matmul()) eff *= constants_.get("pointwise_mem_eff");
  // A collective streaming beside the op takes its bytes/s off the bandwidth the op streams at.
  const double total = memory_bandwidth().value;
  const double left = std::max(total - hbm_taken_bytes_per_s, constants_.get("min_hbm_share") * total);
  return bytes / (sim::BytesPerSec{left} * eff);
}

bool ComputeModel::runs_fp8(const OpCost& op) const {
  const bool low = precision_ == topology::Precision::Fp8 || precision_ == topology::Precision::Nvfp4;
  return low && op.fp8_eligible && op.kind == OpKind::Gemm && op.m > 0;
}

// fp8_gemm_eff_ratio r says a twice-faster main loop makes the fixed per-tile costs (prologue,
// epilogue, scales) weigh more. With a bf16 tile = main loop L + fixed F and x = F / L, fp8 runs
// at (1 + x) / (1 + 2x) = r of the bf16 efficiency, so x = (1 - r) / (2r - 1); NVFP4's main loop
// is twice fp8's again (L / 4), giving (1 + x) / (1 + 4x) (0.75 at r = 0.9). No new constant: the
// fp8 one's mechanism carried one format further.
double ComputeModel::low_precision_gemm_eff(const OpCost& op) const {
  if (!(op.fp8_eligible && op.kind == OpKind::Gemm)) return 1.0;
  const double ratio = constants_.get("fp8_gemm_eff_ratio");
  if (precision_ == topology::Precision::Fp8) return ratio;
  if (precision_ != topology::Precision::Nvfp4) return 1.0;
  const double x = ratio > 0.5 ? (1.0 - ratio) / (2.0 * ratio - 1.0) : 1e9;
  return (1.0 + x) / (1.0 + 4.0 * x);
}

// Transformer Engine's cast of the operand that changes every micro-batch: the activation A[m,k]
// before the forward GEMM, the output gradient dY[m,n] before the two backward GEMMs (weights are
// cast once per step). A streaming kernel at the pointwise efficiency.
double ComputeModel::fp8_cast_seconds(const OpCost& op, Pass pass) const {
  if (!runs_fp8(op)) return 0.0;
  const double b = std::max(op.batch, 1);
  const double elements = b * static_cast<double>(op.m) * (pass == Pass::Forward ? op.k : op.n);
  const char* per_element =
      precision_ == topology::Precision::Nvfp4 ? "nvfp4_cast_bytes_per_element" : "fp8_cast_bytes_per_element";
  const sim::Bytes bytes{elements * constants_.get(per_element)};
  const double eff = constants_.get("hbm_stream_eff") * constants_.get("pointwise_mem_eff");
  return bytes / (memory_bandwidth() * eff);
}

int ComputeModel::kernels(const OpCost& op, Pass pass) const {
  const int cast = runs_fp8(op) ? 1 : 0;
  if (pass == Pass::Backward && op.is_matmul()) return (op.frozen ? 1 : 2) + cast;  // dgrad + wgrad (flash: dq/dk/dv + preprocess)
  return 1 + cast;
}

sim::SimTime ComputeModel::op_time(const OpCost& op, Pass pass) const {
  const double roofline = std::max(flops_seconds(op, pass), bytes_seconds(op, pass));
  const double launch = kernels(op, pass) * constants_.get("kernel_launch_us") * 1e-6;
  return sim::SimTime::from_seconds(roofline + fp8_cast_seconds(op, pass) + launch);
}

sim::SimTime ComputeModel::op_time(const OpCost& op, Pass pass, const Contention& beside) const {
  CLUSTERSIM_CHECK(beside.sm_share >= 0 && beside.sm_share < 1, "a collective holds a share of the SMs in [0, 1)");
  CLUSTERSIM_CHECK(beside.hbm_bytes_per_s >= 0, "a collective's HBM traffic is not negative");
  const double roofline = std::max(flops_seconds(op, pass, beside.sm_share),
                                   bytes_seconds(op, pass, beside.hbm_bytes_per_s));
  const double launch = kernels(op, pass) * constants_.get("kernel_launch_us") * 1e-6;
  return sim::SimTime::from_seconds(roofline + fp8_cast_seconds(op, pass) + launch);
}

// Host launches of an op: its kernels, except that a grouped expert GEMM (model/transformer_ops.h:
// the routed experts' "expert_*" GEMMs, batch = local experts) issues one GEMM per expert per
// kernel when grouped_gemm_launches_per_expert is 1 (Transformer Engine's multi-stream path).
double ComputeModel::launches(const OpCost& op, Pass pass) const {
  const double kernel_count = kernels(op, pass);
  const bool grouped = op.kind == OpKind::Gemm && op.batch > 1 && op.name.starts_with("expert_");
  if (!grouped) return kernel_count;
  const int gemms = pass == Pass::Backward ? (op.frozen ? 1 : 2) : 1;
  return kernel_count + gemms * (op.batch - 1) * constants_.get("grouped_gemm_launches_per_expert");
}

// Host time of an op: its kernel launches and its other framework ops (OpCost::fwd_host_ops, MoE
// layers' reshapes, counts and copies) at host_launch_us each, and its torch.distributed calls at
// torch_distributed_call_us. A full-iteration CUDA graph replays the whole step from one launch:
// no per-op host time.
sim::SimTime ComputeModel::host_time(const OpCost& op, Pass pass) const {
  if (cuda_graphs_) return sim::SimTime::zero();
  const bool fwd = pass == Pass::Forward;
  const double ops = launches(op, pass) + (fwd ? op.fwd_host_ops : op.bwd_host_ops);
  const double calls = fwd ? op.fwd_dist_calls : op.bwd_dist_calls;
  return sim::SimTime::from_seconds((ops * constants_.get("host_launch_us") +
                                     calls * constants_.get("torch_distributed_call_us")) * 1e-6);
}

// The host issues kernels asynchronously and runs ahead while long kernels execute, so a stream of
// ops is bound by the larger of the two totals: the GPU's work, or the CPU's issuing of it. An op
// with host_sync_after (the forward of a dropless MoE dispatch) makes the host wait for the device:
// the queue drains and a round trip (launch_blocking_sync_us) passes. After it the GPU queue is
// EMPTY, so the host no longer runs ahead: each op's kernels start only once the host has issued
// them (its host_time), and a stretch of host-heavy, device-light ops (the dispatcher's split-size
// lists and all-to-all calls right after the sync) leaves the GPU idle for all of their host time:
//   t_host += host(op);  t_dev = max(t_dev, t_host) + device(op)   for each op after the sync,
// the stretch ending at max(t_dev, t_host). Before the first sync of the list the host has run
// ahead over the previous layer, so that stretch stays max(sum device, sum host).
// A full-iteration CUDA graph (set_cuda_graphs) has neither host time nor a host sync: the sum of
// the device times.
// Under CUDA_LAUNCH_BLOCKING=1 the host cannot run ahead: each kernel is issued, runs, and is
// waited for, so the host's issuing, the device time and a round trip per kernel add up.
sim::SimTime ComputeModel::ops_time(const std::vector<OpCost>& ops, Pass pass) const {
  const double sync_s = constants_.get("launch_blocking_sync_us") * 1e-6;
  sim::SimTime device = sim::SimTime::zero(), host = sim::SimTime::zero(), synced = sim::SimTime::zero();
  sim::SimTime all_device = sim::SimTime::zero(), all_host = sim::SimTime::zero();
  bool drained = false;  // past a host sync: the recurrence above instead of max(device, host)
  double kernel_count = 0;
  for (const OpCost& op : ops) {
    const sim::SimTime d = op_time(op, pass), h = host_time(op, pass);
    all_device += d;
    all_host += h;
    kernel_count += launches(op, pass);
    if (drained) {
      host += h;
      device = std::max(device, host) + d;
    } else {
      device += d;
      host += h;
    }
    if (pass == Pass::Forward && op.host_sync_after && !cuda_graphs_) {
      synced += std::max(device, host) + sim::SimTime::from_seconds(sync_s);
      device = host = sim::SimTime::zero();
      drained = true;
    }
  }
  if (launch_blocking_)
    return all_device + all_host + sim::SimTime::from_seconds(kernel_count * sync_s);
  if (cuda_graphs_) return all_device;
  return synced + std::max(device, host);
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

sim::SimTime ComputeModel::optimizer_step_time(double params_on_gpu, Optimizer opt, bool fp32_master_weights) const {
  CLUSTERSIM_CHECK(params_on_gpu >= 0, "negative parameter count");
  if (params_on_gpu <= 0) return sim::SimTime::zero();
  const sim::Bytes bytes{params_on_gpu * optimizer_bytes_per_param(opt, fp32_master_weights)};
  const double seconds = bytes / (memory_bandwidth() * constants_.get("hbm_stream_eff"));
  return sim::SimTime::from_seconds(seconds + constants_.get("kernel_launch_us") * 1e-6);
}

}  // namespace clustersim::workloads
