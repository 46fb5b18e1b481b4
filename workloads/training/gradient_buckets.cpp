// Gradient buckets (see gradient_buckets.h for when gradients are reduced and why).
#include "workloads/training/gradient_buckets.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "workloads/compute/compute_model.h"
#include "workloads/training/stage_costs.h"

namespace clustersim::workloads {
namespace {

// A bucket of a chunk before it is placed in the order: bytes, the fraction of the chunk's backward
// done when it is ready, and its group.
struct ChunkBucket {
  double bytes, fraction;
  GradGroup group;
};
// Per chunk: its buckets, in the order they become ready.
using ChunkBuckets = std::vector<std::vector<ChunkBucket>>;

// One chunk's buckets of one group, from its last layer.
std::vector<ChunkBucket> cut_chunk(double params, GradGroup group, bool cut, const BucketRule& rule) {
  std::vector<ChunkBucket> out;
  const double total = params * rule.grad_bytes;
  for (double done = 0; done < total - 0.5;) {
    const double b = cut ? std::min(rule.bucket_bytes, total - done) : total - done;
    done += b;
    out.push_back({b, done / total, group});
  }
  return out;
}

ChunkBuckets split_chunks(const std::vector<double>& chunk_params, const std::vector<double>& chunk_expert_params,
                          const BucketRule& rule, int pipeline_rank, GradientBuckets& g) {
  ChunkBuckets out(chunk_params.size());
  for (std::size_t c = 0; c < chunk_params.size(); ++c) {
    const bool cut = rule.cuts(pipeline_rank, static_cast<int>(c));
    const std::vector<ChunkBucket> dense = cut_chunk(chunk_params[c], GradGroup::Dense, cut, rule);
    const std::vector<ChunkBucket> expert =
        c < chunk_expert_params.size() ? cut_chunk(chunk_expert_params[c], GradGroup::Expert, cut, rule)
                                       : std::vector<ChunkBucket>{};
    for (const std::vector<ChunkBucket>* part : {&dense, &expert}) {
      for (const ChunkBucket& b : *part) {
        g.param_buckets.push_back(b.bytes);
        g.param_bucket_chunk.push_back(static_cast<int>(c));
        g.param_bucket_group.push_back(b.group);
      }
    }
    // Both lists are in readiness order; at equal fractions the dense bucket goes first.
    std::merge(dense.begin(), dense.end(), expert.begin(), expert.end(), std::back_inserter(out[c]),
               [](const ChunkBucket& a, const ChunkBucket& b) { return a.fraction < b.fraction; });
  }
  return out;
}

// [chunk]: index in `order` of its last backward, or -1.
std::vector<int> last_backward_of_chunk(const std::vector<PipelineStep>& order, std::size_t chunks) {
  std::vector<int> last(chunks, -1);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!order[i].forward) last[static_cast<std::size_t>(order[i].chunk)] = static_cast<int>(i);
  }
  return last;
}

}  // namespace

BucketRule BucketRule::of(const ParallelSpec& parallel, const TrainingSpec& training, const SyncSpec& sync) {
  BucketRule rule;
  rule.reduce = parallel.zero != 3 && parallel.grad_replicas() >= 2;
  rule.reduce_experts = parallel.zero != 3 && parallel.ep > 1 && parallel.expert_dp() >= 2;
  rule.every_micro_batch = parallel.zero == 2;
  rule.grad_bytes = bucket_grad_bytes(training);
  rule.bucket_bytes = std::max(1.0, sync.bucket_bytes(rule.grad_bytes));
  rule.bucketing = sync.bucketing;
  return rule;
}

GradientBuckets plan_gradient_buckets(const std::vector<PipelineStep>& order, const std::vector<double>& chunk_params,
                                      const BucketRule& rule, int pipeline_rank,
                                      const std::vector<double>& chunk_expert_params) {
  GradientBuckets g;
  g.first_of_step.assign(order.size() + 1, 0);
  const std::vector<double> none(chunk_params.size(), 0.0);
  const ChunkBuckets chunk_buckets = split_chunks(rule.reduce ? chunk_params : none,
                                                  rule.reduce_experts ? chunk_expert_params : none, rule,
                                                  pipeline_rank, g);
  const std::vector<int> last_backward = last_backward_of_chunk(order, chunk_params.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    g.first_of_step[i] = static_cast<int>(g.reductions.size());
    const PipelineStep& step = order[i];
    if (step.forward) continue;
    const auto chunk = static_cast<std::size_t>(step.chunk);
    if (!rule.every_micro_batch && static_cast<int>(i) != last_backward[chunk]) continue;
    for (const ChunkBucket& b : chunk_buckets[chunk]) {
      g.reductions.push_back(Bucket{b.bytes, b.fraction, step.chunk, static_cast<int>(i), b.group});
    }
  }
  g.first_of_step[order.size()] = static_cast<int>(g.reductions.size());
  return g;
}

