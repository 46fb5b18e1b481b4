// Uneven pipeline stages: checking a layout's first/last stage layer counts against the model, and
// suggesting a split when pp does not divide the layers.
//
// Megatron-LM spells the split --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers (megatron/training/arguments.py; TransformerConfig
// num_layers_in_first_pipeline_stage / num_layers_in_last_pipeline_stage): the layers not on a
// given first or last stage split evenly over the remaining stages, and with virtual stages every
// stage's layers split evenly over its model chunks. Published runs use it to put fewer layers on
// the stages that also run the embedding or the output layer and loss: Llama 3 405B gives its
// first and last stages one layer less than the other 14 (126 = 7 + 14 x 8 + 7; Dubey et al. 2024,
// "The Llama 3 Herd of Models", Section 3.3.2), BLOOM 176B 70 layers on 12 stages (BigScience
// Megatron-DeepSpeed, embeddings counted as stage slots: 5 + 10 x 6 + 5). Layer counts are
// transformer layers; ParallelSpec::layers_on_stage is what the simulator then uses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workloads/specs.h"

namespace clustersim::scenarios {

// Transformer layers on the first stage, on each middle stage and on the last stage.
struct StageSplit {
  int first = 0;
  int middle = 0;
  int last = 0;
};

// A split of `layers` over `pp` >= 2 stages with every middle stage equal and the first and last
// stages no heavier than a middle one (they also run the embedding, the output layer and the loss),
// as even as that allows; the last stage gets the smaller share when first + last is odd.
// nullopt when none exists (pp < 2, or fewer than two layers left for the first and last stages).
std::optional<StageSplit> suggest_stage_split(int layers, int pp);

// One problem with a layout's stage split: the dotted key to point at, what is wrong, the fix.
struct StageSplitProblem {
  std::string key;
  std::string message;
  std::string hint;
  // When the fix is a value of `key`: the candidates (the loader shows only those that pass it,
  // scenarios/hint_check.cpp) and how the hint reads around them; `hint` is the unchecked text.
  std::vector<std::string> values = {};
  std::string lead = {}, tail = {}, none = {};
};

// What is wrong with how `p` splits `layers` transformer layers (of `model_name`) over its pipeline
// stages and model chunks, or nullopt: pp dividing the layers (when no first/last counts are
// given), the first/last counts leaving the middle stages an even share of at least one layer,
// and, under the interleaved schedule, every stage's layers dividing by virtual_stages.
// `pp_limit` bounds the pp values a hint suggests.
std::optional<StageSplitProblem> check_stage_split(int layers, const workloads::ParallelSpec& p,
                                                   const std::string& model_name, int pp_limit);

// "first_stage_layers = 7 and last_stage_layers = 7 in [parallelism] (the 14 stages between hold 8
// each)": for hints.
std::string describe_stage_split(const StageSplit& split, int pp);

// The layers per stage of an uneven layout, first to last: "7 + 14 x 8 + 7" (for reports).
std::string stage_layers_text(int layers, const workloads::ParallelSpec& p);

}  // namespace clustersim::scenarios
