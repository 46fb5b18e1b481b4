// Per-layer and per-module precision ([training] num_layers_at_start_in_bf16,
// num_layers_at_end_in_bf16, bf16_modules, fp8_modules; workloads/model/module_precision.h) against
// the precision, the model and the layout: they only change an fp8 / nvfp4 run, fp8_modules only an
// nvfp4 one; the layer counts fit the model (and, under fp8, a pipeline stage's layers, as
// Megatron-Core's TransformerConfig checks: transformer_config.py, "must be between 0 and number of
// layers per pipeline stage"); a listed module exists in the model; no module is in both lists.
#include <algorithm>
#include <string>
#include <utility>

#include "scenarios/scenario_loader.h"
#include "workloads/model/module_precision.h"

namespace clustersim::scenarios {
namespace {

bool has_mamba(const workloads::ModelSpec& m) {
  return m.is_hybrid() && m.layers_of_kind_in(workloads::LayerKind::Mamba, 0, m.layers) > 0;
}

// Why the model has no such module, or "" when it has.
std::string missing_module(const workloads::ModelSpec& m, unsigned module) {
  using namespace workloads;
  if (module == kPrecisionMoeLatentProj && m.moe_latent_size == 0) return "the model has no LatentMoE (moe_latent_size)";
  if (module == kPrecisionMtp && m.mtp_layers == 0) return "the model has no multi-token prediction (mtp_layers)";
  if ((module == kPrecisionMambaInProj || module == kPrecisionMambaOutProj) && !has_mamba(m))
    return "the model has no Mamba layers";
  return "";
}

}  // namespace

void Loader::check_module_precision() {
  const auto& tr = spec_.training;
  const auto& m = spec_.model;
  if (!workloads::has_module_precision(tr)) return;
  using topology::Precision;
  const bool quantized = topology::quantized_linears(tr.precision);
  for (const char* key : {"num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16", "bf16_modules", "fp8_modules"}) {
    const std::string dotted = std::string("training.") + key;
    if (spec_.origins.count(dotted) == 0) continue;
    if (!quantized)
      error_at_key(dotted, std::string(key) + " keeps layers or modules out of fp8 / nvfp4, but precision is " +
                               std::string(topology::to_string(tr.precision)),
                   "set precision = \"fp8\" or \"nvfp4\", or remove " + std::string(key));
  }
  if (!quantized) return;
  if (tr.fp8_modules != 0 && tr.precision != Precision::Nvfp4)
    error_at_key("training.fp8_modules", "fp8_modules runs modules in fp8 under an nvfp4 run, but precision is fp8",
                 "set precision = \"nvfp4\", or remove fp8_modules");
  const int per_stage = m.layers / std::max(1, spec_.parallel.pp);
  for (const auto& [key, n] : {std::pair<const char*, int>{"num_layers_at_start_in_bf16", tr.bf16_layers_at_start},
                               std::pair<const char*, int>{"num_layers_at_end_in_bf16", tr.bf16_layers_at_end}}) {
    const int limit = tr.precision == Precision::Fp8 ? per_stage : m.layers;
    if (n > limit)
      error_at_key(std::string("training.") + key,
                   std::string(key) + " = " + std::to_string(n) + " exceeds the " +
                       (tr.precision == Precision::Fp8 ? "layers per pipeline stage (" : "model's layers (") +
                       std::to_string(limit) + ")",
                   tr.precision == Precision::Fp8
                       ? "Megatron-Core allows 0 .. layers / pp under fp8 (TransformerConfig); use at most " + std::to_string(limit)
                       : "use at most " + std::to_string(limit));
  }
  for (const auto& c : workloads::kPrecisionModuleNames) {
    std::string quoted = "\"";
    quoted.append(c.name).append("\"");
    for (const auto& [key, bits] : {std::pair<const char*, unsigned>{"bf16_modules", tr.bf16_modules},
                                    std::pair<const char*, unsigned>{"fp8_modules", tr.fp8_modules}}) {
      if ((bits & c.value) == 0) continue;
      if (const std::string why = missing_module(m, c.value); !why.empty()) {
        std::string message = key;
        message.append(" lists ").append(quoted).append(", but ").append(why);
        error_at_key(std::string("training.") + key, message, "remove " + quoted);
      }
    }
    if ((tr.bf16_modules & tr.fp8_modules & c.value) != 0)
      error_at_key("training.fp8_modules", quoted + " is in both bf16_modules and fp8_modules", "keep it in one list");
  }
}

}  // namespace clustersim::scenarios
