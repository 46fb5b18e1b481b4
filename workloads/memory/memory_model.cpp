#include "workloads/memory/memory_model.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>

#include "workloads/compute/compute_model.h"
#include "workloads/memory/activation_offload.h"
#include "workloads/memory/mamba_memory.h"
#include "workloads/model/lora.h"
#include "workloads/model/mtp.h"

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

double layer_params(const ModelSpec& m, const MemoryOptions& o) {
  if (o.exact_layer_params || m.is_mla()) return m.layer_parameters();
  const double h = m.hidden;
  const double kv_width = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * m.head_dim();
  const double q = m.attention_width();
  const double attention = h * (q + 2.0 * kv_width) + q * h;
  const double mlp = (m.mlp == MlpKind::Gelu ? 2.0 : 3.0) * h * m.ffn_hidden;
  return attention + mlp;
}

// The model as one context-parallel rank sees it for activations: s/cp tokens of each sequence
// (its saved Q, K, V, O and softmax statistics are those of its own tokens: ring attention frees
// the K/V chunks it received once their step is done; Transformer Engine keeps only the local ones).
ModelSpec sequence_shard(const ModelSpec& m, const ParallelSpec& par) {
  ModelSpec local = m;
  local.seq_len = par.local_seq_len(m.seq_len);
  return local;
}

class Builder {
 public:
  explicit Builder(MemoryBreakdown& b) : b_(b) {}
  void add(std::string name, MemoryCategory c, double bytes, std::string formula, std::uint8_t phases = 0) {
    if (bytes <= 0) return;
    b_.lines.push_back(MemoryLine{std::move(name), c, sim::Bytes{bytes}, std::move(formula), phases, true});
  }
  // `trainable` false: frozen weights (LoRA), no gradients or optimizer states. ZeRO-Offload moves
  // the gradients and optimizer states to host memory.
  void add_states(const std::string& what, double params, const MemoryRequest& r, bool trainable = true) {
    const ModelStates s = model_state_bytes(params, r.parallel, r.training);
    const std::string n = fmt("%.6g params", params);
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
  // The peak holds the persistent lines and the transient phase with the most bytes; the other
  // transients are marked and left out of the totals.
  void finish() {
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

 private:
  static const char* phase_name(std::uint8_t phase) {
    return phase == kLayerForward ? "layer forward" : phase == kLayerBackward ? "layer backward" : "loss";
  }
  void count(const MemoryLine& l) {
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
  MemoryBreakdown& b_;
};

int micro_batches_per_replica(const MemoryRequest& r) {
  return std::max(1, r.training.micro_batches_per_replica(std::max(1, r.parallel.dp)));
}

// First transformer layer (0-based) held by pipeline stage `stage`.
int first_layer_of_stage(const ModelSpec& m, const ParallelSpec& par, int stage) {
  int first = 0;
  for (int st = 0; st < stage; ++st) first += par.layers_on_stage(m.layers, st);
  return first;
}

// An MoE model's layers: the replicated part (attention, norms, router, shared experts, dense
// layers' MLPs) over tp, and the routed experts over tp x ep, whose gradients and optimizer states
// shard over the expert-data-parallel group (dp / ep) rather than dp.
void add_moe_states(Builder& out, const MemoryRequest& r, int stage) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const int layers = par.layers_on_stage(m.layers, stage);
  const int first = first_layer_of_stage(m, par, stage);
  const int moe = m.moe_layers_in(first, layers);
  // A hybrid's stage: its own Mamba, attention, MLP and 'E' layers, the routed experts apart.
  const double replicated = m.is_hybrid() ? m.parameters_of_layers(first, layers) - moe * m.expert_parameters()
                                          : (layers - moe) * m.dense_layer_parameters() + moe * m.moe_layer_dense_parameters();
  const bool trainable = !r.training.finetune.lora();
  // MLA's down-projections are whole on every tensor-parallel rank (ModelSpec::tp_replicated_...).
  const double duplicated = layers * m.tp_replicated_attention_parameters() * (1.0 - 1.0 / par.tp);
  out.add_states("layers", replicated / par.tp + duplicated, r, trainable);
  MemoryRequest experts = r;
  experts.parallel.dp = par.expert_dp();
  out.add_states("routed experts (/ep)", moe * m.expert_parameters() / par.ep / par.expert_tp(), experts, trainable);
}

// The MTP modules' weights on the last stage (model/mtp.h): each module's layer (an MoE layer's
// routed experts over ep x etp, sharded over the expert-data-parallel group), its norms and
// eh_proj over tp; an untied model also keeps the input embedding there (Megatron-Core's GPTModel
// builds it where MTP runs) unless the last stage is also the first.
void add_mtp_states(Builder& out, const MemoryRequest& r) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const bool trainable = !r.training.finetune.lora();
  const bool moe = mtp_layer_is_moe(m);
  const double layer = moe ? m.moe_layer_dense_parameters() : m.dense_layer_parameters();
  const double duplicated = m.tp_replicated_attention_parameters() * (1.0 - 1.0 / par.tp);
  const double embedding = !m.tied_embeddings && par.pp > 1 ? static_cast<double>(m.vocab) * m.hidden / par.tp : 0.0;
  out.add_states("MTP modules", m.mtp_layers * ((layer + mtp_extra_parameters(m)) / par.tp + duplicated) + embedding, r,
                 trainable);
  if (!moe) return;
  MemoryRequest experts = r;
  experts.parallel.dp = par.expert_dp();
  out.add_states("MTP routed experts (/ep)", m.mtp_layers * m.expert_parameters() / par.ep / par.expert_tp(), experts,
                 trainable);
}

void add_model_states(Builder& out, const MemoryRequest& r, int stage) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const int t = par.tp;
  const bool first = stage == 0;
  const bool last = stage == par.pp - 1;
  const int layers = par.layers_on_stage(m.layers, stage);
  const FinetuneSpec& ft = r.training.finetune;
  const bool trainable = !ft.lora();
  if (m.is_moe()) {
    add_moe_states(out, r, stage);
  } else if (m.is_hybrid()) {  // the stage's own Mamba, attention and MLP layers
    out.add_states("layers", m.parameters_of_layers(first_layer_of_stage(m, par, stage), layers) / t, r, trainable);
  } else {
    const double duplicated = m.tp_replicated_attention_parameters() * (1.0 - 1.0 / t);  // MLA down-projections
    out.add_states("layers", layers * (layer_params(m, r.options) / t + duplicated), r, trainable);
  }
  if (ft.lora()) {
    out.add_states(fmt("LoRA adapters (r %g)", ft.lora_rank), layers * lora_layer_parameters(m, ft, t), r);
  }
  if (first) {
    // Vocab-parallel word embedding is sharded over tp; learned positions are replicated.
    const double positions = m.learned_positions() ? static_cast<double>(m.seq_len) * m.hidden : 0.0;
    out.add_states("embedding", static_cast<double>(m.vocab) * m.hidden / t + positions, r, trainable);
  }
  if (last) {
    // Megatron keeps a copy of tied word embeddings on the last stage when pp > 1.
    const bool own_output = !m.tied_embeddings || par.pp > 1;
    const double output = own_output ? static_cast<double>(m.vocab) * m.hidden / t : 0.0;
    out.add_states("output layer", output + m.final_norm_parameters(), r, trainable);
    if (m.mtp_layers > 0) add_mtp_states(out, r);
  }
}

