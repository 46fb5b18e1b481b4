// How long one GPU takes to run an operation: a roofline per op with physical efficiencies, each
// a mechanism that differs between GPU generations (so that constants measured on one transfer
// to the next).
//
//   device(op) = max(FLOPs / (peak[precision] x clock x power x MIG x eff_flops(op)),
//                    bytes / (HBM bandwidth x MIG x eff_mem(op)))
//                + fp8 casts(op) + kernels(op) x kernel_launch_us
//   pass(ops)  = max(sum device(op), sum host(op)) before a host sync; after it (empty GPU queue)
//                each op's kernels start once the host has issued them (see ops_time)
//   host(op)   = cpu x ((kernels(op) + framework ops(op)) x host_launch_us + forward TE module
//                calls(op) x te_module_host_us + torch.distributed calls x torch_distributed_call_us)
//                + a grouped expert GEMM's per-expert GEMMs x grouped_gemm_expert_host_us;
//                cpu = grace_host_ratio on a Grace host (GB200, GB300), 1 on x86
//
// Throughput side, each factor a physical effect with a named constant (compute_constants.cpp has the
// sources; `ComputeConstants::describe` prints them):
//   * peak[precision]: the catalog's DENSE datasheet peak, quoted at the catalog's tensor_clock_mhz
//     (A100 1410, H100 SXM 1830 MHz). Matmuls run at the run precision's tensor rate; under fp8
//     only `fp8_eligible` linear layers use the FP8 rate, attention and the logits stay bf16
//     (Transformer Engine recipes). fp32 runs at the FP32 (non-tensor) rate; tf32 at the TF32 rate
//     unless [cluster.gpu_overrides] tf32 = false. Elementwise FLOPs use the FP32 rate.
//   * clock: a GPU running dense GEMMs hits its power limit and sustains a lower SM clock,
//     `sustained_clock_ratio` of the tensor clock (sustained_clock_mhz(): 1180 MHz on A100,
//     1532 MHz on H100 SXM). Blackwell quotes its peaks at a clock its TDP cannot hold under a
//     dense load: its clock follows H100's by the power per tensor lane on the same process class
//     (power_density_clock_ratio: B200 0.85, GB200 0.81 of the quoted clock, before the ratio).
//     The DGX-2's V100 SXM3 parts run the SXM2's die at 350 / 450 W: cbrt(TDP / 300 W) x its clock.
//   * power: a power limit below TDP lowers the SM clock further along a DVFS curve
//     (P = static + dynamic, dynamic ~ f*V^2 with V ~ f), fitted to the Zeus NSDI'23 V100/A40
//     medians. HBM bandwidth is not affected (memory clock is untouched under SW_POWER_CAP).
//   * MIG: compute scales by the slice's SMs / the GPU's SMs (98 of A100's 108 SMs are usable in
//     7g), memory bandwidth by memory slices / 8 (topology::resolve_mig); capacity is the slice's
//     listed memory (topology::gpu_memory_capacity).
//   * eff_flops(GEMM) = gemm_eff_max x tile-and-wave utilisation over the GPU's SM count (108 on
//     A100, 132 on H100 SXM, 148 on B200) x k-depth efficiency k / (k + gemm_k_half + k_store),
//     k_store the wave's epilogue store of its C tiles through HBM in elements of k (the tensor
//     rate over the HBM bandwidth: 117 on A100 80GB, 225 on H100 SXM bf16, 405 fp8 at fp8_gemm_eff_ratio;
//     0 on Blackwell, whose Tensor Memory accumulators let the store overlap the next tile; see
//     gemm_efficiency and epilogue_store_k) x the GPU's measured matmul throughput against this
//     shape model, relative to the A100's (measured_matmul_ratio: H100 0.93, B200 1.03; the MAMF
//     table of measured_matmul.cpp);
//     flash attention: the kernel of the GPU's generation (attention_efficiency: FlashAttention-2
//     era on Ampere, FlashAttention-3 / cuDNN on Hopper, cuDNN on Blackwell) on the causal half of
//     the work, with the backward's recompute of QK^T.
// Memory side: GEMMs stream at hbm_stream_eff of HBM bandwidth, framework elementwise/norm
// kernels (norms, activations, dropout, softmax, rotary, loss) at hbm_stream_eff x
// pointwise_mem_eff; the optimizer step streams its states (optimizer_step_time).
// FP8: each fp8 GEMM pays Transformer Engine's cast of its changing operand (forward A, backward
// dY) as one more memory-bound kernel, fp8_cast_bytes_per_element per element; a gated MLP's gate
// and up halves are one fc1 module, whose input is cast once and output gradient in one kernel.
// Per-layer / per-module precision (OpCost::linear_precision, model/module_precision.h): a linear
// kept in bf16 costs what it costs in a bf16 run (16-bit rate, bf16 bytes, no cast); one dropped
// from nvfp4 to fp8 costs what it costs in an fp8 run.
// MXFP8 (block scaling, and the linears an nvfp4 recipe keeps in fp8) runs its GEMMs at
// mxfp8_gemm_eff_ratio of the per-tensor fp8 kernel (low_precision_gemm_eff).
// NVFP4 (Blackwell): the same fp8-eligible GEMMs (the transformer layers' linears: forward, data
// and weight gradient, as NVIDIA's NVFP4 recipe runs all three) at the GPU's dense FP4 rate, with
// fp8's fixed per-tile cost against a main loop shorter by the GPU's FP4 / BF16 peak ratio, their
// operands at kNvfp4BytesPerElement, the cast at nvfp4_cast_bytes_per_element; attention core,
// output layer and pointwise kernels stay bf16.
// Host: an eager framework issues every kernel from the CPU (host_launch_us) and runs each
// Transformer Engine module's Python work in the forward (te_module_host_us); a pass of many
// small kernels (small models, short sequences, micro-batch 1) is bound by the CPU, not the GPU.
// A Grace host takes grace_host_ratio times as long for the same work.
// Contention: an op with a collective beside it (op_time with a Contention) runs its tile waves on
// the SMs the collective leaves and streams at the HBM bandwidth it leaves (the tensor-parallel
// overlap of workloads/training/overlap.h).
//
// Op bytes contract: OpCost bytes are at the activation element size of the run precision
// (`activation_bytes`: 4 for fp32/tf32, 2 otherwise -- fp8 runs keep bf16 activations). Under fp8
// the compute model recomputes an fp8-eligible GEMM's bytes from its shape: A and B in 1 byte,
// C written in 2.
//
// The model is a value: no state beyond its inputs; two simulations can hold different ones.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.h"
#include "topology/catalog.h"
#include "topology/cluster_spec.h"
#include "workloads/specs.h"
#include "workloads/model/cross_entropy_kernels.h"
#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

