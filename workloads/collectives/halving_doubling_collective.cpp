// Recursive halving/doubling stages (see halving_doubling_collective.h).
#include "workloads/collectives/halving_doubling_collective.h"

#include "sim/check.h"

namespace clustersim::workloads {

HalvingDoublingSchedule::HalvingDoublingSchedule(CollectiveOp op, int n, double bytes)
    : op_(op), n_(n), p_(1), k_(0), b_(bytes) {
  while (p_ * 2 <= n_) {
    p_ *= 2;
    ++k_;
  }
}

// Stage i (0-based) of the first (halving) or second (doubling) phase for virtual rank v < p.
HalvingDoublingSchedule::Step HalvingDoublingSchedule::phase_step(int v, int i, bool first) const {
  Step s;
  const bool reduce_first = op_ == CollectiveOp::AllReduce || op_ == CollectiveOp::ReduceScatter || op_ == CollectiveOp::Reduce;
  if (first) {
    if (reduce_first) {  // recursive halving: exchange half of what is left
      s.peer = v ^ (p_ >> (i + 1));
      s.bytes = b_ / static_cast<double>(2 << i);
      s.sends = s.receives = true;
    } else if (op_ == CollectiveOp::Broadcast) {  // binomial scatter from 0
      const int dist = p_ >> (i + 1);
      s.bytes = b_ / p_ * dist;
      if (v % (2 * dist) == 0) {
        s.peer = v + dist;
        s.sends = true;
      } else if (v % (2 * dist) == dist) {
        s.receives = true;
      }
    }
    return s;
  }
  const int dist = 1 << i;
  if (op_ == CollectiveOp::AllReduce || op_ == CollectiveOp::AllGather || op_ == CollectiveOp::Broadcast) {
    s.peer = v ^ dist;  // recursive doubling
    s.bytes = b_ / p_ * dist;
    s.sends = s.receives = true;
  } else if (op_ == CollectiveOp::Reduce) {  // binomial gather to 0
    s.bytes = b_ / p_ * dist;
    if (v % (2 * dist) == dist) {
      s.peer = v - dist;
      s.sends = true;
    } else if (v % (2 * dist) == 0) {
      s.receives = true;
    }
  }
  return s;
}

HalvingDoublingSchedule::Step HalvingDoublingSchedule::step(int pos, int stage) const {
  const int rem = n_ - p_;
  const bool extra = pos >= p_;
  const bool partner = pos < rem;
  Step s;
  if (stage == 0) {  // pre-step: extras hand their data to their partner
    const bool pre = op_ != CollectiveOp::Broadcast;
    if (!pre) return s;
    const double bytes = op_ == CollectiveOp::AllGather ? b_ / n_ : b_;
    if (extra) s = Step{pos - p_, bytes, true, false};
    if (partner) s = Step{-1, bytes, false, true};
    return s;
  }
  if (stage == 2 * k_ + 1) {  // post-step: partners hand the result back
    if (op_ == CollectiveOp::Reduce) return s;
    const double bytes = op_ == CollectiveOp::ReduceScatter ? b_ / n_ : b_;
    if (partner) s = Step{pos + p_, bytes, true, false};
    if (extra) s = Step{-1, bytes, false, true};
    return s;
  }
  if (extra) return s;
  const bool first = stage <= k_;
  return phase_step(pos, first ? stage - 1 : stage - 1 - k_, first);
}

int HalvingDoublingSchedule::sends(int pos, int stage) const { return step(pos, stage).sends ? 1 : 0; }
int HalvingDoublingSchedule::recvs(int pos, int stage) const { return step(pos, stage).receives ? 1 : 0; }
StageSend HalvingDoublingSchedule::send(int pos, int stage, int) const {
  const Step s = step(pos, stage);
  return StageSend{s.peer, s.bytes};
}

StageSend HalvingDoublingSchedule::send_to(int pos, int stage, int peer) const {
  const StageSend m = send(pos, stage, 0);  // at most one send per stage
  CLUSTERSIM_CHECK(m.peer == peer, "send_to names a send of the stage");
  return m;
}

}  // namespace clustersim::workloads