// An MoE layer saves, beyond what its dense counterpart would, the dispatched token copies
// (k x e*s*b*h, the expert MLP's input) and its experts' own saved tensors in place of the dense
// MLP's: the MLP's per-width tensors (gate, up and activation input for SwiGLU, 3 x e*s*b per
// unit of width; 2 for GELU) at the width the busiest GPU's experts see, (k x load + shared) x
// moe_ffn_hidden, less the dense ffn_hidden already counted per layer. One micro-batch's
// dispatch and combine buffers are live during the layer (transient).
// What one MoE layer saves beyond its dense counterpart, per micro-batch (add_moe_activations).
struct MoeSaved {
  double bytes = 0, expert_tensors = 0, dense_tensors = 0, dispatch_buffers = 0;
};

MoeSaved moe_layer_saved(const MemoryRequest& r) {
  const ModelSpec m = sequence_shard(r.model, r.parallel);  // context parallelism: this rank's s/cp tokens
  const TrainingSpec& tr = r.training;
  const int t = r.parallel.tp;
  const double e = activation_bytes_for(tr.precision).element;
  const double sbh = static_cast<double>(m.seq_len) * tr.micro_batch * m.hidden / t;
  const double k = m.experts_per_token;
  const double load = r.moe_load_factor;
  MoeSaved s;
  s.dense_tensors = m.mlp == MlpKind::Gelu ? 2.0 : 3.0;
  // recompute_modules "moe_act": the experts' activation output (fc2 input) is recomputed.
  s.expert_tensors = s.dense_tensors - ((tr.recompute_modules & kRecomputeMoeAct) != 0 ? 1.0 : 0.0);
  const double per_token = e * m.seq_len * tr.micro_batch / t;
  const double expert_saved = std::max(0.0, per_token * (s.expert_tensors * (k * load + m.shared_experts) * m.moe_ffn_hidden -
                                                         s.dense_tensors * m.ffn_hidden));
  s.bytes = tr.recompute == Recompute::Full ? 0.0 : k * load * e * sbh + expert_saved;
  s.dispatch_buffers = 2.0 * k * load * e * sbh;
  return s;
}

