// The common frame of every collective algorithm: a state machine that issues transfers on the
// network model as their dependencies are met and tells its listener when the last one lands.
//
// An algorithm never materialises its whole schedule (a 4,096-GPU ring is 33.5 M transfers): it
// keeps per-rank counters and decides the next transfer when one finishes. Each algorithm is one
// class in its own file (ring_collective.h, …), built by make_collective().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/simulator.h"
#include "topology/network_model.h"
#include "topology/routing.h"
#include "topology/topology.h"
#include "workloads/collectives/collective_types.h"
#include "workloads/collectives/nccl_constants.h"
#include "workloads/collectives/nccl_tuner.h"

namespace clustersim::workloads {

class CollectiveListener {
 public:
  virtual void on_collective_done(std::uint64_t tag) = 0;

 protected:
  ~CollectiveListener() = default;
};

// What an algorithm needs from the world it runs in.
struct CollectiveContext {
  sim::Simulator& sim;
  topology::NetworkModel& net;
  const topology::Topology& topo;
  const topology::Router& router;
};

// The plan an algorithm was given after defaults were resolved.
struct CollectivePlan {
  CollectiveRequest request;   // ranks, bytes, op, …
  Protocol protocol = Protocol::Simple;
  int channels = 1;
  // The channels (thread blocks) NCCL launches per GPU for the size, for the host's enqueue work
  // (host_launch.h); rings and trees replay duplicated channels folded pairwise (LaunchShape).
  int nccl_channels = 1;
  int chunks = 1;
  int gpu_compute_capability = 80;
  // NCCL's launch and per-step protocol latencies on top of the physical route latencies.
  // Off only for engine benchmarks that compare against the pure flow closed form.
  bool protocol_latencies = true;
  // The launch latency (baseLat) is paid once per collective; stages of a composite
  // (hierarchical) skip it.
  bool launch_latency = true;
  // Per-flow rate ceiling, bytes/s on the wire: the protocol's per-channel ceiling from NCCL's
  // model (NcclTuner::channel_cap_GBps) scaled by the threads launched.
  double channel_rate_cap = sim::kUnlimited;
  // Direct (grouped send/recv): the ceiling of one send whose route starts on NVLink, NCCL's p2p
  // channels for its size times one lane (p2p_channels.h); unlimited elsewhere.
  double p2p_nvlink_cap = sim::kUnlimited;
  // Grouped send/recv (all-to-all, send/recv) over NVLink: the receiver's copy of the last NCCL
  // step out of its staging buffer, µs, charged once per send (p2p_channels.h p2p_drain_us).
  double p2p_drain_us = 0;
  // In-network reduction: payload moves at this fraction of the link rate (NCCL nvlsEfficiency).
  double in_network_efficiency = 1.0;
  // NVLSTree: what NCCL's NVLS graph reserves on each head's NIC per direction (its bwInter, one
  // search channel per head), bytes/s on the wire; every flow a head sends or receives across
  // NVLink domains shares it (nvls_tree_collective.h). Unlimited: no reservation.
  double nvls_head_rate = sim::kUnlimited;
  // What NCCL's tuner chose and predicted (the algorithm row, -1 when NCCL has no such choice).
  nccl::NcclAlgo nccl_algo = nccl::NcclAlgo::Ring;
  double nccl_model_us = -1;
  // Simulate symmetric channels once (channel_folding.h), only when nobody needs per-flow traffic:
  // replay_collectives turns it on for a single plan (alone on its network, condition 3 there),
  // a training iteration for its live data-parallel collectives (with shares_links).
  bool fold_channels = false;
  // Other flows may share this collective's links (a live collective inside a training iteration):
  // folding then needs channels that cross identical links (channel_folding.h).
  bool shares_links = false;
  // Hardware facts for planning the stages of composite algorithms.
  GraphHints hints;
};

// Every route a collective's flows may take, in an order fixed by its structure (two instances
// built from plans of equal shape list corresponding routes at the same index), with the latency
// paid per step on it and the fold weights it is sent with (empty: one flow each). Symmetry folding
// of whole sub-collectives compares these (group_folding.h).
struct FlowRoutes {
  std::vector<double> structure;  // what else the state machine reads (tree parents, group sizes)
  std::vector<topology::Route> routes;
  std::vector<sim::SimTime> overheads;
  std::vector<topology::HopWeights> weights;
  // `weights` null: one flow on every hop.
  void add(const topology::Route& route, sim::SimTime overhead, const topology::HopWeights* w = nullptr) {
    routes.push_back(route);
    overheads.push_back(overhead);
    topology::HopWeights one{};
    one.fill(1);
    weights.push_back(w != nullptr ? *w : one);
  }
};

class CollectiveAlgorithm : public topology::TransferListener, public sim::EventHandler {
 public:
  CollectiveAlgorithm(CollectiveContext ctx, CollectivePlan plan, CollectiveListener* listener,
                      std::uint64_t tag)
      : ctx_(ctx), plan_(std::move(plan)), listener_(listener), tag_(tag) {}
  virtual ~CollectiveAlgorithm() = default;

