// Context parallelism against hand arithmetic: the tp-cp-dp-pp rank order and its groups, the K/V
// chunk one ring step sends, activation memory per GPU at s/cp tokens, the gradient reduction
// over dp x cp, and an iteration whose ring-attention traffic and exposure add up.
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/context_parallel.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/parallel_layout.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

ModelSpec llama3_8b(int seq_len) {
  const ModelSpec* preset = find_model_preset("llama3-8b");
  REQUIRE(preset != nullptr);
  ModelSpec m = *preset;
  m.seq_len = seq_len;
  return m;
}

// Llama 3 8B, 4 layers at 32K tokens, cp 8 on one DGX H100, two micro-batches of one sequence.
testing::Job cp_job(CpComm comm) {
  testing::Job j;
  j.cluster = testing::nodes_of("dgx-h100");
  j.model = llama3_8b(32768);
  j.model.layers = 4;
  j.parallel.cp = 8;
  j.parallel.cp_comm = comm;
  j.training.global_batch = 2;
  j.training.micro_batch = 1;
  return j;
}

double line_bytes(const MemoryBreakdown& b, const char* name) {
  const MemoryLine* l = b.find_line(name);
  REQUIRE(l != nullptr);
  return l->bytes.value;
}

}  // namespace

TEST_CASE("workloads::ParallelLayout: context parallel sits between tensor and data parallel") {
  const ParallelLayout l{2, 2, 2, 4};  // tp 2, dp 2, pp 2, cp 4
  CHECK(l.gpus() == 32);
  // rank = tp + 2 (cp + 4 (dp + 2 stage))
  CHECK(l.rank(1, 0, 0, 3) == 7);
  CHECK(l.rank(0, 1, 0, 0) == 8);
  CHECK(l.rank(0, 0, 1, 0) == 16);
  CHECK(l.cp_group(0, 0, 0) == std::vector<int>{0, 2, 4, 6});
  CHECK(l.cp_group(1, 1, 1) == std::vector<int>{25, 27, 29, 31});
  CHECK(l.dp_group(0, 0) == std::vector<int>{0, 8});
  // Gradients reduce over every cp rank of every replica: dp x cp = 8 ranks.
  CHECK(l.dp_cp_group(1, 0) == std::vector<int>{1, 3, 5, 7, 9, 11, 13, 15});
}

TEST_CASE("workloads::cp_kv_chunk_bytes: one ring step sends K and V of s/cp tokens and the rank's kv heads") {
  ParallelSpec p;
  p.tp = 4;
  p.cp = 8;
  // Llama 3 8B at 128K: 8 kv heads / tp 4 = 2 per GPU, head_dim 4096/32 = 128, 131072/8 = 16384
  // tokens: 2 (K and V) x 16384 x 2 x 128 x 2 B = 16,777,216 B.
  CHECK(cp_kv_chunk_bytes(llama3_8b(131072), p, 1, 2) == doctest::Approx(16777216.0));
  // Fewer kv heads than tp: each GPU still holds one.
  p.tp = 16;
  CHECK(cp_kv_chunk_bytes(llama3_8b(131072), p, 1, 2) == doctest::Approx(2.0 * 16384 * 1 * 128 * 2));
  CHECK(cp_ring_sends(8) == 7);
  CHECK(cp_ring_sends(1) == 0);
}

TEST_CASE("workloads::estimate_memory: context parallelism divides the activations by cp") {
  MemoryRequest with_cp;
  with_cp.model = llama3_8b(131072);
  with_cp.parallel.tp = 4;
  with_cp.parallel.cp = 8;
  with_cp.parallel.sequence_parallel = true;
  with_cp.training.global_batch = 1;
  MemoryRequest short_seq = with_cp;
  short_seq.model.seq_len = 131072 / 8;
  short_seq.parallel.cp = 1;
  const MemoryBreakdown a = estimate_memory(with_cp), b = estimate_memory(short_seq);
  // The same tokens per GPU: the saved tensors of 16384 tokens, not 131072.
  const double act = line_bytes(a, "layers: activations");
  CHECK(act == doctest::Approx(line_bytes(b, "layers: activations")));
  CHECK(act == doctest::Approx(32.0 * activation_bytes_per_layer(short_seq.model, 1, 4, true, Recompute::None,
                                                                  activation_bytes_for(topology::Precision::Bf16))
                                          .value));
  CHECK(line_bytes(a, "logits and loss (fp32)") == doctest::Approx(16384.0 * 128256 / 4 * 4.0));
}

