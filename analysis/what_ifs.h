// The what-ifs a run applies around the simulated iteration (docs/model.md, "What-ifs"):
//   * [data]: the input pipeline's stall (workloads/training/input_pipeline.h) added to every
//     iteration, shown as a "data stall" span per iteration on an "input pipeline" track of the
//     first and last pipeline ranks (they load tokens and labels), with the host-to-device copy as
//     traffic on those GPUs' PCIe links (so dmon's PCIRX and the trace's link counters show it);
//   * [amp]: fp16 dynamic loss scaling (workloads/training/loss_scaling.h): skipped steps and what
//     they add to time-to-train, and the scale's trajectory for the text report.
// CUDA_LAUNCH_BLOCKING ([training] launch_blocking) changes the simulated iteration itself
// (run.cpp: the compute model serialises kernels, the sync spec loses its overlap).
#pragma once

#include <string>

#include "analysis/run.h"

namespace clustersim::analysis {

// Adds the input pipeline's stall to r.iteration (time, breakdown, timeline, link traffic) and
// sets r.data. No-op without [data].
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
