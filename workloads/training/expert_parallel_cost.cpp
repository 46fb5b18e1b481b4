// An MoE layer's expert-parallel communication (see stage_cost_parts.h): Megatron-Core's alltoall
// token dispatcher's dispatch and combine over each pipeline stage's own expert groups (or the
// flex dispatcher's node-deduplicated ones, DeepEP / HybridEP, where the groups leave the node), the
// all-gather / reduce-scatter over the expert tensor-parallel group (etp > 1; with sequence
// parallelism etp = tp too), and how a chunk's MoE layers add them to its blocking communication.
#include "workloads/training/stage_cost_parts.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "workloads/model/transformer_ops.h"
#include "workloads/training/ep_overlap.h"
#include "workloads/training/moe_node_routing.h"

namespace clustersim::workloads {
namespace {

constexpr double kTokenCountBytes = 8;       // torch.long, one per expert
constexpr double kRoutingMapEntryBytes = 1;  // torch.bool, one per token and expert

// Expert tensor parallelism (Megatron-Core's alltoall dispatcher with etp > 1, etp = tp included:
// core_v0.9.0 token_dispatcher.py gathers over the tensor-parallel group, which is what experts
// split over before etp existed; core_v0.15.0 over pg_collection.expt_tp): after the all-to-all
// the received token-slots are all-gathered over the etp group, and reduce-scattered before the
// combine; per pass one all-gather and one reduce-scatter of the slots the GPU's experts process
// (x etp of the dispatched buffer), all groups at once. With sequence parallelism (which
// Megatron-Core requires of an MoE layer with tensor parallelism: moe_layer.py raises without it)
// they replace the MLP's sequence-parallel pair (layer_tensor_parallel with moe_layer), which an
// MoE layer does not run; without it etp = tp keeps the layer's all-reduces instead.
bool expert_tensor_parallel(const ParallelSpec& p) {
  const int etp = p.expert_tp();
  return etp > 1 && (etp != p.tp || p.sequence_parallel);
}

double expert_tensor_parallel_s(const StageCostInputs& in, double dispatched_bytes, int stage) {
  const ParallelSpec& p = in.parallel;
  const int etp = p.expert_tp();
  if (!expert_tensor_parallel(p)) return 0.0;
  std::vector<std::vector<int>> groups;
  for (int edp = 0; edp < p.expert_dp(); ++edp) {
    for (int e = 0; e < p.ep; ++e) groups.push_back(in.layout.expert_tp_group(etp, p.ep, e, edp, stage));
  }
  const sim::Bytes gathered{dispatched_bytes * etp};
  return in.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups, gathered).seconds() +
         in.memo.concurrent(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups, gathered).seconds();
}

// The flex dispatcher (ParallelSpec::moe_dispatcher deepep / hybridep) on groups that span nodes:
// the share of the remote bytes that crosses the network (moe_node_routing.h), from the first
// group's nodes (every group is laid out alike); nullopt inside one node, where it is the NVLink
// all-to-all the alltoall dispatcher runs, and for a group spread unevenly over nodes (not modelled:
// costed as the alltoall dispatcher).
struct NodeDedup {
  double share = 1;  // CollectiveRequest::remote_share
  double sent = 0;   // bytes a GPU sends (network + NVLink forwarding) per byte of the dispatch buffer
};
std::optional<NodeDedup> node_dedup(const StageCostInputs& in, const std::vector<int>& group) {
  if (in.parallel.moe_dispatcher == MoeDispatcher::AllToAll) return std::nullopt;
  std::vector<int> node_of;
  for (int r : group) node_of.push_back(in.memo.topology().server_of_gpu(r));
  const int n = static_cast<int>(group.size());
  const int g = static_cast<int>(std::count(node_of.begin(), node_of.end(), node_of.front()));
  if (g == n) return std::nullopt;
  // A group spread unevenly over nodes has no one rail peer per node: the alltoall's traffic.
  for (int node : node_of)
    if (std::count(node_of.begin(), node_of.end(), node) != g) return std::nullopt;
  NodeDedup d;
  d.share = expected_node_routing(in.model, node_of).share();
  // node_alltoall_collective.h: (g-1) N S/n over NVLink, share (n-g) S/n over the network.
  d.sent = ((g - 1.0) * (n / g) + d.share * (n - g)) / n;
  return d;
}

// The alltoall dispatcher's token-count all-gather: dropless, MoEAlltoAllTokenDispatcher.preprocess
// gathers every rank's per-expert counts (routing_map.sum(dim=0).long(): experts x 8 B) over the
// expert tensor x expert parallel group (gather_from_sequence_parallel_region(..., group =
// tp_ep_group), core_r0.14.0 token_dispatcher.py:496-499, run whenever ep or etp > 1) to build the
// all-to-all's split sizes, in the forward on the compute stream, ahead of the host sync that
// waits for it ("before_ep_alltoall"); a small-message all-gather, latency-bound. Drop-and-pad
// returns the counts from the capacity before it (l.444-466); the counts carry no gradient, so the
// backward gathers nothing. DeepEP exchanges its layout inside its own notify kernel: not a
// separate collective. HybridEP does not: its metadata preprocessing, run by every forward
// dispatch (HybridEPDispatch.forward passes no handle, core_r0.16.0 fused_a2a.py:375; the
// backward reuses the handle), all-gathers every rank's [tokens, experts] bool routing map over
// the dispatcher's group with torch.distributed.all_gather_into_tensor (deepseek-ai/DeepEP
// hybrid-ep c9f647d deep_ep/hybrid_ep_buffer.py:171; 94a9f8f csrc/hybrid_ep/executor/executor.cu
// allgather_routing_map, NCCL unless the buffer enables its custom intra-node all-gather, which
// Megatron-Core's init_hybrid_ep_buffer never does), on the compute stream ahead of the
// preprocess kernel, with or without drop-and-pad.
double routing_metadata_gather_s(const StageCostInputs& in, const OpShape& shape, int stage) {
  const ParallelSpec& p = in.parallel;
  const int ep = p.ep, etp = p.expert_tp();
  const bool drop_and_pad = in.model.capacity_factor > 0;
  const bool hybridep = p.moe_dispatcher == MoeDispatcher::HybridEp;
  if (ep * etp <= 1) return 0.0;
  if (!hybridep && (p.moe_dispatcher != MoeDispatcher::AllToAll || drop_and_pad)) return 0.0;
  std::vector<std::vector<int>> groups;
  for (int edp = 0; edp < p.expert_dp(); ++edp) {
    std::vector<int> tp_ep;
    for (int t = 0; t < etp; ++t) {
      const std::vector<int> g = in.layout.expert_ep_group(etp, ep, t, edp, stage);
      tp_ep.insert(tp_ep.end(), g.begin(), g.end());
    }
    groups.push_back(std::move(tp_ep));
  }
  // HybridEP: one byte per token and expert, for the tokens this rank routes (moe_dispatch_bytes's).
  const double routed_tokens = static_cast<double>(shape.micro_batch) * shape.seq_len / std::max(1, shape.cp) / std::max(1, shape.tp);
  const double per_rank = hybridep ? routed_tokens * in.model.experts * kRoutingMapEntryBytes
                                   : static_cast<double>(in.model.experts) * kTokenCountBytes;
  const sim::Bytes gathered{per_rank * etp * ep};
  return in.memo.concurrent(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups, gathered).seconds();
}

}  // namespace

