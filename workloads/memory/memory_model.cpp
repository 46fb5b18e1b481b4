#include "workloads/memory/memory_model.h"

#include <algorithm>
#include <cstdio>
#include <utility>

// Runtime constants (declared in the header):
//   kCudaContextBytes = 512 MiB: assumption. An idle PyTorch process on A100/H100 with CUDA 12 and
//     lazy module loading shows roughly 400-600 MiB in nvidia-smi before any tensor is allocated
//     (context, module images, the caching allocator's first segments excluded); older CUDA
//     without lazy loading is closer to 1 GiB.
//   kCublasWorkspaceBytes = 32 MiB: PyTorch's default cuBLAS workspace on Hopper,
//     CUBLAS_WORKSPACE_CONFIG ":4096:8" = 8 chunks of 4096 KiB (pre-Hopper ":4096:2:16:8",
//     ~8 MiB); one per stream handle, one compute stream assumed.
//   kNcclCommunicatorBytes = 128 MiB: assumption. NCCL allocates NCCL_BUFFSIZE (4 MiB, Simple
//     protocol) plus LL/LL128 buffers per channel and per ring peer; ~16 channels x 2 peers x
//     4 MiB = 128 MiB per communicator on an NVSwitch/IB system.

namespace clustersim::workloads {
namespace {

constexpr double kMiB = 1048576.0;

bool mixed_precision(topology::Precision p) {
  return p != topology::Precision::Fp32 && p != topology::Precision::Tf32;
}

std::string fmt(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

int layers_on_stage(int layers, int pp, int stage) {
  return layers / pp + (stage < layers % pp ? 1 : 0);
}

double layer_params(const ModelSpec& m, const MemoryOptions& o) {
  if (o.exact_layer_params) return m.layer_parameters();
  const double h = m.hidden;
  const double kv_width = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * m.head_dim();
  const double attention = h * (h + 2.0 * kv_width) + h * h;
  const double mlp = (m.mlp == MlpKind::Gelu ? 2.0 : 3.0) * h * m.ffn_hidden;
  return attention + mlp;
}

class Builder {
 public:
  explicit Builder(MemoryBreakdown& b) : b_(b) {}
  void add(std::string name, MemoryCategory c, double bytes, std::string formula) {
    if (bytes <= 0) return;
    const sim::Bytes v{bytes};
    b_.lines.push_back(MemoryLine{std::move(name), c, v, std::move(formula)});
    switch (c) {
      case MemoryCategory::Params: b_.params += v; break;
      case MemoryCategory::Grads: b_.grads += v; break;
      case MemoryCategory::Optimizer: b_.optimizer += v; break;
      case MemoryCategory::Activations: b_.activations += v; break;
      case MemoryCategory::Buffers: b_.buffers += v; break;
      case MemoryCategory::Runtime: b_.runtime += v; break;
    }
    b_.total += v;
  }
  void add_states(const std::string& what, double params, const MemoryRequest& r) {
    const ModelStates s = model_state_bytes(params, r.parallel, r.training, r.options);
    const std::string n = fmt("%.6g params", params);
    add(what + ": weights", MemoryCategory::Params, s.params.value, n + " x weight bytes (/dp under ZeRO-3)");
    add(what + ": gradients", MemoryCategory::Grads, s.grads.value, n + " x grad bytes (/dp under ZeRO-2+)");
    add(what + ": optimizer states", MemoryCategory::Optimizer, s.optimizer.value,
        n + " x K (/dp under ZeRO-1+ or the distributed optimizer)");
  }

 private:
  MemoryBreakdown& b_;
};

int micro_batches_per_replica(const MemoryRequest& r) {
  return std::max(1, r.training.micro_batches_per_replica(std::max(1, r.parallel.dp)));
}

void add_model_states(Builder& out, const MemoryRequest& r, int stage) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const int t = par.tp;
  const bool first = stage == 0;
  const bool last = stage == par.pp - 1;
  const int layers = layers_on_stage(m.layers, par.pp, stage);
  out.add_states("layers", layers * layer_params(m, r.options) / t, r);
  if (first) {
    // Vocab-parallel word embedding is sharded over tp; learned positions are replicated.
    const double positions = m.learned_positions() ? static_cast<double>(m.seq_len) * m.hidden : 0.0;
    out.add_states("embedding", static_cast<double>(m.vocab) * m.hidden / t + positions, r);
  }
  if (last) {
    // Megatron keeps a copy of tied word embeddings on the last stage when pp > 1.
    const bool own_output = !m.tied_embeddings || par.pp > 1;
    const double output = own_output ? static_cast<double>(m.vocab) * m.hidden / t : 0.0;
    out.add_states("output layer", output + m.final_norm_parameters(), r);
  }
}

void add_activations(Builder& out, const MemoryRequest& r, int stage) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const TrainingSpec& tr = r.training;
  const int t = par.tp;
  const bool sp = par.sequence_parallel && t > 1;
  const double s = m.seq_len, b = tr.micro_batch, h = m.hidden;
  const double scale = mixed_precision(tr.precision) ? 1.0 : 2.0;  // Table 2 counts 16-bit tensors
  const int layers = layers_on_stage(m.layers, par.pp, stage);
  const double in_flight = micro_batches_in_flight(par, micro_batches_per_replica(r), stage);
  const double per_layer = activation_bytes_per_layer(m, tr.micro_batch, t, sp, tr.recompute).value * scale;
  out.add("layers: activations", MemoryCategory::Activations, per_layer * layers * in_flight,
          fmt("%.6g B/layer/micro-batch (Korthikanti Table 2) x %g layers x %g micro-batches in flight",
              per_layer, layers, in_flight));
  if (tr.recompute == Recompute::Full) {
    const double working = activation_bytes_per_layer(m, tr.micro_batch, t, sp, Recompute::None).value * scale;
    out.add("layers: recompute working set", MemoryCategory::Activations, working,
            "one layer's activations, no recompute, one micro-batch");
  }
  if (stage == 0 && m.mlp == MlpKind::Gelu) {
    const double mask = s * b * h / (sp ? t : 1) * in_flight;
    out.add("embedding: dropout mask", MemoryCategory::Activations, mask,
            "s*b*h" + std::string(sp ? "/t" : "") + " x 1 B x micro-batches in flight");
  }
  if (stage == par.pp - 1) {
    const double input = 4.0 * s * b * h / (sp ? t : 1) * scale;
    out.add("output layer: activations", MemoryCategory::Activations, input,
            std::string("final norm input + logits GEMM input: 4*s*b*h") + (sp ? "/t" : ""));
  }
}

void add_buffers(Builder& out, const MemoryRequest& r, int stage) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const TrainingSpec& tr = r.training;
  const int t = par.tp;
  const double s = m.seq_len, b = tr.micro_batch;
  const StateBytes sb = state_bytes_per_param(tr, r.options);
  if (par.dp > 1) {
    out.add("gradient buckets", MemoryCategory::Buffers, 2.0 * r.sync.bucket_mb * kMiB,
            fmt("2 x bucket_mb (%g MiB)", r.sync.bucket_mb));
  }
  if (par.zero >= 3 && par.dp > 1) {
    const double gathered = r.options.zero3_prefetch_layers * layer_params(m, r.options) / t * sb.weights;
    out.add("ZeRO-3 gathered parameters", MemoryCategory::Buffers, gathered,
            fmt("%d layers' full weights (current + prefetched)", r.options.zero3_prefetch_layers));
  }
  if (!m.flash_attention) {
    const double bytes_per = mixed_precision(tr.precision) ? 2.0 : 4.0;
    out.add("attention score workspace", MemoryCategory::Buffers,
            b * (static_cast<double>(m.heads) / t) * s * s * bytes_per, "b*a/t*s^2 x element bytes");
  }
  if (stage == par.pp - 1) {
    out.add("logits and loss (fp32)", MemoryCategory::Buffers, s * b * m.vocab / t * 4.0, "s*b*V/t x 4 B");
  }
}

