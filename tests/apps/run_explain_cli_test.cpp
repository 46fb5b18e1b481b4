// `clustersim run --explain`: the explanation follows the result, JSON gets an "explain" object,
// and a stage out of range is a usage error (exit 2) that says the valid range.
#include <doctest/doctest.h>

#include <string>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

namespace {
bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }
}  // namespace

TEST_CASE("apps::run --explain: text after the result, the parts agree with the iteration time") {
  const auto r = run_cli("run scenarios/library/llama3-8b-hgx-h100.toml --explain");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "iteration time"));
  CHECK(r.out.find("# explain:") > r.out.find("iteration time"));
  CHECK(has(r.out, "layer kind: dense, 32 on this stage"));
  CHECK(has(r.out, "gemm_eff_max"));
  CHECK(has(r.out, "kernel_launch_us"));
  CHECK(has(r.out, "agree"));
  const auto plain = run_cli("run scenarios/library/llama3-8b-hgx-h100.toml");
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(has(plain.out, "# explain:"));
}

TEST_CASE("apps::run --explain --format json: an explain object with the stages") {
  const auto r = run_cli("run scenarios/library/mixtral-8x7b-dgx-h100.toml --explain --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "\"explain\""));
  CHECK(has(r.out, "\"expert all-to-all\""));
  CHECK(has(r.out, "\"iteration_s\""));
}

TEST_CASE("apps::run --explain-stage out of range: exit 2 naming the stages there are") {
  const auto r = run_cli("run scenarios/library/mixtral-8x7b-dgx-h100.toml --explain --explain-stage 4");
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "--explain-stage 4"));
  CHECK(has(r.err, "choose 0..3"));
  const auto without = run_cli("run scenarios/library/mixtral-8x7b-dgx-h100.toml --explain-stage 1");
  CHECK(without.exit_code == 2);
  CHECK(has(without.err, "with --explain"));
}
