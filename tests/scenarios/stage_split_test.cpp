// Uneven pipeline stages in scenarios: the [parallelism] keys first_stage_layers and
// last_stage_layers, their errors (each at its key, with a split that works), and
// suggest_stage_split against the published splits and a property over many shapes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenarios/loader.h"
#include "scenarios/show_config.h"
#include "scenarios/stage_split.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

// BLOOM 176B (Le Scao et al. 2022; BigScience tr11-176B-ml: TP 4 x PP 12 x DP 8 on 48 nodes of
// 8 A100 80GB, 70 layers, hidden 14336, 112 heads, vocabulary 250,880, seq 2048).
constexpr const char* kBloom = R"(name = "BLOOM 176B"
[cluster]
node = "dgx-a100-80gb"
nodes = 48

[model]
layers = 70
hidden = 14336
heads = 112
seq_len = 2048
vocab = 250880

[parallelism]
tp = 4
pp = 12
first_stage_layers = 5
last_stage_layers = 5
)";

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    (void)parse_scenario(text, "s.toml", overrides);
  } catch (const ScenarioError& e) {
    return e.format();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("scenarios::suggest_stage_split: the published splits of Llama 3 405B and BLOOM") {
  const auto llama = suggest_stage_split(126, 16);
  REQUIRE(llama.has_value());
  CHECK(llama->first == 7);
  CHECK(llama->middle == 8);
  CHECK(llama->last == 7);
  const auto bloom = suggest_stage_split(70, 12);
  REQUIRE(bloom.has_value());
  CHECK(bloom->first == 5);
  CHECK(bloom->middle == 6);
  CHECK(bloom->last == 5);
  // An odd remainder goes to the first stage: the last one also runs the logits and the loss.
  const auto odd = suggest_stage_split(95, 4);
  REQUIRE(odd.has_value());
  CHECK(odd->first == 24);  // 95 = 24 + 2 x 24 + 23
  CHECK(odd->middle == 24);
  CHECK(odd->last == 23);
  CHECK_FALSE(suggest_stage_split(10, 1).has_value());
  CHECK_FALSE(suggest_stage_split(10, 12).has_value());  // fewer layers than stages
}

TEST_CASE("scenarios::suggest_stage_split: every suggestion is a valid layout whose ends are no heavier than a middle stage") {
  int checked = 0;
  for (int layers = 2; layers <= 200; ++layers) {
    for (int pp = 2; pp <= 32 && pp <= layers; ++pp) {
      const auto s = suggest_stage_split(layers, pp);
      INFO("layers ", layers, " pp ", pp);
      REQUIRE(s.has_value());
      CHECK(s->first >= 1);
      CHECK(s->last >= 1);
      CHECK(s->first + s->last + (pp - 2) * s->middle == layers);
      if (pp > 2 && s->middle == (layers + pp - 1) / pp) CHECK(std::max(s->first, s->last) <= s->middle);
      workloads::ParallelSpec p;
      p.pp = pp;
      p.first_stage_layers = s->first;
      p.last_stage_layers = s->last;
      CHECK_FALSE(check_stage_split(layers, p, "m", 1 << 20).has_value());
      ++checked;
    }
  }
  CHECK(checked > 3000);
}

TEST_CASE("scenarios::parse_scenario: BLOOM's 70 layers on 12 stages load with first/last stage layer counts") {
  const ScenarioSpec s = parse_scenario(kBloom, "bloom.toml");
  CHECK(s.parallel.first_stage_layers == 5);
  CHECK(s.parallel.last_stage_layers == 5);
  CHECK(s.parallel.dp == 8);
  int sum = 0;
  for (int stage = 0; stage < 12; ++stage) sum += s.parallel.layers_on_stage(70, stage);
  CHECK(sum == 70);
  CHECK(s.parallel.layers_on_stage(70, 1) == 6);
  const std::string shown = show_config(s);
  CHECK(shown.find("first_stage_layers = 5\n") != std::string::npos);
  CHECK(shown.find("last_stage_layers = 5\n") != std::string::npos);
  CHECK(parse_scenario(shown, "bloom.toml").parallel.first_stage_layers == 5);
}

TEST_CASE("scenarios::parse_scenario: pp not dividing the layers suggests pp values and a first/last split") {
  const std::string e = error_of(kBloom, {"parallelism.first_stage_layers=0"});
  // 0 is out of range for the key itself.
  CHECK(e.find("'first_stage_layers' in [parallelism] must be") != std::string::npos);
  std::string text = kBloom;
  text = text.substr(0, text.find("first_stage_layers"));
  const std::string plain = error_of(text);
  INFO(plain);
  CHECK(plain.find("s.toml:15:6: error: pp = 12 does not divide layers = 70 of the model") != std::string::npos);
  // Of the pp dividing 70 layers only 1 and 2 also fit this cluster's GPU count (the loader tries
  // each, scenarios/hint_check.cpp); 5, 7, 10, ... would move the error to the GPU count.
  CHECK(plain.find("use pp = 1, 2, or keep pp = 12 with uneven stages: first_stage_layers = 5 and "
                   "last_stage_layers = 5 in [parallelism] (the 10 stages between hold 6 each)") != std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: first/last stage layer counts that leave an uneven middle are errors at the key") {
  const std::string e = error_of(kBloom, {"parallelism.first_stage_layers=6"});
  INFO(e);
  CHECK(e.find("--set parallelism.first_stage_layers=6") != std::string::npos);
  CHECK(e.find("first_stage_layers = 6 + last_stage_layers = 5 leaves 59 of the 70 layers for the other 10 stages, "
               "which must hold the same number of layers") != std::string::npos);
  CHECK(e.find("hint: for example first_stage_layers = 5 and last_stage_layers = 5") != std::string::npos);

  std::string last_only = kBloom;
  last_only.erase(last_only.find("first_stage_layers = 5\n"), 23);
  const std::string l = error_of(last_only, {"parallelism.last_stage_layers=60"});
  CHECK(l.find("last_stage_layers = 60 leaves fewer than one of the 70 layers for each of the other 11 stages") !=
        std::string::npos);
}

TEST_CASE("scenarios::parse_scenario: first/last stage layer counts need pp >= 2 and, with pp = 2, add up to the layers") {
  const std::string one = error_of(kBloom, {"parallelism.pp=1", "parallelism.tp=8", "cluster.nodes=1"});
  CHECK(one.find("first_stage_layers and last_stage_layers need pipeline parallelism, but pp = 1") != std::string::npos);
  const std::string two = error_of(kBloom, {"parallelism.pp=2", "cluster.nodes=1"});
  CHECK(two.find("first_stage_layers = 5 + last_stage_layers = 5 must add up to layers = 70 with pp = 2") !=
        std::string::npos);
  CHECK(two.find("first_stage_layers = 35 and last_stage_layers = 35") != std::string::npos);
  const ScenarioSpec ok =
      parse_scenario(kBloom, "s.toml", {"parallelism.pp=2", "cluster.nodes=1", "parallelism.first_stage_layers=30",
                                        "parallelism.last_stage_layers=40"});
  CHECK(ok.parallel.layers_on_stage(70, 1) == 40);
}

TEST_CASE("scenarios::parse_scenario: interleaving uneven stages needs every stage's layers divisible by virtual_stages") {
  // 126 on 16 as 6 + 14 x 8 + 8: every stage splits into 2 chunks; 7 + 14 x 8 + 7 does not.
  std::string text = R"([cluster]
node = "dgx-h100"
nodes = 16
[model]
preset = "llama3-405b"
[parallelism]
tp = 8
pp = 16
virtual_stages = 2
first_stage_layers = 6
last_stage_layers = 8
[training]
global_batch = 16
)";
  const ScenarioSpec s = parse_scenario(text, "s.toml");
  CHECK(s.parallel.layers_on_stage(126, 0) == 6);
  CHECK(s.parallel.layers_on_stage(126, 7) == 8);
  const std::string e = error_of(text, {"parallelism.first_stage_layers=7", "parallelism.last_stage_layers=7"});
  INFO(e);
  CHECK(e.find("error: the interleaved schedule splits every stage's layers over virtual_stages = 2 model chunks, "
               "but stage 0 holds 7 layers") != std::string::npos);
}
