// Flow lifecycle on top of the fair-share solver: pending transfers, streams kept at their solver
// variable's index, and batched flow events (see network_model.h).
#include "topology/network_model.h"

#include <algorithm>
#include <array>
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
  solver_.reset(topo_.link_count());  // virtual links are per model (add_virtual_link)
  return std::move(solver_);
}

VirtualLinkId NetworkModel::add_virtual_link(double capacity) {
  CLUSTERSIM_CHECK(capacity > 0, "a virtual link has a positive capacity");
  if (free_virtual_.empty()) return solver_.add_constraint(capacity);
  const VirtualLinkId v = free_virtual_.back();
  free_virtual_.pop_back();
  if (solver_.capacity(v) != capacity) solver_.set_capacity(v, capacity);
  return v;
}

void NetworkModel::release_virtual_link(VirtualLinkId v) {
  CLUSTERSIM_CHECK(v >= topo_.link_count() && v < solver_.constraint_count(), "a virtual link comes from add_virtual_link");
  for (const sim::VariableId var : solver_.variables_of(v)) {
    CLUSTERSIM_CHECK(!solver_.is_live(var), "a virtual link is given back once no flow crosses it");
  }
  free_virtual_.push_back(v);
}

void NetworkModel::count_link_bytes() {
  CLUSTERSIM_CHECK(stats_.transfers_started == stats_.transfers_finished,
                   "link bytes are counted from before the first transfer (they need every transfer's bytes)");
  counts_link_bytes_ = true;
}

double NetworkModel::link_bytes(LinkId l) const {
  CLUSTERSIM_CHECK(counts_link_bytes_, "link_bytes needs count_link_bytes() before the transfers");
  return link_bytes_[l];
}

void NetworkModel::set_observer(FlowObserver* observer) {
  CLUSTERSIM_CHECK(observer == nullptr || stats_.transfers_started == stats_.transfers_finished,
                   "an observer is set while no transfer is in flight (it needs their stream starts)");
  observer_ = observer;
  if (observer_ != nullptr) stream_start_.resize(streams_.size());
}

void NetworkModel::start(const Route& route, sim::Bytes bytes, TransferListener* who, std::uint64_t tag,
                         sim::SimTime extra_latency, double rate_cap, const HopWeights* weights,
                         std::span<const VirtualLinkId> virtual_links) {
  ++stats_.transfers_started;
  if (sim::EngineInvariants* inv = sim_.invariants()) inv->flow_injected(bytes.value);
  std::span<const LinkId> links(route.links.data(), route.hops);
  std::array<LinkId, kMaxHops + kMaxVirtualLinks> with_virtual;  // the route's links, then the virtual ones
  if (!virtual_links.empty()) {
    CLUSTERSIM_CHECK(virtual_links.size() <= static_cast<std::size_t>(kMaxVirtualLinks) && weights == nullptr,
                     "an unfolded flow crosses at most kMaxVirtualLinks virtual links");
    std::copy_n(route.links.begin(), route.hops, with_virtual.begin());
    for (std::size_t k = 0; k < virtual_links.size(); ++k) {
      CLUSTERSIM_CHECK(virtual_links[k] >= topo_.link_count() && virtual_links[k] < solver_.constraint_count(),
                       "a virtual link comes from add_virtual_link");
      with_virtual[route.hops + k] = virtual_links[k];
    }
    links = std::span<const LinkId>(with_virtual.data(), route.hops + virtual_links.size());
  }
  const std::span<const std::uint16_t> wts =
      weights != nullptr ? std::span<const std::uint16_t>(weights->data(), route.hops) : std::span<const std::uint16_t>{};
  const sim::SimTime delay = route.latency + extra_latency;
  if (delay.ps <= 0) {
    activate(links, wts, bytes.value, rate_cap, hold(who, tag));
    return;
  }
  ++waiting_;
  const std::uint64_t p = pending_.alloc(PendingPool::Transfer{bytes.value, rate_cap, who, tag}, links, wts);
  post_activation(p, sim_.now() + delay);
}

