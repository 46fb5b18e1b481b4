// The memory model's line builder and the helpers its section files share (memory_lines.h).
#include "workloads/memory/memory_lines.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace clustersim::workloads {

bool mixed_precision(topology::Precision p) {
  return p != topology::Precision::Fp32 && p != topology::Precision::Tf32;
}

double gradient_bucket_bytes(const MemoryRequest& r) {
  return r.sync.bucket_bytes(mixed_precision(r.training.precision) ? state_dtype_bytes(r.training.grad_dtype) : 4.0);
}

std::string format_text(const char* format, double a, double b, double c, double d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

double layer_params(const ModelSpec& m, const MemoryOptions& o) {
  if (o.exact_layer_params || m.is_mla()) return m.layer_parameters();
  const double h = m.hidden;
  const double kv_width = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * m.head_dim();
  const double q = m.attention_width();
  const double attention = h * (q + 2.0 * kv_width) + q * h;
  const double mlp = (m.mlp == MlpKind::Gelu ? 2.0 : 3.0) * h * m.ffn_hidden;
  return attention + mlp;
}

ModelSpec sequence_shard(const ModelSpec& m, const ParallelSpec& par) {
  ModelSpec local = m;
  local.seq_len = par.local_seq_len(m.seq_len);
  return local;
}

int micro_batches_per_replica(const MemoryRequest& r) {
  return std::max(1, r.training.micro_batches_per_replica(std::max(1, r.parallel.dp)));
}

int first_layer_of_stage(const ModelSpec& m, const ParallelSpec& par, int stage) {
  int first = 0;
  for (int st = 0; st < stage; ++st) first += par.layers_on_stage(m.layers, st);
  return first;
}

void MemoryLineBuilder::add_states(const std::string& what, double params, const MemoryRequest& r, bool trainable) {
  const ModelStates s = model_state_bytes(params, r.parallel, r.training);
  const std::string n = format_text("%.6g params", params);
  add(what + ": weights", MemoryCategory::Params, s.params.value,
      n + " x weight bytes (/dp under ZeRO-3)" + (trainable ? "" : "; frozen (LoRA): no gradients or optimizer states"));
  if (!trainable) return;
  const bool offload = r.sync.offload_optimizer == OffloadDevice::Cpu;
  add(what + (offload ? ": gradients (host, ZeRO-Offload)" : ": gradients"), offload ? MemoryCategory::Host : MemoryCategory::Grads,
      s.grads.value, n + " x grad bytes (/dp under ZeRO-2+)");
  add(what + (offload ? ": optimizer states (host, ZeRO-Offload)" : ": optimizer states"),
      offload ? MemoryCategory::Host : MemoryCategory::Optimizer, s.optimizer.value,
      n + " x K (/dp under ZeRO-1+ or the distributed optimizer)");
}

void MemoryLineBuilder::finish() {
  std::uint8_t peak_phase = 0;
  double peak_bytes = -1;
  for (std::uint8_t phase : {kLayerForward, kLayerBackward, kLoss}) {
    double sum = 0;
    for (const MemoryLine& l : b_.lines) sum += (l.phases & phase) ? l.bytes.value : 0.0;
    if (sum > peak_bytes) peak_phase = phase, peak_bytes = sum;
  }
  for (MemoryLine& l : b_.lines) {
    l.at_peak = l.phases == 0 || (l.phases & peak_phase) != 0;
    if (!l.at_peak) l.formula += std::string(" [transient; not at the peak: the ") + phase_name(peak_phase) + " holds more]";
    if (l.at_peak) count(l);
  }
}

const char* MemoryLineBuilder::phase_name(std::uint8_t phase) {
  return phase == kLayerForward ? "layer forward" : phase == kLayerBackward ? "layer backward" : "loss";
}

void MemoryLineBuilder::count(const MemoryLine& l) {
  switch (l.category) {
    case MemoryCategory::Params: b_.params += l.bytes; break;
    case MemoryCategory::Grads: b_.grads += l.bytes; break;
    case MemoryCategory::Optimizer: b_.optimizer += l.bytes; break;
    case MemoryCategory::Activations: b_.activations += l.bytes; break;
    case MemoryCategory::Buffers: b_.buffers += l.bytes; break;
    case MemoryCategory::Runtime: b_.runtime += l.bytes; break;
    case MemoryCategory::Host: b_.host += l.bytes; return;  // host memory: not the GPU's
  }
  b_.total += l.bytes;
}

}  // namespace clustersim::workloads
