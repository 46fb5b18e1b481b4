// Uneven pipeline stages (see stage_split.h for the Megatron-LM semantics and the published splits).
#include "scenarios/stage_split.h"

#include "scenarios/toml_text.h"

namespace clustersim::scenarios {
namespace {

using workloads::ParallelSpec;
using workloads::Schedule;


std::string suggestion(int layers, int pp) {
  const auto split = suggest_stage_split(layers, pp);
  if (!split) return {};
  return describe_stage_split(*split, pp);
}

// pp does not divide the layers and no first/last counts are given.
StageSplitProblem pp_not_dividing(int layers, const ParallelSpec& p, const std::string& model_name, int pp_limit) {
  StageSplitProblem e;
  e.key = "parallelism.pp";
  e.message = "pp = " + std::to_string(p.pp) + " does not divide layers = " + std::to_string(layers) + " of " + model_name;
  const std::string keep = suggestion(layers, p.pp);
  e.hint = "use pp = " + divisor_list(layers, pp_limit) +
           (keep.empty() ? std::string() : ", or keep pp = " + std::to_string(p.pp) + " with uneven stages: " + keep);
  for (int d = 1; d <= layers && d <= pp_limit; ++d)
    if (layers % d == 0) e.values.push_back(std::to_string(d));
  e.tail = keep.empty() ? std::string() : ", or keep pp = " + std::to_string(p.pp) + " with uneven stages: " + keep;
  e.none = keep.empty() ? "use a pp dividing " + std::to_string(layers) + " together with a matching tp or dp"
                        : "keep pp = " + std::to_string(p.pp) + " with uneven stages: " + keep;
  return e;
}

// The first/last counts given leave the middle stages no even share of at least one layer.
std::optional<StageSplitProblem> uneven_counts(int layers, const ParallelSpec& p) {
  const bool first = p.first_stage_layers > 0, last = p.last_stage_layers > 0;
  const std::string key = first ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
  if (p.pp < 2)
    return StageSplitProblem{key, "first_stage_layers and last_stage_layers need pipeline parallelism, but pp = 1",
                             "use pp >= 2, or remove first_stage_layers and last_stage_layers"};
  const int given = p.first_stage_layers + p.last_stage_layers;
  const int middle_stages = p.pp - (first ? 1 : 0) - (last ? 1 : 0);
  const int middle_layers = layers - given;
  std::string given_text = first ? "first_stage_layers = " + std::to_string(p.first_stage_layers) : "";
  if (last) given_text += (first ? " + " : "") + std::string("last_stage_layers = ") + std::to_string(p.last_stage_layers);
  const std::string fix = suggestion(layers, p.pp);
  const std::string hint = fix.empty() ? "use fewer pipeline stages" : "for example " + fix;
  if (middle_stages == 0 && middle_layers != 0)
    return StageSplitProblem{key, given_text + " must add up to layers = " + std::to_string(layers) + " with pp = 2", hint};
  if (middle_stages == 0) return std::nullopt;
  const std::string others = " the other " + std::to_string(middle_stages) + " stage" + (middle_stages > 1 ? "s" : "");
  if (middle_layers < middle_stages)
    return StageSplitProblem{key,
                             given_text + " leaves fewer than one of the " + std::to_string(layers) + " layers for each of" +
                                 others,
                             hint};
  if (middle_layers % middle_stages != 0)
    return StageSplitProblem{key,
                             given_text + " leaves " + std::to_string(middle_layers) + " of the " + std::to_string(layers) +
                                 " layers for" + others + ", which must hold the same number of layers",
                             hint};
  return std::nullopt;
}

// Interleaving: every stage's layers split evenly over its virtual_stages model chunks.
std::optional<StageSplitProblem> interleaving(int layers, const ParallelSpec& p) {
  const int v = p.virtual_stages;
  StageSplitProblem e;
  e.key = "parallelism.virtual_stages";
  if (!p.uneven_stages()) {
    if (layers % (p.pp * v) == 0) return std::nullopt;
    e.message = "the interleaved schedule needs layers = " + std::to_string(layers) +
                " divisible by pp * virtual_stages = " + std::to_string(p.pp) + " * " + std::to_string(v) + " = " +
                std::to_string(p.pp * v);
    const int per_stage = layers / p.pp;
    std::string list;
    int shown = 0;
    for (int d = 2; d <= per_stage && shown < 6; ++d)
      if (per_stage % d == 0) list += (shown++ ? ", " : "") + std::to_string(d);
    e.hint = list.empty() ? "each stage holds a single layer, so it cannot be interleaved; use schedule = \"1f1b\""
                          : "each stage holds " + std::to_string(per_stage) + " layers; use virtual_stages = " + list;
    for (int d = 2; d <= per_stage && !list.empty(); ++d)
      if (per_stage % d == 0) e.values.push_back(std::to_string(d));
    e.lead = "each stage holds " + std::to_string(per_stage) + " layers; ";
    e.none = "each stage holds " + std::to_string(per_stage) + " layers; no virtual_stages dividing them passes the "
             "other checks alone (the batch must also be a multiple of pp micro-batches); use schedule = \"1f1b\"";
    return e;
  }
  for (int stage = 0; stage < p.pp; ++stage) {
    const int on_stage = p.layers_on_stage(layers, stage);
    if (on_stage % v == 0) continue;
    e.message = "the interleaved schedule splits every stage's layers over virtual_stages = " + std::to_string(v) +
                " model chunks, but stage " + std::to_string(stage) + " holds " + std::to_string(on_stage) + " layers";
    e.hint = "use first_stage_layers, last_stage_layers and a middle share that are multiples of " + std::to_string(v) +
             " (Megatron requires the same), or schedule = \"1f1b\" with virtual_stages = 1";
    return e;
  }
  return std::nullopt;
}

// The embedding and/or loss as layer slots (Megatron-Core's account_for_*_in_pipeline_split): the
// layers plus those slots split evenly over pp x virtual_stages chunks; exclusive with explicit
// first/last stage counts, as Megatron-Core's TransformerConfig asserts.
std::optional<StageSplitProblem> slot_split(int layers, const ParallelSpec& p) {
  const std::string key = p.embedding_in_split ? "parallelism.account_for_embedding_in_pipeline_split"
                                               : "parallelism.account_for_loss_in_pipeline_split";
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0)
    return StageSplitProblem{key, "the embedding/loss layer slots and first_stage_layers / last_stage_layers are two ways to split the layers",
                             "use one of them (Megatron-Core accepts only one)"};
  if (p.pp < 2)
    return StageSplitProblem{key, "counting the embedding or loss in the pipeline split needs pipeline parallelism, but pp = 1",
                             "use pp >= 2, or set it to false"};
  const int chunks = p.pp * std::max(p.virtual_stages, 1);
  const int slots = layers + p.split_slots();
  if (slots % chunks == 0) return std::nullopt;
  return StageSplitProblem{key,
                           "layers + " + std::to_string(p.split_slots()) + " slot(s) = " + std::to_string(slots) +
                               " does not divide over pp * virtual_stages = " + std::to_string(chunks) + " model chunks",
                           "choose pp and virtual_stages whose product divides " + std::to_string(slots) +
                               ", or use first_stage_layers / last_stage_layers"};
}

// An explicit layout (parallelism.stage_layers): one count per model chunk, adding up to the
// model's layers; exclusive with the other two ways of splitting, as Megatron-Core's
// TransformerConfig asserts for pipeline_model_parallel_layout.
std::optional<StageSplitProblem> explicit_layout(int layers, const ParallelSpec& p) {
  const std::string key = "parallelism.stage_layers";
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || p.split_slots() > 0)
    return StageSplitProblem{key, "stage_layers and first_stage_layers / last_stage_layers / account_for_*_in_pipeline_split are "
                                  "different ways to split the layers",
                             "use stage_layers alone (it lists every chunk's layers)"};
  const int chunks = p.pp * std::max(p.virtual_stages, 1);
  const int given = static_cast<int>(p.stage_layers.size());
  if (given != chunks)
    return StageSplitProblem{key, "stage_layers lists " + std::to_string(given) + " model chunk(s), but pp * virtual_stages = " +
                                      std::to_string(p.pp) + " * " + std::to_string(std::max(p.virtual_stages, 1)) + " = " +
                                      std::to_string(chunks),
                             "give one layer count per model chunk, in model order (chunk c of stage r is entry c * pp + r)"};
  int sum = 0;
  for (int n : p.stage_layers) sum += n;
  if (sum != layers)
    return StageSplitProblem{key, "stage_layers adds up to " + std::to_string(sum) + " layers, but the model has layers = " +
                                      std::to_string(layers),
                             "make the counts add up to " + std::to_string(layers) + " (a chunk may hold 0: only the embedding or loss)"};
  for (int stage = 0; stage < p.pp; ++stage)
    if (p.layers_on_stage(layers, stage) == 0)
      return StageSplitProblem{key, "stage_layers leaves pipeline stage " + std::to_string(stage) + " without a transformer layer",
                               "give every stage at least one layer over its chunks, or use fewer pipeline stages"};
  return std::nullopt;
}

}  // namespace