void add_moe_activations(Builder& out, const MemoryRequest& r, int stage, double in_flight) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const int layers = par.layers_on_stage(m.layers, stage);
  const int moe = m.moe_layers_in(first_layer_of_stage(m, par, stage), layers);
  if (moe == 0) return;
  const MoeSaved s = moe_layer_saved(r);
  const double saved = s.bytes, expert_tensors = s.expert_tensors, dense_tensors = s.dense_tensors;
  out.add("MoE layers: dispatched tokens and expert activations", MemoryCategory::Activations, saved * moe * in_flight,
          fmt("(k x load x e*s*b*h/t + (%g x (k x load + shared) x moe_ffn - %g x ffn) MLP tensors) x %g MoE layers x %g "
              "micro-batches in flight",
              expert_tensors, dense_tensors, moe, in_flight));
  out.add("MoE dispatch buffers", MemoryCategory::Buffers, s.dispatch_buffers,
          "dispatch + combine: 2 x k x load x e*s*b*h/t, one micro-batch", kLayerForward | kLayerBackward);
}

// Micro-batches whose activations the last model chunk of the last stage holds at once, where the
// MTP modules run: under 1F1B, interleaved or not, one. Megatron-Core's interleaved schedule
// (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving)
// warms the last rank up with (vp - 1) x pp forwards of its earlier chunks only; from then on
// each forward of its last chunk is followed by that micro-batch's backward (backward chunk ids
// run vp - 1 first), so the last chunk never holds a second micro-batch. GPipe holds them all.
double last_chunk_micro_batches_in_flight(const MemoryRequest& r) {
  return r.parallel.schedule == Schedule::GPipe ? micro_batches_per_replica(r) : 1.0;
}

// The MTP modules on the last stage (model/mtp.h): each saves what a decoder layer of its kind
// saves (`per_layer`, plus an MoE layer's dispatched tokens and expert tensors), its enorm and
// hnorm inputs (the embedding output and the hidden state, e*s*b*h each) and eh_proj's 2h-wide
// input, for each micro-batch the last model chunk holds (last_chunk_micro_batches_in_flight:
// one under 1F1B, however many the stage's earlier chunks hold); and, once, its head's
// final-norm and logits-GEMM inputs as the main output layer does (its logits are in add_buffers).
void add_mtp_activations(Builder& out, const MemoryRequest& r, double per_layer) {
  const double in_flight = last_chunk_micro_batches_in_flight(r);
  const ModelSpec m = sequence_shard(r.model, r.parallel);
  const TrainingSpec& tr = r.training;
  const int t = r.parallel.tp;
  const bool sp = r.parallel.sequence_parallel && t > 1;
  const ActivationBytes bytes = activation_bytes_for(tr.precision);
  const double sbh = static_cast<double>(m.seq_len) * tr.micro_batch * m.hidden / (sp ? t : 1);
  const double moe = mtp_layer_is_moe(m) ? moe_layer_saved(r).bytes : 0.0;
  const double inputs = tr.recompute == Recompute::Full ? 0.0 : 2.0 * bytes.element * sbh + 2.0 * bytes.gemm_input * sbh;
  const double layer = per_layer + moe + inputs;
  out.add("MTP modules: activations", MemoryCategory::Activations, layer * m.mtp_layers * in_flight,
          fmt("(%.6g B layer + %.6g B MoE + %.6g B enorm/hnorm/eh_proj inputs) x %g MTP modules", per_layer, moe, inputs,
              m.mtp_layers) +
              fmt(" x %g micro-batches in flight", in_flight));
  out.add("MTP modules: output head activations", MemoryCategory::Activations,
          m.mtp_layers * 2.0 * bytes.element * sbh,
          std::string("final norm input + logits GEMM input: 2 x e*s*b*h") + (sp ? "/t" : "") +
              fmt(" x %g MTP modules", m.mtp_layers));
}

