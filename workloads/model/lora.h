// LoRA fine-tuning (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models"): what it
// changes in the operations of a layer and in what trains.
//
// Every pretrained weight is frozen. Each targeted projection W [d_in, d_out] (FinetuneSpec::
// lora_targets: q, k, v, o, gate, up, down, or qkv for Megatron's fused linear_qkv) gains a
// trainable pair A [d_in, r], B [r, d_out]; the layer computes x W + (alpha / r) (x A) B. So:
//   * a frozen GEMM's backward runs only its data gradient dX = dY W^T, which the layers below need,
//     and skips the weight gradient: backward = 1x its forward instead of 2x (OpCost::frozen);
//   * the attention core, norms and activations are unchanged (they have no weights, or frozen
//     norm weights whose gradients are negligible), so activation memory does not shrink;
//   * each adapter adds two small GEMMs, x A (m = tokens, n = r, k = d_in) and (x A) B (m = tokens,
//     n = d_out, k = r), trained in full (data and weight gradients), each one kernel launch, and
//     two elementwise kernels as NeMo 2 and Megatron-Bridge run them eagerly (ParallelLinearAdapter:
//     the alpha / r scale; LoRALinear: the sum of the two outputs), whose backward rescales dY and
//     adds the adapter's input gradient to the base linear's;
//   * the trainable parameters, their gradients, optimizer states and data-parallel reduction
//     are the adapters' only: r (d_in + d_out) per target and layer.
// Tensor parallelism (Megatron/NeMo's parallel LoRA adapters): a column-parallel projection (q, k,
// v, gate, up) keeps A whole and splits B's columns over tp; a row-parallel one (o, down) splits A's
// rows and keeps B whole, so one GPU holds r (d_in + d_out / tp) or r (d_in / tp + d_out).
#pragma once

#include <vector>

#include "sim/units.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// Adapter parameters one GPU of a tensor-parallel group of `tp` holds for one transformer layer.
// An MoE layer's MLP targets are not adapted (the loader refuses them for MoE models).
double lora_layer_parameters(const ModelSpec& model, const FinetuneSpec& finetune, int tp);
// Adapter parameters of the whole model (tp = 1).
double lora_parameters(const ModelSpec& model, const FinetuneSpec& finetune);

// Marks every weight GEMM of `ops` frozen: its backward is the data gradient only.
void freeze_weights(std::vector<OpCost>& ops);
// freeze_weights, then the adapter GEMMs of the targets the layer has, in the layer's shape.
void apply_lora(std::vector<OpCost>& ops, const ModelSpec& model, const OpShape& shape, const FinetuneSpec& finetune);

// Matmul FLOPs of one LoRA iteration over the whole model (forward, data gradients of the frozen
// GEMMs, attention backward, the adapters' forward and backward): what a LoRA step performs, the
// counterpart of model_flops_per_iteration (which assumes every weight trains).
sim::Flops lora_flops_per_iteration(const ModelSpec& model, const FinetuneSpec& finetune, int global_batch);

}  // namespace clustersim::workloads
