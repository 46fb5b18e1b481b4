// The work budget of a scenario (issue 14, "unbounded inputs"): a valid scenario can still ask the
// simulator for more work than any machine finishes — global_batch = 2147483646 is 10^9
// micro-batches per replica, sync.bucket_mb = 1e-300 a gradient bucket per byte, iterations =
// 2147483647 a thousand years of wall time. Each is estimated from the specs alone, before anything
// is built, and refused at its key with what it would take and the largest value that fits
// (docs/cli.md, "Limits"). The estimates are coarse on purpose: they only need to be right within
// a factor of a few, far below the factors of a million they catch.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_text.h"
#include "workloads/training/stage_costs.h"

namespace clustersim::scenarios {
namespace {

// Layer passes (one layer's forward or backward for one micro-batch on one pipeline stage) the
// iteration simulator may run in one run, summed over iterations. Measured: about 1.3 us each on one
// core (gpt3-1.3b on 2 GPUs, global_batch 65536: 3.1e6 passes in 3.9 s), so the limit is ~15-30 s.
constexpr double kMaxLayerPasses = 1e7;
// The caching-allocator replay (memory, run) scans the blocks a stage holds on each allocation:
// about 2 * micro-batches * (layers per stage)^2 block visits. Measured: 6.4e9 visits take 28 s
// (10,000 layers, 32 micro-batches), so the limit is ~5 s.
constexpr double kMaxAllocatorVisits = 1e9;
// Bucketed gradient reductions per run (each is a collective of flows). Measured: 2.6e5 buckets take
// 6.8 s (gpt3-1.3b, bucket_mb = 0.01), so the limit is ~5 s.
constexpr double kMaxBucketReductions = 2e5;
constexpr double kMiB = 1048576.0;
constexpr double kGradBytesPerParam = 2.0;  // bf16 gradients: the fewest bytes a gradient takes

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 1e6 ? "%.0f" : "%.2g", v);
  return buf;
}

// Parameters of one layer: the model's own count of its layers (every expert of an MoE layer, as
// no rank holds fewer before ep divides them), averaged over the layers. A per-layer guess of
// 4h^2 + every expert's SwiGLU MLP at hidden width, as this once was, overstates a hybrid Mamba +
// LatentMoE model ~13x (Nemotron 3 Ultra: one in 2.25 layers is an MoE layer, its 512 squared-ReLU
// experts are 2 matrices at latent 2048, not 3 at 8192) and refused a 25 MB bucket it runs with.
double layer_params(const workloads::ModelSpec& m) {
  return m.parameters_of_layers(0, m.layers) / std::max(1, m.layers);
}

int layers_per_stage(const workloads::ModelSpec& m, const workloads::ParallelSpec& p) {
  const int pp = std::max(1, p.pp);
  int most = std::max({(m.layers + pp - 1) / pp, p.first_stage_layers, p.last_stage_layers});
  if (!p.stage_layers.empty())
    for (int stage = 0; stage < pp; ++stage) most = std::max(most, p.layers_on_stage(m.layers, stage));
  return most;
}

}  // namespace

