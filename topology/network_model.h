// The network model: transfers become flows that share link bandwidth max-min fairly.
//
// A transfer along a Route first waits the route's latency (the first byte's trip), then streams
// its bytes at the rate the fair-share solver gives it; that rate changes whenever another flow on
// the same connected set of links starts or ends. Each link direction is one solver constraint.
// Rates are re-solved once per timestamp (Simulator flush), only for the touched component;
// remaining bytes are updated lazily when a flow's rate changes; only flows whose rate changed get
// a new completion event (older ones are cancelled lazily: an entry is live only in the batch its
// stream names).
//
// Listeners are told when a transfer's last byte has arrived. Nothing is allocated per transfer
// once the pools have grown to the peak number of concurrent flows; a large pool that empties (a
// stage's wave of activations, a fired batch of more than kKeptBatchEntries) is given back and
// grown again by the next wave (one reallocation per doubling, not per transfer).
//
// Memory per flow (direct all-to-all puts 16.7 M flows in flight at 4,096 GPUs, so this is what
// bounds the largest runs). A transfer waiting out its latency is one record of 32 bytes (40 with a
// rate cap) plus 4 per hop in a PendingPool (pending_pool.h; 2 more per hop only when folded), or
// 24 (32) bytes with no links when its listener builds the route again (start_rebuilt), or
// nothing but its 8-byte activation batch entry when the listener gives the bytes and rate cap
// again too (start_regenerated: the direct and halving-doubling schedules' unfolded sends);
// nothing of it is in the solver yet. When it starts streaming it becomes a solver variable (the solver copies the
// route into its memberships) and a 24-byte stream record (its rate is read from the solver) kept at the variable's id, so no map
// from variables to flows is needed; its byte count (8 bytes more, in a side array) is kept only
// when something reads it at the end: link byte counts (count_link_bytes), an observer or
// invariant checks. The record names its listener and tag in 8 bytes: the listener's slot in a
// small table and the tag, or, for a tag of kRegeneratedTagLimit or above or a listener that found no free slot,
// an index in a side table of (listener, tag) pairs. Each pending activation is 8 bytes in a
// *batch*, each pending completion 4 (the variable: no generation number, see Stream; a stream names
// the time of its last rate change by an index into a table of the distinct ones); a batch whose completions have all been superseded by rate changes gives its buffer
// back at once (its event still fires, and is still counted), so a flow whose rate changes k
// times does not hold k stale entries; the free batches keep emptied buffers of at most
// kKeptFreeBatchEntries entries in all, and the solver's report is given back after each flush. Measured per structure in docs/benchmarks.md (memory per
// concurrent flow).
//
// Batches coalesce events: a run of flow events for one time that would have taken consecutive
// sequence numbers in the simulator (nothing else was scheduled in between; Simulator::scheduled())
// is one simulator event holding the flows in order.
// The simulator pops events at equal times in sequence order, so the batch runs them exactly when
// and in the order the separate events would have run, and simulated times, event order and
// events_processed() (Simulator::count_coalesced) are unchanged. All flows of a direct all-to-all
// stage that start or finish together (one rate level) thus cost one queue entry, not millions.
//
// Link byte counts (link_bytes) are kept only when asked for (count_link_bytes) before the first
// transfer.
//
// An optional FlowObserver (null by default) sees every finished transfer with its route (links and
// hops; latency and bottleneck are not kept), bytes and streaming interval, for link-traffic
// reports. It only observes: simulated times are the same with or without one, and without one the
// only cost is a null test per finished transfer.
//
// When the simulator carries invariant checks (Simulator::set_invariants), the model reports each
// flow's injection, rate changes and delivery to them; without, a null test per flow and per solve.
//
// Virtual links: a capacity that no cable has, only the flows told to cross it share it (e.g. the
// bandwidth NCCL's NVLS graph reserves on a head GPU's NIC for one NVLSTree collective:
// nvls_tree_collective.h). Each is one more solver constraint, numbered after the topology's
// links; a flow crosses at most kMaxVirtualLinks of them besides its route. They carry no bytes of
// their own (link_bytes and the observer see the route only). A collective takes them when it is
// built and gives them back when it ends; given-back ids are reused, so repeated collectives do not
// grow the solver.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/fair_share.h"
#include "sim/pod_vector.h"
#include "sim/simulator.h"
#include "sim/units.h"
#include "topology/pending_pool.h"
#include "topology/topology.h"

