// [sync] bucket_params (a gradient bucket in parameters, as Megatron-Core's ddp.bucket_size counts
// it) and bucketing (which model chunks are cut): read, shown by --show-config, turned into bytes at
// the reduction's bytes a parameter, and bucket_params together with bucket_mb is an error at the
// key unless a --set of one overrides the file's other.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenario_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"
#include "workloads/training/gradient_buckets.h"

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario(const std::string& sync, const std::string& training = "") {
  return "[cluster]\nnode = \"dgx-h100\"\nnodes = 2\n[model]\npreset = \"llama3-8b\"\n[parallelism]\ndp = 16\n"
         "[training]\nglobal_batch = 16\n" + training + "[sync]\n" + sync;
}

}  // namespace

TEST_CASE("scenarios::parse_scenario: sync.bucket_params is read, shown and becomes bytes at the reduced bytes a parameter") {
  const ScenarioSpec mb = parse_scenario(scenario("bucket_mb = 100\n"), "s.toml");
  CHECK(mb.sync.bucket_params == 0);
  CHECK(mb.sync.bucketing == workloads::Bucketing::EveryChunk);
  const ScenarioSpec s = parse_scenario(scenario("bucket_params = 40e6\nbucketing = \"megatron-core\"\n"), "s.toml");
  CHECK(s.sync.bucket_params == 40e6);
  CHECK(s.sync.bucketing == workloads::Bucketing::MegatronCore);
  const std::string shown = show_config(s);
  CHECK(shown.find("bucket_params = 4") != std::string::npos);
  CHECK(shown.find("bucket_mb =") == std::string::npos);
  CHECK(shown.find("bucketing = \"megatron-core\"") != std::string::npos);
  // bf16 training reduces Megatron's fp32 main_grad: 4 bytes a parameter, so 160 MB a bucket.
  const workloads::BucketRule rule = workloads::BucketRule::of(s.parallel, s.training, s.sync);
  CHECK(rule.bucket_bytes == doctest::Approx(40e6 * 4));
  CHECK(rule.bucketing == workloads::Bucketing::MegatronCore);
  const ScenarioSpec fp16 = parse_scenario(scenario("bucket_params = 40e6\n", "precision = \"fp16\"\n"), "s.toml");
  CHECK(workloads::BucketRule::of(fp16.parallel, fp16.training, fp16.sync).bucket_bytes == doctest::Approx(40e6 * 2));
  // grad_dtype = "bf16" (Megatron grad_reduce_in_fp32 = False): the reduction carries 2 bytes a
  // parameter, so the same 40e6-parameter bucket is 80 MB.
  const ScenarioSpec bf16 = parse_scenario(scenario("bucket_params = 40e6\n", "grad_dtype = \"bf16\"\n"), "s.toml");
  const workloads::BucketRule half = workloads::BucketRule::of(bf16.parallel, bf16.training, bf16.sync);
  CHECK(half.grad_bytes == 2);
  CHECK(half.bucket_bytes == doctest::Approx(40e6 * 2));
  CHECK(testing::error_of(scenario("bucketing = \"every\"\n")).find("s.toml:11:") == 0);
}

TEST_CASE("scenarios::parse_scenario: bucket_params with bucket_mb is an error at the key, unless --set picks one") {
  const std::string both = scenario("bucket_mb = 100\nbucket_params = 40e6\n");
  const std::string e = testing::error_of(both);
  INFO(e);
  CHECK(e.find("s.toml:12:") == 0);
  CHECK(e.find("bucket_params = 4e+07 and bucket_mb = 100 both size the gradient bucket") != std::string::npos);
  // A --set of one key overrides the file's other.
  const ScenarioSpec by_mb = parse_scenario(both, "s.toml", {"sync.bucket_mb=50"});
  CHECK(by_mb.sync.bucket_params == 0);
  CHECK(by_mb.sync.bucket_mb == 50);
  const ScenarioSpec by_params = parse_scenario(scenario("bucket_mb = 100\n"), "s.toml", {"sync.bucket_params=1e6"});
  CHECK(by_params.sync.bucket_params == 1e6);
}
