// Reporting a run (see run_report.h).
#include "analysis/run_report.h"

#include "analysis/human_units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "analysis/csv.h"
#include "analysis/link_traffic.h"
#include "analysis/what_ifs.h"
#include "scenarios/stage_split.h"
#include "workloads/model/lora.h"

namespace clustersim::analysis {
namespace {

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

// The what-ifs' fields, only for the scenarios that ask for them, so other reports keep theirs.
void what_ifs_json(const RunReport& r, nlohmann::ordered_json& j) {
  if (r.spec.training.launch_blocking)
    j["details"]["launch_blocking"] = {{"iteration_time_without_s", r.launch_blocking_base_s},
                                       {"cost_s", r.iteration.iteration_time_s - r.launch_blocking_base_s}};
  if (r.data) {
    const auto& d = *r.data;
    j["breakdown_s"]["data_stall"] = r.iteration.breakdown.data_stall;
    j["details"]["input_pipeline"] = {{"loader_s", d.loader_s},         {"hidden_s", d.hidden_s},
                                      {"loader_stall_s", d.loader_stall_s}, {"h2d_bytes", d.h2d_bytes},
                                      {"h2d_bytes_per_s", d.h2d_bytes_per_s}, {"h2d_s", d.h2d_s},
                                      {"gpu_decode_s", d.gpu_decode_s},   {"startup_s", d.startup_s}};
  }
  if (r.amp) {
    const auto& a = *r.amp;
    nlohmann::ordered_json trajectory = nlohmann::ordered_json::array();
    for (const auto& [step, scale] : a.checkpoints) trajectory.push_back({{"step", step}, {"scale", scale}});
    j["details"]["loss_scaling"] = {{"steps", a.total_steps()},       {"skipped_steps", a.skipped_steps},
                                    {"skipped_per_1000", a.skipped_per_1000()}, {"backoffs", a.backoffs},
                                    {"growths", a.growths},           {"final_scale", a.final_scale},
                                    {"time_to_train_factor", a.time_factor()},
                                    {"underflow_fraction", a.underflow_fraction}, {"scale_at", trajectory}};
  }
}

std::string human_time(double s) {
  if (s >= 86400 * 2) return fmt::format("{:.1f} days", s / 86400);
  if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
  return duration_text(s);
}

}  // namespace

std::string run_json(const RunReport& r) {
  const auto& b = r.iteration.breakdown;
  nlohmann::ordered_json j;
  j["scenario"] = r.spec.name;
  j["gpus"] = r.gpus;
  j["nodes"] = r.nodes;
  j["iteration_time_s"] = r.iteration.iteration_time_s;
  j["tokens_per_s"] = r.tokens_per_s;
  j["samples_per_s"] = r.samples_per_s;
  j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["breakdown_s"] = {{"compute", b.compute}, {"exposed_comm", b.exposed_comm}, {"pipeline_bubble", b.pipeline_bubble},
                      {"optimizer", b.optimizer}, {"other", b.other}};
  j["comm"] = {{"dp_bytes_per_gpu", static_cast<std::int64_t>(r.iteration.dp_bytes_per_gpu)},
               {"tp_bytes_per_gpu", static_cast<std::int64_t>(r.iteration.tp_bytes_per_gpu)},
               {"pp_bytes_per_gpu", static_cast<std::int64_t>(r.iteration.pp_bytes_per_gpu)},
               {"cp_bytes_per_gpu", static_cast<std::int64_t>(r.iteration.cp_bytes_per_gpu)}};
  j["memory_per_gpu_bytes"] = memory_json_block(r.memory);
  j["fits_in_memory"] = r.memory.fits;
  j["time_to_train_s"] = opt(r.time_to_train_s);
  j["cost_usd"] = opt(r.cost_usd);
  j["energy_kwh"] = opt(r.energy_kwh);
  j["sim"] = {{"events", r.iteration.events}, {"flows", r.iteration.flows}, {"wall_s", r.iteration.wall_s}};
  j["details"] = {{"critical_pipeline_rank", r.iteration.critical_rank},
                  {"tp_comm_s", b.tp_comm},
                  {"dp_exposed_s", b.dp_exposed},
                  {"cp_exposed_s", b.cp_exposed},
                  {"tp_overlapped_s", b.tp_overlapped},
                  {"cp_overlapped_s", b.cp_overlapped},
                  {"dp_overlapped_s", b.dp_overlapped},
                  {"overlap_sm_cost_s", b.overlap_sm_cost},
                  {"dp_sm_cost_s", b.dp_sm_cost},
                  {"model_flops_per_iteration", r.iteration.model_flops},
                  {"hardware_flops_per_iteration", r.iteration.hardware_flops},
                  {"datasheet_peak_flops_per_gpu", r.datasheet_peak_flops},
                  {"iterations_simulated", r.iteration.iterations},
                  {"memoised_collective_simulations", r.iteration.memo_simulations}};
  if (r.spec.sync.offload_optimizer == workloads::OffloadDevice::Cpu) {  // ZeRO-Offload only
    j["details"]["offload_pcie_s"] = r.iteration.offload_pcie_s;
    j["details"]["offload_cpu_adam_s"] = r.iteration.offload_cpu_s;
    j["details"]["offload_hidden_s"] = r.iteration.offload_hidden_s;
  }
  if (r.spec.training.finetune.lora())
    j["details"]["trainable_parameters"] = workloads::lora_parameters(r.spec.model, r.spec.training.finetune);
  what_ifs_json(r, j);
  if (r.spec.model.is_moe()) {  // mixture of experts only, so dense reports keep their fields
    j["comm"]["ep_bytes_per_gpu"] = static_cast<std::int64_t>(r.iteration.ep_bytes_per_gpu);
    j["details"]["ep_comm_s"] = b.ep_comm;
    j["details"]["expert_parallel"] = {{"ep", r.spec.parallel.ep},
                                       {"etp", r.spec.parallel.expert_tp()},
                                       {"expert_data_parallel", r.spec.parallel.expert_dp()},
                                       {"experts", r.spec.model.experts},
                                       {"experts_per_token", r.spec.model.experts_per_token}};
  }
  return j.dump(2) + "\n";
}

const std::vector<std::string>& run_csv_columns() {
  static const std::vector<std::string> columns = {
      "scenario",       "gpus",          "nodes",        "iteration_time_s",   "tokens_per_s",
      "samples_per_s",  "model_tflops_per_gpu", "mfu",  "hfu",                "compute_s",
      "exposed_comm_s", "pipeline_bubble_s", "optimizer_s", "other_s",        "memory_total_bytes",
      "fits_in_memory", "time_to_train_s", "energy_kwh", "cost_usd"};
  return columns;
}

std::vector<std::string> run_csv_values(const RunReport& r, bool simulated) {
  const auto& b = r.iteration.breakdown;
  const auto num = [simulated](double v) { return simulated ? fmt::format("{:.9g}", v) : std::string(); };
  const auto ratio = [simulated](double v) { return simulated ? fmt::format("{:.6f}", v) : std::string(); };
  const auto opt_num = [&](const std::optional<double>& v) { return v ? num(*v) : std::string(); };
  return {r.spec.name, std::to_string(r.gpus), std::to_string(r.nodes), num(r.iteration.iteration_time_s),
          num(r.tokens_per_s), num(r.samples_per_s), num(r.model_tflops_per_gpu), ratio(r.mfu), ratio(r.hfu),
          num(b.compute), num(b.exposed_comm), num(b.pipeline_bubble), num(b.optimizer), num(b.other),
          std::to_string(r.memory.required), r.memory.fits ? "true" : "false", opt_num(r.time_to_train_s),
          opt_num(r.energy_kwh), opt_num(r.cost_usd)};
}

std::string run_csv(const RunReport& r) {
  const std::vector<std::string> values = run_csv_values(r);
  std::string out = csv_line(run_csv_columns());
  out += csv_quoted(values.front());  // the name always quoted, as before
  for (std::size_t i = 1; i < values.size(); ++i) {
    out += ',';
    out += csv_field(values[i]);
  }
  return out + "\n";
}

// The memo's one stated optimism (docs/model.md, "Memoised collectives"): a replayed data-parallel
// reduction does not share its NIC with the pipeline's sends. It matters where the reductions are in
// flight for most of the step (ZeRO-2 reducing after every micro-batch, interleaved chunks) and the
// stages exchange activations across nodes; then say so, with the share, and how to check it.
std::string memo_caveat_text(const RunReport& r) {
  const workloads::IterationResult& it = r.iteration;
  const workloads::IterationBreakdown& b = it.breakdown;
  const double t = it.iteration_time_s;
  const double dp_in_flight = b.dp_exposed + b.dp_overlapped;
  const bool memoised = it.live_positions == 0;
  // A stage is tp x cp x dp consecutive GPUs (workloads::ParallelLayout): its pipeline peers sit a
  // node or more away, so the sends cross the fabric, when a stage fills a node at least.
  const auto& p = r.spec.parallel;
  const bool sends_leave_nodes = r.nodes > 1 && p.tp * p.cp * p.dp >= r.spec.cluster.node.gpus;
  if (!memoised || !sends_leave_nodes || p.pp <= 1 || it.pp_bytes_per_gpu <= 0 || t <= 0 ||
      dp_in_flight < kMemoCaveatShare * t)
    return {};
  return fmt::format(
      "  note: data-parallel reductions are in flight for {:.0f}% of the step beside the pipeline's sends, which leave\n"
      "        through the same NICs; memoised, each reduction runs as if alone there, which is optimistic here.\n"
      "        `clustersim run --full` simulates both as flows (slower; docs/model.md, \"Memoised collectives\").\n",
      100.0 * std::min(1.0, dp_in_flight / t));
}

std::string run_text(const RunReport& r) {
  const auto& s = r.spec;
  const auto& b = r.iteration.breakdown;
  const double t = r.iteration.iteration_time_s;
  const auto pct = [t](double x) { return t > 0 ? 100.0 * x / t : 0.0; };
  std::string out;
  out += fmt::format("{}\n", s.name);
  out += fmt::format("  cluster   {} GPUs = {} x {} ({}), {}\n", r.gpus, r.nodes, s.cluster.node.id, s.cluster.node.gpu,
                     r.nodes > 1 ? "multi-node fabric" : "single node");
  out += fmt::format("  model     {} layers, hidden {}, heads {}, seq {}, vocab {} ({:.1f} B parameters)\n",
                     s.model.layers, s.model.hidden, s.model.heads, s.model.seq_len, s.model.vocab,
                     s.model.parameters() / 1e9);
  out += fmt::format("  layout    tp {}{} x pp {} x dp {}{}{}{}, global batch {}, micro-batch {}\n", s.parallel.tp,
                     s.parallel.cp > 1 ? fmt::format(" x cp {}", s.parallel.cp) : "", s.parallel.pp, s.parallel.dp,
                     s.parallel.uneven_stages()
                         ? fmt::format(" (stage layers {})", scenarios::stage_layers_text(s.model.layers, s.parallel))
                         : "",
                     s.parallel.virtual_stages > 1 ? fmt::format(", {} virtual stages", s.parallel.virtual_stages) : "",
                     s.parallel.zero > 0 ? fmt::format(", ZeRO-{}", s.parallel.zero) : "", s.training.global_batch,
                     s.training.micro_batch);
  out += "\n";
  out += fmt::format("  iteration time        {}\n", human_time(t));
  out += fmt::format("  throughput            {:.0f} tokens/s, {:.2f} samples/s\n", r.tokens_per_s, r.samples_per_s);
  out += fmt::format("  model TFLOP/s per GPU {:.1f}  (model FLOPs, no recompute: {:.3g} per iteration)\n",
                     r.model_tflops_per_gpu, r.iteration.model_flops);
  out += fmt::format("  MFU {:.1f}%   HFU {:.1f}%   (vs the {:.0f} TFLOP/s dense peak per GPU)\n", 100 * r.mfu,
                     100 * r.hfu, r.datasheet_peak_flops / 1e12);
  out += "\n  where the time goes (pipeline rank " + std::to_string(r.iteration.critical_rank) + ", the last to finish)\n";
  out += fmt::format("    compute            {:>10}  {:5.1f}%\n", human_time(b.compute), pct(b.compute));
  // Context parallelism's share is named only when the job has it, so other runs read as before.
  const bool cp = s.parallel.cp > 1;
  out += fmt::format("    exposed comm       {:>10}  {:5.1f}%   (tensor-parallel {}, {}data-parallel {})\n",
                     human_time(b.exposed_comm), pct(b.exposed_comm), human_time(b.tp_comm),
                     cp ? "context-parallel " + human_time(b.cp_exposed) + ", " : std::string(), human_time(b.dp_exposed));
  if (cp) {
    const char* how = s.parallel.cp_comm == workloads::CpComm::A2a         ? "DeepSpeed-Ulysses all-to-all of Q, K, V and the output"
                      : s.parallel.cp_comm == workloads::CpComm::AllGather ? "K/V all-gather and dK/dV reduce-scatter"
                                                                           : "ring attention, K/V chunks to the ring successor";
    out += fmt::format("      context-parallel  {:>9}  {:5.1f}%   ({} over cp = {}; {} hidden behind attention; {:.3g} GB sent per GPU)\n",
                       human_time(b.cp_exposed), pct(b.cp_exposed), how, s.parallel.cp, human_time(b.cp_overlapped),
                       r.iteration.cp_bytes_per_gpu / 1e9);
  }
  if (s.model.is_moe())
    out += fmt::format("      expert all-to-all {:>9}  {:5.1f}%   (MoE dispatch + combine over ep = {}; part of the exposed comm; {:.3g} GB sent per GPU)\n",
                       human_time(b.ep_comm), pct(b.ep_comm), s.parallel.ep, r.iteration.ep_bytes_per_gpu / 1e9);
  out += fmt::format("    overlapped comm    {:>10}           (hidden: tensor-parallel {}, {}data-parallel {}; GEMMs slowed {})\n",
                     human_time(b.tp_overlapped + b.cp_overlapped + b.dp_overlapped), human_time(b.tp_overlapped),
                     cp ? "context-parallel " + human_time(b.cp_overlapped) + ", " : std::string(),
                     human_time(b.dp_overlapped), human_time(b.overlap_sm_cost));
  out += fmt::format("    pipeline bubble    {:>10}  {:5.1f}%\n", human_time(b.pipeline_bubble), pct(b.pipeline_bubble));
  out += fmt::format("    optimizer          {:>10}  {:5.1f}%\n", human_time(b.optimizer), pct(b.optimizer));
  if (s.sync.offload_optimizer == workloads::OffloadDevice::Cpu)
    out += fmt::format("      ZeRO-Offload     PCIe {} (gradients down, parameters up), CPU-Adam {}; {}\n",
                       human_time(r.iteration.offload_pcie_s), human_time(r.iteration.offload_cpu_s),
                       s.sync.offload_delayed_update
                           ? "delayed update: " + human_time(r.iteration.offload_hidden_s) + " of it behind the next iteration"
                           : std::string("part of the optimizer"));
  out += fmt::format("    other              {:>10}  {:5.1f}%\n", human_time(b.other), pct(b.other));
  if (r.data)
    out += fmt::format("    data stall         {:>10}  {:5.1f}%   (input pipeline: loader waits, host-to-device copies, GPU decode)\n",
                       human_time(b.data_stall), pct(b.data_stall));
  if (const std::string w = what_ifs_text(r); !w.empty()) out += "\n" + w;
  out += fmt::format("\n  memory per GPU        {:.1f} GiB of {:.1f} GiB ({})\n", r.memory.required / 1073741824.0,
                     r.memory.capacity / 1073741824.0, r.memory.fits ? "fits" : "DOES NOT FIT");
  if (r.time_to_train_s) {
    out += fmt::format("  time to train         {} for {:.3g} tokens\n", human_time(*r.time_to_train_s), s.training.tokens);
  }
  if (r.energy_kwh) out += fmt::format("  energy                {:.0f} kWh\n", *r.energy_kwh);
  if (r.cost_usd) out += fmt::format("  cost                  ${:.0f}\n", *r.cost_usd);
  out += fmt::format("\n  simulator: {} events, {} flows, {:.3f} s wall\n", r.iteration.events, r.iteration.flows,
                     r.iteration.wall_s);
  if (const std::string note = memo_caveat_text(r); !note.empty()) out += note;
  return out;
}

namespace {

constexpr int kLinksPid = 1000000;          // the "links" process in the trace
constexpr int kTraceBinsPerLink = 2000;     // counter samples per link at most
constexpr std::size_t kTraceLinks = 256;    // the busiest links get counter tracks

// Counter tracks ("ph":"C", bytes/s) for the busiest links that carried traffic, under a "links"
// process; a value is written only when it changes.
void link_counters(const RunReport& r, nlohmann::json& events) {
  const auto& it = r.iteration;
  if (it.link_traffic.empty() || it.simulated_s <= 0) return;
  const topology::Topology& topo = *r.topology;
  const int bins = std::max(1, std::min(kTraceBinsPerLink, static_cast<int>(std::ceil(it.simulated_s / 1e-6))));
  const double bin_s = it.simulated_s / bins;
  const LinkTrafficGrid grid = link_traffic_grid(it, topo, bin_s, bins);
  std::vector<const LinkSeries*> links;
  for (const auto& s : grid.links) links.push_back(&s);
  std::stable_sort(links.begin(), links.end(),
                   [](const LinkSeries* a, const LinkSeries* b) { return a->total_bytes > b->total_bytes; });
  if (links.size() > kTraceLinks) links.resize(kTraceLinks);
  std::stable_sort(links.begin(), links.end(), [](const LinkSeries* a, const LinkSeries* b) { return a->link < b->link; });
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kLinksPid}, {"tid", 0}, {"args", {{"name", "links"}}}});
  events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kLinksPid}, {"tid", 0}, {"args", {{"sort_index", kLinksPid}}}});
  for (const LinkSeries* s : links) {
    double last = -1;
    for (int b = 0; b <= bins; ++b) {
      const double rate = b < bins ? s->bytes[static_cast<std::size_t>(b)] / bin_s : 0.0;
      if (rate == last) continue;
      last = rate;
      events.push_back({{"ph", "C"}, {"name", s->name}, {"pid", kLinksPid}, {"ts", b * bin_s * 1e6},
                        {"args", {{"bytes/s", rate}}}});
    }
  }
}

}  // namespace

