// `clustersim collective`: one collective over a range of sizes, like nccl-tests.
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "analysis/collective_report.h"
#include "analysis/run.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"
#include "sim/enum_names.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/routing.h"
#include "scenarios/loader.h"
#include "scenarios/scenario_error.h"
#include "workloads/collectives/collective_explain.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/collectives/host_launch.h"
#include "workloads/collectives/nccl_constants.h"
#include "workloads/collectives/nccl_release.h"

namespace clustersim::apps {
namespace {

// Limits that keep one command within seconds to minutes and bounded memory (docs/cli.md, Limits).
// Sizes: nccl-tests' sweeps print tens of rows (-b 8 -e 8G -f 2 is 31); a thousand is a sweep no
// one reads, and -f 1.000001 would be millions of simulations.
constexpr double kMaxSizes = 1000;
// Transfers one size may simulate: ranks x 2 (ranks - 1) steps x channels x chunks, the estimate
// the collective memo uses (exact for a ring all-reduce). Measured: a 64-GPU ring all-reduce of 1 GiB
// (16 channels, --chunks 16) is 2.06 M transfers in 0.5 s and 20 MB, so 2e8 transfers is about a
// minute; more is refused up front.
constexpr double kMaxTransfers = 2e8;

// How many sizes -b lo -e hi -f factor visits (the loop below: lo, lo*f, ... up to hi).
double size_count(double lo, double hi, double factor) {
  return std::floor(std::log(hi / lo) / std::log(factor) + 1e-9) + 1;
}

void check_budget(int gpus, int channels, int chunks) {
  const double n = gpus;
  const double estimate = n * 2 * (n - 1) * std::max(channels, 1) * std::max(chunks, 1);
  if (estimate <= kMaxTransfers) return;
  throw CliError(fmt::format(
      "{} GPUs{}{} need at least {:.3g} transfers per size, more than the {:.0e} one collective may simulate "
      "(docs/cli.md, Limits); use fewer --gpus{}",
      gpus, channels > 0 ? fmt::format(" x --channels {}", channels) : "",
      chunks > 0 ? fmt::format(" x --chunks {}", chunks) : "", estimate, kMaxTransfers,
      channels > 0 || chunks > 0 ? ", --channels or --chunks" : ""));
}

// The lines nccl-tests prints above its table: its parameters (this is one simulated iteration,
// no warm-up, no data check) and one line per rank with its host and device.
std::vector<std::string> nccl_tests_preamble(const topology::ClusterSpec& spec, int gpus, double lo, double hi,
                                             double factor) {
  std::vector<std::string> lines{
      fmt::format("nThread 1 nGpus {} minBytes {:.0f} maxBytes {:.0f} step: {:g}(factor) warmup iters: 0 iters: 1 "
                  "agg iters: 1 validation: 0 graph: 0",
                  gpus, lo, hi, factor),
      "", "Using devices"};
  const topology::GpuSpec* gpu = topology::find_gpu(spec.node.gpu);
  const int per_node = std::max(spec.node.gpus, 1);
  for (int r = 0; r < gpus; ++r) {
    lines.push_back(fmt::format(" Rank {:>2} Group  0 on {:>10} device {:>2} {}", r, fmt::format("node{}", r / per_node),
                                r % per_node, gpu != nullptr ? gpu->name : spec.node.gpu));
  }
  return lines;
}

}  // namespace

int verb_collective(int argc, char** argv) {
  CLI::App app{"Simulate one collective over a range of sizes; prints nccl-tests' columns.", "clustersim collective"};
  std::string scenario_path, inter_name = "ring";
  bool explain = false, extra_columns = false, check = false;
  std::string op_name = "allreduce", algo_name, proto_name, format = "text";
  std::string min_size = "8", max_size = "128M", nccl_version, nvls_switch;
  int gpus = 0, chunks = 0, channels = 0, gpus_per_thread = 0;
  double factor = 2;
  ClusterFlags cluster;
  app.add_option("scenario", scenario_path, "SCENARIO.toml whose [cluster] to use (instead of --node)");
  cluster.add_to(app);
  app.add_flag("--check", check, "check each simulation's invariants (bytes, link capacity, time, bandwidth bound); exit 4 when one fails");
  app.add_flag("--explain", explain, "explain the first size (-b): NCCL's view, cost table, steps, bottleneck");
  app.add_option("--inter", inter_name, "hierarchical: algorithm of the inter-node stage (ring | tree | in-network | auto)");
  app.add_option("--gpus", gpus, "use the first N GPUs (default: all)");
  app.add_option("--op", op_name, "allreduce | allgather | reducescatter | broadcast | reduce | alltoall | sendrecv");
  app.add_option("--algo", algo_name,
                 "ring | tree | halving-doubling | hierarchical | direct | in-network | auto; several, comma-separated, "
                 "to compare them side by side (default: ring; direct for alltoall and sendrecv)");
  app.add_option("-b,--minbytes", min_size, "smallest size (8, 1K, 128M, 8G: powers of 1024)");
  app.add_option("-e,--maxbytes", max_size, "largest size");
  app.add_option("-f,--stepfactor", factor, "multiply the size by this factor between rows");
  app.add_option("--chunks", chunks, "pipelining chunks per step (default: by size)");
  app.add_option("--channels", channels, "parallel rings/trees (default: from the topology)");
  app.add_option("--proto", proto_name, "LL | LL128 | Simple (default: what NCCL's tuner picks for the size)");
  app.add_option("--format", format, "text | json");
  app.add_option("--nccl-version", nccl_version,
                 "the NCCL release whose rules to follow (2.25, 2.25.1, v2.26.2-1: NVLS channels, NVLSTree latency, "
                 "NVLS cost model; nccl_release.h); between two known ones the earlier; default 2.30.7");
  app.add_option("--nvls", nvls_switch, "on | off: off is NCCL_NVLS_ENABLE=0 (no NVLS nor NVLSTree)");
  app.add_option("--gpus-per-thread", gpus_per_thread,
                 "time as nccl-tests -g N measures it: one thread issues each collective on N GPUs, iterations "
                 "pipelined: max(device time, N x (kernel launch + NCCL's per-channel enqueue)); default: device time");
  app.add_flag("--extra-columns", extra_columns,
                "text: append clustersim's algo, proto, ch (channels) and ck (chunks) columns to nccl-tests' layout");
  if (const auto help = parse_args(app, argc, argv)) return *help;

  const auto op = sim::parse(workloads::kCollectiveOpNames, op_name);
  if (!op) {
    throw CliError("--op '" + op_name + "': unknown operation; valid: " + join(sim::names_of(workloads::kCollectiveOpNames)));
  }
  // Without --algo: a ring, except for point-to-point traffic (alltoall, sendrecv), which NCCL runs
  // as grouped send/recv and only `direct` (or hierarchical) can carry.
  if (algo_name.empty()) {
    const bool point_to_point = *op == workloads::CollectiveOp::AllToAll || *op == workloads::CollectiveOp::SendRecv;
    algo_name = point_to_point ? "direct" : "ring";
  }
  // One algorithm, or several separated by commas to compare them side by side.
  std::vector<workloads::CollectiveAlgo> algos;
  std::vector<std::string> algo_labels;
  for (std::size_t start = 0;;) {
    const std::size_t comma = algo_name.find(',', start);
    const std::string one = algo_name.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto a = sim::parse(workloads::kCollectiveAlgoNames, one);
    if (!a) throw CliError("--algo '" + one + "': unknown algorithm; valid: " + join(sim::names_of(workloads::kCollectiveAlgoNames)) +
                           " (several: comma-separated, e.g. ring,tree,in-network)");
    algos.push_back(*a);
    algo_labels.push_back(one);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::optional<workloads::Protocol> proto;
  if (!proto_name.empty()) {
    proto = sim::parse(workloads::kProtocolNames, proto_name);
    if (!proto) throw CliError("--proto '" + proto_name + "': expected LL, LL128 or Simple");
  }
  if (format != "text" && format != "json") throw CliError("--format '" + format + "': expected text or json");
  const double lo = parse_size("-b", min_size), hi = parse_size("-e", max_size);
  if (lo > hi) throw CliError("-b " + min_size + " is larger than -e " + max_size + "; the smallest size must come first");
  if (lo <= 0) throw CliError("-b " + min_size + ": the smallest size must be at least 1 byte");
  if (factor <= 1) throw CliError("-f " + std::to_string(factor) + ": the step factor must be greater than 1");
  if (chunks < 0 || channels < 0) throw CliError("--chunks and --channels must be positive");
  if (channels > workloads::nccl::kMaxChannels) {
    throw CliError("--channels " + std::to_string(channels) + ": NCCL runs at most " +
                   std::to_string(workloads::nccl::kMaxChannels) + " channels (MAXCHANNELS)");
  }
  if (const double sizes = size_count(lo, hi, factor); sizes > kMaxSizes) {
    throw CliError(fmt::format("-b {} -e {} -f {}: {:.3g} sizes, more than the {:.0f} one command simulates "
                               "(docs/cli.md, Limits); use a larger -f or a narrower -b..-e",
                               min_size, max_size, factor, sizes, kMaxSizes));
  }

  const auto inter = sim::parse(workloads::kCollectiveAlgoNames, inter_name);
  if (!inter || (*inter != workloads::CollectiveAlgo::Ring && *inter != workloads::CollectiveAlgo::Tree &&
                 *inter != workloads::CollectiveAlgo::InNetwork && *inter != workloads::CollectiveAlgo::Auto)) {
    throw CliError("--inter '" + inter_name + "': expected ring, tree, in-network or auto");
  }
  const topology::ClusterSpec spec = cluster_from_scenario_or_flags(scenario_path, cluster);
  int nodes = cluster.nodes;
  std::string node = cluster.node;
  if (!scenario_path.empty()) {
    nodes = spec.nodes;
    node = spec.node.id;
    if (gpus == 0) gpus = spec.used_gpus();
  }
  const int total = spec.total_gpus();
  if (gpus == 0) gpus = total;
  if (gpus < 2 || gpus > total) {
    throw CliError("--gpus " + std::to_string(gpus) + ": the cluster (" + std::to_string(nodes) + " x " + node +
                   ") has " + std::to_string(total) + " GPUs; choose 2.." + std::to_string(total));
  }
  if (gpus_per_thread < 0 || gpus_per_thread > gpus) {
    throw CliError("--gpus-per-thread " + std::to_string(gpus_per_thread) + ": expected 1.." + std::to_string(gpus) +
                   " (the GPUs one nccl-tests thread drives, its -g), or 0 for the device time alone");
  }
  check_budget(gpus, channels, chunks);
  const topology::Topology topo = topology::build_cluster(spec);
  const topology::Router router(topo);
  const topology::GpuSpec* gpu = topology::find_gpu(spec.node.gpu);
  std::optional<sim::InvariantReport> invariants;
  if (check) invariants.emplace();
  // A scenario's [model_constants] reach the host-launch and p2p constants (unknown names: exit 2).
  workloads::ComputeConstants constants;
  workloads::GraphHints hints = workloads::graph_hints(spec);
  if (!scenario_path.empty()) {
    const scenarios::ScenarioSpec with_constants = scenarios::load_cluster_scenario(scenario_path);
    analysis::check_model_constants(with_constants);
    constants.apply(with_constants.model_constants);
    hints.nccl_release = with_constants.nccl_release;  // [collectives]; the flags below override
    hints.nvls_enabled = with_constants.nvls;
  }
  hints.p2p_drain_steps = constants.get("p2p_drain_steps");
  if (!nccl_version.empty()) {
    bool exact = false;
    const workloads::nccl::NcclRelease* release = workloads::nccl::find_release(nccl_version, &exact);
    if (release == nullptr) {
      throw CliError("--nccl-version '" + nccl_version + "': not a known NCCL release; known: " +
                     workloads::nccl::known_release_list() + " (a later one takes the nearest earlier)");
    }
    hints.nccl_release = *release;
    if (!exact) std::fprintf(stderr, "note: NCCL %s follows the rules of %s, the nearest earlier release known\n",
                             nccl_version.c_str(), release->version);
  }
  if (!nvls_switch.empty()) {
    if (nvls_switch != "on" && nvls_switch != "off") throw CliError("--nvls '" + nvls_switch + "': expected on or off");
    hints.nvls_enabled = nvls_switch == "on";
  }
  const workloads::CollectiveEnvironment env{topo, router, gpu != nullptr ? gpu->compute_capability : 80, hints,
                                             invariants ? &*invariants : nullptr};

  workloads::CollectiveRequest req;
  req.op = *op;
  req.algo = algos.front();
  req.ranks.resize(static_cast<std::size_t>(gpus));
  std::iota(req.ranks.begin(), req.ranks.end(), 0);
  req.chunks = chunks;
  req.channels = channels;
  req.protocol = proto;
  req.inter_algo = *inter;
  if (explain) {
    req.bytes = sim::Bytes{lo};
    for (std::size_t a = 0; a < algos.size(); ++a) {
      req.algo = algos[a];
      if (a > 0) std::fputs("\n", stdout);
      std::fputs(workloads::explain_collective(env, req).c_str(), stdout);
    }
    return 0;
  }
  const std::string what = std::string(workloads::to_string(*op)) + " on " + std::to_string(gpus) + " GPUs of " +
                           std::to_string(nodes) + " x " + node;
  // One simulation per size and algorithm. With a single algorithm a refusal is the command's error;
  // in a comparison it is reported in its column and the others still run.
  analysis::CollectiveComparison cmp;
  cmp.algos = algo_labels;
  for (double size = lo; size <= hi * (1 + 1e-12); size *= factor) {
    std::vector<analysis::CollectiveComparison::Cell> cells;
    for (workloads::CollectiveAlgo a : algos) {
      analysis::CollectiveComparison::Cell cell;
      cell.row.size_bytes = size;
      cell.row.ranks = gpus;
      cell.row.op = *op;
      req.algo = a;
      req.bytes = sim::Bytes{size};
      try {
        cell.row.result = workloads::simulate_collective(env, req);
        if (gpus_per_thread > 0) {
          workloads::HostLaunch launch;
          launch.gpus_per_thread = gpus_per_thread;
          cell.row.result.time = workloads::measured_time(cell.row.result.time, launch, cell.row.result.nccl_channels,
                                                          workloads::host_launch_constants(constants));
        }
        cell.ran = true;
      } catch (const workloads::CollectiveError& e) {
        if (algos.size() == 1) throw;
        cell.refused = e.what();
      } catch (const sim::SimTimeOverflow& e) {  // too long for the clock: exit 3 alone, a refused cell side by side
        if (algos.size() == 1) throw;
        cell.refused = e.what();
      }
      cells.push_back(std::move(cell));
    }
    cmp.rows.push_back(std::move(cells));
  }
  if (algos.size() > 1) {
    bool any = false;
    for (const auto& row : cmp.rows)
      for (const auto& cell : row) any = any || cell.ran;
    if (!any) throw CliError("none of --algo " + algo_name + " can run " + std::string(workloads::to_string(*op)) +
                             " here: " + cmp.rows.front().front().refused);
    std::fputs((format == "json" ? analysis::collective_comparison_json(cmp)
                                 : analysis::collective_comparison_table(what + ": busbw by algorithm (simulated)", cmp))
                   .c_str(),
               stdout);
    return report_invariants(invariants, format == "text");
  }
  std::vector<analysis::CollectiveRow> rows;
  for (const auto& cells : cmp.rows) rows.push_back(cells.front().row);
  if (format == "json") {
    std::fputs(analysis::collective_json(rows).c_str(), stdout);
  } else {
    const std::string title = what + " (simulated; algbw = size / time, busbw = algbw x " +
                              (*op == workloads::CollectiveOp::AllReduce ? "2(n-1)/n)" : "nccl-tests factor)");
    analysis::CollectiveTableOptions options;
    options.extra_columns = extra_columns;
    options.preamble = nccl_tests_preamble(spec, gpus, lo, hi, factor);
    std::fputs(analysis::collective_table(title, rows, options).c_str(), stdout);
  }
  return report_invariants(invariants, format == "text");
}

}  // namespace clustersim::apps