namespace clustersim::topology {

// A listener's slot in the NetworkModel that gave it one last (see NetworkModel::listener_slot): a
// hint, used only while that model's table still gives the slot to this listener, so a lookup is
// O(1) and never wrong. Opaque to everyone but NetworkModel.
class ListenerSlotHint {
  friend class NetworkModel;
  std::uint32_t slot_ = 0xffffffffU;
};

class TransferListener {
 public:
  virtual void on_transfer_done(std::uint64_t tag) = 0;
  // Only for transfers started with NetworkModel::start_rebuilt: the route `tag`'s transfer was
  // started on, built again (the same links, in the same order) when it starts streaming.
  virtual void route_of(std::uint64_t tag, Route& route) const;
  // Only for transfers started with NetworkModel::start_regenerated: the route, bytes and rate cap
  // `tag`'s transfer was started with, built again (bit for bit) when it starts streaming.
  virtual void transfer_of(std::uint64_t tag, Route& route, double& bytes, double& rate_cap) const;

 protected:
  ~TransferListener() = default;

 public:
  ListenerSlotHint network_slot;  // NetworkModel's (see ListenerSlotHint)
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

using VirtualLinkId = sim::ConstraintId;

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
  std::uint64_t stale_separated = 0;  // completion entries that would have joined the batch of their stale one (post_completion)
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
  // `virtual_links` (at most kMaxVirtualLinks, unfolded flows only) bound it besides the route.
  void start(const Route& route, sim::Bytes bytes, TransferListener* who, std::uint64_t tag,
             sim::SimTime extra_latency = sim::SimTime{}, double rate_cap = sim::kUnlimited,
             const HopWeights* weights = nullptr, std::span<const VirtualLinkId> virtual_links = {});

  // As start() for one unfolded flow without virtual links, from a listener that can build the
  // route again from the tag (TransferListener::route_of): while it waits out its latency the
  // transfer keeps no links (its record is 24 bytes, 32 capped, instead of 32 + 4 per hop), and
  // its route is asked for once more when it starts streaming. Same simulated times and order.
  void start_rebuilt(const Route& route, sim::Bytes bytes, TransferListener* who, std::uint64_t tag,
                     sim::SimTime extra_latency, double rate_cap);
  // As start_rebuilt, from a listener that can also give the bytes and the rate cap again
  // (TransferListener::transfer_of): while it waits out its latency the transfer keeps nothing
  // but its 8-byte activation batch entry (listener slot and tag; no PendingPool record). Falls
  // back to start_rebuilt when the tag is kRegeneratedTagLimit or above or kRegeneratedListeners
  // other listeners hold a slot (transfers waiting this way, or streaming). Same simulated times and order.
  void start_regenerated(const Route& route, sim::Bytes bytes, TransferListener* who, std::uint64_t tag,
                         sim::SimTime extra_latency, double rate_cap);
  static constexpr std::uint64_t kRegeneratedTagLimit = std::uint64_t{1} << 54;
  static constexpr std::uint32_t kRegeneratedListeners = 512;

  // A virtual link of `capacity` (bytes/s; see the header comment), reusing a given-back id.
  VirtualLinkId add_virtual_link(double capacity);
  // Gives it back once no flow crosses it any more (its id may be handed out again).
  void release_virtual_link(VirtualLinkId v);
  double capacity(sim::ConstraintId c) const { return solver_.capacity(c); }

  const NetworkStats& stats() const { return stats_; }
  const sim::FairShareStats& solver_stats() const { return solver_.stats(); }
  // Bytes that have crossed each link so far (finished transfers), for utilisation reports; only
  // after count_link_bytes(), called while no transfer is in flight (so every transfer's bytes
  // are kept until it ends: 8 bytes more per streaming transfer).
  void count_link_bytes();
  double link_bytes(LinkId l) const;
  std::size_t active_flows() const { return solver_.live_variables(); }
  // Flow event entries held in batches (live and stale), for memory tests.
  std::size_t held_entries() const {
    std::size_t n = 0;
    for (const Batch& b : batches_) n += b.kind == kActivate ? b.entries.size() / 2 : b.entries.size();
    return n;
  }
  // 4-byte words in the pool of waiting transfers (PendingPool::words), for memory tests.
  std::size_t pending_words() const { return pending_.words(); }
  // Observation only (see FlowObserver); null turns it off. Not owned. Set it while no transfer
  // is in flight (stream starts are kept only while observed).
  void set_observer(FlowObserver* observer);

