// Import of a Hugging Face `config.json` into a ModelSpec.
//
// Understood families (chosen by `model_type`, else by which field names are present):
//   llama / mistral / qwen2-like: hidden_size, num_hidden_layers, num_attention_heads,
//     num_key_value_heads (default = heads), intermediate_size, vocab_size,
//     max_position_embeddings, tie_word_embeddings (default false); RMSNorm, SwiGLU, rotary.
//   gpt2: n_embd, n_layer, n_head, n_positions, n_inner (null -> 4*n_embd), vocab_size; tied
//     embeddings, LayerNorm, GELU, learned positions.
//   gpt_neox: hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, vocab_size,
//     max_position_embeddings, tie_word_embeddings (default false); LayerNorm, GELU, rotary.
//   mixture of experts (Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3), on top of the Llama fields: the
//     expert count (num_local_experts / num_experts / n_routed_experts), num_experts_per_tok,
//     moe_intermediate_size, shared experts, first_k_dense_replace / decoder_sparse_step /
//     moe_layer_freq. DeepSeek's multi-head latent attention (q_lora_rank, kv_lora_rank, ...) is
//     read as standard multi-head attention of num_attention_heads heads over hidden_size (an
//     approximation: ~10% more attention parameters for V3, a smaller attention-core head size);
//     num_nextn_predict_layers is the number of multi-token-prediction modules (model/mtp.h). Any other
//     key naming experts, MoE, a router, top-k or sparsity is an error naming it.
// Every missing or ill-typed field throws HfConfigError naming the file, the field and what was
// expected; nothing is silently defaulted except where the Hugging Face class itself defaults.
#pragma once

#include <stdexcept>
#include <string>

#include "workloads/specs.h"

namespace clustersim::workloads {

class HfConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and converts the file. The spec's id is "hf:<path>".
ModelSpec load_hf_config(const std::string& path);

// Same, from JSON text already in memory; `origin` names the source in error messages.
ModelSpec parse_hf_config(const std::string& json_text, const std::string& origin);

}  // namespace clustersim::workloads
