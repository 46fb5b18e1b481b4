// Recursive halving and doubling (Thakur, Rabenseifner, Gropp 2005), as MPI libraries run them.
//
// All-reduce = recursive-halving reduce-scatter (log2 p stages: exchange half of what is left with
// the rank at distance p/2, p/4, ..., 1) + recursive-doubling all-gather (distances 1, 2, ...,
// p/2, the amounts doubling). Reduce-scatter and all-gather are the two halves alone. Broadcast
// is van de Geijn's scatter (binomial, halving) + all-gather; reduce is the reduce-scatter + a
// binomial gather to the root. Each stage is one message per rank, not pipelined (MPI does not).
//
// Non-power-of-two n (Rabenseifner's handling): with p the largest power of two <= n, the
// n - p extra ranks first hand their data to a partner among the first n - p ranks (a pre-step),
// the p ranks run the power-of-two algorithm, and the partners hand the result back (a
// post-step). Positions are relative to the root (position 0 is the root for broadcast/reduce).
#pragma once

#include <vector>

#include "workloads/collectives/collective_types.h"
#include "workloads/collectives/staged_collective.h"

namespace clustersim::workloads {

class HalvingDoublingSchedule {
 public:
  HalvingDoublingSchedule(CollectiveOp op, int n, double bytes);
  int stages() const { return 2 * k_ + 2; }
  int sends(int pos, int stage) const;
  StageSend send(int pos, int stage, int i) const;
  // The send of `pos` in `stage` whose receiver is `peer` (StagedCollective: start_regenerated).
  StageSend send_to(int pos, int stage, int peer) const;
  int recvs(int pos, int stage) const;
  int power_of_two() const { return p_; }

 private:
  struct Step {
    int peer = -1;
    double bytes = 0;
    bool sends = false;
    bool receives = false;
  };
  Step step(int pos, int stage) const;
  Step phase_step(int v, int i, bool first) const;

  CollectiveOp op_;
  int n_;
  int p_;
  int k_;
  double b_;
};

using HalvingDoublingCollective = StagedCollective<HalvingDoublingSchedule>;

}  // namespace clustersim::workloads