  void on_event(std::uint64_t tag) override;
  void on_flush() override;

 private:
  static constexpr std::uint32_t kNoBatch = 0xffffffffU;
  // Pools kept when emptied up to these sizes (larger ones are given back, see on_event).
  static constexpr std::size_t kKeptBatchEntries = 8192;  // (words: 32 KiB)
  // The free batches together keep buffers of at most this many entries; a fired batch past it
  // gives its buffer back. (Each kept its own up to kKeptBatchEntries: a direct all-to-all's stage
  // posts its starts in thousands of batches, whose emptied buffers then stayed resident while the
  // stage streamed, ~8 bytes per flow; docs/benchmarks.md, flowmem12.)
  static constexpr std::size_t kKeptFreeBatchEntries = 131072;  // (words: 512 KiB)
  static constexpr std::size_t kKeptPendingWords = 65536 * 16;
  // A superseded batch's buffer, when small (at most kSpareBufferEntries, PodVector's first
  // capacity), waits in spare_ for the next new batch instead of going back to the allocator; at
  // most kKeptSpareBuffers wait (64 B each: 256 KiB in all). Rate changes supersede a batch per
  // event in large components (the tree over a fabric), so this is an allocation per event saved.
  static constexpr std::size_t kSpareBufferEntries = 16;
  static constexpr std::size_t kKeptSpareBuffers = 4096;
  // A streaming transfer, at its solver variable's index (24 bytes; its bytes, when kept, are in
  // stream_bytes_: see keeps_bytes). `batch` names the batch holding its live completion entry
  // (kNoBatch: none): an entry of this variable in any other batch is stale (see post_completion()
  // for why a batch never holds a stale and a live entry of one variable); `ref` names the
  // listener and the tag (hold()); `since` the time of its last rate change, in the table of
  // stream times (acquire_time()).
  struct Stream {
    double remaining = 0;  // at times_[since] (its rate since then is the solver's)
    std::uint64_t ref = 0;
    std::uint32_t batch = kNoBatch;
    std::uint32_t since = 0;
  };
  static_assert(sizeof(Stream) == 24, "see the header comment");
  // Stream times: the streams whose rate last changed at one flush share its time (a wave's flows
  // all do), so each names it by a 4-byte index into this table instead of keeping 8 bytes of its
  // own; an entry is given back when no stream names it. The value is the time itself, so every
  // computation reads the same number as before.
  struct StreamTime {
    sim::SimTime at;
    std::uint32_t refs = 0;
  };
  std::uint32_t acquire_time(sim::SimTime at);  // the entry for `at` (the last one made, when it is `at`)
  void release_time(std::uint32_t i);
  std::vector<StreamTime> times_;
  std::vector<std::uint32_t> free_times_;
  static constexpr std::uint32_t kNoTime = 0xffffffffU;
  std::uint32_t last_time_ = kNoTime;  // the entry made last (kNoTime: none live)
  enum : std::uint64_t { kActivate = 0, kComplete = 1 };
  // Batch entries are 4-byte words. A completion entry is one word, the variable; an activation entry is two, the low and the high word of
  // the pending record's handle (PendingPool::alloc; bit 63 clear) or, for start_regenerated, of
  // kRegenerated | listener slot << kSlotShift | tag.
  static constexpr std::uint64_t kRegenerated = std::uint64_t{1} << 63;
  static constexpr int kSlotShift = 54;
  static constexpr std::uint32_t kNoSlot = 0xffffffffU;
  // A listener and a tag in 8 bytes (a stream's ref): listener slot << kSlotShift | tag, where the
  // slot's listener is slot_who_[slot]; or kSideRef | i, where side_[i] holds both (a tag of
  // kRegeneratedTagLimit or above, or no slot free). A regenerated activation entry without its
  // kRegenerated bit is such a ref (kSideRef is the same bit; a slot ref never has it).
  static constexpr std::uint64_t kSideRef = std::uint64_t{1} << 63;
  // The slot of `who` (kNoSlot: kRegeneratedListeners other listeners hold one); a slot held by no
  // transfer may be given to another listener.
  std::uint32_t listener_slot(TransferListener* who);
  std::uint64_t hold(TransferListener* who, std::uint64_t tag);  // a ref; release() gives it back
  void release(std::uint64_t ref);
  TransferListener* who_of(std::uint64_t ref) const {
    return (ref & kSideRef) != 0 ? side_[ref & 0xffffffffU].who : slot_who_[ref >> kSlotShift];
  }
  std::uint64_t tag_of(std::uint64_t ref) const {
    return (ref & kSideRef) != 0 ? side_[ref & 0xffffffffU].tag : ref & (kRegeneratedTagLimit - 1);
  }
  // The batch that the next event may join (see the header comment).
  struct OpenBatch {
    bool valid = false;
    std::uint64_t kind = kActivate;
    sim::SimTime time;
    std::uint64_t scheduled = 0;  // Simulator::scheduled() right after its event was posted
    std::uint32_t batch = 0;
  };
  // A batch: its entries (words), how many were posted (each stands for one event) and how many of
  // them are not superseded yet (its buffer is given back when that reaches zero).
  struct Batch {
    sim::PodVector<std::uint32_t> entries;
    std::uint32_t posted = 0;
    std::uint32_t live = 0;
    std::uint64_t kind = kActivate;
  };
  // Adds an activation entry (two words) or a completion entry (v) to a batch at `at` (the open one
  // when it may join) and returns the batch.
  std::uint32_t open_batch(sim::SimTime at, std::uint64_t kind, std::uint32_t not_in);  // (a new one rather than not_in)
  void post_activation(std::uint64_t entry, sim::SimTime at);
  std::uint32_t post_completion(sim::VariableId v, std::uint32_t live_in, sim::SimTime at);
  void supersede(std::uint32_t batch);  // one of its completion entries is stale now
  // Starts streaming (or, with nothing to stream, finishes at once); `links` may point into pending_;
  // `ref` (hold()) is the stream's from now on.
  void activate(std::span<const LinkId> links, std::span<const std::uint16_t> weights, double bytes,
                double rate_cap, std::uint64_t ref);
  void complete(sim::VariableId v);
  // Link bytes and the observer, while the route is still readable (`links` may end with virtual
  // links, which carry no bytes of their own and are not reported).
  void account(std::span<const LinkId> links, const std::uint16_t* weights, double bytes, sim::SimTime start,
               const TransferListener* who, std::uint64_t tag);

