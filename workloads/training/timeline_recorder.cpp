// The timeline recorder (see timeline_recorder.h for what it records and why).
#include "workloads/training/timeline_recorder.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "sim/rng.h"
#include "topology/topology.h"

namespace clustersim::workloads {
namespace {

// The reach of a route, for timelines: the widest link kind it crosses.
std::string route_class(const topology::Topology& topo, const topology::Route& route) {
  const std::optional<topology::LinkKind> widest = topology::widest_link_kind(topo, route);
  return widest ? std::string(topology::to_string(*widest)) : std::string();
}

}  // namespace

TimelineRecorder::TimelineRecorder(const topology::Topology& topo, const topology::Router& router,
                                   const ParallelLayout& layout, int chunks_per_rank, std::size_t pipeline_routes,
                                   Sinks sinks)
    : topo_(topo),
      router_(router),
      layout_(layout),
      chunks_per_rank_(chunks_per_rank),
      sinks_(sinks),
      dp_load_(static_cast<std::size_t>(layout.pp), -1),
      tp_load_(static_cast<std::size_t>(layout.pp), -1),
      pp_load_(pipeline_routes, -1),
      expert_load_(static_cast<std::size_t>(layout.pp), -1),
      cp_load_(static_cast<std::size_t>(layout.pp), -1) {}

void TimelineRecorder::begin_iteration(int iteration, double run_start_s) {
  iteration_ = iteration;
  run_start_s_ = run_start_s;
}

TimelineSpan TimelineRecorder::span(int rank, int stream, std::string name, double start_s, double end_s,
                                    SpanKind kind) const {
  TimelineSpan s;
  s.rank = rank;
  s.gpu = layout_.rank(0, 0, rank);
  s.stream = stream;
  s.name = std::move(name);
  s.start_s = start_s - run_start_s_;
  s.end_s = end_s - run_start_s_;
  s.kind = kind;
  s.iteration = iteration_;
  return s;
}

// Writes a span and, when it loads links, its traffic over the span.
void TimelineRecorder::write(TimelineSpan s, double traffic_bytes, double traffic_start_s) {
  const double end = s.end_s;
  const int load = s.load;
  sinks_.spans.write(std::move(s));
  if (load >= 0 && traffic_bytes > 0) sinks_.traffic.write(LinkTraffic{load, traffic_bytes, traffic_start_s, end});
}

void TimelineRecorder::pass(int rank, const PipelineStep& step, const ChunkCost& cost, double start_s, double end_s) {
  std::string name(1, step.forward ? 'F' : 'B');
  name += std::to_string(step.micro_batch);
  if (chunks_per_rank_ > 1) {
    name += '.';
    name += std::to_string(step.chunk);
  }
  TimelineSpan p = span(rank, 0, std::move(name), start_s, end_s, step.forward ? SpanKind::Forward : SpanKind::Backward);
  const double memory = step.forward ? cost.fwd_memory : cost.bwd_memory;
  const double tensor = step.forward ? cost.fwd_tensor : cost.bwd_tensor;
  if (end_s > start_s) p.memory_busy = std::min(1.0, memory / (end_s - start_s));
  if (end_s > start_s) p.tensor_busy = std::min(1.0, tensor / (end_s - start_s));
  const double pass_start = p.start_s, pass_end = p.end_s;
  sinks_.spans.write(std::move(p));
  context_parallel(rank, step, cost, start_s, end_s);
  const double tp = std::min(end_s - start_s, step.forward ? cost.fwd_tp : cost.bwd_tp);
  expert_parallel(rank, step, cost, start_s, end_s - tp);
  const double tp_bytes = step.forward ? cost.fwd_tp_bytes : cost.bwd_tp_bytes;
  if (tp <= 0 && tp_bytes <= 0) return;
  const int load = tp_load(rank);
  // The blocking part is shown as one span at the end of the pass (none when tp_comm_overlap hides
  // it all), but the traffic is spread over the whole pass: the collectives are really
  // interleaved with the layers' compute.
  if (tp > 0) {
    TimelineSpan t = span(rank, 0, "tensor-parallel", end_s - tp, end_s, SpanKind::TensorParallel);
    t.bytes = tp_bytes;
    t.load = load;
    t.link_class = group_link_class(layout_.tp_group(0, rank));
    sinks_.spans.write(std::move(t));
  }
  if (tp_bytes > 0) sinks_.traffic.write(LinkTraffic{load, tp_bytes, pass_start, pass_end});
}

// The pass's context-parallel exchange: its exposed part as a span at the end of the pass (before
// the tensor-parallel span), its traffic spread over the pass (the sends run behind attention).
void TimelineRecorder::context_parallel(int rank, const PipelineStep& step, const ChunkCost& cost, double start_s,
                                        double end_s) {
  const double bytes = step.forward ? cost.fwd_cp_bytes : cost.bwd_cp_bytes;
  if (bytes <= 0) return;
  const double tp = step.forward ? cost.fwd_tp : cost.bwd_tp;
  const double cp = std::min(std::max(0.0, end_s - start_s - tp), step.forward ? cost.fwd_cp : cost.bwd_cp);
  const int load = cp_load(rank);
  if (cp > 0) {
    TimelineSpan c = span(rank, 0, "context-parallel", end_s - tp - cp, end_s - tp, SpanKind::ContextParallel);
    c.bytes = bytes;
    c.load = load;
    c.link_class = group_link_class(layout_.cp_group(0, 0, rank));
    sinks_.spans.write(std::move(c));
  }
  sinks_.traffic.write(LinkTraffic{load, bytes, start_s - run_start_s_, end_s - run_start_s_});
}

// A pass's MoE all-to-alls (dispatch and combine of its MoE layers), shown as their total just
// before its tensor-parallel span; like those they really run layer by layer inside the pass.
void TimelineRecorder::expert_parallel(int rank, const PipelineStep& step, const ChunkCost& cost, double start_s,
                                       double end_s) {
  const double ep = std::min(end_s - start_s, step.forward ? cost.fwd_ep : cost.bwd_ep);
  if (ep <= 0) return;
  TimelineSpan e = span(rank, 0, "expert all-to-all", end_s - ep, end_s, SpanKind::ExpertParallel);
  e.bytes = step.forward ? cost.fwd_ep_bytes : cost.bwd_ep_bytes;
  sinks_.spans.write(std::move(e));
}

void TimelineRecorder::optimizer(int rank, double start_s, double end_s) {
  TimelineSpan s = span(rank, 0, "optimizer", start_s, end_s, SpanKind::Optimizer);
  s.memory_busy = 1.0;  // a memory-bound fused optimizer
  sinks_.spans.write(std::move(s));
}

void TimelineRecorder::data_parallel(int rank, const char* name, double start_s, double end_s, double bytes,
                                     bool memoised, GradGroup grad_group) {
  TimelineSpan s = span(rank, 2, name, start_s, end_s, SpanKind::DataParallel);
  s.bytes = bytes;
  if (grad_group == GradGroup::Expert) {
    const std::vector<std::vector<int>>& groups = expert_groups_.at(static_cast<std::size_t>(rank));
    int& id = expert_load_[static_cast<std::size_t>(rank)];
    if (memoised && id < 0) id = ring_load(groups);
    s.load = memoised ? id : -1;
    if (groups[0].size() > 1) s.link_class = group_link_class(groups[0]);
    const double start = s.start_s;
    write(std::move(s), bytes, start);
    return;
  }
  s.load = memoised ? dp_load(rank) : -1;
  const std::vector<int> group = layout_.dp_cp_group(0, rank);
  if (group.size() > 1) s.link_class = group_link_class(group);
  const double start = s.start_s;
  write(std::move(s), bytes, start);
}

void TimelineRecorder::pipeline_send(int from_rank, int to_rank, int micro_batch, bool forward,
                                     std::size_t route_index, const topology::FinishedFlow& flow) {
  int& load = pp_load_[route_index];
  if (load < 0) load = route_load(flow.route);
  std::string name = (forward ? "send F" : "send B") + std::to_string(micro_batch) + " -> rank " + std::to_string(to_rank);
  TimelineSpan s = span(from_rank, 1, std::move(name), flow.start.seconds(), flow.end.seconds(), SpanKind::PipelineSend);
  s.bytes = flow.bytes;
  s.load = load;
  s.link_class = route_class(topo_, flow.route);
  const double start = s.start_s;
  write(std::move(s), flow.bytes, start);
}

void TimelineRecorder::collective_flow(const topology::FinishedFlow& flow) {
  if (flow.bytes <= 0 || flow.route.hops <= 0) return;
  const double start = flow.start.seconds() - run_start_s_, end = flow.end.seconds() - run_start_s_;
  sinks_.traffic.write(LinkTraffic{route_load(flow.route), flow.bytes, start, end});
}

void TimelineRecorder::input_wait(int rank, double start_s, double end_s, double bytes, const topology::Route& route) {
  TimelineSpan s = span(rank, 3, "data stall", start_s, end_s, SpanKind::DataStall);
  s.bytes = bytes;
  s.link_class = "pcie";
  if (route.hops > 0) s.load = route_load(route);
  write(std::move(s), 0.0, start_s);
}

// The link class of a group's first hop (its members sit alike, Megatron-style).
std::string TimelineRecorder::group_link_class(const std::vector<int>& group) const {
  return route_class(topo_, router_.route(group[0], group[1 % group.size()]));
}

// Ring routes of the groups, weighted per byte one member sends (every member sends the same).
int TimelineRecorder::ring_load(const std::vector<std::vector<int>>& groups) {
  std::map<topology::LinkId, double> weight;
  for (const auto& g : groups) {
    const std::size_t n = g.size();
    if (n < 2) continue;
    for (std::size_t i = 0; i < n; ++i) {
      const int a = g[i], b = g[(i + 1) % n];
      const topology::Route route =
          router_.route(a, b, sim::splitmix64((static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b)));
      for (int k = 0; k < route.hops; ++k) weight[route.links[static_cast<std::size_t>(k)]] += 1.0;
    }
  }
  LinkLoad load;
  load.links.assign(weight.begin(), weight.end());
  link_loads_.push_back(std::move(load));
  return static_cast<int>(link_loads_.size()) - 1;
}

int TimelineRecorder::route_load(const topology::Route& route) {
  std::vector<topology::LinkId> links(route.links.begin(), route.links.begin() + route.hops);
  auto it = flow_load_.find(links);
  if (it != flow_load_.end()) return it->second;
  LinkLoad load;
  for (topology::LinkId l : links) load.links.emplace_back(l, 1.0);
  link_loads_.push_back(std::move(load));
  const int id = static_cast<int>(link_loads_.size()) - 1;
  flow_load_.emplace(std::move(links), id);
  return id;
}

int TimelineRecorder::dp_load(int rank) {
  int& id = dp_load_[static_cast<std::size_t>(rank)];
  if (id < 0) {
    std::vector<std::vector<int>> groups;
    for (int t = 0; t < layout_.tp; ++t) groups.push_back(layout_.dp_cp_group(t, rank));
    id = ring_load(groups);
  }
  return id;
}

int TimelineRecorder::cp_load(int rank) {
  int& id = cp_load_[static_cast<std::size_t>(rank)];
  if (id < 0) {
    std::vector<std::vector<int>> rings;
    for (int t = 0; t < layout_.tp; ++t) rings.push_back(layout_.cp_group(t, 0, rank));
    id = ring_load(rings);
  }
  return id;
}

int TimelineRecorder::tp_load(int rank) {
  int& id = tp_load_[static_cast<std::size_t>(rank)];
  if (id < 0) id = ring_load({layout_.tp_group(0, rank)});
  return id;
}

}  // namespace clustersim::workloads
