// Direct (all pairs at once) stages (see direct_collective.h).
#include "workloads/collectives/direct_collective.h"

#include "sim/check.h"

namespace clustersim::workloads {

bool DirectSchedule::everyone(int stage) const {
  switch (op_) {
    case CollectiveOp::AllReduce: return true;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll: return stage == 0;
    case CollectiveOp::AllGather: return stage == 1;
    default: return false;
  }
}

int DirectSchedule::sends(int pos, int stage) const {
  if (everyone(stage)) return n_ - 1;
  if (stage != 0) return 0;
  switch (op_) {
    case CollectiveOp::Broadcast: return pos == 0 ? n_ - 1 : 0;
    case CollectiveOp::Reduce: return pos == 0 ? 0 : 1;
    case CollectiveOp::SendRecv: return 1;
    default: return 0;
  }
}

int DirectSchedule::recvs(int pos, int stage) const {
  if (everyone(stage)) return n_ - 1;
  if (stage != 0) return 0;
  switch (op_) {
    case CollectiveOp::Broadcast: return pos == 0 ? 0 : 1;
    case CollectiveOp::Reduce: return pos == 0 ? n_ - 1 : 0;
    case CollectiveOp::SendRecv: return 1;
    default: return 0;
  }
}

StageSend DirectSchedule::send_to(int pos, int stage, int peer) const {
  int i = 0;  // the one send of a rooted or send/recv stage
  if (everyone(stage)) {
    i = ((peer - pos - 1) % n_ + n_) % n_;  // (pos + 1 + i) % n == peer
  } else if (op_ == CollectiveOp::Broadcast) {
    i = peer - 1;
  }
  const StageSend m = send(pos, stage, i);
  CLUSTERSIM_CHECK(m.peer == peer, "send_to names a send of the stage");
  return m;
}

StageSend DirectSchedule::send(int pos, int stage, int i) const {
  if (everyone(stage)) return StageSend{(pos + 1 + i) % n_, b_ / n_};
  switch (op_) {
    case CollectiveOp::Broadcast: return StageSend{1 + i, b_};
    case CollectiveOp::Reduce: return StageSend{0, b_};
    default: return StageSend{(pos + offset_) % n_, b_};
  }
}

}  // namespace clustersim::workloads