std::string chrome_trace(const RunReport& r) {
  nlohmann::json events = nlohmann::json::array();
  static const char* kStreams[] = {"compute", "pipeline send/recv", "data-parallel comm", "input pipeline"};
  std::vector<int> input_tracks;  // ranks whose "input pipeline" track is named ([data] only)
  std::vector<int> seen_ranks;
  for (const auto& span : r.iteration.timeline) {
    if (std::find(seen_ranks.begin(), seen_ranks.end(), span.rank) == seen_ranks.end()) {
      seen_ranks.push_back(span.rank);
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", span.rank}, {"tid", 0},
                        {"args", {{"name", fmt::format("pipeline rank {} (GPU {})", span.rank, span.gpu)}}}});
      for (int s = 0; s < 3; ++s) {
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", span.rank}, {"tid", s},
                          {"args", {{"name", kStreams[s]}}}});
      }
    }
    if (span.stream == 3 && std::find(input_tracks.begin(), input_tracks.end(), span.rank) == input_tracks.end()) {
      input_tracks.push_back(span.rank);
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", span.rank}, {"tid", 3},
                        {"args", {{"name", kStreams[3]}}}});
    }
    nlohmann::json e = {{"ph", "X"}, {"name", span.name}, {"pid", span.rank}, {"tid", span.stream},
                        {"ts", span.start_s * 1e6}, {"dur", (span.end_s - span.start_s) * 1e6}};
    nlohmann::json args = {{"iteration", span.iteration}};
    if (span.bytes > 0) args["bytes"] = span.bytes;
    if (!span.link_class.empty()) args["link_class"] = span.link_class;
    if (span.stream == 0 && span.kind != workloads::SpanKind::TensorParallel &&
        span.kind != workloads::SpanKind::ContextParallel && span.kind != workloads::SpanKind::ExpertParallel)
      args["memory_busy"] = span.memory_busy;
    e["args"] = std::move(args);
    events.push_back(std::move(e));
  }
  link_counters(r, events);
  nlohmann::json j = {{"traceEvents", events}, {"displayTimeUnit", "ms"},
                      {"otherData", {{"scenario", r.spec.name}, {"generator", "clustersim"}}}};
  return j.dump() + "\n";
}

}  // namespace clustersim::analysis
