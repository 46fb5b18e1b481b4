// Names and nccl-tests factors for collectives (see collective_types.h).
#include "workloads/collectives/collective_types.h"

namespace clustersim::workloads {

std::string_view to_string(CollectiveOp op) { return sim::name_of(kCollectiveOpNames, op); }
std::string_view to_string(CollectiveAlgo a) { return sim::name_of(kCollectiveAlgoNames, a); }
std::string_view to_string(Protocol p) { return sim::name_of(kProtocolNames, p); }

double busbw_factor(CollectiveOp op, int n) {
  const double nn = static_cast<double>(n);
  switch (op) {
    case CollectiveOp::AllReduce: return 2.0 * (nn - 1) / nn;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll: return (nn - 1) / nn;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
    case CollectiveOp::SendRecv: return 1.0;
  }
  return 1.0;
}

double wire_factor(Protocol p) {
  switch (p) {
    case Protocol::LL: return 2.0;
    case Protocol::LL128: return 128.0 / 120.0;
    case Protocol::Simple: return 1.0;
  }
  return 1.0;
}

}  // namespace clustersim::workloads
