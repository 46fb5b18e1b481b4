// The simulation budget of the validation suites: the events one memoised collective simulation of
// a training row may process (after symmetry folding: what is actually simulated), beyond which the
// row is skipped as too expensive and `clustersim run` simulates it without a budget. The largest
// memoised replay of the training and modern sets (2026-12-05) is SC'21's 2,240-rank ZeRO-3 ring,
// 27.7 million events, about 8 s of CPU; 30 million keeps one row under about 10 s.
#pragma once

#include <cstdint>

namespace clustersim::analysis {

inline constexpr std::uint64_t kTrainingEventBudget = 30'000'000;

}  // namespace clustersim::analysis
