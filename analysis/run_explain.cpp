// `run --explain` rendered (see run_explain.h).
#include "analysis/run_explain.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <string>

#include "analysis/human_units.h"
#include "analysis/run_report.h"
#include "sim/enum_names.h"

namespace clustersim::analysis {
namespace {

using workloads::ExplainedComm;
using workloads::ExplainedLayerKind;
using workloads::ExplainedOp;
using workloads::ExplainedPass;
using workloads::StageExplanation;

std::string ms(double s) { return fmt::format("{:.3f} ms", s * 1e3); }

void op_table(std::string& out, const std::vector<ExplainedOp>& ops) {
  out += fmt::format("    {:<24} {:<10} {:>10} {:>10}  {:<14} {:>11} {:>11}\n", "op", "pass", "FLOPs", "HBM bytes", "bound",
                     "time", "host");
  for (const ExplainedOp& o : ops) {
    out += fmt::format("    {:<24} {:<10} {:>10.3g} {:>10.3g}  {:<14} {:>8.2f} us {:>8.2f} us\n", o.name, o.pass, o.flops,
                       o.bytes, o.bound, o.device_s * 1e6, o.host_s * 1e6);
    out += fmt::format("      = {}\n", o.formula);
  }
}

std::string pass_line(const char* name, const ExplainedPass& p) {
  return fmt::format("    {:<10} GPU {}, host {} -> {} ({} binds)\n", name, ms(p.device_s), ms(p.host_s), ms(p.time_s), p.binds);
}

void comm_lines(std::string& out, const std::vector<ExplainedComm>& comm) {
  if (comm.empty()) {
    out += "  communication per micro-batch and layer: none inside the layer\n";
    return;
  }
  out += "  communication per micro-batch and layer (bytes one GPU sends):\n";
  for (const ExplainedComm& c : comm) {
    out += fmt::format("    {}: {}, {}\n", c.what, c.group, c.algorithm);
    out += fmt::format("      forward {} blocking ({}), backward {} blocking ({}); hidden {}; overlapped: {}\n", ms(c.fwd_s),
                       human_bytes(c.fwd_bytes), ms(c.bwd_s), human_bytes(c.bwd_bytes), ms(c.hidden_s), c.overlap);
  }
}

void kind_text(std::string& out, const ExplainedLayerKind& k) {
  out += fmt::format("layer kind: {}, {} on this stage (one layer, one micro-batch, per GPU)\n", k.kind, k.count);
  op_table(out, k.ops);
  out += "  layer sum:\n";
  out += pass_line("forward", k.fwd);
  out += pass_line("backward", k.bwd);
  if (k.recompute.time_s > 0) out += pass_line("recompute", k.recompute);
  out += fmt::format("    planned: forward {}, backward {} (recompute included)\n", ms(k.fwd_s), ms(k.bwd_s));
  comm_lines(out, k.comm);
}

std::string schedule_name(const RunReport& r) {
  return std::string(sim::name_of(workloads::kScheduleNames, r.spec.parallel.schedule));
}

void assembly_text(std::string& out, const RunReport& r, const StageExplanation& x, bool critical) {
  const int m = x.micro_batches;
  out += fmt::format("stage assembly (pipeline stage {} of {}, {} micro-batches, {} chunk(s), schedule {})\n", x.stage,
                     x.pipeline_stages, m, x.chunks_per_rank, schedule_name(r));
  double tf = 0, tb = 0;
  for (const auto& c : x.chunks) {
    out += fmt::format("  chunk {} ({} layers): forward {} compute + {} blocking comm, backward {} + {}\n", c.virtual_stage,
                       c.layers, ms(c.fwd_compute_s), ms(c.fwd_comm_s), ms(c.bwd_compute_s), ms(c.bwd_comm_s));
    if (c.offload_groups > 0)
      out += fmt::format("    offload_modules: {} groups per micro-batch, {} per copy each way over the host link; exposed "
                         "(in the compute above) forward {}, backward {}\n",
                         c.offload_groups, ms(c.offload_copy_s), ms(c.offload_fwd_exposed_s), ms(c.offload_bwd_exposed_s));
    tf += c.fwd_compute_s + c.fwd_comm_s;
    tb += c.bwd_compute_s + c.bwd_comm_s;
  }
  std::string items;
  for (const ExplainedLayerKind& k : x.kinds) {
    items += fmt::format("{}{} x ({} + {})", items.empty() ? "" : " + ", k.count, ms(k.fwd_s), ms(k.bwd_s));
  }
  if (!x.extras_what.empty()) {
    items += fmt::format(" + {} ({} + {})", x.extras_what, ms(x.extras_fwd.time_s), ms(x.extras_bwd.time_s));
  }
  out += fmt::format("  per micro-batch: layers x per-layer + extras = {} = {}\n", items, ms(x.itemised_compute_s));
  const double rest = x.planned_compute_s - x.itemised_compute_s;
  out += fmt::format("    the chunks' compute as planned: {}{}\n", ms(x.planned_compute_s),
                     std::abs(rest) > 1e-9 * x.planned_compute_s
                         ? fmt::format(" ({} not itemised: bf16 layers, multi-token prediction, activation offload, "
                                       "GEMMs slowed by overlapped collectives)",
                                       ms(rest))
                         : "");
  out += fmt::format("  compute = micro-batches x per micro-batch = {} x {} = {}\n", m, ms(x.planned_compute_s),
                     ms(m * x.planned_compute_s));
  out += fmt::format("  blocking comm = {} x {} = {}\n", m, ms(x.planned_comm_s), ms(m * x.planned_comm_s));
  const int p = x.pipeline_stages, v = x.chunks_per_rank;
  if (p > 1) {
    out += fmt::format("  bubble (schedule): (p - 1) / v x (t_f + t_b) = ({} - 1) / {} x ({} + {}) = {}\n", p, v, ms(tf),
                       ms(tb), ms((p - 1.0) / v * (tf + tb)));
  } else {
    out += "  bubble (schedule): none, one pipeline stage\n";
  }
  out += fmt::format("  data-parallel sync: {} over dp {}, {} bucket(s), {} per iteration\n", x.dp_collective, x.dp,
                     x.buckets, human_bytes(x.dp_bucket_bytes));
  if (x.expert_buckets > 0) {
    out += fmt::format("  expert-data-parallel sync (routed experts): over edp {}, {} bucket(s), {} per iteration\n",
                       x.expert_dp, x.expert_buckets, human_bytes(x.expert_bucket_bytes));
  }
  if (!critical) {
    out += "  (the simulated split of the iteration below is the last stage to finish, not this one)\n";
    return;
  }
  const auto& b = r.iteration.breakdown;
  out += "  the iteration on this stage (simulated):\n";
  // Compute slowed beside the communication stream's collectives is charged as the run goes, on
  // top of the planned passes.
  const double beside = b.compute - m * x.planned_compute_s;
  if (beside > 1e-9 * b.compute) {
    out += fmt::format("    compute              {:>14}   (= {} x {} above + {} beside data-parallel collectives)\n",
                       ms(b.compute), m, ms(x.planned_compute_s), ms(beside));
  } else {
    out += fmt::format("    compute              {:>14}   (= {} x {} above)\n", ms(b.compute), m, ms(x.planned_compute_s));
  }
  out += fmt::format("    tensor-parallel      {:>14}   exposed\n", ms(b.tp_comm));
  out += fmt::format("    expert all-to-all    {:>14}   exposed\n", ms(b.ep_comm));
  out += fmt::format("    context-parallel     {:>14}   exposed (hidden {})\n", ms(b.cp_exposed), ms(b.cp_overlapped));
  out += fmt::format("    data-parallel        {:>14}   exposed (hidden {})\n", ms(b.dp_exposed), ms(b.dp_overlapped));
  // The compute beside the hidden part ran on the SMs and HBM bandwidth the collectives left
  // (workloads/training/overlap.h dp_contention): part of the compute above.
  if (b.dp_sm_cost > 0)
    out += fmt::format("      its SM / HBM cost  {:>14}   compute slowed beside the in-flight collectives (in compute)\n",
                       ms(b.dp_sm_cost));
  out += fmt::format("    pipeline bubble      {:>14}\n", ms(b.pipeline_bubble));
  out += fmt::format("    optimizer            {:>14}\n", ms(b.optimizer));
  if (b.data_stall > 0) out += fmt::format("    data stall           {:>14}\n", ms(b.data_stall));
  out += fmt::format("    other                {:>14}\n", ms(b.other));
  const double sum = explained_iteration_s(r);
  out += fmt::format("    sum                  {:>14}   vs iteration time {} ({})\n", ms(sum), ms(r.iteration.iteration_time_s),
                     std::abs(sum - r.iteration.iteration_time_s) <= 1e-9 * r.iteration.iteration_time_s ? "agree"
                                                                                                        : "DIFFER");
}

nlohmann::ordered_json op_json(const ExplainedOp& o) {
  return {{"op", o.name},         {"pass", o.pass},     {"flops", o.flops},    {"hbm_bytes", o.bytes},
          {"bound", o.bound},     {"time_s", o.device_s}, {"host_s", o.host_s}, {"formula", o.formula}};
}

nlohmann::ordered_json pass_json(const ExplainedPass& p) {
  return {{"gpu_s", p.device_s}, {"host_s", p.host_s}, {"time_s", p.time_s}, {"binds", p.binds}};
}

nlohmann::ordered_json stage_json(const RunReport& r, const StageExplanation& x, bool critical) {
  nlohmann::ordered_json j;
  j["stage"] = x.stage;
  j["critical"] = critical;
  j["micro_batches"] = x.micro_batches;
  j["chunks_per_rank"] = x.chunks_per_rank;
  j["schedule"] = schedule_name(r);
  nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
  for (const ExplainedLayerKind& k : x.kinds) {
    nlohmann::ordered_json kj;
    kj["kind"] = k.kind;
    kj["count"] = k.count;
    kj["ops"] = nlohmann::ordered_json::array();
    for (const ExplainedOp& o : k.ops) kj["ops"].push_back(op_json(o));
    kj["forward"] = pass_json(k.fwd);
    kj["backward"] = pass_json(k.bwd);
    kj["recompute"] = pass_json(k.recompute);
    kj["planned_fwd_s"] = k.fwd_s;
    kj["planned_bwd_s"] = k.bwd_s;
    kj["comm"] = nlohmann::ordered_json::array();
    for (const ExplainedComm& c : k.comm) {
      kj["comm"].push_back({{"what", c.what}, {"group", c.group}, {"algorithm", c.algorithm}, {"fwd_s", c.fwd_s},
                            {"bwd_s", c.bwd_s}, {"fwd_bytes", c.fwd_bytes}, {"bwd_bytes", c.bwd_bytes},
                            {"hidden_s", c.hidden_s}, {"overlap", c.overlap}});
    }
    kinds.push_back(std::move(kj));
  }
  j["layer_kinds"] = std::move(kinds);
  nlohmann::ordered_json extras = {{"what", x.extras_what}, {"ops", nlohmann::ordered_json::array()},
                                   {"forward", pass_json(x.extras_fwd)}, {"backward", pass_json(x.extras_bwd)}};
  for (const ExplainedOp& o : x.extras) extras["ops"].push_back(op_json(o));
  j["extras"] = std::move(extras);
  j["chunks"] = nlohmann::ordered_json::array();
  for (const auto& c : x.chunks) {
    j["chunks"].push_back({{"virtual_stage", c.virtual_stage}, {"layers", c.layers}, {"fwd_compute_s", c.fwd_compute_s},
                           {"bwd_compute_s", c.bwd_compute_s}, {"fwd_comm_s", c.fwd_comm_s}, {"bwd_comm_s", c.bwd_comm_s},
                           {"fwd_ep_s", c.fwd_ep_s}, {"bwd_ep_s", c.bwd_ep_s}});
  }
  j["itemised_compute_s"] = x.itemised_compute_s;
  j["planned_compute_s"] = x.planned_compute_s;
  j["planned_comm_s"] = x.planned_comm_s;
  j["data_parallel"] = {{"collective", x.dp_collective}, {"dp", x.dp}, {"buckets", x.buckets}, {"bytes", x.dp_bucket_bytes}};
  if (x.expert_buckets > 0) {
    j["expert_data_parallel"] = {{"edp", x.expert_dp}, {"buckets", x.expert_buckets}, {"bytes", x.expert_bucket_bytes}};
  }
  if (critical) {
    const auto& b = r.iteration.breakdown;
    j["iteration_s"] = {{"compute", b.compute},         {"tp_exposed", b.tp_comm},       {"ep_exposed", b.ep_comm},
                        {"cp_exposed", b.cp_exposed},   {"dp_exposed", b.dp_exposed},    {"pipeline_bubble", b.pipeline_bubble},
                        {"optimizer", b.optimizer},     {"data_stall", b.data_stall},    {"other", b.other},
                        {"sum", explained_iteration_s(r)}, {"iteration_time", r.iteration.iteration_time_s}};
  }
  return j;
}

}  // namespace

double explained_iteration_s(const RunReport& r) {
  const auto& b = r.iteration.breakdown;
  return b.compute + b.tp_comm + b.ep_comm + b.cp_exposed + b.dp_exposed + b.pipeline_bubble + b.optimizer + b.data_stall +
         b.other;
}

std::string run_explain_text(const RunReport& r) {
  const auto& all = r.iteration.explained;
  if (all.empty() || !r.compute) return "";
  const workloads::ComputeModel& cm = *r.compute;
  std::string out = "\n# explain: where the time of pipeline stage " + std::to_string(all.front().stage) +
                    " (the last to finish) comes from\n";
  out += fmt::format("GPU {}: {:.0f} TFLOP/s datasheet x clock ratio {:.3f} = {:.0f} TFLOP/s sustained; HBM {:.0f} GB/s; "
                     "names in formulas are `clustersim catalog constants`\n",
                     cm.gpu().name, cm.datasheet_peak().value * 1e-12, cm.clock_ratio(),
                     cm.sustained_peak().value * 1e-12, cm.memory_bandwidth().value * 1e-9);
  if (cm.matmul_measured_ratio() != 1.0)
    out += fmt::format("GEMM efficiencies below include x {:.3f}: this GPU's measured maximum matmul throughput against "
                       "the shape model, relative to the A100 the clock was fitted on (measured_matmul_share; "
                       "workloads/compute/measured_matmul.cpp)\n",
                       cm.matmul_measured_ratio());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const StageExplanation& x = all[i];
    if (i > 0) out += fmt::format("\n# explain: pipeline stage {} (--explain-stage)\n", x.stage);
    for (const ExplainedLayerKind& k : x.kinds) kind_text(out, k);
    if (!x.extras.empty()) {
      out += fmt::format("{} (once per micro-batch on this stage)\n", x.extras_what);
      op_table(out, x.extras);
      out += pass_line("forward", x.extras_fwd);
      out += pass_line("backward", x.extras_bwd);
    }
    assembly_text(out, r, x, i == 0);
  }
  return out;
}

std::string run_json_with_explain(const RunReport& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(run_json(r));
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < r.iteration.explained.size(); ++i) stages.push_back(stage_json(r, r.iteration.explained[i], i == 0));
  j["explain"] = {{"stages", std::move(stages)}};
  return j.dump(2) + "\n";
}

}  // namespace clustersim::analysis
