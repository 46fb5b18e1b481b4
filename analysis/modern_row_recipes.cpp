// Layout facts the modern tables misprint or leave out, each from the recipe or the later release
// that states it (see modern_row_recipes.h): what the row -> scenario mapping (modern_rows.cpp)
// needs to lay a published run out as it ran.
#include "analysis/modern_row_recipes.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "analysis/modern_row_archs.h"
#include "analysis/modern_row_layout.h"

namespace clustersim::analysis::modern_detail {

// Megatron-Bridge runs every mixture of experts with expert_tensor_parallel_size = 1: the 25.09
// performance YAMLs (scripts/performance/configs/qwen3/qwen3_235b_a22b_llm_pretrain.yaml and
// deepseek/deepseek_v3_llm_pretrain.yaml at cac49dcd: "etp: 1" for every GPU) and, from 25.11 on,
// the base config of every MoE workload (scripts/performance/configs/{deepseek,gpt_oss,kimi,qwen,
// nemotronh}/*_workload_base_configs.py: WorkloadBaseConfig(expert_tensor_parallel_size=1)). The
// tables print no ETP column; with tp 2 and Megatron-Core's default (etp = tp) the Qwen3-235B-A22B
// H100 layout (tp 2, pp 8, EP 32 on 256 GPUs: 32 GPUs a stage) could not be formed, with ETP 1 it
// is the recipe's QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_*. dgxc-benchmarking's rows state their ETP
// in the notes where its tables print one (its launch scripts' -et); the NeMo docs' rows (Mixtral) take Megatron's default.
int expert_tp_of(const ModernRow& r) {
  if (const int stated = notes_int(r, "ETP"); stated > 0) return stated;
  if (modern_source_group(r) == "Megatron-Bridge" && has_experts(r)) return 1;
  return 0;
}

// The container release of a Megatron-Bridge row, from its source's section ('26.06.01 NeMo
// Container'): yymm * 100 + patch, 260601; 0 for another source. The release branches hold the
// recipes each container ran (NVIDIA-NeMo/Megatron-Bridge, docs/performance-summary.md per tag):
// 26.02 = v0.3.0, 26.02.01 = v0.3.1, 26.04 = v0.4.0, 26.04.01 = v0.4.2 (the first tag whose
// summary has the 26.04.01 section), 26.06 = v0.5.0, 26.06.01 = v0.5.1, 26.08 = v0.6.0; the
// performance presets are scripts/performance/configs/<family>/*_workload_base_configs.py up to
// v0.5.1 and src/megatron/bridge/perf_recipes/<family>/<gpu>/*.py on v0.6.0.
int bridge_release(const ModernRow& r) {
  if (modern_source_group(r) != "Megatron-Bridge") return 0;
  const std::size_t at = r.source.find("section '");
  if (at == std::string::npos) return 0;
  int yy = 0, mm = 0, patch = 0;
  if (std::sscanf(r.source.c_str() + at + 9, "%d.%d.%d", &yy, &mm, &patch) < 2) return 0;
  return (yy * 100 + mm) * 100 + patch;
}

// The full-iteration MXFP8 recipes of 26.06 and later, on the NVL72 racks (and Qwen3-30B-A3B on
// B300): v0.5.0 / v0.5.1 DEEPSEEK_V3_PRETRAIN_CONFIG_{GB300,GB200}_FP8_MX_V2 (and GB300's
// _GBS15360), GPT_OSS_120B_PRETRAIN_CONFIG_{GB300,GB200}_FP8_MX_V2, QWEN3_30B_A3B_PRETRAIN_CONFIG_
// {GB300,GB200,B300}_FP8_MX_V1 and QWEN3_235B_A22B_PRETRAIN_CONFIG_{GB300,GB200}_FP8_MX_V2 set
// cuda_graph_impl = "full_iteration", moe_flex_dispatcher_backend = "hybridep" and
// moe_a2a_overlap = True (with cutedsl_fused_grouped_mlp and, except DeepSeek-V3 on GB200,
// fp8_dot_product_attention); v0.6.0's perf_recipes/{deepseek,gpt_oss,qwen}/{gb300,gb200}/*.py
// *_fp8mx_config keep them (deepseek/common.py _enable_deepseek_full_iteration_mxfp8, gpt_oss/
// common.py _apply_gpt_oss_120b_full_iter_fp8mx_configs, qwen/common.py
// _enable_hybridep_full_iteration_mxfp8: cuda_graph_impl "full_iteration", flex "hybridep",
// overlap_moe_expert_parallel_comm and delay_wgrad_compute). Earlier releases ran these models'
// Blackwell presets without a graph or with Transformer Engine's per-module graphs (cuda_graph_impl
// "transformer_engine", scope attn / moe_router / moe_preprocess: cuda_graph_scope_of).
bool full_iteration_mxfp8_recipe(const ModernRow& r) {
  if (bridge_release(r) < 260600 || r.precision != "MXFP8") return false;
  const bool rack = r.gpu.starts_with("GB300") || r.gpu.starts_with("GB200");
  if (has(r.model, "Qwen3-30B-A3B")) return rack || r.gpu == "B300";
  return rack && (has(r.model, "DeepSeek-V3") || has(r.model, "GPT-OSS-120B") || has(r.model, "Qwen3-235B-A22B"));
}
// GPT_OSS_120B_PRETRAIN_CONFIG_{GB300,GB200}_FP8_MX_V2 set cutedsl_fused_grouped_mlp = True
// (Megatron-Bridge r0.5.0 scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py),
// which set_workload_base_configs turns into use_transformer_engine_op_fuser = True
// (scripts/performance/utils/overrides.py l. 238-239); r0.6.0's
// _apply_gpt_oss_120b_full_iter_fp8mx_configs sets it directly (perf_recipes/gpt_oss/common.py
// l. 42). r0.5.0 pins Megatron-LM 458c8d0 (core_v0.18.x), whose TEGroupedMLP then runs
// _fused_forward. The other GPT-OSS rows ran TEGroupedMLP's eager path: 26.02's common perf
// overrides even turn the fuser off (r0.3.0 overrides.py l. 62-63), and B300 MXFP8 26.06 is
// B300_BF16_V2. Nemotron 3 Ultra's 26.08 recipes set it too (r0.6.0 perf_recipes/nemotronh/
// common.py l. 115-116, _apply_nemotron_3_ultra_perf_defaults: "CuteDSL fused grouped MLP + TE op
// fuser"); their expert MLP has neither a clamp nor a bias, so it matters there only as
// fused_group_mlp offloading's precondition.
bool te_op_fuser_of(const ModernRow& r) {
  if (modern_source_group(r) == "Megatron-Bridge" && has(r.model, "Nemotron_3_Ultra")) return true;
  return full_iteration_mxfp8_recipe(r) && has(r.model, "GPT-OSS-120B");
}
// Megatron-Core builds SequentialMLP when config.moe_grouped_gemm is false, its
// TransformerConfig default (core_v0.10.0 to core_r0.13.0 transformer_config.py). Where the runs
// left it so: dgxc-benchmarking's Grok-1 NeMo 1 yaml sets `moe_grouped_gemm: false`
// (grok1/grok1_314b.yaml, releases v24.11.1 35a9aec and v25.02 8f5cbb3, the table republished to
// v25.04.02); its NeMo 2 releases (v25.05 68eaf7e, v25.05.01 60d6fd3, v25.05.04 1f6d9f4) run
// NeMo's scripts/performance/llm/pretrain_grok1_314b.py on MixtralConfig8x7B (NeMo 7a8f1cc7 and
// 6f2c6fd), and NeMo's performance-summary Mixtral rows (25.02, 25.04) its pretrain_mixtral_*.py
// on the mixtral_8x7b / 8x22b recipes (NeMo v2.2.1 scripts/llm/performance, v2.3.0
// scripts/performance): MixtralConfig (nemo/collections/llm/gpt/model/mixtral.py) does not set
// the field, and neither do the scripts nor the recipes, where NeMo's DeepSeek and Llama 4
// configs set it True (deepseek.py, llama.py Llama4Config). Megatron-Bridge's MoE providers set it
// True (r0.3.0 src/megatron/bridge/models/*_provider.py).
bool moe_grouped_gemm_of(const ModernRow& r) {
  const bool grok_dgxc = has(r.model, "Grok-1") && modern_source_group(r) == "dgxc-benchmarking";
  const bool mixtral_nemo = has(r.model, "Mixtral") && modern_source_group(r) == "NeMo docs";
  return !(grok_dgxc || mixtral_nemo);
}

// dgxc-benchmarking v25.05 (68eaf7e) launches with NeMo's `--cuda_graphs`: grok1/launch.sh
// CUDA_GRAPH=${CUDA_GRAPH:-true} on gb200 and b200 (false on h100), nemotron/launch.sh
// `--cuda_graphs true` on gb200; NeMo 7a8f1cc7 scripts/performance/utils.py
// set_primary_perf_configs sets model.config.enable_cuda_graph, i.e. Megatron-Core's per-layer
// graphs (core_v0.12.0 transformer_layer.py CudaGraphManager: each TransformerLayer captured
// whole; Grok-1 with MegatronTokenDropCallback's pad-to-capacity dispatch, which has no host sync).
// The model has one graph mode, the full-iteration one: mapped onto it, the eager work outside the
// layers (embedding, loss, optimizer) and one graph launch per layer and pass go uncharged, small
// beside these layers' device time. llama4/launch.sh sets CUDA_GRAPH=${CUDA_GRAPH:-true} for h100
// at fp8 (false for h100 bf16 and for gb200): Llama 4 Maverick's MoE layers are captured too, as
// its recipe drops and pads (llama4_e128.py pretrain_performance_optimizations adds
// MegatronTokenDropCallback: capacity factor 1.0, pad to capacity), whose preprocess builds the
// per-expert token counts on the host from the capacity (core_r0.12.0 token_dispatcher.py
// MoEAlltoAllTokenDispatcher.preprocess, drop_and_pad: torch.full without a device), so no
// device-to-host sync breaks the capture.
bool dgxc_per_layer_graphs(const ModernRow& r) {
  if (modern_source_group(r) != "dgxc-benchmarking" || !has(r.source, "(release v25.05)")) return false;
  const bool blackwell = r.gpu.starts_with("GB200") || r.gpu == "B200";
  if (has(r.model, "Grok-1")) return blackwell;
  if (has(r.model, "Llama4-Maverick")) return r.gpu == "H100" && r.precision == "FP8";
  return has(r.model, "Nemotron-4") && r.gpu.starts_with("GB200");
}

bool cuda_graphs_of(const ModernRow& r) { return full_iteration_mxfp8_recipe(r) || dgxc_per_layer_graphs(r); }

namespace {
// One Megatron-Bridge preset family with per-layer graphs: rows of `model` on `gpu` at `precision`
// from release `first` to `last` (bridge_release) ran cuda_graph_impl "transformer_engine" with
// `scope`.
struct GraphScopeRecipe {
  std::string_view model, gpu, precision;
  int first, last;
  const char* scope;
};
constexpr const char* kAttnMoe = R"(["attn", "moe_router", "moe_preprocess"])";
constexpr const char* kMoeOnly = R"(["moe_router", "moe_preprocess"])";
constexpr const char* kHybridMoe = R"(["attn", "mamba", "moe_router", "moe_preprocess"])";
constexpr const char* kMlp = R"(["mlp"])";
// Read from each release tag's scripts/performance/configs/<family>/*_workload_base_configs.py
// (v0.3.0 = 26.02, v0.3.1 = 26.02.01, v0.4.0 = 26.04, v0.4.2 = 26.04.01, v0.5.0 = 26.06, v0.5.1 =
// 26.06.01), taking the preset the performance scripts pick (argument_parser.py --config_variant
// "v2", "v1" where no V2 exists) and following replace() to the cuda_graph_impl and
// cuda_graph_scope it ends with; on v0.6.0 (26.08) from src/megatron/bridge/perf_recipes/<family>/
// <gpu>/*.py. Presets that leave cuda_graph_impl unset run without graphs (the recipes set none).
constexpr GraphScopeRecipe kGraphScopeRecipes[] = {
    // DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2 = GB200_V2 <- GB200_V1 (cuda_graph_impl
    // "transformer_engine", scope attn / moe_router / moe_preprocess) up to v0.4.2; full iteration
    // from v0.5.0 (full_iteration_mxfp8_recipe). B300 / B200_FP8_MX_V2 (pp 8 presets of v0.4.2 and
    // v0.5.0) set the same scope; the v0.3.x / v0.4.0 pp 16 presets (B300_V1, B200_V1) and every
    // GB300 preset before the full-iteration one (GB300_V1: cuda_graph_scope [] without an impl) run
    // eagerly.
    {"DeepSeek-V3", "GB200", "MXFP8", 260200, 260401, kAttnMoe},
    {"DeepSeek-V3", "B300", "MXFP8", 260401, 260600, kAttnMoe},
    {"DeepSeek-V3", "B200", "MXFP8", 260401, 260600, kAttnMoe},
    // GPT_OSS_120B_PRETRAIN_CONFIG_{GB300,B300}_BF16_V1 (V2 inherits): attn / moe_router /
    // moe_preprocess on every tag; B300_FP8_MX_V2 from v0.4.0 (the 26.06 row); GB200, B200 and H100
    // presets set no graph.
    {"GPT-OSS-120B", "GB300", "BF16", 260200, 260600, kAttnMoe},
    {"GPT-OSS-120B", "B300", "BF16", 260200, 260600, kAttnMoe},
    {"GPT-OSS-120B", "B300", "MXFP8", 260400, 260601, kAttnMoe},
    // QWEN3_30B_A3B_PRETRAIN_CONFIG_{GB300,GB200,B300}_FP8_MX_V1: moe_router / moe_preprocess up to
    // v0.4.2 (full iteration after); B200_FP8_MX_V1: the same on v0.3.0, with attn from v0.3.1; the
    // H100 FP8 presets set none (only H100_BF16 has a graph).
    {"Qwen3-30B-A3B", "GB300", "MXFP8", 260200, 260401, kMoeOnly},
    {"Qwen3-30B-A3B", "GB200", "MXFP8", 260200, 260401, kMoeOnly},
    {"Qwen3-30B-A3B", "B300", "MXFP8", 260200, 260401, kMoeOnly},
    {"Qwen3-30B-A3B", "B200", "MXFP8", 260200, 260200, kMoeOnly},
    {"Qwen3-30B-A3B", "B200", "MXFP8", 260201, 260600, kAttnMoe},
    // QWEN3_235B_A22B_PRETRAIN_CONFIG_{GB300,GB200}_FP8_MX_V2: attn / moe_router / moe_preprocess
    // up to v0.4.2 (full iteration after); B300, B200 and H100 presets set none before v0.5.1.
    {"Qwen3-235B-A22B", "GB300", "MXFP8", 260200, 260401, kAttnMoe},
    {"Qwen3-235B-A22B", "GB200", "MXFP8", 260200, 260401, kAttnMoe},
    // BASE_NEMOTRON_3_NANO_CONFIG (nemotron_3_nano_workload_base_configs.py, v0.3.1 - v0.5.1):
    // attn / mamba / moe_router / moe_preprocess on the Blackwell presets, _NEMOTRON_3_NANO_
    // PRETRAIN_CONFIG_H100 FP8_CS_V1 mamba alone; v0.6.0 perf_recipes/nemotronh/gb300/nemotronh.py
    // nemotron_3_nano_pretrain_8gpu_gb300_fp8mx_config keeps the four.
    {"Nemotron_3_Nano", "GB300", "MXFP8", 260201, 260800, kHybridMoe},
    {"Nemotron_3_Nano", "GB200", "MXFP8", 260201, 260601, kHybridMoe},
    {"Nemotron_3_Nano", "B300", "MXFP8", 260201, 260601, kHybridMoe},
    {"Nemotron_3_Nano", "B200", "MXFP8", 260201, 260601, kHybridMoe},
    {"Nemotron_3_Nano", "H100", "FP8", 260201, 260601, R"(["mamba"])"},
    // nemotron_3_workload_base_configs.py (v0.4.0 - v0.5.1) NEMOTRON_3_SUPER_PRETRAIN_CONFIG_
    // {GB300,GB200,B300}_{FP8_MX,NVFP4}_V1 and B200_NVFP4_V1: attn / mamba / moe_router /
    // moe_preprocess (B200_FP8_MX_V1 none); v0.6.0 perf_recipes/nemotronh/{gb300,gb200}/
    // nemotronh.py nemotron_3_super_pretrain_64gpu_*_{fp8mx,nvfp4}_config keep them.
    {"Nemotron_3_Super", "GB300", "", 260400, 260800, kHybridMoe},
    {"Nemotron_3_Super", "GB200", "", 260400, 260800, kHybridMoe},
    {"Nemotron_3_Super", "B300", "", 260400, 260601, kHybridMoe},
    {"Nemotron_3_Super", "B200", "NVFP4", 260400, 260601, kHybridMoe},
    // llama3_workload_base_configs.py (v0.5.0, the 26.06 fine-tuning rows): _LLAMA3_70B_SFT_CONFIG_
    // {GB300,GB200} and LLAMA3_70B_SFT_CONFIG_H100_FP8_CS_V1, _LLAMA3_70B_LORA_CONFIG_{GB300,GB200}:
    // cuda_graph_impl "transformer_engine", cuda_graph_scope "mlp"; the LoRA H100 presets set none.
    {"Llama3-70B [SFT]", "", "", 260600, 260600, kMlp},
    {"Llama3-70B [LoRA]", "GB300", "", 260600, 260600, kMlp},
    {"Llama3-70B [LoRA]", "GB200", "", 260600, 260600, kMlp},
    // Nemotron 3.5 Lightning's one row (26.08 = v0.6.0, GB200 MXFP8): perf_recipes/nemotronh/gb200/
    // nemotronh.py nemotron_3_5_lightning_pretrain_8gpu_gb200_fp8mx_config builds on
    // _build_nemotron_3_nano_gb200_mxfp8, which sets cuda_graph_impl "transformer_engine" and
    // set_cuda_graph_modules(attn, mamba, moe_router, moe_preprocess).
    {"Nemotron_3_5_Lightning", "GB200", "MXFP8", 260800, 260800, kHybridMoe},
};
}  // namespace

const char* cuda_graph_scope_of(const ModernRow& r) {
  const int release = bridge_release(r);
  if (release == 0 || cuda_graphs_of(r)) return nullptr;
  for (const GraphScopeRecipe& g : kGraphScopeRecipes)
    if (has(r.model, g.model) && (g.gpu.empty() || r.gpu == g.gpu) && (g.precision.empty() || r.precision == g.precision) &&
        release >= g.first && release <= g.last)
      return g.scope;
  return nullptr;
}

// Megatron-Bridge's DeepSeek-V3 performance configs run Megatron-Core's flex token dispatcher on
// every GPU (mirror lkk12014402/Megatron-Bridge at 793bb600, scripts/performance/configs/deepseek/
// deepseek_workload_base_configs.py, and every release branch v0.3.0 - v0.6.0):
// DEEPSEEK_V3_PRETRAIN_CONFIG_{GB300,GB200,VR200,B300,B200,H100}_V1 set
// moe_flex_dispatcher_backend = "hybridep" and the V2 configs inherit it, except B200_FP8_MX_V2
// and B200_NVFP4_V2 (pp 8, vp 2, EP 32), which set "deepep"; the notes on docs/validation.md's
// rows 182 / 580 cite earlier B200_V2 / H100_V2 with "deepep". Both backends are modelled alike
// (workloads::MoeDispatcher); only expert groups that leave a node see a difference. The other
// MoE recipes, by release, where their expert groups leave the node:
//   * Qwen3-235B-A22B on H100 (tp 2, EP 32): QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V2 sets
//     "deepep" on v0.3.1 (26.02.01) only; v0.3.0, v0.4.0 and v0.4.2 leave it unset (alltoall);
//   * Qwen3-30B-A3B on H100 with pp 1, EP 16 (two nodes): QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1
//     sets "hybridep" from v0.3.1 on (v0.3.0's pp 2 vp 12 EP 8 preset, "deepep", stays in a node);
//   * the full-iteration MXFP8 recipes above, "hybridep" (inside the NVLink domain: no difference).
// Kimi-K2's GB300 rows (26.02.01 - 26.06) run "hybridep" too: KIMI_K2_PRETRAIN_CONFIG_GB300 sets
// moe_flex_dispatcher_backend = "hybridep" (scripts/performance/configs/kimi/kimi_workload_base_
// configs.py, r0.3.0 - r0.5.0) and kimi_llm_pretrain.py applies it with
// apply_flex_dispatcher_backend, which sets moe_token_dispatcher_type = "flex" (EP 64 inside the
// rack). GPT-OSS (H100 / B200 / B300 with EP 8 inside a node) and the remaining in-node presets are
// left on the alltoall dispatcher;
// Nemotron 3 Super's configs all set "hybridep" (BASE_NEMOTRON_3_SUPER_CONFIG, nemotron_3_workload_
// base_configs.py, v0.4.0 - v0.5.0), which leaves the node only on B200 (EP 64 over eight nodes).
// Nemotron 3 Nano runs the flex dispatcher with "hybridep" on every GPU and release: its recipe sets
// moe_token_dispatcher_type = "flex" (src/megatron/bridge/recipes/nemotronh/nemotron_3_nano.py,
// v0.3.0 - v0.5.0) and BASE_NEMOTRON_3_NANO_CONFIG sets moe_flex_dispatcher_backend = "hybridep",
// which every GPU's V1 preset inherits, H100 included (v0.3.0 nemotron_3_nano_workload_base_configs.py,
// v0.4.0 / v0.5.0 nemotron_3_workload_base_configs.py; v0.6.0 perf_recipes/nemotronh/common.py
// _apply_nemotron_3_nano_perf_defaults). EP 8 stays inside the node, so the all-to-all is the same;
// what changes is what the GPU copies around it (no chunk sort, no fp8 row padding: layer_ops).
// Nemotron 3 Ultra runs "hybridep" too (r0.6.0 perf_recipes/nemotronh/common.py _apply_nemotron_3_ultra_perf_
// defaults: moe_token_dispatcher_type "flex", moe_flex_dispatcher_backend "hybridep"; EP 64 inside
// a GB300 / GB200 NVL72 rack). Nemotron 3.5 Lightning's 26.08 GB200 recipe is built on Nano's
// (perf_recipes/nemotronh/gb200/nemotronh.py _build_nemotron_3_nano_gb200_mxfp8 sets "hybridep").
// Megatron-Bridge 25.09 (v0.1.0rc4, scripts/performance/run_script.py at cac49dcd l. 55-61) ran
// DeepSeek-V3 on H100 with DeepEP (enable_deepep for "h100", token drop only on B200 / GB200).
const char* moe_dispatcher_of(const ModernRow& r) {
  if (modern_source_group(r) != "Megatron-Bridge") return nullptr;
  if (has(r.model, "DeepSeek-V3") && has(r.gpu, "H100") && bridge_release(r) <= 250900) return "deepep";
  if (has(r.model, "DeepSeek-V3"))
    return has(r.gpu, "B200") && !r.gpu.starts_with("GB") && notes_int(r, "EP") == 32 ? "deepep" : "hybridep";
  if (full_iteration_mxfp8_recipe(r) || has(r.model, "Nemotron_3_Super") || has(r.model, "Nemotron_3_Nano") ||
      has(r.model, "Nemotron_3_Ultra") || has(r.model, "Nemotron_3_5_Lightning") || has(r.model, "Kimi-K2"))
    return "hybridep";
  const int release = bridge_release(r);
  if (has(r.model, "Qwen3-235B-A22B") && has(r.gpu, "H100") && release == 260201) return "deepep";
  if (has(r.model, "Qwen3-30B-A3B") && has(r.gpu, "H100") && r.pp <= 1 && notes_int(r, "EP") == 16 && release >= 260201)
    return "hybridep";
  return nullptr;
}

// Megatron-Bridge's performance scripts give every HybridEP run 32 SMs for its dispatch and
// combine kernels: v0.2.0 scripts/performance/utils/helpers.py l. 112-113, r0.3.0 / r0.4.0 /
// r0.5.0 utils/overrides.py l. 69-70 / 73 / 75 (_set_common_perf_overrides: "TODO: This needs to
// be adjusted when overlapping HybridEP with computation"), r0.6.0 perf_recipes/_common.py l. 87.
// (r0.6.0's DeepSeek-V3 B200 presets set 16, perf_recipes/deepseek/b200/deepseek_v3.py l. 142-188;
// they run without moe_a2a_overlap, the only reader of the key, so 32 stands for them too.)
// DeepEP keeps Megatron-Core's default (20): 0.
int moe_dispatcher_sms_of(const ModernRow& r) {
  const char* dispatcher = moe_dispatcher_of(r);
  return dispatcher != nullptr && std::string_view(dispatcher) == "hybridep" ? 32 : 0;
}

// Megatron-Bridge recipes that set moe_a2a_overlap (scripts/performance/utils/overrides.py
// _set_moe_a2a_overlap_overrides: overlap_moe_expert_parallel_comm, delay_wgrad_compute, and
// moe_shared_expert_overlap off), mirror lkk12014402/Megatron-Bridge and the release tags
// (bridge_release):
//   * DeepSeek-V3 on H100 (pp 8 x vp 4, EP 64): 25.09's scripts/performance/run_script.py
//     (cac49dcd) sets overlap_moe_expert_parallel_comm = True for h100 ("A2A_1F1B"), and
//     DEEPSEEK_V3_PRETRAIN_CONFIG_H100_V1 keeps moe_a2a_overlap=True until f36e5de7 (2026-02-10),
//     False after; the table's DeepSeek-V3 H100 rows are all 25.09.
//   * DeepSeek-V3 on B200 with pp 8 x vp 2, EP 32: DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2
//     (deepseek_workload_base_configs.py, v0.4.2 = 26.04.01 and v0.5.0; 5acef930 2026-04-18 on the
//     mirror) sets moe_a2a_overlap=True; v0.3.x / v0.4.0's B200 preset is pp 16 EP 8 without it.
//   * Qwen3-235B-A22B on H100 (tp 2, pp 8 x vp 4, EP 32): QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_*
//     (qwen3_workload_base_configs.py) set moe_a2a_overlap=True from c3e43e6a (2025-12-03) and on
//     every tag v0.3.0 - v0.4.2, V2 inheriting it; 25.09's run_script.py sets it for DeepSeek-V3
//     only. Its 25.11 row is UNSURE (the container's cut against 2025-12-03 is not at hand).
//   * Qwen3-235B-A22B on B300 with pp 8 x vp 4, EP 8: v0.3.0 (26.02)
//     QWEN3_235B_A22B_PRETRAIN_CONFIG_B300_FP8_MX_V2 sets moe_a2a_overlap=True. v0.3.1 changed the
//     preset to pp 8 without vp and the flag off; the 26.02.01 row still prints vp 4 (its throughput,
//     2644, is 26.02's 2691, not the pp 8 rows' of 26.04) and takes it. The 26.04 rows print no vp
//     (fill_unstated_virtual_stages lends them 26.02's 4) and ran v0.4.x's preset without it.
//   * Qwen3-30B-A3B on H100 with pp 2 x vp 12, EP 8: v0.3.0 (26.02)
//     QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1 sets moe_a2a_overlap=True (and "deepep"); from
//     v0.3.1 the preset is pp 1, EP 16 without it. The 26.02.01 row prints the v0.3.0 layout with
//     a throughput (9058) of the later pp 1 EP 16 rows (8901-8960), UNSURE which it ran.
//   * GPT-OSS-120B on GB200 (pp 1, EP 64) from 26.04: GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V2
//     sets moe_a2a_overlap=True on v0.4.0 (with "hybridep") and v0.4.2 (alltoall), from 7260d621
//     (2026-03-23, "perf optimizations- GPT-OSS 120B"); v0.3.x's V2 has neither.
//   * the full-iteration MXFP8 recipes of 26.06 and later (full_iteration_mxfp8_recipe): DeepSeek-V3,
//     GPT-OSS-120B and Qwen3-235B-A22B on GB300 / GB200, Qwen3-30B-A3B on GB300 / GB200 / B300.
// Not set: DeepSeek-V3 on GB300 / GB200 before 26.06 and on B300 (moe_a2a_overlap=False), Kimi-K2
// (KIMI_K2_PRETRAIN_CONFIG_GB300_FP8_MX, v0.3.1 - v0.5.0), GPT-OSS on GB300 before 26.06, B300,
// B200 and H100, the other Qwen3 presets.
bool moe_a2a_overlap_of(const ModernRow& r) {
  if (modern_source_group(r) != "Megatron-Bridge" || notes_int(r, "EP") <= 1) return false;
  if (full_iteration_mxfp8_recipe(r)) return true;
  const int release = bridge_release(r);
  const int vp = r.pp > 1 ? r.virtual_stages : 0;
  if (has(r.model, "DeepSeek-V3")) {
    if (has(r.gpu, "H100")) return true;
    return r.gpu == "B200" && r.pp == 8 && vp == 2 && notes_int(r, "EP") == 32;
  }
  if (has(r.model, "Qwen3-235B-A22B")) {
    if (has(r.gpu, "H100")) return release > 250900 && r.tp == 2 && r.pp == 8;
    return r.gpu == "B300" && release < 260400 && r.pp == 8 && vp == 4 && notes_int(r, "EP") == 8;
  }
  if (has(r.model, "Qwen3-30B-A3B")) return has(r.gpu, "H100") && r.pp == 2 && vp == 12 && notes_int(r, "EP") == 8;
  if (has(r.model, "GPT-OSS-120B")) return r.gpu.starts_with("GB200") && r.pp == 1 && release >= 260400;
  return false;
}

// NeMo's Llama4Config (nemo/collections/llm/gpt/model/llama.py, 7a8f1cc7 = dgxc-benchmarking
// v25.05's NeMo, and v2.3.0 / v2.4.0, the 25.04 / 25.07 containers) sets
// moe_shared_expert_overlap = True (with moe_apply_probs_on_input = True, a model fact:
// modern_row_archs.cpp); Llama4Experts16Config (Scout) and Llama4Experts128Config (Maverick)
// inherit it, and neither their recipes (recipes/llama4_e16.py, llama4_e128.py) nor the performance
// scripts (scripts/performance/llm/pretrain_llama4_e16.py, pretrain_llama4_e128.py) override it.
// Megatron-Core core_r0.12.0 accepts it with the alltoall dispatcher. Every Llama 4 row of the
// tables ran that NeMo (dgxc v25.05 Maverick, the NeMo 25.07 docs' Scout).
// NeMo's DeepSeekConfig (gpt/model/deepseek.py at 7a8f1cc7, line 88) sets it too, with
// moe_token_dispatcher_type "alltoall" (line 86); DeepSeekV3Config inherits both, and neither
// recipes/deepseek_v3.py nor scripts/performance/llm/pretrain_deepseek_v3.py (which adds
// MegatronTokenDropCallback and MegatronCommOverlapCallback(tp_comm_overlap=False)) overrides
// them. dgxc-benchmarking's deepseek_v3/pretraining/setup.sh pins that NeMo (NEMO_COMMIT 7a8f1cc7,
// MEGATRON_COMMIT 7094270c = core_r0.12.0) in v25.05 (68eaf7e) and v25.05.04 (1f6d9f40): every
// dgxc DeepSeek-V3 row ran it.
// Megatron-Bridge rows never run it (r0.3.0 - r0.6.0): the DeepSeek-V3, Kimi-K2 and Nemotron 3
// recipes either end in apply_flex_dispatcher_backend (training/flex_dispatcher_backend.py sets
// moe_shared_expert_overlap = False with the flex dispatcher: DeepSeek-V3's recipe with "hybridep",
// Kimi-K2's performance configs with their presets' "hybridep"), set it False themselves
// (recipes/nemotronh/nemotron_3_nano.py, nemotron_3_super.py, nemotron_3_ultra.py; r0.6.0
// perf_recipes/nemotronh/common.py: "unsupported by MCore during training"), or run
// moe_a2a_overlap, whose override turns it off (scripts/performance/utils/overrides.py
// _set_moe_a2a_overlap_overrides; DeepSeek-V3 on H100); r0.6.0's perf_recipes set it False in
// every MoE family's recipe (deepseek/common.py, kimi/*/kimi_k2.py, nemotronh/*, gpt_oss, qwen),
// and set it True nowhere. GPT-OSS, Qwen3, Mixtral and Grok-1 have no shared expert.
bool moe_shared_expert_overlap_of(const ModernRow& r) {
  const std::string g = modern_source_group(r);
  if (g == "dgxc-benchmarking" && has(r.model, "DeepSeek-V3")) return true;
  return (g == "dgxc-benchmarking" || g == "NeMo docs") && (has(r.model, "Llama4-Maverick") || has(r.model, "Llama4-Scout"));
}

// The moe_a2a_overlap rows on Hopper run without tensor-parallel communication overlap, for two
// reasons in the mirror (lkk12014402/Megatron-Bridge): their recipes turn it off
// (src/megatron/bridge/recipes/deepseek/deepseek_v3.py: CommOverlapConfig(tp_comm_overlap=False)
// when none is given, and 25.09's run_script.py gives none for DeepSeek-V3;
// scripts/performance/configs/qwen/qwen3_llm_pretrain.py qwen3_235b_a22b_pretrain_config_h100:
// tp_comm_overlap=False from c3e43e6a, 2025-12-03, the commit that sets its moe_a2a_overlap), and
// scripts/performance/perf_plugins.py _set_num_cuda_device_max_connections keeps
// CUDA_DEVICE_MAX_CONNECTIONS at 8 on Hopper when moe_a2a_overlap is on (1 otherwise with tp or
// cp > 1, "to schedule a communication kernel before the overlapping persistent GEMM kernel.
// Otherwise, communication kernel will be pushed to the end of the GEMM kernel, failing to overlap
// the kernels"; 55f88437 and before). Megatron-Core's arguments.py (core_v0.15.0) warns the same:
// on Hopper, tp / cp with overlap_moe_expert_parallel_comm must choose one of the two.
bool hopper_a2a_overlap(const ModernRow& r) {
  return moe_a2a_overlap_of(r) && generation_of(r.gpu) == Generation::Hopper;
}

// dgxc-benchmarking's DeepSeek-V3 GB200 rows (release v25.05, 68eaf7e; deepseek_v3/pretraining/
// launch.sh, container nvidia/nemo:25.04.01, NeMo 7a8f1cc) ran their attention unfused. DeepSeek-V3's
// multi-head latent attention has Q/K heads of 192 (128 + 64 rotary) and V heads of 128. In
// Transformer Engine before v2.5, DotProductAttention's backend filter disables FlashAttention 2
// and 3 whenever head_dim_qk != head_dim_v ("Disabling FlashAttention as it does not support MLA",
// transformer_engine/pytorch/dot_product_attention/utils.py), and the cuDNN fused backend
// (common/fused_attn/fused_attn.cpp nvte_get_fused_attn_backend, "special conditions for
// blackwell") is excluded on sm100 when head_dim_qk or head_dim_v > 128. That leaves
// UnfusedDotProductAttention (batched GEMM for the scores, softmax, batched GEMM with V). The NeMo
// checkout pins TE bee4649c (requirements/manifest.json, 2025-03-18, v2.2~25), and v2.2, v2.3
// and v2.4 keep both filters. TE v2.5 (2025-06-29, PR #1797, 71c76b6b) first admits d_qk 192 /
// d_v 128 training on Blackwell, and only from cuDNN 9.11. H100 (sm90) runs the fused kernel up
// to 256. The launcher also sets --recompute_modules core_attn on GB200 (mla_up_proj on H100), the
// recompute that only pays with the scores in memory. pretrain_deepseek_v3.py keeps
// recompute_granularity "selective". Later GB200 DeepSeek-V3 recipes (Megatron-Bridge 25.11 and on,
// TE >= 2.5) run the fused kernel and drop core_attn.
bool unfused_mla_attention_of(const ModernRow& r) {
  return modern_source_group(r) == "dgxc-benchmarking" && has(r.model, "DeepSeek-V3") &&
         generation_of(r.gpu) == Generation::Blackwell;
}

// dgxc-benchmarking's DeepSeek-V3 and Llama 4 Maverick rows (releases v25.05 and v25.05.04,
// container nvidia/nemo:25.04.01, NeMo 7a8f1cc) drop and pad their MoE tokens: NeMo's
// scripts/performance/llm/pretrain_deepseek_v3.py (USE_TOKEN_DROP = True) and recipes/llama4_e128.py
// (pretrain_performance_optimizations, which pretrain_llama4_e128.py calls) add
// MegatronTokenDropCallback, whose defaults are moe_expert_capacity_factor 1.0 and
// moe_pad_expert_input_to_capacity True (nemo/lightning/pytorch/callbacks/moe_token_drop.py).
// Megatron-Core core_r0.12.0's MoEAlltoAllTokenDispatcher.preprocess (token_dispatcher.py) then
// returns the per-expert counts as a host tensor built from the capacity before it sets any
// cuda_sync_point, so the sync point stays "no_sync" and _maybe_dtoh_and_synchronize copies nothing
// (it returns at once when drop_and_pad). Other MoE rows keep the model's dropless default here:
// dgxc's Grok-1 pads too, but its GB200 rows replay CUDA graphs (no host sync either way) and its
// H100 rows ran older NeMo 1 containers whose dispatcher was not read.
double drop_and_pad_capacity_of(const ModernRow& r) {
  if (modern_source_group(r) != "dgxc-benchmarking" || !has(r.source, "(release v25.05")) return 0.0;
  return has(r.model, "DeepSeek-V3") || has(r.model, "Llama4-Maverick") ? 1.0 : 0.0;
}

// dgxc-benchmarking's Llama 4 Maverick README (llama4/README.md) lists "Layers 32" for every
// configuration in release v25.05 (68eaf7e) and "Layers 48" in v25.05.04 (1f6d9f4), with the same
// step times, throughputs and MFUs; its own MFU note counts 48 layers (8.92e14 FLOPs per sequence),
// and the launch script passes no layer override to NeMo's pretrain_llama4_e128 (Llama 4 Maverick,
// 48 layers: meta-llama/Llama-4-Maverick-17B-128E config.json num_hidden_layers 48). The runs had
// 48 layers; 32 was a typo (the rows' notes leave it open). With 48 the GB200 layout, pp 2 x vp 12,
// holds 2 layers a chunk (one dense, one MoE).
//
// NeMo 24.07's performance summary names "Nemotron-8B" and "Nemotron-22B" and leaves their shape
// empty. They are NeMo's Nemotron-3 models, whose published configs are NeMo-Framework-Launcher
// launcher_scripts/conf/training/nemotron/nemotron_8b.yaml and nemotron_22b.yaml (and NeMo 2's
// Nemotron3Config8B, nemo/collections/llm/gpt/model/nemotron.py): 32 layers, hidden 4096, ffn 16384,
// 32 heads / 40 layers, hidden 6144, ffn 24576, 48 heads; multi-head attention (num_query_groups
// null), squared-ReLU, LayerNorm (layernorm1p), untied embeddings, sequence 4096. The 22B yaml's
// layout, tp 2, pp 4, vp 10, is the row's. The vocabulary is Nemotron's 256,000-token SentencePiece
// (as Nemotron-4's rows): with it the counts are 8.5 B and 21.3 B parameters, the names' 8B and 22B
// (a 32k vocabulary would give 6.7 B and 18.5 B).
//
// Hybrid sharding (parallelism.shard_group), as each launcher laid its mesh out; in each the groups
// are consecutive ranks (nodes), the scenario's layout (ParallelLayout::shard_groups):
//   * PaxML GPT-3 175B (dgxc-benchmarking v24.11.1 = 35a9aec, paxml/configure.sh l.57-58 FSDP=16,
//     l.69 DP = nodes / FSDP, l.114 --fdl.DCN_MESH_SHAPE=[DP, FSDP, 1]; google/paxml 4a6bf20
//     paxml/contrib/gpu/scripts_gpu/configs.py l.271 GPT175BBase ICI_MESH_SHAPE [1, 8, 1]): the
//     mesh axes are (replica, data, mdl) and the weights shard over "data", 8 GPUs x 16 nodes = 128
//     GPUs; the nodes / 16 replicas each hold a copy (rows 305-314; row 302 is one group);
//   * MaxText Llama 2 / Llama 3 70B (dgxc-benchmarking v24.11.1 and v25.02 = 8f5cbb3,
//     maxtext/configure.sh l.35-39 ici_fsdp = GPUs a node, dcn_fsdp = nodes, dcn_data = 1; l.48-50
//     from 64 nodes dcn_fsdp = 16, dcn_data = nodes / 16): FSDP over 128 GPUs from 512 GPUs on, the
//     rows' own "FSDP=128 (+DP for remaining GPUs)";
//   * NeMo 25.07's Llama 3.1 405B on GB200 (NVIDIA/NeMo v2.4.0, scripts/performance/llm/
//     pretrain_llama31_405b.py l.130-131: with use_mcore_fsdp on gb200, num_distributed_optimizer_
//     instances = nodes x 4 / 64, 2 on the 32 trays of the FP8 row; the custom FSDP of that
//     period's Megatron-Core reduce-scatters within the instance and all-reduces the shard across
//     instances, core_v0.13.0 distributed/custom_fsdp/param_and_grad_buffer.py l.2072, 2091-2108):
//     dp / 2.
//   * Nemotron 3 Ultra (26.08; r0.6.0 perf_recipes/nemotronh/common.py l.149-175
//     _apply_nemotron_3_ultra_fsdp_hsdp: num_distributed_optimizer_instances = GPUs / 64, one group
//     per 64-GPU NVLink domain, outer_dp_sharding_strategy "optim"): dp / 4, with the optimizer
//     states over every rank (outer_dp_sharding_of).
// Not hybrid: Megatron-Bridge 25.09's Llama 3.1 405B GB200 FSDP cell (r0.1.0's
// scripts/performance/configs/llama31/llama31_405b_llm_pretrain.yaml and run_script.py set no
// instances); the 405B presets that set num_distributed_optimizer_instances = 2 (v0.2.0 - v0.5.1
// llama31_llm_pretrain.py, GB200 / GB300 / VR200 with use_megatron_fsdp) are the 128-GPU V1
// presets, and every published 405B cell from 25.11 on ran a V2 preset without Megatron-FSDP (256
// GPUs, pp 8 / 16); the Megatron-FSDP Llama 3 70B / 8B cells shard over their whole dp ("sharding
// group size" = dp); DeepSeek-V3's 128-GPU GB300 HSDP recipe (r0.6.0 perf_recipes/deepseek/gb300/
// deepseek_v3.py l.310-321) has no published cell.
const char* outer_dp_sharding_of(const ModernRow& r) {
  return modern_source_group(r) == "Megatron-Bridge" && has(r.model, "Nemotron_3_Ultra") ? "optim" : nullptr;
}

int shard_group_of(const ModernRow& r) {
  if (!has(r.zero_or_fsdp, "FSDP")) return 0;
  const int dp = dp_of(r);
  int group = 0;
  if (has(r.model, "GPT-3 175B (PaxML)")) {
    group = 16 * 8;
  } else if (has(r.model, "(MaxText)")) {
    const int nodes = r.num_gpus / 8;
    group = nodes >= 64 ? 16 * 8 : r.num_gpus;
  } else if (outer_dp_sharding_of(r) != nullptr ||
             (modern_source_group(r) == "NeMo docs" && has(r.model, "Llama3.1-405B") && r.gpu.starts_with("GB200") &&
              has(r.source, "container 25.07"))) {
    group = dp / std::max(1, r.num_gpus / 64);  // one instance per 64 GPUs (Ultra; NeMo's nodes x 4 / 64)
  }
  return group > 0 && group < dp && dp % group == 0 ? group : 0;
}

// Megatron-Bridge 26.08's Nemotron 3 Ultra cells leave the sharding column empty; both recipes
// (r0.6.0 src/megatron/bridge/perf_recipes/nemotronh/common.py _apply_nemotron_3_ultra_fsdp_hsdp,
// called by the GB300 and GB200 fp8mx configs) run Megatron-FSDP with data_parallel_sharding_
// strategy "optim_grads_params" (parameters, gradients and optimizer states sharded: zero 3),
// bf16 gradient communication and main gradients, fp32 main parameters. The sharding group is one
// 64-GPU NVLink domain (HSDP: num_distributed_optimizer_instances = 256 / 64 = 4, outer strategy
// "optim": optimizer states sharded over every rank): shard_group_of and outer_dp_sharding_of above.
ModernRow as_run(const ModernRow& r) {
  ModernRow ran = r;
  if (modern_source_group(r) == "Megatron-Bridge" && has(r.model, "Nemotron_3_Ultra") && r.zero_or_fsdp.empty())
    ran.zero_or_fsdp = "Megatron-FSDP optim_grads_params (HSDP, 64-GPU sharding group; recipe)";
  if (modern_source_group(r) == "dgxc-benchmarking" && has(r.model, "Llama4-Maverick") && r.layers == 32)
    ran.layers = 48;
  struct Shape { const char* model; int layers, hidden, heads, ffn; };
  constexpr Shape kNemotron3[] = {{"Nemotron-8B (NeMo label)", 32, 4096, 32, 16384},
                                  {"Nemotron-22B (NeMo label)", 40, 6144, 48, 24576}};
  for (const Shape& s : kNemotron3) {
    if (r.model != s.model || r.layers > 0 || modern_source_group(r) != "NeMo docs") continue;
    ran.layers = s.layers, ran.hidden = s.hidden, ran.heads = s.heads, ran.kv_heads = s.heads, ran.ffn_hidden = s.ffn;
    ran.vocab = 256000;
  }
  return ran;
}

// Megatron-Bridge cells whose printed MBS x GA x dp falls short of the printed global batch, and the
// micro-batch of the recipe they ran (gradient accumulation = global batch / (micro-batch x dp)):
//   * 25.11, GPT-OSS-120B on 64 H100 (GBS 512, tp 1, pp 4, EP 8; printed MBS 4, GA 2 as the B200
//     row above it, where pp 1): GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16 (scripts/performance/
//     configs/gpt_oss/gpt_oss_workload_base_configs.py, 34a815a1) sets pp 4 and keeps the base
//     config's micro_batch_size = 1, so GA = 512 / (1 x 16) = 32; the same recipe's cells in
//     26.02-26.04.01 print MBS 1, and MBS 4 on pp 4 needs 93 GiB of 80 as modelled;
//   * 25.11, Qwen3-235B-A22B on 256 GB300 (GBS 8192, MBS 2, pp 4, vp 12, EP 16, dp 64; printed
//     GA 32): QWEN3_235B_A22B_PRETRAIN_CONFIG_GB300_BF16_V1 (qwen3_workload_base_configs.py,
//     c66005d4) is exactly that layout with V2's micro_batch_size = 2, so GA = 8192 / (2 x 64) = 64
//     and the printed GA is the misprint.
int recipe_micro_batch(const ModernRow& r) {
  if (modern_source_group(r) != "Megatron-Bridge") return 0;
  if (has(r.model, "GPT-OSS-120B") && has(r.gpu, "H100") && r.num_gpus == 64 && r.global_batch == 512 && r.pp == 4)
    return 1;
  if (has(r.model, "Qwen3-235B-A22B") && r.gpu.starts_with("GB300") && r.num_gpus == 256 && r.global_batch == 8192 &&
      r.pp == 4 && r.micro_batch == 2)
    return 2;
  return 0;
}

}  // namespace clustersim::analysis::modern_detail
