// The modern training validation's scored runs grouped per model family, GPU type and precision
// class (`validate --training`, table "Per model family and GPU"), so that a miss shared by one
// family on one GPU shows as one line, the largest first.
//
// Grouping rules (docs/validation.md, "Remaining misses and their causes"):
// - family: the model name with its parameter-count tokens removed. The name is split at spaces and
//   hyphens; a token is a parameter count when it is a number followed by B, M or T ("70B", "1.7B"),
//   an active-parameter count ("A22B") or an expert product ("8x7B"). Every other part stays,
//   qualifiers in parentheses or brackets included, since they name another framework ("(MaxText)",
//   "(PaxML)") or another workload ("[LoRA]", "(tokendrop)", "(w/ MTP)"): "Llama3.1-405B" and
//   "Llama3.1-8B" are "Llama3.1", "Qwen3-235B-A22B" is "Qwen3", "Llama2-70B (MaxText)" is
//   "Llama2 (MaxText)".
// - GPU type: the GPU column's first word ("H100 (assumed; see notes)" is "H100").
// - precision class: the tensor-core format of the linears, as the simulator maps it
//   (modern_row_defaults.cpp precision_for): "FP8" for per-tensor FP8 (delayed scaling "FP8" and
//   current scaling "FP8-CS"), "MXFP8" for block-scaled FP8 ("MXFP8", "FP8-MX"), "NVFP4", "BF16";
//   any other label stays as written.
// Only scored runs are grouped, and not those of kPublishedRegressionGroup (they are listed apart
// with their source's footnote). Groups are sorted by MAPE, largest first; ties by family, GPU and
// precision class, so the order is deterministic.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/validate_modern.h"

namespace clustersim::analysis {

std::string model_family(std::string_view model);
std::string gpu_type(std::string_view gpu);
std::string precision_class(std::string_view precision);

struct FamilyGroup {
  std::string family, gpu, precision;
  ErrorStats stats;                        // runs, MAPE and median signed error (fractions)
  double min_error = 0, max_error = 0;     // smallest and largest predicted / measured - 1
};

// The groups of the scored runs of `runs` (see the rules above), sorted.
std::vector<FamilyGroup> family_groups(const std::vector<ModernRun>& runs);

// The table as `validate --training` prints it: a heading line, a column line, one line per group.
std::string family_table_text(const std::vector<FamilyGroup>& groups);

}  // namespace clustersim::analysis
