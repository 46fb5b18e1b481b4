// Shared mechanics of collective algorithms: launch latency, protocol overheads, completion.
#include "workloads/collectives/collective_algorithm.h"

#include <algorithm>

namespace clustersim::workloads {

void CollectiveAlgorithm::start() {
  start_time_ = ctx_.sim.now();
  const double base_us = plan_.protocol_latencies && plan_.launch_latency ? launch_latency_us() : 0.0;
  ctx_.sim.schedule_in(sim::SimTime::from_us(base_us), this, 0);
}

void CollectiveAlgorithm::on_event(std::uint64_t) { begin(); }

void CollectiveAlgorithm::finish() {
  done_ = true;
  finish_time_ = ctx_.sim.now();
  if (listener_ != nullptr) listener_->on_collective_done(tag_);
}

nccl::HwClass CollectiveAlgorithm::hw_class(const topology::Route& route) const {
  switch (topology::widest_link_kind(ctx_.topo, route).value_or(topology::LinkKind::NvLink)) {
    case topology::LinkKind::NvLink: return nccl::HwClass::NvLink;
    case topology::LinkKind::Pcie:
    case topology::LinkKind::CpuInterconnect: return nccl::HwClass::Pci;
    case topology::LinkKind::Network: return nccl::HwClass::Net;
  }
  return nccl::HwClass::NvLink;
}

sim::SimTime CollectiveAlgorithm::step_overhead(const topology::Route& route) const {
  // NCCL's hwLat is the whole per-step cost it measured, wire included; the route's physical
  // latency is already charged by the network model, so only the remainder is added here.
  if (!plan_.protocol_latencies) return sim::SimTime{};
  const sim::SimTime total = sim::SimTime::from_us(nccl::hw_latency_us(hw_class(route), nccl_algo(), plan_.protocol, plan_.hints.nccl_release));
  return total > route.latency ? total - route.latency : sim::SimTime{};
}

void CollectiveAlgorithm::send(const topology::Route& route, sim::Bytes payload, std::uint64_t tag,
                               sim::SimTime overhead, double rate_cap, const topology::HopWeights* weights,
                               std::span<const topology::VirtualLinkId> virtual_links) {
  ++transfers_;
  ctx_.net.start(route, payload * wire_factor(plan_.protocol), this, tag, overhead, rate_cap, weights, virtual_links);
}

double CollectiveAlgorithm::wire_bytes(sim::Bytes payload) const { return (payload * wire_factor(plan_.protocol)).value; }

void CollectiveAlgorithm::send_regenerated(const topology::Route& route, sim::Bytes payload, std::uint64_t tag,
                                           sim::SimTime overhead, double rate_cap) {
  ++transfers_;
  ctx_.net.start_regenerated(route, sim::Bytes{wire_bytes(payload)}, this, tag, overhead, rate_cap);
}

void CollectiveAlgorithm::send_rebuilt(const topology::Route& route, sim::Bytes payload, std::uint64_t tag,
                                       sim::SimTime overhead, double rate_cap) {
  ++transfers_;
  ctx_.net.start_rebuilt(route, payload * wire_factor(plan_.protocol), this, tag, overhead, rate_cap);
}

}  // namespace clustersim::workloads
