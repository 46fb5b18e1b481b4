// Stage costs (see stage_costs.h for what a pass costs and why): the plan over every model chunk,
// built from the per-layer pieces of stage_cost_parts.h, with the embedding, the output head and
// multi-token prediction on the first and last chunks.
#include "workloads/training/stage_costs.h"

#include <algorithm>

#include "workloads/model/lora.h"
#include "workloads/model/module_precision.h"
#include "workloads/model/mtp.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/ep_overlap.h"
#include "workloads/training/gradient_buckets.h"
#include "workloads/training/stage_cost_parts.h"
#include "workloads/training/torch_fsdp1.h"

namespace clustersim::workloads {
namespace {

// Multi-token prediction (model/mtp.h): Megatron-Core runs every MTP module on the last pipeline
// stage after the decoder's last layer. Beside its transformer layer (costed by the caller as the
// decoder's layer of that kind, with its tensor-, context- and expert-parallel exchanges) each
// module runs the embedding lookup, two norms, eh_proj and its own output head and loss. Its
// weights train with the last chunk's; an untied model's last stage also holds the input embedding
// (GPTModel builds it where MTP runs) unless that chunk is the first one. Exposed exchanges of
// eh_proj (a column-parallel GEMM: one all-gather of the SP-sharded inputs) are not charged.
void add_mtp_module_extras(ChunkCost& mtp, const StageCostInputs& in, const OpShape& shape, int vstages) {
  const ModelSpec& model = in.model;
  const FinetuneSpec& ft = in.training.finetune;
  std::vector<OpCost> extras = mtp_extra_ops(model, shape);
  if ((in.training.bf16_modules & kPrecisionMtp) != 0) apply_module_precision(extras, in.training, true);
  if (ft.lora()) freeze_weights(extras);
  for (int d = 0; d < model.mtp_layers; ++d) add_ops(mtp, in.compute, extras);
  if (ft.lora()) return;
  mtp.params += model.mtp_layers * mtp_extra_parameters(model) / in.parallel.tp;
  if (!model.tied_embeddings && vstages > 1) mtp.params += model.embedding_parameters() / in.parallel.tp;
}

// [sync] fp8_amax_reduction (specs.h Fp8AmaxReduction): FP8 delayed scaling reduces each pass's
// amaxes in one blocking all-reduce (MAX, async_op=False) when the chunk's fp8_autocast region
// exits (forward) and at the end of its backward. Only the delayed recipe keeps an amax buffer:
// current and block (MXFP8) scaling reduce nothing here (ComputeModel::fp8_scaling, the recipe the
// constants select). The buffer holds one fp32 amax per fp8 tensor, 3 per GEMM forward (input,
// weight, output) and 2 backward (TE v2.9 module/base.py l. 767): 4 GEMMs a layer (qkv, proj,
// fc1, fc2; a GroupedLinear's local experts each a GEMM). A few kilobytes at most, so the all-reduce is latency-bound: NCCL's tuner picks its algorithm
// (CollectiveAlgo::Auto) over every group at once (the stage's replicas under "tp").
void add_amax_reduction(StageCosts& costs, const StageCostInputs& in) {
  const bool delayed =
      in.training.precision == topology::Precision::Fp8 && in.compute.fp8_scaling() == Fp8Scaling::Delayed;
  if (!delayed || in.fp8_amax == Fp8AmaxReduction::None) return;
  const ParallelLayout& l = in.layout;
  std::vector<std::vector<int>> groups;
  for (int d = 0; d < l.dp; ++d) {
    if (in.fp8_amax == Fp8AmaxReduction::Tp || groups.empty()) groups.emplace_back();
    for (int c = 0; c < l.cp; ++c)
      for (int t = 0; t < l.tp; ++t) groups.back().push_back(l.rank(t, d, 0, c));
  }
  if (groups.front().size() <= 1) return;  // TE reduces only over a group of more than one rank
  const int local_experts = in.model.experts > 0 ? std::max(1, in.model.experts / in.parallel.ep) : 0;
  for (ChunkCost& c : costs.chunks) {
    const double gemms = 4.0 * c.layers + 2.0 * c.moe_layers * std::max(0, local_experts - 1);
    if (gemms <= 0) continue;
    const auto seconds = [&](double per_gemm) {
      return in.memo.concurrent(CollectiveOp::AllReduce, CollectiveAlgo::Auto, groups, sim::Bytes{4.0 * per_gemm * gemms})
          .seconds();
    };
    c.fwd_amax = seconds(3);
    c.bwd_amax = seconds(2);
    c.fwd_comm += c.fwd_amax;
    c.bwd_comm += c.bwd_amax;
  }
}

}  // namespace

int grad_reduce_bytes(topology::Precision p) { return p == topology::Precision::Fp16 ? 2 : 4; }

double bucket_grad_bytes(const TrainingSpec& training) {
  const double reduce = grad_reduce_bytes(training.precision);
  if (activation_bytes(training.precision) != 2) return reduce;  // fp32 training keeps 4 B
  return std::min(reduce, state_dtype_bytes(training.grad_dtype));
}

double moe_load_factor(const ModelSpec& model, const ComputeModel& compute) {
  const double imbalance = compute.constants().get("moe_load_imbalance");
  return model.capacity_factor > 0 ? std::min(imbalance, model.capacity_factor) : imbalance;
}

OpShape stage_op_shape(const StageCostInputs& in) {
  OpShape shape;
  shape.micro_batch = in.training.micro_batch;
  shape.seq_len = in.model.seq_len;
  shape.tp = in.parallel.tp;
  shape.cp = in.parallel.cp;
  shape.sequence_parallel = in.parallel.sequence_parallel;
  shape.precision_bytes = activation_bytes(in.training.precision);
  shape.flash_attention = in.model.flash_attention;
  shape.ep = in.parallel.ep;
  shape.etp = in.parallel.expert_tp();
  shape.moe_load_factor = moe_load_factor(in.model, in.compute);
  shape.quantized_experts = topology::quantized_linears(in.training.precision);
  shape.moe_dispatcher = in.parallel.moe_dispatcher;
  shape.te_op_fuser = in.training.te_op_fuser;
  shape.moe_grouped_gemm = in.training.moe_grouped_gemm;
  shape.cross_entropy = in.training.cross_entropy;
  return shape;
}

// PyTorch FSDP1 (zero3_impl = "torch-fsdp1", torch_fsdp1.h): each backward concatenates the
// layer's parameter gradients into its unsharded flat gradient (autograd's split backward), one
// memory-bound kernel on the compute stream, placed first so that the layer's own order (and
// recompute_dce's dead tail) is unchanged. Full training only: LoRA's frozen weights have no
// gradient to copy.
namespace {
void add_fsdp1_grad_copy(std::vector<OpCost>& ops, const StageCostInputs& in) {
  if (in.zero3_impl != Zero3Impl::TorchFsdp1 || in.parallel.zero != 3 || in.parallel.grad_replicas() <= 1 ||
      in.training.finetune.lora())
    return;
  const double params = in.model.layer_parameters_per_ep_rank(in.parallel.ep) / in.parallel.tp;
  OpCost copy;
  copy.name = "fsdp_flat_grad_copy";
  copy.kind = OpKind::Elementwise;
  copy.bwd_bytes = sim::Bytes{params * fsdp1_grad_copy_bytes(activation_bytes(in.training.precision))};
  copy.fwd_kernels = 0;
  copy.bwd_kernels = 1;
  copy.bwd_reads_input = false;
  ops.insert(ops.begin(), copy);
}
}  // namespace

std::vector<OpCost> stage_layer_ops(const StageCostInputs& in, const OpShape& shape, bool moe_layer, bool bf16_layer) {
  // LoRA (model/lora.h): frozen weights run only their data gradients; the adapters train.
  // Per-layer / per-module precision (model/module_precision.h): a layer's linears as the run's
  // recipe sets them, or all bf16 in the first / last layers that run with no quantization.
  std::vector<OpCost> ops = layer_ops(in.model, shape, moe_layer);
  if (in.training.finetune.lora()) apply_lora(ops, in.model, shape, in.training.finetune);
  apply_module_precision(ops, in.training, bf16_layer);
  add_fsdp1_grad_copy(ops, in);
  return ops;
}

StageCosts plan_stage_costs(const StageCostInputs& in) {
  const ModelSpec& model = in.model;
  const TrainingSpec& tr = in.training;
  const int tp = in.parallel.tp, pp = in.parallel.pp;
  const int vstages = pp * in.chunks_per_rank;
  const OpShape shape = stage_op_shape(in);

  const FinetuneSpec& ft = tr.finetune;
  const double act = static_cast<double>(tr.micro_batch) * in.parallel.local_seq_len(model.seq_len) * model.hidden *
                     shape.precision_bytes;
  // The shared experts' own all-gather and reduce-scatter (tp > 1 with sequence parallelism),
  // charged with the MoE layer's tensor-parallel seconds: on the compute stream (with
  // tp_comm_overlap behind the shared GEMMs), or under moe_shared_expert_overlap on their own
  // stream, hidden in part beside the all-to-alls below (stage_cost_parts.h, ep_overlap.h).
  const SharedExpertTensorParallel shared_tp = shared_expert_tensor_parallel(in, act);
  struct LayerCosts {
    std::vector<OpCost> layer, moe_layer;
    LayerCompute lc, lc_moe;
    LayerTensorParallel ltp, ltp_moe, ltp_shared;  // ltp_moe includes ltp_shared
  };
  const auto layer_costs = [&](bool bf16_layer) {
    LayerCosts v;
    v.layer = stage_layer_ops(in, shape, false, bf16_layer);
    v.lc = layer_compute(in.compute, v.layer, tr.recompute, tr.recompute_modules, tr.recompute_save, tr.recompute_dce);
    if (model.is_moe()) v.moe_layer = stage_layer_ops(in, shape, true, bf16_layer);
    v.lc_moe = model.is_moe() ? layer_compute(in.compute, v.moe_layer, tr.recompute, tr.recompute_modules, tr.recompute_save, tr.recompute_dce) : v.lc;
    v.ltp = layer_tensor_parallel(in, act, v.layer);
    // An MoE layer: the attention's sequence-parallel pair only; its dispatcher's exchange over the
    // expert tensor-parallel group is in lep (layer_expert_parallel).
    v.ltp_moe = model.is_moe() ? layer_tensor_parallel(in, act, v.moe_layer, moe_tp_sides(in.parallel)) : v.ltp;
    if (model.is_moe()) {
      v.ltp_shared = shared_expert_layer_tensor_parallel(in, shared_tp, act, v.moe_layer);
      add_layer_tensor_parallel(v.ltp_moe, v.ltp_shared);
    }
    return v;
  };
  const LayerCosts quantized = layer_costs(false);
  const bool any_bf16_layer = tr.bf16_layers_at_start > 0 || tr.bf16_layers_at_end > 0;
  const LayerCosts bf16 = any_bf16_layer || (tr.bf16_modules & kPrecisionMtp) != 0 ? layer_costs(true) : quantized;
  const std::vector<OpCost>& layer = quantized.layer;
  const std::vector<OpCost>& moe_layer = quantized.moe_layer;
  const LayerCompute& lc = quantized.lc;
  const LayerCompute& lc_moe = quantized.lc_moe;
  const LayerTensorParallel& ltp = quantized.ltp;
  const LayerTensorParallel& ltp_moe = quantized.ltp_moe;
  const LayerTensorParallel& ltp_shared = quantized.ltp_shared;
  const LayerContextParallel lcp = layer_context_parallel(context_parallel_inputs(in, layer, shape.precision_bytes));
  std::vector<LayerExpertParallel> lep;  // [pipeline stage]
  for (int stage = 0; stage < (model.is_moe() ? pp : 0); ++stage) lep.push_back(layer_expert_parallel(in, shape, stage));
  // Megatron-Core's all-to-all overlaps (ep_overlap.h), per stage: what one paired forward and
  // backward MoE layer save (moe_a2a_overlap), or the all-to-all seconds the shared experts hide
  // (moe_shared_expert_overlap, taken off the blocking all-to-all). Transformer MoE layers only.
  std::vector<double> pair_saving(lep.size(), 0.0);
  for (std::size_t st = 0; st < lep.size() && !model.is_hybrid(); ++st) {
    const double ep_sm_share = lep[st].sm_share;
    if (in.parallel.moe_a2a_overlap) {
      // The shared experts' pair runs with them, in the experts' node (core_v0.15.0
      // fine_grained_callables.py: shared_experts_compute in the MLP callable, after the dispatch).
      const EpLayerSplit split = split_moe_layer(
          in.compute, moe_layer, lc_moe.fwd + ltp_moe.fwd_sm, lc_moe.bwd + ltp_moe.bwd_sm,
          ltp_moe.fwd - ltp_shared.fwd + lcp.fwd, ltp_moe.bwd - ltp_shared.bwd + lcp.bwd, lep[st].fwd, lep[st].bwd,
          ltp_shared.fwd, ltp_shared.bwd, in.parallel.delay_wgrad_compute);
      pair_saving[st] = combined_layer_saving_s(split, ep_sm_share);
    }
    if (in.parallel.moe_shared_expert_overlap) {
      // The forward gathers beside the dispatch and scatters beside the combine; the backward
      // scatters the gather's gradient beside the dispatch's and gathers the scatter's beside the combine's.
      const double fwd = shared_expert_hidden_s(in.compute, moe_layer, Pass::Forward, lep[st].fwd, ep_sm_share,
                                                shared_tp.gather, shared_tp.scatter);
      const double bwd = shared_expert_hidden_s(in.compute, moe_layer, Pass::Backward, lep[st].bwd, ep_sm_share,
                                                shared_tp.scatter, shared_tp.gather);
      lep[st].fwd -= fwd;
      lep[st].bwd -= bwd;
    }
  }
  // ZeRO-3's per-layer gathers (an average layer): with ep > 1 a rank's routed experts go apart, on
  // the expert-data-parallel groups (layer_zero3); ep = 1 keeps them with the dense parameters.
  const double z3_experts = zero3_layer_expert_parameters(model, in.parallel);
  LayerZero3 z3 = layer_zero3(in, model.layer_parameters_per_ep_rank(in.parallel.ep) / tp - z3_experts / tp,
                              z3_experts / in.parallel.expert_tp());
  // With prefetch a layer computes beside the next gather (and the last reduce-scatter): its ops
  // at the contended rate (an MoE model's MoE layer stands for its layers).
  if (z3.all_gather > 0) {
    const std::vector<OpCost>& ops = model.is_moe() ? moe_layer : layer;
    z3.fwd_ratio = dp_contended_ratio(in.compute, ops, Pass::Forward, dp_contention(z3.fwd_load));
    z3.bwd_ratio = dp_contended_ratio(in.compute, ops, Pass::Backward, dp_contention(z3.bwd_load));
  }
  // Trainable parameters (what is reduced and stepped): under LoRA the adapters only.
  const double adapter_params = ft.lora() ? lora_layer_parameters(model, ft, tp) : 0.0;
  // MLA's down-projections are whole on every tensor-parallel rank (model/attention_variants.h).
  const double duplicated = model.tp_replicated_attention_parameters() * (1.0 - 1.0 / tp);
  const double dense_params = ft.lora() ? adapter_params : model.dense_layer_parameters() / tp + duplicated;
  const double expert_params = ft.lora() ? 0.0 : model.expert_parameters() / in.parallel.ep / in.parallel.expert_tp();
  const double moe_params =
      ft.lora() ? adapter_params : model.moe_layer_dense_parameters() / tp + duplicated + expert_params;
  // The router's weight (hidden x experts, ModelSpec::moe_block_parameters) stays in bf16 under
  // fp8_param_gather: Megatron-Core's TopKRouter holds a plain parameter, not a Transformer Engine linear.
  const double router_params = ft.lora() ? 0.0 : model.hidden * static_cast<double>(model.experts) / tp;

  const std::vector<HybridKindCost> hybrid =
      model.is_hybrid() ? hybrid_kind_costs(in, shape, act, shape.precision_bytes) : std::vector<HybridKindCost>{};
  const std::vector<HybridKindCost> hybrid_bf16 =
      model.is_hybrid() && any_bf16_layer ? hybrid_kind_costs(in, shape, act, shape.precision_bytes, true) : hybrid;
  StageCosts costs;
  // Virtual stage c * pp + r is chunk c of rank r (ParallelSpec::layers_in_chunk: an equal share
  // of that rank's layers, or one fewer on the first and last chunks when the embedding and loss
  // count as layer slots), the model's layers in order of virtual stage.
  int first_layer = 0;
  for (int vs = 0; vs < vstages; ++vs) {
    const int layers = in.parallel.layers_in_chunk(model.layers, vs);
    if (model.is_hybrid()) {
      ChunkCost c = hybrid_chunk_cost(hybrid, hybrid_bf16, in, first_layer, layers, z3);
      const int moe_here = model.moe_layers_in(first_layer, layers);
      if (const int moe = moe_here; moe > 0) {  // 'E' layers' all-to-all
        add_expert_parallel(c, moe, lep[vs % pp]);
        c.expert_params = moe * expert_params;
        costs.ep_bytes_per_gpu += (c.fwd_ep_bytes + c.bwd_ep_bytes) * in.micro_batches / pp;
      }
      first_layer += layers;
      add_activation_offload(c, in, layers);
      add_fine_grained_offload(c, in, layers, moe_here);
      costs.chunks.push_back(c);
      continue;
    }
    const int moe = model.moe_layers_in(first_layer, layers);
    int bf16_dense = 0, bf16_moe = 0;  // the chunk's layers that run with no quantization
    for (const auto& [a, n] : bf16_layer_runs(tr, model.layers, first_layer, layers)) {
      bf16_moe += model.moe_layers_in(a, n);
      bf16_dense += n - model.moe_layers_in(a, n);
    }
    first_layer += layers;
    ChunkCost c = at_run_precision(layers_cost(layers - moe - bf16_dense, lc, ltp, lcp, z3, dense_params, in.fsdp_prefetch),
                                   0.0, 0.0);
    if (bf16_dense > 0) add_chunk(c, layers_cost(bf16_dense, bf16.lc, bf16.ltp, lcp, z3, dense_params, in.fsdp_prefetch));
    if (moe > 0) {
      add_chunk(c, at_run_precision(layers_cost(moe - bf16_moe, lc_moe, ltp_moe, lcp, z3, moe_params, in.fsdp_prefetch),
                                    router_params, expert_params));
      if (bf16_moe > 0)
        add_chunk(c, layers_cost(bf16_moe, bf16.lc_moe, bf16.ltp_moe, lcp, z3, moe_params, in.fsdp_prefetch));
      add_expert_parallel(c, moe, lep[vs % pp]);
      c.expert_params = moe * expert_params;
      costs.ep_bytes_per_gpu += (c.fwd_ep_bytes + c.bwd_ep_bytes) * in.micro_batches / pp;
      c.moe_layers = moe;
      c.ep_pair_saving = pair_saving[static_cast<std::size_t>(vs % pp)];
    }
    add_activation_offload(c, in, layers);
    add_fine_grained_offload(c, in, layers, moe);
    costs.chunks.push_back(c);
  }
  ChunkCost& first = costs.chunks.front();
  add_ops(first, in.compute, embedding_ops(model, shape));
  ChunkCost& last = costs.chunks.back();
  std::vector<OpCost> head = head_ops(model, shape);
  if (ft.lora()) freeze_weights(head);
  add_ops(last, in.compute, head);
  if (!ft.lora()) {
    first.params += model.embedding_parameters() / tp;
    last.params += model.final_norm_parameters() / tp;
    if (!model.tied_embeddings || vstages > 1) last.params += model.embedding_parameters() / tp;
  }
  if (model.mtp_layers > 0) {
    const bool moe = mtp_layer_is_moe(model);
    // bf16_modules "mtp": the modules' linears in bf16 (Megatron-Bridge te_quant.cfg "mtp.*").
    const LayerCosts& m = (tr.bf16_modules & kPrecisionMtp) != 0 ? bf16 : quantized;
    ChunkCost mtp = layers_cost(model.mtp_layers, moe ? m.lc_moe : m.lc, moe ? m.ltp_moe : m.ltp, lcp, z3,
                                moe ? moe_params : dense_params, in.fsdp_prefetch);
    if ((tr.bf16_modules & kPrecisionMtp) == 0) mtp = at_run_precision(mtp, moe ? router_params : 0.0, moe ? expert_params : 0.0);
    mtp.layers = 0;  // MTP layers are not decoder layers
    if (moe) {
      add_expert_parallel(mtp, model.mtp_layers, lep[pp - 1]);
      mtp.expert_params = model.mtp_layers * expert_params;
      costs.ep_bytes_per_gpu += (mtp.fwd_ep_bytes + mtp.bwd_ep_bytes) * in.micro_batches / pp;
    }
    add_mtp_module_extras(mtp, in, shape, vstages);
    add_chunk(last, mtp);
  }

  const double moe_share = model.layers > 0 ? static_cast<double>(model.moe_layers_in(0, model.layers)) / model.layers : 0.0;
  costs.tp_bytes_per_gpu = model.is_hybrid() ? hybrid_tp_bytes_per_gpu(hybrid, model)
                                             : (1.0 - moe_share) * ltp.bytes_per_gpu + moe_share * ltp_moe.bytes_per_gpu;
  costs.cp_bytes_per_gpu = (lcp.fwd_bytes + lcp.bwd_bytes) * model.layers / pp * in.micro_batches;
  costs.pp_send_bytes = act / tp;  // scatter/gather optimisation: each tp rank sends its 1/tp share
  costs.pp_bytes_per_gpu = pp > 1 ? 2.0 * costs.pp_send_bytes * in.micro_batches * in.chunks_per_rank : 0.0;
  add_amax_reduction(costs, in);
  // LoRA trains only its adapters, which are no Transformer Engine linears: nothing is gathered in fp8.
  if (ft.lora())
    for (ChunkCost& c : costs.chunks) c.fp8_params = c.fp8_expert_params = 0;
  return costs;
}

}  // namespace clustersim::workloads