void add_runtime(Builder& out, const MemoryRequest& r) {
  if (!r.options.include_runtime) return;
  out.add("CUDA context", MemoryCategory::Runtime, kCudaContextBytes, "kCudaContextBytes (assumed 512 MiB)");
  out.add("cuBLAS workspace", MemoryCategory::Runtime, kCublasWorkspaceBytes, "CUBLAS_WORKSPACE_CONFIG :4096:8");
  const int comms = (r.parallel.tp > 1) + (r.parallel.pp > 1) + (r.parallel.dp > 1);
  out.add("NCCL buffers", MemoryCategory::Runtime, comms * kNcclCommunicatorBytes,
          fmt("%g communicators x kNcclCommunicatorBytes (128 MiB)", comms));
}

}  // namespace

const MemoryLine* MemoryBreakdown::find_line(std::string_view name) const {
  for (const MemoryLine& l : lines) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

StateBytes state_bytes_per_param(const TrainingSpec& training, const MemoryOptions& options) {
  const bool mixed = mixed_precision(training.precision);
  StateBytes s;
  s.weights = mixed ? 2.0 : 4.0;
  s.grads = mixed && options.grads == GradPrecision::Half ? 2.0 : 4.0;
  switch (training.optimizer) {
    case Optimizer::Adam: s.optimizer = mixed ? 12.0 : 8.0; break;
    case Optimizer::SgdMomentum: s.optimizer = mixed ? 8.0 : 4.0; break;
    case Optimizer::Sgd: s.optimizer = mixed ? 4.0 : 0.0; break;
  }
  return s;
}

ModelStates model_state_bytes(double params, const ParallelSpec& parallel, const TrainingSpec& training,
                              const MemoryOptions& options) {
  const StateBytes sb = state_bytes_per_param(training, options);
  const double n = std::max(1, parallel.dp);
    ModelStates s;
  s.params = sim::Bytes{params * sb.weights / (parallel.zero >= 3 ? n : 1.0)};
  s.grads = sim::Bytes{params * sb.grads / (parallel.zero >= 2 ? n : 1.0)};
  s.optimizer = sim::Bytes{params * sb.optimizer / (parallel.shards_optimizer() ? n : 1.0)};
  return s;
}

sim::Bytes activation_bytes_per_layer(const ModelSpec& model, int micro_batch, int tp,
                                      bool sequence_parallel, Recompute recompute) {
  const double s = model.seq_len, b = micro_batch, h = model.hidden, a = model.heads, t = tp;
  const double sbh = s * b * h;
  const bool sp = sequence_parallel && tp > 1;
  const double attention = 5.0 * a * s / (h * t);
  switch (recompute) {
    case Recompute::Full: return sim::Bytes{2.0 * sbh};
    case Recompute::Selective: return sim::Bytes{sbh * (sp ? 34.0 / t : 10.0 + 24.0 / t)};
    case Recompute::None: break;
  }
  return sim::Bytes{sbh * ((sp ? 34.0 / t : 10.0 + 24.0 / t) + attention)};
}

double micro_batches_in_flight(const ParallelSpec& parallel, int micro_batches, int stage) {
  const int p = parallel.pp;
  if (parallel.schedule == Schedule::GPipe) return micro_batches;
  const double held = std::min(p - stage, micro_batches);
  const int v = parallel.virtual_stages;
  const bool interleaved = parallel.schedule == Schedule::Interleaved || v > 1;
  if (!interleaved || v <= 1 || p <= 1) return held;
  return held * (1.0 + static_cast<double>(p - 1) / (static_cast<double>(p) * v));
}

MemoryBreakdown stage_memory(const MemoryRequest& request, int stage) {
  MemoryBreakdown b;
  b.capacity = request.capacity;
  b.stage = stage;
  Builder out(b);
  add_model_states(out, request, stage);
  add_activations(out, request, stage);
  add_buffers(out, request, stage);
  add_runtime(out, request);
  return b;
}

MemoryBreakdown estimate_memory(const MemoryRequest& request) {
  MemoryBreakdown first = stage_memory(request, 0);
  const int pp = request.parallel.pp;
  if (pp <= 1) {
    first.stage_reason = "single pipeline stage: every GPU holds the same";
    return first;
  }
  MemoryBreakdown last = stage_memory(request, pp - 1);
  if (last.total > first.total) {
    last.stage_reason = "last pipeline stage: the output layer and fp32 logits outweigh the first "
                        "stage's extra micro-batches in flight";
    return last;
  }
  first.stage_reason = "first pipeline stage: it keeps the most micro-batches in flight and the input "
                       "embedding";
  return first;
}

namespace {

struct Candidate {
  std::string change;
  MemoryRequest request;
};

bool layout_valid(const ModelSpec& m, int tp, int pp) {
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  return m.heads % tp == 0 && kv % tp == 0 && m.layers % pp == 0;
}

std::vector<Candidate> candidates(const MemoryRequest& r) {
  std::vector<Candidate> c;
  auto with = [&](std::string change, auto edit) {
    MemoryRequest next = r;
    edit(next);
    c.push_back(Candidate{std::move(change), std::move(next)});
  };
  const Recompute rc = r.training.recompute;
  if (rc == Recompute::None) with("recompute = \"selective\"", [](MemoryRequest& n) { n.training.recompute = Recompute::Selective; });
  if (rc != Recompute::Full) with("recompute = \"full\"", [](MemoryRequest& n) { n.training.recompute = Recompute::Full; });
  if (r.parallel.tp > 1 && !r.parallel.sequence_parallel) {
    with("sequence_parallel = true", [](MemoryRequest& n) { n.parallel.sequence_parallel = true; });
  }
  const bool halve_dp = r.parallel.dp % 2 == 0;
  const std::string gpus = halve_dp ? " (dp halved: same GPU count)" : " (twice the GPUs)";
  if (layout_valid(r.model, r.parallel.tp * 2, r.parallel.pp)) {
    with("tp = " + std::to_string(r.parallel.tp * 2) + gpus, [&](MemoryRequest& n) {
      n.parallel.tp *= 2;
      if (halve_dp) n.parallel.dp /= 2;
    });
  }
  if (layout_valid(r.model, r.parallel.tp, r.parallel.pp * 2)) {
    with("pp = " + std::to_string(r.parallel.pp * 2) + gpus, [&](MemoryRequest& n) {
      n.parallel.pp *= 2;
      if (halve_dp) n.parallel.dp /= 2;
    });
  }
  if (r.parallel.zero < 3 && r.parallel.dp > 1) {
    with("zero = " + std::to_string(r.parallel.zero + 1), [](MemoryRequest& n) { n.parallel.zero += 1; });
  }
  if (r.training.micro_batch > 1) {
    with("micro_batch = " + std::to_string(r.training.micro_batch / 2),
         [](MemoryRequest& n) { n.training.micro_batch /= 2; });
  }
  return c;
}

}  // namespace

std::vector<MemoryAdvice> advise(const MemoryRequest& request, std::span<const topology::GpuSpec> gpus) {
  const MemoryBreakdown before = estimate_memory(request);
  std::vector<MemoryAdvice> out;
  for (const Candidate& c : candidates(request)) {
    MemoryAdvice a;
    a.change = c.change;
    a.after = estimate_memory(c.request);
    a.saved = before.total - a.after.total;
    a.fits = a.after.fits();
    out.push_back(std::move(a));
  }
  // The smallest catalog GPU with more memory that holds the job as it is (else the largest).
  const topology::GpuSpec* pick = nullptr;
  for (const topology::GpuSpec& g : gpus) {
    if (g.memory <= request.capacity) continue;
    const bool fits = before.total <= g.memory;
    const bool pick_fits = pick != nullptr && before.total <= pick->memory;
    if (pick == nullptr || (fits && (!pick_fits || g.memory < pick->memory)) ||
        (!fits && !pick_fits && g.memory > pick->memory)) {
      pick = &g;
    }
  }
  if (pick != nullptr) {
    MemoryAdvice a;
    a.change = "gpu = \"" + pick->id + "\"";
    a.after = before;
    a.after.capacity = pick->memory;
    a.saved = sim::Bytes{0.0};
    a.fits = a.after.fits();
    out.push_back(std::move(a));
  }
  std::stable_sort(out.begin(), out.end(), [](const MemoryAdvice& x, const MemoryAdvice& y) {
    if (x.fits != y.fits) return x.fits;
    return x.saved > y.saved;
  });
  return out;
}

}  // namespace clustersim::workloads
