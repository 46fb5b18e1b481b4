// The data-parallel gradient reduction carries training.grad_dtype's bytes with mixed precision
// (stage_costs.h bucket_grad_bytes): Megatron-Core's DistributedDataParallel allocates the gradient
// buffer in `torch.float if grad_reduce_in_fp32 else param.dtype` and reduces the buckets' grad_data
// in place, so `grad_reduce_in_fp32 = False` (grad_dtype = "bf16") halves the bytes of the same
// buckets; fp32 gradients keep 4 bytes a parameter, fp32 training too.
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/iteration_sim.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

struct DpRun {
  int reductions = 0;      // data-parallel spans on the timeline
  double bytes = 0;        // dp bytes sent per GPU per iteration
  double seconds = 0;      // summed data-parallel span time
};

// gpt3-1.3b at dp 8 on one DGX A100, buckets of 40e6 parameters (Megatron-Core's default size);
// zero = 3: per-layer gathers and gradient reduce-scatters instead of buckets.
DpRun run(topology::Precision precision, StateDtype grad_dtype, int zero = 0) {
  testing::Job j;
  j.cluster = testing::nodes_of("dgx-a100-80gb");
  j.model = testing::model_preset("gpt3-1.3b");
  j.model.seq_len = 256;
  j.parallel.dp = 8;
  j.parallel.zero = zero;
  j.training.global_batch = 8;
  j.training.micro_batch = 1;
  j.training.precision = precision;
  j.training.grad_dtype = grad_dtype;
  j.sync.bucket_params = 40e6;
  const IterationResult r = testing::simulate_job(j, {.timeline = true});
  DpRun out;
  out.bytes = r.dp_bytes_per_gpu;
  for (const TimelineSpan& s : r.timeline) {
    if (s.kind != SpanKind::DataParallel || s.rank != 0) continue;
    ++out.reductions;
    out.seconds += s.end_s - s.start_s;
  }
  return out;
}

}  // namespace

TEST_CASE("workloads::bucket_grad_bytes: 16-bit gradients reduce 2 bytes a parameter, fp32 gradients and fp32 training 4") {
  TrainingSpec t;
  t.precision = topology::Precision::Bf16;
  CHECK(bucket_grad_bytes(t) == 4);
  t.grad_dtype = StateDtype::Bf16;
  CHECK(bucket_grad_bytes(t) == 2);
  t.precision = topology::Precision::Fp8;
  CHECK(bucket_grad_bytes(t) == 2);
  t.precision = topology::Precision::Fp32;
  CHECK(bucket_grad_bytes(t) == 4);
  t.precision = topology::Precision::Fp16;
  t.grad_dtype = StateDtype::Fp32;
  CHECK(bucket_grad_bytes(t) == 2);  // fp16 training reduces in the parameter dtype (grad_reduce_bytes)
}

TEST_CASE("workloads::simulate_iteration: grad_dtype bf16 reduces the same buckets at half the bytes") {
  const DpRun fp32 = run(topology::Precision::Bf16, StateDtype::Fp32);
  const DpRun bf16 = run(topology::Precision::Bf16, StateDtype::Bf16);
  // gpt3-1.3b's ~1.3e9 parameters in buckets of 40e6: the same ~33 buckets either way.
  CHECK(fp32.reductions > 20);
  CHECK(bf16.reductions == fp32.reductions);
  CHECK(bf16.bytes == doctest::Approx(fp32.bytes / 2).epsilon(1e-9));
  CHECK(bf16.seconds < 0.75 * fp32.seconds);
  // fp32 training keeps 4 bytes whatever grad_dtype says.
  const DpRun full = run(topology::Precision::Fp32, StateDtype::Bf16);
  CHECK(full.bytes == doctest::Approx(fp32.bytes).epsilon(1e-9));
}

TEST_CASE("workloads::simulate_iteration: under ZeRO-3 grad_dtype bf16 halves the gradient reduce-scatter, not the gathers") {
  // Megatron-FSDP allocates its main_grad buffer in `torch.float32 if grad_reduce_in_fp32 else
  // grad_dtype` (core_v0.15.0 megatron_fsdp/param_and_grad_buffer.py l. 1867). Per layer a GPU
  // sends (2 gathers x 2 B + the reduce-scatter's 4 B, or 2 B) x (n-1)/n a parameter: 8 -> 6.
  const DpRun fp32 = run(topology::Precision::Bf16, StateDtype::Fp32, 3);
  const DpRun bf16 = run(topology::Precision::Bf16, StateDtype::Bf16, 3);
  CHECK(fp32.bytes > 0);
  CHECK(bf16.bytes == doctest::Approx(fp32.bytes * 6.0 / 8.0).epsilon(1e-9));
}