// HBM bytes of one NVFP4 GEMM operand element: 4-bit E2M1 + one 8-bit E4M3 scale per 16 elements.
inline constexpr double kNvfp4BytesPerElement = 0.5 + 1.0 / 16.0;

// Named, documented, overridable constants (scenario [model_constants] name = value).
class ComputeConstants {
 public:
  ComputeConstants();  // documented defaults
  static std::span<const std::string_view> names();  // every constant name
  std::string_view describe(std::string_view name) const;  // one line: meaning, unit, source
  double get(std::string_view name) const;                  // throws std::invalid_argument if unknown
  // Throws std::invalid_argument for an unknown name or a value outside the constant's range.
  void set(std::string_view name, double value);
  // set() each; unknown names throw (the scenarios module separately reports file:line for unknown
  // names via check_model_constant_names(spec, names())).
  void apply(const std::map<std::string, double>& overrides);
  // The valid range [lo, hi] of a constant.
  std::pair<double, double> range(std::string_view name) const;

 private:
  std::vector<double> values_;  // in names() order
};

enum class Pass : std::uint8_t { Forward, Backward };

// Transformer Engine's FP8 scaling recipe, as the constants select it (ComputeModel::fp8_scaling):
// Current when fp8_amax_bytes_per_element > 0 (Float8CurrentScaling: an amax pass per cast), else
// Block when fp8_block_scale_bytes_per_element > 0 (MXFP8BlockScaling: per-block scales), else
// Delayed (DelayedScaling: amax history, reduced once per pass).
enum class Fp8Scaling : std::uint8_t { Delayed, Current, Block };

