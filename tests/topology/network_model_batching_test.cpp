// The network model's batched flow events and pooled routes against a reference written the plain
// way (one simulator event per activation and per completion, a full Route copy per flow, as the
// model was before batching): on random transfer sets whose callbacks start further transfers, the
// order of arrivals, every arrival time, the final time, events_processed() and the bytes per link
// must be exactly equal, not close. The reference's solver also re-solves every removal (no
// resurrection, fair_share.h), so flows replaced at once by identical ones check that shortcut.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "sim/fair_share.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/network_model.h"
#include "topology/routing.h"

using namespace clustersim;

namespace {

// One event per flow event, generation-cancelled completions: the plain form of NetworkModel.
class ReferenceNetwork final : public sim::EventHandler, public sim::FlushHandler {
 public:
  ReferenceNetwork(sim::Simulator& sim, const topology::Topology& topo) : sim_(sim), link_bytes_(topo.link_count()) {
    for (topology::LinkId l = 0; l < topo.link_count(); ++l) solver_.add_constraint(topo.link(l).bandwidth.value);
  }
  void start(const topology::Route& route, sim::Bytes bytes, topology::TransferListener* who, std::uint64_t tag,
             sim::SimTime extra, double cap) {
    const auto f = static_cast<std::uint32_t>(flows_.size());
    flows_.push_back(Flow{route, bytes.value, bytes.value, 0, cap, {}, who, tag, 0, 1});
    const sim::SimTime delay = route.latency + extra;
    if (delay.ps > 0) {
      sim_.schedule_in(delay, this, encode(f, 1, 0));
    } else {
      activate(f);
    }
  }
  double link_bytes(topology::LinkId l) const { return link_bytes_[l]; }
  std::size_t active_flows() const { return solver_.live_variables(); }
  void on_event(std::uint64_t tag) override {
    const auto f = static_cast<std::uint32_t>(tag & 0xffffffffU);
    if (flows_[f].generation != ((tag >> 32) & 0x7fffffffU)) return;
    if ((tag >> 63) == 0) {
      activate(f);
    } else {
      solver_.remove_variable(flows_[f].var);
      sim_.request_flush(this);
      finish(f);
    }
  }
  void on_flush() override {
    if (!solver_.needs_solve()) return;
    for (const sim::VariableId v : solver_.solve()) {
      const std::uint32_t f = var_to_flow_[v];
      Flow& flow = flows_[f];
      if (flow.rate > 0) flow.remaining -= flow.rate * (sim_.now() - flow.last).seconds();
      flow.last = sim_.now();
      flow.rate = solver_.rate(v);
      ++flow.generation;
      const double left = std::max(0.0, flow.remaining);
      sim_.schedule_at(sim_.now() + sim::SimTime::from_seconds(left / flow.rate), this, encode(f, flow.generation, 1));
    }
  }

 private:
  struct Flow {
    topology::Route route;
    double bytes, remaining, rate, cap;
    sim::SimTime last;
    topology::TransferListener* who;
    std::uint64_t tag;
    sim::VariableId var;
    std::uint32_t generation;
  };
  static std::uint64_t encode(std::uint32_t f, std::uint32_t gen, std::uint64_t kind) {
    return (kind << 63) | (static_cast<std::uint64_t>(gen) << 32) | f;
  }
  void activate(std::uint32_t f) {
    Flow& flow = flows_[f];
    if (flow.remaining <= 0 || flow.route.hops == 0) {
      finish(f);
      return;
    }
    flow.last = sim_.now();
    flow.var = solver_.add_variable(std::span<const sim::ConstraintId>(flow.route.links.data(), flow.route.hops), flow.cap);
    if (var_to_flow_.size() <= flow.var) var_to_flow_.resize(flow.var + 1);
    var_to_flow_[flow.var] = f;
    sim_.request_flush(this);
  }
  void finish(std::uint32_t f) {
    Flow& flow = flows_[f];
    for (int k = 0; k < flow.route.hops; ++k) link_bytes_[flow.route.links[static_cast<std::size_t>(k)]] += flow.bytes;
    ++flow.generation;
    flow.who->on_transfer_done(flow.tag);
  }

