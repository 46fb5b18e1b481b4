// Flow lifecycle on top of the fair-share solver, with pooled routes and batched flow events
// (see network_model.h).
#include "topology/network_model.h"

#include <algorithm>
#include <cmath>

#include "sim/check.h"

namespace clustersim::topology {

NetworkModel::NetworkModel(sim::Simulator& sim, const Topology& topo)
    : sim_(sim), topo_(topo), link_bytes_(topo.link_count(), 0.0) {
  solver_.reserve_constraints(topo.link_count());
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    const sim::ConstraintId c = solver_.add_constraint(topo.link(l).bandwidth.value);
    CLUSTERSIM_CHECK(c == l, "one solver constraint per link, same id");
  }
}

NetworkModel::NetworkModel(sim::Simulator& sim, const Topology& topo, sim::FairShareSolver&& kept)
    : sim_(sim), topo_(topo), solver_(std::move(kept)), link_bytes_(topo.link_count(), 0.0) {
  CLUSTERSIM_CHECK(solver_.constraint_count() == topo.link_count() && solver_.live_variables() == 0,
                   "a kept solver comes from a model of the same topology, reset");
}

sim::FairShareSolver NetworkModel::release_solver() && {
  solver_.reset();
  return std::move(solver_);
}

void NetworkModel::set_observer(FlowObserver* observer) {
  CLUSTERSIM_CHECK(observer == nullptr || stats_.transfers_started == stats_.transfers_finished,
                   "an observer is set while no transfer is in flight (it needs their stream starts)");
  observer_ = observer;
  if (observer_ != nullptr) stream_start_.resize(flows_.size());
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
    if (observer_ != nullptr) stream_start_.emplace_back();
  }
  const std::uint32_t links = solver_.alloc_block(
      std::span<const LinkId>(route.links.data(), route.hops),
      weights != nullptr ? std::span<const std::uint16_t>(weights->data(), route.hops) : std::span<const std::uint16_t>{});
  Flow& flow = flows_[f];
  flow.links = links;
  flow.hops = route.hops;
  flow.bytes = bytes.value;
  flow.remaining = bytes.value;
  flow.rate = rate_cap;  // the cap, until activation
  flow.who = who;
  flow.tag = tag;
  flow.streaming = false;
  flow.folded = weights != nullptr;
  ++flow.generation;
  ++stats_.transfers_started;
  if (sim::EngineInvariants* inv = sim_.invariants()) inv->flow_injected(flow.bytes);
  const sim::SimTime delay = route.latency + extra_latency;
  if (delay.ps > 0) {
    post(f, sim_.now() + delay, kActivate);
  } else {
    activate(f);
  }
  return f;
}

// Joins the open batch when the event would have taken the sequence number right after it (same
// kind and time, nothing else scheduled since); otherwise posts a new batch event.
void NetworkModel::post(FlowId f, sim::SimTime at, std::uint64_t kind) {
  if (!open_.valid || open_.kind != kind || open_.time != at || open_.scheduled != sim_.scheduled()) {
    std::uint32_t b;
    if (!free_batches_.empty()) {
      b = free_batches_.back();
      free_batches_.pop_back();
    } else {
      b = static_cast<std::uint32_t>(batches_.size());
      batches_.emplace_back();
    }
    sim_.schedule_at(at, this, (kind << 63) | b);
    open_ = OpenBatch{true, kind, at, sim_.scheduled(), b};
  } else {
    ++stats_.batched_events;
  }
  batches_[open_.batch].push_back(encode(f, flows_[f].generation));
}

void NetworkModel::activate(FlowId f) {
  Flow& flow = flows_[f];
  if (observer_ != nullptr) stream_start_[f] = sim_.now();
  if (flow.remaining <= 0 || flow.hops == 0) {
    // Nothing to stream (zero bytes, or a GPU talking to itself): done once the latency has passed.
    if (sim::EngineInvariants* inv = sim_.invariants()) inv->flow_landed(flow.bytes);
    account(f);
    solver_.free_block(flow.links, flow.hops);
    finish(f);
    return;
  }
  flow.streaming = true;
  flow.last_update = sim_.now();
  flow.var = solver_.add_variable(flow.links, flow.hops, flow.rate, flow.folded);
  flow.links = solver_.block_of(flow.var);  // a resurrected variable keeps its own (identical) block
  flow.rate = 0;
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
    post(f, now + sim::SimTime::from_seconds(left / flow.rate), kComplete);
  }
  if (inv != nullptr) inv->check_capacities(solver_, now);
}

// Runs a batch's flow events in the order they were posted; each stands for one event of its own.
void NetworkModel::on_event(std::uint64_t tag) {
  const std::uint32_t b = static_cast<std::uint32_t>(tag & 0xffffffffU);
  const std::uint64_t kind = tag >> 63;
  if (open_.valid && open_.batch == b) open_.valid = false;
  firing_.swap(batches_[b]);
  sim_.count_coalesced(firing_.size() - 1);
  for (const std::uint64_t entry : firing_) {
    const FlowId f = static_cast<FlowId>(entry & 0xffffffffU);
    const std::uint32_t gen = static_cast<std::uint32_t>(entry >> 32);
    if ((flows_[f].generation & 0x7fffffffU) != gen) continue;  // superseded by a rate change
    if (kind == kActivate) {
      activate(f);
    } else {
      complete(f);
    }
  }
  firing_.clear();
  batches_[b].swap(firing_);  // keeps both buffers' capacity
  free_batches_.push_back(b);
}

void NetworkModel::complete(FlowId f) {
  Flow& flow = flows_[f];
  if (sim::EngineInvariants* inv = sim_.invariants()) {
    const double undelivered = flow.remaining - flow.rate * (sim_.now() - flow.last_update).seconds();
    inv->rate_changed(links_of(flow), weights_of(flow), flow.rate, 0.0);
    inv->flow_delivered(flow.bytes, undelivered, flow.rate, sim_.now());
  }
  account(f);
  solver_.remove_variable(flow.var);  // frees the route's block (at the next solve, or now)
  flow.streaming = false;
  sim_.request_flush(this);
  finish(f);
}

void NetworkModel::account(FlowId f) {
  const Flow& flow = flows_[f];
  const std::span<const LinkId> links = links_of(flow);
  const std::uint16_t* weights = weights_of(flow);
  for (std::size_t k = 0; k < links.size(); ++k) {
    const double copies = weights != nullptr ? weights[k] : 1.0;
    link_bytes_[links[k]] += flow.bytes * copies;
  }
  if (observer_ != nullptr) {
    Route route;
    std::copy(links.begin(), links.end(), route.links.begin());
    route.hops = flow.hops;
    observer_->on_flow_done(FinishedFlow{route, flow.bytes, stream_start_[f], sim_.now(), flow.who, flow.tag});
  }
}

void NetworkModel::finish(FlowId f) {
  Flow& flow = flows_[f];
  ++flow.generation;
  ++stats_.transfers_finished;
  TransferListener* who = flow.who;
  const std::uint64_t tag = flow.tag;
  free_flows_.push_back(f);
  who->on_transfer_done(tag);  // may start new transfers (and reuse this slot)
}

}  // namespace clustersim::topology
