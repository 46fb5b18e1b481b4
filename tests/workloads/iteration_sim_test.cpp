// The training-iteration simulator against what can be derived by hand: schedule bubbles, overlap,
// the memoised collectives against the full flow simulation (one and several pipeline stages),
// determinism, model FLOPs. Jobs are built from the topology and workloads APIs directly.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "iteration_fixture.h"
#include "workloads/compute/compute_model.h"
#include "workloads/training/iteration_sim.h"

using namespace clustersim;
using namespace clustersim::workloads;
using testing::Job;

namespace {

// A cluster of DGX A100 nodes, a preset model and the job's layout.
Job job(int nodes, const char* model, int tp, int pp, int dp, int global_batch, int micro_batch) {
  Job j;
  j.cluster = testing::nodes_of("dgx-a100-80gb", nodes);
  j.model = testing::model_preset(model);
  j.parallel.tp = tp;
  j.parallel.pp = pp;
  j.parallel.dp = dp;
  j.training.global_batch = global_batch;
  j.training.micro_batch = micro_batch;
  j.training.precision = topology::Precision::Bf16;
  return j;
}

// gpt3-13b on pp DGX A100 nodes, tp 8 inside each, no data parallelism; a small vocabulary keeps
// the embedding and the logits negligible, so the stages are equal.
Job pipeline(int pp, int v, Schedule schedule, int batch, bool overlap = true) {
  Job j = job(pp, "gpt3-13b", 8, pp, 1, batch, 1);
  j.model.vocab = 1024;
  j.parallel.virtual_stages = v;
  j.parallel.schedule = schedule;
  j.sync.overlap = overlap;
  return j;
}

// Every iteration these tests simulate also checks the six invariants (docs/model.md).
IterationResult simulate(const Job& j, bool full = false, bool timeline = false) {
  return testing::simulate_job(j, {.full = full, .timeline = timeline});
}

double datasheet_peak(const Job& j) {
  return ComputeModel(testing::gpu_of(j.cluster), j.cluster, j.training.precision, ComputeConstants{})
      .datasheet_peak()
      .value;
}

int data_parallel_spans(const IterationResult& r, int rank) {
  return static_cast<int>(std::count_if(r.timeline.begin(), r.timeline.end(), [rank](const TimelineSpan& s) {
    return s.kind == SpanKind::DataParallel && s.rank == rank;
  }));
}

// Seconds during which data-parallel spans of ranks `a` and `b` run at the same time.
double data_parallel_overlap_s(const IterationResult& r, int a, int b) {
  double overlap = 0;
  for (const TimelineSpan& x : r.timeline) {
    if (x.kind != SpanKind::DataParallel || x.rank != a) continue;
    for (const TimelineSpan& y : r.timeline) {
      if (y.kind != SpanKind::DataParallel || y.rank != b) continue;
      overlap += std::max(0.0, std::min(x.end_s, y.end_s) - std::max(x.start_s, y.start_s));
    }
  }
  return overlap;
}

}  // namespace