LayerExpertParallel layer_expert_parallel(const StageCostInputs& in, const OpShape& shape, int stage) {
  LayerExpertParallel e;
  const ParallelSpec& p = in.parallel;
  const int ep = p.ep, etp = p.expert_tp();
  const double nccl_share = in.compute.constants().get("ep_overlap_sm_share");
  e.sm_share = ep_overlap_sm_share(p, in.compute.gpu().sms, false, nccl_share);
  if (!in.model.is_moe() || (ep <= 1 && !expert_tensor_parallel(p))) return e;
  const double bytes = moe_dispatch_bytes(in.model, shape) * shape.moe_load_factor;
  double a2a = 0;
  std::optional<double> dedup_sent;  // bytes sent per dispatch byte, flex dispatcher across nodes
  if (ep > 1) {
    // Megatron-Core's expert grid (parallel_layout.h expert_ep_group); with etp = tp and cp = 1
    // these are the ep consecutive data-parallel ranks of each tp rank.
    std::vector<std::vector<int>> groups;
    for (int edp = 0; edp < p.expert_dp(); ++edp) {
      for (int t = 0; t < etp; ++t) groups.push_back(in.layout.expert_ep_group(etp, ep, t, edp, stage));
    }
    if (const std::optional<NodeDedup> dedup = node_dedup(in, groups.front())) {
      a2a = in.memo.concurrent(CollectiveOp::AllToAll, CollectiveAlgo::Hierarchical, groups, sim::Bytes{bytes}, dedup->share).seconds();
      dedup_sent = dedup->sent;
      e.sm_share = ep_overlap_sm_share(p, in.compute.gpu().sms, true, nccl_share);  // across NVLink domains
    } else {
      a2a = in.memo.concurrent(CollectiveOp::AllToAll, CollectiveAlgo::Direct, groups, sim::Bytes{bytes}).seconds();
    }
  }
  const double etp_s = expert_tensor_parallel_s(in, bytes, stage);
  // The backward reruns the forward's dispatch and combine under full recompute and under
  // recompute_modules "moe" (the checkpointed MoE layer forward holds both all-to-alls).
  const bool rerun = in.training.recompute == Recompute::Full || (in.training.recompute_modules & kRecomputeMoe) != 0;
  const double repeat = rerun ? 2.0 : 1.0;
  const double counts = routing_metadata_gather_s(in, shape, stage);
  e.fwd = 2.0 * a2a + etp_s + counts;
  e.bwd = (2.0 * a2a + etp_s) * repeat + (rerun ? counts : 0.0);
  // The alltoall dispatcher sends S/ep to each of the ep - 1 others.
  e.fwd_bytes = (dedup_sent ? 2.0 * bytes * *dedup_sent : 2.0 * bytes * (ep - 1) / ep) + (etp_s > 0 ? 2.0 * bytes * (etp - 1) : 0.0);
  e.bwd_bytes = e.fwd_bytes * repeat;
  return e;
}

void add_expert_parallel(ChunkCost& c, int moe_layers, const LayerExpertParallel& e) {
  c.fwd_comm += moe_layers * e.fwd;
  c.bwd_comm += moe_layers * e.bwd;
  c.fwd_ep += moe_layers * e.fwd;
  c.bwd_ep += moe_layers * e.bwd;
  c.fwd_ep_bytes += moe_layers * e.fwd_bytes;
  c.bwd_ep_bytes += moe_layers * e.bwd_bytes;
}

}  // namespace clustersim::workloads
