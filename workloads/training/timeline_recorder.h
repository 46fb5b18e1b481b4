// The timeline recorder: turns what the iteration simulator does (passes, optimizer steps,
// data-parallel collectives, pipeline sends, live collective flows) into timeline spans and link
// traffic, written to trace sinks as they happen (iteration_sim.h says what a span means).
//
// It only observes: the simulator calls it only when a timeline is asked for, and simulated
// times are the same either way. It owns the table of link-load patterns (LinkLoad) that spans and
// traffic point into, each built on first use: a pipeline rank's data-parallel and tensor-parallel
// groups' ring routes, and each distinct flow route. Times it is given are simulator seconds; it
// writes them relative to the start of the first iteration. The sinks are not owned.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/trace_sink.h"
#include "topology/network_model.h"
#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/parallel_layout.h"
#include "workloads/training/pipeline_schedule.h"
#include "workloads/training/stage_costs.h"

namespace clustersim::workloads {

class TimelineRecorder {
 public:
  struct Sinks {
    sim::TraceSink<TimelineSpan>& spans;
    sim::TraceSink<LinkTraffic>& traffic;
  };
  // `chunks_per_rank` names passes (with a chunk suffix when > 1); `pipeline_routes` is the
  // number of distinct pipeline-send routes (indices given to pipeline_send).
  TimelineRecorder(const topology::Topology& topo, const topology::Router& router, const ParallelLayout& layout,
                   int chunks_per_rank, std::size_t pipeline_routes, Sinks sinks);

  // Spans from now on belong to `iteration`; times count from `run_start_s`.
  void begin_iteration(int iteration, double run_start_s);

  // A pass on the compute stream, with its blocking tensor-parallel collectives nested at its end.
  void pass(int rank, const PipelineStep& step, const ChunkCost& cost, double start_s, double end_s);
  void optimizer(int rank, double start_s, double end_s);
  // A data-parallel collective on the communication stream; `bytes` sent by the representative.
  // A memoised one loads its groups' ring routes; a live one's flows report their own traffic.
  // An expert bucket's (GradGroup::Expert) runs on the groups given by set_expert_groups.
  void data_parallel(int rank, const char* name, double start_s, double end_s, double bytes, bool memoised,
                     GradGroup group = GradGroup::Dense);
  // [stage]: the expert-data-parallel groups of each pipeline stage (reduction_groups.h).
  void set_expert_groups(std::vector<std::vector<std::vector<int>>> per_stage) { expert_groups_ = std::move(per_stage); }
  // A pipeline send, finished, from `from_rank`; `route_index` names its route among the
  // pipeline's routes.
  void pipeline_send(int from_rank, int to_rank, int micro_batch, bool forward, std::size_t route_index,
                     const topology::FinishedFlow& flow);
  // A finished flow of a live collective (or an input copy): traffic only.
  void collective_flow(const topology::FinishedFlow& flow);
  // The compute stream's wait for its next batch ([data]: loader, host-to-device copy of `bytes`
  // over `route`, GPU decode), on stream 3; the copy's traffic comes from its flow.
  void input_wait(int rank, double start_s, double end_s, double bytes, const topology::Route& route);

  // The link-load patterns that spans and traffic index; call once, at the end.
  std::vector<LinkLoad> take_link_loads() { return std::move(link_loads_); }

 private:
  void write(TimelineSpan span, double traffic_bytes, double traffic_start_s);
  TimelineSpan span(int rank, int stream, std::string name, double start_s, double end_s, SpanKind kind) const;
  int ring_load(const std::vector<std::vector<int>>& groups);
  int route_load(const topology::Route& route);
  int dp_load(int rank);
  int tp_load(int rank);
  int cp_load(int rank);
  void context_parallel(int rank, const PipelineStep& step, const ChunkCost& cost, double start_s, double end_s);
  void expert_parallel(int rank, const PipelineStep& step, const ChunkCost& cost, double start_s, double end_s);
  std::string group_link_class(const std::vector<int>& group) const;

  const topology::Topology& topo_;
  const topology::Router& router_;
  const ParallelLayout& layout_;
  int chunks_per_rank_;
  Sinks sinks_;
  double run_start_s_ = 0;
  int iteration_ = 0;
  std::vector<LinkLoad> link_loads_;
  std::vector<int> dp_load_, tp_load_, pp_load_;  // [rank], [rank], [route]: index or -1
  std::vector<std::vector<std::vector<int>>> expert_groups_;
  std::vector<int> expert_load_;  // [rank]: index or -1
  std::vector<int> cp_load_;                       // [rank]: index or -1
  std::map<std::vector<topology::LinkId>, int> flow_load_;
};

}  // namespace clustersim::workloads
