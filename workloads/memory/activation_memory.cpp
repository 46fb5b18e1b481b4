// The memory model's saved activations of a pipeline stage (memory_model.h): a layer's saved
// tensors (layer_activations.cpp) x the stage's layers x the micro-batches it holds in flight
// (micro_batches_in_flight: GPipe, 1F1B, Megatron-Core's interleaved warm-up), with activation
// offloading, full recompute's working set, MoE dispatched tokens and expert tensors, the MTP
// modules, and the embedding and output layer's own.
#include "workloads/memory/memory_lines.h"

#include <algorithm>
#include <string>

#include "workloads/memory/activation_offload.h"
#include "workloads/model/mtp.h"

namespace clustersim::workloads {

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

namespace {

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
  // LatentMoE: the dispatched copies are latent-wide, and fc2_latent_proj keeps its input (the
  // combined latent of this rank's tokens: sequence-parallel tokens, the whole latent width, as the
  // projection is duplicated, not split, over tp).
  const double io_share = static_cast<double>(m.expert_io_width()) / m.hidden;
  const double latent_saved = m.moe_latent_size > 0 ? per_token * m.moe_latent_size : 0.0;
  const double expert_saved =
      std::max(0.0, per_token * (s.expert_tensors * (k * load + m.shared_experts) * m.moe_ffn_hidden -
                                 s.dense_tensors * m.ffn_hidden)) +
      latent_saved;
  // Full recompute, or recompute_modules "moe" (the whole MoE layer checkpointed, Megatron-Core
  // moe_layer.py): none of the layer's dispatched tokens or expert activations are kept.
  const bool moe_recomputed = (tr.recompute_modules & kRecomputeMoe) != 0;
  s.bytes = tr.recompute == Recompute::Full || moe_recomputed ? 0.0 : k * load * e * sbh * io_share + expert_saved;
  s.dispatch_buffers = 2.0 * k * load * e * sbh * io_share;
  return s;
}

// Fine-grained activation offloading of `groups` groups of `bytes` each (activation_offload.h):
// all but kOffloadGroupsKeptPerName of them leave the device for pinned host memory.
double offloaded_groups(double groups) { return std::max(0.0, groups - kOffloadGroupsKeptPerName); }

void add_offloaded_host(MemoryLineBuilder& out, const char* label, double bytes, double groups) {
  if (bytes <= 0 || groups <= 0) return;
  out.add(label, MemoryCategory::Host, bytes * groups,
          format_text("%.6g B/group x %g groups (offload_modules), in pinned host memory", bytes, groups));
}

void add_moe_activations(MemoryLineBuilder& out, const MemoryRequest& r, int stage, double in_flight) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const int layers = par.layers_on_stage(m.layers, stage);
  const int moe = m.moe_layers_in(first_layer_of_stage(m, par, stage), layers);
  if (moe == 0) return;
  const MoeSaved s = moe_layer_saved(r);
  const double saved = s.bytes, expert_tensors = s.expert_tensors, dense_tensors = s.dense_tensors;
  // offload_modules: the expert groups come out of this line first; what a group holds beyond it
  // (the MLP tensors a dense layer would save, counted per layer) comes out of add_activations' line.
  const bool sp = par.sequence_parallel && par.tp > 1;
  const double group = std::min(
      saved, fine_grained_offload_bytes(sequence_shard(m, par), r.training, par.tp, sp, r.moe_load_factor).moe);
  const double offloaded = offloaded_groups(moe * in_flight);
  out.add("MoE layers: dispatched tokens and expert activations", MemoryCategory::Activations,
          saved * moe * in_flight - group * offloaded,
          format_text("(k x load x e*s*b*h/t + (%g x (k x load + shared) x moe_ffn - %g x ffn) MLP tensors) x %g MoE layers x %g "
              "micro-batches in flight",
              expert_tensors, dense_tensors, moe, in_flight) +
              (group > 0 ? format_text(", less %.6g B offloaded expert tensors x %g groups (offload_modules; %g kept)", group,
                                       offloaded, moe * in_flight - offloaded)
                         : std::string()));
  add_offloaded_host(out, "MoE layers: offloaded expert tensors (host)", group, offloaded);
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
void add_mtp_activations(MemoryLineBuilder& out, const MemoryRequest& r, double per_layer) {
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
          format_text("(%.6g B layer + %.6g B MoE + %.6g B enorm/hnorm/eh_proj inputs) x %g MTP modules", per_layer, moe, inputs,
              m.mtp_layers) +
              format_text(" x %g micro-batches in flight", in_flight));
  out.add("MTP modules: output head activations", MemoryCategory::Activations,
          m.mtp_layers * 2.0 * bytes.element * sbh,
          std::string("final norm input + logits GEMM input: 2 x e*s*b*h") + (sp ? "/t" : "") +
              format_text(" x %g MTP modules", m.mtp_layers));
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

}  // namespace

