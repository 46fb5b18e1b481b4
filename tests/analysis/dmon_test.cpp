// `run --dmon`: dcgmi dmon's layout (hardware.md section 4.2) and GPUTL against the busy share.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/dmon.h"
#include "topology/builders.h"
#include "run_outputs_test_util.h"

using namespace clustersim;

namespace {
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Splits a dmon line into its columns: 16 characters, then 18 per field.
std::vector<std::string> columns(const std::string& line, int fields) {
  std::vector<std::string> out{line.substr(0, 16)};
  for (int f = 0; f < fields; ++f) out.push_back(line.substr(16 + 18 * static_cast<std::size_t>(f), 18));
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}
}  // namespace

TEST_CASE("analysis::dmon: the header is #Entity in 16 columns, then each short name in 16 + 2, then an ID line") {
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4));
  analysis::DmonOptions o;
  o.fields = {203, 204, 1011, 1012, 155};
  const auto lines = lines_of(analysis::dmon_text(r, o));
  REQUIRE(lines.size() >= 5);
  CHECK(lines[0].rfind("# ", 0) == 0);  // the comment saying replicas are folded
  CHECK(lines[0].find("folded") != std::string::npos);
  CHECK(lines[1] == "#Entity         GPUTL             MCUTL             NVLTX             NVLRX             POWER             ");
  CHECK(lines[2] == std::string("ID") + std::string(14 + 5 * 18, ' '));
  // One row per pipeline rank's representative GPU: global GPU 0 (rank 0) and 8 (rank 1), each GPU 0
  // of its host as dcgmi numbers them, the host named first on a multi-node cluster.
  CHECK(trim(columns(lines[3], 5)[0]) == "node0 GPU 0");
  CHECK(trim(columns(lines[4], 5)[0]) == "node1 GPU 0");
  CHECK(lines[3].size() == 16 + 5 * 18);
}

TEST_CASE("analysis::dmon: the header repeats every 14 rows") {
  // Several iterations sampled every millisecond: many samples x 2 GPUs.
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 8) + "iterations = 4\n");
  analysis::DmonOptions o;
  o.fields = {203};
  o.period_ms = 1;
  const auto lines = lines_of(analysis::dmon_text(r, o));
  std::vector<std::size_t> headers;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("#Entity", 0) == 0) headers.push_back(i);
  }
  const std::size_t rows = lines.size() - 1 - 2 * headers.size();
  REQUIRE(rows > 3 * 14);
  CHECK(headers.size() == (rows + 13) / 14);
  for (std::size_t h = 0; h + 1 < headers.size(); ++h) CHECK(headers[h + 1] - headers[h] == 2 + 14);
  for (std::size_t h : headers) CHECK(lines[h + 1].rfind("ID", 0) == 0);
}

TEST_CASE("analysis::dmon: GPUTL is the share of the period the compute stream is busy") {
  // Two pipeline ranks, four micro-batches, one sample covering the whole iteration: GPUTL is
  // 100 x (passes + optimizer) / iteration time for each rank; the critical rank's busy time is
  // compute + tensor-parallel + optimizer of the breakdown.
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4));
  analysis::DmonOptions o;
  o.fields = {203, 204, 155};
  o.period_ms = std::ceil(r.iteration.simulated_s * 1e3) + 1;
  const auto lines = lines_of(analysis::dmon_text(r, o));
  REQUIRE(lines.size() == 1 + 2 + 2);
  const auto& b = r.iteration.breakdown;
  const double t = r.iteration.simulated_s;
  const double critical_busy = (b.compute + b.tp_comm + b.optimizer) / t;
  for (int rank = 0; rank < 2; ++rank) {
    const auto cols = columns(lines[3 + static_cast<std::size_t>(rank)], 3);
    const int gputl = std::stoi(cols[1]);
    CHECK(gputl <= 100);
    // Busy and memory-busy time of the rank's compute stream; MCUTL weighs each span by the share
    // of it with device memory read or written.
    double busy = 0, memory = 0;
    for (const auto& s : r.iteration.timeline) {
      if (s.rank == rank && s.stream == 0 && s.kind != workloads::SpanKind::TensorParallel) {
        busy += s.end_s - s.start_s;
        memory += (s.end_s - s.start_s) * s.memory_busy;
      }
    }
    CHECK(busy > 0);
    CHECK(busy <= t * (1 + 1e-12));
    CHECK(gputl == std::lround(100 * busy / t));
    if (rank == r.iteration.critical_rank) CHECK(gputl == std::lround(100 * critical_busy));
    const int mcutl = std::stoi(cols[2]);
    CHECK(mcutl == std::lround(100 * memory / t));
    CHECK(mcutl <= gputl);
    // POWER: TDP x (0.3 + 0.7 x busy) with the A100 SXM's 400 W, so between 120 W and 400 W.
    const double power = std::stod(cols[3]);
    CHECK(power == doctest::Approx(400 * (0.3 + 0.7 * busy / t)).epsilon(1e-3));
    CHECK(power > 120.0);
    CHECK(power <= 400.0);
  }
  // The first rank idles in the pipeline's bubble, so it is not busy all the time.
  CHECK(std::stoi(columns(lines[3], 3)[1]) < 100);
}

