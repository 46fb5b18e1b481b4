// The checks that span sections, run after every section is read (and only when the sections
// they need read cleanly): the model's head shape, the layout against the model (tp | heads and
// kv_heads, the pipeline stage split and interleaving: scenarios/stage_split.h), the GPU count (tp * pp * dp, or dp derived from it), the
// batch against dp and the schedule, and the precision against the GPU. Hints name values that work.
#include <algorithm>
#include <climits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "scenarios/stage_split.h"
#include "scenarios/toml_text.h"
#include "sim/enum_names.h"

namespace clustersim::scenarios {
namespace {

// The global_batch values either side of a bad one, leaving out what the key cannot take (a
// positive int); the loader then tries each (hint_check.cpp).
std::vector<LoadContext::Choice> batch_choices(long long lower, long long upper) {
  std::vector<std::string> values;
  for (long long v : {lower, upper})
    if (v > 0 && v <= INT_MAX && (values.empty() || values.front() != std::to_string(v))) values.push_back(std::to_string(v));
  return value_choices("training.global_batch", values);
}

using topology::Precision;
using workloads::Schedule;

}  // namespace

void Loader::check_model_shape() {
  const std::size_t before = error_count();
  const auto& m = spec_.model;
  if (m.attention_head_dim == 0 && m.hidden % m.heads != 0)
    error_with_choices(spec_.origins.count("model.heads") ? "model.heads" : "model.hidden",
                       "hidden = " + std::to_string(m.hidden) + " is not divisible by heads = " + std::to_string(m.heads),
                       divisor_choices("model.heads", m.hidden, std::min(m.hidden, 256)),
                       listing_hint("the head size is hidden / heads; ", "heads",
                                    "no heads dividing " + std::to_string(m.hidden) +
                                        " passes the other checks alone; change tp or kv_heads with it, or give the "
                                        "head size as head_dim",
                                    "; or give the head size as head_dim"));
  if (m.heads % m.kv_heads != 0)
    error_with_choices(spec_.origins.count("model.kv_heads") ? "model.kv_heads" : "model.heads",
                       "heads = " + std::to_string(m.heads) + " is not a multiple of kv_heads = " + std::to_string(m.kv_heads),
                       divisor_choices("model.kv_heads", m.heads, m.heads),
                       listing_hint("grouped-query attention shares each KV head among heads / kv_heads query heads; ",
                                    "kv_heads", "no kv_heads dividing " + std::to_string(m.heads) +
                                                    " passes the other checks alone; change tp with it"));
  if (error_count() != before) model_ok_ = false;
  // recompute_modules "mla_up_proj" reruns multi-head latent attention's up-projections.
  if ((spec_.training.recompute_modules & workloads::kRecomputeMlaUpProj) != 0 && !m.is_mla())
    error_at_key("training.recompute_modules", "recompute_modules lists \"mla_up_proj\", but the model has no multi-head latent attention",
                 "mla_up_proj recomputes MLA's up-projections (DeepSeek-V3); set kv_lora_rank and the MLA head sizes in [model], "
                 "or remove \"mla_up_proj\"");
  check_cuda_graph_scope();
  // recompute_modules "moe" reruns the MoE layers.
  if ((spec_.training.recompute_modules & workloads::kRecomputeMoe) != 0 && !m.is_moe())
    error_at_key("training.recompute_modules", "recompute_modules lists \"moe\", but the model has no mixture-of-experts layers",
                 "moe recomputes each MoE layer's forward in its backward; set experts and experts_per_token in [model], "
                 "or remove \"moe\"");
  check_recompute_save();
  check_offload_modules();
}

// training.cross_entropy against [model_constants] cross_entropy_unfused = 1, the constant spelling of
// "megatron-unfused": a scenario that names another implementation beside it asks for two losses.
void Loader::check_cross_entropy() {
  const auto constant = spec_.model_constants.find("cross_entropy_unfused");
  if (constant == spec_.model_constants.end() || constant->second <= 0 || spec_.origins.count("training.cross_entropy") == 0) return;
  if (spec_.training.cross_entropy == workloads::CrossEntropy::MegatronUnfused) return;
  error_at_key("training.cross_entropy",
               "cross_entropy = \"" + std::string(sim::name_of(workloads::kCrossEntropyNames, spec_.training.cross_entropy)) +
                   "\" beside [model_constants] cross_entropy_unfused = 1",
               "the constant asks for Megatron-Core's unfused cross-entropy (cross_entropy = \"megatron-unfused\"); "
               "keep one: remove cross_entropy_unfused, or the key");
}

// training.offload_modules: Megatron-Core's own refusals (transformer_config.py __post_init__,
// under fine_grained_activation_offloading) and the model having the modules named.
void Loader::check_offload_modules() {
  const auto& tr = spec_.training;
  const unsigned off = tr.offload_modules;
  if (off == 0) return;
  const auto& m = spec_.model;
  const char* key = "training.offload_modules";
  if ((off & workloads::kOffloadAttnProj) != 0 && (off & workloads::kOffloadCoreAttn) == 0)
    error_at_key(key, "offload_modules lists \"attn_proj\" without \"core_attn\"",
                 "attn_proj's input is core_attn's output, which core_attn's backward still needs on the GPU "
                 "(Megatron-Core refuses it); add \"core_attn\" or remove \"attn_proj\"");
  if ((off & workloads::kOffloadFusedGroupMlp) != 0 && (off & (workloads::kOffloadExpertFc1 | workloads::kOffloadMoeAct)) != 0)
    error_at_key(key, "offload_modules lists \"fused_group_mlp\" with \"expert_fc1\" or \"moe_act\"",
                 "fused_group_mlp offloads the whole fused expert MLP already; keep one of them");
  if ((off & workloads::kOffloadFusedGroupMlp) != 0 && !tr.te_op_fuser)
    error_at_key(key, "offload_modules lists \"fused_group_mlp\", but te_op_fuser is off",
                 "the fused grouped MLP exists only under Transformer Engine's op fuser; set [training] te_op_fuser = true, "
                 "or offload \"expert_fc1\" / \"moe_act\"");
  if ((off & workloads::kOffloadMoeModules) != 0 && !m.is_moe())
    error_at_key(key, "offload_modules lists an expert module, but the model has no mixture-of-experts layers",
                 "expert_fc1, moe_act and fused_group_mlp offload the routed experts' tensors; set experts and "
                 "experts_per_token in [model], or offload \"core_attn\", \"attn_proj\", \"qkv_linear\", \"attn_norm\" or \"mlp_norm\"");
  if ((off & ~workloads::kOffloadMoeModules) != 0 && m.is_hybrid())
    error_at_key(key, "offload_modules lists an attention or norm module of a hybrid model, which is not modelled",
                 "a hybrid model's layers keep their own tensors (mamba_memory.h); offload \"expert_fc1\", \"moe_act\" "
                 "or \"fused_group_mlp\"");
  if ((off & workloads::kOffloadMoeModules) != 0 && tr.recompute != workloads::Recompute::Full &&
      (tr.recompute_modules & workloads::kRecomputeMoe) != 0)
    error_at_key(key, "offload_modules lists an expert module while recompute_modules reruns the whole MoE layer",
                 "\"moe\" recompute keeps none of the experts' tensors (Megatron-Core refuses both); remove one of them");
  if (tr.activation_offload_layers > 0)
    error_at_key(key, "offload_modules is set together with activation_offload_layers",
                 "fine-grained offloading and layer offloading (cpu_offloading) exclude each other in Megatron-Core; keep one");
}

// training.recompute_save: ops the forward keeps under full recompute (workloads::RecomputeSaveOp),
// named as a dense transformer layer's ops (model/transformer_ops.cpp); the model must have them.
void Loader::check_recompute_save() {
  // recompute_dce prunes full recompute's rerun (workloads::rerun_dead_from); other policies
  // rerun no layer tail.
  if (spec_.training.recompute_dce && spec_.training.recompute != workloads::Recompute::Full)
    error_at_key("training.recompute_dce",
                 "recompute_dce = true prunes the rerun of full recompute, but recompute = \"" +
                     std::string(sim::name_of(workloads::kRecomputeNames, spec_.training.recompute)) + "\"",
                 "set recompute = \"full\", or remove recompute_dce");
  const unsigned save = spec_.training.recompute_save;
  if (save == 0) return;
  const auto& m = spec_.model;
  const char* key = "training.recompute_save";
  if (spec_.training.recompute != workloads::Recompute::Full) {
    error_at_key(key, "recompute_save lists ops to keep, but recompute = \"" +
                          std::string(sim::name_of(workloads::kRecomputeNames, spec_.training.recompute)) + "\"",
                 "recompute_save names what full recompute keeps: set recompute = \"full\", or remove recompute_save");
    return;
  }
  if (m.is_moe() || m.is_hybrid()) {
    error_at_key(key, std::string("recompute_save is modelled for dense transformer layers, but the model has ") +
                          (m.is_moe() ? "mixture-of-experts" : "Mamba") + " layers",
                 "remove recompute_save (recompute = \"full\" reruns the whole layer)");
    return;
  }
  const bool gelu = m.mlp == workloads::MlpKind::Gelu;
  // The fused attention core is one op only with flash attention (and is saved here for standard
  // attention, not MLA's latent one).
  const bool flash_core = m.flash_attention && !m.is_mla();
  const unsigned absent = (m.is_mla() ? unsigned{workloads::kSaveQkvProj} : 0u) |
                          (flash_core ? 0u : unsigned{workloads::kSaveFlashAttention}) |
                          (gelu ? unsigned{workloads::kSaveMlpGate | workloads::kSaveMlpUp | workloads::kSaveMlpDown}
                                : unsigned{workloads::kSaveMlpFc1 | workloads::kSaveMlpFc2});
  // The hint lists the names this layer has (the same mask), in the layer's order.
  constexpr unsigned kLayerOrder[] = {workloads::kSaveQkvProj,  workloads::kSaveFlashAttention, workloads::kSaveAttentionOutProj,
                                      workloads::kSaveMlpFc1,   workloads::kSaveMlpFc2,         workloads::kSaveMlpGate,
                                      workloads::kSaveMlpUp,    workloads::kSaveMlpDown};
  std::vector<std::string_view> names;
  for (const unsigned bit : kLayerOrder)
    if ((absent & bit) == 0) names.push_back(sim::name_of(workloads::kRecomputeSaveNames, bit));
  // Every layer has at least qkv_proj or attention_out_proj and an MLP op: two names or more.
  const std::string valid = join(std::span(names).first(names.size() - 1), ", ", true) + " or " + quote_str(names.back());
  for (const auto& c : workloads::kRecomputeSaveNames)
    if ((save & absent & c.value) != 0)
      error_at_key(key, "recompute_save lists \"" + std::string(c.name) + "\", but the model's layer has no such op",
                   "this model's layer has " + valid);
}

void Loader::check_layout() {
  const std::size_t before = error_count();
  const auto& m = spec_.model;
  const auto& p = spec_.parallel;
  const std::string model_name = spec_.model_preset.empty() ? std::string("the model") : spec_.model_preset;
  const int tp_limit = cluster_ok_ ? spec_.cluster.used_gpus() : 1 << 20;
  const int heads_gcd = std::gcd(m.heads, m.kv_heads);
  const std::string tp_none = "no tp dividing " + std::to_string(heads_gcd) +
                              " passes the other checks alone: change pp or dp with it";
  if (m.heads % p.tp != 0) {
    error_with_choices("parallelism.tp",
                       "tp = " + std::to_string(p.tp) + " does not divide heads = " + std::to_string(m.heads) + " of " + model_name,
                       divisor_choices("parallelism.tp", heads_gcd, tp_limit),
                       listing_hint("tensor parallelism splits attention heads evenly; ", "tp", tp_none));
  } else if (m.kv_heads % p.tp != 0) {
    error_with_choices("parallelism.tp",
                       "tp = " + std::to_string(p.tp) + " does not divide kv_heads = " + std::to_string(m.kv_heads) + " of " + model_name,
                       divisor_choices("parallelism.tp", heads_gcd, tp_limit),
                       listing_hint("tensor parallelism splits the KV heads evenly; ", "tp", tp_none));
  }
  if (auto e = check_stage_split(m.layers, p, model_name, tp_limit)) {
    if (e->values.empty()) {
      error_at_key(e->key, e->message, e->hint);
    } else {
      const std::string label = e->key.substr(e->key.find('.') + 1);
      error_with_choices(e->key, e->message, value_choices(e->key, e->values), listing_hint(e->lead, label, e->none, e->tail));
    }
  }
  // Megatron-Core's TransformerConfig refuses cpu_offloading_num_layers >= num_layers.
  if (const int off = spec_.training.activation_offload_layers; off > 0 && off >= m.layers)
    error_with_choices("training.activation_offload_layers",
                       "activation_offload_layers = " + std::to_string(off) + " is not below the model's " +
                           std::to_string(m.layers) + " layers",
                       value_choices("training.activation_offload_layers", {std::to_string(m.layers - 1), "0"}),
                       listing_hint("each model chunk keeps its last layer's activations on the GPU; ",
                                    "activation_offload_layers", "use a value below layers = " + std::to_string(m.layers)));
  check_context_parallel();
  if (error_count() != before) layout_ok_ = false;
}

// Context parallelism: Megatron cuts each sequence into 2·cp chunks for causal load balancing
// (Transformer Engine asserts the sequence length divides by 2·cp); ring attention runs inside
// the fused/flash attention kernels; the Ulysses all-to-all (a2a) gives each rank whole heads.
void Loader::check_context_parallel() {
  const auto& p = spec_.parallel;
  const auto& m = spec_.model;
  if (p.cp <= 1) return;
  if (m.seq_len % (2 * p.cp) != 0)
    error_at_key("parallelism.cp",
                 "cp = " + std::to_string(p.cp) + " needs seq_len divisible by 2 * cp = " + std::to_string(2 * p.cp) +
                     ", but seq_len = " + std::to_string(m.seq_len),
                 "each rank holds two of 2 * cp equal chunks (causal load balancing); use a cp with 2 * cp dividing " +
                     std::to_string(m.seq_len));
  if (!m.flash_attention)
    error_at_key("parallelism.cp", "cp = " + std::to_string(p.cp) + " needs flash attention, but model.flash_attention = false",
                 "context parallelism runs inside the fused attention kernel; set flash_attention = true or cp = 1");
  // DeepSpeed-Ulysses hands each CP rank heads / cp whole heads (of its tp shard), queries and keys alike.
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (p.cp_comm == workloads::CpComm::A2a && p.tp > 0 && ((m.heads / p.tp) % p.cp != 0 || (kv / p.tp) % p.cp != 0))
    error_at_key("parallelism.cp_comm_type",
                 "cp_comm_type = \"a2a\" (DeepSpeed-Ulysses) needs the attention heads per GPU divisible by cp = " +
                     std::to_string(p.cp) + ", but heads / tp = " + std::to_string(m.heads / p.tp) + " and kv_heads / tp = " +
                     std::to_string(kv / p.tp),
                 "the all-to-all gives each CP rank whole heads: use a cp dividing both, or cp_comm_type = \"p2p\" (ring "
                 "attention, Megatron's default)");
}

void Loader::check_gpu_count() {
  auto& p = spec_.parallel;
  const auto& c = spec_.cluster;
  const int used = c.used_gpus();
  const int total = c.total_gpus();
  // The model-parallel ranks of one replica: tp * pp, times cp with context parallelism.
  const long long tpp = static_cast<long long>(p.tp) * p.cp * p.pp;
  const std::string cp_factor = p.cp > 1 ? std::to_string(p.cp) + " * " : std::string();
  const std::string tpp_text = std::string(p.cp > 1 ? "tp * cp * pp = " : "tp * pp = ") + std::to_string(p.tp) + " * " +
                               cp_factor + std::to_string(p.pp);
  const std::string cluster_text = std::to_string(total) + " GPUs (" + std::to_string(c.nodes) + (c.nodes == 1 ? " node x " : " nodes x ") +
                                   std::to_string(c.node.gpus) + ")";
  if (dp_given_) {
    const long long need = tpp * p.dp;
    if (need == used) return;
    const std::string product = std::string(p.cp > 1 ? "tp * cp * pp * dp = " : "tp * pp * dp = ") +
                                std::to_string(p.tp) + " * " + cp_factor + std::to_string(p.pp) + " * " +
                                std::to_string(p.dp) + " = " + std::to_string(need);
    // Each alternative is tried by the loader (hint_check.cpp); only those that pass are shown.
    std::vector<Choice> fixes;
    if (used % tpp == 0) fixes.push_back(Choice{{"parallelism.dp=" + std::to_string(used / tpp)}, "dp = " + std::to_string(used / tpp)});
    const long long nodes_needed = (need + c.node.gpus - 1) / c.node.gpus;
    const std::string need_text = std::to_string(need), nodes_text = std::to_string(nodes_needed);
    if (need > total && c.gpus > 0)
      fixes.push_back(Choice{{"cluster.nodes=" + nodes_text, "cluster.gpus=" + need_text},
                             "nodes = " + nodes_text + " and gpus = " + need_text + " in [cluster]"});
    else if (need > total)
      fixes.push_back(Choice{{"cluster.nodes=" + nodes_text}, "nodes = " + nodes_text});
    else
      fixes.push_back(Choice{{"cluster.gpus=" + need_text},
                             "gpus = " + need_text + " in [cluster]" + (c.gpus > 0 ? "" : " to use only part of the cluster")});
    const std::string none = std::string("the product must equal the ") + std::to_string(used) +
                             " GPUs used; change tp, pp or dp together (no single change passes the other checks)";
    error_with_choices("parallelism.dp",
                       product + (c.gpus > 0 ? " does not match gpus = " + std::to_string(c.gpus) + " in [cluster]"
                                             : " GPUs, but the cluster has " + cluster_text),
                       std::move(fixes), alternatives_hint("", "", none));
    parallel_ok_ = false;
    return;
  }
  if (used % tpp != 0) {
    const char* key = spec_.origins.count("parallelism.pp") ? "parallelism.pp" : "parallelism.tp";
    error_at_key(key,
                 "the " + std::to_string(used) + " GPUs used are not a multiple of " + tpp_text + " = " + std::to_string(tpp),
                 std::string(p.cp > 1 ? "use tp, cp and pp" : "use tp and pp") + " whose product divides " +
                     std::to_string(used) + ", or set gpus in [cluster]");
    parallel_ok_ = false;
    return;
  }
  p.dp = static_cast<int>(used / tpp);
  spec_.dp_derived = true;
}

// Hybrid sharding: shard_group consecutive data-parallel ranks share the sharded states, the
// dp / shard_group groups replicate them (ParallelSpec::shard_instances).
void Loader::check_shard_group() {
  auto& p = spec_.parallel;
  // outer_dp_sharding = "optim" splits the optimizer states across the groups: it needs groups
  // (shard_group < dp) and, as Megatron-FSDP's HFSDP, fully sharded groups (zero 3).
  if (p.outer_dp_sharding == workloads::OuterDpSharding::Optim) {
    if (shard_group_ == 0 || shard_group_ >= p.dp) {
      error_at_key("parallelism.outer_dp_sharding",
                   "outer_dp_sharding = \"optim\" shards the optimizer across hybrid-sharding groups, but there is one group",
                   "set shard_group to a divisor of dp below dp, or remove outer_dp_sharding");
      parallel_ok_ = false;
      return;
    }
    if (p.zero != 3) {
      error_at_key("parallelism.outer_dp_sharding",
                   "outer_dp_sharding = \"optim\" needs zero = 3 (Megatron-FSDP allows it only with optim_grads_params)",
                   "set zero = 3, or remove outer_dp_sharding");
      parallel_ok_ = false;
      return;
    }
  }
  if (shard_group_ == 0) return;
  if (p.zero == 0 && !p.distributed_optimizer) {
    error_at_key("parallelism.shard_group",
                 "shard_group = " + std::to_string(shard_group_) + " needs sharded states, but zero = 0 and distributed_optimizer = false",
                 "set zero = 1, 2 or 3 or distributed_optimizer = true, or remove shard_group");
    parallel_ok_ = false;
    return;
  }
  if (p.dp % shard_group_ != 0) {
    error_at_key("parallelism.shard_group",
                 "shard_group = " + std::to_string(shard_group_) + " does not divide dp = " + std::to_string(p.dp),
                 "use a divisor of dp: " + divisor_list(p.dp, p.dp));
    parallel_ok_ = false;
    return;
  }
  if (shard_group_ == 1 && p.dp > 1 && p.cp == 1) {
    error_at_key("parallelism.shard_group", "shard_group = 1 shards nothing (every rank would hold all its states)",
                 "use a divisor of dp >= 2: " + divisor_list(p.dp, p.dp) + ", or turn the sharding off");
    parallel_ok_ = false;
    return;
  }
  // The expert buckets' group splits the same way (Megatron-Core asserts expert_data_parallel_size %
  // num_distributed_optimizer_instances == 0, parallel_state.py l. 1194-1196).
  const int instances = p.dp / shard_group_;
  if (p.ep > 1 && p.zero != 3 && p.expert_dp() % instances != 0) {
    error_at_key("parallelism.shard_group",
                 "shard_group = " + std::to_string(shard_group_) + " makes " + std::to_string(instances) +
                     " groups, which do not divide the expert-data-parallel group of " + std::to_string(p.expert_dp()) + " ranks",
                 "use a shard_group with dp / shard_group dividing tp x cp x dp / (etp x ep)");
    parallel_ok_ = false;
    return;
  }
  p.shard_instances = instances;
}

void Loader::check_batch() {
  auto& tr = spec_.training;
  const auto& p = spec_.parallel;
  const long long per_step = static_cast<long long>(tr.micro_batch) * p.dp;
  if (!global_batch_given_) {
    if (per_step * p.pp > INT_MAX) {
      error_at_key("training.micro_batch", "the default global batch micro_batch * dp * pp is too large",
                   "set global_batch explicitly");
      return;
    }
    tr.global_batch = static_cast<int>(per_step * p.pp);  // enough micro-batches to fill the pipeline
  } else if (tr.global_batch % per_step != 0) {
    const long long lower = tr.global_batch / per_step * per_step;
    const long long upper = lower + per_step;
    error_with_choices("training.global_batch",
                       "global_batch = " + std::to_string(tr.global_batch) + " is not divisible by micro_batch * dp = " +
                           std::to_string(tr.micro_batch) + " * " + std::to_string(p.dp) + " = " + std::to_string(per_step),
                       batch_choices(lower, upper),
                       listing_hint("every data-parallel replica runs the same number of micro-batches; ", "global_batch",
                                    "use a multiple of micro_batch * dp = " + std::to_string(per_step) +
                                        " that the other checks allow"));
    return;
  }
  const int micro_batches = tr.micro_batches_per_replica(p.dp);
  if (layout_ok_ && p.schedule == Schedule::Interleaved && micro_batches % p.pp != 0)
    error_with_choices(global_batch_given_ ? "training.global_batch" : "parallelism.virtual_stages",
                       "the interleaved schedule needs the micro-batches per replica (global_batch / (micro_batch * dp) = " +
                           std::to_string(micro_batches) + ") to be a multiple of pp = " + std::to_string(p.pp),
                       batch_choices(per_step * p.pp * (micro_batches / p.pp),
                                     per_step * p.pp * ((micro_batches + p.pp - 1) / p.pp)),
                       listing_hint("", "global_batch", "use a global_batch that is a multiple of micro_batch * dp * pp = " +
                                             std::to_string(per_step * p.pp) + ", or the 1f1b schedule", ", or the 1f1b schedule"));
}

void Loader::check_precision() {
  if (!gpu_) return;
  auto& tr = spec_.training;
  if (!precision_given_) {
    tr.precision = gpu_->bf16.value > 0 ? Precision::Bf16 : Precision::Fp16;
    return;
  }
  if (tr.precision == Precision::Fp8 && !(gpu_->fp8.value > 0))
    error_with_choices("training.precision", "precision = \"fp8\" needs FP8 tensor cores, which " + gpu_->id + " does not have",
                       value_choices("training.precision", {"\"bf16\"", "\"fp16\""}),
                       listing_hint("", "precision", "use a GPU with FP8 (Hopper or newer, Ada)",
                                    ", or a GPU with FP8 (Hopper or newer, Ada)"));
  if (tr.precision == Precision::Nvfp4 && !(gpu_->fp4.value > 0))
    error_with_choices("training.precision",
                       "precision = \"nvfp4\" needs FP4 tensor cores, which " + gpu_->id + " does not have",
                       value_choices("training.precision", gpu_->fp8.value > 0
                                                               ? std::vector<std::string>{"\"fp8\"", "\"bf16\""}
                                                               : std::vector<std::string>{"\"bf16\"", "\"fp16\""}),
                       listing_hint("", "precision", "use a Blackwell GPU (b200, gb200, b300, gb300)",
                                    ", or a Blackwell GPU (b200, gb200, b300, gb300)"));
  if (tr.precision == Precision::Bf16 && !(gpu_->bf16.value > 0))
    error_at_key("training.precision", "precision = \"bf16\" is not supported by " + gpu_->id + " (no BF16 math)",
                 "use precision = \"fp16\" (mixed precision with loss scaling)");
}

// The fused attention kernel against the GPU that runs it (workloads::AttentionKernel):
// FlashAttention-3 is Hopper's (sm90a: wgmma and TMA); an Ampere-generation kernel (FlashAttention-2,
// the 2022 Triton FlashAttention) has a measured efficiency up to Hopper, none on Blackwell; any
// means nothing without flash attention.
void Loader::check_attention_kernel() {
  const auto& m = spec_.model;
  if (m.attention_kernel == workloads::AttentionKernel::Native) return;
  const std::string name(sim::name_of(workloads::kAttentionKernelNames, m.attention_kernel));
  if (!m.flash_attention) {
    error_at_key("model.attention_kernel", "attention_kernel = \"" + name + "\" with model.flash_attention = false",
                 "the kernel choice is the fused attention kernel's: set flash_attention = true, or remove attention_kernel");
    return;
  }
  if (!gpu_) return;
  const int cc = gpu_->compute_capability;
  if (m.attention_kernel == workloads::AttentionKernel::Fa3 && !(cc >= 90 && cc < 100))
    error_at_key("model.attention_kernel", "attention_kernel = \"fa3\" on " + gpu_->id + ": FlashAttention-3 runs on Hopper (sm90) only",
                 "use attention_kernel = \"native\" (the GPU generation's own kernel), or a Hopper GPU");
  if (m.attention_kernel == workloads::AttentionKernel::Fa2 && cc >= 100 && cc < 200)
    error_at_key("model.attention_kernel",
                 "attention_kernel = \"fa2\" on " + gpu_->id + ": no measured efficiency of an Ampere-generation attention kernel on Blackwell",
                 "use attention_kernel = \"native\" (cuDNN / FlashAttention-4), or override the constant flash_attention_eff_fa2_sm90 "
                 "knowing it was measured on H100");
  if (m.attention_kernel == workloads::AttentionKernel::FlashAttnTriton && cc >= 100 && cc < 200)
    error_at_key("model.attention_kernel",
                 "attention_kernel = \"flash-attn-triton\" on " + gpu_->id +
                     ": the 2022 Triton FlashAttention (pre-MLIR Triton, mma.sync) has no measured rate on Blackwell",
                 "use attention_kernel = \"native\" (cuDNN / FlashAttention-4)");
}

// cuda_graph_scope against the model and the recompute (Megatron-Core core_r0.16
// transformer_config.py: "moe cuda graph is only supported for MoE", "... only supported with
// drop-padding MoE", "full recompute is only supported with full iteration CUDA graph").
void Loader::check_cuda_graph_scope() {
  const unsigned g = spec_.training.cuda_graph_modules;
  if (g == 0) return;
  const workloads::ModelSpec& m = spec_.model;
  const std::string key = "training.cuda_graph_scope";
  if ((g & (workloads::kGraphMoe | workloads::kGraphMoeRouter | workloads::kGraphMoePreprocess)) != 0 && !m.is_moe())
    error_at_key(key, "cuda_graph_scope lists an MoE module, but the model has no mixture-of-experts layers",
                 "remove \"moe\", \"moe_router\" and \"moe_preprocess\", or set experts and experts_per_token in [model]");
  else if ((g & workloads::kGraphMoe) != 0 && m.capacity_factor <= 0)
    error_at_key(key, "cuda_graph_scope lists \"moe\", which Megatron-Core captures only for drop-and-pad MoE",
                 "a dropless MoE layer's shapes change every step: use \"moe_router\" (and \"moe_preprocess\"), or set "
                 "capacity_factor in [model]");
  if ((g & workloads::kGraphMamba) != 0 && m.layers_of_kind_in(workloads::LayerKind::Mamba, 0, m.layers) == 0)
    error_at_key(key, "cuda_graph_scope lists \"mamba\", but the model has no Mamba layers",
                 "remove \"mamba\", or give the model a hybrid_pattern with Mamba layers");
  if (spec_.training.recompute == workloads::Recompute::Full)
    error_at_key(key, "cuda_graph_scope lists per-layer modules, but recompute = \"full\"",
                 "Megatron-Core supports full recompute only with a full-iteration graph: cuda_graph_scope = "
                 "[\"full_iteration\"], or recompute = \"selective\"");
}

}  // namespace clustersim::scenarios
