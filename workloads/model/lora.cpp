// LoRA's frozen GEMMs and adapter GEMMs (see lora.h).
#include "workloads/model/lora.h"

#include <algorithm>

namespace clustersim::workloads {
namespace {

// One adapted projection: its full input and output widths and whether Megatron splits it by
// columns (output) or rows (input) over tensor parallelism.
struct Projection {
  unsigned target;
  const char* a_name;
  const char* b_name;
  double d_in, d_out;
  bool column_parallel;
};

std::vector<Projection> projections(const ModelSpec& m, bool moe_layer) {
  const double h = m.hidden;
  const double q = static_cast<double>(m.heads) * m.head_dim();
  const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * m.head_dim();
  const double f = m.ffn_hidden;
  std::vector<Projection> p = {{kLoraQ, "lora_q_a", "lora_q_b", h, q, true},
                               {kLoraK, "lora_k_a", "lora_k_b", h, kv, true},
                               {kLoraV, "lora_v_a", "lora_v_b", h, kv, true},
                               {kLoraO, "lora_o_a", "lora_o_b", q, h, false}};
  if (moe_layer && m.is_moe()) return p;
  if (m.mlp == MlpKind::SwiGlu) p.push_back({kLoraGate, "lora_gate_a", "lora_gate_b", h, f, true});
  p.push_back({kLoraUp, "lora_up_a", "lora_up_b", h, f, true});
  p.push_back({kLoraDown, "lora_down_a", "lora_down_b", f, h, false});
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
