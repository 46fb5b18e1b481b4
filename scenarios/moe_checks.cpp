// Mixture-of-experts checks that span [model] and [parallelism]: the expert keys against each
// other (top-k within the experts, MoE layers that exist), and expert parallelism against the
// model (ep divides the experts) and the layout (ep divides dp: Megatron-Core carves the expert
// grid out of the data-parallel ranks, megatron/core/parallel_state.py; with expert tensor
// parallelism etp x ep divides tp x cp x dp, and etp divides the expert FFN). Run after the GPU
// count, so dp is known.
#include <algorithm>
#include <numeric>
#include <string>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_text.h"

namespace clustersim::scenarios {
namespace {

constexpr const char* kMoeOnlyKeys[] = {"experts_per_token", "moe_ffn_hidden",  "shared_experts",
                                        "first_dense_layers", "moe_layer_freq", "capacity_factor",
                                        "expert_bias", "glu_clamp", "router_groups", "router_group_topk", "moe_latent_size",
                                        "moe_apply_probs_on_input"};

}  // namespace

void Loader::check_experts() {
  const auto& m = spec_.model;
  const auto& p = spec_.parallel;
  // Megatron-Core's moe_flex_dispatcher_num_sms is read by the flex dispatcher only.
  if (p.moe_dispatcher_sms > 0 && p.moe_dispatcher == workloads::MoeDispatcher::AllToAll)
    error_at_key("parallelism.moe_dispatcher_sms",
                 "moe_dispatcher_sms = " + std::to_string(p.moe_dispatcher_sms) +
                     " sets the SMs of the flex dispatcher's kernels, but moe_dispatcher = \"alltoall\"",
                 "set moe_dispatcher = \"deepep\" or \"hybridep\", or remove moe_dispatcher_sms");
  if (!m.is_moe()) {
    for (const char* key : kMoeOnlyKeys) {
      const std::string dotted = std::string("model.") + key;
      if (spec_.origins.count(dotted))
        error_at_key(dotted, std::string(key) + " describes a mixture of experts, but the model has no experts",
                     "set experts = <routed experts per MoE layer> in [model] (e.g. experts = 8), or remove " + std::string(key));
    }
    if (p.ep > 1)
      error_at_key("parallelism.ep", "ep = " + std::to_string(p.ep) + " needs a mixture-of-experts model, but the model has no experts",
                   "use ep = 1, or set experts (and experts_per_token) in [model]");
    if (p.etp > 0 && p.etp != p.tp)
      error_at_key("parallelism.etp", "etp = " + std::to_string(p.etp) + " needs a mixture-of-experts model, but the model has no experts",
                   "remove etp (expert tensor parallelism), or set experts in [model]");
    if (spec_.training.te_op_fuser)
      error_at_key("training.te_op_fuser", "te_op_fuser runs the routed experts' MLP, but the model has no experts",
                   "remove te_op_fuser (Megatron-Core's use_transformer_engine_op_fuser acts on TEGroupedMLP), or set experts in [model]");
    if (spec_.origins.count("training.moe_grouped_gemm"))
      error_at_key("training.moe_grouped_gemm", "moe_grouped_gemm chooses how the routed experts run, but the model has no experts",
                   "remove moe_grouped_gemm, or set experts in [model]");
    if (p.moe_dispatcher != workloads::MoeDispatcher::AllToAll)
      error_at_key("parallelism.moe_dispatcher",
                   "moe_dispatcher = " + quote_str(sim::name_of(workloads::kMoeDispatcherNames, p.moe_dispatcher)) +
                       " dispatches tokens to experts, but the model has no experts",
                   "remove moe_dispatcher, or set experts in [model]");
    return;
  }
  const std::string experts = std::to_string(m.experts);
  if (m.experts_per_token > m.experts)
    error_at_key("model.experts_per_token",
                 "experts_per_token = " + std::to_string(m.experts_per_token) + " exceeds experts = " + experts,
                 "each token is routed to top-k of the experts; use experts_per_token <= " + experts);
  if (m.first_dense_layers >= m.layers)
    error_at_key("model.first_dense_layers",
                 "first_dense_layers = " + std::to_string(m.first_dense_layers) + " leaves no MoE layer of " +
                     std::to_string(m.layers),
                 "use first_dense_layers < " + std::to_string(m.layers) + ", or experts = 0 for a dense model");
  // Group-limited routing: groups of consecutive experts (Megatron-Core's router asserts
  // num_experts % num_groups == 0 and group_topk <= num_groups).
  if (m.router_groups > 0 && m.experts % m.router_groups != 0)
    error_at_key("model.router_groups", "router_groups = " + std::to_string(m.router_groups) + " does not divide experts = " + experts,
                 "each group holds experts / router_groups consecutive experts; use router_groups = " +
                     divisor_list(m.experts, m.experts));
  if (m.router_group_topk > 0 && m.router_groups == 0)
    error_at_key("model.router_group_topk", "router_group_topk = " + std::to_string(m.router_group_topk) + " needs router_groups",
                 "set router_groups (DeepSeek-V3: 8 groups, router_group_topk = 4), or remove router_group_topk");
  else if (m.router_group_topk > m.router_groups)
    error_at_key("model.router_group_topk",
                 "router_group_topk = " + std::to_string(m.router_group_topk) + " exceeds router_groups = " +
                     std::to_string(m.router_groups),
                 "a token picks router_group_topk of the router_groups groups; use router_group_topk <= " +
                     std::to_string(m.router_groups));
  else if (m.router_groups > 0 && m.router_group_topk == 0)
    error_at_key("model.router_groups", "router_groups = " + std::to_string(m.router_groups) + " needs router_group_topk",
                 "set router_group_topk (groups a token may pick, DeepSeek-V3: 4), or remove router_groups");
  // Megatron-Core's experts assert "`moe_apply_probs_on_input` only works with `moe_router_topk`=1"
  // (megatron/core/transformer/moe/experts.py, TEGroupedMLP / GroupedMLP / SequentialMLP forward).
  if (m.moe_apply_probs_on_input && m.experts_per_token != 1)
    error_at_key("model.moe_apply_probs_on_input",
                 "moe_apply_probs_on_input = true needs top-1 routing, but experts_per_token = " +
                     std::to_string(m.experts_per_token),
                 "Megatron-Core applies the router probability to the input only with moe_router_topk = 1 (Llama 4); "
                 "set experts_per_token = 1, or remove moe_apply_probs_on_input");
  if (m.experts % p.ep != 0)
    error_at_key("parallelism.ep", "ep = " + std::to_string(p.ep) + " does not divide experts = " + experts,
                 "expert parallelism places experts / ep whole experts on each GPU; use ep = " +
                     divisor_list(m.experts, std::max(1, p.dp)));
  else if (cluster_ok_ && p.etp == 0 && p.cp == 1 && p.dp % p.ep != 0)
    error_at_key("parallelism.ep", "ep = " + std::to_string(p.ep) + " does not divide dp = " + std::to_string(p.dp),
                 "the expert-parallel group is carved out of the data-parallel ranks (Megatron-Core); use ep = " +
                     divisor_list(std::gcd(m.experts, p.dp), p.dp));
  else if (cluster_ok_ && (p.tp * p.cp * p.dp) % (p.expert_tp() * p.ep) != 0)
    // Megatron-Core: expert data parallel = world / (etp x ep x pp) must be a whole number.
    error_at_key(p.etp > 0 ? "parallelism.etp" : "parallelism.ep",
                 "etp x ep = " + std::to_string(p.expert_tp()) + " x " + std::to_string(p.ep) +
                     " does not divide the GPUs of a pipeline stage, tp x cp x dp = " + std::to_string(p.tp * p.cp * p.dp),
                 "Megatron-Core's expert data-parallel size is world / (etp x ep x pp); use etp and ep whose product divides " +
                     std::to_string(p.tp * p.cp * p.dp));
  // Transformer Engine's op fuser replaces TEGroupedMLP's forward (Megatron-Core
  // TEGroupedMLP._fused_forward); SequentialMLP has no fused path.
  if (spec_.training.te_op_fuser && !spec_.training.moe_grouped_gemm)
    error_at_key("training.moe_grouped_gemm",
                 "moe_grouped_gemm = false runs the experts one by one (SequentialMLP), but te_op_fuser = true fuses the grouped "
                 "experts (TEGroupedMLP)",
                 "remove te_op_fuser, or set moe_grouped_gemm = true");
  // LatentMoE compresses the token before dispatch (Nemotron 3 Super: 4096 -> 1024); a latent as
  // wide as hidden or wider only adds two projections.
  if (m.moe_latent_size >= m.hidden && m.moe_latent_size > 0)
    error_at_key("model.moe_latent_size",
                 "moe_latent_size = " + std::to_string(m.moe_latent_size) + " is not below hidden = " + std::to_string(m.hidden),
                 "LatentMoE projects tokens down to a narrower latent before the dispatch (Nemotron 3 Super: 1024 of 4096); "
                 "use a value below hidden, or 0 (or no key) for a plain MoE layer");
  if (m.moe_ffn_hidden % p.expert_tp() != 0)
    error_at_key(p.etp > 0 ? "parallelism.etp" : "parallelism.tp",
                 "expert tensor parallelism " + std::to_string(p.expert_tp()) + " does not divide moe_ffn_hidden = " +
                     std::to_string(m.moe_ffn_hidden),
                 "each of the etp GPUs holds an equal slice of every expert's FFN; use an etp dividing " +
                     std::to_string(m.moe_ffn_hidden));
}

}  // namespace clustersim::scenarios
