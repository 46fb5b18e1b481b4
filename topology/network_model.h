// The network model: transfers become flows that share link bandwidth max-min fairly.
//
// A transfer along a Route first waits the route's latency (the first byte's trip), then streams
// its bytes at the rate the fair-share solver gives it; that rate changes whenever another flow on
// the same connected set of links starts or ends. Each link direction is one solver constraint.
// Rates are re-solved once per timestamp (Simulator flush), only for the touched component;
// remaining bytes are updated lazily when a flow's rate changes; only flows whose rate changed get
// a new completion event (older ones are cancelled lazily by a generation number).
//
// Listeners are told when a transfer's last byte has arrived. Nothing is allocated per transfer
// once the flow pool has grown to the peak number of concurrent flows.
//
// Memory per flow (direct all-to-all puts 16.7 M flows in flight at 4,096 GPUs, so this is what
// bounds the largest runs): a 64-byte record, the route's links (4 bytes per hop; latency and
// bottleneck are not kept: only the start needs them) and hop weights only for folded flows (2
// bytes per hop, in a pool that unfolded runs never grow), both kept once, in the solver's pool of
// constraint blocks (FairShareSolver::alloc_block: the solver's variable reads them there, so a
// route is not copied), and 8 bytes per pending activation or completion in a *batch*. Batches coalesce events: a run of flow events for one
// time that would have taken consecutive sequence numbers in the simulator (nothing else was
// scheduled in between; Simulator::scheduled()) is one simulator event holding the flows in order.
// The simulator pops events at equal times in sequence order, so the batch runs them exactly when
// and in the order the separate events would have run, and simulated times, event order and
// events_processed() (Simulator::count_coalesced) are unchanged. All flows of a direct all-to-all
// stage that start or finish together (one rate level) thus cost one queue entry, not millions.
//
// An optional FlowObserver (null by default) sees every finished transfer with its route (links and
// hops; latency and bottleneck are not kept), bytes and streaming interval, for link-traffic
// reports. It only observes: simulated times are the same with or without one, and without one the
// only cost is a null test per finished transfer.
//
// When the simulator carries invariant checks (Simulator::set_invariants), the model reports each
// flow's injection, rate changes and delivery to them; without, a null test per flow and per solve.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/fair_share.h"
#include "sim/pod_vector.h"
#include "sim/simulator.h"
#include "sim/units.h"
#include "topology/topology.h"

namespace clustersim::topology {

class TransferListener {
 public:
  virtual void on_transfer_done(std::uint64_t tag) = 0;

 protected:
  ~TransferListener() = default;
};

// One finished transfer: `bytes` crossed every link of `route` (links and hops only) between `start` (the first byte
// left, after the route's latency) and `end` (the last byte arrived); `who` and `tag` are those
// the transfer was started with.
struct FinishedFlow {
  const Route& route;
  double bytes;
  sim::SimTime start, end;
  const TransferListener* who;
  std::uint64_t tag;
};

class FlowObserver {
 public:
  virtual void on_flow_done(const FinishedFlow& flow) = 0;

 protected:
  ~FlowObserver() = default;
};

using FlowId = std::uint32_t;

// A folded flow's multiplicity per hop: route.links[k] carries hop_weights[k] identical flows
// (symmetry folding, workloads/collectives/channel_folding.h; the solver counts each of them).
// A folded flow adds bytes × weight to its links' byte counts and is reported to the observer
// once, so callers that need per-link traffic do not fold.
using HopWeights = std::array<std::uint16_t, kMaxHops>;

struct NetworkStats {
  std::uint64_t transfers_started = 0;
  std::uint64_t transfers_finished = 0;
  std::uint64_t rate_updates = 0;
  std::size_t peak_concurrent_flows = 0;
  std::uint64_t batched_events = 0;  // flow events that joined another's batch (no queue entry)
};

class NetworkModel final : public sim::EventHandler, public sim::FlushHandler {
 public:
  NetworkModel(sim::Simulator& sim, const Topology& topo);
  // The same, on the solver `kept` gave back (release_solver) from a model of this topology: its
  // per-link constraints are not built again. Behaves exactly as a new model.
  NetworkModel(sim::Simulator& sim, const Topology& topo, sim::FairShareSolver&& kept);
  // The solver, reset (sim::FairShareSolver::reset), for the next model of this topology.
  sim::FairShareSolver release_solver() &&;
  NetworkModel(const NetworkModel&) = delete;
  NetworkModel& operator=(const NetworkModel&) = delete;

