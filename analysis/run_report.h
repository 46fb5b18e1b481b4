// `clustersim run`'s outputs: a run's numbers (run.h) as a person asks for them -- iteration time,
// tokens/s, model TFLOP/s per GPU, MFU/HFU, where the time went, memory per GPU, time-to-train,
// cost and energy -- as text, JSON (the keys of spec/cli.md), CSV, and a Chrome / Perfetto trace.
#pragma once

#include <string>
#include <vector>

#include "analysis/run.h"

namespace clustersim::analysis {

std::string run_text(const RunReport& r);
// The memo's caveat that run_text prints last, or "": memoised data-parallel reductions in flight
// for at least kMemoCaveatShare of the step on a multi-node pipeline (they share the NICs with its
// sends, which the memo does not simulate).
inline constexpr double kMemoCaveatShare = 0.5;
std::string memo_caveat_text(const RunReport& r);
std::string run_json(const RunReport& r);
std::string run_csv(const RunReport& r);

// The columns of `run --format csv`, shared by `compare --format csv` so a script reads both the same
// way: scenario, gpus, nodes, iteration_time_s, tokens_per_s, …, fits_in_memory, time_to_train_s,
// energy_kwh, cost_usd (the last three empty without training.tokens).
const std::vector<std::string>& run_csv_columns();
// The report's values in run_csv_columns() order, unquoted. With `simulated` false (a scenario
// that does not fit and was not simulated) only what is known without simulating is filled in:
// scenario, gpus, nodes, memory_total_bytes and fits_in_memory.
std::vector<std::string> run_csv_values(const RunReport& r, bool simulated = true);
std::string chrome_trace(const RunReport& r);

}  // namespace clustersim::analysis
