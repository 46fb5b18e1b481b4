// The caching-allocator replay of one training iteration (allocator_replay.h): the stage's
// weights, gradient buffer and optimizer states once, the gradient buckets, then each micro-batch's
// saved tensors allocated in its forward and freed in its backward, in 1F1B (or interleaved) order,
// with the activation-gradient temporaries of each backward.
#include "workloads/memory/allocator_replay.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "workloads/memory/activation_offload.h"
#include "workloads/memory/memory_lines.h"
#include "workloads/model/cross_entropy_kernels.h"
#include "workloads/model/lora.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

namespace {

using Tensors = std::vector<double>;  // bytes of each tensor, in allocation order

class Replayer {
 public:
  explicit Replayer(const AllocatorOptions& o) : alloc_(o) {}

  bool take(double bytes, std::vector<AllocHandle>& into) {
    if (bytes <= 0) return true;
    const AllocHandle h = alloc_.malloc(static_cast<std::uint64_t>(std::ceil(bytes)));
    if (!h.valid()) oom_ = true;
    else into.push_back(h);
    return h.valid();
  }
  void take_all(const Tensors& tensors, std::vector<AllocHandle>& into) {
    for (double bytes : tensors) take(bytes, into);
  }
  void give_back(std::vector<AllocHandle>& handles) {
    for (auto it = handles.rbegin(); it != handles.rend(); ++it) alloc_.free(*it);
    handles.clear();
  }
  bool oom() const { return oom_; }
  AllocatorStats stats() const { return alloc_.stats(); }

