// [model] attention_kernel (workloads::AttentionKernel): read into the model, shown when not
// native, and refused at the key where the GPU cannot run the kernel or flash attention is off.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "scenarios/show_config.h"

using namespace clustersim;

namespace {
std::string scenario(const std::string& node, const std::string& extra) {
  return R"(
[cluster]
node = ")" + node + R"("
nodes = 1
[model]
layers = 2
hidden = 4096
heads = 32
seq_len = 8192
vocab = 50368
)" + extra + R"(
[parallelism]
tp = 1
pp = 1
dp = 8
[training]
global_batch = 8
micro_batch = 1
)";
}

std::string error_of(const std::string& text) {
  try {
    (void)scenarios::parse_scenario(text, "k.toml");
  } catch (const scenarios::ScenarioError& e) {
    return e.format();
  }
  return "";
}
}  // namespace

TEST_CASE("scenarios::parse_scenario: attention_kernel is read, shown when set, and native by default") {
  const auto fa2 = scenarios::parse_scenario(scenario("dgx-h100", "attention_kernel = \"fa2\"\n"), "<fa2>");
  CHECK(fa2.model.attention_kernel == workloads::AttentionKernel::Fa2);
  CHECK(scenarios::show_config(fa2).find("attention_kernel = \"fa2\"") != std::string::npos);
  // show_config's text parses back to the same kernel.
  CHECK(scenarios::parse_scenario(scenarios::show_config(fa2), "<shown>").model.attention_kernel == workloads::AttentionKernel::Fa2);
  const auto fa3 = scenarios::parse_scenario(scenario("dgx-h100", "attention_kernel = \"fa3\"\n"), "<fa3>");
  CHECK(fa3.model.attention_kernel == workloads::AttentionKernel::Fa3);
  const auto plain = scenarios::parse_scenario(scenario("dgx-h100", ""), "<native>");
  CHECK(plain.model.attention_kernel == workloads::AttentionKernel::Native);
  CHECK(scenarios::show_config(plain).find("attention_kernel") == std::string::npos);
  const auto triton = scenarios::parse_scenario(scenario("dgx-h100", "attention_kernel = \"flash-attn-triton\"\n"), "<t>");
  CHECK(triton.model.attention_kernel == workloads::AttentionKernel::FlashAttnTriton);
  CHECK(scenarios::parse_scenario(scenarios::show_config(triton), "<shown>").model.attention_kernel ==
        workloads::AttentionKernel::FlashAttnTriton);
  // An Ampere-generation kernel on an Ampere GPU is its native one: accepted.
  CHECK(scenarios::parse_scenario(scenario("dgx-a100-80gb", "attention_kernel = \"fa2\"\n"), "<a100>").model.attention_kernel ==
        workloads::AttentionKernel::Fa2);
}

TEST_CASE("scenarios::parse_scenario: attention_kernel errors name the key's line and what to use") {
  const std::string fa3_a100 = error_of(scenario("dgx-a100-80gb", "attention_kernel = \"fa3\"\n"));
  CHECK(fa3_a100.find("k.toml:11:") != std::string::npos);
  CHECK(fa3_a100.find("Hopper (sm90) only") != std::string::npos);
  const std::string fa2_b200 = error_of(scenario("dgx-b200", "attention_kernel = \"fa2\"\n"));
  CHECK(fa2_b200.find("k.toml:11:") != std::string::npos);
  CHECK(fa2_b200.find("on Blackwell") != std::string::npos);
  const std::string triton_gb200 = error_of(scenario("gb200-nvl72", "attention_kernel = \"flash-attn-triton\"\n"));
  CHECK(triton_gb200.find("k.toml:11:") != std::string::npos);
  CHECK(triton_gb200.find("no measured rate on Blackwell") != std::string::npos);
  const std::string no_flash = error_of(scenario("dgx-h100", "flash_attention = false\nattention_kernel = \"fa2\"\n"));
  CHECK(no_flash.find("flash_attention = false") != std::string::npos);
  const std::string unknown = error_of(scenario("dgx-h100", "attention_kernel = \"fa9\"\n"));
  CHECK(unknown.find("fa2") != std::string::npos);  // the valid values are listed
}
