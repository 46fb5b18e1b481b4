// The [parallelism], [training] and [sync] sections: the parallel layout (tp, pp, dp, virtual
// stages and the pipeline schedule, ZeRO), the batch and numerics, and the gradient
// synchronization. What depends on other sections (dp from the GPU count, the batch against dp,
// the precision against the GPU) is checked later, in cross_checks.cpp.
#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_reader.h"
#include "scenarios/toml_text.h"

namespace clustersim::scenarios {
namespace {

using workloads::Schedule;

constexpr std::string_view kParallelKeys[] = {"tp",       "pp",   "dp", "virtual_stages", "schedule", "sequence_parallel",
                                              "zero", "distributed_optimizer", "first_stage_layers", "last_stage_layers",
                                              "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split", "stage_layers", "zero3_gather",
                                              "cp", "cp_comm_type", "ep", "etp", "moe_dispatcher", "moe_dispatcher_sms",
                                              "moe_a2a_overlap", "delay_wgrad_compute", "moe_shared_expert_overlap", "shard_group",
                                              "outer_dp_sharding"};
constexpr std::string_view kTrainingKeys[] = {"global_batch", "micro_batch", "precision", "optimizer",
                                              "recompute",    "iterations",  "tokens", "grad_dtype", "optimizer_dtype",
                                              "activation_offload_layers", "launch_blocking", "recompute_modules", "cuda_graphs",
                                              "cuda_graph_scope",
                                              "num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16", "bf16_modules",
                                              "fp8_modules", "te_op_fuser", "recompute_save",
                                              "moe_grouped_gemm", "offload_modules", "offload_min_tensor_size",
                                              "recompute_dce", "optimizer_kernels", "weight_decay", "cross_entropy"};
constexpr std::string_view kSyncKeys[] = {"algorithm", "bucket_mb", "bucket_params", "bucketing", "overlap", "overlap_grad_reduce",
                                          "overlap_param_gather", "tp_comm_overlap", "fsdp_prefetch", "zero3_impl", "offload_optimizer",
                                          "offload_delayed_update", "fp8_param_gather", "fp8_amax_reduction",
                                          "tp_async_dgrad_allreduce"};

}  // namespace

// parallelism.stage_layers: transformer layers per model chunk, in model order (ParallelSpec::
// stage_layers). Its length and sum are checked against pp, virtual_stages and the model later
// (stage_split.cpp), once both sections are read.
void Loader::read_stage_layers(Section& s) {
  const toml::node* n = s.find("stage_layers");
  if (n == nullptr) return;
  const toml::array* list = n->as_array();
  const char* example = "[4, 4, 4, 1]";
  if (list == nullptr || list->empty()) {
    s.wrong_type("stage_layers", *n, "a non-empty array of layer counts, one per model chunk", example);
    return;
  }
  std::vector<int> counts;
  for (const toml::node& e : *list) {
    const auto* v = e.as_integer();
    if (v == nullptr || v->get() < 0 || v->get() > (1 << 20)) {
      error_at_key("parallelism.stage_layers", "stage_layers lists " + (v ? std::to_string(v->get()) : "a " + type_name(e.type())) +
                                                   ", not a layer count",
                   std::string("give whole numbers >= 0, one per model chunk (pp x virtual_stages), e.g. stage_layers = ") + example);
      return;
    }
    counts.push_back(static_cast<int>(v->get()));
  }
  spec_.parallel.stage_layers = std::move(counts);
}

bool Loader::read_parallelism(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "parallelism", kParallelKeys);
  auto& p = spec_.parallel;
  if (auto v = s.integer("tp", 1, 1 << 20, "8")) p.tp = *v;
  if (auto v = s.integer("pp", 1, 1 << 20, "8")) p.pp = *v;
  if (auto v = s.integer("dp", 1, 1 << 24, "16")) {
    p.dp = *v;
    dp_given_ = true;
  }
  if (auto v = s.integer("virtual_stages", 1, 1 << 16, "2")) p.virtual_stages = *v;
  const auto schedule = s.choice("schedule", workloads::kScheduleNames);
  if (auto v = s.boolean("sequence_parallel")) p.sequence_parallel = *v;
  if (auto v = s.integer("zero", 0, 3, "1")) p.zero = *v;
  if (auto v = s.boolean("distributed_optimizer")) p.distributed_optimizer = *v;
  if (auto v = s.integer("first_stage_layers", 1, 1 << 20, "7")) p.first_stage_layers = *v;
  if (auto v = s.integer("last_stage_layers", 1, 1 << 20, "7")) p.last_stage_layers = *v;
  if (auto v = s.boolean("account_for_embedding_in_pipeline_split")) p.embedding_in_split = *v;
  if (auto v = s.boolean("account_for_loss_in_pipeline_split")) p.loss_in_split = *v;
  read_stage_layers(s);
  if (auto v = s.choice("zero3_gather", workloads::kZero3GatherNames)) p.zero3_gather = *v;
  if (auto v = s.integer("cp", 1, 1 << 16, "8")) p.cp = *v;
  if (auto v = s.choice("cp_comm_type", workloads::kCpCommNames)) p.cp_comm = *v;
  if (auto v = s.integer("ep", 1, 1 << 20, "8")) p.ep = *v;
  if (auto v = s.integer("etp", 1, 1 << 16, "1")) p.etp = *v;
  if (auto v = s.choice("moe_dispatcher", workloads::kMoeDispatcherNames)) p.moe_dispatcher = *v;
  if (auto v = s.integer("moe_dispatcher_sms", 1, 1024, "32")) p.moe_dispatcher_sms = *v;
  if (auto v = s.boolean("moe_a2a_overlap")) p.moe_a2a_overlap = *v;
  if (auto v = s.boolean("delay_wgrad_compute")) p.delay_wgrad_compute = *v;
  if (auto v = s.boolean("moe_shared_expert_overlap")) p.moe_shared_expert_overlap = *v;
  if (auto v = s.integer("shard_group", 1, 1 << 24, "8")) shard_group_ = *v;
  if (auto v = s.choice("outer_dp_sharding", workloads::kOuterDpShardingNames)) p.outer_dp_sharding = *v;
  s.finish();
  if (error_count() != before) return false;

