// The scenario a modern row describes (modern_scenario_toml, scenario_for_modern_row in
// modern_rows.h): the cluster (a DGX node count, or the NVL72 racks' segments the job held), the
// model's shape and family, the parallel layout and the training settings the recipes set, written
// as scenario TOML and validated by the scenario loader like any file.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/modern_row_archs.h"
#include "analysis/modern_row_defaults.h"
#include "analysis/modern_row_layout.h"
#include "analysis/modern_row_recipes.h"
#include "analysis/modern_rows.h"
#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/toml_text.h"

namespace clustersim::analysis {
namespace {

using modern_detail::activation_offload_layers_of;
using modern_detail::as_run;
using modern_detail::cp_of;
using modern_detail::cuda_graph_scope_of;
using modern_detail::cuda_graphs_of;
using modern_detail::eager_squared_relu_of;
using modern_detail::te_op_fuser_of;
using modern_detail::moe_grouped_gemm_of;
using modern_detail::deepseek_recompute_modules;
using modern_detail::nemotron3_recompute_modules;
using modern_detail::nemotron3_offload;
using modern_detail::OffloadRecipe;
using modern_detail::module_precision_toml;
using modern_detail::dp_of;
using modern_detail::fp8_current_scaling_of;
using modern_detail::mxfp8_of;
using modern_detail::unfused_cross_entropy_of;
using modern_detail::expert_tp_of;
using modern_detail::hopper_a2a_overlap;
using modern_detail::moe_a2a_overlap_of;
using modern_detail::moe_dispatcher_sms_of;
using modern_detail::moe_shared_expert_overlap_of;
using modern_detail::moe_dispatcher_of;
using modern_detail::fp8_row;
using modern_detail::fp8_param_gather_of;
using modern_detail::gpt_oss_recompute_modules;
using modern_detail::gpus_per_node_of;
using modern_detail::grad_bucket_params_of;
using modern_detail::overlap_grad_reduce_of;
using modern_detail::has;
using modern_detail::has_experts;
using modern_detail::hybrid_preset_of;
using modern_detail::jax_stack;
using modern_detail::jax_recompute_save;
using modern_detail::lora_distributed_optimizer_of;
using modern_detail::lora_rank_of;
using modern_detail::lora_targets_toml_of;
using modern_detail::packed_sample_len_of;
using modern_detail::megatron_core_buckets;
using modern_detail::micro_batch_of;
using modern_detail::moe_arch_of;
using modern_detail::MoeArch;
using modern_detail::mtp_layers_of;
using modern_detail::nemo_stack;
using modern_detail::node_preset_for;
using modern_detail::notes_int;
using modern_detail::precision_for;
using modern_detail::recipe_stage_layers;
using modern_detail::outer_dp_sharding_of;
using modern_detail::shard_group_of;
using modern_detail::slot_split_recipe;
using modern_detail::tp_comm_overlap_of;
using modern_detail::virtual_stages_of;
using modern_detail::unfused_mla_attention_of;
using modern_detail::drop_and_pad_capacity_of;
using modern_detail::with_hybrid_shape;

// GPT-3 rows leave the vocabulary empty: GPT-2 BPE (50257) padded by Megatron/NeMo to a multiple
// of 128 x tp (make-vocab-size-divisible-by 128), as in training_rows.cpp.
int vocab_for(const ModernRow& r) {
  if (r.vocab > 0) return r.vocab;
  const int multiple = 128 * std::max(r.tp, 1);
  return (50257 + multiple - 1) / multiple * multiple;
}

// Model families: Llama (Meta's configs) and Mixtral (Mistral's, the same layer): SwiGLU, RMSNorm, untied
// output layer, rotary positions.
// Nemotron-4 (Parmar et al. 2024, "Nemotron-4 15B Technical Report" §2): squared-ReLU MLP with two
// matrices (the "gelu" kind: same shapes and FLOPs), LayerNorm, untied input and output
// embeddings; its rotary positions are not expressible, so the GELU kind's learned position table
// adds seq x hidden parameters (< 0.1%); under NeMo 2 the squared ReLU runs as eager torch ops
// (eager_squared_relu_of). GPT-3 (NeMo): GELU, LayerNorm, tied embeddings.
void write_model(std::ostringstream& t, const ModernRow& r) {
  if (const char* hybrid = hybrid_preset_of(r)) {  // the preset's shape; the row's sequence length
    t << "\n[model]\npreset = \"" << hybrid << "\"\nseq_len = " << r.seq_len << "\n";
    if (const int mtp = mtp_layers_of(r); mtp > 0) t << "mtp_layers = " << mtp << "\n";
    return;
  }
  const MoeArch* moe = moe_arch_of(r);
  const bool llama = has(r.model, "Llama") || has(r.model, "Mixtral") || moe != nullptr;
  const bool untied = (llama || has(r.model, "Nemotron")) && (moe == nullptr || !moe->tied);
  t << "\n[model]\nlayers = " << r.layers << "\nhidden = " << r.hidden << "\nheads = " << r.heads
    << "\nkv_heads = " << (r.kv_heads > 0 ? r.kv_heads : r.heads) << "\nseq_len = " << r.seq_len
    << "\nvocab = " << vocab_for(r);
  if (moe != nullptr) {
    t << "\nffn_hidden = " << moe->dense_ffn << "\nexperts = " << moe->experts << "\nexperts_per_token = " << moe->top_k
      << "\nmoe_ffn_hidden = " << moe->moe_ffn << "\nshared_experts = " << moe->shared
      << "\nfirst_dense_layers = " << moe->first_dense << "\nmoe_layer_freq = " << moe->freq;
    if (moe->head_dim > 0) t << "\nhead_dim = " << moe->head_dim;
    if (moe->probs_on_input) t << "\nmoe_apply_probs_on_input = true";
    t << moe->attention;
    if (const int mtp = mtp_layers_of(r); mtp > 0) t << "\nmtp_layers = " << mtp;
    if (const double cf = drop_and_pad_capacity_of(r); cf > 0) t << "\ncapacity_factor = " << scenarios::toml_float(cf);
  } else if (r.ffn_hidden > 0) {
    t << "\nffn_hidden = " << r.ffn_hidden;
  }
  t << "\nmlp = \"" << (llama ? "swiglu" : "gelu") << "\"\nnorm = \"" << (llama ? "rmsnorm" : "layernorm")
    << "\"\ntied_embeddings = " << (untied ? "false" : "true")
    << "\nflash_attention = " << (unfused_mla_attention_of(r) ? "false" : "true") << "\n";
  // Llama and Nemotron train without dropout (Meta's configs have none; Nemotron-4: hidden,
  // attention and ffn dropout 0.0 in dgxc-benchmarking nemotron/nemotron4-340b-synth.yaml); nor do
  // the MoE architectures above (no dropout in their configs or in grok-1's model.py).
  if (untied || moe != nullptr) t << "dropout = false\n";
  if (eager_squared_relu_of(r)) t << "eager_squared_relu = true\n";  // NeMo 2's Nemotron-4 (modern_row_defaults.cpp)
  if (const double packed = packed_sample_len_of(r); packed > 0) t << "packed_sample_len = " << scenarios::toml_float(packed) << "\n";
}

void write_layout(std::ostringstream& t, const ModernRow& r) {
  const int tp = std::max(r.tp, 1), pp = std::max(r.pp, 1);
  const bool fsdp = has(r.zero_or_fsdp, "FSDP");
  t << "\n[parallelism]\ntp = " << tp << "\npp = " << pp << "\ndp = " << dp_of(r);
  if (cp_of(r) > 1) t << "\ncp = " << cp_of(r) << "\ncp_comm_type = \"p2p\"";  // Megatron's default
  if (slot_split_recipe(r))
    t << "\naccount_for_embedding_in_pipeline_split = true\naccount_for_loss_in_pipeline_split = true";
  if (const std::vector<int> chunks = recipe_stage_layers(r); !chunks.empty()) {
    t << "\nstage_layers = [";
    for (std::size_t i = 0; i < chunks.size(); ++i) t << (i ? ", " : "") << chunks[i];
    t << "]";
  }
  t << "\nvirtual_stages = " << virtual_stages_of(r) << "\nsequence_parallel = " << (tp > 1 ? "true" : "false")
    << "\n" << (fsdp ? "zero = 3" : lora_rank_of(r) > 0 && !lora_distributed_optimizer_of(r) ? "distributed_optimizer = false" : "distributed_optimizer = true") << "\n";
  // Hybrid sharding where the launcher's mesh replicates the FSDP group (modern_row_recipes.cpp).
  if (const int group = shard_group_of(r); group > 0) {
    t << "shard_group = " << group << "\n";
    if (const char* outer = outer_dp_sharding_of(r)) t << "outer_dp_sharding = \"" << outer << "\"\n";
  }
  if (has_experts(r)) {
    t << "ep = " << notes_int(r, "EP") << "\n";
    if (expert_tp_of(r) > 0) t << "etp = " << expert_tp_of(r) << "\n";
    if (const char* dispatcher = moe_dispatcher_of(r)) t << "moe_dispatcher = \"" << dispatcher << "\"\n";
    if (const int sms = moe_dispatcher_sms_of(r); sms > 0) t << "moe_dispatcher_sms = " << sms << "\n";
    // Megatron-Bridge sets delay_wgrad_compute with every moe_a2a_overlap: v0.1.0rc4
    // scripts/performance/run_script.py l. 82-84 (A2A_1F1B), v0.2.0 utils/helpers.py l. 182-185,
    // r0.3.0 utils/overrides.py l. 150-155, r0.6.0 l. 188-197 (_set_moe_a2a_overlap_overrides).
    if (moe_a2a_overlap_of(r)) t << "moe_a2a_overlap = true\ndelay_wgrad_compute = true\n";
    if (moe_shared_expert_overlap_of(r)) t << "moe_shared_expert_overlap = true\n";
  }
  t << "\n[training]\nglobal_batch = " << r.global_batch << "\nmicro_batch = " << micro_batch_of(r)
    << "\nprecision = \"" << precision_for(r) << "\"\noptimizer = \"adam\"\nrecompute = \""
    << (jax_stack(r) ? "full" : unfused_mla_attention_of(r) ? "selective" : "none") << "\"\niterations = 1\n";
  const bool nemotron4_dgxc = has(r.model, "Nemotron-4") && modern_source_group(r) == "dgxc-benchmarking";
  // dgxc-benchmarking's Llama 4 Maverick runs reduce gradients in bf16 at BF16 too: NeMo 7a8f1cc's
  // pretrain_llama4_e128.py calls pretrain_recipe(performance_mode=True), whose
  // pretrain_performance_optimizations (recipes/llama4_e128.py) sets grad_reduce_in_fp32 = False.
  const bool llama4_dgxc = has(r.model, "Llama4-Maverick") && modern_source_group(r) == "dgxc-benchmarking";
  // Every Megatron-Bridge performance config reduces gradients in bf16 at every precision:
  // r0.1.0's yamls (`grad_reduce_in_fp32: false`), r0.2.0 - r0.5.0's set_<family>_common_configs
  // (e.g. r0.3.0 scripts/performance/configs/llama/llama3_llm_pretrain.py l.43-44, qwen3 l.41-42,
  // deepseek l.42-43, gpt_oss l.30-31, kimi l.50-51, nemotronh l.30-31), r0.6.0
  // src/megatron/bridge/perf_recipes/_common.py l.71-72.
  const bool bridge_perf = modern_source_group(r) == "Megatron-Bridge";
  if (nemotron4_dgxc || llama4_dgxc || (nemo_stack(r) && fp8_row(r)) || bridge_perf) t << "grad_dtype = \"bf16\"\n";
  if (gpt_oss_recompute_modules(r)) t << "recompute_modules = [\"layernorm\", \"moe_act\"]\n";
  if (const std::string save = jax_recompute_save(r); !save.empty()) t << "recompute_save = " << save << "\n";
  if (jax_stack(r)) t << "recompute_dce = true\n";  // JAX prunes the rerun (modern_row_defaults.cpp)
  if (const std::string modules = deepseek_recompute_modules(r); !modules.empty())
    t << "recompute_modules = " << modules << "\n";
  if (const std::string modules = nemotron3_recompute_modules(r); !modules.empty())
    t << "recompute_modules = " << modules << "\n";
  t << module_precision_toml(r);
  if (nemotron4_dgxc) t << "optimizer_dtype = \"bf16\"\n";
  if (cuda_graphs_of(r)) t << "cuda_graphs = true\n";
  if (te_op_fuser_of(r)) t << "te_op_fuser = true\n";
  if (const OffloadRecipe off = nemotron3_offload(r); !off.modules.empty())
    t << "offload_modules = " << off.modules << "\noffload_min_tensor_size = " << scenarios::toml_float(off.min_tensor_elements)
      << "\n";
  if (has_experts(r) && !moe_grouped_gemm_of(r)) t << "moe_grouped_gemm = false\n";
  if (const char* scope = cuda_graph_scope_of(r)) t << "cuda_graph_scope = " << scope << "\n";
  if (const int off = activation_offload_layers_of(r); off > 0) t << "activation_offload_layers = " << off << "\n";
  t << "\n[sync]\nalgorithm = \"ring\"\noverlap = " << (overlap_grad_reduce_of(r) ? "true" : "false") << "\n";
  // The optimizer's gradient buckets in parameters, and which chunks it cuts (modern_row_defaults.cpp).
  if (const double params = grad_bucket_params_of(r); params > 0)
    t << "bucket_params = " << scenarios::toml_float(params) << "\n";
  if (megatron_core_buckets(r)) t << "bucketing = \"megatron-core\"\n";
  if (tp_comm_overlap_of(r)) t << "tp_comm_overlap = true\n";
  // Megatron-Bridge's per-tensor FP8 recipes gather the fp8 weights in fp8 (modern_row_defaults.cpp).
  if (fp8_param_gather_of(r)) t << "fp8_param_gather = true\n";
  if (lora_rank_of(r) > 0)
    t << "\n[finetune]\nmethod = \"lora\"\nlora_rank = " << lora_rank_of(r)
      << "\nlora_targets = " << lora_targets_toml_of(r) << "\n";
  // Transformer Engine's current scaling reads each cast's operand once more for its amax
  // (workloads/compute/compute_constants.cpp fp8_amax_bytes_per_element: the bf16 read).
  // Megatron-Core's unfused cross-entropy where the recipe left the fusion off (modern_row_defaults.cpp).
  // MXFP8's block scales ride with its tensor-parallel gathers (modern_row_defaults.cpp mxfp8_of).
  const bool cs = fp8_current_scaling_of(r), unfused_ce = unfused_cross_entropy_of(r), mx = mxfp8_of(r);
  if (cs || unfused_ce || mx) t << "\n[model_constants]\n";
  if (cs) t << "fp8_amax_bytes_per_element = 2\n";
  if (mx) t << "fp8_block_scale_bytes_per_element = 0.03125\n";
  if (unfused_ce) t << "cross_entropy_unfused = 1\n";
}

}  // namespace

std::string modern_scenario_toml(const ModernRow& published) {
  const ModernRow r = as_run(published);
  std::ostringstream t;
  const int per_node = gpus_per_node_of(r);
  const bool segment = node_preset_for(r).ends_with("-nvl72") && per_node != 72;
  t << "name = " << scenarios::quote_str(r.file + ":" + std::to_string(r.line) + " " + r.model) << "\n\n[cluster]\n";
  if (!segment) t << "node = \"" << node_preset_for(r) << "\"\n";
  t << "nodes = " << (r.num_gpus + per_node - 1) / per_node << "\n";
  if (r.num_gpus % per_node != 0) t << "gpus = " << r.num_gpus << "\n";
  if (segment)  // the rack's trays the job holds: 2 GPUs per Grace CPU, one NIC per GPU (as the preset)
    t << "\n[cluster.node]\npreset = \"" << node_preset_for(r) << "\"\ngpus = " << per_node
      << "\nsockets = " << per_node / 2 << "\nnics = " << per_node << "\n";
  write_model(t, r);
  write_layout(t, with_hybrid_shape(r));
  return t.str();
}

std::optional<scenarios::ScenarioSpec> scenario_for_modern_row(const ModernRow& row, std::string* why_not) {
  if (std::string why = modern_skip_reason(row); !why.empty()) {
    if (why_not) *why_not = why;
    return std::nullopt;
  }
  try {
    return scenarios::parse_scenario(modern_scenario_toml(row), row.file + ":" + std::to_string(row.line));
  } catch (const scenarios::ScenarioError& e) {
    if (why_not) *why_not = "scenario rejected: " + e.diagnostics().front().message;
    return std::nullopt;
  }
}

}  // namespace clustersim::analysis
