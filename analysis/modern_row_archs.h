// Architectures of the modern rows' models (modern_row_archs.cpp): what modern_rows.cpp needs to
// know about a row's mixture of experts or hybrid Mamba model. Internal to analysis/.
#pragma once

#include <string>
#include <string_view>

#include "analysis/modern_rows.h"

namespace clustersim::analysis::modern_detail {

bool has(std::string_view s, std::string_view what);

struct MoeArch {
  const char* model;  // matched against the row's model name
  int experts, top_k, moe_ffn, shared, first_dense, freq, dense_ffn;
  bool tied;
  int head_dim;
  const char* attention;
  bool probs_on_input;  // [model] moe_apply_probs_on_input (see modern_row_archs.cpp)
};

// The row's MoE architecture (kMoeArchs), or nullptr.
const MoeArch* moe_arch_of(const ModernRow& r);
// "EP=8", "ETP=1" in the row's notes; 0 when not stated.
int notes_int(const ModernRow& r, const std::string& key);
// Why a row of an MoE model not in kMoeArchs is skipped.
std::string other_moe_reason(const std::string& model);
// The workloads preset of a hybrid Mamba row's model, or nullptr.
const char* hybrid_preset_of(const ModernRow& r);
// A row whose model has routed experts: an MoE architecture, or a hybrid MoE preset.
bool has_experts(const ModernRow& r);
// The row with the preset's shape where the table leaves it empty (hybrid rows only).
ModernRow with_hybrid_shape(const ModernRow& r);

}  // namespace clustersim::analysis::modern_detail
