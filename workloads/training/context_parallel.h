// Context parallelism's communication in one transformer layer (Megatron-Core
// --context-parallel-size with Transformer Engine's attention): the sequence is split over the cp
// ranks of a CP group, each holding s/cp tokens; attention needs every token's keys and values.
//
// p2p (ring attention, Megatron's default cp_comm_type): the forward runs cp attention steps, one
// per K/V chunk; while step i computes with the chunk it holds, the chunk is passed on to the
// next rank of the ring, so (cp-1) sends of one K/V chunk per rank per layer, each hidden behind
// one step's attention (exposed: what a send takes beyond it). The backward passes the K/V chunks
// round again together with the partial dK/dV, so each of its (cp-1) sends carries twice the bytes.
// Causal load balancing is assumed as Megatron does it (megatron/core/utils.py
// get_batch_on_this_cp_rank): the sequence is cut into 2·cp chunks and rank i holds chunks i and
// 2cp-1-i, so every rank and every step has equal causal work. Sources: Megatron-LM
// docs/source/api-guide/context_parallel.rst (K/V exchanged between a GPU and its counterparts
// in the other CP ranks, all-gather/reduce-scatter "transformed to point-to-point communications
// in ring topology"; GQA shrinks the volume to the kv heads; GPUs = TP x CP x PP x DP), and
// Transformer Engine's attention (cp_comm_type p2p / all_gather / a2a).
// allgather: K and V are all-gathered before attention (cp·chunk bytes) and dK/dV
// reduce-scattered after the backward, without overlap.
// a2a (DeepSpeed-Ulysses, Jacobs et al. 2023, "DeepSpeed Ulysses: System Optimizations for
// Enabling Training of Extreme Long Sequence Transformer Models"; Transformer Engine cp_comm_type
// "a2a"): before attention an all-to-all over the CP group turns each rank's s/cp tokens of all
// heads into all s tokens of heads/cp heads (Q, K and V), attention runs locally on whole
// sequences, and a second all-to-all returns the output to sequence sharding; the backward runs
// the same two on dO and on dQ, dK, dV. Blocking, not overlapped. Needs the heads (and the kv
// heads) on a GPU, heads/tp and kv_heads/tp, divisible by cp (the loader checks it). Per rank and
// all-to-all the buffer is tokens/cp x its heads x head_dim x e, of which (cp-1)/cp leaves the GPU;
// the attention work per rank, s x s over heads/cp, equals ring attention's s/cp x s over all heads.
// Recomputing the attention core (selective or full recompute) repeats the forward's traffic in
// the backward. The sends of the tp ranks' CP rings run at once and share links (memoised on
// the topology like the tensor-parallel collectives). Not modelled: the SMs the sends hold.
// Times in seconds, sizes in bytes.
#pragma once

#include "workloads/collectives/collective_memo.h"
#include "workloads/specs.h"
#include "workloads/training/parallel_layout.h"

namespace clustersim::workloads {

// Bytes of one K/V chunk one GPU sends per ring step in the forward: K and V of its s/cp tokens,
// b sequences, its kv heads (kv_heads/tp, at least one) of head_dim elements each.
double cp_kv_chunk_bytes(const ModelSpec& model, const ParallelSpec& parallel, int micro_batch, int element_bytes);
// DeepSpeed-Ulysses buffers one GPU holds before its all-to-alls, per layer: Q, K and V of its s/cp
// tokens (heads/tp + 2 kv_heads/tp heads of head_dim), and the attention output (heads/tp heads).
double cp_ulysses_qkv_bytes(const ModelSpec& model, const ParallelSpec& parallel, int micro_batch, int element_bytes);
double cp_ulysses_output_bytes(const ModelSpec& model, const ParallelSpec& parallel, int micro_batch, int element_bytes);
// Ring steps that send (forward, and again in backward): cp - 1.
inline int cp_ring_sends(int cp) { return cp > 1 ? cp - 1 : 0; }

// One layer's context-parallel communication per pass.
struct LayerContextParallel {
  double fwd = 0, bwd = 0;                // exposed seconds (block the compute stream)
  double fwd_hidden = 0, bwd_hidden = 0;  // seconds hidden behind attention (p2p)
  double fwd_bytes = 0, bwd_bytes = 0;    // bytes one GPU sends
};

struct ContextParallelInputs {
  const ModelSpec& model;
  const ParallelSpec& parallel;
  const TrainingSpec& training;
  const ParallelLayout& layout;
  CollectiveMemo& memo;
  int element_bytes = 2;        // activation element size
  double attention_fwd_s = 0;   // the layer's attention core, forward and backward (no recompute)
  double attention_bwd_s = 0;
};

LayerContextParallel layer_context_parallel(const ContextParallelInputs& in);

}  // namespace clustersim::workloads