// Layers of `stage` whose activations are offloaded: each of its model chunks offloads up to
// `offload` layers, never its last (activation_offload.h).
int offloaded_layers_on_stage(const ParallelSpec& par, int layers, int stage, int offload) {
  if (offload <= 0) return 0;
  int n = 0;
  for (int c = 0; c < std::max(par.virtual_stages, 1); ++c)
    n += offloaded_layers_in_chunk(par.layers_in_chunk(layers, c * par.pp + stage), offload);
  return n;
}

void add_activations(Builder& out, const MemoryRequest& r, int stage) {
  const ModelSpec m = sequence_shard(r.model, r.parallel);
  const ParallelSpec& par = r.parallel;
  const TrainingSpec& tr = r.training;
  const int t = par.tp;
  const bool sp = par.sequence_parallel && t > 1;
  const double s = m.seq_len, b = tr.micro_batch, h = m.hidden;
  const ActivationBytes bytes = activation_bytes_for(tr.precision);
  const double e = bytes.element;
  const int layers = par.layers_on_stage(m.layers, stage);
  const double in_flight = micro_batches_in_flight(par, micro_batches_per_replica(r), stage);
  // recompute_modules "layernorm": the two norms' outputs (the QKV and MLP GEMM inputs) are not kept.
  const unsigned modules = tr.recompute == Recompute::Full ? 0u : tr.recompute_modules;
  const bool norms_recomputed = (modules & kRecomputeLayernorm) != 0;
  double per_layer = 0.0;
  for (const SavedTensor& x : saved_layer_tensors(m, tr.micro_batch, t, sp, tr.recompute, bytes))
    if (!recomputed_by_modules(x, modules)) per_layer += x.bytes;
  const char* kernel = m.flash_attention ? (bytes.gemm_input < e ? "flash attention, FP8 GEMM inputs" : "flash attention")
                                         : (bytes.gemm_input < e ? "materialised scores, FP8 GEMM inputs" : "materialised scores");
  const std::string what = tr.recompute == Recompute::Full ? std::string("layer input ") + (sp ? "e*sbh/t" : "e*sbh")
                                                           : std::string("saved tensors, ") + kernel +
                                                                 (norms_recomputed ? ", norm outputs recomputed" : "");
  const int offloaded = offloaded_layers_on_stage(par, m.layers, stage, tr.activation_offload_layers);
  out.add("layers: activations", MemoryCategory::Activations, per_layer * (layers - offloaded) * in_flight,
          fmt("%.6g B/layer/micro-batch (", per_layer) + what +
              fmt(") x %g layers x %g micro-batches in flight", layers - offloaded, in_flight) +
              (offloaded > 0 ? fmt(" (%g layers offloaded to the host)", offloaded) : std::string()));
  if (offloaded > 0) {
    out.add("layers: offloaded activations in transit", MemoryCategory::Activations, per_layer,
            "one offloaded layer's saved tensors while they copy to or from the host (double buffer)");
    out.add("layers: offloaded activations (host)", MemoryCategory::Host, per_layer * offloaded * in_flight,
            fmt("%.6g B/layer/micro-batch x %g offloaded layers", per_layer, offloaded) +
                fmt(" x %g micro-batches in flight, in host memory", in_flight));
  }
  if (tr.recompute == Recompute::Full) {
    const double working = activation_bytes_per_layer(m, tr.micro_batch, t, sp, Recompute::None, bytes).value;
    out.add("layers: recompute working set", MemoryCategory::Activations, working,
            std::string("one layer's saved tensors without recompute (") + kernel + (sp ? ", TP+SP" : t > 1 ? ", TP" : "") +
                "), one micro-batch",
            kLayerBackward);
  }
  if ((modules & kRecomputeMlaUpProj) != 0 && m.is_mla()) {
    double qkv = 0.0;
    for (const SavedTensor& x : saved_layer_tensors(m, tr.micro_batch, t, sp, tr.recompute, bytes))
      if (recomputed_by_modules(x, kRecomputeMlaUpProj)) qkv += x.bytes;
    out.add("layers: MLA up-projection recompute", MemoryCategory::Activations, qkv,
            "one layer's Q, K and V rebuilt for its backward (recompute_modules \"mla_up_proj\"), one micro-batch",
            kLayerBackward);
  }
  if (m.is_moe()) add_moe_activations(out, r, stage, in_flight);
  if (m.mtp_layers > 0 && stage == par.pp - 1) add_mtp_activations(out, r, per_layer);
  if (stage == 0 && has_dropout(m)) {
    const double mask = s * b * h / (sp ? t : 1) * in_flight;
    out.add("embedding: dropout mask", MemoryCategory::Activations, mask,
            "s*b*h" + std::string(sp ? "/t" : "") + " x 1 B x micro-batches in flight");
  }
  if (stage == par.pp - 1) {
    const double input = 2.0 * e * s * b * h / (sp ? t : 1);
    out.add("output layer: activations", MemoryCategory::Activations, input,
            std::string("final norm input + logits GEMM input: 2 x e*s*b*h") + (sp ? "/t" : ""));
  }
}

