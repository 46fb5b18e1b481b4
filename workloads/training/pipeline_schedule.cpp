// Pipeline orders (see pipeline_schedule.h).
#include "workloads/training/pipeline_schedule.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

std::vector<PipelineStep> gpipe(int m) {
  std::vector<PipelineStep> out;
  for (int i = 0; i < m; ++i) out.push_back({0, i, true});
  for (int i = m - 1; i >= 0; --i) out.push_back({0, i, false});
  return out;
}

std::vector<PipelineStep> one_f_one_b(int p, int m, int rank, int extra_warmup) {
  std::vector<PipelineStep> out;
  const int warmup = std::min(p - rank - 1 + extra_warmup, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({0, f, true});
  while (f < m) {
    out.push_back({0, f++, true});
    out.push_back({0, b++, false, extra_warmup > 0});
  }
  while (b < m) out.push_back({0, b++, false});
  return out;
}

// Megatron-LM's interleaved schedule: the k-th forward (backward) step of a rank works on model
// chunk (k / p) % v (reversed for backward) and micro-batch (k / (p·v))·p + k % p.
std::vector<PipelineStep> interleaved(int p, int v, int m, int rank, int extra_warmup) {
  CLUSTERSIM_CHECK(m % p == 0, "interleaved schedule needs micro-batches to be a multiple of p");
  const int total = m * v;
  const int warmup = std::min((p - rank - 1) * 2 + (v - 1) * p + extra_warmup, total);
  const auto step = [&](int k, bool forward) {
    int chunk = (k / p) % v;
    if (!forward) chunk = v - 1 - chunk;
    return PipelineStep{chunk, (k / (p * v)) * p + k % p, forward};
  };
  std::vector<PipelineStep> out;
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(step(f, true));
  while (f < total) {
    out.push_back(step(f++, true));
    out.push_back(step(b++, false));
    out.back().paired = extra_warmup > 0;
  }
  while (b < total) out.push_back(step(b++, false));
  return out;
}

}  // namespace

std::vector<PipelineStep> pipeline_order(Schedule schedule, int p, int v, int m, int rank, bool combined_1f1b) {
  const int extra = combined_1f1b ? 1 : 0;
  switch (schedule) {
    case Schedule::GPipe: return gpipe(m);
    case Schedule::OneFOneB: return one_f_one_b(p, m, rank, extra);
    case Schedule::Interleaved: return v > 1 ? interleaved(p, v, m, rank, extra) : one_f_one_b(p, m, rank, extra);
  }
  return {};
}

}  // namespace clustersim::workloads