  schedule_given_ = schedule.has_value();
  p.schedule = schedule ? *schedule : p.virtual_stages > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  if (p.schedule == Schedule::Interleaved && p.virtual_stages == 1)
    error_at_key("parallelism.schedule", "schedule = \"interleaved\" needs virtual_stages > 1",
                 "set virtual_stages = 2 (model chunks per pipeline stage), or use schedule = \"1f1b\"");
  if (p.schedule != Schedule::Interleaved && p.virtual_stages > 1)
    error_at_key("parallelism.virtual_stages",
                 "virtual_stages = " + std::to_string(p.virtual_stages) + " needs the interleaved schedule, but schedule = " +
                     quote_str(sim::name_of(workloads::kScheduleNames, p.schedule)),
                 "remove schedule (virtual_stages > 1 selects \"interleaved\"), or use virtual_stages = 1");
  if (p.virtual_stages > 1 && p.pp == 1)
    error_at_key("parallelism.virtual_stages", "virtual_stages = " + std::to_string(p.virtual_stages) + " needs pipeline parallelism, but pp = 1",
                 "use pp >= 2, or virtual_stages = 1");
  return error_count() == before;
}

// A [training] list of module names read into a bit set: recompute_modules (Megatron-Core's
// selective recompute modules, workloads::RecomputeModule), bf16_modules / fp8_modules (the modules
// a per-module precision recipe runs apart from the run's fp8 / nvfp4, workloads::PrecisionModule).
// An empty array selects no module; an unknown name is an error naming the key and the valid names.
namespace {
template <std::size_t N>
void read_module_list(LoadContext& ctx, Section& s, const char* key, const sim::Choice<unsigned> (&names)[N],
                      const char* example, const char* hint, unsigned& modules, const char* noun = "module") {
  const toml::node* n = s.find(key);
  if (n == nullptr) return;
  const toml::array* list = n->as_array();
  if (list == nullptr) {
    s.wrong_type(key, *n, std::string("an array of ") + noun + " names", example);
    return;
  }
  modules = 0;
  for (const toml::node& e : *list) {
    const auto* name = e.as_string();
    const auto module = name ? sim::parse(names, name->get()) : std::nullopt;
    if (!module) {
      const std::string got = name ? "'" + name->get() + "'" : "a " + type_name(e.type());
      ctx.error_at_key(std::string("training.") + key, std::string(key) + " lists " + got + ", not a modelled " + noun, hint);
      continue;
    }
    modules |= *module;
  }
}

// training.cuda_graph_scope: Megatron-Core's cuda_graph_scope list (workloads::CudaGraphModule),
// with its own checks (core_r0.16 transformer_config.py __post_init__): "full_iteration" alone
// (it is cuda_graphs = true), not "moe" with "moe_router", "moe_preprocess" only with
// "moe_router". What depends on the model is checked in cross_checks.cpp.
void read_cuda_graph_scope(LoadContext& ctx, Section& s, workloads::TrainingSpec& tr) {
  const toml::node* n = s.find("cuda_graph_scope");
  if (n == nullptr) return;
  const toml::array* list = n->as_array();
  const char* example = "[\"attn\", \"moe_router\", \"moe_preprocess\"]";
  if (list == nullptr || list->empty()) {
    s.wrong_type("cuda_graph_scope", *n, "a non-empty array of module names", example);
    return;
  }
  const std::string key = "training.cuda_graph_scope";
  bool full_iteration = false;
  unsigned modules = 0;
  for (const toml::node& e : *list) {
    const auto* name = e.as_string();
    if (name != nullptr && name->get() == "full_iteration") {
      full_iteration = true;
      continue;
    }
    const auto module = name ? sim::parse(workloads::kCudaGraphModuleNames, name->get()) : std::nullopt;
    if (!module) {
      const std::string got = name ? "'" + name->get() + "'" : "a " + type_name(e.type());
      ctx.error_at_key(key, "cuda_graph_scope lists " + got + ", not a Megatron-Core graph scope",
                       "use \"attn\", \"mlp\", \"moe\", \"moe_router\", \"moe_preprocess\", \"mamba\" or "
                       "\"full_iteration\" (alone)");
      return;
    }
    modules |= *module;
  }
  if (full_iteration && modules != 0) {
    ctx.error_at_key(key, "cuda_graph_scope lists \"full_iteration\" with other modules",
                     "a full-iteration graph captures the whole step; list it alone, or list only per-layer modules");
    return;
  }
  if ((modules & workloads::kGraphMoe) != 0 && (modules & workloads::kGraphMoeRouter) != 0) {
    ctx.error_at_key(key, "cuda_graph_scope lists both \"moe\" and \"moe_router\"",
                     "Megatron-Core asserts 'cuda_graph_scope must not contain both moe and moe_router'; keep one");
    return;
  }
  if ((modules & workloads::kGraphMoePreprocess) != 0 && (modules & workloads::kGraphMoeRouter) == 0) {
    ctx.error_at_key(key, "cuda_graph_scope lists \"moe_preprocess\" without \"moe_router\"",
                     "Megatron-Core captures the preprocess only together with the router; add \"moe_router\"");
    return;
  }
  if (full_iteration) tr.cuda_graphs = true;
  tr.cuda_graph_modules = modules;
}

}  // namespace

