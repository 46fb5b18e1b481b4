// The node-deduplicated all-to-all's schedule (see node_alltoall_collective.h).
#include "workloads/collectives/node_alltoall_collective.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace clustersim::workloads {

NodeAllToAllSchedule::NodeAllToAllSchedule(std::vector<int> node_of, double bytes, double remote_share)
    : n_(static_cast<int>(node_of.size())), b_(bytes), share_(remote_share), node_of_(std::move(node_of)) {
  for (int node : node_of_) nodes_ = std::max(nodes_, node + 1);
  std::vector<int> count(static_cast<std::size_t>(nodes_), 0);
  local_of_.resize(node_of_.size());
  for (std::size_t p = 0; p < node_of_.size(); ++p) local_of_[p] = count[static_cast<std::size_t>(node_of_[p])]++;
  g_ = nodes_ > 0 ? count.front() : 0;
  for (int c : count) {
    if (c != g_) {
      throw std::invalid_argument("a node-deduplicated all-to-all needs the same number of its " + std::to_string(n_) +
                                  " GPUs on every node (one rail peer per node); these nodes hold " + std::to_string(g_) +
                                  " and " + std::to_string(c));
    }
  }
  if (!(share_ >= 0.0)) throw std::invalid_argument("remote_share must be >= 0");
  members_.assign(static_cast<std::size_t>(n_), 0);
  for (int p = 0; p < n_; ++p) members_[static_cast<std::size_t>(node_of_[p] * g_ + local_of_[p])] = p;
  const double rail = nodes_ > 1 ? share_ * g_ * b_ / n_ : b_ / std::max(1, n_);
  slices_ = static_cast<int>(std::clamp(std::floor(rail / kNodeAllToAllSliceBytes), 1.0,
                                        static_cast<double>(kNodeAllToAllMaxSlices)));
}

double NodeAllToAllSchedule::local_bytes(int stage) const {
  const double piece = b_ / n_ / slices_;
  return (stage < slices_ ? piece : 0.0) + (stage >= 1 ? (nodes_ - 1) * piece : 0.0);
}

int NodeAllToAllSchedule::sends(int, int stage) const {
  const int local = local_bytes(stage) > 0 ? g_ - 1 : 0;
  const int remote = stage < slices_ && share_ > 0 ? nodes_ - 1 : 0;
  return local + remote;
}

StageSend NodeAllToAllSchedule::send(int pos, int stage, int i) const {
  const int node = node_of_[static_cast<std::size_t>(pos)], li = local_of_[static_cast<std::size_t>(pos)];
  const int local = local_bytes(stage) > 0 ? g_ - 1 : 0;
  if (i < local) {
    // Own node's GPUs in the order li+1, li+2, ... (as the direct all-to-all issues its peers).
    const int peer = members_[static_cast<std::size_t>(node * g_ + (li + 1 + i) % g_)];
    return StageSend{peer, local_bytes(stage)};
  }
  const int other = (node + 1 + (i - local)) % nodes_;
  return StageSend{members_[static_cast<std::size_t>(other * g_ + li)], share_ * g_ * b_ / n_ / slices_};
}

double NodeAllToAllSchedule::network_bytes_per_rank() const { return (nodes_ - 1) * share_ * g_ * b_ / n_; }

double NodeAllToAllSchedule::nvlink_bytes_per_rank() const { return (g_ - 1) * nodes_ * b_ / n_; }

}  // namespace clustersim::workloads