void add_buffers(Builder& out, const MemoryRequest& r, int stage) {
  const ModelSpec m = sequence_shard(r.model, r.parallel);
  const ParallelSpec& par = r.parallel;
  const TrainingSpec& tr = r.training;
  const int t = par.tp;
  const double s = m.seq_len, b = tr.micro_batch;
  if (par.grad_replicas() > 1) {
    out.add("gradient buckets", MemoryCategory::Buffers, 2.0 * r.sync.bucket_mb * kMiB,
            fmt("2 x bucket_mb (%g MiB)", r.sync.bucket_mb));
  }
  const double gathered = zero3_gathered_bytes(r, stage);
  if (par.zero >= 3 && par.zero3_gather == Zero3Gather::Module) {
    out.add("ZeRO-3 gathered parameters", MemoryCategory::Buffers, gathered,
            fmt("DeepSpeed live submodules: max_live %.3g, prefetch %.3g params (+ the running submodule's "
                "gradient in backward)",
                r.options.deepspeed_max_live_parameters, r.options.deepspeed_prefetch_parameters));
  } else {
    out.add("ZeRO-3 gathered parameters", MemoryCategory::Buffers, gathered,
            fmt("%g layers' full weights (FSDP: current + prefetched)", r.options.zero3_prefetch_layers));
  }
  if (!m.flash_attention) {
    const double bytes_per = activation_bytes_for(tr.precision).element;
    out.add("attention score workspace", MemoryCategory::Buffers,
            b * (static_cast<double>(m.heads) / t) * s * s * bytes_per, "b*a/t*s^2 x element bytes",
            kLayerForward | kLayerBackward);
  }
  if (stage == par.pp - 1) {
    out.add("logits and loss (fp32)", MemoryCategory::Buffers, s * b * m.vocab / t * 4.0, "s*b*V/t x 4 B", kLoss);
    // Each MTP module's loss is computed in the forward, so its logits live beside the main ones.
    if (m.mtp_layers > 0)
      out.add("MTP logits and loss (fp32)", MemoryCategory::Buffers, m.mtp_layers * s * b * m.vocab / t * 4.0,
              fmt("s*b*V/t x 4 B x %g MTP modules", m.mtp_layers), kLoss);
  }
}

void add_runtime(Builder& out, const MemoryRequest& r) {
  if (!r.options.include_runtime) return;
  out.add("CUDA context", MemoryCategory::Runtime, kCudaContextBytes, "kCudaContextBytes (assumed 512 MiB)");
  out.add("cuBLAS workspace", MemoryCategory::Runtime, kCublasWorkspaceBytes, "CUBLAS_WORKSPACE_CONFIG :4096:8");
  const int comms = (r.parallel.tp > 1) + (r.parallel.pp > 1) + (r.parallel.grad_replicas() > 1) + (r.parallel.cp > 1);
  out.add("NCCL buffers", MemoryCategory::Runtime, comms * kNcclCommunicatorBytes,
          fmt("%g communicators x kNcclCommunicatorBytes (128 MiB)", comms));
}

// Why `stage` holds the most, in the terms that differ between stages.
std::string peak_stage_reason(const MemoryRequest& r, int stage) {
  const ParallelSpec& par = r.parallel;
  const bool first = stage == 0, last = stage == par.pp - 1;
  if (!par.uneven_stages() && first)
    return "first pipeline stage: it keeps the most micro-batches in flight and the input embedding";
  if (!par.uneven_stages() && last)
    return "last pipeline stage: the output layer and fp32 logits outweigh the first stage's extra micro-batches "
           "in flight";
  const int layers = par.layers_on_stage(r.model.layers, stage);
  const double in_flight = micro_batches_in_flight(par, micro_batches_per_replica(r), stage);
  const std::string what = first ? " and the input embedding" : last ? ", the output layer and the fp32 logits" : "";
  return fmt("uneven stages: its %g layers with %g micro-batches in flight", layers, in_flight) + what +
         " outweigh every other stage's";
}

}  // namespace