bool Loader::read_training(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "training", kTrainingKeys);
  auto& tr = spec_.training;
  if (auto v = s.integer("global_batch", 1, INT_MAX, "1536")) {
    tr.global_batch = *v;
    global_batch_given_ = true;
  }
  if (auto v = s.integer("micro_batch", 1, INT_MAX, "1")) tr.micro_batch = *v;
  if (auto v = s.choice("precision", topology::kPrecisionNames)) {
    tr.precision = *v;
    precision_given_ = true;
  }
  if (auto v = s.choice("optimizer", workloads::kOptimizerNames)) tr.optimizer = *v;
  if (auto v = s.choice("recompute", workloads::kRecomputeNames)) tr.recompute = *v;
  if (auto v = s.integer("iterations", 1, INT_MAX, "1")) tr.iterations = *v;
  if (auto v = s.number("tokens", 0.0, false, "300e9")) tr.tokens = *v;
  if (auto v = s.choice("grad_dtype", workloads::kStateDtypeNames)) tr.grad_dtype = *v;
  if (auto v = s.choice("optimizer_dtype", workloads::kStateDtypeNames)) tr.optimizer_dtype = *v;
  if (auto v = s.choice("optimizer_kernels", workloads::kOptimizerKernelsNames)) tr.optimizer_kernels = *v;
  if (auto v = s.boolean("weight_decay")) tr.weight_decay = *v;
  if (auto v = s.choice("cross_entropy", workloads::kCrossEntropyNames)) tr.cross_entropy = *v;
  if (auto v = s.integer("activation_offload_layers", 0, 1 << 20, "5")) tr.activation_offload_layers = *v;
  if (auto v = s.boolean("launch_blocking")) tr.launch_blocking = *v;
  if (auto v = s.boolean("cuda_graphs")) tr.cuda_graphs = *v;
  if (auto v = s.boolean("te_op_fuser")) tr.te_op_fuser = *v;
  if (auto v = s.boolean("moe_grouped_gemm")) tr.moe_grouped_gemm = *v;
  if (auto v = s.boolean("recompute_dce")) tr.recompute_dce = *v;  // checked against recompute in cross-checks
  read_module_list(*this, s, "recompute_modules", workloads::kRecomputeModuleNames, "[\"layernorm\", \"moe_act\"]",
                   "use \"layernorm\", \"moe_act\", \"moe\" or \"mla_up_proj\" (Megatron-Core recompute_modules)",
                   tr.recompute_modules);
  // offload_modules: Megatron-Core's fine-grained activation offloading (workloads::OffloadModule);
  // its pairings with each other, recompute and the model are cross-checks (check_offload_modules).
  read_module_list(*this, s, "offload_modules", workloads::kOffloadModuleNames, "[\"core_attn\", \"attn_proj\"]",
                   "use \"attn_norm\", \"qkv_linear\", \"core_attn\", \"attn_proj\", \"mlp_norm\", \"expert_fc1\", "
                   "\"moe_act\" or \"fused_group_mlp\" (Megatron-Core offload_modules)",
                   tr.offload_modules);
  if (auto v = s.number("offload_min_tensor_size", 0.0, true, "1048576")) tr.offload_min_tensor_elements = *v;
  // recompute_save: the layer ops full recompute keeps (JAX save_only_these_names); their checks
  // against recompute and the model are cross-checks (check_recompute_save).
  read_module_list(*this, s, "recompute_save", workloads::kRecomputeSaveNames, "[\"qkv_proj\", \"attention_out_proj\"]",
                   "use \"qkv_proj\", \"flash_attention\", \"attention_out_proj\", \"mlp_fc1\", \"mlp_fc2\", \"mlp_gate\", "
                   "\"mlp_up\" or \"mlp_down\" (the layer's op names)",
                   tr.recompute_save, "op");
  const bool graphs_given = s.find("cuda_graphs") != nullptr;
  read_cuda_graph_scope(*this, s, tr);
  if (tr.cuda_graph_modules != 0 && graphs_given && tr.cuda_graphs)
    error_at_key("training.cuda_graph_scope", "cuda_graph_scope lists per-layer modules, but cuda_graphs = true captures the whole iteration",
                 "remove cuda_graphs (or set it to false) for per-layer graphs, or remove cuda_graph_scope");
  if (auto v = s.integer("num_layers_at_start_in_bf16", 0, 1 << 20, "1")) tr.bf16_layers_at_start = *v;
  if (auto v = s.integer("num_layers_at_end_in_bf16", 0, 1 << 20, "1")) tr.bf16_layers_at_end = *v;
  const char* precision_example = "[\"attention\", \"moe_latent_proj\", \"mtp\"]";
  const char* precision_hint = "use \"attention\", \"moe_latent_proj\", \"mtp\", \"mamba_in_proj\" or \"mamba_out_proj\"";
  read_module_list(*this, s, "bf16_modules", workloads::kPrecisionModuleNames, precision_example, precision_hint,
                   tr.bf16_modules);
  read_module_list(*this, s, "fp8_modules", workloads::kPrecisionModuleNames, precision_example, precision_hint,
                   tr.fp8_modules);
  s.finish();
  return error_count() == before;
}

