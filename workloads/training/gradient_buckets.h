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
//
// With expert parallelism (ep > 1) the routed experts' gradients are buckets of their own, reduced
// over the expert-data-parallel group rather than the data-parallel one: Megatron-Core marks
// expert weights allreduce = False when expert_model_parallel_size > 1 (core_v0.15.0
// extensions/transformer_engine.py l. 361, 410-413; transformer/moe/experts.py l. 120, 232-233),
// and DistributedDataParallel puts them in separate buffers with their own buckets
// (distributed_data_parallel.py l. 311-323, _allocate_buffers_for_parameters on the intra expert-dp
// group, the same bucket_size), issued beside the dense bucket groups (l. 474-566). A chunk's
// expert buckets are cut from its last layer like its dense ones and become ready at the same
// fractions of its backward; within a step the rank reduces them in the order they become ready.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/specs.h"
#include "workloads/training/pipeline_schedule.h"

namespace clustersim::workloads {

// The group a bucket is reduced over: the data-parallel (dp x cp) ranks, or the routed experts'
// expert-data-parallel ranks (tp x cp x dp / (etp x ep), ParallelSpec::expert_dp).
enum class GradGroup : std::uint8_t { Dense, Expert };

struct Bucket {
  double bytes = 0;
  double ready_fraction = 1;  // of its backward step at which its gradients exist
  int chunk = 0;
  int step = 0;               // index in the rank's order of the backward step that produces it
  GradGroup group = GradGroup::Dense;
};

// One pipeline rank's buckets for one iteration. Invariant: `first_of_step` has one entry per
// step of the rank's order plus one, non-decreasing, ending at `reductions.size()`.
struct GradientBuckets {
  std::vector<Bucket> reductions;   // in the order their gradients appear
  std::vector<double> param_buckets;  // bytes of each bucket of one copy of the rank's gradients
  std::vector<int> param_bucket_chunk;  // [bucket]: its model chunk
  std::vector<GradGroup> param_bucket_group;  // [bucket]: the group it is reduced (and gathered) over
  std::vector<int> first_of_step;   // [step]: first index in `reductions` the step produces
};

// How gradients are bucketed and when they are reduced.
struct BucketRule {
  bool reduce = true;             // false: no bucketed reductions (dp < 2, or ZeRO-3)
  // Expert gradients in buckets of their own on the expert-data-parallel group (ep > 1, that group
  // of 2 or more ranks, not ZeRO-3); false: with the dense ones (ep = 1) or not reduced (a group of one).
  bool reduce_experts = false;
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
// parameters in chunk c reduced over the data-parallel group and `chunk_expert_params[c]` (none
// when empty) over the expert-data-parallel group.
GradientBuckets plan_gradient_buckets(const std::vector<PipelineStep>& order, const std::vector<double>& chunk_params,
                                      const BucketRule& rule, int pipeline_rank,
                                      const std::vector<double>& chunk_expert_params = {});

// Data-parallel bytes one GPU sends per iteration, given the bytes of every rank's bucketed
// reductions together (ZeRO-3: its per-layer gathers and reduce-scatters instead).
double dp_bytes_per_gpu(double reduced_bytes, const ModelSpec& model, const ParallelSpec& parallel,
                        const TrainingSpec& training, int micro_batches);
// The same for the expert buckets' bytes, on the expert-data-parallel group.
double expert_dp_bytes_per_gpu(double reduced_bytes, const ParallelSpec& parallel);
// ZeRO-3 with ep > 1: the part of dp_bytes_per_gpu the routed experts' gathers and reduce-scatters
// send on the expert-data-parallel groups (layer_zero3); 0 otherwise.
double zero3_expert_bytes_per_gpu(const ModelSpec& model, const ParallelSpec& parallel, const TrainingSpec& training,
                                  int micro_batches);
// ZeRO-3: a rank's routed expert parameters of an average layer (before expert tensor
// parallelism), gathered apart when ep > 1; 0 with ep = 1, where they stay with the dense ones.
double zero3_layer_expert_parameters(const ModelSpec& model, const ParallelSpec& parallel);

}  // namespace clustersim::workloads