// The terms of one op's device time (ComputeModel::op_time_parts), for explaining it:
// time = max(flops_s, bytes_s) + cast_s + launch_s, with flops_s = flops / (peak x efficiency) and
// bytes_s = bytes / (hbm x memory_efficiency). `efficiency` is the effective one (a backward GEMM's
// two halves, flash attention's causal fraction and softmax factor folded in); `efficiency_constant`
// and `memory_constant` name the ComputeConstants it starts from ("" for the FP32 rate).
struct OpTimeParts {
  double flops = 0, bytes = 0;          // FLOPs and HBM bytes the roofline uses
  double peak = 0;                      // FLOP/s: the rate the op runs at before efficiency (sustained)
  double efficiency = 1;                // effective, in (0, 1]
  const char* efficiency_constant = "";
  double hbm = 0;                       // bytes/s: HBM bandwidth before efficiency
  double memory_efficiency = 1;
  const char* memory_constant = "";
  double flops_s = 0, bytes_s = 0, cast_s = 0, launch_s = 0;
  int kernels = 0;
  double time_s() const { return (flops_s > bytes_s ? flops_s : bytes_s) + cast_s + launch_s; }
};

// Whether the GPU's host CPU is a Grace (GB200 / GB300 superchips; grace_host_ratio).
bool grace_hosted(const topology::GpuSpec& gpu);

// Element size of activations and of the OpShape that layer_ops/head_ops take for a run precision.
int activation_bytes(topology::Precision p);

// The fraction of its unconstrained SM clock a GPU sustains under a power limit of `power_ratio`
// x TDP for a load that draws `demand_ratio` x TDP at that clock, with `static_fraction` of the
// power not scaling with the clock: solves p/d = s + (1 - s) r^3 for r, capped at 1.
double power_limited_clock_ratio(double power_ratio, double static_fraction, double demand_ratio);

// The fraction of its quoted tensor clock a GPU can hold at its TDP under a dense load, relative to
// the H100 SXM on the same process class (Blackwell: lane_energy_ratio_sm100) or, for Volta, to the
// V100 SXM2 (300 W) on the same die; 1 for the other generations; at most 1 / sustained_clock_ratio
// (no GPU runs above its quoted clock). See sustained_clock.cpp.
double power_density_clock_ratio(const topology::GpuSpec& gpu, const ComputeConstants& constants);

// The GEMM shape model of ComputeModel::gemm_efficiency as free functions of the constants, for
// callers with no ComputeModel (measured_matmul.cpp): the fraction of the sustained tensor rate an
// m x n x k GEMM reaches on `sms` SMs with an epilogue store worth `k_store` elements of k, and that
// store for a GPU of compute capability `compute_capability`, HBM bandwidth `hbm`, C elements of
// `c_bytes` and main-loop rate `tensor_rate` (gemm_efficiency.cpp).
double gemm_shape_efficiency(const ComputeConstants& constants, double m, double n, double k, double batch, double sms,
                             double k_store);
double gemm_epilogue_store_k(const ComputeConstants& constants, int compute_capability, sim::BytesPerSec hbm,
                             double c_bytes, sim::FlopsPerSec tensor_rate);

// A collective running on the same GPU beside an op (Transformer Engine userbuffers, NCCL): its
// kernels hold `sm_share` of the SMs, and it streams `hbm_bytes_per_s` through HBM (it reads what it
// sends, writes what it receives, and a reduction also reads the local partial it adds).
struct Contention {
  double sm_share = 0;         // in [0, 1)
  double hbm_bytes_per_s = 0;  // >= 0
};

class ComputeModel {
 public:
  ComputeModel(const topology::GpuSpec& gpu, const topology::ClusterSpec& cluster,
               topology::Precision precision, ComputeConstants constants);

