// Hybrid Mamba checks (workloads::ModelSpec::hybrid_pattern) that span [model] and [parallelism]:
// the pattern's characters and length against the layers, the Mamba-2 shape (heads a multiple of
// the groups, as mamba_ssm's Mamba2 asserts), and Megatron-Core MambaMixer's tensor-parallel
// split (heads and groups divide over tp: its asserts "nheads % tp == 0", "ngroups % tp == 0").
// MoE layers ('E', Nemotron 3) need experts, and experts need 'E' layers. Context parallelism and
// LoRA on a hybrid are not modelled and are refused.
#include <algorithm>
#include <numeric>
#include <string>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_text.h"

namespace clustersim::scenarios {
namespace {

constexpr const char* kMambaKeys[] = {"mamba_heads", "mamba_head_dim", "mamba_expand", "mamba_groups",
                                      "mamba_state", "mamba_conv",     "mamba_chunk"};
constexpr const char* kPatternHint =
    "one character per layer as Megatron-LM's --hybrid-override-pattern: 'M' Mamba-2, '*' attention, '-' MLP, "
    "'E' MoE (with experts), e.g. hybrid_pattern = \"M-M-M*-M-\" or \"MEMEM*EMEME\"";

}  // namespace

void Loader::check_hybrid() {
  const auto& m = spec_.model;
  const auto& p = spec_.parallel;
  if (!m.is_hybrid()) {
    for (const char* key : kMambaKeys) {
      const std::string dotted = std::string("model.") + key;
      if (spec_.origins.count(dotted))
        error_at_key(dotted, std::string(key) + " describes Mamba layers, but the model has no hybrid_pattern",
                     std::string("set hybrid_pattern in [model] (") + kPatternHint + "), or remove " + key);
    }
    return;
  }
  const std::size_t bad = m.hybrid_pattern.find_first_not_of("M*-E");
  if (bad != std::string::npos) {
    error_at_key("model.hybrid_pattern",
                 "hybrid_pattern has '" + std::string(1, m.hybrid_pattern[bad]) + "' at position " + std::to_string(bad + 1),
                 kPatternHint);
    return;
  }
  if (static_cast<int>(m.hybrid_pattern.size()) != m.layers)
    error_at_key("model.layers",
                 "layers = " + std::to_string(m.layers) + " but hybrid_pattern has " +
                     std::to_string(m.hybrid_pattern.size()) + " layers",
                 "remove layers (the pattern sets it), or make the pattern one character per layer");
  const bool has_moe_layers = m.hybrid_pattern.find('E') != std::string::npos;
  if (has_moe_layers && !m.is_moe())
    error_at_key("model.hybrid_pattern", "hybrid_pattern has MoE layers ('E') but the model has no experts",
                 "set experts, experts_per_token and moe_ffn_hidden in [model] (Nemotron 3 Nano: 128, 6, 1856), "
                 "or use '-' for dense MLP layers");
  if (m.is_moe() && !has_moe_layers)
    error_at_key("model.experts", "experts = " + std::to_string(m.experts) + " but hybrid_pattern has no MoE layer ('E')",
                 "mark the MoE layers 'E' in hybrid_pattern, or remove experts");
  if (m.mamba_heads <= 0 || m.mamba_heads % m.mamba_groups != 0)
    error_at_key("model.mamba_heads",
                 "mamba_heads = " + std::to_string(m.mamba_heads) + " is not a multiple of mamba_groups = " +
                     std::to_string(m.mamba_groups),
                 "each group of B and C serves mamba_heads / mamba_groups heads; use mamba_heads = " +
                     std::to_string(m.mamba_groups * std::max(1, m.mamba_heads / m.mamba_groups)));
  if (m.mamba_groups % p.tp != 0 || m.mamba_heads % p.tp != 0)
    error_at_key("parallelism.tp",
                 "tp = " + std::to_string(p.tp) + " does not divide mamba_groups = " + std::to_string(m.mamba_groups) +
                     " and mamba_heads = " + std::to_string(m.mamba_heads),
                 "Megatron-Core's MambaMixer splits the Mamba heads and groups over tp; use tp = " +
                     divisor_list(std::gcd(m.mamba_groups, std::max(1, m.mamba_heads)), m.mamba_groups));
  if (p.cp > 1)
    error_at_key("parallelism.cp", "context parallelism with Mamba layers is not modelled",
                 "use cp = 1 for a hybrid_pattern model");
  if (spec_.training.finetune.lora())
    error_at_key("finetune.method", "LoRA on a hybrid Mamba model is not modelled", "use method = \"full\"");
}

}  // namespace clustersim::scenarios