const MemoryLine* MemoryBreakdown::find_line(std::string_view name) const {
  for (const MemoryLine& l : lines) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

StateBytes state_bytes_per_param(const TrainingSpec& training) {
  const bool mixed = mixed_precision(training.precision);
  StateBytes s;
  s.weights = mixed ? 2.0 : 4.0;
  s.grads = mixed ? state_dtype_bytes(training.grad_dtype) : 4.0;
  const double o = state_dtype_bytes(training.optimizer_dtype);
  switch (training.optimizer) {
    case Optimizer::Adam: s.optimizer = (mixed ? 3.0 : 2.0) * o; break;
    case Optimizer::SgdMomentum: s.optimizer = (mixed ? 2.0 : 1.0) * o; break;
    case Optimizer::Sgd: s.optimizer = mixed ? o : 0.0; break;
  }
  return s;
}

ModelStates model_state_bytes(double params, const ParallelSpec& parallel, const TrainingSpec& training) {
  const StateBytes sb = state_bytes_per_param(training);
  const double n = std::max(1, parallel.grad_replicas());  // data- and context-parallel ranks shard together
  ModelStates s;
  s.params = sim::Bytes{params * sb.weights / (parallel.zero >= 3 ? n : 1.0)};
  s.grads = sim::Bytes{params * sb.grads / (parallel.zero >= 2 ? n : 1.0)};
  s.optimizer = sim::Bytes{params * sb.optimizer / (parallel.shards_optimizer() ? n : 1.0)};
  return s;
}

ActivationBytes activation_bytes_for(topology::Precision precision) {
  if (!mixed_precision(precision)) return {4.0, 4.0};
  // Transformer Engine keeps the GEMM inputs for backward in the GEMM's format: fp8 (1 byte), or
  // NVFP4's column-wise copy for the weight gradient (E2M1 + block scales).
  if (precision == topology::Precision::Nvfp4) return {2.0, workloads::kNvfp4BytesPerElement};
  return {2.0, precision == topology::Precision::Fp8 ? 1.0 : 2.0};
}

namespace {

// What Megatron-Core's MLASelfAttention keeps for the backward (multi_latent_attention.py, no
// recompute): each latent twice, as its RMSNorm's input (the rank's s/r tokens) and as the
// up-projection's input (all tokens: the column-parallel up-projection needs every token), then
// per local head Q and K over nope + rope (the shared rope key is expanded to every head before
// the fused kernel) and V over v_head_dim. `sb` = s x b tokens.
void add_mla_latents_and_qkv(std::vector<SavedTensor>& x, const ModelSpec& m, double sb, double t, double r,
                             const ActivationBytes& bytes) {
  const double e = bytes.element, g = bytes.gemm_input, heads = m.heads / t;
  if (m.q_lora_rank > 0)
    x.insert(x.end(), {{"MLA q latent (norm input)", e * sb * m.q_lora_rank / r},
                       {"MLA q latent (up-projection input)", g * sb * m.q_lora_rank}});
  x.insert(x.end(), {{"MLA kv latent (norm input)", e * sb * m.kv_lora_rank / r},
                     {"MLA kv latent (up-projection input)", g * sb * m.kv_lora_rank},
                     {"Q", e * sb * heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)},
                     {"K", e * sb * heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)},
                     {"V", e * sb * heads * m.v_head_dim}});
}

}  // namespace

