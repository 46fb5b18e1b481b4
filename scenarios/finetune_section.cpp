// The [finetune] section (method, lora_rank, lora_targets: workloads/model/lora.h) and the checks
// that tie fine-tuning and ZeRO-Offload ([sync] offload_optimizer) to the model and the layout:
// LoRA targets the model has, no MLP adapters on a mixture of experts (not modelled), and
// ZeRO-Offload only with a ZeRO stage and Adam, as DeepSpeed runs it.
#include <string>
#include <string_view>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_reader.h"

namespace clustersim::scenarios {
namespace {

constexpr std::string_view kFinetuneKeys[] = {"method", "lora_rank", "lora_targets"};
constexpr std::string_view kTargetNames[] = {"q", "k", "v", "o", "gate", "up", "down", "qkv"};

}  // namespace

bool Loader::read_finetune(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "finetune", kFinetuneKeys);
  auto& ft = spec_.training.finetune;
  if (auto v = s.choice("method", workloads::kFinetuneMethodNames)) ft.method = *v;
  if (auto v = s.integer("lora_rank", 1, 1 << 16, "8")) ft.lora_rank = *v;
  if (const toml::node* n = s.find("lora_targets")) {
    const toml::array* list = n->as_array();
    if (list == nullptr || list->empty()) {
      s.wrong_type("lora_targets", *n, "a non-empty array of projection names", "[\"q\", \"k\", \"v\", \"o\"]");
    } else {
      ft.lora_targets = 0;
      for (const toml::node& e : *list) {
        const auto* name = e.as_string();
        const auto target = name ? sim::parse(workloads::kLoraTargetNames, name->get()) : std::nullopt;
        if (!target) {
          const std::string got = name ? "'" + name->get() + "'" : "a " + type_name(e.type());
          error_at_key("finetune.lora_targets", "lora_targets lists " + got + ", not a projection name",
                       "use names from q, k, v, o, gate, up, down (Hugging Face PEFT's q_proj ... down_proj) or qkv (Megatron's fused linear_qkv); did you mean '" +
                           (name ? did_you_mean(name->get(), kTargetNames) : std::string("q")) + "'?");
          continue;
        }
        ft.lora_targets |= *target;
      }
    }
  }
  s.finish();
  return error_count() == before;
}

void Loader::check_finetune() {
  const auto& ft = spec_.training.finetune;
  const auto& m = spec_.model;
  // lora_rank and lora_targets stay valid under method = "full" (and unused), so that
  // `compare --vary finetune.method=lora,full` can run one file both ways.
  if (ft.lora()) {
    if ((ft.lora_targets & workloads::kLoraMlpTargets) != 0 && m.is_moe())
      error_at_key("finetune.lora_targets", "LoRA adapters on the MLP of a mixture-of-experts model are not modelled",
                   "adapt the attention projections only: lora_targets = [\"q\", \"k\", \"v\", \"o\"]");
    if ((ft.lora_targets & workloads::kLoraQkv) != 0 && (ft.lora_targets & (workloads::kLoraQ | workloads::kLoraK | workloads::kLoraV)) != 0)
      error_at_key("finetune.lora_targets", "lora_targets lists 'qkv' together with 'q', 'k' or 'v'",
                   "'qkv' is one adapter over the fused query/key/value projection (Megatron's linear_qkv); list either it or the separate q, k, v");
    if ((ft.lora_targets & workloads::kLoraGate) != 0 && m.mlp == workloads::MlpKind::Gelu)
      error_at_key("finetune.lora_targets", "lora_targets lists 'gate', but a GELU MLP has no gate projection",
                   "use 'up' (fc1) and 'down' (fc2) for a GELU model, or set mlp = \"swiglu\"");
  }
  if (spec_.sync.offload_delayed_update && spec_.sync.offload_optimizer != workloads::OffloadDevice::Cpu)
    error_at_key("sync.offload_delayed_update",
                 "offload_delayed_update = true delays ZeRO-Offload's CPU step, but offload_optimizer = \"none\"",
                 "set offload_optimizer = \"cpu\" (with zero >= 1), or remove offload_delayed_update");
  if (spec_.sync.offload_optimizer != workloads::OffloadDevice::Cpu) return;
  if (spec_.parallel.zero < 1)
    error_at_key("sync.offload_optimizer",
                 "offload_optimizer = \"cpu\" needs a ZeRO stage, but [parallelism] zero = " + std::to_string(spec_.parallel.zero),
                 "DeepSpeed offloads the optimizer with ZeRO stage 1, 2 or 3 (ZeRO-Offload builds on ZeRO-2): set "
                 "[parallelism] zero = 2");
  if (spec_.training.optimizer != workloads::Optimizer::Adam)
    error_at_key("sync.offload_optimizer", "offload_optimizer = \"cpu\" is modelled for Adam (DeepSpeed's CPU-Adam) only",
                 "set [training] optimizer = \"adam\", or offload_optimizer = \"none\"");
}

}  // namespace clustersim::scenarios