  sim::SimTime op_time(const OpCost& op, Pass pass) const;  // device: roofline + fp8 casts + launch gaps
  // The same op with a collective beside it: the roofline on the SMs the collective leaves (tile
  // waves over floor(SMs x (1 - sm_share)), the tensor rate x (1 - sm_share)) and on the HBM
  // bandwidth it leaves (bandwidth - hbm_bytes_per_s, at least the constant min_hbm_share of it).
  sim::SimTime op_time(const OpCost& op, Pass pass, const Contention& beside) const;
  // op_time(op, pass) in its terms (OpTimeParts), for `run --explain`.
  OpTimeParts op_time_parts(const OpCost& op, Pass pass) const;
  // Back to back on one stream: the larger of the summed device times and the host's issuing time.
  sim::SimTime ops_time(const std::vector<OpCost>& ops, Pass pass) const;
  // Memory-bound optimizer step over the parameters held on this GPU: bytes read + written per
  // parameter / (HBM bandwidth x hbm_stream_eff) for a fused (multi-tensor) kernel; a per-parameter
  // loop of eager elementwise kernels streams at hbm_stream_eff x pointwise_mem_eff, the rate of the
  // framework's other elementwise kernels.
  sim::SimTime optimizer_step_time(double params_on_gpu, Optimizer opt, bool fp32_master_weights,
                                   OptimizerKernels kernels = OptimizerKernels::Fused,
                                   bool weight_decay = true) const;
  // Bytes one parameter's optimizer step reads plus writes (see optimizer_step_time).
  static double optimizer_bytes_per_param(Optimizer opt, bool fp32_master_weights);
  static double per_parameter_optimizer_bytes(Optimizer opt, bool weight_decay);

  double gemm_efficiency(const OpCost& op) const;  // the shape-dependent factor in (0, 1]
  double gemm_efficiency(double m, double n, double k, double batch) const;
  // A wave's epilogue store of its C tiles in elements of reduction depth, for a GEMM whose main
  // loop runs at `tensor_rate` (sustained, before gemm_eff_max); see gemm_efficiency.cpp.
  double epilogue_store_k(sim::FlopsPerSec tensor_rate) const;
  sim::FlopsPerSec datasheet_peak() const;  // dense peak at the run precision (tf32 override honoured)
  sim::FlopsPerSec sustained_peak() const;  // after power cap / MIG / sustained clock
  sim::BytesPerSec memory_bandwidth() const;  // HBM bandwidth of the GPU or its MIG slice
  // The rate a framework's memory-bound elementwise kernel streams at (casts, eager optimizer
  // loops, FSDP's copies): memory_bandwidth() x hbm_stream_eff x pointwise_mem_eff.
  sim::BytesPerSec pointwise_bandwidth() const;
  sim::Bytes memory_capacity() const { return memory_capacity_; }  // topology::gpu_memory_capacity
  double clock_ratio() const { return clock_ratio_; }  // sustained clock x power limit
  // The factor on every GEMM's efficiency from the GPU's measured matmul throughput (measured_matmul.h).
  double matmul_measured_ratio() const { return matmul_measured_ratio_; }
  // The SM clock under training: the clock the tensor peak is quoted at x clock_ratio() (MHz; 0
  // when the catalog knows neither that clock nor the boost clock).
  double sustained_clock_mhz() const;
  // The fused attention kernel's efficiency on this GPU: the generation's own kernel, or an
  // Ampere-generation one (AttentionKernel::Fa2, FlashAttnTriton) on Hopper (op_roofline.cpp).
  double attention_efficiency(AttentionKernel kernel = AttentionKernel::Native) const;
  // The fused attention op's time relative to its FLOPs at attention_efficiency(): its softmax
  // exponentials beside its tensor work, against the same at flash_eff_ref_head_dim (op_roofline.cpp).
  double softmax_exp_factor(const OpCost& op, Pass pass) const;
  // Host time to issue an op: (launches + its other framework ops) x host_launch_us + its forward
  // Transformer Engine module calls x te_module_host_us + its torch.distributed calls x
  // torch_distributed_call_us (x grace_host_ratio on a Grace host) + a grouped expert GEMM's
  // per-expert GEMMs x grouped_gemm_expert_host_us; zero under a full-iteration CUDA graph.
  sim::SimTime host_time(const OpCost& op, Pass pass) const;
  // Kernel launches the host issues for an op: kernels(op), plus one per further local expert of a
  // grouped expert GEMM (grouped_gemm_launches_per_expert).
  double launches(const OpCost& op, Pass pass) const;
  double sm_fraction() const { return sm_fraction_; }  // MIG slice SMs / GPU SMs (1 without MIG)
  const ComputeConstants& constants() const { return constants_; }
  // CUDA_LAUNCH_BLOCKING=1 ([training] launch_blocking): ops_time() adds device and host time and
  // a launch_blocking_sync_us round trip per kernel instead of overlapping them.
  void set_launch_blocking(bool on) { launch_blocking_ = on; }
  bool launch_blocking() const { return launch_blocking_; }
  // A full-iteration CUDA graph ([training] cuda_graphs; Megatron-Core's cuda_graph_scope
  // "full_iteration"): the step replays from one graph launch, so host_time() is zero and an MoE
  // forward's host sync does not happen (a graph cannot contain one: the dispatcher must be
  // sync-free); ops_time() is the sum of the device times.
  void set_cuda_graphs(bool on) { cuda_graphs_ = on; }
  bool cuda_graphs() const { return cuda_graphs_; }
  // Per-layer CUDA graphs of the CudaGraphModule bits in `modules` ([training] cuda_graph_scope;
  // Transformer Engine make_graphed_callables or Megatron-Core's CudaGraphManager): an op whose
  // graph_part is captured has no host time of its own (captured()); each stretch of captured
  // ops replays from one graph launch per pass, charged as one eager op (host_launch_us x
  // grace_host_ratio) to the stretch's first op. Ops outside the scope keep their host time, and
  // the MoE forward's host sync stays unless "moe" captures the whole layer. With
  // `shared_expert_overlap` (moe_shared_expert_overlap) the shared experts run outside the
  // router's graph.
  void set_cuda_graph_modules(unsigned modules, bool shared_expert_overlap = false) {
    graph_modules_ = modules;
    shared_expert_overlap_ = shared_expert_overlap;
  }
  unsigned cuda_graph_modules() const { return graph_modules_; }
  bool captured(const OpCost& op) const;  // replayed from a per-layer graph (not full-iteration)
  const topology::GpuSpec& gpu() const { return gpu_; }
  // The FP8 scaling recipe the constants select (Fp8Scaling; what an FP8 linear of this run uses).
  Fp8Scaling fp8_scaling() const;

