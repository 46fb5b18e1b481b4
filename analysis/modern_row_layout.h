// How a modern row's run was laid out, read from its columns and notes where they are complete and
// from its publication's launcher where they are not (modern_row_layout.cpp cites each): the node
// preset and how many GPUs of each node (or NVL72 rack segment) the job held, the data-parallel,
// context-parallel and virtual-stage sizes, the pipeline's layer split (slot splits and explicit
// per-chunk layouts) and the micro-batch when the printed one contradicts the global batch.
// Internal to analysis/ (modern_rows.cpp and its modern_row_*.cpp neighbours).
#pragma once

#include <string>
#include <vector>

#include "analysis/modern_rows.h"

namespace clustersim::analysis::modern_detail {

// The catalog node preset of the row's GPU ("dgx-h100", "gb200-nvl72", ...); "" when none.
std::string node_preset_for(const ModernRow& r);
// GPUs the run uses per node: 8 on DGX nodes; on NVL72 racks the Slurm segment the launcher asked for.
int gpus_per_node_of(const ModernRow& r);
int cp_of(const ModernRow& r);  // context parallel size, at least 1
// Whether the row's printed DP leaves the expert-parallel ranks out (dgxc-benchmarking's Grok-1 H100).
bool dp_excludes_ep(const ModernRow& r);
int dp_of(const ModernRow& r);  // data-parallel size (stated, or the GPUs over tp x pp x cp)
int virtual_stages_of(const ModernRow& r);  // 1 without a pipeline
// Whether the recipe counts the embedding and the loss as layer slots in the pipeline split.
bool slot_split_recipe(const ModernRow& r);
// The recipe's explicit layer count per model chunk (DeepSeek-V3, Kimi-K2); empty when even.
std::vector<int> recipe_stage_layers(const ModernRow& r);
// A Megatron-Bridge cell whose global batch exceeds its printed MBS x GA x dp (cp 1).
bool batch_exceeds_stated_ga(const ModernRow& r);
// The micro-batch the run used (the table's, or the one its GA and global batch imply).
int micro_batch_of(const ModernRow& r);

}  // namespace clustersim::analysis::modern_detail