void Loader::check_work_budget() {
  const auto& m = spec_.model;
  const auto& p = spec_.parallel;
  const auto& tr = spec_.training;
  const int per_step = std::max(1, tr.micro_batch * std::max(1, p.dp));
  const double micro_batches = std::max(1, tr.global_batch / per_step);
  const double iterations = std::max(1, tr.iterations);
  const double passes_per_iteration = 2.0 * micro_batches * m.layers;
  if (passes_per_iteration > kMaxLayerPasses) {
    // The largest batch within the limit that the schedule accepts (the interleaved schedule runs a
    // multiple of pp micro-batches per replica); the loader tries it before it is shown.
    const long long step = static_cast<long long>(per_step) * (p.schedule == workloads::Schedule::Interleaved ? std::max(1, p.pp) : 1);
    const long long largest = static_cast<long long>(std::floor(kMaxLayerPasses / (2.0 * m.layers) * per_step / step)) * step;
    std::vector<Choice> fits;
    if (largest >= step && largest <= INT_MAX) fits = value_choices("training.global_batch", {std::to_string(largest)});
    error_with_choices("training.global_batch",
                       "global_batch = " + std::to_string(tr.global_batch) + " means " + sci(micro_batches) +
                           " micro-batches per data-parallel replica, " + sci(passes_per_iteration) +
                           " layer passes (forward and backward) per iteration; the limit is " + sci(kMaxLayerPasses) +
                           " per run (docs/cli.md, Limits)",
                       std::move(fits),
                       listing_hint("", "global_batch", "use fewer layers or a larger dp",
                                    " or a smaller multiple of " + std::to_string(step) + " (micro_batch * dp" +
                                        (step != per_step ? " * pp" : "") + ")"));
    return;  // the memory replay and the buckets would only say the same of global_batch
  }
  const double stage_layers = layers_per_stage(m, p);
  const double buckets = bucket_count(stage_layers * layer_params(m) / std::max(1, p.tp));
  const bool iteration_fits = buckets <= kMaxBucketReductions;  // passes_per_iteration fits (checked above)
  if (iteration_fits &&
      (passes_per_iteration * iterations > kMaxLayerPasses || buckets * iterations > kMaxBucketReductions)) {
    const double fit = std::floor(std::min(kMaxLayerPasses / passes_per_iteration, kMaxBucketReductions / std::max(1.0, buckets)));
    error_at_key("training.iterations",
                 "iterations = " + std::to_string(tr.iterations) + " of " + sci(passes_per_iteration) +
                     " layer passes and " + sci(buckets) + " bucket reductions each; the limits are " +
                     sci(kMaxLayerPasses) + " layer passes and " + sci(kMaxBucketReductions) +
                     " bucket reductions per run (docs/cli.md, Limits)",
                 "use iterations <= " + sci(std::max(1.0, fit)) +
                     " (every simulated iteration of a scenario is the same; one is the steady state)");
    return;
  }
  const double visits = 2.0 * micro_batches * stage_layers * stage_layers;
  if (visits > kMaxAllocatorVisits)
    error_at_key(spec_.origins.count("model.layers") ? "model.layers" : "parallelism.pp",
                 std::to_string(static_cast<long long>(stage_layers)) + " layers per pipeline stage and " +
                     sci(micro_batches) + " micro-batches mean " + sci(visits) +
                     " block visits in the memory replay; the limit is " + sci(kMaxAllocatorVisits) +
                     " (docs/cli.md, Limits)",
                 "use more pipeline stages (pp) or fewer layers");
  if (buckets > kMaxBucketReductions) bucket_budget_error(stage_layers * layer_params(m) / std::max(1, p.tp), buckets);
}

// Gradient buckets per iteration of one pipeline stage holding `stage_params` (0 without data
// parallelism: no bucketed reduction).
// One gradient bucket in bytes as the iteration cuts it (BucketRule::of): a bucket_params bucket at
// the bytes a parameter the reduction carries (stage_costs.h bucket_grad_bytes), so it counts here
// as the same bucket written in bucket_mb would.
double Loader::bucket_bytes() const {
  return spec_.sync.bucket_bytes(workloads::bucket_grad_bytes(spec_.training));
}

double Loader::bucket_count(double stage_params) const {
  if (spec_.parallel.grad_replicas() < 2) return 0;
  return std::ceil(stage_params * kGradBytesPerParam / std::max(1.0, bucket_bytes()));
}

// A bucket size below 1 MB is the setting to change; at a usual size the model is what is large.
void Loader::bucket_budget_error(double stage_params, double buckets) {
  const double grad_bytes = stage_params * kGradBytesPerParam;
  char mb[32];
  std::snprintf(mb, sizeof mb, "%.2g", grad_bytes / kMaxBucketReductions / kMiB * 1.01);
  const bool in_params = spec_.sync.bucket_params > 0;
  const double bucket_mb = bucket_bytes() / kMiB;
  const bool tiny = bucket_mb < 1.0;
  const std::string model_key = spec_.origins.count("model.layers") ? "model.layers" : "model.hidden";
  const std::string size = in_params ? "bucket_params = " + format_number(spec_.sync.bucket_params)
                                     : "bucket_mb = " + format_number(spec_.sync.bucket_mb);
  error_at_key(tiny ? (in_params ? "sync.bucket_params" : "sync.bucket_mb") : model_key,
               size + " splits each pipeline stage's ~" +
                   sci(grad_bytes) + " bytes of gradients into " + sci(buckets) +
                   " buckets per iteration (one all-reduce each); the limit is " + sci(kMaxBucketReductions) +
                   " bucket reductions per run (docs/cli.md, Limits)",
               tiny ? std::string("use bucket_mb >= ") + mb
                    : "use a smaller model, more pipeline stages (pp) or tensor parallelism (tp), or bucket_mb >= " +
                          std::string(mb));
}

}  // namespace clustersim::scenarios
