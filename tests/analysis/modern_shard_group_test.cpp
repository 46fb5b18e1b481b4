// Published FSDP runs whose launchers shard within a group of ranks and replicate across groups
// (analysis/modern_row_recipes.cpp shard_group_of): PaxML GPT-3 175B's (replica, data) mesh, MaxText's
// dcn_data axis from 64 nodes, NeMo 25.07's Llama 3.1 405B optimizer instances. Each test reads a
// published row and checks the scenario it becomes; rows that sharded over every rank stay unchanged.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "analysis/memory_report.h"
#include "analysis/modern_rows.h"
#include "tests/analysis/modern_row_fixture.h"
#include "workloads/specs.h"

using namespace clustersim;
using namespace clustersim::analysis;
using clustersim::analysis::test::modern_set;
using clustersim::analysis::test::row_at;
using clustersim::analysis::test::scenario_of;

namespace {

// The data-parallel ranks one copy of the sharded states spans in the row's scenario.
int shard_group(const workloads::ParallelSpec& p) { return p.dp / p.shard_instances; }

bool writes_shard_group(const ModernRow& row) {
  return modern_scenario_toml(row).find("shard_group") != std::string::npos;
}

}  // namespace

TEST_CASE("analysis::scenario_for_modern_row: PaxML GPT-3 175B shards over 128 GPUs and replicates across the rest") {
  // dgxc v24.11.1 paxml/configure.sh: DCN_MESH_SHAPE [nodes / 16, 16, 1] with ICI [1, 8, 1].
  for (const int line : {305, 308, 311, 314}) {
    const ModernRow& row = row_at("training_dgxc_benchmarking.csv", line);
    REQUIRE(row.model == "GPT-3 175B (PaxML)");
    const workloads::ParallelSpec p = scenario_of(row).parallel;
    CHECK(p.zero == 3);
    CHECK(p.dp == row.num_gpus);
    CHECK(shard_group(p) == 128);
    CHECK(p.shard_instances == row.num_gpus / 128);
    CHECK(p.shard_ranks() == 128);
  }
  // 128 GPUs: one group, the key not written.
  const ModernRow& one = row_at("training_dgxc_benchmarking.csv", 302);
  REQUIRE(one.num_gpus == 128);
  CHECK(scenario_of(one).parallel.shard_instances == 1);
  CHECK_FALSE(writes_shard_group(one));
}

TEST_CASE("analysis::scenario_for_modern_row: MaxText rows shard over their printed FSDP size") {
  // configure.sh: FSDP over every GPU below 64 nodes, 16 nodes x 8 GPUs from 64 nodes on; the
  // tables print it as "FSDP=N (+DP for remaining GPUs)". Every MaxText row's group is its N.
  int mapped = 0, unchanged = 0;
  for (const ModernRow& row : modern_set()) {
    if (row.model.find("(MaxText)") == std::string::npos || row.metric != "step_time") continue;
    const std::size_t at = row.zero_or_fsdp.find("FSDP=");
    REQUIRE(at != std::string::npos);
    const int printed = std::stoi(row.zero_or_fsdp.substr(at + 5));
    const workloads::ParallelSpec p = scenario_of(row).parallel;
    CHECK_MESSAGE(shard_group(p) == printed, row.file << ":" << row.line);
    if (p.shard_instances > 1) {
      ++mapped;
      CHECK(row.num_gpus >= 512);
    } else {
      ++unchanged;
      CHECK_FALSE(writes_shard_group(row));
    }
  }
  CHECK(mapped == 12);  // Llama 2 70B BF16 / FP8 and Llama 3 70B BF16 / FP8 at 512, 1,024, 2,048 GPUs
  CHECK(unchanged > 0);
}