TEST_CASE("analysis::dmon: NVLink throughput is the tensor-parallel traffic of the GPU's links") {
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4));
  analysis::DmonOptions o;
  o.fields = {1011, 1012, 1009};
  o.period_ms = std::ceil(r.iteration.simulated_s * 1e3) + 1;
  const auto lines = lines_of(analysis::dmon_text(r, o));
  REQUIRE(lines.size() == 5);
  const auto cols = columns(lines[3], 3);
  const double t = r.iteration.simulated_s;
  // tp = 8 inside the node: traffic both ways on GPU 0's NVLink, never more than the links carry.
  const auto topo = topology::build_cluster(r.spec.cluster);
  double nvlink_Bps = 0;
  for (topology::LinkId l : topo.out_links(topo.gpu(0))) {
    if (topo.link(l).kind == topology::LinkKind::NvLink) nvlink_Bps += topo.link(l).bandwidth.value;
  }
  REQUIRE(nvlink_Bps > 0);
  const double nvltx = std::stod(cols[1]), nvlrx = std::stod(cols[2]);
  CHECK(nvltx > 0);
  CHECK(nvltx <= nvlink_Bps);
  CHECK(nvlrx > 0);
  CHECK(nvlrx <= nvlink_Bps);
  // Rank 0 sends its share of each micro-batch's activations through its NIC over PCIe: 4
  // micro-batches x (1 sample x 2048 tokens x hidden 768 x 2 bytes) / tp 8 = 4 x 393216 bytes.
  CHECK(std::stod(cols[3]) == doctest::Approx(4 * 393216.0 / t).epsilon(1e-6));
}

TEST_CASE("analysis::dmon: an unknown field id is an error that lists the supported ones") {
  CHECK(analysis::parse_dmon_fields("203,204") == std::vector<int>{203, 204});
  try {
    analysis::parse_dmon_fields("203,999");
    FAIL("expected an error");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("999") != std::string::npos);
    CHECK(what.find("203 (GPUTL)") != std::string::npos);
    CHECK(what.find("1011 (NVLTX)") != std::string::npos);
  }
  CHECK_THROWS_AS(analysis::parse_dmon_fields("203,"), std::invalid_argument);
  CHECK_THROWS_AS(analysis::parse_dmon_fields("gputl"), std::invalid_argument);
}

TEST_CASE("analysis::dmon: SMACT, TENSO and DRAMA are ratios from the simulated passes, TENSO below SMACT") {
  // One sample over the whole run: each ratio is the share of the period with SMs, tensor pipes or
  // DRAM busy. A GPT-style model spends most of its compute in GEMMs, so TENSO is a large part of
  // SMACT but below it (matmuls do not reach the tensor peak; norms and pointwise ops use none).
  // This tiny layout (GPT-3 125M over tp 8) is bound by the host's Transformer Engine module work
  // (te_module_host_us), which SMACT, read off the passes, would count as kernel time: without it
  // the passes are their kernels, the premise here.
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4) + "[model_constants]\nte_module_host_us = 0\n");
  analysis::DmonOptions o;
  o.fields = {203, 1002, 1004, 1005};
  o.period_ms = std::ceil(r.iteration.simulated_s * 1e3) + 1;
  const auto lines = lines_of(analysis::dmon_text(r, o));
  REQUIRE(lines.size() == 1 + 2 + 2);
  CHECK(lines[1].find("SMACT             TENSO             DRAMA") != std::string::npos);
  for (std::size_t row = 3; row < 5; ++row) {
    const auto c = columns(lines[row], 4);
    const double gputl = std::stod(c[1]), smact = std::stod(c[2]), tenso = std::stod(c[3]), drama = std::stod(c[4]);
    CAPTURE(lines[row]);
    CHECK(c[2].find('.') != std::string::npos);  // doubles, 3 decimals
    CHECK(smact > 0.05);
    CHECK(smact <= gputl / 100.0 + 1e-3);        // compute is part of the busy compute stream
    CHECK(tenso > 0.2 * smact);
    CHECK(tenso < smact);
    CHECK(drama > 0.0);
    CHECK(drama < 1.0);
  }
}

TEST_CASE("analysis::dmon: on one node the rows are dcgmi's own GPU ids, without a host") {
  const auto r = testing::run_with_timeline(
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[model]\npreset = \"gpt3-125m\"\nheads = 16\nkv_heads = 16\n"
      "[parallelism]\ntp = 4\npp = 2\n[training]\nglobal_batch = 4\nmicro_batch = 1\n");
  analysis::DmonOptions o;
  o.fields = {203};
  o.period_ms = std::ceil(r.iteration.simulated_s * 1e3) + 1;
  const auto lines = lines_of(analysis::dmon_text(r, o));
  REQUIRE(lines.size() == 5);
  CHECK(trim(columns(lines[3], 1)[0]) == "GPU 0");
  CHECK(trim(columns(lines[4], 1)[0]) == "GPU 4");
}
