// LoRA's frozen GEMMs and adapter GEMMs (see lora.h).
#include "workloads/model/lora.h"

#include <algorithm>

#include "workloads/model/op_builders.h"

namespace clustersim::workloads {
namespace {

// One adapted projection: its full input and output widths and whether Megatron splits it by
// columns (output) or rows (input) over tensor parallelism.
struct Projection {
  unsigned target;
  const char* a_name;
  const char* b_name;
  const char* scale_name;
  const char* sum_name;
  double d_in, d_out;
  bool column_parallel;
};

std::vector<Projection> projections(const ModelSpec& m, bool moe_layer) {
  const double h = m.hidden;
  const double q = static_cast<double>(m.heads) * m.head_dim();
  const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * m.head_dim();
  const double f = m.ffn_hidden;
  std::vector<Projection> p = {{kLoraQ, "lora_q_a", "lora_q_b", "lora_q_scale", "lora_q_sum", h, q, true},
                               {kLoraK, "lora_k_a", "lora_k_b", "lora_k_scale", "lora_k_sum", h, kv, true},
                               {kLoraV, "lora_v_a", "lora_v_b", "lora_v_scale", "lora_v_sum", h, kv, true},
                               {kLoraQkv, "lora_qkv_a", "lora_qkv_b", "lora_qkv_scale", "lora_qkv_sum", h, q + 2.0 * kv, true},
                               {kLoraO, "lora_o_a", "lora_o_b", "lora_o_scale", "lora_o_sum", q, h, false}};
  if (moe_layer && m.is_moe()) return p;
  if (m.mlp == MlpKind::SwiGlu)
    p.push_back({kLoraGate, "lora_gate_a", "lora_gate_b", "lora_gate_scale", "lora_gate_sum", h, f, true});
  p.push_back({kLoraUp, "lora_up_a", "lora_up_b", "lora_up_scale", "lora_up_sum", h, f, true});
  p.push_back({kLoraDown, "lora_down_a", "lora_down_b", "lora_down_scale", "lora_down_sum", f, h, false});
  return p;
}

OpCost adapter_gemm(const char* name, double m, double n, double k, double bytes_per_element) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::Gemm;
  op.fwd_flops = sim::Flops{2.0 * m * n * k};
  op.bwd_flops = op.fwd_flops * 2.0;  // adapters train: data and weight gradients
  op.fwd_bytes = sim::Bytes{bytes_per_element * (m * k + k * n + m * n)};
  op.bwd_bytes = op.fwd_bytes * 2.0;
  op.m = static_cast<int>(m);
  op.n = static_cast<int>(n);
  op.k = static_cast<int>(k);
  op.batch = 1;
  return op;
}

// The adapter's two eager elementwise kernels beside its GEMMs (NeMo 2 / Megatron-Bridge
// ParallelLinearAdapter.forward: x * (alpha / dim); LoRALinear.forward: linear_output +
// adapter_output): forward, the scale reads and writes the adapter's output and the sum reads both
// outputs and writes one; backward, the scale's gradient reads and writes dY's copy again, the sum
// passes dY through unchanged, and the two gradients of the shared input (the base linear's and
// the adapter's dX) are added: two reads and a write of the input.
void adapter_pointwise(std::vector<OpCost>& ops, const Projection& p, double tokens, double out_tokens, double in,
                       double out, double bytes_per_element) {
  const double e = bytes_per_element;
  ops.push_back(ops::pointwise(p.scale_name, OpKind::Elementwise, out_tokens * out, 1.0, 2.0 * e, 2.0 * e));
  OpCost sum = ops::pointwise(p.sum_name, OpKind::Elementwise, out_tokens * out, 1.0, 3.0 * e, 0.0);
  sum.bwd_flops = sim::Flops{tokens * in};
  sum.bwd_bytes = sim::Bytes{3.0 * e * tokens * in};
  ops.push_back(sum);
}

double layer_adapters(const ModelSpec& m, const FinetuneSpec& ft, int tp, bool moe_layer) {
  const double r = ft.lora_rank, t = std::max(1, tp);
  double sum = 0;
  for (const Projection& p : projections(m, moe_layer)) {
    if ((ft.lora_targets & p.target) == 0) continue;
    sum += p.column_parallel ? r * (p.d_in + p.d_out / t) : r * (p.d_in / t + p.d_out);
  }
  return sum;
}

}  // namespace

double lora_layer_parameters(const ModelSpec& model, const FinetuneSpec& finetune, int tp) {
  if (!finetune.lora()) return 0.0;
  const int moe = model.moe_layers_in(0, model.layers);
  return ((model.layers - moe) * layer_adapters(model, finetune, tp, false) +
          moe * layer_adapters(model, finetune, tp, true)) /
         std::max(1, model.layers);
}

double lora_parameters(const ModelSpec& model, const FinetuneSpec& finetune) {
  return lora_layer_parameters(model, finetune, 1) * model.layers;
}

void freeze_weights(std::vector<OpCost>& ops) {
  for (OpCost& op : ops) {
    if (op.kind != OpKind::Gemm || op.frozen) continue;
    op.frozen = true;
    op.bwd_flops = op.fwd_flops;  // dX = dY W^T only
    op.bwd_bytes = op.fwd_bytes;
  }
}

void apply_lora(std::vector<OpCost>& ops, const ModelSpec& model, const OpShape& shape, const FinetuneSpec& finetune) {
  freeze_weights(ops);
  const bool moe_layer = std::any_of(ops.begin(), ops.end(), [](const OpCost& op) { return op.name == "moe_router"; });
  const double tokens = static_cast<double>(shape.micro_batch) * shape.seq_len / std::max(1, shape.cp);
  const double r = finetune.lora_rank, t = std::max(1, shape.tp);
  for (const Projection& p : projections(model, moe_layer)) {
    if ((finetune.lora_targets & p.target) == 0) continue;
    const double in = p.column_parallel ? p.d_in : p.d_in / t;
    const double out = p.column_parallel ? p.d_out / t : p.d_out;
    ops.push_back(adapter_gemm(p.a_name, tokens, r, in, shape.precision_bytes));
    ops.push_back(adapter_gemm(p.b_name, tokens, out, r, shape.precision_bytes));
    // A row-parallel adapter's output is scattered to the sequence-parallel region before its scale.
    const double out_tokens = !p.column_parallel && shape.sequence_parallel ? tokens / t : tokens;
    adapter_pointwise(ops, p, tokens, out_tokens, in, out, shape.precision_bytes);
  }
}

sim::Flops lora_flops_per_iteration(const ModelSpec& model, const FinetuneSpec& finetune, int global_batch) {
  OpShape sh;
  sh.seq_len = model.seq_len;
  sh.flash_attention = model.flash_attention;
  const int moe_layers = model.moe_layers_in(0, model.layers);
  sim::Flops per_sequence;
  for (const bool moe : {false, true}) {
    const int count = moe ? moe_layers : model.layers - moe_layers;
    if (count == 0) continue;
    std::vector<OpCost> ops = layer_ops(model, sh, moe);
    apply_lora(ops, model, sh, finetune);
    const OpTotals t = sum_ops(ops);
    per_sequence += (t.fwd_matmul_flops + t.bwd_matmul_flops) * static_cast<double>(count);
  }
  std::vector<OpCost> head = head_ops(model, sh);
  freeze_weights(head);
  const OpTotals t = sum_ops(head);
  per_sequence += t.fwd_matmul_flops + t.bwd_matmul_flops;
  return per_sequence * static_cast<double>(global_batch);
}

}  // namespace clustersim::workloads
