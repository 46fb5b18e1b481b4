// Context-parallel communication per layer (see context_parallel.h for the model and why).
#include "workloads/training/context_parallel.h"

#include <algorithm>
#include <vector>

namespace clustersim::workloads {
namespace {

// The tp ranks' CP rings of replica 0, stage 0: they send at once.
std::vector<std::vector<int>> cp_rings(const ParallelLayout& layout) {
  std::vector<std::vector<int>> rings;
  for (int t = 0; t < layout.tp; ++t) rings.push_back(layout.cp_group(t, 0, 0));
  return rings;
}

// One ring step: every rank sends `chunk` bytes to its ring successor. A ring all-gather of cp
// chunks is exactly cp-1 such steps back to back, so a step takes 1/(cp-1) of it.
double ring_step_s(const ContextParallelInputs& in, double chunk) {
  const int cp = in.parallel.cp;
  const double all = in.memo
                         .concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, cp_rings(in.layout),
                                     sim::Bytes{chunk * cp})
                         .seconds();
  return all / cp_ring_sends(cp);
}

// (cp-1) sends of `step_s` each, behind one of cp equal attention steps of `attention_s`.
void ring_pass(double step_s, double attention_s, int cp, double& exposed, double& hidden) {
  const double per_step_attention = attention_s / cp;
  exposed = cp_ring_sends(cp) * std::max(0.0, step_s - per_step_attention);
  hidden = cp_ring_sends(cp) * step_s - exposed;
}

LayerContextParallel ring_attention(const ContextParallelInputs& in, double chunk) {
  const int cp = in.parallel.cp;
  LayerContextParallel c;
  ring_pass(ring_step_s(in, chunk), in.attention_fwd_s, cp, c.fwd, c.fwd_hidden);
  ring_pass(ring_step_s(in, 2 * chunk), in.attention_bwd_s, cp, c.bwd, c.bwd_hidden);
  c.fwd_bytes = cp_ring_sends(cp) * chunk;
  c.bwd_bytes = cp_ring_sends(cp) * 2 * chunk;
  return c;
}

LayerContextParallel all_gather_kv(const ContextParallelInputs& in, double chunk) {
  const int cp = in.parallel.cp;
  const sim::Bytes all{chunk * cp};
  const auto rings = cp_rings(in.layout);
  const double gather = in.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, rings, all).seconds();
  const double scatter = in.memo.concurrent(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, rings, all).seconds();
  LayerContextParallel c;
  c.fwd = gather;
  c.bwd = gather + scatter;
  c.fwd_bytes = cp_ring_sends(cp) * chunk;
  c.bwd_bytes = 2 * cp_ring_sends(cp) * chunk;
  return c;
}

// DeepSpeed-Ulysses (a2a): two all-to-alls per pass over the CP group, not overlapped. Forward:
// Q, K and V from sequence-sharded to head-sharded before attention, the output back after;
// backward: dO before, dQ, dK and dV after. Each all-to-all keeps 1/cp of its buffer and sends the
// rest.
LayerContextParallel ulysses_all_to_all(const ContextParallelInputs& in) {
  const int cp = in.parallel.cp;
  const double qkv = cp_ulysses_qkv_bytes(in.model, in.parallel, in.training.micro_batch, in.element_bytes);
  const double out = cp_ulysses_output_bytes(in.model, in.parallel, in.training.micro_batch, in.element_bytes);
  const auto groups = cp_rings(in.layout);
  const auto a2a = [&](double bytes) {
    return in.memo.concurrent(CollectiveOp::AllToAll, CollectiveAlgo::Direct, groups, sim::Bytes{bytes}).seconds();
  };
  LayerContextParallel c;
  c.fwd = a2a(qkv) + a2a(out);
  c.bwd = c.fwd;
  c.fwd_bytes = (qkv + out) * (cp - 1) / cp;
  c.bwd_bytes = c.fwd_bytes;
  return c;
}

}  // namespace

double cp_ulysses_qkv_bytes(const ModelSpec& model, const ParallelSpec& parallel, int micro_batch, int element_bytes) {
  const int kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const double heads = static_cast<double>(model.heads) / parallel.tp + 2.0 * std::max(1.0, static_cast<double>(kv) / parallel.tp);
  const double tokens = static_cast<double>(micro_batch) * parallel.local_seq_len(model.seq_len);
  return tokens * heads * model.head_dim() * element_bytes;
}

double cp_ulysses_output_bytes(const ModelSpec& model, const ParallelSpec& parallel, int micro_batch, int element_bytes) {
  const double tokens = static_cast<double>(micro_batch) * parallel.local_seq_len(model.seq_len);
  return tokens * static_cast<double>(model.heads) / parallel.tp * model.head_dim() * element_bytes;
}

double cp_kv_chunk_bytes(const ModelSpec& model, const ParallelSpec& parallel, int micro_batch, int element_bytes) {
  const int kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const double kv_heads = std::max(1.0, static_cast<double>(kv) / parallel.tp);
  const double tokens = static_cast<double>(micro_batch) * parallel.local_seq_len(model.seq_len);
  return 2.0 * tokens * kv_heads * model.head_dim() * element_bytes;
}

LayerContextParallel layer_context_parallel(const ContextParallelInputs& in) {
  if (in.parallel.cp <= 1) return {};
  const double chunk = cp_kv_chunk_bytes(in.model, in.parallel, in.training.micro_batch, in.element_bytes);
  LayerContextParallel c = in.parallel.cp_comm == CpComm::AllGather ? all_gather_kv(in, chunk)
                           : in.parallel.cp_comm == CpComm::A2a     ? ulysses_all_to_all(in)
                                                                     : ring_attention(in, chunk);
  if (in.training.recompute != Recompute::None) {  // the attention core's forward runs again
    c.bwd += c.fwd;
    c.bwd_hidden += c.fwd_hidden;
    c.bwd_bytes += c.fwd_bytes;
  }
  return c;
}

}  // namespace clustersim::workloads
