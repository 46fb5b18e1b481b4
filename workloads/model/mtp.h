// Multi-token prediction (MTP) modules: what DeepSeek-V3's training-time extra depth costs.
//
// DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437 Sec. 2.2, Fig. 3) trains with D = 1 MTP module
// (config.json num_nextn_predict_layers = 1). Module k takes the main model's (or the previous
// module's) final hidden state h_i and the embedding of token i + k, RMS-normalises each (enorm,
// hnorm), concatenates them and projects 2h -> h (eh_proj), runs one transformer layer, and
// predicts token i + k + 1 through a final norm and the output head, with its own cross-entropy
// loss (weighted by lambda; the weight changes no cost). The embedding and the output head are
// shared with the main model (Sec. 2.2: "shared embedding layer", "shared output head").
//
// Megatron-Core builds it as MultiTokenPredictionBlock (megatron/core/transformer/
// multi_token_prediction.py, --mtp-num-layers) with the same transformer-layer spec as the
// decoder (DeepSeek-V3: an MLA + MoE layer), and places every MTP layer on the last pipeline stage:
// the GPT model builds its embedding there too (GPTModel: embedding on pre_process or
// mtp_process), so an untied model keeps a second copy of the input embedding on the last stage,
// kept in step with the first stage's by the embedding-group gradient all-reduce, as tied
// embeddings are. Megatron-Bridge's DeepSeek-V3 layouts end in "...t m L" (recipes/deepseek/
// deepseek_v3.py): the MTP block ('m') sits in the last model chunk before the loss.
//
// Hugging Face's released checkpoint stores the module as layer 61 with its own copies of the
// embedding (embed_tokens) and output head (shared_head.head); its model card counts 671 B main
// model + 14 B MTP = 685 B. mtp_release_parameters counts those copies; training shares them.
#pragma once

#include <vector>

#include "workloads/model/transformer_ops.h"
#include "workloads/specs.h"

namespace clustersim::workloads {

// The MTP transformer layer is the decoder's layer kind: an MoE layer when the model's layers are
// (Megatron-Core reuses the decoder's layer spec; DeepSeek-V3's released layer 61 is an MoE layer).
bool mtp_layer_is_moe(const ModelSpec& model);
// One module's parameters outside its transformer layer: enorm and hnorm (h each, RMSNorm), the
// eh_proj 2h x h projection (no bias) and its final norm. DeepSeek-V3: 2 x 7168^2 + 3 x 7168.
double mtp_extra_parameters(const ModelSpec& model);
// The module's layer outside its routed experts: the decoder's (dense or MoE) layer, or a hybrid
// MoE model's attention block (its pre-norm and projections) and MoE block ("*E").
double mtp_layer_dense_parameters(const ModelSpec& model);
// One module's own parameters: the above plus its transformer layer (all experts).
double mtp_module_parameters(const ModelSpec& model);
// All modules (mtp_layers x one module); the shared embedding and head are not counted again.
double mtp_parameters(const ModelSpec& model);
// The parameter count of the released checkpoint: the model, the modules, and each module's
// stored copies of the embedding and the output head.
double mtp_release_parameters(const ModelSpec& model);

// The ops one MTP module runs besides its transformer layer, per GPU, in forward order: the
// vocab-parallel embedding lookup of the shifted tokens, enorm, hnorm, the concatenation, the
// column-parallel eh_proj GEMM (tokens x h/t x 2h), then the final norm, the logits GEMM and the
// cross-entropy of its own loss (head_ops).
std::vector<OpCost> mtp_extra_ops(const ModelSpec& model, const OpShape& shape);

}  // namespace clustersim::workloads
