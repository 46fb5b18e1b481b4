// The what-ifs a run reports around the simulated iteration (docs/model.md, "What-ifs"):
//   * [data]: the input pipeline runs inside the iteration simulation (the loader's waits, the
//     host-to-device copies as live flows on the PCIe path, GPU decode: workloads/training/
//     input_feed.h); here only its analytic summary for the report (input_pipeline.h), computed
//     against the simulated GPU time so the two can be compared;
//   * [amp]: fp16 dynamic loss scaling (workloads/training/loss_scaling.h): skipped steps and what
//     they add to time-to-train, and the scale's trajectory for the text report.
// CUDA_LAUNCH_BLOCKING ([training] launch_blocking) changes the simulated iteration itself
// (run.cpp: the compute model serialises kernels, the sync spec loses its overlap).
#pragma once

#include <string>

#include "analysis/run.h"

namespace clustersim::analysis {

// Sets r.data, the input pipeline's analytic summary, from the simulated iteration (whose time
// and breakdown.data_stall already hold the simulated stall). No-op without [data].
void apply_input_pipeline(RunReport& r);

// Sets r.amp from the scenario's [amp] (no-op without it): the loss-scale trajectory over the
// steps training.tokens needs (or [amp] steps, else 10000).
void apply_loss_scaling(RunReport& r);

// The switches CUDA_LAUNCH_BLOCKING turns off: with every kernel waiting for the host, nothing
// runs behind anything else.
workloads::SyncSpec without_overlap(workloads::SyncSpec sync);

// Text report lines for the what-ifs in the run ("" when the scenario has none).
std::string what_ifs_text(const RunReport& r);

}  // namespace clustersim::analysis