  // Starts moving `bytes` along `route`; `who->on_transfer_done(tag)` fires when the last byte
  // arrives. `extra_latency` (e.g. a protocol's per-step overhead) is added before streaming, and
  // `rate_cap` (bytes/s) bounds the flow's rate on top of the links. `weights` (null: one flow)
  // makes it a folded flow (see HopWeights); `bytes` is then what each of the identical flows moves.
  FlowId start(const Route& route, sim::Bytes bytes, TransferListener* who, std::uint64_t tag,
               sim::SimTime extra_latency = sim::SimTime{}, double rate_cap = sim::kUnlimited,
               const HopWeights* weights = nullptr);

  const NetworkStats& stats() const { return stats_; }
  const sim::FairShareStats& solver_stats() const { return solver_.stats(); }
  // Bytes that have crossed each link so far (finished transfers), for utilisation reports.
  double link_bytes(LinkId l) const { return link_bytes_[l]; }
  std::size_t active_flows() const { return solver_.live_variables(); }
  // Observation only (see FlowObserver); null turns it off. Not owned. Set it while no transfer
  // is in flight (stream starts are kept only while observed).
  void set_observer(FlowObserver* observer);

  void on_event(std::uint64_t tag) override;
  void on_flush() override;

 private:
  // 64 bytes (one cache line); the route's links (and weights, if folded) live in the solver's
  // block at `links`. Until activation `rate` holds the transfer's rate cap (the solver keeps it after).
  struct Flow {
    double bytes = 0;
    double remaining = 0;
    double rate = 0;
    sim::SimTime last_update;
    TransferListener* who = nullptr;
    std::uint64_t tag = 0;
    std::uint32_t links = 0;    // the solver block of its `hops` links (and weights if folded)
    sim::VariableId var = 0;
    std::uint32_t generation = 0;
    std::uint8_t hops = 0;
    bool streaming = false;
    bool folded = false;
  };
  static_assert(sizeof(Flow) == 64, "the flow record stays one cache line (see the header comment)");
  enum : std::uint64_t { kActivate = 0, kComplete = 1 };
  // A batch entry: the flow and the generation its event was posted for (stale when they differ).
  static std::uint64_t encode(FlowId f, std::uint32_t gen) {
    return (static_cast<std::uint64_t>(gen & 0x7fffffffU) << 32) | f;
  }
  // The batch that the next event may join (see the header comment).
  struct OpenBatch {
    bool valid = false;
    std::uint64_t kind = kActivate;
    sim::SimTime time;
    std::uint64_t scheduled = 0;  // Simulator::scheduled() right after its event was posted
    std::uint32_t batch = 0;
  };
  void post(FlowId f, sim::SimTime at, std::uint64_t kind);
  std::span<const LinkId> links_of(const Flow& flow) const { return solver_.block(flow.links, flow.hops); }
  void activate(FlowId f);
  void complete(FlowId f);
  void account(FlowId f);  // link bytes and the observer, while the route is still readable
  void finish(FlowId f);
  // For the invariant checks (sim/engine_invariants.h): a flow's folding weights (null: unfolded).
  const std::uint16_t* weights_of(const Flow& flow) const {
    return flow.folded ? solver_.block_weights(flow.links) : nullptr;
  }

  sim::Simulator& sim_;
  const Topology& topo_;
  sim::FairShareSolver solver_;
  sim::PodVector<Flow> flows_;  // grows without a copy (sim/pod_vector.h)
  std::vector<sim::SimTime> stream_start_;  // per flow, when the first byte left; only with an observer
  std::vector<FlowId> free_flows_;
  std::vector<sim::PodVector<std::uint64_t>> batches_;
  std::vector<std::uint32_t> free_batches_;
  sim::PodVector<std::uint64_t> firing_;  // the batch being run (swapped out of batches_)
  OpenBatch open_;
  sim::PodVector<FlowId> var_to_flow_;
  std::vector<double> link_bytes_;
  NetworkStats stats_;
  FlowObserver* observer_ = nullptr;
};

}  // namespace clustersim::topology