void NetworkModel::start_rebuilt(const Route& route, sim::Bytes bytes, TransferListener* who, std::uint64_t tag,
                                 sim::SimTime extra_latency, double rate_cap) {
  const sim::SimTime delay = route.latency + extra_latency;
  if (delay.ps <= 0) {
    start(route, bytes, who, tag, extra_latency, rate_cap);
    return;
  }
  ++stats_.transfers_started;
  if (sim::EngineInvariants* inv = sim_.invariants()) inv->flow_injected(bytes.value);
  ++waiting_;
  const std::uint64_t p = pending_.alloc_rebuilt(PendingPool::Transfer{bytes.value, rate_cap, who, tag}, route.hops);
  post_activation(p, sim_.now() + delay);
}

void TransferListener::route_of(std::uint64_t, Route&) const {
  CLUSTERSIM_CHECK(false, "a listener that starts transfers with start_rebuilt gives their routes (route_of)");
}

void TransferListener::transfer_of(std::uint64_t, Route&, double&, double&) const {
  CLUSTERSIM_CHECK(false, "a listener that starts transfers with start_regenerated gives them again (transfer_of)");
}

std::uint32_t NetworkModel::listener_slot(TransferListener* who) {
  const std::uint32_t hint = who->network_slot.slot_;
  if (hint < slot_who_.size() && slot_who_[hint] == who) return hint;
  // A listener new to this model (or whose slot went to another): the first slot held by no
  // transfer, else a new one. (A listener that held a slot here keeps finding it through its hint
  // unless another model gave it a slot since; it then takes a second one, which is still right.)
  std::uint32_t idle = kNoSlot;
  for (std::uint32_t k = 0; k < slot_who_.size(); ++k) {
    if (slot_refs_[k] == 0) {
      idle = k;
      break;
    }
  }
  if (idle == kNoSlot) {
    if (slot_who_.size() >= kRegeneratedListeners) return kNoSlot;
    idle = static_cast<std::uint32_t>(slot_who_.size());
    slot_who_.push_back(nullptr);
    slot_refs_.push_back(0);
  }
  slot_who_[idle] = who;
  who->network_slot.slot_ = idle;
  return idle;
}

std::uint64_t NetworkModel::hold(TransferListener* who, std::uint64_t tag) {
  if (tag < kRegeneratedTagLimit) {
    const std::uint32_t slot = listener_slot(who);
    if (slot != kNoSlot) {
      ++slot_refs_[slot];
      return (static_cast<std::uint64_t>(slot) << kSlotShift) | tag;
    }
  }
  std::uint32_t i;
  if (!free_side_.empty()) {
    i = free_side_.back();
    free_side_.pop_back();
  } else {
    CLUSTERSIM_CHECK(side_.size() < 0xffffffffU, "too many transfers in flight");
    i = static_cast<std::uint32_t>(side_.size());
    side_.emplace_back();
  }
  side_[i] = SideRef{who, tag};
  return kSideRef | i;
}

void NetworkModel::release(std::uint64_t ref) {
  if ((ref & kSideRef) != 0) {
    free_side_.push_back(static_cast<std::uint32_t>(ref & 0xffffffffU));
  } else {
    --slot_refs_[ref >> kSlotShift];
  }
}

void NetworkModel::start_regenerated(const Route& route, sim::Bytes bytes, TransferListener* who, std::uint64_t tag,
                                     sim::SimTime extra_latency, double rate_cap) {
  const sim::SimTime delay = route.latency + extra_latency;
  const std::uint32_t slot = delay.ps > 0 && tag < kRegeneratedTagLimit ? listener_slot(who) : kNoSlot;
  if (slot == kNoSlot) {
    start_rebuilt(route, bytes, who, tag, extra_latency, rate_cap);
    return;
  }
  ++stats_.transfers_started;
  if (sim::EngineInvariants* inv = sim_.invariants()) inv->flow_injected(bytes.value);
  ++waiting_;
  ++slot_refs_[slot];  // held by the transfer until it ends (its stream's ref)
  post_activation(kRegenerated | (static_cast<std::uint64_t>(slot) << kSlotShift) | tag, sim_.now() + delay);
}

