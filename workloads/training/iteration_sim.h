// The training-iteration simulator: replays one (or more) iterations of a Megatron-style job on
// the event engine and says how long it takes and where the time goes.
//
// What is simulated. Tensor-parallel ranks run identical work, and so do data-parallel replicas
// (replica folding): one representative GPU per pipeline rank (tp rank 0, dp rank 0) runs the
// pipeline schedule on its compute stream. A forward or backward pass of a model chunk is one
// task whose duration comes from the compute model (per-op roofline) plus the blocking
// tensor-parallel collectives of its layers (memoised: inside an NVSwitch node they touch no link
// that pipeline or data-parallel traffic uses). Activations and their gradients travel between
// pipeline ranks as live flows on the network model (Megatron's scatter/gather optimisation: each
// tensor-parallel rank sends 1/tp of the activation through its own NIC). Gradients of the last
// micro-batch's backward become ready bucket by bucket; each bucket is reduced across the
// data-parallel replicas on the communication stream (all-reduce; reduce-scatter with ZeRO-1/2 or
// the distributed optimizer, followed by an all-gather of the updated parameters), overlapped with
// the remaining backward when sync.overlap_grad_reduce is set; with overlap_param_gather the
// all-gathers run at the start of the next iteration behind its forward passes instead
// (overlap.h). A bucket's duration is that of the tp
// concurrent data-parallel collectives of its stage, simulated as flows on the fabric once per
// bucket size (or live with `full`). The optimizer step runs once a rank's gradients are reduced.
// ZeRO-3 (FSDP) gathers each layer's parameters before its forward and backward and
// reduce-scatters its gradients after its backward, on the communication stream with one layer of
// prefetch (sync.fsdp_prefetch): a pass then takes the compute and communication of its layers
// overlapped. With sync.tp_comm_overlap the tensor-parallel collectives hide behind their GEMMs.
// Context parallelism (parallelism.cp) folds like tensor parallelism: the CP ranks of a replica
// run identical work, each pass carries its layers' K/V exchange (context_parallel.h, only the
// part attention does not hide blocks), and gradients are reduced over the dp·cp ranks.
// With [data] the first and last stage wait for each micro-batch's input (input_feed.h: the
// DataLoader, a host-to-device copy as a live flow, GPU decode). Under CUDA_LAUNCH_BLOCKING
// (ComputeModel::launch_blocking) a pass waits for any running collective and a backward's
// buckets are reduced before the next pass starts: nothing overlaps.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collectives/collective_memo.h"
#include "workloads/collectives/collective_runner.h"
#include "workloads/compute/compute_model.h"
#include "workloads/specs.h"
#include "workloads/training/input_pipeline.h"
#include "workloads/training/stage_explain.h"

