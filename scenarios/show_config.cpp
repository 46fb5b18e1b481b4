// The resolved scenario as TOML (see show_config.h): one function per section, in file order.
#include "scenarios/show_config.h"

#include <sstream>
#include <string>
#include <utility>

#include "scenarios/toml_text.h"
#include "sim/enum_names.h"
#include "topology/catalog.h"

namespace clustersim::scenarios {
namespace {

const char* b(bool v) { return v ? "true" : "false"; }

// `key = ["a", "b"]` for the names whose bits are set in `bits` (a module list such as
// recompute_modules), in the table's order; nothing when no bit is set.
template <std::size_t N>
void show_module_list(std::ostream& out, const char* key, unsigned bits, const sim::Choice<unsigned> (&names)[N]) {
  if (bits == 0) return;
  out << key << " = [";
  const char* sep = "";
  for (const auto& c : names)
    if ((bits & c.value) != 0) out << std::exchange(sep, ", ") << quote_str(std::string(c.name));
  out << "]\n";
}

void show_cluster(std::ostream& out, const ScenarioSpec& spec) {
  const auto& c = spec.cluster;
  const auto& n = c.node;
  out << "[cluster]\n"
      << "nodes = " << c.nodes << "\n"
      << "fabric = " << quote_str(sim::name_of(topology::kFabricNames, c.resolved_fabric())) << "\n"
      << "oversubscription = " << toml_float(c.oversubscription) << "\n"
      << "routing = " << quote_str(sim::name_of(topology::kFabricRoutingNames, c.resolved_routing())) << "\n"
      << "gpus = " << c.used_gpus() << "\n\n";

  out << "[cluster.node]\n";
  if (!spec.node_preset.empty()) out << "preset = " << quote_str(spec.node_preset) << "\n";
  out << "gpu = " << quote_str(n.gpu) << "\n"
      << "gpus = " << n.gpus << "\n"
      << "intra = " << quote_str(sim::name_of(topology::kIntraKindNames, n.intra)) << "\n"
      << "pcie = " << quote_str("gen" + std::to_string(n.pcie_gen)) << "\n"
      << "gpus_per_pcie_switch = " << n.gpus_per_pcie_switch << "\n"
      << "sockets = " << n.sockets << "\n"
      << "nic = " << quote_str(n.nic) << "\n"
      << "nics = " << n.nics << "\n"
      << "nic_attach = " << quote_str(sim::name_of(topology::kNicAttachNames, n.nic_attach)) << "\n\n";
}

void show_gpu_overrides(std::ostream& out, const ScenarioSpec& spec) {
  const auto& c = spec.cluster;
  const topology::GpuSpec* gpu = topology::find_gpu(c.node.gpu);
  out << "[cluster.gpu_overrides]\n";
  if (c.power_limit_w > 0)
    out << "power_limit_w = " << toml_float(c.power_limit_w) << "\n";
  else
    out << "# power_limit_w = " << (gpu ? format_number(gpu->tdp.value) : std::string("?")) << "  # default: the GPU's TDP\n";
  if (!c.mig.empty())
    out << "mig = " << quote_str(c.mig) << "\n";
  else
    out << "# mig = \"3g.40gb\"  # default: the whole GPU\n";
  out << "tf32 = " << b(c.tf32) << "\n";
  if (c.memory_gib > 0)
    out << "memory_gib = " << toml_float(c.memory_gib) << "\n";
  else
    out << "# memory_gib = " << (gpu ? format_number(gpu->memory.value / 1073741824.0) : std::string("?")) << "  # default: the GPU's\n";
  if (c.hbm_bandwidth_gbps > 0)
    out << "hbm_bandwidth_gbps = " << toml_float(c.hbm_bandwidth_gbps) << "\n\n";
  else
    out << "# hbm_bandwidth_gbps = " << (gpu ? format_number(gpu->memory_bandwidth.value / 1e9) : std::string("?")) << "  # default: the GPU's\n\n";
}

void show_model(std::ostream& out, const ScenarioSpec& spec) {
  const auto& m = spec.model;
  out << "[model]\n";
  if (!spec.model_preset.empty()) out << "preset = " << quote_str(spec.model_preset) << "\n";
  if (!spec.hf_config.empty()) out << "# imported from hf_config = " << quote_str(spec.hf_config) << "\n";
  out << "layers = " << m.layers << "\n"
      << "hidden = " << m.hidden << "\n"
      << "heads = " << m.heads << "\n"
      << "kv_heads = " << m.kv_heads << "\n"
      << (m.attention_head_dim > 0 ? "head_dim = " + std::to_string(m.attention_head_dim) + "\n" : std::string())
      << "ffn_hidden = " << m.ffn_hidden << "\n"
      << "seq_len = " << m.seq_len << "\n"
      << "vocab = " << m.vocab << "\n"
      << "mlp = " << quote_str(sim::name_of(workloads::kMlpKindNames, m.mlp)) << "\n"
      << "norm = " << quote_str(sim::name_of(workloads::kNormKindNames, m.norm)) << "\n"
      << "tied_embeddings = " << b(m.tied_embeddings) << "\n"
      << "flash_attention = " << b(m.flash_attention) << "\n"
      << (m.dropout ? "" : "# ") << "dropout = " << b(m.trains_with_dropout())
      << (m.dropout ? "" : "  # default: true for gelu, false for swiglu") << "\n";
  if (m.is_moe()) {  // only for a mixture of experts, so dense models print as before
    out << "experts = " << m.experts << "\n"
        << "experts_per_token = " << m.experts_per_token << "\n"
        << "moe_ffn_hidden = " << m.moe_ffn_hidden << "\n"
        << "shared_experts = " << m.shared_experts << "\n"
        << "first_dense_layers = " << m.first_dense_layers << "\n"
        << "moe_layer_freq = " << m.moe_layer_freq << "\n"
        << "capacity_factor = " << m.capacity_factor << (m.capacity_factor > 0 ? "" : "  # 0: dropless") << "\n";
    if (m.expert_bias) out << "expert_bias = true\n";  // only when set
    if (m.moe_apply_probs_on_input) out << "moe_apply_probs_on_input = true\n";  // only when set
    if (m.glu_clamp) out << "glu_clamp = true\n";  // only when set
    if (m.moe_latent_size > 0) out << "moe_latent_size = " << m.moe_latent_size << "\n";  // only when set
  }
  if (m.is_hybrid()) {  // only for a hybrid Mamba model, so other models print as before
    out << "hybrid_pattern = " << quote_str(m.hybrid_pattern) << "\n"
        << "mamba_heads = " << m.mamba_heads << "\n"
        << "mamba_head_dim = " << m.mamba_head_dim << "\n"
        << "mamba_groups = " << m.mamba_groups << "\n"
        << "mamba_state = " << m.mamba_state << "\n"
        << "mamba_conv = " << m.mamba_conv << "\n"
        << "mamba_chunk = " << m.mamba_chunk << "\n";
  }
  if (m.is_mla()) {  // attention variants print only when set, so other models print as before
    out << "q_lora_rank = " << m.q_lora_rank << (m.q_lora_rank > 0 ? "" : "  # 0: no query compression") << "\n"
        << "kv_lora_rank = " << m.kv_lora_rank << "\n"
        << "qk_nope_head_dim = " << m.qk_nope_head_dim << "\n"
        << "qk_rope_head_dim = " << m.qk_rope_head_dim << "\n"
        << "v_head_dim = " << m.v_head_dim << "\n";
  }
  if (m.mtp_layers > 0) out << "mtp_layers = " << m.mtp_layers << "\n";  // only when set
  if (m.sliding_window > 0)
    out << "sliding_window = " << m.sliding_window << "\n"
        << "full_attention_every = " << m.full_attention_every << (m.full_attention_every > 0 ? "" : "  # 0: every layer slides")
        << "\n";
  if (m.attention_sinks) out << "attention_sinks = true\n";
  if (m.yarn_rope) out << "yarn_rope = true\n";
  if (m.attention_kernel != workloads::AttentionKernel::Native)
    out << "attention_kernel = \"" << sim::name_of(workloads::kAttentionKernelNames, m.attention_kernel) << "\"\n";
  if (m.eager_squared_relu) out << "eager_squared_relu = true\n";
  if (m.eager_layer_ops) out << "eager_layer_ops = true\n";
  if (m.packed_sample_len > 0) out << "packed_sample_len = " << toml_float(m.packed_sample_len) << "\n";  // only when set
  out << "\n";
}

void show_parallelism(std::ostream& out, const ScenarioSpec& spec) {
  const auto& p = spec.parallel;
  out << "[parallelism]\n"
      << "tp = " << p.tp << "\n"
      << "pp = " << p.pp << "\n"
      << (spec.dp_derived && !spec.jobs.empty() ? "# " : "")  // each [[job]] derives its own
      << "dp = " << p.dp << (spec.dp_derived ? (p.cp > 1 ? "  # derived: gpus / (tp * cp * pp)" : "  # derived: gpus / (tp * pp)") : "") << "\n"
      << "cp = " << p.cp << "\n"
      << "cp_comm_type = " << quote_str(sim::name_of(workloads::kCpCommNames, p.cp_comm)) << "\n"
      << "virtual_stages = " << p.virtual_stages << "\n"
      << "schedule = " << quote_str(sim::name_of(workloads::kScheduleNames, p.schedule)) << "\n"
      << "sequence_parallel = " << b(p.sequence_parallel) << "\n"
      << "zero = " << p.zero << "\n"
      << "distributed_optimizer = " << b(p.distributed_optimizer) << "\n"
      << "zero3_gather = " << quote_str(sim::name_of(workloads::kZero3GatherNames, p.zero3_gather)) << "\n";
  if (p.shard_instances > 1)
    out << "shard_group = " << p.dp / p.shard_instances << "  # hybrid sharding: " << p.shard_instances
        << " replicas of the sharded states\n";
  if (p.outer_dp_sharding == workloads::OuterDpSharding::Optim)
    out << "outer_dp_sharding = \"optim\"  # optimizer states over all " << p.grad_replicas() << " data-parallel ranks\n";
  if (spec.model.is_moe()) {
    out << "ep = " << p.ep << "  # expert data parallel: tp x cp x dp / (etp x ep) = " << p.expert_dp() << "\n";
    if (p.etp > 0)
      out << "etp = " << p.etp << "\n";
    else
      out << "# etp = " << p.tp << "  # default: tp (Megatron-Core's expert_tensor_parallel_size)\n";
    if (p.moe_dispatcher != workloads::MoeDispatcher::AllToAll)  // only when set
      out << "moe_dispatcher = " << quote_str(sim::name_of(workloads::kMoeDispatcherNames, p.moe_dispatcher)) << "\n";
    if (p.moe_dispatcher_sms > 0) out << "moe_dispatcher_sms = " << p.moe_dispatcher_sms << "\n";  // only when set
    if (p.moe_a2a_overlap) out << "moe_a2a_overlap = true\n";  // only when set
    if (p.delay_wgrad_compute) out << "delay_wgrad_compute = true\n";
    if (p.moe_shared_expert_overlap) out << "moe_shared_expert_overlap = true\n";
  }
  const int layers = spec.model.layers;
  const char* why = !p.stage_layers.empty() ? "  # from stage_layers\n"
                    : p.split_slots() > 0   ? "  # from the embedding/loss layer slots\n"
                                            : "  # default: an even share of the layers\n";
  if (!p.stage_layers.empty()) {
    out << "stage_layers = [";
    for (std::size_t i = 0; i < p.stage_layers.size(); ++i) out << (i ? ", " : "") << p.stage_layers[i];
    out << "]\n";
  }
  if (p.first_stage_layers > 0)
    out << "first_stage_layers = " << p.first_stage_layers << "\n";
  else
    out << "# first_stage_layers = " << p.layers_on_stage(layers, 0) << why;
  if (p.embedding_in_split) out << "account_for_embedding_in_pipeline_split = true\n";
  if (p.loss_in_split) out << "account_for_loss_in_pipeline_split = true\n";
  if (p.last_stage_layers > 0)
    out << "last_stage_layers = " << p.last_stage_layers << "\n\n";
  else
    out << "# last_stage_layers = " << p.layers_on_stage(layers, p.pp - 1) << why << "\n";
}

void show_training(std::ostream& out, const ScenarioSpec& spec) {
  const auto& tr = spec.training;
  out << "[training]\n"
      << "global_batch = " << tr.global_batch << "\n"
      << "micro_batch = " << tr.micro_batch << "\n"
      << "precision = " << quote_str(sim::name_of(topology::kPrecisionNames, tr.precision)) << "\n"
      << "optimizer = " << quote_str(sim::name_of(workloads::kOptimizerNames, tr.optimizer)) << "\n"
      << "recompute = " << quote_str(sim::name_of(workloads::kRecomputeNames, tr.recompute)) << "\n"
      << "grad_dtype = " << quote_str(sim::name_of(workloads::kStateDtypeNames, tr.grad_dtype)) << "\n"
      << "optimizer_dtype = " << quote_str(sim::name_of(workloads::kStateDtypeNames, tr.optimizer_dtype)) << "\n"
      << "iterations = " << tr.iterations << "\n"
      << "launch_blocking = " << b(tr.launch_blocking) << "\n"
      << "cuda_graphs = " << b(tr.cuda_graphs) << "\n";
  show_module_list(out, "recompute_modules", tr.recompute_modules, workloads::kRecomputeModuleNames);
  show_module_list(out, "recompute_save", tr.recompute_save, workloads::kRecomputeSaveNames);
  if (tr.recompute_dce) out << "recompute_dce = true\n";  // only when set
  show_module_list(out, "cuda_graph_scope", tr.cuda_graph_modules, workloads::kCudaGraphModuleNames);
  if (tr.te_op_fuser) out << "te_op_fuser = true\n";  // only when set
  if (tr.optimizer_kernels != workloads::OptimizerKernels::Fused)  // only when set
    out << "optimizer_kernels = " << quote_str(sim::name_of(workloads::kOptimizerKernelsNames, tr.optimizer_kernels)) << "\n";
  if (!tr.weight_decay) out << "weight_decay = false\n";  // only when set
  if (!tr.moe_grouped_gemm) out << "moe_grouped_gemm = false\n";  // only when set
  if (tr.cross_entropy != workloads::CrossEntropy::Fused)  // only when set
    out << "cross_entropy = " << quote_str(sim::name_of(workloads::kCrossEntropyNames, tr.cross_entropy)) << "\n";
  if (tr.activation_offload_layers > 0) out << "activation_offload_layers = " << tr.activation_offload_layers << "\n";
  show_module_list(out, "offload_modules", tr.offload_modules, workloads::kOffloadModuleNames);
  if (tr.offload_modules != 0 && tr.offload_min_tensor_elements != 1024.0 * 1024.0)
    out << "offload_min_tensor_size = " << toml_float(tr.offload_min_tensor_elements) << "\n";
  if (tr.bf16_layers_at_start > 0) out << "num_layers_at_start_in_bf16 = " << tr.bf16_layers_at_start << "\n";
  if (tr.bf16_layers_at_end > 0) out << "num_layers_at_end_in_bf16 = " << tr.bf16_layers_at_end << "\n";
  show_module_list(out, "bf16_modules", tr.bf16_modules, workloads::kPrecisionModuleNames);
  show_module_list(out, "fp8_modules", tr.fp8_modules, workloads::kPrecisionModuleNames);
  if (tr.tokens > 0)
    out << "tokens = " << toml_float(tr.tokens) << "\n\n";
  else
    out << "# tokens = 300e9  # default: not given (no time-to-train)\n\n";
}

void show_sync(std::ostream& out, const ScenarioSpec& spec) {
  out << "[sync]\n"
      << "algorithm = " << quote_str(sim::name_of(workloads::kCollectiveAlgoNames, spec.sync.algorithm)) << "\n"
      << (spec.sync.bucket_params > 0 ? "bucket_params = " + toml_float(spec.sync.bucket_params)
                                      : "bucket_mb = " + toml_float(spec.sync.bucket_mb))
      << "\n"
      << "bucketing = " << quote_str(sim::name_of(workloads::kBucketingNames, spec.sync.bucketing)) << "\n"
      << "overlap_grad_reduce = " << b(spec.sync.overlap) << "  # also accepted as overlap\n"
      << "overlap_param_gather = " << b(spec.sync.param_gather_overlapped(spec.parallel)) << "\n"
      << "tp_comm_overlap = " << b(spec.sync.tp_comm_overlap) << "\n"
      << "fp8_param_gather = " << b(spec.sync.fp8_param_gather) << "\n"
      << "fp8_amax_reduction = " << quote_str(sim::name_of(workloads::kFp8AmaxReductionNames, spec.sync.fp8_amax_reduction))
      << "  # fp8 delayed scaling only\n"
      << "tp_async_dgrad_allreduce = " << b(spec.sync.tp_async_dgrad_allreduce)
      << "  # tensor parallelism without sequence parallelism\n"
      << "fsdp_prefetch = " << b(spec.sync.fsdp_prefetch) << "\n"
      << "zero3_impl = " << quote_str(sim::name_of(workloads::kZero3ImplNames, spec.sync.zero3_impl)) << "\n"
      << "offload_optimizer = " << quote_str(sim::name_of(workloads::kOffloadDeviceNames, spec.sync.offload_optimizer))
      << "\n"
      << "offload_delayed_update = " << b(spec.sync.offload_delayed_update) << "\n\n";
}

void show_finetune(std::ostream& out, const ScenarioSpec& spec) {
  const auto& ft = spec.training.finetune;
  out << "[finetune]\n"
      << "method = " << quote_str(sim::name_of(workloads::kFinetuneMethodNames, ft.method)) << "\n";
  if (!ft.lora()) {
    out << "# lora_rank = 8, lora_targets = [\"q\", \"v\"]  # with method = \"lora\"\n\n";
    return;
  }
  out << "lora_rank = " << ft.lora_rank << "\nlora_targets = [";
  const char* sep = "";
  for (const auto& c : workloads::kLoraTargetNames) {
    if ((ft.lora_targets & c.value) == 0) continue;
    out << sep << quote_str(c.name);
    sep = ", ";
  }
  out << "]\n\n";
}

void show_model_constants(std::ostream& out, const ScenarioSpec& spec) {
  out << "[model_constants]\n";
  if (!spec.constants_include.empty()) out << "# included from " << quote_str(spec.constants_include) << "\n";
  for (const auto& [name, value] : spec.model_constants) out << toml_key(name) << " = " << toml_float(value) << "\n";
  out << "\n";
}

void show_cost(std::ostream& out, const ScenarioSpec& spec) {
  out << "[cost]\n";
  if (spec.cost.has_gpu_hour)
    out << "gpu_hour_usd = " << toml_float(spec.cost.gpu_hour_usd) << "\n";
  else
    out << "# gpu_hour_usd = 2.0  # default: capex derived from catalog prices\n";
  out << "electricity_usd_per_kwh = " << toml_float(spec.cost.electricity_usd_per_kwh) << "\n";
}

// [amp] and [data] appear only when the scenario gives them: they are what-ifs, not defaults.
void show_amp(std::ostream& out, const ScenarioSpec& spec) {
  if (!spec.amp) return;
  const auto& a = *spec.amp;
  out << "\n[amp]\n";
  if (a.dynamic)
    out << "loss_scale = \"dynamic\"\n"
        << "init_scale = " << toml_float(a.init_scale) << "\n";
  else
    out << "loss_scale = " << toml_float(a.init_scale) << "\n";
  out << "growth_factor = " << toml_float(a.growth_factor) << "\n"
      << "backoff_factor = " << toml_float(a.backoff_factor) << "\n"
      << "growth_interval = " << a.growth_interval << "\n"
      << "grad_max_median = " << toml_float(a.grad_max_median) << "\n"
      << "grad_max_sigma = " << toml_float(a.grad_max_sigma) << "\n"
      << "grad_median = " << toml_float(a.grad_median) << "\n"
      << "grad_sigma = " << toml_float(a.grad_sigma) << "\n";
  if (a.steps > 0)
    out << "steps = " << a.steps << "\n";
  else
    out << "# steps = 10000  # default: the steps [training] tokens needs, else 10000\n";
  out << "seed = " << a.seed << "\n";
}

void show_data(std::ostream& out, const ScenarioSpec& spec) {
  if (!spec.data) return;
  const auto& d = *spec.data;
  out << "\n[data]\n"
      << "cpu_ms_per_sample = " << toml_float(d.cpu_ms_per_sample) << "\n"
      << "loader_workers = " << d.loader_workers << "\n"
      << "bytes_per_sample = " << toml_float(d.bytes_per_sample) << "\n"
      << "pinned_memory = " << b(d.pinned_memory) << "\n"
      << "prefetch_factor = " << d.prefetch_factor << "\n"
      << "gpu_decode = " << b(d.gpu_decode) << "\n";
}

// [collectives], only when it changes something (the release whose rules apply, NVLS off).
void show_collectives(std::ostream& out, const ScenarioSpec& spec) {
  const bool default_release = std::string_view(spec.nccl_release.version) == workloads::nccl::default_release().version;
  if (default_release && spec.nvls) return;
  out << "\n[collectives]\n"
      << "nccl_version = " << quote_str(spec.nccl_release.version) << "\n"
      << "nvls = " << b(spec.nvls) << "\n";
}

// [[job]] tables, as written (their `set` as an inline table of the --set strings).
void show_jobs(std::ostream& out, const ScenarioSpec& spec) {
  for (const JobSpec& job : spec.jobs) {
    out << "\n[[job]]\nname = " << quote_str(job.name);
    if (job.gpus_per_node() == spec.cluster.node.gpus && job.mig.empty()) {
      out << "\nnodes = [";
      for (std::size_t i = 0; i < job.nodes.size(); ++i) out << (i ? ", " : "") << job.nodes[i];
      out << "]\n";
    } else {
      std::string gpus;
      for (int g : job.gpus) {
        if (!gpus.empty()) gpus += ',';
        gpus += std::to_string(g);
      }
      out << "\ngpus = " << quote_str(gpus) << "\n";
      if (!job.mig.empty()) out << "mig = " << quote_str(job.mig) << "\n";
    }
    if (job.overrides.empty()) continue;
    out << "set = { ";
    for (std::size_t i = 0; i < job.overrides.size(); ++i) {
      const std::string& o = job.overrides[i];
      const std::size_t eq = o.find('=');
      out << (i ? ", " : "") << quote_str(o.substr(0, eq)) << " = " << o.substr(eq + 1);
    }
    out << " }\n";
  }
}

}  // namespace

std::string show_config(const ScenarioSpec& spec) {
  std::ostringstream out;
  out << "# Resolved scenario " << spec.file << ": every key, defaults included.\n";
  for (const auto& o : spec.overrides) out << "# --set " << o << "\n";
  out << "name = " << quote_str(spec.name) << "\n\n";
  show_cluster(out, spec);
  show_gpu_overrides(out, spec);
  show_model(out, spec);
  show_parallelism(out, spec);
  show_training(out, spec);
  show_sync(out, spec);
  show_finetune(out, spec);
  show_model_constants(out, spec);
  show_cost(out, spec);
  show_amp(out, spec);
  show_data(out, spec);
  show_collectives(out, spec);
  show_jobs(out, spec);
  return out.str();
}

}  // namespace clustersim::scenarios
