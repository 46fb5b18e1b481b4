// Hybrid sharded data parallelism ([parallelism] shard_group): the sharded states divide over a
// group of consecutive data-parallel ranks, the groups replicate them, and the gradient shard is
// all-reduced across the groups. shard_group = dp is the plain sharded run, byte for byte.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analysis/run_report.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;

namespace {

// Llama 3 8B on two DGX H100, dp = 16 (one tp rank per GPU), the distributed optimizer.
const std::string kDistOpt =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"llama3-8b\"\n"
    "[parallelism]\ntp = 1\npp = 1\ndp = 16\ndistributed_optimizer = true\n"
    "[training]\nglobal_batch = 32\nmicro_batch = 1\n";

// GPT-3 1.3B fully sharded (ZeRO-3) over two DGX H100.
const std::string kFsdp =
    "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"gpt3-1.3b\"\n"
    "[parallelism]\ntp = 1\npp = 1\ndp = 16\nzero = 3\n[training]\nglobal_batch = 32\nmicro_batch = 2\nprecision = \"bf16\"\n";

analysis::RunReport run(const std::string& body, std::vector<std::string> sets) {
  analysis::RunOptions o;
  o.ignore_memory = true;
  return analysis::run_scenario(scenarios::parse_scenario(body, "hsdp.toml", sets), o);
}

std::string error_of(const std::string& body, std::vector<std::string> sets) {
  try {
    (void)scenarios::parse_scenario(body, "hsdp.toml", sets);
  } catch (const scenarios::ScenarioError& e) {
    return e.format();
  }
  return "(no error)";
}

void check_same(const analysis::RunReport& a, const analysis::RunReport& b) {
  CHECK(a.iteration.iteration_time_s == b.iteration.iteration_time_s);
  CHECK(a.iteration.dp_bytes_per_gpu == b.iteration.dp_bytes_per_gpu);
  CHECK(a.iteration.breakdown.dp_exposed == b.iteration.breakdown.dp_exposed);
  CHECK(a.iteration.breakdown.dp_overlapped == b.iteration.breakdown.dp_overlapped);
  CHECK(a.memory.breakdown.params.value == b.memory.breakdown.params.value);
  CHECK(a.memory.breakdown.grads.value == b.memory.breakdown.grads.value);
  CHECK(a.memory.breakdown.optimizer.value == b.memory.breakdown.optimizer.value);
  CHECK(a.memory.required == b.memory.required);
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: shard_group must divide dp and needs sharded states") {
  CHECK(scenarios::parse_scenario(kDistOpt, "hsdp.toml", {"parallelism.shard_group=8"}).parallel.shard_instances == 2);
  CHECK(scenarios::parse_scenario(kDistOpt, "hsdp.toml", {"parallelism.shard_group=16"}).parallel.shard_instances == 1);
  CHECK(scenarios::parse_scenario(kDistOpt, "hsdp.toml", {}).parallel.shard_instances == 1);
  const std::string bad = error_of(kDistOpt, {"parallelism.shard_group=3"});
  CHECK(bad.find("parallelism.shard_group=3: error: shard_group = 3 does not divide dp = 16") != std::string::npos);
  const std::string unsharded = error_of(kDistOpt, {"parallelism.distributed_optimizer=false", "parallelism.shard_group=8"});
  CHECK(unsharded.find("shard_group = 8 needs sharded states") != std::string::npos);
  CHECK(error_of(kDistOpt, {"parallelism.shard_group=1"}).find("shard_group = 1 shards nothing") != std::string::npos);
  // show_config writes the key back, and the text loads to the same layout.
  const auto spec = scenarios::parse_scenario(kDistOpt, "hsdp.toml", {"parallelism.shard_group=4"});
  const std::string shown = scenarios::show_config(spec);
  CHECK(shown.find("shard_group = 4") != std::string::npos);
  CHECK(scenarios::parse_scenario(shown, "shown.toml").parallel.shard_instances == 4);
  // In a file: the error names the file and line of the key.
  const std::string body = "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"llama3-8b\"\n"
                           "[parallelism]\ntp = 1\ndp = 16\nzero = 1\nshard_group = 5\n"
                           "[training]\nglobal_batch = 32\nmicro_batch = 1\n";
  CHECK(error_of(body, {}).find("hsdp.toml:10") != std::string::npos);
}

TEST_CASE("analysis::run_scenario: shard_group = dp is the plain sharded run, byte for byte") {
  check_same(run(kDistOpt, {"parallelism.shard_group=16"}), run(kDistOpt, {}));
  check_same(run(kFsdp, {"parallelism.shard_group=16"}), run(kFsdp, {}));
}

TEST_CASE("analysis::run_scenario: a smaller shard_group keeps dp / shard_group copies of the sharded states") {
  const auto flat = run(kDistOpt, {});
  const auto hsdp = run(kDistOpt, {"parallelism.shard_group=8"});
  // The distributed optimizer shards only the optimizer states: 16 ways -> 8 ways, twice the bytes.
  CHECK(hsdp.memory.breakdown.optimizer.value == doctest::Approx(2.0 * flat.memory.breakdown.optimizer.value));
  CHECK(hsdp.memory.breakdown.params.value == flat.memory.breakdown.params.value);
  CHECK(hsdp.memory.breakdown.grads.value == flat.memory.breakdown.grads.value);
  const auto fsdp = run(kFsdp, {});
  const auto hfsdp = run(kFsdp, {"parallelism.shard_group=4"});
  CHECK(hfsdp.memory.breakdown.params.value == doctest::Approx(4.0 * fsdp.memory.breakdown.params.value));
  CHECK(hfsdp.memory.breakdown.grads.value == doctest::Approx(4.0 * fsdp.memory.breakdown.grads.value));
  CHECK(hfsdp.memory.breakdown.optimizer.value == doctest::Approx(4.0 * fsdp.memory.breakdown.optimizer.value));
}

TEST_CASE("analysis::run_scenario: hybrid sharding's bytes per GPU follow reduce-scatter + all-reduce of the shard + all-gather") {
  // Distributed optimizer, bucket bytes B over N = n x m ranks: flat 2(N-1)/N B; hybrid
  // (n-1)/n B + 2(m-1)/m B/n + (n-1)/n B = 2(nm-1)/(nm) B, the same bytes (on other links).
  const auto flat = run(kDistOpt, {});
  const auto hsdp = run(kDistOpt, {"parallelism.shard_group=8"});
  CHECK(hsdp.iteration.dp_bytes_per_gpu == doctest::Approx(flat.iteration.dp_bytes_per_gpu).epsilon(1e-12));
  // ZeRO-3 per layer and micro-batch with P parameters: gathers (2 x 2 B/param) and reduce-scatter
  // (g B/param) over the group, (n-1)/n, plus the shard's all-reduce 2(m-1)/m x g P / n.
  const auto fsdp = run(kFsdp, {});
  const auto hfsdp = run(kFsdp, {"parallelism.shard_group=4"});
  const double N = 16, n = 4, m = 4, a = 2, g = 4;  // bf16 weights, fp32 gradient reduction
  const double flat_per = (2 * a + g) * (N - 1) / N;
  const double hsdp_per = (2 * a + g) * (n - 1) / n + g * 2 * (m - 1) / m / n;
  CHECK(hfsdp.iteration.dp_bytes_per_gpu == doctest::Approx(fsdp.iteration.dp_bytes_per_gpu * hsdp_per / flat_per));
  // With 2a = g (bf16 gathers, fp32 reduction) that is 2g(nm-1)/(nm), the flat bytes again; with
  // fp16 reduction (g = 2) the group's gathers send less than the flat ones.
  const auto fsdp16 = run(kFsdp, {"training.precision=fp16"});
  const auto hfsdp16 = run(kFsdp, {"training.precision=fp16", "parallelism.shard_group=4"});
  const double flat16 = (2 * a + 2) * (N - 1) / N, hsdp16 = (2 * a + 2) * (n - 1) / n + 2 * 2 * (m - 1) / m / n;
  CHECK(hfsdp16.iteration.dp_bytes_per_gpu == doctest::Approx(fsdp16.iteration.dp_bytes_per_gpu * hsdp16 / flat16));
  CHECK(hfsdp16.iteration.dp_bytes_per_gpu < fsdp16.iteration.dp_bytes_per_gpu);
}

TEST_CASE("analysis::run_scenario: hybrid sharding's reduction is exposed without overlap and partly hidden with it") {
  // No overlap: the whole reduction is exposed. A shard group of 8 = one DGX: the reduce-scatter
  // and all-gather on NVLink, 1/8 of the bytes all-reduced across the two nodes. Not faster than
  // the flat ring here: NCCL's flat ring already drives all 8 NICs (bus bandwidth = the NICs'),
  // and the NVLink reduce-scatter runs before the all-reduce; both within a few x of each other.
  const std::vector<std::string> serial{"sync.overlap_grad_reduce=false", "sync.overlap_param_gather=false"};
  auto with = serial;
  with.push_back("parallelism.shard_group=8");
  const auto flat = run(kDistOpt, serial);
  const auto hsdp = run(kDistOpt, with);
  REQUIRE(flat.iteration.breakdown.dp_exposed > 0.0);
  CHECK(hsdp.iteration.breakdown.dp_exposed > 0.0);
  CHECK(hsdp.iteration.breakdown.dp_exposed < 2.0 * flat.iteration.breakdown.dp_exposed);
  CHECK(hsdp.iteration.breakdown.dp_exposed > 0.5 * flat.iteration.breakdown.dp_exposed);
  CHECK(hsdp.iteration.breakdown.dp_exposed < hsdp.iteration.iteration_time_s);
  // Overlapped as the plain run: with overlap on, part of it hides behind the backward.
  const auto over = run(kDistOpt, {"parallelism.shard_group=8"});
  CHECK(over.iteration.breakdown.dp_overlapped > 0.0);
  CHECK(over.iteration.breakdown.dp_exposed < hsdp.iteration.breakdown.dp_exposed);
  CHECK(over.iteration.iteration_time_s <= hsdp.iteration.iteration_time_s + over.iteration.breakdown.overlap_sm_cost + 1e-9);
}

TEST_CASE("analysis::run_scenario: outer_dp_sharding optim splits only the optimizer states across the groups") {
  // Megatron-FSDP HFSDP: parameters and gradients sharded in the group of 4, the optimizer states
  // over all 16 ranks (the flat run's), the optimizer step on the flat run's shard.
  const auto fsdp = run(kFsdp, {});
  const auto hsdp = run(kFsdp, {"parallelism.shard_group=4"});
  const auto hfsdp = run(kFsdp, {"parallelism.shard_group=4", "parallelism.outer_dp_sharding=\"optim\""});
  CHECK(hfsdp.memory.breakdown.params.value == hsdp.memory.breakdown.params.value);
  CHECK(hfsdp.memory.breakdown.grads.value == hsdp.memory.breakdown.grads.value);
  CHECK(hfsdp.memory.breakdown.optimizer.value == doctest::Approx(fsdp.memory.breakdown.optimizer.value));
  CHECK(hfsdp.memory.breakdown.optimizer.value == doctest::Approx(hsdp.memory.breakdown.optimizer.value / 4.0));
  CHECK(hfsdp.iteration.breakdown.optimizer == doctest::Approx(fsdp.iteration.breakdown.optimizer));
  CHECK(hfsdp.iteration.breakdown.optimizer < hsdp.iteration.breakdown.optimizer);
  // "no_shard" is the default.
  check_same(run(kFsdp, {"parallelism.shard_group=4", "parallelism.outer_dp_sharding=\"no_shard\""}), hsdp);
}

TEST_CASE("scenarios::parse_scenario: outer_dp_sharding optim needs groups and zero 3") {
  const auto spec = scenarios::parse_scenario(kFsdp, "hsdp.toml", {"parallelism.shard_group=4", "parallelism.outer_dp_sharding=\"optim\""});
  CHECK(spec.parallel.outer_dp_sharding == workloads::OuterDpSharding::Optim);
  CHECK(spec.parallel.optimizer_shard_ranks() == 16);
  CHECK(spec.parallel.shard_ranks() == 4);
  const std::string shown = scenarios::show_config(spec);
  CHECK(shown.find("outer_dp_sharding = \"optim\"") != std::string::npos);
  CHECK(scenarios::parse_scenario(shown, "shown.toml").parallel.optimizer_shard_ranks() == 16);
  CHECK(error_of(kFsdp, {"parallelism.outer_dp_sharding=\"optim\""}).find("there is one group") != std::string::npos);
  CHECK(error_of(kFsdp, {"parallelism.shard_group=16", "parallelism.outer_dp_sharding=\"optim\""}).find("there is one group") !=
        std::string::npos);
  CHECK(error_of(kDistOpt, {"parallelism.shard_group=8", "parallelism.outer_dp_sharding=\"optim\""}).find("needs zero = 3") !=
        std::string::npos);
  CHECK(error_of(kFsdp, {"parallelism.outer_dp_sharding=\"optimizer\""}).find("outer_dp_sharding") != std::string::npos);
}

TEST_CASE("analysis::run_scenario: hybrid sharding splits the expert-data-parallel group like the data-parallel one") {
  // Mixtral 8x7B (4 layers) at dp 16: ep 4 leaves expert groups of 4, split into 2 shard groups of
  // 2 with shard_group = 8; ep 8 leaves groups of 2, one rank each; 4 instances do not divide 2.
  const std::string moe =
      "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"mixtral-8x7b\"\nlayers = 4\nseq_len = 256\n"
      "[parallelism]\ntp = 1\npp = 1\ndp = 16\ndistributed_optimizer = true\n"
      "[training]\nglobal_batch = 16\nmicro_batch = 1\n";
  const analysis::RunReport flat = run(moe, {"parallelism.ep=4"});
  const analysis::RunReport hsdp = run(moe, {"parallelism.ep=4", "parallelism.shard_group=8"});
  // Per byte of a bucket: 2(n-1)/n in the shard group of n and 2(m-1)/m/n across the m groups, the
  // same total as 2(N-1)/N on the whole group of N = n m, per group (dense N = 16, expert N = 4).
  CHECK(hsdp.iteration.dp_bytes_per_gpu == doctest::Approx(flat.iteration.dp_bytes_per_gpu).epsilon(1e-12));
  CHECK(hsdp.iteration.iteration_time_s != flat.iteration.iteration_time_s);
  CHECK(hsdp.iteration.iteration_time_s > 0);
  const analysis::RunReport one = run(moe, {"parallelism.ep=8", "parallelism.shard_group=8"});
  CHECK(one.iteration.iteration_time_s > 0);
  CHECK(error_of(moe, {"parallelism.ep=8", "parallelism.shard_group=4"})
            .find("do not divide the expert-data-parallel group of 2 ranks") != std::string::npos);
}
