// Fine-tuning a 7B model on two RTX 4090 end to end (scenarios/library/llama2-7b-2x-rtx4090-finetune.toml):
// LoRA is faster and smaller than full fine-tuning, full fine-tuning fits only with ZeRO-Offload,
// and the offloaded step's PCIe time shows in the report and grows with the model.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run.h"
#include "analysis/run_report.h"
#include "scenarios/loader.h"

using namespace clustersim;

namespace {

const std::string kScenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/library/llama2-7b-2x-rtx4090-finetune.toml";

analysis::RunReport run(const std::vector<std::string>& overrides) {
  return analysis::run_scenario(scenarios::load_scenario(kScenario, overrides), analysis::RunOptions{false, false, false, nullptr});
}

}  // namespace

TEST_CASE("analysis::run_scenario: LoRA on 2x RTX 4090 is faster than full fine-tuning with ZeRO-Offload and both fit where full fine-tuning does not") {
  const analysis::RunReport lora = run({});
  const analysis::RunReport full_offload = run({"finetune.method=full", "sync.offload_optimizer=cpu"});
  const analysis::RunReport full = run({"finetune.method=full"});
  CHECK(lora.memory.fits);
  CHECK(full_offload.memory.fits);
  CHECK_FALSE(full.memory.fits);  // 6.7B params x (2 + 4/2 + 12/2) B does not fit in 24 GB
  // Both keep the 13.5 GB of 16-bit weights; LoRA adds its adapters' states, ZeRO-Offload none.
  CHECK(lora.memory.required > full_offload.memory.required);
  CHECK(lora.memory.required < full_offload.memory.required + 0.5e9);
  CHECK(lora.memory.required < full.memory.required);
  CHECK(lora.iteration.iteration_time_s < full_offload.iteration.iteration_time_s);
  // The forward is the same; the backward drops the frozen weights' gradients.
  CHECK(lora.iteration.breakdown.compute < 0.9 * full_offload.iteration.breakdown.compute);
  const auto j = nlohmann::json::parse(analysis::run_json(lora));
  CHECK(j["details"]["trainable_parameters"].get<double>() == doctest::Approx(32.0 * 4 * 16 * 8192));
}

TEST_CASE("analysis::run_scenario: ZeRO-Offload's optimizer step is PCIe plus CPU-Adam, and its PCIe time grows with the model") {
  const analysis::RunReport off7 = run({"finetune.method=full", "sync.offload_optimizer=cpu"});
  const auto& it = off7.iteration;
  CHECK(it.offload_pcie_s > 0);
  CHECK(it.offload_cpu_s > 0);
  // Each GPU moves its half of 6.7B parameters, 2 B down and 2 B up, at 24 GB/s (PCIe 4.0 x16).
  const double params = off7.spec.model.parameters() / 2;
  CHECK(it.offload_pcie_s == doctest::Approx(params * 4 / 24e9).epsilon(0.01));
  CHECK(it.breakdown.optimizer == doctest::Approx(it.offload_pcie_s + it.offload_cpu_s).epsilon(0.01));
  const std::string text = analysis::run_text(off7);
  CHECK(text.find("ZeRO-Offload") != std::string::npos);
  // Half the layers (3.4B parameters): less PCIe time, in proportion to the parameters moved.
  const analysis::RunReport off3 = run({"finetune.method=full", "sync.offload_optimizer=cpu", "model.layers=16"});
  const double ratio = off3.spec.model.parameters() / off7.spec.model.parameters();
  CHECK(ratio < 0.6);
  CHECK(off3.iteration.offload_pcie_s == doctest::Approx(it.offload_pcie_s * ratio).epsilon(0.01));
}

TEST_CASE("analysis::run_scenario: ZeRO-Offload's delayed parameter update hides CPU-Adam and the copy up behind the next iteration") {
  const analysis::RunReport plain = run({"finetune.method=full", "sync.offload_optimizer=cpu"});
  const analysis::RunReport delayed =
      run({"finetune.method=full", "sync.offload_optimizer=cpu", "sync.offload_delayed_update=true"});
  // The same step is computed either way; ~9 s of forward and backward hide its CPU part entirely.
  CHECK(delayed.iteration.offload_cpu_s == doctest::Approx(plain.iteration.offload_cpu_s));
  CHECK(delayed.iteration.offload_hidden_s == doctest::Approx(plain.iteration.offload_cpu_s + plain.iteration.offload_pcie_s / 2));
  CHECK(plain.iteration.offload_hidden_s == 0.0);
  CHECK(delayed.iteration.iteration_time_s ==
        doctest::Approx(plain.iteration.iteration_time_s - delayed.iteration.offload_hidden_s).epsilon(1e-6));
  const std::string text = analysis::run_text(delayed);
  CHECK(text.find("delayed update:") != std::string::npos);
}
