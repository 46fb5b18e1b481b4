// Checks of Megatron-Core's expert-parallel communication overlap keys ([parallelism]
// moe_a2a_overlap, moe_shared_expert_overlap) against the layout, the schedule and the training
// setup: the combinations Megatron-Core refuses (megatron/core/transformer/transformer_config.py,
// __post_init__, NVIDIA/Megatron-LM at d98e8a64: "overlap_moe_expert_parallel_comm is only
// supported with expert model parallelism", "virtual_pipeline_model_parallel_size must be
// specified when pipeline_model_parallel_size > 1", "disable full recomputation ...", "only
// supported with bf16 or fp16 model", "disable moe_shared_expert_overlap ...", "MTP supports at
// most one layer ..."). Run after check_experts, so the expert keys are known to be sound.
#include <string>

#include "scenarios/scenario_loader.h"

namespace clustersim::scenarios {

void Loader::check_moe_overlap() {
  const auto& m = spec_.model;
  const auto& p = spec_.parallel;
  const auto& tr = spec_.training;
  if (p.moe_shared_expert_overlap && m.shared_experts == 0)
    error_at_key("parallelism.moe_shared_expert_overlap",
                 "moe_shared_expert_overlap = true runs the shared experts beside the token dispatch, but the model has no "
                 "shared experts",
                 "remove moe_shared_expert_overlap, or set shared_experts in [model]");
  if (p.delay_wgrad_compute && !p.moe_a2a_overlap)
    error_at_key("parallelism.delay_wgrad_compute",
                 "delay_wgrad_compute = true defers the weight gradients inside the combined 1F1B schedule, but "
                 "moe_a2a_overlap is off",
                 "Megatron-Core asserts 'overlap_moe_expert_parallel_comm must be enabled when enabling "
                 "delay_wgrad_compute' (core_v0.15.0 transformer_config.py l. 1483-1486); set moe_a2a_overlap = true, "
                 "or remove delay_wgrad_compute");
  if (!p.moe_a2a_overlap) return;
  const std::string key = "parallelism.moe_a2a_overlap";
  if (!m.is_moe() || p.ep <= 1) {
    error_at_key(key, "moe_a2a_overlap = true overlaps the expert-parallel all-to-alls, but ep = " + std::to_string(p.ep) +
                          (m.is_moe() ? "" : " and the model has no experts"),
                 "Megatron-Core asserts expert_model_parallel_size > 1 (transformer_config.py); set ep > 1, or remove "
                 "moe_a2a_overlap");
    return;
  }
  if (p.moe_shared_expert_overlap)
    error_at_key(key, "moe_a2a_overlap = true and moe_shared_expert_overlap = true cannot both be on",
                 "Megatron-Core asserts 'disable moe_shared_expert_overlap when enabling overlap_moe_expert_parallel_comm' "
                 "(Megatron-Bridge's moe_a2a_overlap turns it off); remove moe_shared_expert_overlap");
  if (p.pp > 1 && p.virtual_stages <= 1)
    error_at_key(key, "moe_a2a_overlap = true with pp = " + std::to_string(p.pp) + " needs virtual pipeline stages",
                 "Megatron-Core runs the combined 1F1B schedule only in the interleaved pipeline (it asserts "
                 "virtual_pipeline_model_parallel_size is set when pp > 1); set virtual_stages >= 2, or pp = 1");
  else if (p.schedule == workloads::Schedule::GPipe)
    error_at_key(key, "moe_a2a_overlap = true needs a 1F1B schedule, but schedule = \"gpipe\"",
                 "the combined 1F1B schedule pairs one micro-batch's forward with another's backward; use schedule = "
                 "\"1f1b\" (pp = 1) or \"interleaved\"");
  if (tr.recompute == workloads::Recompute::Full)
    error_at_key("training.recompute", "recompute = \"full\" cannot run with moe_a2a_overlap = true",
                 "Megatron-Core asserts 'disable full recomputation when enabling overlap_moe_expert_parallel_comm'; use "
                 "recompute = \"selective\" or \"none\", or remove moe_a2a_overlap");
  if (tr.precision == topology::Precision::Fp32 || tr.precision == topology::Precision::Tf32)
    error_at_key("training.precision", "moe_a2a_overlap = true needs a 16-bit (or lower) model, but precision = \"" +
                                           std::string(topology::to_string(tr.precision)) + "\"",
                 "Megatron-Core asserts 'only supported with bf16 or fp16 model' (FP8 training keeps a bf16 model); use "
                 "precision = \"bf16\", or remove moe_a2a_overlap");
  if (m.mtp_layers > 1)
    error_at_key("model.mtp_layers", "mtp_layers = " + std::to_string(m.mtp_layers) + " with moe_a2a_overlap = true",
                 "Megatron-Core asserts 'MTP supports at most one layer when enabling overlap_moe_expert_parallel_comm'; "
                 "use mtp_layers <= 1, or remove moe_a2a_overlap");
}

}  // namespace clustersim::scenarios