std::uint32_t NetworkModel::acquire_time(sim::SimTime at) {
  if (last_time_ != kNoTime && times_[last_time_].at == at) {
    ++times_[last_time_].refs;
    return last_time_;
  }
  std::uint32_t i;
  if (!free_times_.empty()) {
    i = free_times_.back();
    free_times_.pop_back();
  } else {
    CLUSTERSIM_CHECK(times_.size() < kNoTime, "too many stream times");
    i = static_cast<std::uint32_t>(times_.size());
    times_.emplace_back();
  }
  times_[i] = StreamTime{at, 1};
  last_time_ = i;
  return i;
}

void NetworkModel::release_time(std::uint32_t i) {
  if (--times_[i].refs != 0) return;
  free_times_.push_back(i);
  if (i == last_time_) last_time_ = kNoTime;
}

// Joins the open batch when the event would have taken the sequence number right after it (same
// kind and time, nothing else scheduled since); otherwise posts a new batch event.
std::uint32_t NetworkModel::open_batch(sim::SimTime at, std::uint64_t kind, std::uint32_t not_in) {
  if (!open_.valid || open_.kind != kind || open_.time != at || open_.scheduled != sim_.scheduled() ||
      open_.batch == not_in) {
    std::uint32_t b;
    if (!free_batches_.empty()) {
      b = free_batches_.back();
      free_batches_.pop_back();
      free_batch_entries_ -= batches_[b].entries.capacity();
    } else {
      b = static_cast<std::uint32_t>(batches_.size());
      batches_.emplace_back();
    }
    Batch& batch = batches_[b];
    if (batch.entries.capacity() == 0 && !spare_.empty()) {
      batch.entries.swap(spare_.back());
      spare_.pop_back();
    }
    batch.posted = 0;
    batch.live = 0;
    batch.kind = kind;
    sim_.schedule_at(at, this, (kind << 63) | b);
    open_ = OpenBatch{true, kind, at, sim_.scheduled(), b};
  } else {
    ++stats_.batched_events;
  }
  Batch& batch = batches_[open_.batch];
  ++batch.posted;
  ++batch.live;
  return open_.batch;
}

void NetworkModel::post_activation(std::uint64_t entry, sim::SimTime at) {
  Batch& batch = batches_[open_batch(at, kActivate, kNoBatch)];
  batch.entries.push_back(static_cast<std::uint32_t>(entry & 0xffffffffU));
  batch.entries.push_back(static_cast<std::uint32_t>(entry >> 32));
}

// A completion entry is the variable alone: an entry of v is live when v's stream names its batch
// (Stream::batch). `live_in` is the batch of v's previous entry (now stale; kNoBatch: none). A batch
// never holds a stale and a live entry of one variable: when the new entry would join that same
// batch (it is still open: nothing was scheduled since, and the new completion time rounds to the
// same picosecond), it starts a batch of its own instead. That batch's event takes the next sequence
// number at the same time, the one the joined entry stood for, so the events run in the same order
// and are counted the same (only batched_events, a statistic, differs). A batch stops being open
// once another is scheduled, so this is the only way the two can meet.
std::uint32_t NetworkModel::post_completion(sim::VariableId v, std::uint32_t live_in, sim::SimTime at) {
  const bool would_join = open_.valid && open_.batch == live_in && open_.kind == kComplete && open_.time == at &&
                          open_.scheduled == sim_.scheduled();
  const std::uint32_t b = open_batch(at, kComplete, live_in);
  if (would_join) ++stats_.stale_separated;
  batches_[b].entries.push_back(v);
  return b;
}

// A completion entry of `b` was superseded: when none of its entries is live any more, its buffer
// (stale entries only) is given back now rather than when its event fires.
void NetworkModel::supersede(std::uint32_t b) {
  Batch& batch = batches_[b];
  if (--batch.live != 0) return;
  // (If it is the open batch, later entries may still join it, in a buffer of their own.)
  if (batch.entries.capacity() <= kSpareBufferEntries && spare_.size() < kKeptSpareBuffers) {
    batch.entries.clear();
    spare_.emplace_back().swap(batch.entries);
  } else {
    batch.entries.release();
  }
}

