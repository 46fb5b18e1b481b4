// libFuzzer target: a Hugging Face config.json through the importer (Llama/Mistral, GPT-2,
// GPT-NeoX). Seeds: tests/workloads/data/*.json and tests/scenarios/data/*.json.
#include "fuzz/fuzz_util.h"
#include "workloads/model/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto model = clustersim::workloads::parse_hf_config(std::string(clustersim::fuzz::as_text(data, size)), "fuzz.json");
    (void)model.parameters();
  } catch (const clustersim::workloads::HfConfigError&) {
  }
  return 0;
}