TEST_CASE("workloads::simulate_iteration: one GPU runs m forwards and backwards and the optimizer, nothing else") {
  Job j = job(1, "gpt3-125m", 1, 1, 1, 8, 2);
  j.cluster.gpus = 1;
  const auto r = simulate(j);
  const auto& b = r.breakdown;
  CHECK(b.exposed_comm == 0.0);
  CHECK(b.pipeline_bubble == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(r.iteration_time_s == doctest::Approx(b.compute + b.optimizer).epsilon(1e-9));
  const double mfu = r.model_flops / r.iteration_time_s / datasheet_peak(j);
  CHECK(mfu > 0.0);
  CHECK(mfu < 1.0);
}

TEST_CASE("workloads::simulate_iteration: the 1F1B bubble is (p - 1) / (m + p - 1) of the pipeline time") {
  // p = 4 stages, m = 16 micro-batches, equal stages: rank 0 idles (p-1)(tf+tb) out of
  // (m+p-1)(tf+tb) (Narayanan et al. 2021). Point-to-point transfers add a little on top.
  const int p = 4, m = 16;
  const auto r = simulate(pipeline(p, 1, Schedule::OneFOneB, m));
  const auto& b = r.breakdown;
  const double pipeline_time = b.compute + b.tp_comm + b.pipeline_bubble;
  const double expected = static_cast<double>(p - 1) / (m + p - 1);
  CHECK(b.pipeline_bubble / pipeline_time >= expected * 0.99);
  CHECK(b.pipeline_bubble / pipeline_time <= expected * 1.10);
}

TEST_CASE("workloads::simulate_iteration: interleaving v chunks cuts the bubble by about v") {
  const auto plain = simulate(pipeline(4, 1, Schedule::OneFOneB, 16));
  const auto inter = simulate(pipeline(4, 2, Schedule::Interleaved, 16));
  CHECK(inter.breakdown.pipeline_bubble < plain.breakdown.pipeline_bubble * 0.6);
  CHECK(inter.iteration_time_s < plain.iteration_time_s);
  // GPipe has the same bubble as 1F1B (it differs in memory, not time).
  const auto gpipe = simulate(pipeline(4, 1, Schedule::GPipe, 16));
  CHECK(gpipe.iteration_time_s == doctest::Approx(plain.iteration_time_s).epsilon(0.02));
}

TEST_CASE("workloads::simulate_iteration: overlapping gradient buckets with the backward pass hides communication") {
  Job with = job(4, "gpt3-1.3b", 1, 1, 32, 64, 2);
  Job without = with;
  without.sync.overlap = false;
  const auto a = simulate(with);
  const auto b = simulate(without);
  CHECK(a.breakdown.dp_exposed < b.breakdown.dp_exposed);
  CHECK(a.iteration_time_s < b.iteration_time_s);
  // Without overlap every bucket is exposed: the exposed time is at least the bytes over the NIC.
  CHECK(b.breakdown.dp_exposed > 0.0);
}

TEST_CASE("workloads::simulate_iteration: without overlap_grad_reduce an interleaved rank reduces after its whole schedule") {
  // Megatron-Core starts the synchronous reduction in finalize_model_grads, after the schedule
  // (param_and_grad_buffer.py finish_grad_sync); with two chunks a rank, the later chunk's last
  // backward ends before the rank's last backward, and its buckets must still wait for it.
  Job j = job(4, "gpt3-13b", 8, 2, 2, 16, 1);
  j.model.vocab = 1024;
  j.parallel.virtual_stages = 2;
  j.parallel.schedule = Schedule::Interleaved;
  j.sync.overlap = false;
  const auto r = simulate(j, false, true);
  for (int rank = 0; rank < 2; ++rank) {
    double last_backward = 0;
    for (const TimelineSpan& s : r.timeline)
      if (s.rank == rank && s.iteration == 0 && s.kind == SpanKind::Backward) last_backward = std::max(last_backward, s.end_s);
    REQUIRE(last_backward > 0);
    int reductions = 0;
    for (const TimelineSpan& s : r.timeline) {
      if (s.rank != rank || s.iteration != 0 || s.kind != SpanKind::DataParallel || s.name.find("gather") != std::string::npos) continue;
      ++reductions;
      CHECK(s.start_s >= last_backward);
    }
    CHECK(reductions >= 2);  // both chunks' gradients are reduced
  }
  // With overlap the later chunk's reduction runs behind the rank's remaining backwards.
  j.sync.overlap = true;
  const auto o = simulate(j, false, true);
  double first_reduction = 1e30, last_backward = 0;
  for (const TimelineSpan& s : o.timeline) {
    if (s.rank != 0 || s.iteration != 0) continue;
    if (s.kind == SpanKind::Backward) last_backward = std::max(last_backward, s.end_s);
    if (s.kind == SpanKind::DataParallel) first_reduction = std::min(first_reduction, s.start_s);
  }
  CHECK(first_reduction < last_backward);
  CHECK(o.iteration_time_s < r.iteration_time_s);
}

TEST_CASE("workloads::simulate_iteration: memoised data-parallel collectives equal the full flow simulation") {
  // One pipeline stage, so the memo's claim (the stage's tp concurrent DP groups alone on the
  // fabric) holds exactly; the full simulation runs every bucket's collectives as live flows.
  Job j = job(2, "gpt3-1.3b", 8, 1, 2, 8, 1);
  j.sync.bucket_mb = 100;
  const auto memo = simulate(j, false);
  const auto full = simulate(j, true);
  CHECK(memo.iteration_time_s == doctest::Approx(full.iteration_time_s).epsilon(1e-6));
  CHECK(full.flows > memo.flows / 2);
}

TEST_CASE("workloads::simulate_iteration: memoised data-parallel collectives equal the full flow simulation "
          "with two pipeline stages") {
  // tp 4 x dp 2 x pp 2 on two DGX A100: each stage fills one node, so its data-parallel groups
  // ({g, g+4}) meet over that node's NVSwitch while the pipeline sends leave through the NICs,
  // and the two stages' reductions share no link. The memo's claim then holds at pp > 1 too: a
  // live reduction runs on links nothing else of the iteration uses, so both paths give the same
  // times up to the picosecond rounding of flow completions (they agree to the picosecond here;
  // 1e-9 of a 47 ms iteration is 47 ps). A short sequence keeps the passes short next to each
  // stage's ~0.7 GB of gradients, so the two stages' reductions overlap in time: giving a stage
  // the other stage's live groups makes them contend on one NVSwitch and the full run ~0.2 ms
  // slower, which this test catches.
  Job j = job(2, "gpt3-1.3b", 4, 2, 2, 16, 1);
  j.model.seq_len = 256;
  j.sync.bucket_mb = 50;
  const auto memo = simulate(j, false, true);
  const auto full = simulate(j, true, true);
  // The pipeline really had two stages, each with its own data-parallel reductions.
  CHECK(memo.pp_bytes_per_gpu > 0.0);
  CHECK(memo.breakdown.pipeline_bubble > 0.0);
  CHECK(data_parallel_spans(memo, 0) > 1);
  CHECK(data_parallel_spans(memo, 1) > 1);
  CHECK(data_parallel_spans(full, 0) == data_parallel_spans(memo, 0));
  CHECK(data_parallel_spans(full, 1) == data_parallel_spans(memo, 1));
  CHECK(full.flows > memo.flows);
  CHECK(data_parallel_overlap_s(full, 0, 1) > 0.0);
  CHECK(memo.iteration_time_s == doctest::Approx(full.iteration_time_s).epsilon(1e-9));
  CHECK(memo.breakdown.dp_exposed == doctest::Approx(full.breakdown.dp_exposed).epsilon(1e-9));
  CHECK(memo.critical_rank == full.critical_rank);
}

TEST_CASE("workloads::simulate_iteration: run --full folds identical-link ring channels and stays exact") {
  // tp 8 x dp 4 on four DGX H100: every data-parallel group is one rail (GPU k of each node), its
  // ring channels cross the same links hop by hop, so --full simulates one channel with the
  // channel count as its weight (fold_live_channels). Folded and unfolded must agree exactly.
  Job j = job(4, "gpt3-1.3b", 8, 1, 4, 16, 1);
  j.cluster.node = *topology::find_node_preset("dgx-h100");
  j.model.seq_len = 512;
  j.sync.bucket_mb = 50;
  const IterationResult folded = testing::simulate_job(j, {.full = true, .check_invariants = false});
  const IterationResult unfolded =
      testing::simulate_job(j, {.full = true, .fold_live_channels = false, .check_invariants = false});
  CHECK(folded.iteration_time_s == unfolded.iteration_time_s);
  CHECK(folded.breakdown.dp_exposed == unfolded.breakdown.dp_exposed);
  CHECK(folded.flows < unfolded.flows);
  // And both equal the memoised run.
  CHECK(simulate(j, false).iteration_time_s == doctest::Approx(folded.iteration_time_s).epsilon(1e-9));
}

TEST_CASE("workloads::simulate_iteration: the same job gives the same numbers") {
  const Job j = pipeline(4, 2, Schedule::Interleaved, 8);
  const auto a = simulate(j, false, true);
  const auto b = simulate(j, false, true);
  CHECK(a.iteration_time_s == b.iteration_time_s);
  CHECK(a.critical_rank == b.critical_rank);
  CHECK(a.events == b.events);
  CHECK(a.flows == b.flows);
  REQUIRE(a.timeline.size() == b.timeline.size());
  for (std::size_t i = 0; i < a.timeline.size(); ++i) {
    CHECK(a.timeline[i].name == b.timeline[i].name);
    CHECK(a.timeline[i].start_s == b.timeline[i].start_s);
    CHECK(a.timeline[i].end_s == b.timeline[i].end_s);
  }
}

TEST_CASE("workloads::simulate_iteration: model FLOPs follow the SC'21 formula") {
  const Job j = pipeline(2, 1, Schedule::OneFOneB, 8);
  const auto r = simulate(j);
  const auto& m = j.model;
  const double B = 8, s = m.seq_len, l = m.layers, h = m.hidden, V = m.vocab;
  const double sc21 = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  CHECK(r.model_flops == doctest::Approx(sc21).epsilon(1e-9));
}

TEST_CASE("workloads::simulate_iteration: expert gradients take the expert-data-parallel group's own links") {
  // Mixtral 8x7B (4 layers) on 2 DGX A100, ep 8: each node holds all 8 experts, so the expert
  // data-parallel group of a GPU is its twin on the other node, and its expert gradients cross the
  // network in full (Megatron-Core's expert_parallel_buffers on the expert-data-parallel group).
  Job j = job(2, "mixtral-8x7b", 1, 1, 16, 16, 1);
  j.model.layers = 4;
  j.model.seq_len = 512;
  j.parallel.ep = 8;
  j.parallel.distributed_optimizer = true;
  j.sync.overlap = false;  // every bucket exposed
  const auto r = simulate(j);
  // By hand: one expert of 3 x 4096 x 14336 weights a layer per GPU, 4-byte gradients
  // reduce-scattered over 2 GPUs (half of them sent), 2-byte parameters gathered back (half), over
  // one 200 Gb/s HDR NIC (25 GB/s).
  const double expert_params = 4.0 * 3 * 4096 * 14336;
  const double nic_s = (expert_params * 4 / 2 + expert_params * 2 / 2) / 25e9;  // 0.085 s
  // Weighed by traffic alone on the 16-GPU ring, mostly NVLink, it took well under a fifth of this.
  CHECK(r.breakdown.dp_exposed > 0.9 * nic_s);
  CHECK(r.breakdown.dp_exposed < 1.5 * nic_s);  // the dense part and latencies on top, not more
}