void NetworkModel::activate(std::span<const LinkId> links, std::span<const std::uint16_t> weights, double bytes,
                            double rate_cap, std::uint64_t ref) {
  if (bytes <= 0 || links.empty() || links.front() >= topo_.link_count()) {  // (only virtual links: no route)
    // Nothing to stream (zero bytes, or a GPU talking to itself): done once the latency has passed.
    TransferListener* who = who_of(ref);
    const std::uint64_t tag = tag_of(ref);
    release(ref);
    if (sim::EngineInvariants* inv = sim_.invariants()) inv->flow_landed(bytes);
    account(links, weights.empty() ? nullptr : weights.data(), bytes, sim_.now(), who, tag);
    ++stats_.transfers_finished;
    who->on_transfer_done(tag);  // may start new transfers
    return;
  }
  const sim::VariableId v = solver_.add_variable(links, rate_cap, weights);
  if (streams_.size() <= v) {
    streams_.resize(v + 1);
    if (observer_ != nullptr) stream_start_.resize(v + 1);
  }
  Stream& s = streams_[v];
  if (keeps_bytes()) {
    if (stream_bytes_.size() <= v) stream_bytes_.resize(streams_.size());
    stream_bytes_[v] = bytes;
  }
  s.remaining = bytes;
  s.since = acquire_time(sim_.now());
  s.ref = ref;
  s.batch = kNoBatch;
  if (observer_ != nullptr) stream_start_[v] = sim_.now();
  stats_.peak_concurrent_flows = std::max(stats_.peak_concurrent_flows, solver_.live_variables());
  sim_.request_flush(this);
}

void NetworkModel::on_flush() {
  if (!solver_.needs_solve()) return;
  const sim::SimTime now = sim_.now();
  sim::EngineInvariants* inv = sim_.invariants();
  const std::span<const sim::VariableId> changed = solver_.solve();
  sim::FairShareSolver::OldRates old_rates = solver_.old_rates();
  for (std::size_t i = 0; i < changed.size(); ++i) {
    const sim::VariableId v = changed[i];
    Stream& s = streams_[v];
    const double old_rate = old_rates.next();  // the rate this stream had until now (0: new)
    const double rate = solver_.rate(v);
    if (old_rate > 0) s.remaining -= old_rate * (now - times_[s.since].at).seconds();
    if (times_[s.since].at != now) {
      release_time(s.since);
      s.since = acquire_time(now);
    }
    if (inv != nullptr) {
      sim::MemberRange::Buffer buf;
      inv->rate_changed(solver_.members(v).contiguous(buf), solver_.weights_of(v), old_rate, rate);
    }
    ++stats_.rate_updates;
    const std::uint32_t previous = s.batch;
    if (previous != kNoBatch) supersede(previous);
    const double left = std::max(0.0, s.remaining);
    s.batch = post_completion(v, previous, now + sim::SimTime::from_seconds(left / rate));
  }
  solver_.release_report();
  if (inv != nullptr) inv->check_capacities(solver_, now);
}

