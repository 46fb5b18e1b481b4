// The training-iteration simulator's run (internal to workloads/training/; the public entry is
// simulate_iteration in iteration_sim.h, which says what is modelled and why). One IterationRun owns
// the simulator, the network model and the data-parallel collectives of one job and turns each
// pipeline rank's state machine (pipeline_rank.h) into events. Its member functions live in one
// file per purpose:
//   iteration_planning.cpp        what is planned before the first event: stage costs, each rank's
//                                 schedule, gradient buckets and parameter gathers, pipeline routes,
//                                 input feeds, which live collectives run as flows or are replayed;
//   iteration_compute_stream.cpp  each rank's compute stream: iteration start, passes, pipeline sends;
//   iteration_comm_stream.cpp     each rank's communication stream: gradient reductions (memoised or
//                                 live), the optimizer step and the parameter all-gathers after it;
//   iteration_sim.cpp             event dispatch, the end of an iteration and the result.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/simulator.h"
#include "sim/trace_sink.h"
#include "topology/network_model.h"
#include "workloads/collectives/collective_algorithm.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/input_feed.h"
#include "workloads/training/iteration_invariants.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/live_replay.h"
#include "workloads/training/overlap.h"
#include "workloads/training/parallel_layout.h"
#include "workloads/training/pipeline_rank.h"
#include "workloads/training/pipeline_schedule.h"
#include "workloads/training/stage_costs.h"
#include "workloads/training/timeline_recorder.h"

