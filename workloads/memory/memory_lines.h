// How memory_model.cpp and its section files (model_states_memory.cpp, activation_memory.cpp,
// memory_buffers.cpp) put a stage's MemoryBreakdown together: each section adds named lines with
// their formula through a MemoryLineBuilder, which then keeps the persistent lines and the largest
// transient phase as the peak (see memory_model.h for what is modelled). Internal to
// workloads/memory/.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "topology/catalog.h"
#include "workloads/memory/memory_model.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

bool mixed_precision(topology::Precision p);
// snprintf of up to four numbers into a line's name or formula.
std::string format_text(const char* format, double a, double b = 0, double c = 0, double d = 0);
// Parameters of one transformer layer (MemoryOptions::exact_layer_params chooses the count).
double layer_params(const ModelSpec& m, const MemoryOptions& o);
// The model as one context-parallel rank sees it for activations: s/cp tokens of each sequence
// (its saved Q, K, V, O and softmax statistics are those of its own tokens: ring attention frees
// the K/V chunks it received once their step is done; Transformer Engine keeps only the local ones).
ModelSpec sequence_shard(const ModelSpec& m, const ParallelSpec& par);
int micro_batches_per_replica(const MemoryRequest& r);
// One gradient bucket's bytes ([sync] bucket_mb, or bucket_params of training.grad_dtype gradients).
double gradient_bucket_bytes(const MemoryRequest& r);
// First transformer layer (0-based) held by pipeline stage `stage`.
int first_layer_of_stage(const ModelSpec& m, const ParallelSpec& par, int stage);

// Collects a stage's lines into a MemoryBreakdown. finish() picks the peak: the persistent lines
// and the transient phase with the most bytes; the other transients are marked and left out of
// the totals.
class MemoryLineBuilder {
 public:
  explicit MemoryLineBuilder(MemoryBreakdown& b) : b_(b) {}
  void add(std::string name, MemoryCategory c, double bytes, std::string formula, std::uint8_t phases = 0) {
    if (bytes <= 0) return;
    b_.lines.push_back(MemoryLine{std::move(name), c, sim::Bytes{bytes}, std::move(formula), phases, true});
  }
  // `trainable` false: frozen weights (LoRA), no gradients or optimizer states. ZeRO-Offload moves
  // the gradients and optimizer states to host memory.
  void add_states(const std::string& what, double params, const MemoryRequest& r, bool trainable = true);
  void finish();

 private:
  static const char* phase_name(std::uint8_t phase);
  void count(const MemoryLine& l);
  MemoryBreakdown& b_;
};

// The sections of a stage's memory, each adding its lines (stage_memory calls them in this order).
// Weights, gradients and optimizer states (model_states_memory.cpp).
void add_model_states(MemoryLineBuilder& out, const MemoryRequest& r, int stage);
// Saved activations (activation_memory.cpp).
void add_activations(MemoryLineBuilder& out, const MemoryRequest& r, int stage);
// Gradient buckets, ZeRO-3 gathered parameters, workspaces, logits (memory_buffers.cpp).
void add_buffers(MemoryLineBuilder& out, const MemoryRequest& r, int stage);
// CUDA context, cuBLAS workspace, NCCL buffers (memory_buffers.cpp).
void add_runtime(MemoryLineBuilder& out, const MemoryRequest& r);

}  // namespace clustersim::workloads