  sim::Simulator& sim_;
  sim::FairShareSolver solver_{sim::FairShareConfig{.resurrect = false}};  // every removal re-solves
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> var_to_flow_;
  std::vector<double> link_bytes_;
};

// Starts transfers between all pairs at time 0 (as a direct all-to-all does, so many share a start
// time and a rate), and from each arrival, while transfers remain, one more from the receiver to a
// pseudo-random rank: at once, or from an event of the driver's own at a time flow events also
// use (so other events fall between a batch's flow events). Records (tag, arrival ps) in order.
template <class Net>
struct Driver final : topology::TransferListener, sim::EventHandler {
  Driver(sim::Simulator& s, Net& n, const topology::Router& r, int rank_count, std::uint64_t seed, int more, int same)
      : sim(s), net(n), router(r), ranks(rank_count), rng(seed), left(more), again(same) {}
  void launch(int src, int dst, std::uint64_t tag) {
    const double bytes = (rng.next() % 4 == 0) ? 0.0 : static_cast<double>(1 + rng.next() % 8) * 1e6;
    const double cap = (rng.next() % 3 == 0) ? 40e9 : sim::kUnlimited;
    const sim::SimTime extra = sim::SimTime::from_ps(static_cast<std::int64_t>(rng.next() % 3) * 500'000);
    dst_of.push_back(dst);
    src_of.push_back(src);
    cap_of.push_back(cap);
    bytes_of.push_back(bytes);
    net.start(router.route(src, dst), sim::Bytes{bytes}, this, tag, extra, cap);
  }
  void on_transfer_done(std::uint64_t tag) override {
    arrivals.emplace_back(tag, sim.now().ps);
    if (bytes_of[tag] > 0 && again > 0 && rng.next() % 2 == 0) {
      // A pipelined connection's next chunk: the same links and cap, streaming at once (latency
      // paid elsewhere), so the model's solver takes the ended flow back (resurrection).
      topology::Route route = router.route(src_of[tag], dst_of[tag]);
      route.latency = sim::SimTime{};
      dst_of.push_back(dst_of[tag]);
      src_of.push_back(src_of[tag]);
      cap_of.push_back(cap_of[tag]);
      bytes_of.push_back(static_cast<double>(1 + rng.next() % 8) * 1e6);
      --again;
      net.start(route, sim::Bytes{bytes_of.back()}, this, dst_of.size() - 1, sim::SimTime{}, cap_of[tag]);
      return;
    }
    if (left <= 0) return;
    --left;
    if (rng.next() % 2 == 0) {
      on_event(tag);
      return;
    }
    // Two equal transfers with an event of the driver's own between them at their activation time:
    // the probe must run after the first activation and before the second, and it logs how many
    // flows it sees streaming.
    const int src = dst_of[tag];
    const int dst = (src + 1) % ranks;
    const topology::Route route = router.route(src, dst);
    for (int k = 0; k < 2; ++k) {
      dst_of.push_back(dst);
      src_of.push_back(src);
      cap_of.push_back(sim::kUnlimited);
      bytes_of.push_back(1e6);
      net.start(route, sim::Bytes{1e6}, this, dst_of.size() - 1, sim::SimTime{}, sim::kUnlimited);
      if (k == 0) sim.schedule_in(route.latency, this, kProbe);
    }
  }
  void on_event(std::uint64_t tag) override {
    if (tag == kProbe) {
      arrivals.emplace_back(kProbe, static_cast<std::int64_t>(net.active_flows()));
      return;
    }
    const int src = dst_of[tag];
    const int dst = static_cast<int>(rng.next() % static_cast<std::uint64_t>(ranks));
    launch(src, dst, dst_of.size());
  }
  static constexpr std::uint64_t kProbe = ~std::uint64_t{0};
  sim::Simulator& sim;
  Net& net;
  const topology::Router& router;
  int ranks;
  sim::Rng rng;
  int left;
  std::vector<int> dst_of, src_of;
  std::vector<double> cap_of, bytes_of;
  int again;  // identical relaunches left (a streaming transfer followed at once by the next)
  std::vector<std::pair<std::uint64_t, std::int64_t>> arrivals;
};

template <class Net>
struct Outcome {
  std::vector<std::pair<std::uint64_t, std::int64_t>> arrivals;
  std::int64_t end_ps = 0;
  std::uint64_t events = 0;
  std::vector<double> link_bytes;
};

template <class Net>
Outcome<Net> play(const topology::Topology& topo, const topology::Router& router, int ranks, std::uint64_t seed,
                  std::uint64_t* batched = nullptr, std::uint64_t* resurrected = nullptr, int same = 0) {
  sim::Simulator sim;
  Net net(sim, topo);
  if constexpr (std::is_same_v<Net, topology::NetworkModel>) net.count_link_bytes();
  Driver<Net> d(sim, net, router, ranks, seed, 3 * ranks, same);
  for (int s = 0; s < ranks; ++s)
    for (int t = 0; t < ranks; ++t)
      if (s != t) d.launch(s, t, d.dst_of.size());
  Outcome<Net> o;
  o.end_ps = sim.run().ps;
  o.arrivals = d.arrivals;
  o.events = sim.events_processed();
  for (topology::LinkId l = 0; l < topo.link_count(); ++l) o.link_bytes.push_back(net.link_bytes(l));
  if constexpr (std::is_same_v<Net, topology::NetworkModel>) {
    if (batched != nullptr) *batched = net.stats().batched_events;
    if (resurrected != nullptr) *resurrected = net.solver_stats().resurrections;
  }
  return o;
}

}  // namespace

TEST_CASE("topology::NetworkModel: batched events and pooled routes give the plain model's arrivals exactly") {
  for (const char* preset : {"dgx-h100", "8x-a100-pcie"}) {
    const topology::Topology topo = topology::build_cluster(topology::preset_cluster(preset, 3));
    const topology::Router router(topo);
    const int ranks = topo.gpu_count();
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      CAPTURE(preset);
      CAPTURE(seed);
      std::uint64_t batched = 0;
      const auto got = play<topology::NetworkModel>(topo, router, ranks, seed, &batched);
      const auto want = play<ReferenceNetwork>(topo, router, ranks, seed);
      CHECK(batched > 0);  // the all-pairs start coalesces: the batching path is exercised
      REQUIRE(got.arrivals.size() == want.arrivals.size());
      CHECK(got.arrivals == want.arrivals);
      CHECK(got.end_ps == want.end_ps);
      CHECK(got.events == want.events);
      CHECK(got.link_bytes == want.link_bytes);
    }
  }
}