namespace clustersim::workloads {

// One run of `training.iterations` iterations of one job.
class IterationRun final : public sim::EventHandler, public topology::TransferListener, public CollectiveListener,
                           public topology::FlowObserver, public InputFeedListener {
 public:
  explicit IterationRun(const IterationInputs& in);
  ~IterationRun() { memo_.set_invariants(nullptr); }  // a shared memo outlives this run's report
  IterationResult run();

  void on_event(std::uint64_t tag) override;
  void on_transfer_done(std::uint64_t tag) override;
  void on_collective_done(std::uint64_t tag) override;
  void on_flow_done(const topology::FinishedFlow& flow) override;
  void on_input_ready(std::uint64_t tag) override { try_start(static_cast<int>(tag)); }

 private:
  // Event tags: kind in the top 4 bits, pipeline rank in the next 20, an index in the low 40.
  enum Kind : std::uint64_t {
    kStepDone = 1, kBucketReady = 2, kCommDone = 3, kOptimizerDone = 4, kPpArrive = 5, kGathersDone = 6,
    kReplayDone = 7,  // a live collective replayed (live_replay.h) ends
    kStepExtended = 8  // a step's extension for its compute slowed beside the communication stream ends
  };
  static std::uint64_t tag_of(Kind k, int rank, std::uint64_t index) {
    return (static_cast<std::uint64_t>(k) << 60) | (static_cast<std::uint64_t>(rank) << 40) | index;
  }
  static int rank_of_tag(std::uint64_t tag) { return static_cast<int>((tag >> 40) & 0xfffff); }
  static std::uint64_t index_of_tag(std::uint64_t tag) { return tag & 0xffffffffffULL; }

  // The memo's counters when a run starts, so a shared memo reports only this run's work.
  struct MemoCounts {
    std::uint64_t simulations = 0, transfers = 0, events = 0;
  };

  // A timeline being recorded into a result.
  struct Recording {
    Recording(IterationResult& result, const topology::Topology& topo, const topology::Router& router,
              const ParallelLayout& layout, int chunks_per_rank, std::size_t pipeline_routes)
        : spans(result.timeline),
          traffic(result.link_traffic),
          recorder(topo, router, layout, chunks_per_rank, pipeline_routes, {spans, traffic}) {}
    sim::TraceBuffer<TimelineSpan> spans;
    sim::TraceBuffer<LinkTraffic> traffic;
    TimelineRecorder recorder;
  };

  // Planning (iteration_planning.cpp): stage costs, each rank's schedule, buckets and gathers,
  // routes, feeds, and under `full` the live positions and the replay.
  void plan_ranks();
  // What plan_stage_costs takes for this run.
  StageCostInputs stage_cost_inputs();
  // IterationInputs::explain: rank r explained (stage_explain.h), with its data-parallel buckets.
  StageExplanation explain(int r);
  void plan_param_gathers(int r, const std::vector<PipelineStep>& order);
  void plan_pipeline_routes();
  void plan_input_feeds();
  // The live collective of group `g` (reduction_groups' index) of `group` at stage r.
  const CollectivePlan& live_plan(int g, int r, double bytes, CollectiveOp op, GradGroup group = GradGroup::Dense);
  void plan_live_positions();
  // With expert buckets: each rank's positions and expert groups folded on their own
  // (live_position_folding.h); false when an algorithm does not list its routes.
  bool plan_live_units_per_rank(const std::vector<topology::Route>& others);
  // The distinct sizes of rank r's buckets of `group`, ascending.
  std::vector<double> reduction_sizes(int r, GradGroup group = GradGroup::Dense) const;
  void plan_live_replay();
  // Compute stream and pipeline sends (iteration_compute_stream.cpp).
  void start_iteration();
  void start_param_gathers(int r);
  double gather_wait(int r, const PipelineStep& step, double work_s) const;
  // moe_a2a_overlap: all-to-all seconds a step hides by running with its pair (ep_overlap.h).
  double ep_pair_hidden(int r, const PipelineStep& step, const ChunkCost& c);
  // moe_a2a_overlap: the paired backward that follows the rank's next step (a forward), if any.
  const PipelineStep* ep_pair_of_next(int r);
  bool input_on_gpu(int r, int vs, const PipelineStep& step);
  void try_start(int r);
  void step_done(int r);
  void send_pp(int from_vs, int mb, bool forward);
  std::size_t pp_route_of(std::uint64_t index) const;
  // Compute beside the communication stream (iteration_comm_stream.cpp; overlap.h dp_contention):
  // while a data-parallel collective is in flight the compute stream loses `rate` [forward,
  // backward] seconds of work per second. A step that ends when scheduled is extended by the work
  // it lost (in turn, while it still loses some); true when it was.
  std::array<double, 2> dp_beside(double bytes, CollectiveOp op, GradGroup group);
  std::array<double, 2> beside_rate(const DpCollectiveLoad& load);
  void set_beside(int r, std::array<double, 2> rate);
  void mark_step_beside(int r, bool forward, double compute_s, double step_s, double gather_wait_s);
  bool extend_step(int r, std::uint64_t index);
  // Communication stream and optimizer (iteration_comm_stream.cpp).
  void issue_comm(int r);
  void launch_live(int r, const Bucket& b, CollectiveOp op);
  void release_finished_live();
  void comm_done(int r);
  void maybe_optimizer(int r);
  void optimizer_done(int r);
  void start_allgather(int r);
  void finish_rank(int r);
  // A bucket's collective on every group of `group` at stage 0 at once (memoised).
  double dp_time(double bytes, CollectiveOp op, GradGroup group = GradGroup::Dense);
  // The data-parallel reductions run as live flows (`full`); hybrid sharding's two-step reduction
  // uses dp_time's contention-free estimate instead.
  bool live_dp() const { return in_.full && in_.parallel.shard_instances == 1; }
  double reduction_bytes_sent(const Bucket& b) const;
  // The end of an iteration (iteration_sim.cpp).
  int finish_iteration(IterationBreakdown& sum);
  const char* reduction_name() const { return in_.parallel.shards_optimizer() ? "reduce-scatter" : "all-reduce"; }
  // The parameter all-gather's bytes for a gradient bucket of `grad_bytes` of chunk `chunk` of
  // rank `r`. Under [sync] fp8_param_gather the chunk's fp8 linears' weights go at 1 byte, the rest
  // (embeddings, norms, router, bf16 layers) at the run's 16-bit width: Megatron-Core keeps Float8
  // parameters in a torch.uint8 buffer of their own and gathers it as is (core_v0.15.0
  // distributed/param_and_grad_buffer.py l. 742, 945-964; distributed_data_parallel_config.py
  // l. 56-58). A bucket holds the chunk's mix: the uint8 buffer's own buckets carry the same bytes.
  double param_bytes(double grad_bytes, int r, int chunk, GradGroup group) const;

  PipelineRank& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }
  int rank_of_vs(int vs) const { return vs % pp_; }
  int gpu_of_rank(int r) const { return layout_.rank(0, 0, r); }
  double now() const { return sim_.now().seconds(); }

