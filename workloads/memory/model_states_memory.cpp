// The memory model's model states (memory_model.h: "Model states per parameter", sharding,
// LoRA and ZeRO-Offload): bytes per parameter of weights, gradients and optimizer states and
// their sharding, and the stage's lines for its layers (dense, MoE with routed experts apart,
// hybrid), LoRA adapters, embedding, output layer and MTP modules.
#include "workloads/memory/memory_lines.h"

#include <algorithm>
#include <string>

#include "workloads/model/lora.h"
#include "workloads/model/mtp.h"

namespace clustersim::workloads {

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
  const double n = parallel.shard_ranks();  // data- and context-parallel ranks (of one shard group) shard together
  ModelStates s;
  s.params = sim::Bytes{params * sb.weights / (parallel.zero >= 3 ? n : 1.0)};
  s.grads = sim::Bytes{params * sb.grads / (parallel.zero >= 2 ? n : 1.0)};
  // HFSDP (outer_dp_sharding = "optim") splits the optimizer states over every group too.
  s.optimizer = sim::Bytes{params * sb.optimizer / (parallel.shards_optimizer() ? parallel.optimizer_shard_ranks() : 1.0)};
  return s;
}

namespace {

// The request the routed experts' states are sharded by: over the expert-data-parallel group of
// edp = tp x cp x dp / (etp x ep) ranks, which already holds the context-parallel ranks
// (Megatron-Core's expert grid etp-ep-dp-pp has no cp dimension: parallel_state.py l. 755-763),
// so cp is 1 there (ZeRO-3 / Megatron-FSDP: the expert weight shard is 1/edp, layer_zero3).
MemoryRequest expert_states_request(const MemoryRequest& r) {
  MemoryRequest experts = r;
  experts.parallel.dp = r.parallel.expert_dp();
  experts.parallel.cp = 1;
  return experts;
}

// An MoE model's layers: the replicated part (attention, norms, router, shared experts, dense
// layers' MLPs) over tp, and the routed experts over tp x ep, whose gradients and optimizer states
// shard over the expert-data-parallel group (dp / ep) rather than dp.
void add_moe_states(MemoryLineBuilder& out, const MemoryRequest& r, int stage) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const int layers = par.layers_on_stage(m.layers, stage);
  const int first = first_layer_of_stage(m, par, stage);
  const int moe = m.moe_layers_in(first, layers);
  // A hybrid's stage: its own Mamba, attention, MLP and 'E' layers, the routed experts apart.
  const double replicated = m.is_hybrid() ? m.parameters_of_layers(first, layers) - moe * m.expert_parameters()
                                          : (layers - moe) * m.dense_layer_parameters() + moe * m.moe_layer_dense_parameters();
  const bool trainable = !r.training.finetune.lora();
  // MLA's down-projections are whole on every tensor-parallel rank (ModelSpec::tp_replicated_...),
  // as are LatentMoE's latent projections (ModelSpec::latent_projection_parameters).
  const double duplicated =
      (layers * m.tp_replicated_attention_parameters() + moe * m.latent_projection_parameters()) * (1.0 - 1.0 / par.tp);
  out.add_states("layers", replicated / par.tp + duplicated, r, trainable);
  MemoryRequest experts = expert_states_request(r);
  out.add_states("routed experts (/ep)", moe * m.expert_parameters() / par.ep / par.expert_tp(), experts, trainable);
}

// The MTP modules' weights on the last stage (model/mtp.h): each module's layer (an MoE layer's
// routed experts over ep x etp, sharded over the expert-data-parallel group), its norms and
// eh_proj over tp; an untied model also keeps the input embedding there (Megatron-Core's GPTModel
// builds it where MTP runs) unless the last stage is also the first.
void add_mtp_states(MemoryLineBuilder& out, const MemoryRequest& r) {
  const ModelSpec& m = r.model;
  const ParallelSpec& par = r.parallel;
  const bool trainable = !r.training.finetune.lora();
  const bool moe = mtp_layer_is_moe(m);
  const double layer = mtp_layer_dense_parameters(m);
  const double duplicated = (m.tp_replicated_attention_parameters() + m.latent_projection_parameters()) * (1.0 - 1.0 / par.tp);
  const double embedding = !m.tied_embeddings && par.pp > 1 ? static_cast<double>(m.vocab) * m.hidden / par.tp : 0.0;
  out.add_states("MTP modules", m.mtp_layers * ((layer + mtp_extra_parameters(m)) / par.tp + duplicated) + embedding, r,
                 trainable);
  if (!moe) return;
  const MemoryRequest experts = expert_states_request(r);
  out.add_states("MTP routed experts (/ep)", m.mtp_layers * m.expert_parameters() / par.ep / par.expert_tp(), experts,
                 trainable);
}

}  // namespace

void add_model_states(MemoryLineBuilder& out, const MemoryRequest& r, int stage) {
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
    out.add_states(format_text("LoRA adapters (r %g)", ft.lora_rank), layers * lora_layer_parameters(m, ft, t), r);
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

}  // namespace clustersim::workloads