namespace clustersim::workloads {

struct IterationInputs {
  const topology::Topology& topo;
  const topology::Router& router;
  const topology::GpuSpec& gpu;
  const ComputeModel& compute;
  ModelSpec model;
  ParallelSpec parallel;
  TrainingSpec training;
  SyncSpec sync;
  bool full = false;          // no memoised collectives: every collective runs as live flows
  bool record_timeline = false;
  CollectiveMemo* shared_memo = nullptr;  // reuse across runs on the same cluster (else a private one)
  // What NCCL can use on this cluster (NVLS switches, SHARP NICs): graph_hints(cluster spec). The
  // data-parallel collectives are planned with it, as `clustersim collective` plans them.
  GraphHints hints = {};
  // With `full`: live collectives whose channels cross identical links run one channel weighted by
  // the channel count (channel_folding.h; exact). Off only to check folding against the unfolded run.
  bool fold_live_channels = true;
  // With `full`: live collectives of tensor-parallel positions whose rails provably mirror another's
  // are not simulated; they end when its do (live_position_folding.h; exact). Off only to check.
  bool fold_live_positions = true;
  // With `full`: a live collective provably alone on its links from launch to end ends after the
  // duration of its own flow simulation alone, simulated once per distinct collective
  // (live_replay.h; exact). Off only to check.
  bool replay_live_alone = true;
  // [data]: the input pipeline of the data-loading ranks (first and last pipeline rank), its copies
  // live flows (input_feed.h); null: batches are on the GPU when a pass wants them.
  const DataSpec* data = nullptr;
  // Invariant checks after every iteration (iteration_invariants.h, sim/engine_invariants.h,
  // collective_bound.h) write here; null: off. Not owned.
  sim::InvariantReport* invariants = nullptr;
  // `run --explain`: explain the pipeline rank that finishes last and, if in 0..pp-1, this one too
  // (IterationResult::explained; stage_explain.h).
  bool explain = false;
  int explain_stage = -1;
};

// What a timeline span stands for.
enum class SpanKind : std::uint8_t {
  Forward, Backward, Optimizer,  // compute stream
  TensorParallel,  // compute stream, nested at the end of its pass: the pass's blocking tp collectives
                   // (really interleaved layer by layer; shown as their total, their link
                   // traffic spread over the whole pass)
  ContextParallel, // compute stream, nested at the end of its pass like TensorParallel: the pass's
                   // context-parallel K/V exchange that attention did not hide
  PipelineSend,    // stream 1: one activation (or its gradient) from send to arrival, a live flow
  DataParallel,    // stream 2: one bucket's collective (memoised duration, or live flows with `full`)
  ExpertParallel,  // compute stream, nested like TensorParallel, just before it: the pass's MoE
                   // dispatch and combine all-to-alls over the expert-parallel group
  DataStall        // stream 3 (input pipeline): a pass's wait for its micro-batch -- loader, host-
                   // to-device copy (a live flow), GPU decode ([data]; input_feed.h)
};

// One span on a timeline (for traces, reports and sampled metrics). Times are seconds from the
// start of the first simulated iteration; `iteration` says which one it belongs to.
struct TimelineSpan {
  int rank = 0;               // pipeline rank (representative GPU)
  int gpu = 0;                // global GPU rank it stands for
  int stream = 0;             // 0 compute, 1 pipeline sends, 2 data-parallel communication,
                              // 3 input pipeline ([data])
  std::string name;
  double start_s = 0, end_s = 0;
  SpanKind kind = SpanKind::Forward;
  int iteration = 0;
  double bytes = 0;           // communication: bytes the representative GPU sent
  std::string link_class;     // communication: "nvlink", "pcie", "network" (the route's widest reach)
  double memory_busy = 0;     // compute: share of the span with device memory read or written
  double tensor_busy = 0;     // compute: share of the span with the tensor pipes active
  int load = -1;              // communication: index into IterationResult::link_loads, or -1
};

// The links a communication span loads: link `links[i].first` carries `bytes x links[i].second`
// of a span's traffic. For a live flow that is its route with weight 1. For a memoised collective
// it is the groups' ring routes (each member sends to its successor in group order, whatever the
// algorithm), weighted by the bytes each member sends per byte the representative sends; analyses
// spread those bytes evenly over the span (an approximation: the real collective's traffic has
// steps and idle gaps inside the span).
struct LinkLoad {
  std::vector<std::pair<topology::LinkId, double>> links;
};

// Traffic on links over time: `bytes` (per unit weight) of `link_loads[load]` between the times.
struct LinkTraffic {
  int load = 0;
  double bytes = 0;
  double start_s = 0, end_s = 0;
};

struct IterationBreakdown {
  double compute = 0, exposed_comm = 0, pipeline_bubble = 0, optimizer = 0, other = 0;
  double tp_comm = 0;         // part of exposed_comm: blocking tensor-parallel collectives
  double ep_comm = 0;         // part of exposed_comm: blocking expert-parallel all-to-alls (MoE)
  double dp_exposed = 0;      // part of exposed_comm: data-parallel sync not hidden by compute
  double cp_exposed = 0;      // part of exposed_comm: context-parallel K/V exchange not hidden by attention
  // Not parts of the iteration: what overlap hid, and what it cost.
  double tp_overlapped = 0;   // tensor-parallel seconds hidden behind GEMMs (tp_comm_overlap)
  double dp_overlapped = 0;   // data-parallel collective seconds not exposed
  double cp_overlapped = 0;   // context-parallel exchange seconds hidden behind attention
  double overlap_sm_cost = 0; // part of compute: GEMMs slowed by the overlapped collectives' SMs
  double dp_sm_cost = 0;      // part of overlap_sm_cost: compute slowed beside in-flight data-parallel
                              // collectives (their SMs and HBM traffic; overlap.h dp_contention)
  double data_stall = 0;      // the input pipeline's wait, copy and decode ([data]); 0 without it
                              // (of the critical rank; a stall upstream shows there as bubble)
};

struct IterationResult {
  double iteration_time_s = 0;      // mean over the simulated iterations
  int iterations = 1;
  int critical_rank = 0;            // the pipeline rank that finished last
  IterationBreakdown breakdown;     // of the critical rank, seconds per iteration
  double model_flops = 0;           // per iteration, whole job (no recompute)
  double hardware_flops = 0;        // per iteration, whole job (with recompute)
  double dp_bytes_per_gpu = 0, tp_bytes_per_gpu = 0, pp_bytes_per_gpu = 0;  // sent, per iteration
  double expert_dp_bytes_per_gpu = 0;  // the part of dp_bytes_per_gpu sent on the expert-data-parallel
                                       // groups (ep > 1: expert buckets, reduction_groups.h)
  double cp_bytes_per_gpu = 0;  // context-parallel K/V (and dK/dV) sent, per iteration
  double ep_bytes_per_gpu = 0;      // expert all-to-all bytes sent, per iteration (MoE)
  // ZeRO-Offload (optimizer_offload.h): the slowest rank's optimizer step's PCIe seconds (gradients
  // down, parameters up) and CPU-Adam seconds; both are inside breakdown.optimizer.
  double offload_pcie_s = 0, offload_cpu_s = 0;
  double offload_hidden_s = 0;  // with the delayed update: the part of the step behind the next iteration
  std::uint64_t events = 0, flows = 0, memo_simulations = 0;
  int live_positions = 0;  // `full`: tp positions whose data-parallel collectives ran as flows (the
                           // others folded onto them, live_position_folding.h; the most of any
                           // pipeline rank); 0 without `full`
  int live_expert_groups = 0;  // `full`, expert buckets: the same for expert-data-parallel groups
  // `full`: what the live reductions (run as flows, folded or replayed) sent per GPU per iteration,
  // all of them and the expert buckets' part, from the plans launched (ring: 2(n-1)/n of a bucket
  // for an all-reduce, (n-1)/n for a reduce-scatter); dp_bytes_per_gpu and expert_dp_bytes_per_gpu
  // when every bucket ran on its groups. 0 without `full` or under hybrid sharding.
  double live_dp_bytes_per_gpu = 0, live_expert_dp_bytes_per_gpu = 0;
  std::uint64_t live_replays = 0;  // `full`: live collectives replayed, not run as flows (live_replay.h)
  double wall_s = 0;
  // When record_timeline is set, every simulated iteration. Traffic covers pipeline sends, tensor-
  // and data-parallel collectives of the representative GPUs' groups and, with `full`, every
  // live collective flow.
  std::vector<TimelineSpan> timeline;
  std::vector<LinkLoad> link_loads;
  std::vector<LinkTraffic> link_traffic;
  double simulated_s = 0;              // all simulated iterations, back to back
  // IterationInputs::explain: the critical rank's explanation first, then explain_stage's (if another).
  std::vector<StageExplanation> explained;
};

// Throws CollectiveError (an std::invalid_argument) when the chosen sync algorithm cannot run here.
IterationResult simulate_iteration(const IterationInputs& in);

}  // namespace clustersim::workloads
