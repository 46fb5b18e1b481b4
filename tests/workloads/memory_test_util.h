// The memory tests' common request: GPT-3 1.3B on one GPU of eight data-parallel ranks, micro-batch
// 4 of 2048 tokens, selective recompute, an 80 GB capacity.
#pragma once

#include "workloads/memory/memory_model.h"
#include "workloads/model/model_presets.h"

namespace clustersim::testing {

inline workloads::MemoryRequest gpt3_1_3b_dp8_request() {
  workloads::MemoryRequest q;
  q.model = *workloads::find_model_preset("gpt3-1.3b");
  q.parallel.tp = 1;
  q.parallel.pp = 1;
  q.parallel.dp = 8;
  q.training.global_batch = 64;
  q.training.micro_batch = 4;
  q.training.recompute = workloads::Recompute::Selective;
  q.capacity = sim::Bytes{80e9};
  return q;
}

}  // namespace clustersim::testing
