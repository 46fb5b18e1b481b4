// Activation memory of a hybrid Mamba model's layers (ModelSpec::hybrid_pattern; the ops are in
// model/mamba_ops.h), for one micro-batch, per GPU.
//
// Why: a hybrid's layers are single blocks, so the tensors a layer keeps for backward depend on its
// kind. An attention layer keeps the attention half of a transformer layer's tensors (Korthikanti
// et al. 2022's list, saved_layer_tensors: up to the attention-output dropout mask), an MLP layer
// the MLP half (from the MLP norm input on). A Mamba-2 layer (Megatron-Core MambaMixer with
// mamba_ssm's mamba_chunk_scan_combined, whose backward recomputes the chunk states) keeps, with
// e bytes per element, g per GEMM input (1 under FP8), t = tp, r = t with sequence parallelism:
//   the pre-norm input          e * s*b*h / r
//   the in_proj input           g * s*b*h / r
//   in_proj's output z,x,B,C,dt e * s*b * (2*d_inner + 2*G*N + H) / t   (conv input, gate, dt)
//   the conv output x,B,C       e * s*b * (d_inner + 2*G*N) / t        (the scan's inputs)
//   the scan output y           e * s*b * d_inner / t                  (the gated norm's input)
//   the out_proj input          g * s*b * d_inner / t
// Full recompute keeps each layer's input only, as for transformer layers.
//
// The memory model charges a stage layers x a per-layer figure; for a hybrid model that figure is
// the mean over the model's layers (the tensors of each kind weighted by its share of the layers),
// exact when a stage holds the model's mix (pp = 1) and close when the pattern is regular.
#pragma once

#include <vector>

#include "workloads/memory/memory_model.h"

namespace clustersim::workloads {

// The tensors one Mamba-2 layer keeps for backward (above).
std::vector<SavedTensor> mamba_saved_tensors(const ModelSpec& model, int micro_batch, int tp, bool sequence_parallel,
                                             const ActivationBytes& bytes);
// The mean layer of a hybrid model: every kind's tensors weighted by its share of the layers.
std::vector<SavedTensor> hybrid_saved_layer_tensors(const ModelSpec& model, int micro_batch, int tp,
                                                    bool sequence_parallel, Recompute recompute,
                                                    const ActivationBytes& bytes);

}  // namespace clustersim::workloads
