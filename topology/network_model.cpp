// Flow lifecycle on top of the fair-share solver (see network_model.h).
#include "topology/network_model.h"

#include <algorithm>
#include <cmath>

#include "sim/check.h"

namespace clustersim::topology {

NetworkModel::NetworkModel(sim::Simulator& sim, const Topology& topo)
    : sim_(sim), topo_(topo), link_bytes_(topo.link_count(), 0.0) {
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    const sim::ConstraintId c = solver_.add_constraint(topo.link(l).bandwidth.value);
    CLUSTERSIM_CHECK(c == l, "one solver constraint per link, same id");
  }
}

FlowId NetworkModel::start(const Route& route, sim::Bytes bytes, TransferListener* who,
                           std::uint64_t tag, sim::SimTime extra_latency, double rate_cap,
                           const HopWeights* weights) {
  FlowId f;
  if (!free_flows_.empty()) {
    f = free_flows_.back();
    free_flows_.pop_back();
  } else {
    f = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  Flow& flow = flows_[f];
  flow.route = route;
  flow.bytes = bytes.value;
  flow.remaining = bytes.value;
  flow.rate = 0;
  flow.cap = rate_cap;
  flow.who = who;
  flow.tag = tag;
  flow.streaming = false;
  flow.folded = weights != nullptr;
  if (flow.folded) flow.weights = *weights;
  ++flow.generation;
  ++stats_.transfers_started;
  if (sim::EngineInvariants* inv = sim_.invariants()) inv->flow_injected(flow.bytes);
  const sim::SimTime delay = route.latency + extra_latency;
  if (delay.ps > 0) {
    sim_.schedule_in(delay, this, encode(f, flow.generation, kActivate));
  } else {
    activate(f);
  }
  return f;
}

void NetworkModel::activate(FlowId f) {
  Flow& flow = flows_[f];
  flow.stream_start = sim_.now();
  if (flow.remaining <= 0 || flow.route.hops == 0) {
    // Nothing to stream (zero bytes, or a GPU talking to itself): done once the latency has passed.
    if (sim::EngineInvariants* inv = sim_.invariants()) inv->flow_landed(flow.bytes);
    finish(f);
    return;
  }
  flow.streaming = true;
  flow.last_update = sim_.now();
  const std::size_t hops = flow.route.hops;
  flow.var = solver_.add_variable(std::span<const sim::ConstraintId>(flow.route.links.data(), hops), flow.cap,
                                  flow.folded ? std::span<const std::uint16_t>(flow.weights.data(), hops)
                                              : std::span<const std::uint16_t>{});
  if (var_to_flow_.size() <= flow.var) var_to_flow_.resize(flow.var + 1);
  var_to_flow_[flow.var] = f;
  stats_.peak_concurrent_flows = std::max(stats_.peak_concurrent_flows, solver_.live_variables());
  sim_.request_flush(this);
}

void NetworkModel::on_flush() {
  if (!solver_.needs_solve()) return;
  const sim::SimTime now = sim_.now();
  sim::EngineInvariants* inv = sim_.invariants();
  for (sim::VariableId v : solver_.solve()) {
    const FlowId f = var_to_flow_[v];
    Flow& flow = flows_[f];
    if (flow.rate > 0) flow.remaining -= flow.rate * (now - flow.last_update).seconds();
    flow.last_update = now;
    if (inv != nullptr) inv->rate_changed(links_of(flow), weights_of(flow), flow.rate, solver_.rate(v));
    flow.rate = solver_.rate(v);
    ++flow.generation;
    ++stats_.rate_updates;
    const double left = std::max(0.0, flow.remaining);
    sim_.schedule_at(now + sim::SimTime::from_seconds(left / flow.rate), this,
                     encode(f, flow.generation, kComplete));
  }
  if (inv != nullptr) inv->check_capacities(solver_, now);
}

void NetworkModel::on_event(std::uint64_t tag) {
  const FlowId f = static_cast<FlowId>(tag & 0xffffffffU);
  const std::uint32_t gen = static_cast<std::uint32_t>((tag >> 32) & 0x7fffffffU);
  if ((flows_[f].generation & 0x7fffffffU) != gen) return;  // superseded by a rate change
  if ((tag >> 63) == kActivate) {
    activate(f);
  } else {
    complete(f);
  }
}

void NetworkModel::complete(FlowId f) {
  Flow& flow = flows_[f];
  if (sim::EngineInvariants* inv = sim_.invariants()) {
    const double undelivered = flow.remaining - flow.rate * (sim_.now() - flow.last_update).seconds();
    inv->rate_changed(links_of(flow), weights_of(flow), flow.rate, 0.0);
    inv->flow_delivered(flow.bytes, undelivered, flow.rate, sim_.now());
  }
  solver_.remove_variable(flow.var);
  flow.streaming = false;
  sim_.request_flush(this);
  finish(f);
}

void NetworkModel::finish(FlowId f) {
  Flow& flow = flows_[f];
  for (int k = 0; k < flow.route.hops; ++k) {
    const double copies = flow.folded ? flow.weights[static_cast<std::size_t>(k)] : 1.0;
    link_bytes_[flow.route.links[k]] += flow.bytes * copies;
  }
  if (observer_ != nullptr) {
    observer_->on_flow_done(FinishedFlow{flow.route, flow.bytes, flow.stream_start, sim_.now(), flow.who, flow.tag});
  }
  ++flow.generation;
  ++stats_.transfers_finished;
  TransferListener* who = flow.who;
  const std::uint64_t tag = flow.tag;
  free_flows_.push_back(f);
  who->on_transfer_done(tag);  // may start new transfers (and reuse this slot)
}

}  // namespace clustersim::topology
