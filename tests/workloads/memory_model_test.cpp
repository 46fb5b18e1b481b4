// The memory model's per-term rules (its advice: memory_advice_test.cpp; the published rows are
// checked in tests/analysis/memory_report_test.cpp, through `clustersim validate --memory`).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "workloads/memory/memory_model.h"
#include "workloads/model/model_presets.h"

using namespace clustersim::workloads;
using clustersim::sim::Bytes;

TEST_CASE("workloads::memory model: Megatron's distributed optimizer costs 6 + 12/d bytes per parameter") {
  ParallelSpec par;
  par.dp = 8;
  par.distributed_optimizer = true;
  TrainingSpec tr;
  tr.precision = clustersim::topology::Precision::Bf16;
  const ModelStates s = model_state_bytes(1e9, par, tr, MemoryOptions{});
  CHECK(s.total().value == doctest::Approx(1e9 * (6.0 + 12.0 / 8)));
  par.distributed_optimizer = false;
  CHECK(model_state_bytes(1e9, par, tr, MemoryOptions{}).total().value == doctest::Approx(18e9));
}

TEST_CASE("workloads::memory model: optimizer and precision choices set the bytes per parameter") {
  TrainingSpec tr;
  MemoryOptions opt;
  tr.precision = clustersim::topology::Precision::Fp32;
  CHECK(state_bytes_per_param(tr, opt).weights == 4);
  CHECK(state_bytes_per_param(tr, opt).optimizer == 8);
  tr.optimizer = Optimizer::Sgd;
  CHECK(state_bytes_per_param(tr, opt).optimizer == 0);
  tr.precision = clustersim::topology::Precision::Bf16;
  CHECK(state_bytes_per_param(tr, opt).optimizer == 4);
  tr.optimizer = Optimizer::SgdMomentum;
  CHECK(state_bytes_per_param(tr, opt).optimizer == 8);
  opt.grads = GradPrecision::Half;
  CHECK(state_bytes_per_param(tr, opt).grads == 2);
}

TEST_CASE("workloads::memory model: 1F1B stage i holds min(pp - i, m) micro-batches, GPipe all m") {
  ParallelSpec par;
  par.pp = 4;
  CHECK(micro_batches_in_flight(par, 16, 0) == 4);
  CHECK(micro_batches_in_flight(par, 16, 3) == 1);
  CHECK(micro_batches_in_flight(par, 2, 0) == 2);
  par.schedule = Schedule::GPipe;
  CHECK(micro_batches_in_flight(par, 16, 3) == 16);
  par.schedule = Schedule::Interleaved;
  par.virtual_stages = 2;
  CHECK(micro_batches_in_flight(par, 16, 0) == doctest::Approx(4 * (1 + 3.0 / 8)));
}

TEST_CASE("workloads::memory model: the report names the most loaded stage and every line adds up") {
  MemoryRequest q;
  q.model = *find_model_preset("gpt3-175b");
  q.parallel.tp = 8;
  q.parallel.pp = 8;
  q.parallel.dp = 16;
  q.training.global_batch = 1536;
  q.training.micro_batch = 1;
  q.capacity = Bytes{80e9};
  const MemoryBreakdown b = estimate_memory(q);
  CHECK(b.stage == 0);
  CHECK(b.stage_reason.find("first") != std::string::npos);
  double sum = 0;
  for (const MemoryLine& l : b.lines) sum += l.bytes.value;
  CHECK(sum == doctest::Approx(b.total.value));
  CHECK(b.find_line("embedding: weights") != nullptr);
  CHECK(b.find_line("gradient buckets") != nullptr);
  CHECK(b.find_line("CUDA context") != nullptr);
  const MemoryBreakdown last = stage_memory(q, 7);
  CHECK(last.find_line("logits and loss (fp32)")->bytes.value == doctest::Approx(2048.0 * 51200 / 8 * 4));
}