std::vector<SavedTensor> saved_layer_tensors(const ModelSpec& model, int micro_batch, int tp,
                                             bool sequence_parallel, Recompute recompute, const ActivationBytes& bytes) {
  if (model.is_hybrid()) return hybrid_saved_layer_tensors(model, micro_batch, tp, sequence_parallel, recompute, bytes);
  const double s = model.seq_len, b = micro_batch, h = model.hidden, a = model.heads, t = tp;
  const double e = bytes.element, g = bytes.gemm_input, sbh = s * b * h, sbf = s * b * model.ffn_hidden;
  const double r = sequence_parallel && tp > 1 ? t : 1.0;  // SP shards the non-GEMM regions
  if (recompute == Recompute::Full) return {{"layer input (checkpoint)", e * sbh / r}};
  const bool flash = model.flash_attention;
  const bool dropout = has_dropout(model);
  const bool fp8 = g < e;
  const int kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const double q_width = model.attention_width();
  double sbq = s * b * q_width;  // sbh unless head_dim is set
  const double kv_width = flash ? static_cast<double>(kv) * model.head_dim() : q_width;  // non-flash repeats groups
  const double scores = a * s * s * b / t;
  std::vector<SavedTensor> x = {{"attention norm input", e * sbh / r}, {"QKV GEMM input", g * sbh / r}};
  if (model.is_mla()) {
    add_mla_latents_and_qkv(x, model, s * b, t, r, bytes);
  } else {
    x.insert(x.end(), {{"Q", e * sbq / t}, {"K", e * s * b * kv_width / t}, {"V", e * s * b * kv_width / t}});
  }
  if (!flash && recompute == Recompute::None) {
    x.push_back({"softmax output", e * scores});
    if (dropout) x.insert(x.end(), {{"attention dropout mask", scores}, {"attention dropout output", e * scores}});
  }
  if (model.is_mla()) sbq = s * b * a * model.v_head_dim;  // the out-projection's input is H x v wide
  x.push_back({"attention output (out-projection input)", e * sbq / t});
  if (fp8) x.push_back({"out-projection input, FP8 copy", g * sbq / t});
  if (flash && recompute == Recompute::None) x.push_back({"softmax logsumexp (fp32)", 4.0 * a * s * b / t});
  if (dropout) x.push_back({"attention-output dropout mask", sbh / r});
  x.insert(x.end(), {{"MLP norm input", e * sbh / r}, {"MLP input", g * sbh / r}});
  if (model.mlp == MlpKind::Gelu) {
    x.insert(x.end(), {{"fc1 output (GELU input)", e * sbf / t}, {"fc2 input (GELU output)", g * sbf / t}});
  } else {
    x.insert(x.end(), {{"fc1 output (gate and up)", 2.0 * e * sbf / t}, {"fc2 input (SwiGLU output)", g * sbf / t}});
  }
  if (dropout) x.push_back({"MLP dropout mask", sbh / r});
  return x;
}

bool recomputed_by_modules(const SavedTensor& tensor, unsigned recompute_modules) {
  const std::string_view name = tensor.name;
  // "mla_up_proj": MLA's up-projection outputs after the rotary embedding (the attention kernel's
  // Q, K and V) are freed after the forward and rebuilt from the saved latents before the backward
  // (Megatron-Core multi_latent_attention.py, CheckpointWithoutOutput); the latents stay. The
  // loader accepts the module only for MLA models, whose Q, K and V these names are.
  if ((recompute_modules & kRecomputeMlaUpProj) != 0 && (name == "Q" || name == "K" || name == "V")) return true;
  if ((recompute_modules & kRecomputeLayernorm) == 0) return false;
  return name == "QKV GEMM input" || name == "MLP input";
}

sim::Bytes activation_bytes_per_layer(const ModelSpec& model, int micro_batch, int tp,
                                      bool sequence_parallel, Recompute recompute, const ActivationBytes& bytes) {
  double sum = 0;
  for (const SavedTensor& x : saved_layer_tensors(model, micro_batch, tp, sequence_parallel, recompute, bytes)) {
    sum += x.bytes;
  }
  return sim::Bytes{sum};
}

namespace {

// One pass of DeepSpeed's coordinator over `order` (indices into `modules`): fetch the running
// submodule, prefetch while under both limits, release it after. Returns the peak bytes.
double deepspeed_pass(const std::vector<double>& modules, const std::vector<std::size_t>& order, double max_live,
                      double prefetch, double weight_bytes, double grad_bytes) {
  std::vector<bool> live(modules.size(), false);
  double resident = 0, peak = 0;
  std::size_t queue = 0;  // next position of `order` not yet fetched or prefetched
  for (std::size_t step = 0; step < order.size(); ++step) {
    const std::size_t m = order[step];
    if (!live[m]) live[m] = true, resident += modules[m];
    queue = std::max(queue, step + 1);
    const double budget = std::min(max_live - resident, prefetch);
    for (double taken = 0; queue < order.size() && taken < budget; ++queue) {
      const std::size_t next = order[queue];
      if (live[next]) continue;
      live[next] = true;
      resident += modules[next];
      taken += modules[next];
    }
    peak = std::max(peak, resident * weight_bytes + modules[m] * grad_bytes);
    live[m] = false;
    resident -= modules[m];
  }
  return peak;
}

// The stage's submodules with weights, in forward order: per layer the fused QKV projection, the
// out-projection, fc1 (gate and up fused for SwiGLU, as Megatron's linear_fc1) and fc2; the word
// embedding first on stage 0 and the output layer last on the last stage.
std::vector<double> stage_submodules(const ModelSpec& m, const ParallelSpec& par, int stage) {
  const double h = m.hidden, f = m.ffn_hidden, t = par.tp;
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const double kv_width = static_cast<double>(kv) * m.head_dim(), q = m.attention_width();
  const double fc1 = (m.mlp == MlpKind::Gelu ? 1.0 : 2.0) * h * f / t;
  std::vector<double> modules;
  if (stage == 0) modules.push_back(static_cast<double>(m.vocab) * h / t);
  for (int l = 0; l < par.layers_on_stage(m.layers, stage); ++l) {
    modules.insert(modules.end(), {h * (q + 2.0 * kv_width) / t, q * h / t, fc1, f * h / t});
  }
  if (stage == par.pp - 1) modules.push_back(static_cast<double>(m.vocab) * h / t);
  return modules;
}

}  // namespace