bool Loader::read_sync(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "sync", kSyncKeys);
  if (auto v = s.choice("algorithm", workloads::kCollectiveAlgoNames)) spec_.sync.algorithm = *v;
  const auto bucket_mb = s.number("bucket_mb", 0.0, true, "25");
  const auto bucket_params = s.number("bucket_params", 0.0, true, "40e6");
  if (bucket_mb) spec_.sync.bucket_mb = *bucket_mb;
  if (bucket_params) spec_.sync.bucket_params = *bucket_params;
  if (auto v = s.choice("bucketing", workloads::kBucketingNames)) spec_.sync.bucketing = *v;
  const auto overlap = s.boolean("overlap");
  const auto overlap_grad_reduce = s.boolean("overlap_grad_reduce");
  if (overlap) spec_.sync.overlap = *overlap;
  if (overlap_grad_reduce) spec_.sync.overlap = *overlap_grad_reduce;
  if (auto v = s.boolean("overlap_param_gather")) spec_.sync.overlap_param_gather = *v;
  if (auto v = s.boolean("tp_comm_overlap")) spec_.sync.tp_comm_overlap = *v;
  if (auto v = s.boolean("fsdp_prefetch")) spec_.sync.fsdp_prefetch = *v;
  if (auto v = s.choice("zero3_impl", workloads::kZero3ImplNames)) spec_.sync.zero3_impl = *v;
  if (auto v = s.choice("offload_optimizer", workloads::kOffloadDeviceNames)) spec_.sync.offload_optimizer = *v;
  if (auto v = s.boolean("offload_delayed_update")) spec_.sync.offload_delayed_update = *v;
  if (auto v = s.boolean("fp8_param_gather")) spec_.sync.fp8_param_gather = *v;
  if (auto v = s.choice("fp8_amax_reduction", workloads::kFp8AmaxReductionNames)) spec_.sync.fp8_amax_reduction = *v;
  if (auto v = s.boolean("tp_async_dgrad_allreduce")) spec_.sync.tp_async_dgrad_allreduce = *v;
  s.finish();
  if (bucket_mb && bucket_params) check_bucket_size(*bucket_mb, *bucket_params);
  check_overlap(overlap, overlap_grad_reduce);
  check_fp8_param_gather();
  check_fp8_amax_reduction();
  return error_count() == before;
}

