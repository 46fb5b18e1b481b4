// `clustersim run --dmon/-e/-d` and `--report` from the command line.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "cli_test_util.h"

using clustersim::testing::run_cli;
using clustersim::testing::slurp;

TEST_CASE("apps::run: --dmon writes dcgmi dmon samples and --report a self-contained HTML file") {
  const std::string dmon = "/tmp/clustersim_run_dmon_test.txt", html = "/tmp/clustersim_run_report_test.html";
  const auto r = run_cli("run scenarios/library/gpt3-2.7b-a100-nvlink-bridge.toml --dmon " + dmon +
                         " -e 203,100 -d 500 --report " + html);
  REQUIRE(r.exit_code == 0);
  const std::string samples = slurp(dmon);
  CHECK(samples.find("#Entity         GPUTL             SMCLK") != std::string::npos);
  CHECK(samples.find("\nGPU 0           ") != std::string::npos);
  const std::string page = slurp(html);
  CHECK(page.find("<svg") != std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  std::remove(dmon.c_str());
  std::remove(html.c_str());
}

TEST_CASE("apps::run: an unknown dmon field id or a period under 1 ms is exit 2 before simulating") {
  const auto bad = run_cli("run scenarios/library/gpt3-2.7b-a100-nvlink-bridge.toml --dmon /tmp/x.txt -e 203,9999");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("9999") != std::string::npos);
  CHECK(bad.err.find("203 (GPUTL)") != std::string::npos);
  const auto fast = run_cli("run scenarios/library/gpt3-2.7b-a100-nvlink-bridge.toml --dmon /tmp/x.txt -d 0.5");
  CHECK(fast.exit_code == 2);
  CHECK(fast.err.find("-d") != std::string::npos);
}