 private:
  CachingAllocatorModel alloc_;
  bool oom_ = false;
};

// The tensors one layer keeps for backward, as the memory model derives them (memory_model.h):
// the replay allocates the same list the formula sums.
Tensors saved_tensor_bytes(const ModelSpec& m, int micro_batch, int t, bool sp, Recompute rc, const ActivationBytes& bytes,
                           unsigned recompute_modules = 0, unsigned recompute_save = 0) {
  Tensors x;
  for (const SavedTensor& v : saved_layer_tensors(m, micro_batch, t, sp, rc, bytes, recompute_save))
    if (!recomputed_by_modules(v, rc == Recompute::Full ? 0u : recompute_modules)) x.push_back(v.bytes);
  return x;
}

// Weights and optimizer states per weight matrix (torch.optim keeps per-tensor states), and one
// contiguous gradient buffer for the stage (Megatron's DDP grad buffer), with ZeRO sharding.
void allocate_model_states(Replayer& rep, const MemoryRequest& request, int stage, std::vector<AllocHandle>& into) {
  const ModelSpec& m = request.model;
  const ParallelSpec& par = request.parallel;
  const StateBytes sb = state_bytes_per_param(request.training);
  const double dp = par.shard_ranks();  // one shard group's ranks (hybrid sharding), else dp x cp
  const double weight_shard = par.zero >= 3 ? dp : 1.0;
  const double opt_shard = par.shards_optimizer() ? par.optimizer_shard_ranks() : 1.0;
  OpShape shape;
  shape.micro_batch = request.training.micro_batch;
  shape.seq_len = m.seq_len;
  shape.tp = par.tp;
  shape.sequence_parallel = par.sequence_parallel && par.tp > 1;
  shape.flash_attention = m.flash_attention;
  // The input embedding on the first stage, the output layer on the last (tied or not when pp > 1).
  std::vector<double> matrices;
  if (stage == 0 || stage == par.pp - 1) matrices.push_back(static_cast<double>(m.vocab) * m.hidden / par.tp);
  const int layers = par.layers_on_stage(m.layers, stage);
  int first = 0;
  for (int st = 0; st < stage; ++st) first += par.layers_on_stage(m.layers, st);
  for (int l = 0; l < layers; ++l) {
    // A hybrid's layers by kind (model/mamba_ops.h); a plain decoder's as before (dense MLP).
    const LayerKind kind = m.is_hybrid() ? m.layer_kind(first + l) : LayerKind::Transformer;
    for (const OpCost& op : layer_ops_of_kind(m, shape, kind)) {
      if (op.kind == OpKind::Gemm) matrices.push_back(static_cast<double>(op.n) * op.k);
    }
  }
  double stage_params = 0;
  for (double e : matrices) {
    rep.take(e * sb.weights / weight_shard, into);
    stage_params += e;
  }
  // LoRA: only the adapters train (their weights, gradients and states: one tensor per layer).
  // ZeRO-Offload: gradients and optimizer states live in host memory.
  const FinetuneSpec& ft = request.training.finetune;
  if (ft.lora()) {
    matrices.assign(static_cast<std::size_t>(layers), lora_layer_parameters(m, ft, par.tp));
    stage_params = 0;
    for (double e : matrices) {
      rep.take(e * sb.weights / weight_shard, into);
      stage_params += e;
    }
  }
  if (request.sync.offload_optimizer == OffloadDevice::Cpu) return;
  rep.take(stage_params * sb.grads / (par.zero >= 2 ? dp : 1.0), into);
  // The optimizer's states are tensors of one element size each: K / that size of them.
  const double state_bytes = state_dtype_bytes(request.training.optimizer_dtype);
  const int optimizer_tensors = static_cast<int>(std::lround(sb.optimizer / state_bytes));
  for (int k = 0; k < optimizer_tensors; ++k) {
    for (double e : matrices) rep.take(e * state_bytes / opt_shard, into);
  }
}

// What one scheduling unit of the replayed stage allocates: a unit is one micro-batch's pass through one
// model chunk (the whole stage, or layers / v of it under the interleaved schedule).
struct UnitPlan {
  int layers = 0;                  // layers per unit
  int offloaded = 0;               // of which the first ones send their saved tensors to the host
  Tensors saved, working;          // per layer: kept for backward; recomputed under full recompute
  double scores_workspace = 0;     // the s x s scores without flash attention, one layer at a time
  double logits = 0;               // fp32 logits and loss when the stage is the last one
  // PyTorch's eager cross-entropy on the last stage ([training] cross_entropy = "torch-eager"), one
  // logit element's bytes times s*b*V/t: its tensors in allocation order (model/cross_entropy_kernels.h).
  bool eager_loss = false;
  double loss_elements = 0;
  double input_grad = 0, mlp_grad = 0;  // activation-gradient temporaries of one layer's backward
};

UnitPlan plan_unit(const MemoryRequest& request, int stage, int chunks) {
  const ParallelSpec& par = request.parallel;
  ModelSpec m = request.model;
  m.seq_len = par.local_seq_len(m.seq_len);  // context parallelism: this rank's s/cp tokens
  const TrainingSpec& tr = request.training;
  const int t = par.tp;
  const bool sp = par.sequence_parallel && t > 1;
  const ActivationBytes bytes = activation_bytes_for(tr.precision);
  const double s = m.seq_len, b = tr.micro_batch, e = bytes.element;
  UnitPlan u;
  // Every unit of the stage replays its largest chunk: with the embedding or loss counted in the
  // split (ParallelSpec::layers_in_chunk) the first or last chunk holds one layer fewer.
  u.layers = (par.layers_on_stage(m.layers, stage) + chunks - 1) / chunks;
  u.offloaded = offloaded_layers_in_chunk(u.layers, tr.activation_offload_layers);
  u.saved = saved_tensor_bytes(m, tr.micro_batch, t, sp, tr.recompute, bytes, tr.recompute_modules, tr.recompute_save);
  if (tr.recompute == Recompute::Full) u.working = saved_tensor_bytes(m, tr.micro_batch, t, sp, Recompute::None, bytes);
  u.scores_workspace = m.flash_attention ? 0.0 : b * m.heads / t * s * s * e;
  u.eager_loss = stage == par.pp - 1 && tr.cross_entropy == CrossEntropy::TorchEager;
  u.loss_elements = s * b * m.vocab / t;
  u.logits = stage == par.pp - 1 && !u.eager_loss ? u.loss_elements * 4.0 : 0.0;
  u.input_grad = e * s * b * m.hidden / (sp ? t : 1);
  u.mlp_grad = e * s * b * m.ffn_hidden / t;
  return u;
}

// PyTorch's eager F.cross_entropy(logits.float()) forward: the bf16 logits, the fp32 copy and the
// log-probabilities alive together inside log_softmax; the copy and the logits go back when loss_fn
// returns, the log-probabilities stay for the backward (`loss_saved`).
void eager_loss_forward(Replayer& rep, const UnitPlan& u, std::vector<AllocHandle>& loss_saved) {
  std::vector<AllocHandle> temp;
  rep.take(u.loss_elements * kTorchEagerLossBf16Logits, temp);
  rep.take(u.loss_elements * kTorchEagerLossFloatCopy, temp);
  rep.take(u.loss_elements * kTorchEagerLossLogProbs, loss_saved);
  rep.give_back(temp);
}

// Its backward, before the last layer's: nll_loss_backward's dense gradient, then log_softmax's
// gradInput beside it and the saved log-probabilities; both of those go back, then the cast back to
// bf16 beside the fp32 gradient (the logits' gradient, freed once the output layer consumed it).
void eager_loss_backward(Replayer& rep, const UnitPlan& u, std::vector<AllocHandle>& loss_saved) {
  std::vector<AllocHandle> nll_grad, grad, bf16_grad;
  rep.take(u.loss_elements * kTorchEagerLossGrad, nll_grad);
  rep.take(u.loss_elements * kTorchEagerLossGrad, grad);
  rep.give_back(nll_grad);
  rep.give_back(loss_saved);
  rep.take(u.loss_elements * kTorchEagerLossBf16Grad, bf16_grad);
  rep.give_back(grad);
  rep.give_back(bf16_grad);
}

// Forward of one unit: each layer's saved tensors, with its attention workspace alive meanwhile.
// An offloaded layer's tensors stay until the next layer has allocated its own (the copy to the
// host runs beside that layer), then go back (activation_offload.h).
void forward_unit(Replayer& rep, const UnitPlan& u, std::vector<AllocHandle>& saved, std::vector<AllocHandle>& loss_saved,
                  bool runs_loss) {
  std::vector<AllocHandle> temp, in_transit;
  for (int l = 0; l < u.layers && !rep.oom(); ++l) {
    std::vector<AllocHandle> copied = std::move(in_transit);
    in_transit.clear();
    rep.take(u.scores_workspace, temp);
    rep.take_all(u.saved, l < u.offloaded ? in_transit : saved);
    rep.give_back(temp);
    rep.give_back(copied);
  }
  rep.give_back(in_transit);
  rep.take(u.logits, temp);
  rep.give_back(temp);
  if (runs_loss && u.eager_loss) eager_loss_forward(rep, u, loss_saved);
}

// Backward of one unit, last layer first: the recomputed working set and gradient temporaries,
// then that layer's saved tensors (the last ones still held) go back. An offloaded layer's tensors
// come back from the host first (reloaded) and go back after its backward.
void backward_unit(Replayer& rep, const UnitPlan& u, std::vector<AllocHandle>& saved, std::vector<AllocHandle>& loss_saved,
                   bool runs_loss) {
  if (runs_loss && u.eager_loss && !rep.oom()) eager_loss_backward(rep, u, loss_saved);
  for (int l = u.layers - 1; l >= 0 && !rep.oom(); --l) {
    std::vector<AllocHandle> temp, recomputed, reloaded;
    const bool offloaded = l < u.offloaded;
    if (offloaded) rep.take_all(u.saved, reloaded);
    rep.take_all(u.working, recomputed);
    rep.take(u.scores_workspace, temp);
    rep.take(u.input_grad, temp);
    rep.take(u.mlp_grad, temp);
    rep.give_back(temp);
    rep.give_back(recomputed);
    if (offloaded) {
      rep.give_back(reloaded);
      continue;
    }
    std::vector<AllocHandle> layer(saved.end() - static_cast<std::ptrdiff_t>(std::min(u.saved.size(), saved.size())),
                                   saved.end());
    saved.resize(saved.size() - layer.size());
    rep.give_back(layer);
  }
}

// Units in flight at the stage's peak: micro-batches in flight x chunks (1F1B: min(pp - i, m)
// units; interleaved: Megatron's 2(pp-i-1) + (v-1)pp warm-up chunk forwards on stage i plus the one
// in steady state, = micro_batches_in_flight x v, pp(v+1) - 1 on stage 0; GPipe: all of them).
int warm_up_units(const ParallelSpec& par, int micro_batches, int stage, int chunks) {
  const int units = micro_batches * chunks;
  if (par.schedule == Schedule::GPipe) return units;
  const double held = micro_batches_in_flight(par, micro_batches, stage) * chunks;
  return std::min(units, static_cast<int>(std::lround(held)));
}

}  // namespace

