// Direct collectives: every rank sends to every peer it must reach at once, one flow per pair,
// and lets the fabric sort it out. This is how NCCL runs all-to-all and send/recv (grouped
// point-to-point), and it is the "stress the fabric" form of the others:
//   all-reduce     = direct reduce-scatter (n-1 sends of S/n) + direct all-gather (n-1 of S/n)
//   reduce-scatter / all-gather = one of those halves
//   broadcast      = the root sends S to every other rank;  reduce = every rank sends S to the root
//   all-to-all     = n-1 sends of S/n (peers in the order r+1, r+2, ..., as NCCL issues them)
//   send/recv      = rank r sends S to r+offset and receives from r-offset (nccl-tests: offset 1)
// An n-rank direct collective has n(n-1) flows in flight at once: 16.7 M at 4,096 ranks.
#pragma once

#include "workloads/collectives/collective_types.h"
#include "workloads/collectives/staged_collective.h"

namespace clustersim::workloads {

class DirectSchedule {
 public:
  DirectSchedule(CollectiveOp op, int n, double bytes, int offset = 1)
      : op_(op), n_(n), b_(bytes), offset_(offset % n == 0 ? 1 : offset % n) {}
  int stages() const { return 2; }
  int sends(int pos, int stage) const;
  StageSend send(int pos, int stage, int i) const;
  // The send of `pos` in `stage` whose receiver is `peer` (StagedCollective: start_regenerated).
  StageSend send_to(int pos, int stage, int peer) const;
  int recvs(int pos, int stage) const;

 private:
  bool everyone(int stage) const;  // a stage where all ranks exchange S/n with all

  CollectiveOp op_;
  int n_;
  double b_;
  int offset_;
};

using DirectCollective = StagedCollective<DirectSchedule>;

}  // namespace clustersim::workloads
