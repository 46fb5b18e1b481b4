// Gradient buckets: which data-parallel reductions a pipeline rank runs, and when their gradients
// exist.
//
// Each model chunk's gradients split into buckets of `bucket_bytes` from its last layer to its
// first (DDP / Megatron bucketing: the last layers' gradients appear first in backward). Under
// Megatron-Core's rule ([sync] bucketing = "megatron-core", specs.h Bucketing) only the first
// pipeline rank's first model chunk is cut; every other chunk is one bucket, ready when the
// chunk's backward step ends. A bucket
// is reduced after the chunk's last backward (gradient accumulation in Megatron's fp32 main_grad
// / DDP no_sync), except under ZeRO-2, which reduce-scatters every micro-batch's gradients and
// keeps only its shard (DeepSpeed stage 2, FSDP SHARD_GRAD_OP). A bucket becomes ready at the
// fraction of its backward step where its layers finish. ZeRO-3 reduces per layer inside the
// passes (stage_costs.h), so it plans no buckets here; nor does a job without data parallelism.
#pragma once

#include <vector>

#include "workloads/specs.h"
#include "workloads/training/pipeline_schedule.h"

namespace clustersim::workloads {

struct Bucket {
  double bytes = 0;
  double ready_fraction = 1;  // of its backward step at which its gradients exist
  int chunk = 0;
  int step = 0;               // index in the rank's order of the backward step that produces it
};

// One pipeline rank's buckets for one iteration. Invariant: `first_of_step` has one entry per
// step of the rank's order plus one, non-decreasing, ending at `reductions.size()`.
struct GradientBuckets {
  std::vector<Bucket> reductions;   // in the order their gradients appear
  std::vector<double> param_buckets;  // bytes of each bucket of one copy of the rank's gradients
  std::vector<int> param_bucket_chunk;  // [bucket]: its model chunk
  std::vector<int> first_of_step;   // [step]: first index in `reductions` the step produces
};

// How gradients are bucketed and when they are reduced.
struct BucketRule {
  bool reduce = true;             // false: no bucketed reductions (dp < 2, or ZeRO-3)
  bool every_micro_batch = false; // ZeRO-2: every backward reduces, not only a chunk's last
  double bucket_bytes = 0;
  double grad_bytes = 4;          // per parameter in the reduction (stage_costs.h bucket_grad_bytes)
  Bucketing bucketing = Bucketing::EveryChunk;

  // [sync] bucket_params become bytes at `grad_bytes` a parameter, the bytes the reduction carries,
  // so a bucket holds the parameters the framework put in it.
  static BucketRule of(const ParallelSpec& parallel, const TrainingSpec& training, const SyncSpec& sync);
  // Whether model chunk `chunk` of pipeline rank `pipeline_rank` is cut into buckets (else one).
  bool cuts(int pipeline_rank, int chunk) const {
    return bucketing == Bucketing::EveryChunk || (pipeline_rank == 0 && chunk == 0);
  }
};

// The buckets of pipeline rank `pipeline_rank`, which runs `order`, holding `chunk_params[c]`
// parameters in chunk c.
GradientBuckets plan_gradient_buckets(const std::vector<PipelineStep>& order, const std::vector<double>& chunk_params,
                                      const BucketRule& rule, int pipeline_rank);

// Data-parallel bytes one GPU sends per iteration, given the bytes of every rank's bucketed
// reductions together (ZeRO-3: its per-layer gathers and reduce-scatters instead).
double dp_bytes_per_gpu(double reduced_bytes, const ModelSpec& model, const ParallelSpec& parallel,
                        const TrainingSpec& training, int micro_batches);

}  // namespace clustersim::workloads
