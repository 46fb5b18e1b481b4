// `clustersim run --explain`: the stage explanations of a run (workloads/training/stage_explain.h)
// rendered after the usual result, with the stage's assembly into the iteration time: micro-batches
// x the chunks' passes, the pipeline schedule's bubble formula with its numbers beside the
// simulated bubble, the data-parallel sync (bytes, buckets, exposed part), the optimizer, and the
// sum of the parts against the simulated iteration time (the critical stage's parts are the
// iteration's breakdown, so they add up to it). Text, or an "explain" object for --format json
// (schema in docs/cli.md).
#pragma once

#include <string>

#include "analysis/run.h"

namespace clustersim::analysis {

// The explanation, text; empty when the run was not explained (RunOptions::explain).
std::string run_explain_text(const RunReport& r);

// run_json(r) with an "explain" object added after its other keys.
std::string run_json_with_explain(const RunReport& r);

// The critical stage's parts of the iteration (compute, exposed tensor-parallel, expert,
// context-parallel and data-parallel communication, bubble, optimizer, data stall, other) summed:
// equals the simulated iteration time (RunReport::iteration.iteration_time_s).
double explained_iteration_s(const RunReport& r);

}  // namespace clustersim::analysis
