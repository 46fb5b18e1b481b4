// The memory model's ZeRO-3 gathered weights (memory_model.h): PyTorch FSDP's gathered and
// prefetched layers, or a replay of DeepSpeed ZeRO-3's partitioned-parameter coordinator over the
// stage's submodules (stage3_max_live_parameters, stage3_prefetch_bucket_size).
#include "workloads/memory/memory_lines.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace clustersim::workloads {

namespace {

// One pass of DeepSpeed's coordinator over `order` (indices into `modules`): fetch the running
// submodule, prefetch while under both limits, release it after. Returns the peak bytes.
double deepspeed_pass(const std::vector<double>& modules, const std::vector<std::size_t>& order, double max_live,
                      double prefetch, double weight_bytes, double grad_bytes) {
  std::vector<bool> live(modules.size(), false);
  double resident = 0, peak = 0;
  std::size_t queue = 0;  // next position of `order` not yet fetched or prefetched
  for (std::size_t step = 0; step < order.size(); ++step) {
    const std::size_t m = order[step];
    if (!live[m]) live[m] = true, resident += modules[m];
    queue = std::max(queue, step + 1);
    const double budget = std::min(max_live - resident, prefetch);
    for (double taken = 0; queue < order.size() && taken < budget; ++queue) {
      const std::size_t next = order[queue];
      if (live[next]) continue;
      live[next] = true;
      resident += modules[next];
      taken += modules[next];
    }
    peak = std::max(peak, resident * weight_bytes + modules[m] * grad_bytes);
    live[m] = false;
    resident -= modules[m];
  }
  return peak;
}

// The stage's submodules with weights, in forward order: per layer the fused QKV projection, the
// out-projection, fc1 (gate and up fused for SwiGLU, as Megatron's linear_fc1) and fc2; the word
// embedding first on stage 0 and the output layer last on the last stage.
std::vector<double> stage_submodules(const ModelSpec& m, const ParallelSpec& par, int stage) {
  const double h = m.hidden, f = m.ffn_hidden, t = par.tp;
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const double kv_width = static_cast<double>(kv) * m.head_dim(), q = m.attention_width();
  const double fc1 = (m.mlp == MlpKind::Gelu ? 1.0 : 2.0) * h * f / t;
  std::vector<double> modules;
  if (stage == 0) modules.push_back(static_cast<double>(m.vocab) * h / t);
  for (int l = 0; l < par.layers_on_stage(m.layers, stage); ++l) {
    modules.insert(modules.end(), {h * (q + 2.0 * kv_width) / t, q * h / t, fc1, f * h / t});
  }
  if (stage == par.pp - 1) modules.push_back(static_cast<double>(m.vocab) * h / t);
  return modules;
}

}  // namespace

double deepspeed_live_bytes(const std::vector<double>& modules, double max_live_parameters,
                            double prefetch_parameters, double weight_bytes, double grad_bytes) {
  std::vector<std::size_t> forward(modules.size());
  for (std::size_t i = 0; i < modules.size(); ++i) forward[i] = i;
  const std::vector<std::size_t> backward(forward.rbegin(), forward.rend());
  return std::max(deepspeed_pass(modules, forward, max_live_parameters, prefetch_parameters, weight_bytes, 0.0),
                  deepspeed_pass(modules, backward, max_live_parameters, prefetch_parameters, weight_bytes, grad_bytes));
}

double zero3_gathered_bytes(const MemoryRequest& r, int stage) {
  const ParallelSpec& par = r.parallel;
  if (par.zero < 3 || par.grad_replicas() <= 1) return 0.0;
  const double weight = state_bytes_per_param(r.training).weights;
  if (par.zero3_gather == Zero3Gather::Block) {
    // A layer of an MoE or hybrid model gathers only the rank's own experts: Megatron-FSDP keeps
    // expert parameters in their own groups (".experts." in the name), sharded over and gathered
    // within the expert-data-parallel group (NVIDIA/Megatron-LM cd4afffa, megatron/core/distributed/
    // fsdp/src/megatron_fsdp/param_and_grad_buffer.py l.1782-1794, 2585-2603), so a gathered layer
    // holds its non-expert weights and experts / ep: the per-EP-rank layer the time model gathers
    // (stage_costs.cpp, layer_zero3).
    const ModelSpec& m = r.model;
    const double layer = m.is_moe() || m.is_hybrid() ? m.layer_parameters_per_ep_rank(par.ep) : layer_params(m, r.options);
    return r.options.zero3_prefetch_layers * layer / par.tp * weight;
  }
  // The unsharded gradient has the parameters' dtype until it reaches the reduce bucket.
  return deepspeed_live_bytes(stage_submodules(r.model, par, stage), r.options.deepspeed_max_live_parameters,
                              r.options.deepspeed_prefetch_parameters, weight, weight);
}

}  // namespace clustersim::workloads