void add_activations(MemoryLineBuilder& out, const MemoryRequest& r, int stage) {
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
  for (const SavedTensor& x : saved_layer_tensors(m, tr.micro_batch, t, sp, tr.recompute, bytes, tr.recompute_save))
    if (!recomputed_by_modules(x, modules)) per_layer += x.bytes;
  const char* kernel = m.flash_attention ? (bytes.gemm_input < e ? "flash attention, FP8 GEMM inputs" : "flash attention")
                                         : (bytes.gemm_input < e ? "materialised scores, FP8 GEMM inputs" : "materialised scores");
  const std::string what = tr.recompute == Recompute::Full
                               ? std::string("layer input ") + (sp ? "e*sbh/t" : "e*sbh") +
                                     (tr.recompute_save != 0 ? " + the recompute_save op outputs" : "")
                               : std::string("saved tensors, ") + kernel + (norms_recomputed ? ", norm outputs recomputed" : "");
  const int offloaded = offloaded_layers_on_stage(par, m.layers, stage, tr.activation_offload_layers);
  const OffloadGroupBytes og = fine_grained_offload_bytes(m, tr, t, sp, r.moe_load_factor);
  const double group = og.attention;
  const double groups = offloaded_groups(layers * in_flight);
  // Expert groups larger than the MoE line's tensors (add_moe_activations) hold per-layer ones too.
  const int moe_here = m.is_moe() ? m.moe_layers_in(first_layer_of_stage(m, par, stage), layers) : 0;
  const double spill = moe_here > 0 ? std::max(0.0, og.moe - moe_layer_saved(r).bytes) : 0.0;
  const double spilled = spill * offloaded_groups(moe_here * in_flight);
  out.add("layers: activations", MemoryCategory::Activations,
          per_layer * (layers - offloaded) * in_flight - group * groups - spilled,
          format_text("%.6g B/layer/micro-batch (", per_layer) + what +
              format_text(") x %g layers x %g micro-batches in flight", layers - offloaded, in_flight) +
              (offloaded > 0 ? format_text(" (%g layers offloaded to the host)", offloaded) : std::string()) +
              (group > 0 ? format_text(", less %.6g B offloaded tensors x %g groups (offload_modules; %g kept)", group, groups,
                                       layers * in_flight - groups)
                         : std::string()) +
              (spilled > 0 ? format_text(", less %.6g B of the expert groups' MLP tensors (offload_modules)", spilled)
                           : std::string()));
  add_offloaded_host(out, "layers: offloaded tensors (host)", group, groups);
  add_offloaded_host(out, "layers: offloaded expert MLP tensors (host)", spill, offloaded_groups(moe_here * in_flight));
  if (offloaded > 0) {
    out.add("layers: offloaded activations in transit", MemoryCategory::Activations, per_layer,
            "one offloaded layer's saved tensors while they copy to or from the host (double buffer)");
    out.add("layers: offloaded activations (host)", MemoryCategory::Host, per_layer * offloaded * in_flight,
            format_text("%.6g B/layer/micro-batch x %g offloaded layers", per_layer, offloaded) +
                format_text(" x %g micro-batches in flight, in host memory", in_flight));
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

}  // namespace clustersim::workloads