  // Starts now: waits NCCL's base launch latency, then issues the first transfers.
  void start();
  bool done() const { return done_; }
  sim::SimTime start_time() const { return start_time_; }
  sim::SimTime finish_time() const { return finish_time_; }
  const CollectivePlan& plan() const { return plan_; }
  virtual std::uint64_t transfers_issued() const { return transfers_; }
  // Before start(): transfers the simulation will issue at the least (after folding: flows actually
  // simulated, each ending in at least one event of its own). A replay with an event budget below
  // it is refused before it runs (collective_replay.h) instead of simulated until the budget is
  // spent. 0: the algorithm does not say.
  virtual std::uint64_t simulated_transfers_at_least() const { return 0; }
  // Appends the routes above; false (nothing appended) when the algorithm does not list them, and
  // then it is never folded with others.
  virtual bool flow_routes(FlowRoutes&) const { return false; }

  void on_event(std::uint64_t tag) override;

 protected:
  virtual void begin() = 0;       // issue the first transfers
  virtual nccl::NcclAlgo nccl_algo() const { return nccl::NcclAlgo::Ring; }
  // The one-off latency before the first transfer (NCCL baseLat by default).
  virtual double launch_latency_us() const { return nccl::base_latency_us(nccl_algo(), plan_.protocol); }
  // Call once the last transfer has landed.
  void finish();
  // Starts one transfer of `payload` bytes; the protocol's wire overhead is added here, and
  // `overhead` (usually step_overhead(route), cached by the caller) before streaming.
  // `virtual_links` bound it besides the route (NetworkModel::add_virtual_link).
  void send(const topology::Route& route, sim::Bytes payload, std::uint64_t tag, sim::SimTime overhead,
            double rate_cap = sim::kUnlimited, const topology::HopWeights* weights = nullptr,
            std::span<const topology::VirtualLinkId> virtual_links = {});
  // As send() for one unfolded transfer without virtual links, whose route route_of(tag) builds
  // again (NetworkModel::start_rebuilt: it keeps no links while it waits).
  void send_rebuilt(const topology::Route& route, sim::Bytes payload, std::uint64_t tag, sim::SimTime overhead,
                    double rate_cap);
  // As send_rebuilt, for a transfer whose payload and rate cap transfer_of(tag) gives again too
  // (NetworkModel::start_regenerated: nothing but its batch entry while it waits).
  void send_regenerated(const topology::Route& route, sim::Bytes payload, std::uint64_t tag, sim::SimTime overhead,
                        double rate_cap);
  // The bytes send() puts on the wire for `payload` (the protocol's wire overhead added).
  double wire_bytes(sim::Bytes payload) const;
  // Per-step protocol latency not already covered by the route's physical latency.
  sim::SimTime step_overhead(const topology::Route& route) const;
  nccl::HwClass hw_class(const topology::Route& route) const;

  CollectiveContext ctx_;
  CollectivePlan plan_;

 private:
  CollectiveListener* listener_;
  std::uint64_t tag_;
  sim::SimTime start_time_{};
  sim::SimTime finish_time_{};
  std::uint64_t transfers_ = 0;
  bool done_ = false;
};

}  // namespace clustersim::workloads
