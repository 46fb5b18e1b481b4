// `clustersim run`'s outputs: a run's numbers (run.h) as a person asks for them -- iteration time,
// tokens/s, model TFLOP/s per GPU, MFU/HFU, where the time went, memory per GPU, time-to-train,
// cost and energy -- as text, JSON (the keys of spec/cli.md), CSV, and a Chrome / Perfetto trace.
#pragma once

#include <string>

#include "analysis/run.h"

namespace clustersim::analysis {

std::string run_text(const RunReport& r);
std::string run_json(const RunReport& r);
std::string run_csv(const RunReport& r);
std::string chrome_trace(const RunReport& r);

}  // namespace clustersim::analysis
