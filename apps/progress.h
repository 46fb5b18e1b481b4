// Progress of a verb that runs many simulations (compare, sweep, validate, calibrate): one line per
// finished item on stderr with its real wall time and an estimate of the time left, so a person
// watching a long run knows when it ends. Only stderr: stdout and output files stay byte-identical
// from run to run. On when stderr is a terminal or the verb's --progress flag asks for it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace clustersim::apps {

// True when `--progress` was given or stderr is a terminal.
bool progress_wanted(bool flag);

// "1.2 s", "3 min 05 s", "2 h 10 min": a wall-clock duration for a person.
std::string wall_text(double seconds);

class ProgressLine {
 public:
  // `total` items (run one or several at a time: the ETA is from the throughput so far). With
  // `total_is_bound` the count is only an upper bound (an iterative fit may stop early): the line
  // says "of at most N" and "ETA at most".
  ProgressLine(bool enabled, std::size_t total, bool total_is_bound = false);

  // One item finished after `wall_s` seconds of real time: "[3/8] label  outcome  1.2 s  ETA 6.0 s".
  void finished(const std::string& label, const std::string& outcome, double wall_s);

  // The ETA after `done` of `total` items, `elapsed_s` since the start: the elapsed time per
  // finished item (workers running side by side already shorten it) times the items left; 0 when done.
  static double eta_s(std::size_t done, std::size_t total, double elapsed_s);

 private:
  bool enabled_, bound_;
  std::size_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace clustersim::apps
