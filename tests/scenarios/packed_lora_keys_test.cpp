// [model] packed_sample_len (packed fine-tuning sequences, workloads/specs.h ModelSpec) and the
// [finetune] lora_targets name "qkv" (one adapter over Megatron's fused linear_qkv): read, shown
// so that show_config round-trips, and checked against seq_len, the attention kernel and the
// separate q, k, v targets.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

const std::string kBase =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 1\n[model]\npreset = \"llama3-8b\"\nseq_len = 4096\n";
const std::string kLayout = "[parallelism]\ndp = 8\n[training]\nglobal_batch = 32\nprecision = \"bf16\"\n";

std::string error_of(const std::string& text) {
  try {
    (void)parse_scenario(text, "packed.toml", {});
  } catch (const ScenarioError& e) {
    return e.format();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: packed_sample_len is read, shown and bounded by seq_len") {
  const ScenarioSpec a = parse_scenario(kBase + "packed_sample_len = 205.7\n" + kLayout, "packed.toml");
  CHECK(a.model.packed_sample_len == doctest::Approx(205.7));
  const std::string shown = show_config(a);
  CHECK(shown.find("packed_sample_len = 205.7") != std::string::npos);
  CHECK(parse_scenario(shown, "packed.toml").model.packed_sample_len == doctest::Approx(205.7));
  CHECK(parse_scenario(kBase + kLayout, "packed.toml").model.packed_sample_len == 0.0);
  CHECK(show_config(parse_scenario(kBase + kLayout, "packed.toml")).find("packed_sample_len") == std::string::npos);

  const std::string long_samples = error_of(kBase + "packed_sample_len = 5000\n" + kLayout);
  CHECK(long_samples.find("packed_sample_len exceeds seq_len") != std::string::npos);
  CHECK(long_samples.find("packed.toml:") == 0);
  const std::string eager = error_of(kBase + "packed_sample_len = 200\nflash_attention = false\n" + kLayout);
  CHECK(eager.find("packed sequences without a fused attention kernel") != std::string::npos);
  CHECK(error_of(kBase + "packed_sample_len = -1\n" + kLayout).find("packed_sample_len") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: lora_targets qkv is one target, shown, and not combined with q, k or v") {
  const std::string lora = "[finetune]\nmethod = \"lora\"\nlora_rank = 8\n";
  const ScenarioSpec a = parse_scenario(kBase + kLayout + lora + "lora_targets = [\"qkv\"]\n", "packed.toml");
  CHECK(a.training.finetune.lora_targets == workloads::kLoraQkv);
  const ScenarioSpec b = parse_scenario(show_config(a), "packed.toml");
  CHECK(b.training.finetune.lora_targets == workloads::kLoraQkv);
  const ScenarioSpec c = parse_scenario(kBase + kLayout + lora + "lora_targets = [\"qkv\", \"o\"]\n", "packed.toml");
  CHECK(c.training.finetune.lora_targets == (workloads::kLoraQkv | workloads::kLoraO));

  const std::string both = error_of(kBase + kLayout + lora + "lora_targets = [\"qkv\", \"q\"]\n");
  CHECK(both.find("lists 'qkv' together with 'q', 'k' or 'v'") != std::string::npos);
  const std::string typo = error_of(kBase + kLayout + lora + "lora_targets = [\"qkvv\"]\n");
  CHECK(typo.find("did you mean 'qkv'") != std::string::npos);
}
