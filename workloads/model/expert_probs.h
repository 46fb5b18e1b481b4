// The router probability applied to the routed experts' input (ModelSpec::moe_apply_probs_on_input;
// Llama 4): what Megatron-Core's TEGroupedMLP does, and what that costs.
//
// With moe_apply_probs_on_input (Megatron-Core TransformerConfig, core_r0.12.0 to main; top-1
// routing only: the experts assert moe_router_topk == 1) TEGroupedMLP.forward
// (megatron/core/transformer/moe/experts.py, core_r0.12.0 7094270c) multiplies the dispatched
// token-slots by their router probability before linear_fc1, after the quantization padding:
//   permuted_local_hidden_states = permuted_probs * permuted_local_hidden_states   ([slots, 1] x [slots, hidden])
//   .to(original_dtype)                    (a no-op when the probabilities are in the activation dtype)
// and resets the probabilities to ones for the weighted activation, which runs as before. GroupedMLP
// and SequentialMLP do the same. One eager broadcast multiply; per slot-element of the rows:
//   forward   read the token, write the product: 2 element accesses;
//   backward  MulBackward: grad_tokens = grad x probs reads the gradient and writes its own (2);
//             grad_probs = (grad x tokens) summed over hidden writes the product after reading
//             the gradient and the saved tokens, and its reduction reads it back (4): 6 accesses.
// The [slots] probability column is read alongside (slots, not slots x hidden: not counted).
// Hugging Face's Llama4TextMoe does the same (the routed input is the token times its sigmoid
// router score); no config key states it, it comes with the architecture.
#pragma once

#include "workloads/model/transformer_ops.h"

namespace clustersim::workloads {

// Element accesses per slot-element of the rows (see above).
inline constexpr double kProbsOnInputFwdAccesses = 2.0;
inline constexpr double kProbsOnInputBwdAccesses = 6.0;

// The op "moe_probs_on_input" for `slots` token-slots of `hidden` elements of `bytes` each.
OpCost probs_on_input_op(double slots, double hidden, double bytes);

}  // namespace clustersim::workloads