// [sync] bucket_mb and bucket_params both size the gradient bucket: one of them, unless a --set of
// one overrides the file's other.
void Loader::check_bucket_size(double bucket_mb, double bucket_params) {
  const bool mb_set = override_of_.count("sync.bucket_mb") > 0;
  if (mb_set != (override_of_.count("sync.bucket_params") > 0)) {
    if (mb_set) spec_.sync.bucket_params = 0;  // --set bucket_mb wins over the file's bucket_params
    return;
  }
  error_at_key("sync.bucket_params",
               "bucket_params = " + format_number(bucket_params) + " and bucket_mb = " + format_number(bucket_mb) +
                   " both size the gradient bucket in [sync]",
               "keep one: bucket_params counts parameters (Megatron-Core's ddp.bucket_size), bucket_mb MiB of "
               "gradients (PyTorch DDP's bucket_cap_mb)");
}

// The overlap switches against each other and the layout (workloads/training/overlap.h).
void Loader::check_overlap(std::optional<bool> overlap, std::optional<bool> overlap_grad_reduce) {
  if (overlap && overlap_grad_reduce && *overlap != *overlap_grad_reduce) {
    const bool overlap_set = override_of_.count("sync.overlap") > 0;
    if (overlap_set != (override_of_.count("sync.overlap_grad_reduce") > 0)) {
      spec_.sync.overlap = overlap_set ? *overlap : *overlap_grad_reduce;  // --set wins over the file
    } else {
      error_at_key("sync.overlap_grad_reduce",
                   std::string("overlap_grad_reduce = ") + (*overlap_grad_reduce ? "true" : "false") +
                       " contradicts overlap = " + (*overlap ? "true" : "false") +
                       " in [sync]; overlap is the older name of the same switch",
                   "keep one of the two keys");
    }
  }
  // With tp = 1 there is nothing to overlap (Megatron-Bridge turns it off); no error.
  if (parallel_ok_ && spec_.sync.tp_comm_overlap && spec_.parallel.tp > 1 && !spec_.parallel.sequence_parallel)
    error_at_key("sync.tp_comm_overlap",
                 "tp_comm_overlap = true needs sequence parallelism, but [parallelism] sequence_parallel = false",
                 "Transformer Engine overlaps the sequence-parallel all-gathers and reduce-scatters with their GEMMs: "
                 "set [parallelism] sequence_parallel = true, or tp_comm_overlap = false");
}

