// The --help examples of each verb (see verb_examples.h).
#include "apps/verb_examples.h"

#include <array>
#include <utility>

namespace clustersim::apps {
namespace {

struct VerbExamples {
  std::string_view verb;
  std::array<std::string_view, 3> lines;  // unused trailing entries are empty
};

constexpr VerbExamples kExamples[] = {
    {"run",
     {"clustersim run scenarios/library/gpt3-175b-dgx-a100.toml",
      "clustersim run scenarios/library/llama3-8b-hgx-h100.toml --format json --trace t.json",
      "clustersim run scenarios/library/gpt3-175b-dgx-a100.toml --set parallelism.pp=16 --set parallelism.dp=8"}},
    {"collective",
     {"clustersim collective --node dgx-h100 --nodes 4 --op allreduce -b 8M -e 1G",
      "clustersim collective --node dgx-a100-80gb --op allreduce --algo ring -b 1G -e 1G --explain",
      "clustersim collective --node dgx-h100 --nodes 2 --op allgather --algo ring,tree -b 64M -e 64M"}},
    {"topo",
     {"clustersim topo --node dgx-h100 --matrix", "clustersim topo --node dgx-a100-80gb --nodes 2 --bisection", ""}},
    {"catalog", {"clustersim catalog gpus", "clustersim catalog nodes", "clustersim catalog constants"}},
    {"memory",
     {"clustersim memory scenarios/library/gpt3-1.3b-2x-rtx4090.toml",
      "clustersim memory scenarios/library/llama2-70b-dgx-h100-16nodes.toml --set training.micro_batch=2", ""}},
    {"validate",
     {"clustersim validate --collectives", "clustersim validate --memory",
      "clustersim validate --scenario-of training_megatron_bridge.csv:24"}},
    {"calibrate",
     {"clustersim calibrate --params sustained_clock_ratio --rows source=llm-foundry,gpu=a100_80gb,metric=mfu", "",
      ""}},
    {"compare",
     {"clustersim compare scenarios/library/gpt3-175b-dgx-a100.toml --vary sync.bucket_mb=25,200",
      "clustersim compare scenarios/library/gpt3-175b-dgx-a100.toml --vary sync.algorithm=ring,tree",
      "clustersim compare scenarios/library/tier1-entry-2x-rtx4090.toml scenarios/library/tier2-mid-2x-a100-40gb.toml "
      "scenarios/library/tier3-high-8x-h100.toml"}},
    {"sweep",
     {"clustersim sweep scenarios/library/sweeps/gpt3-175b-layouts.toml --jobs 2 --out results.csv --best tokens_per_s",
      "", ""}},
};

}  // namespace

std::vector<std::string_view> verb_examples(std::string_view verb) {
  std::vector<std::string_view> out;
  for (const VerbExamples& e : kExamples) {
    if (e.verb != verb) continue;
    for (std::string_view line : e.lines) {
      if (!line.empty()) out.push_back(line);
    }
  }
  return out;
}

std::string examples_footer(std::string_view verb) {
  const std::vector<std::string_view> lines = verb_examples(verb);
  if (lines.empty()) return "";
  std::string out = "\nExamples:\n";
  for (std::string_view l : lines) out += "  " + std::string(l) + "\n";
  return out;
}

}  // namespace clustersim::apps