AllocatorReplay replay_training_iteration(const MemoryRequest& request, const AllocatorOptions& options) {
  const ParallelSpec& par = request.parallel;
  const int dp = std::max(1, par.dp);
  const int micro_batches = std::max(1, request.training.micro_batches_per_replica(dp));
  const bool interleaved = par.schedule == Schedule::Interleaved && par.virtual_stages > 1 && par.pp > 1;
  const int chunks = interleaved ? par.virtual_stages : 1;
  const int stage = options.stage;

  Replayer rep(options);
  std::vector<AllocHandle> persistent;
  allocate_model_states(rep, request, stage, persistent);
  // Gradient buckets (DDP keeps them for the whole iteration; the distributed optimizer's are views
  // of its gradient buffer, memory_buffers.cpp).
  if (par.grad_replicas() > 1 && !par.distributed_optimizer) {
    rep.take(gradient_bucket_bytes(request), persistent);
    rep.take(gradient_bucket_bytes(request), persistent);
  }

  // Warm-up forwards, then one backward and one forward at a time, then the cool-down backwards;
  // backward takes the oldest unit still held (1F1B order).
  const UnitPlan unit = plan_unit(request, stage, chunks);
  const int units = micro_batches * chunks;
  // The eager loss's tensors outlive the forward (the log-probabilities wait for the backward), so
  // only one unit in `chunks` (a micro-batch's last model chunk) runs it; the fused copy is transient
  // and every unit replays it, as before.
  std::vector<std::vector<AllocHandle>> held(static_cast<std::size_t>(units)), loss_held(held.size());
  const auto runs_loss = [&](int u) { return u % chunks == chunks - 1; };
  const int warm = warm_up_units(par, micro_batches, stage, chunks);
  int next_fwd = 0;
  for (; next_fwd < warm && !rep.oom(); ++next_fwd)
    forward_unit(rep, unit, held[next_fwd], loss_held[next_fwd], runs_loss(next_fwd));
  for (int next_bwd = 0; next_bwd < units && !rep.oom(); ++next_bwd) {
    backward_unit(rep, unit, held[next_bwd], loss_held[next_bwd], runs_loss(next_bwd));
    if (next_fwd < units && !rep.oom()) {
      forward_unit(rep, unit, held[next_fwd], loss_held[next_fwd], runs_loss(next_fwd));
      ++next_fwd;
    }
  }

  AllocatorReplay out;
  out.out_of_memory = rep.oom();
  out.stats = rep.stats();
  out.fragmentation = out.stats.peak_reserved - out.stats.peak_allocated;
  return out;
}

}  // namespace clustersim::workloads