// Runs a batch's flow events in the order they were posted; each stands for one event of its own.
void NetworkModel::on_event(std::uint64_t tag) {
  const std::uint32_t b = static_cast<std::uint32_t>(tag & 0xffffffffU);
  const std::uint64_t kind = tag >> 63;
  if (open_.valid && open_.batch == b) open_.valid = false;
  firing_.swap(batches_[b].entries);
  sim_.count_coalesced(batches_[b].posted - 1);
  if (kind == kComplete) {
    for (const std::uint32_t v : firing_) {
      // Stale: superseded by a rate change (its stream's live entry is in another batch, or it ended).
      if (streams_[v].batch != b) continue;
      complete(v);
    }
  } else {
    for (std::size_t i = 0; i < firing_.size(); i += 2) {
      const std::uint64_t entry = firing_[i] | (static_cast<std::uint64_t>(firing_[i + 1]) << 32);
      if ((entry & kRegenerated) != 0) {
        const std::uint64_t ref = entry & ~kRegenerated;  // the slot it holds and its tag (see kSideRef)
        --waiting_;
        Route route;
        double bytes = 0, rate_cap = 0;
        who_of(ref)->transfer_of(tag_of(ref), route, bytes, rate_cap);
        activate(std::span<const LinkId>(route.links.data(), route.hops), {}, bytes, rate_cap, ref);
        continue;
      }
      const PendingPool::Transfer t = pending_.transfer(entry);
      if (PendingPool::rebuilt(entry)) {
        Route route;
        t.who->route_of(t.tag, route);
        CLUSTERSIM_CHECK(route.hops == PendingPool::route_hops(entry), "route_of gives the route the transfer was started on");
        activate(std::span<const LinkId>(route.links.data(), route.hops), {}, t.bytes, t.rate_cap, hold(t.who, t.tag));
      } else {
        activate(pending_.links(entry), pending_.weights(entry), t.bytes, t.rate_cap, hold(t.who, t.tag));
      }
      pending_.free(entry);
      --waiting_;
    }
  }
  // A small buffer is kept for the next batch; a large one (a stage's wave of flows) is given back,
  // so that waves of activations and of completions do not each keep their own.
  if (firing_.capacity() > kKeptBatchEntries) {
    firing_.release();
  } else {
    firing_.clear();
  }
  batches_[b].entries.swap(firing_);
  // The freed batch keeps the fired buffer (emptied) only while the free batches' buffers stay
  // within their budget; which batch ids are reused, and in what order, does not change.
  if (free_batch_entries_ + batches_[b].entries.capacity() > kKeptFreeBatchEntries) batches_[b].entries.release();
  free_batch_entries_ += batches_[b].entries.capacity();
  free_batches_.push_back(b);
  if (pending_.words() > kKeptPendingWords && waiting_ == 0) {
    // No transfer is waiting out its latency: give a large pending pool back (the next stage's
    // starts grow it again), so that it does not add to the streaming flows' peak.
    pending_.release();
  }
}

void NetworkModel::complete(sim::VariableId v) {
  Stream& s = streams_[v];
  TransferListener* who = who_of(s.ref);
  const std::uint64_t tag = tag_of(s.ref);
  sim::MemberRange::Buffer buf;  // (a split variable's two halves, copied: no allocation)
  const std::span<const sim::ConstraintId> links = solver_.members(v).contiguous(buf);
  double bytes = 0;  // (read only when kept)
  if (keeps_bytes()) {
    CLUSTERSIM_CHECK(v < stream_bytes_.size(), "a transfer's bytes are kept from its start (count_link_bytes, observer or invariants set while none is in flight)");
    bytes = stream_bytes_[v];
  }
  if (sim::EngineInvariants* inv = sim_.invariants()) {
    const double rate = solver_.rate(v);  // the stream's rate since its last change
    const double undelivered = s.remaining - rate * (sim_.now() - times_[s.since].at).seconds();
    inv->rate_changed(links, solver_.weights_of(v), rate, 0.0);
    inv->flow_delivered(bytes, undelivered, rate, sim_.now());
  }
  account(links, solver_.weights_of(v), bytes, observer_ != nullptr ? stream_start_[v] : sim::SimTime{},
          who, tag);
  release(s.ref);
  release_time(s.since);
  solver_.remove_variable(v);  // its memberships stay until the next solve (resurrection)
  sim_.request_flush(this);
  s.batch = kNoBatch;
  ++stats_.transfers_finished;
  who->on_transfer_done(tag);  // may start new transfers (and reuse this variable)
}

void NetworkModel::account(std::span<const LinkId> links, const std::uint16_t* weights, double bytes,
                           sim::SimTime start, const TransferListener* who, std::uint64_t tag) {
  while (!links.empty() && links.back() >= topo_.link_count()) links = links.first(links.size() - 1);  // virtual
  if (counts_link_bytes_) {
    for (std::size_t k = 0; k < links.size(); ++k) {
      const double copies = weights != nullptr ? weights[k] : 1.0;
      link_bytes_[links[k]] += bytes * copies;
    }
  }
  if (observer_ != nullptr) {
    Route route;
    std::copy(links.begin(), links.end(), route.links.begin());
    route.hops = static_cast<std::uint8_t>(links.size());
    observer_->on_flow_done(FinishedFlow{route, bytes, start, sim_.now(), who, tag});
  }
}

}  // namespace clustersim::topology
