// Bad command-line input: one clear line on stderr naming the flag, the value and the valid
// choices, and exit code 2 -- never a crash.
#include <doctest/doctest.h>

#include <sstream>

#include "cli_test_util.h"

using clustersim::testing::run_cli;

TEST_CASE("apps::collective: an unknown node preset is named with the valid presets, exit 2") {
  const auto r = run_cli("collective --node dgx-a99 --op allreduce");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--node 'dgx-a99'") != std::string::npos);
  CHECK(r.err.find("dgx-a100-80gb") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("apps::collective: a malformed size names the flag and the accepted forms, exit 2") {
  const auto r = run_cli("collective --node dgx-a100-80gb -b 12Q");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("-b '12Q'") != std::string::npos);
  CHECK(r.err.find("128M") != std::string::npos);
}

TEST_CASE("apps::collective: -b larger than -e is refused, exit 2") {
  const auto r = run_cli("collective --node dgx-a100-80gb -b 1G -e 1M");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("-b 1G is larger than -e 1M") != std::string::npos);
}

TEST_CASE("apps::collective: more GPUs than the cluster has is refused with the count, exit 2") {
  const auto r = run_cli("collective --node dgx-a100-80gb --nodes 2 --gpus 17");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--gpus 17") != std::string::npos);
  CHECK(r.err.find("has 16 GPUs") != std::string::npos);
}

TEST_CASE("apps::collective: unknown operation and algorithm list the valid ones, exit 2") {
  const auto op = run_cli("collective --node dgx-a100-80gb --op allreduse");
  CHECK(op.exit_code == 2);
  CHECK(op.err.find("allreduce") != std::string::npos);
  const auto algo = run_cli("collective --node dgx-a100-80gb --algo rign");
  CHECK(algo.exit_code == 2);
  CHECK(algo.err.find("halving-doubling") != std::string::npos);
}

TEST_CASE("apps::topo: an unknown --fabric lists the fabrics from their table, exit 2") {
  const auto r = run_cli("topo --node dgx-h100 --nodes 2 --fabric dragonfly");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--fabric 'dragonfly': expected one of fat-tree, rail-optimized, single-switch") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("apps::topo: --fabric and --routing shape the cluster as the scenario keys do") {
  const auto single = run_cli("topo --node dgx-h100 --nodes 2 --fabric single-switch --routing flow-hash --json");
  const auto rail = run_cli("topo --node dgx-h100 --nodes 2 --json");
  CHECK(single.exit_code == 0);
  CHECK(rail.exit_code == 0);
  CHECK(single.out != rail.out);  // one switch instead of rail leaves
}

TEST_CASE("apps::collective: an unknown --routing lists the two policies, exit 2") {
  const auto r = run_cli("collective --node dgx-h100 --nodes 2 --routing adaptive");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--routing 'adaptive'") != std::string::npos);
  CHECK(r.err.find("flow-hash") != std::string::npos);
}

TEST_CASE("apps::topo: an unknown node preset exits 2 and unknown verbs exit 2") {
  CHECK(run_cli("topo --node nope").exit_code == 2);
  CHECK(run_cli("frobnicate").exit_code == 2);
}

TEST_CASE("apps::collective: the DGX A100 1 GiB ring all-reduce row has busbw within 200-240 GB/s") {
  const auto r = run_cli("collective --node dgx-a100-80gb --op allreduce --algo ring -b 1G -e 1G --format json");
  REQUIRE(r.exit_code == 0);
  const auto pos = r.out.find("\"busbw\":");
  REQUIRE(pos != std::string::npos);
  const double busbw = std::stod(r.out.substr(pos + 8));
  CHECK(busbw >= 200.0);
  CHECK(busbw <= 240.0);
}

TEST_CASE("apps::topo: the DGX A100 matrix shows NV12 and the PCIe server shows PIX, PHB and SYS") {
  const auto dgx = run_cli("topo --node dgx-a100-80gb --matrix");
  REQUIRE(dgx.exit_code == 0);
  CHECK(dgx.out.find("NV12") != std::string::npos);
  const auto pcie = run_cli("topo --node 8x-a100-pcie --matrix");
  REQUIRE(pcie.exit_code == 0);
  CHECK(pcie.out.find("PIX") != std::string::npos);
  CHECK(pcie.out.find("PHB") != std::string::npos);
  CHECK(pcie.out.find("SYS") != std::string::npos);
}

TEST_CASE("apps::collective: the same command prints byte-identical output") {
  const std::string args = "collective --node dgx-h100 --nodes 2 --op allreduce -b 1M -e 256M -f 4";
  const auto a = run_cli(args);
  const auto b = run_cli(args);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
}

TEST_CASE("apps::collective: every algorithm a refusal suggests runs on the same cluster") {
  // A refusal that suggests an algorithm which is refused too sends the user in circles. The
  // suggestions are read from the message ("use a, b or c") and each is run on the same cluster.
  for (const char* cluster : {"--node 2x-rtx4090-pcie4 --nodes 1", "--node dgx-a100-80gb --nodes 1"}) {
    const std::string base = std::string("collective ") + cluster + " --op allreduce -b 1M -e 1M --algo ";
    const auto refused = clustersim::testing::run_cli(base + "hierarchical");
    REQUIRE(refused.exit_code == 2);
    const std::size_t use = refused.err.find("; use ");
    REQUIRE(use != std::string::npos);
    std::string list = refused.err.substr(use + 6);
    list = list.substr(0, list.find('\n'));
    for (char& c : list) {
      if (c == ',') c = ' ';
    }
    std::istringstream words(list);
    int suggested = 0;
    for (std::string algo; words >> algo;) {
      if (algo == "or") continue;
      ++suggested;
      INFO(cluster << ": suggested --algo " << algo);
      CHECK(clustersim::testing::run_cli(base + algo).exit_code == 0);
    }
    CHECK(suggested >= 2);
  }
}

TEST_CASE("apps: --version prints the version; a mistyped verb or flag gets a did-you-mean") {
  const auto v = clustersim::testing::run_cli("--version");
  CHECK(v.exit_code == 0);
  CHECK(v.out.rfind("clustersim ", 0) == 0);
  const auto verb = clustersim::testing::run_cli("colective --node dgx-h100");
  CHECK(verb.exit_code == 2);
  CHECK(verb.err.find("did you mean 'collective'?") != std::string::npos);
  const auto flag = clustersim::testing::run_cli("collective --node dgx-h100 --explian");
  CHECK(flag.exit_code == 2);
  CHECK(flag.err.find("did you mean '--explain'?") != std::string::npos);
}

TEST_CASE("apps::collective: --nccl-version and --nvls refuse what they do not know, exit 2") {
  const auto r = run_cli("collective --node dgx-b200 --nccl-version 2.18");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--nccl-version '2.18'") != std::string::npos);
  CHECK(r.err.find("2.24.3, 2.25.1") != std::string::npos);
  CHECK(r.out.empty());
  const auto n = run_cli("collective --node dgx-b200 --nvls maybe");
  CHECK(n.exit_code == 2);
  CHECK(n.err.find("--nvls 'maybe'") != std::string::npos);
}