// Transfers followed at once by an identical one (a pipelined connection's next chunk): the model's
// solver takes the ended flow back instead of re-solving (fair_share.h, Resurrection), the
// reference re-solves every removal. Every transfer must arrive at the same picosecond, with the
// same final time, event count and link bytes. (Transfers arriving at one time may be told in
// another order: a resurrected flow's rate is reported after the re-solved ones.)
TEST_CASE("topology::NetworkModel: flows replaced by identical ones arrive exactly when a solver that re-solves every removal says") {
  for (const char* preset : {"dgx-h100", "8x-a100-pcie"}) {
    const topology::Topology topo = topology::build_cluster(topology::preset_cluster(preset, 3));
    const topology::Router router(topo);
    const int ranks = topo.gpu_count();
    for (std::uint64_t seed = 11; seed <= 14; ++seed) {
      CAPTURE(preset);
      CAPTURE(seed);
      std::uint64_t resurrected = 0;
      auto got = play<topology::NetworkModel>(topo, router, ranks, seed, nullptr, &resurrected, 4 * ranks);
      auto want = play<ReferenceNetwork>(topo, router, ranks, seed, nullptr, nullptr, 4 * ranks);
      CHECK(resurrected > 0);
      std::sort(got.arrivals.begin(), got.arrivals.end());
      std::sort(want.arrivals.begin(), want.arrivals.end());
      REQUIRE(got.arrivals.size() == want.arrivals.size());
      CHECK(got.arrivals == want.arrivals);
      CHECK(got.end_ps == want.end_ps);
      CHECK(got.events == want.events);
      CHECK(got.link_bytes == want.link_bytes);
    }
  }
}

namespace {

struct Arrivals final : topology::TransferListener {
  explicit Arrivals(sim::Simulator& s) : sim(s) {}
  void on_transfer_done(std::uint64_t tag) override { got.emplace_back(tag, sim.now().ps); }
  sim::Simulator& sim;
  std::vector<std::pair<std::uint64_t, std::int64_t>> got;
};

// Three transfers on one route, two of them `extra` bytes longer than the third (started first or
// last): when the short one ends, the long ones' rates rise, and for a fraction of a byte their
// new completion time rounds to the picosecond they had, while their batch (which holds both) is
// still the open one: each would have joined the batch holding its stale entry.
template <class Net>
std::vector<std::pair<std::uint64_t, std::int64_t>> play_pair(const topology::Topology& topo, const topology::Route& route,
                                                             double bytes, double extra, bool longer_first,
                                                             std::uint64_t* separated, std::uint64_t* events) {
  sim::Simulator sim;
  Net net(sim, topo);
  Arrivals arrivals(sim);
  for (int k = 0; k < 3; ++k) {
    const bool longer = longer_first ? k < 2 : k > 0;
    net.start(route, sim::Bytes{longer ? bytes + extra : bytes}, &arrivals, static_cast<std::uint64_t>(k), sim::SimTime{},
              sim::kUnlimited);
  }
  sim.run();
  *events = sim.events_processed();
  if constexpr (std::is_same_v<Net, topology::NetworkModel>) *separated = net.stats().stale_separated;
  return arrivals.got;
}

}  // namespace

TEST_CASE("topology::NetworkModel: a completion reposted to the batch holding its stale entry arrives when the plain model says") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("dgx-h100", 2));
  const topology::Router router(topo);
  const topology::Route route = router.route(0, 8);  // across the fabric
  std::uint64_t separated = 0;
  for (const double bytes : {1e5, 3.7e6, 1e9}) {
    for (int k = 0; k <= 800; ++k) {
      const double extra = 0.005 * (k / 2);
      const bool longer_first = k % 2 == 0;
      CAPTURE(bytes);
      CAPTURE(extra);
      CAPTURE(longer_first);
      std::uint64_t n = 0, events = 0, want_events = 0;
      const auto got = play_pair<topology::NetworkModel>(topo, route, bytes, extra, longer_first, &n, &events);
      const auto want = play_pair<ReferenceNetwork>(topo, route, bytes, extra, longer_first, nullptr, &want_events);
      REQUIRE(got.size() == 3);
      CHECK(got == want);
      CHECK(events == want_events);
      separated += n;
    }
  }
  CHECK(separated > 0);  // a completion was kept out of the batch holding its stale entry
}