 private:
  sim::FlopsPerSec matmul_peak(const OpCost& op) const;  // datasheet peak the op's matmul runs at
  double flops_seconds(const OpCost& op, Pass pass, double sm_share = 0) const;
  double bytes_seconds(const OpCost& op, Pass pass, double hbm_taken_bytes_per_s = 0) const;
  double gemm_efficiency_on(double m, double n, double k, double batch, double sms, double k_store) const;
  int kernels(const OpCost& op, Pass pass) const;
  bool runs_fp8(const OpCost& op) const;  // a GEMM that runs quantized (fp8 or nvfp4: linear_format)
  // Whether this run's fp8 linears are MXFP8 (block scaling, or the fp8 linears of an nvfp4 recipe).
  bool fp8_linears_mxfp8() const;
  // Bytes/s a Mamba-2 kernel streams at most on sm100 (mamba_kernels_sm100_tbps); infinity otherwise.
  double mamba_kernel_bandwidth_cap(const OpCost& op) const;
  // The loss op's unfused counts ([training] cross_entropy or cross_entropy_unfused = 1); none when fused.
  std::optional<LossKernelCounts> unfused_loss(const OpCost& op) const;
  // The format a GEMM runs in: Fp8 / Nvfp4 for a quantized linear, Bf16 for every other matmul of
  // an fp8 / nvfp4 run (model/module_precision.h sets the per-module exceptions).
  topology::Precision linear_format(const OpCost& op) const;
  double host_cpu_ratio() const;  // grace_host_ratio on a Grace host, 1 on x86
  double low_precision_gemm_eff(const OpCost& op) const;  // fp8 / nvfp4 GEMM efficiency vs bf16 (1 otherwise)
  double fp8_cast_seconds(const OpCost& op, Pass pass) const;

  topology::GpuSpec gpu_;
  topology::Precision precision_;
  bool tf32_;
  ComputeConstants constants_;
  int sms_;              // SMs available (MIG slice or whole GPU)
  double sm_fraction_;   // sms_ / gpu_.sms
  double mem_fraction_;  // memory slices / 8
  sim::Bytes memory_capacity_;  // the GPU's or its MIG slice's
  double clock_ratio_;   // sustained_clock_ratio x power-limited clock ratio x power density (Blackwell)
  double matmul_measured_ratio_ = 1.0;  // measured_matmul_ratio: this GPU's GEMMs against the A100 anchor's
  bool launch_blocking_ = false;
  bool cuda_graphs_ = false;
  unsigned graph_modules_ = 0;  // CudaGraphModule bits
  bool shared_expert_overlap_ = false;
};

}  // namespace clustersim::workloads