std::optional<StageSplit> suggest_stage_split(int layers, int pp) {
  if (pp < 2) return std::nullopt;
  for (int middle = (layers + pp - 1) / pp; middle >= 1; --middle) {
    const int rest = layers - (pp - 2) * middle;  // for the first and last stages
    if (rest < 2) continue;
    return StageSplit{(rest + 1) / 2, middle, rest / 2};
  }
  return std::nullopt;
}

std::string describe_stage_split(const StageSplit& split, int pp) {
  std::string out = "first_stage_layers = " + std::to_string(split.first) +
                    " and last_stage_layers = " + std::to_string(split.last) + " in [parallelism]";
  if (pp > 2)
    out += " (the " + std::to_string(pp - 2) + " stage" + (pp > 3 ? "s" : "") + " between hold " +
           std::to_string(split.middle) + " each)";
  return out;
}

std::string stage_layers_text(int layers, const ParallelSpec& p) {
  std::string out;
  for (int stage = 0; stage < p.pp;) {
    const int here = p.layers_on_stage(layers, stage);
    int run = 1;
    while (stage + run < p.pp && p.layers_on_stage(layers, stage + run) == here) ++run;
    out += (stage > 0 ? " + " : "") + (run > 1 ? std::to_string(run) + " x " : std::string()) + std::to_string(here);
    stage += run;
  }
  return out;
}

std::optional<StageSplitProblem> check_stage_split(int layers, const ParallelSpec& p, const std::string& model_name,
                                                   int pp_limit) {
  if (!p.stage_layers.empty()) return explicit_layout(layers, p);
  if (p.split_slots() > 0) return slot_split(layers, p);
  if (p.uneven_stages()) {
    if (auto e = uneven_counts(layers, p)) return e;
  } else if (layers % p.pp != 0) {
    return pp_not_dividing(layers, p, model_name, pp_limit);
  }
  if (p.schedule == Schedule::Interleaved) return interleaving(layers, p);
  return std::nullopt;
}

}  // namespace clustersim::scenarios