  const IterationInputs& in_;
  ParallelLayout layout_;
  int pp_, v_, m_, vstages_;  // pipeline ranks, chunks per rank, micro-batches, virtual stages
  sim::Simulator sim_;
  topology::NetworkModel net_;
  CollectiveMemo own_memo_;
  CollectiveMemo& memo_;
  MemoCounts memo_at_start_;
  CollectiveAlgo dp_algo_;
  // dp_time's groups per GradGroup (reduction_groups.h, stage 0) and its answers per (group, op,
  // bytes): a rank asks once per bucket per iteration, and building and comparing the memo's key
  // (tp x dp ranks) each time cost more than the rest of a memoised run.
  std::array<std::vector<std::vector<int>>, 2> dp_groups_;
  std::array<std::vector<std::vector<int>>, 2> replica_groups_;  // hybrid sharding: across the shard groups
  std::map<std::tuple<int, int, double>, double> dp_times_;
  bool expert_buckets_ = false;  // some rank reduces expert buckets (reduction_groups.h)
  StageCosts costs_;
  std::vector<PipelineRank> ranks_;
  // overlap_param_gather: per rank, its gathers at the iteration start and, per chunk, the index
  // of its first forward (the pass they gate).
  bool param_gather_overlap_ = false;
  std::vector<ParamGatherSchedule> gathers_;
  // [rank][chunk][group]: the share of the bucket group's parameters gathered at 1 byte
  // (fp8_param_gather; 0 without it).
  std::vector<std::vector<std::array<double, 2>>> fp8_share_;
  std::vector<std::vector<std::size_t>> first_forward_;
  std::vector<char> fwd_ready_, bwd_ready_;  // [vs * m + mb]: the pass's input has arrived
  std::vector<topology::Route> pp_routes_;   // [vs]: rank of vs -> rank of vs + 1 (and reverse at +vstages)
  std::vector<std::unique_ptr<CollectiveAlgorithm>> live_;
  std::size_t live_kept_ = 0;        // live_'s size after the last release of finished collectives
  // `full`: [kind: 0 dense, 1 expert][rank]: the tp positions / expert-data-parallel groups whose
  // live collectives are simulated, and how many each stands for (itself and those folded onto it).
  std::array<std::vector<std::vector<int>>, 2> live_units_, live_weight_;
  std::array<double, 2> live_bytes_{};  // `full`: bytes every GPU together sent in live reductions, per kind
  std::map<std::tuple<int, int, int, int, double>, CollectivePlan> live_plans_;  // live_plan's answers
  std::optional<LiveReplay> replay_;  // `full`: collectives provably alone end after their duration alone
  double iteration_start_ = 0, run_start_ = 0;
  int ranks_done_ = 0;
  int iteration_ = 0;
  double plan_wall_s_ = 0;  // planning (incl. memoised collective simulations) before run()
  IterationResult result_;
  std::unique_ptr<Recording> recording_;  // null unless record_timeline
  // [data]: per rank, its input feed (null on ranks that load nothing) and this iteration's wait.
  std::vector<std::unique_ptr<InputFeed>> feeds_;
  std::vector<double> input_wait_;
  // CUDA_LAUNCH_BLOCKING: per rank, since when its compute stream waits for a collective (-1:
  // not waiting) and how long it waited this iteration.
  std::vector<double> comm_wait_from_, comm_wait_;
  // moe_a2a_overlap: per rank, what the paired backward about to follow a forward hides, and the
  // forward output held until the pair ends (virtual stage x m + micro-batch; -1: none).
  std::vector<double> ep_pending_;
  std::vector<std::int64_t> ep_held_send_;
  std::optional<IterationInvariants> checks_;  // empty unless in.invariants
  // Compute beside the communication stream: a layer's ops (an MoE model's MoE layer) whose
  // contended time gives a collective's rates; dp_beside's answers; per rank the current rates,
  // their integral up to `at`, the integral at the running step's start (or last extension), the
  // share of that step that computes, and the lost work its parameter-gather wait must not count.
  std::vector<OpCost> beside_ops_;
  std::map<std::tuple<int, int, double>, std::array<double, 2>> beside_rates_;
  std::vector<std::array<double, 2>> gather_rate_;  // [rank]: over its overlapped parameter gathers
  struct Beside {
    std::array<double, 2> rate{}, lost{};
    double at = 0, mark = 0, compute_share = 1, skip = 0;
    int pass = 0;  // 0 forward, 1 backward
  };
  std::vector<Beside> beside_;
};

}  // namespace clustersim::workloads