double deepspeed_live_bytes(const std::vector<double>& modules, double max_live_parameters,
                            double prefetch_parameters, double weight_bytes, double grad_bytes) {
  std::vector<std::size_t> forward(modules.size());
  for (std::size_t i = 0; i < modules.size(); ++i) forward[i] = i;
  const std::vector<std::size_t> backward(forward.rbegin(), forward.rend());
  return std::max(deepspeed_pass(modules, forward, max_live_parameters, prefetch_parameters, weight_bytes, 0.0),
                  deepspeed_pass(modules, backward, max_live_parameters, prefetch_parameters, weight_bytes, grad_bytes));
}

double zero3_gathered_bytes(const MemoryRequest& r, int stage) {
  const ParallelSpec& par = r.parallel;
  if (par.zero < 3 || par.grad_replicas() <= 1) return 0.0;
  const double weight = state_bytes_per_param(r.training).weights;
  if (par.zero3_gather == Zero3Gather::Block) {
    return r.options.zero3_prefetch_layers * layer_params(r.model, r.options) / par.tp * weight;
  }
  // The unsharded gradient has the parameters' dtype until it reaches the reduce bucket.
  return deepspeed_live_bytes(stage_submodules(r.model, par, stage), r.options.deepspeed_max_live_parameters,
                              r.options.deepspeed_prefetch_parameters, weight, weight);
}

double micro_batches_in_flight(const ParallelSpec& parallel, int micro_batches, int stage) {
  const int p = parallel.pp;
  if (parallel.schedule == Schedule::GPipe) return micro_batches;
  const double held = std::min(p - stage, micro_batches);
  const int v = parallel.virtual_stages;
  const bool interleaved = parallel.schedule == Schedule::Interleaved || v > 1;
  if (!interleaved || v <= 1 || p <= 1) return held;
  // Megatron-Core's interleaved schedule (schedules.py, forward_backward_pipelining_with_
  // interleaving): rank r warms up with 2 (p - r - 1) + (v - 1) p chunk forwards
  // (microbatch_group_size_per_vp_stage = p by default), capped at all m x v, and holds one more
  // in steady state; in units of the stage's layers, / v. Stage 0: p + (p - 1) / v = p (1 + (p - 1)
  // / (p v)); the last stage: p - (p - 1) / v, not 1 + (p - 1) / (p v): its warm-up runs (v - 1) x p
  // forwards of its earlier chunks too.
  const double chunk_forwards = 2.0 * (p - stage - 1) + (v - 1.0) * p + 1.0;
  return std::min(chunk_forwards, static_cast<double>(micro_batches) * v) / v;
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
  out.finish();
  return b;
}

MemoryBreakdown estimate_memory(const MemoryRequest& request) {
  const int pp = request.parallel.pp;
  MemoryBreakdown peak = stage_memory(request, 0);
  if (pp <= 1) {
    peak.stage_reason = "single pipeline stage: every GPU holds the same";
    return peak;
  }
  // Every stage, since uneven stages can move the peak inside the pipeline; ties go to the earlier.
  for (int stage = 1; stage < pp; ++stage) {
    MemoryBreakdown b = stage_memory(request, stage);
    if (b.total > peak.total) peak = std::move(b);
  }
  peak.stage_reason = peak_stage_reason(request, peak.stage);
  return peak;
}

}  // namespace clustersim::workloads