  sim::Simulator& sim_;
  const Topology& topo_;
  sim::FairShareSolver solver_;
  PendingPool pending_;      // transfers waiting out their latency, with their routes
  std::size_t waiting_ = 0;  // how many
  std::vector<VirtualLinkId> free_virtual_;  // given-back virtual links
  // Listeners by slot, and how many transfers (regenerated ones waiting, and streams) hold each
  // slot (one held by none may be given to another listener; at most kRegeneratedListeners slots).
  std::vector<TransferListener*> slot_who_;
  std::vector<std::uint32_t> slot_refs_;
  // The side table of refs (see kSideRef) and its free indices.
  struct SideRef {
    TransferListener* who;
    std::uint64_t tag;
  };
  std::vector<SideRef> side_;
  std::vector<std::uint32_t> free_side_;
  sim::PodVector<Stream> streams_;  // indexed by solver variable
  std::vector<sim::SimTime> stream_start_;  // per variable, when the first byte left; only with an observer
  std::vector<double> stream_bytes_;        // per variable, its bytes; only while keeps_bytes()
  // A finished transfer's bytes are read (link byte counts, an observer, invariant checks).
  bool keeps_bytes() const { return counts_link_bytes_ || observer_ != nullptr || sim_.invariants() != nullptr; }
  bool counts_link_bytes_ = false;
  std::vector<Batch> batches_;
  std::vector<std::uint32_t> free_batches_;
  std::size_t free_batch_entries_ = 0;  // Σ capacity of the free batches' buffers (kKeptFreeBatchEntries)
  std::vector<sim::PodVector<std::uint32_t>> spare_;  // emptied small buffers (kKeptSpareBuffers)
  sim::PodVector<std::uint32_t> firing_;  // the batch being run (swapped out of batches_)
  OpenBatch open_;
  std::vector<double> link_bytes_;
  NetworkStats stats_;
  FlowObserver* observer_ = nullptr;
};

}  // namespace clustersim::topology
