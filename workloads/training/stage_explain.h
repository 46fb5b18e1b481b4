// `clustersim run --explain`: where one pipeline stage's time comes from, with the numbers put in,
// for a person asking why an iteration takes what it takes.
//
// Built from the same pieces plan_stage_costs uses (stage_cost_parts.h), so every number is the
// one the simulation ran with: for each layer kind on the stage (dense / MoE transformer layers,
// or a hybrid model's Mamba / attention / MLP / MoE layers) one micro-batch's ops by pass
// (forward, backward, recompute) with FLOPs, HBM bytes, what bounds each and its roofline
// formula (ComputeModel::op_time_parts); the layer's pass times (GPU and host sums, which binds);
// its communication per micro-batch (tensor-parallel, expert all-to-all, context-parallel);
// the embedding / output layer / loss ops of the first and last chunk; and the stage's chunks as
// the plan costed them. The iteration's assembly (micro-batches, bubble, data-parallel sync,
// optimizer against the simulated time) is rendered by analysis/run_explain.h with the result.
// Times in seconds, sizes in bytes, FLOPs per GPU.
#pragma once

#include <string>
#include <vector>

#include "workloads/training/stage_costs.h"

namespace clustersim::workloads {

struct ExplainedOp {
  std::string name, pass;   // pass: "forward", "backward" or "recompute" (a forward rerun in the backward)
  double flops = 0, bytes = 0;
  double device_s = 0, host_s = 0;
  std::string bound;        // "tensor cores", "CUDA cores", "HBM", "kernel launch" or "host launch"
  std::string formula;      // the roofline with its values put in, ending in "= <device time> us"
};

// One pass of an op list: its ops' summed device and host times, the pass time ops_time gives and
// which binds ("GPU", "host", or "host sync": a forward MoE dispatch's wait for the device).
struct ExplainedPass {
  double device_s = 0, host_s = 0, time_s = 0;
  std::string binds;
};

// One parallelism's communication of one layer and micro-batch, as the stage costs charge it.
struct ExplainedComm {
  std::string what;        // "tensor-parallel", "shared-expert tensor-parallel", "expert all-to-all", "context-parallel"
  std::string group;       // e.g. "tp 2 (ranks 0..1)"
  std::string algorithm;   // the collectives and their algorithm
  double fwd_s = 0, bwd_s = 0;          // blocking seconds per pass
  double fwd_bytes = 0, bwd_bytes = 0;  // bytes one GPU sends per pass
  double hidden_s = 0;                  // both passes: hidden behind compute (overlap), not blocking
  std::string overlap;                  // how it overlaps, or "no (blocking)"
};

struct ExplainedLayerKind {
  std::string kind;  // "dense", "moe", "mamba", "attention", "mlp"
  int count = 0;     // layers of the kind on the stage (all its chunks)
  std::vector<ExplainedOp> ops;
  ExplainedPass fwd, bwd, recompute;
  double fwd_s = 0, bwd_s = 0;  // the layer's compute per pass as planned (bwd includes recompute)
  std::vector<ExplainedComm> comm;
};

struct ExplainedChunk {
  int virtual_stage = 0, layers = 0;
  double fwd_compute_s = 0, bwd_compute_s = 0, fwd_comm_s = 0, bwd_comm_s = 0;
  double fwd_ep_s = 0, bwd_ep_s = 0, ep_pair_saving_s = 0;  // part of comm; moe_a2a_overlap saving per pair
  // offload_modules: groups per micro-batch, one group's copy each way, exposed seconds (in compute).
  int offload_groups = 0;
  double offload_copy_s = 0, offload_fwd_exposed_s = 0, offload_bwd_exposed_s = 0;
};

struct StageExplanation {
  int stage = 0, pipeline_stages = 1, chunks_per_rank = 1, micro_batches = 1;
  std::vector<ExplainedLayerKind> kinds;
  std::string extras_what;             // "embedding", "output layer + loss", both, or ""
  std::vector<ExplainedOp> extras;
  ExplainedPass extras_fwd, extras_bwd;
  std::vector<ExplainedChunk> chunks;  // the rank's chunks in order
  // Per micro-batch: the kinds' layers x their passes plus the extras, and the chunks' compute as
  // planned; a difference is what the kinds do not itemise (bf16 layers, multi-token prediction,
  // activation-offload stalls, GEMMs slowed by overlapped tensor-parallel collectives).
  double itemised_compute_s = 0, planned_compute_s = 0, planned_comm_s = 0;
  // Data-parallel sync of the stage's gradients (filled by the iteration run).
  int dp = 1, buckets = 0;
  double dp_bucket_bytes = 0;  // summed over the buckets, per iteration
  // The routed experts' buckets on the expert-data-parallel group (ep > 1; gradient_buckets.h).
  int expert_dp = 1, expert_buckets = 0;
  double expert_bucket_bytes = 0;
  std::string dp_collective;   // e.g. "ring all-reduce"
};

// Explains pipeline rank `stage` of the plan `costs` (plan_stage_costs(in)).
StageExplanation explain_stage(const StageCostInputs& in, const StageCosts& costs, int stage);

}  // namespace clustersim::workloads