TEST_CASE("analysis::scenario_for_modern_row: NeMo 25.07's Llama 3.1 405B FSDP row runs two optimizer instances") {
  // NeMo v2.4.0 pretrain_llama31_405b.py: num_distributed_optimizer_instances = nodes x 4 / 64 on
  // GB200 with Megatron-FSDP; 128 GPUs at tp 2: dp 64 in two groups of 32.
  const ModernRow& row = row_at("training_nemo_docs.csv", 67);
  REQUIRE(row.model == "Llama3.1-405B");
  REQUIRE(row.zero_or_fsdp == "Megatron-FSDP");
  const workloads::ParallelSpec p = scenario_of(row).parallel;
  CHECK(p.zero == 3);
  CHECK(p.dp == 64);
  CHECK(p.shard_instances == 2);
  CHECK(shard_group(p) == 32);
}

TEST_CASE("analysis::scenario_for_modern_row: FSDP rows that sharded over every rank keep no shard_group") {
  // Megatron-Bridge 25.09's 405B GB200 cell (r0.1.0 sets no instances), the Megatron-FSDP Llama 3
  // 70B cells (sharding group size 64 = dp), NeMo 25.04's Llama 3 70B FSDP row, and a DDP row.
  for (const auto& [file, line] : {std::pair{"training_megatron_bridge.csv", 540}, std::pair{"training_megatron_bridge.csv", 148},
                                  std::pair{"training_nemo_docs.csv", 52}, std::pair{"training_megatron_bridge.csv", 162}}) {
    const ModernRow& row = row_at(file, line);
    CAPTURE(line);
    CHECK(scenario_of(row).parallel.shard_instances == 1);
    CHECK_FALSE(writes_shard_group(row));
  }
}

TEST_CASE("analysis::scenario_for_modern_row: Nemotron 3 Ultra shards in each 64-GPU domain and its optimizer over all") {
  // Megatron-Bridge r0.6.0 _apply_nemotron_3_ultra_fsdp_hsdp: num_distributed_optimizer_instances =
  // 256 / 64 = 4, outer_dp_sharding_strategy "optim". GB300 tp 1: groups of 64; GB200 tp 2: of 32.
  for (const auto& [line, group] : {std::pair{34, 64}, std::pair{36, 32}}) {
    const ModernRow& row = row_at("training_megatron_bridge.csv", line);
    REQUIRE(row.model == "Nemotron_3_Ultra");
    CAPTURE(line);
    const workloads::ParallelSpec p = scenario_of(row).parallel;
    CHECK(p.zero == 3);
    CHECK(p.shard_instances == 4);
    CHECK(shard_group(p) == group);
    CHECK(p.outer_dp_sharding == workloads::OuterDpSharding::Optim);
    CHECK(p.optimizer_shard_ranks() == p.dp);
  }
  // The other hybrid rows are HSDP.
  CHECK(scenario_of(row_at("training_dgxc_benchmarking.csv", 314)).parallel.outer_dp_sharding ==
        workloads::OuterDpSharding::NoShard);
}

TEST_CASE("analysis::memory_report_text: the MTP modules' routed experts show the expert-data-parallel divisor") {
  // Nemotron 3 Ultra on 256 GB300 (dp 256, EP 64: expert dp 4): the MTP experts' optimizer states
  // are divided by 4 (HFSDP: over the whole expert-data-parallel group), and the formula says so
  // with their own parameter count (it printed / dp 256 with 64x the parameters).
  const scenarios::ScenarioSpec spec = scenario_of(row_at("training_megatron_bridge.csv", 34));
  REQUIRE(spec.parallel.expert_dp() == 4);
  const std::string text = memory_report_text(memory_for_scenario(spec));
  const std::size_t at = text.find("MTP routed experts (/ep): optimizer states");
  REQUIRE(at != std::string::npos);
  const std::string line = text.substr(at, text.find('\n', at) - at);
  CAPTURE(line);
  CHECK(line.find("/ (dp/ep) 4") != std::string::npos);
  CHECK(line.find("/ dp 256") == std::string::npos);
}