// [sync] fp8_amax_reduction = "none" (TE's reduce_amax = False) as Transformer Engine accepts it:
// v2.9 module/base.py l. 1092-1096 asserts reduce_amax for delayed scaling with sequence
// parallelism ("Amax reduction across tensor parallel group is necessary ...").
void Loader::check_fp8_amax_reduction() {
  const auto& p = spec_.parallel;
  if (spec_.sync.fp8_amax_reduction != workloads::Fp8AmaxReduction::None || spec_.training.precision != topology::Precision::Fp8 ||
      p.tp <= 1 || !p.sequence_parallel)
    return;
  error_at_key("sync.fp8_amax_reduction",
               "fp8_amax_reduction = \"none\" with tp = " + std::to_string(p.tp) + " and sequence parallelism",
               "Transformer Engine asserts reduce_amax for delayed scaling with sequence parallelism (module/base.py); "
               "use \"tp\" or \"stage\", or sequence_parallel = false");
}

// [sync] fp8_param_gather as Megatron-Core accepts it: fp8_param (set from fp8_param_gather,
// core_v0.15.0 megatron/training/arguments.py l. 1258) "must be used together with fp8 mode"
// (transformer/transformer_config.py l. 795-796), and "--fp8-param-gather only supported with
// distributed optimizer, torch fsdp2, megatron fsdp, or inference mode" (arguments.py l. 683-685).
void Loader::check_fp8_param_gather() {
  if (!spec_.sync.fp8_param_gather) return;
  if (training_ok_ && spec_.training.precision != topology::Precision::Fp8)
    error_at_key("sync.fp8_param_gather",
                 "fp8_param_gather = true needs an fp8 run, but [training] precision = \"" +
                     std::string(topology::to_string(spec_.training.precision)) + "\"",
                 "Megatron-Core keeps fp8 parameters only in fp8 mode: set precision = \"fp8\", or "
                 "fp8_param_gather = false");
  if (parallel_ok_ && !spec_.parallel.distributed_optimizer && spec_.parallel.zero != 3)
    error_at_key("sync.fp8_param_gather",
                 "fp8_param_gather = true needs the distributed optimizer or FSDP, but [parallelism] has neither",
                 "Megatron-Core gathers fp8 parameters only there: set [parallelism] distributed_optimizer = true "
                 "(or zero = 3), or fp8_param_gather = false");
}

}  // namespace clustersim::scenarios