double dp_bytes_per_gpu(double reduced_bytes, const ModelSpec& model, const ParallelSpec& parallel,
                        const TrainingSpec& training, int micro_batches) {
  const double dp = parallel.grad_replicas();  // data- and context-parallel ranks reduce together
  const int pp = parallel.pp;
  // Hybrid sharding: gathers and reduce-scatters over the shard group (n ranks), and the gradient
  // shard (1/n of the buffer) all-reduced across the m = shard_instances groups.
  const double n = parallel.shard_ranks(), m = parallel.shard_instances;
  const double across = m > 1 ? 2.0 * (m - 1) / m / n : 0.0;
  if (parallel.zero == 3 && dp > 1) {
    const double grad_bytes = bucket_grad_bytes(training);
    // ep > 1: the rank's own experts go on the expert-data-parallel groups (layer_zero3), and
    // their bytes are zero3_expert_bytes_per_gpu's, which the caller adds.
    const double experts = zero3_layer_expert_parameters(model, parallel);
    const double layer_params = parallel.ep > 1 ? model.layer_parameters_per_ep_rank(parallel.ep) / parallel.tp - experts / parallel.tp
                                                : model.layer_parameters() / parallel.tp;
    const double per_layer = layer_params * ((2.0 * activation_bytes(training.precision) + grad_bytes) * (n - 1) / n +
                                             grad_bytes * across);
    return per_layer * model.layers / pp * micro_batches;
  }
  if (m > 1) return reduced_bytes / std::max(1, pp) * (2.0 * (n - 1) / n + across);
  // Ring all-reduce sends 2(n-1)/n of the buffer; reduce-scatter + all-gather the same in total.
  return reduced_bytes / std::max(1, pp) * 2.0 * (dp - 1) / dp;
}

// Megatron-Core splits the expert-data-parallel group like the data-parallel one under hybrid
// sharding: intra groups of edp / instances consecutive ranks, and across them
// (parallel_state.py l. 1193-1239, create_hierarchical_groups).
double expert_dp_bytes_per_gpu(double reduced_bytes, const ParallelSpec& parallel) {
  const double edp = parallel.expert_dp(), m = std::max(1, parallel.shard_instances), n = edp / m;
  const double across = m > 1 ? 2.0 * (m - 1) / m / n : 0.0;
  if (edp < 2) return 0.0;
  return reduced_bytes / std::max(1, parallel.pp) * (2.0 * (n - 1) / n + across);
}

double zero3_layer_expert_parameters(const ModelSpec& model, const ParallelSpec& parallel) {
  if (parallel.ep <= 1 || model.layers <= 0) return 0.0;
  const double moe_layers =
      model.is_hybrid() ? model.layers_of_kind_in(LayerKind::Moe, 0, model.layers) : model.moe_layers_in(0, model.layers);
  return moe_layers * model.expert_parameters() / model.layers / parallel.ep;
}

// The same all-gather + reduce-scatter (+ the shard's all-reduce across instances) per layer as the
// dense part, on shard groups of edp / shard_instances ranks.
double zero3_expert_bytes_per_gpu(const ModelSpec& model, const ParallelSpec& parallel, const TrainingSpec& training,
                                  int micro_batches) {
  const double edp = parallel.expert_dp(), m = std::max(1, parallel.shard_instances), n = edp / m;
  if (parallel.zero != 3 || parallel.grad_replicas() <= 1 || parallel.ep <= 1 || edp < 2) return 0.0;
  const double grad_bytes = bucket_grad_bytes(training);
  const double across = m > 1 ? 2.0 * (m - 1) / m / n : 0.0;
  const double params = zero3_layer_expert_parameters(model, parallel) / parallel.expert_tp();
  const double per_layer = params * ((2.0 * activation_bytes(training.precision) + grad_bytes) * (n - 1) / n + grad_bytes * across);
  return per_layer * model.layers / std::max(1, parallel.pp) * micro_batches;
}

}  // namespace clustersim::workloads
