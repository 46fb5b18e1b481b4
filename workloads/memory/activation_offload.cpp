// Activation CPU offloading: which layers go to the host and what their copies cost
// (activation_offload.h).
#include "workloads/memory/activation_offload.h"

#include <algorithm>
#include <string_view>

#include "workloads/memory/memory_model.h"

namespace clustersim::workloads {

int offloaded_layers_in_chunk(int chunk_layers, int offload_layers) {
  return std::clamp(std::min(offload_layers, chunk_layers - 1), 0, chunk_layers);
}

// GB200 / GB300 superchips join one Grace CPU to two Blackwell GPUs over NVLink-C2C, 900 GB/s
// bidirectional (NVIDIA GB200 NVL72 product page and spec table: "NVLink-C2C 900 GB/s"), i.e. 450
// GB/s per direction, which the superchip's two GPUs share when they offload in lockstep (data-
// parallel ranks do): 225 GB/s per GPU and direction. UNSURE: whether the 900 GB/s is per GPU or
// per superchip is not stated unambiguously; the per-superchip reading is the conservative one.
// Every other GPU reaches host memory over its PCIe x16 link.
sim::BytesPerSec host_link_bandwidth(const topology::GpuSpec& gpu) {
  constexpr double kC2cPerGpuPerDirBps = 900e9 / 2.0 / 2.0;
  if (gpu.id.starts_with("gb")) return sim::BytesPerSec{kC2cPerGpuPerDirBps};
  return topology::pcie_x16_bandwidth(gpu.pcie_gen);
}

OffloadExposure offload_exposure(sim::Bytes layer_bytes, sim::BytesPerSec link, double layer_fwd_s, double layer_bwd_s) {
  OffloadExposure e;
  if (layer_bytes.value <= 0 || link.value <= 0) return e;
  const double copy_s = layer_bytes.value / link.value;
  e.fwd_s = std::max(0.0, copy_s - layer_fwd_s);
  e.bwd_s = std::max(0.0, copy_s - layer_bwd_s);
  return e;
}

namespace {

// The offload module whose region saves the layer tensor `name` (layer_activations.cpp), 0 if none.
unsigned module_of(std::string_view name) {
  if (name == "attention norm input") return kOffloadAttnNorm;
  if (name == "QKV GEMM input") return kOffloadQkvLinear;
  if (name == "Q" || name == "K" || name == "V" || name == "softmax logsumexp (fp32)") return kOffloadCoreAttn;
  if (name == "attention output (out-projection input)" || name == "out-projection input, FP8 copy") return kOffloadAttnProj;
  if (name == "MLP norm input") return kOffloadMlpNorm;
  return 0;
}

// Bytes per element of a saved layer tensor: the GEMM inputs in their kept format, fp32 statistics.
double element_bytes(std::string_view name, const ActivationBytes& bytes) {
  if (name == "softmax logsumexp (fp32)") return 4.0;
  if (name == "QKV GEMM input" || name == "out-projection input, FP8 copy") return bytes.gemm_input;
  return bytes.element;
}

}  // namespace

OffloadGroupBytes fine_grained_offload_bytes(const ModelSpec& m, const TrainingSpec& tr, int tp, bool sp, double moe_load) {
  OffloadGroupBytes g;
  const unsigned off = tr.offload_modules;
  if (off == 0) return g;
  const double min_elements = tr.offload_min_tensor_elements;
  const ActivationBytes bytes = activation_bytes_for(tr.precision);
  const auto offloads = [&](double tensor_bytes, double element) { return tensor_bytes / element >= min_elements; };
  if ((off & ~kOffloadMoeModules) != 0 && !m.is_hybrid()) {
    const unsigned recomputed = tr.recompute == Recompute::Full ? 0u : tr.recompute_modules;
    for (const SavedTensor& x : saved_layer_tensors(m, tr.micro_batch, tp, sp, tr.recompute, bytes, tr.recompute_save))
      if ((module_of(x.name) & off) != 0 && !recomputed_by_modules(x, recomputed) &&
          offloads(x.bytes, element_bytes(x.name, bytes)))
        g.attention += x.bytes;
  }
  const bool moe_kept = tr.recompute != Recompute::Full && (tr.recompute_modules & kRecomputeMoe) == 0;
  if ((off & kOffloadMoeModules) != 0 && m.is_moe() && moe_kept) {
    // The routed experts' tensors as activation_memory.cpp's moe_layer_saved counts them: this
    // GPU's k x load token-slots of s*b/t tokens, the fc1 input io-wide, fc1's output 2 x moe_ffn
    // wide for a GLU (gate and up) and 1 x otherwise, fc2's input moe_ffn wide.
    const double e = bytes.element;
    const double slots = static_cast<double>(m.seq_len) * tr.micro_batch / tp * m.experts_per_token * moe_load;
    const double fc1_in = slots * m.expert_io_width();
    const double fc1_out = slots * m.moe_ffn_hidden * (m.mlp == MlpKind::Gelu ? 1.0 : 2.0);
    const double fc2_in = (tr.recompute_modules & kRecomputeMoeAct) != 0 ? 0.0 : slots * m.moe_ffn_hidden;
    const auto add = [&](double elements) {
      if (elements > 0 && elements >= min_elements) g.moe += e * elements;
    };
    if ((off & (kOffloadExpertFc1 | kOffloadFusedGroupMlp)) != 0) add(fc1_in);
    if ((off & (kOffloadMoeAct | kOffloadFusedGroupMlp)) != 0) add(fc1_out);
    if ((off & kOffloadFusedGroupMlp) != 0) add(fc2_in);
  }
  return g;
}

OffloadExposure fine_grained_exposure(double bytes, int groups, sim::BytesPerSec link, double chunk_fwd_s,
                                      double chunk_bwd_s) {
  OffloadExposure e;
  if (bytes <= 0 || groups <= 0 || link.value <= 0) return e;
  const double copy_s = bytes / link.value;
  e.fwd_s = groups * std::max(0.0, copy_s - chunk_fwd_s / groups);
  e.bwd_s = groups * std::max(0.0, copy_s - chunk_bwd_s / groups);
  return e;
}

}  // namespace clustersim::workloads