TEST_CASE("workloads::model_state_bytes: the distributed optimizer shards over dp x cp") {
  ParallelSpec p;
  p.dp = 2;
  p.cp = 4;
  p.distributed_optimizer = true;
  TrainingSpec t;
  const ModelStates s = model_state_bytes(1e9, p, t);
  CHECK(s.optimizer.value == doctest::Approx(1e9 * 12.0 / 8));  // Adam mixed: 12 B / param over 8 ranks
  CHECK(s.params.value == doctest::Approx(2e9));
}

TEST_CASE("workloads::gradient buckets: dp = 1 with cp > 1 still reduces, over dp x cp ranks") {
  ParallelSpec p;
  p.dp = 1;
  p.cp = 8;
  const BucketRule rule = BucketRule::of(p, TrainingSpec{}, SyncSpec{});
  CHECK(rule.reduce);
  // Ring all-reduce over 8 ranks: 2 x 7/8 of the gradient bytes.
  CHECK(dp_bytes_per_gpu(1e9, llama3_8b(8192), p, TrainingSpec{}, 1) == doctest::Approx(1e9 * 2.0 * 7 / 8));
}

TEST_CASE("workloads::simulate_iteration: ring attention sends (cp-1) K/V chunks per layer, hidden or exposed") {
  const IterationResult r = testing::simulate_job(cp_job(CpComm::P2p), {.timeline = true});
  // Per layer and micro-batch: 7 chunks forward, 7 x 2 (K/V and dK/dV) backward, of
  // 2 x 4096 tokens x 8 kv heads x 128 x 2 B = 16 MiB.
  const double chunk = 2.0 * 4096 * 8 * 128 * 2;
  CHECK(r.cp_bytes_per_gpu == doctest::Approx((7.0 + 14.0) * chunk * 4 * 2));
  CHECK(r.breakdown.cp_exposed >= 0.0);
  CHECK(r.breakdown.cp_overlapped > 0.0);
  CHECK(r.breakdown.exposed_comm >= r.breakdown.cp_exposed);
  // NVLink inside one DGX H100 is fast: at 32K tokens attention hides most of the exchange.
  CHECK(r.breakdown.cp_overlapped > r.breakdown.cp_exposed);
  bool span = false;
  for (const TimelineSpan& s : r.timeline) span = span || s.kind == SpanKind::ContextParallel;
  CHECK(span == (r.breakdown.cp_exposed > 0));
}

TEST_CASE("workloads::simulate_iteration: DeepSpeed-Ulysses moves Q, K, V and the output by all-to-all, all exposed") {
  const testing::Job j = cp_job(CpComm::A2a);
  // Buffers per layer: Q, K, V of 4096 tokens at 32 + 8 + 8 heads of 128, and the output (32 heads).
  CHECK(cp_ulysses_qkv_bytes(j.model, j.parallel, 1, 2) == doctest::Approx(4096.0 * 48 * 128 * 2));
  CHECK(cp_ulysses_output_bytes(j.model, j.parallel, 1, 2) == doctest::Approx(4096.0 * 32 * 128 * 2));
  const IterationResult a2a = testing::simulate_job(j, {.timeline = true});
  // Each all-to-all sends 7/8 of its buffer; two per pass (QKV and output, dO and dQKV), two passes,
  // 4 layers, 2 micro-batches.
  const double per_pass = 4096.0 * (48 + 32) * 128 * 2 * 7 / 8;
  CHECK(a2a.cp_bytes_per_gpu == doctest::Approx(per_pass * 2 * 4 * 2));
  CHECK(a2a.breakdown.cp_exposed > 0.0);
  CHECK(a2a.breakdown.cp_overlapped == 0.0);  // blocking: nothing hides it
  // Ulysses' per-GPU volume stays 7/8 of the rank's Q, K, V and output while ring attention sends
  // cp - 1 K/V chunks: here the ring's 7 x 16 heads outweigh the all-to-all's 7/8 x 80 heads.
  const IterationResult ring = testing::simulate_job(cp_job(CpComm::P2p), {.timeline = true});
  CHECK(a2a.cp_bytes_per_gpu < ring.cp_bytes_per_gpu);
  bool span = false;
  for (const TimelineSpan& s : a2a.timeline) span = span || s.kind == SpanKind::ContextParallel;
  CHECK(span);
}
