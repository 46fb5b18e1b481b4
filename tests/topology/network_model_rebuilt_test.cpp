// Waiting transfers whose listener builds the route again (NetworkModel::start_rebuilt): an
// all-to-all among the 16 GPUs of two DGX H100 (NVLink and fabric routes, capped and uncapped,
// with and without extra latency) lands at the same times, in the same order and with the same
// link bytes as with start(), while its waiting records keep no links (6 words each, 8 capped,
// where start() keeps 6 (8) + 1 per hop).
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/simulator.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/network_model.h"
#include "topology/routing.h"

using namespace clustersim;

namespace {

constexpr int kGpus = 16;

// Tag = src * kGpus + dst; route_of builds the route from the tag.
struct AllToAll final : topology::TransferListener {
  AllToAll(sim::Simulator& s, const topology::Router& r) : sim(s), router(r) {}
  void on_transfer_done(std::uint64_t tag) override { done.emplace_back(tag, sim.now().ps); }
  void route_of(std::uint64_t tag, topology::Route& route) const override {
    ++rebuilt;
    route = router.route(static_cast<int>(tag / kGpus), static_cast<int>(tag % kGpus), tag);
  }
  sim::Simulator& sim;
  const topology::Router& router;
  std::vector<std::pair<std::uint64_t, std::int64_t>> done;  // tag, landing time (ps)
  mutable int rebuilt = 0;
};

struct Run {
  std::vector<std::pair<std::uint64_t, std::int64_t>> done;
  std::vector<double> link_bytes;
  std::size_t waiting_words = 0;  // the pending pool's words once every transfer waits
  int rebuilt = 0;
  std::uint64_t events = 0;
};

Run run(const topology::Topology& topo, bool rebuild) {
  const topology::Router router(topo);
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  AllToAll listener(sim, router);
  for (int src = 0; src < kGpus; ++src) {
    for (int dst = 0; dst < kGpus; ++dst) {
      if (src == dst) continue;
      const std::uint64_t tag = static_cast<std::uint64_t>(src * kGpus + dst);
      const topology::Route route = router.route(src, dst, tag);
      const double cap = (src + dst) % 3 == 0 ? 20e9 : sim::kUnlimited;
      const sim::SimTime extra = sim::SimTime::from_us((src % 4) * 0.5);
      const sim::Bytes bytes{1e6 * (1 + (src * 7 + dst) % 5)};
      if (rebuild) {
        net.start_rebuilt(route, bytes, &listener, tag, extra, cap);
      } else {
        net.start(route, bytes, &listener, tag, extra, cap);
      }
    }
  }
  Run r;
  r.waiting_words = net.pending_words();
  sim.run();
  r.done = listener.done;
  for (topology::LinkId l = 0; l < topo.link_count(); ++l) r.link_bytes.push_back(net.link_bytes(l));
  r.rebuilt = listener.rebuilt;
  r.events = sim.events_processed();
  return r;
}

}  // namespace

TEST_CASE("topology::NetworkModel: start_rebuilt lands as start() does and keeps no links while waiting") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("dgx-h100", 2));
  const Run kept = run(topo, false);
  const Run rebuilt = run(topo, true);
  REQUIRE(kept.done.size() == static_cast<std::size_t>(kGpus * (kGpus - 1)));
  CHECK(rebuilt.done == kept.done);
  CHECK(rebuilt.events == kept.events);
  bool same_bytes = rebuilt.link_bytes.size() == kept.link_bytes.size();
  for (std::size_t l = 0; same_bytes && l < kept.link_bytes.size(); ++l) {
    same_bytes = std::bit_cast<std::uint64_t>(rebuilt.link_bytes[l]) == std::bit_cast<std::uint64_t>(kept.link_bytes[l]);
  }
  CHECK(same_bytes);
  // Every transfer waited (each route has a latency) and had its route built again once.
  CHECK(kept.rebuilt == 0);
  CHECK(rebuilt.rebuilt == kGpus * (kGpus - 1));
  // 6 words per waiting transfer, 2 more when capped; start() adds one per hop.
  std::size_t records = 0, capped = 0, hops = 0;
  const topology::Router router(topo);
  for (int src = 0; src < kGpus; ++src) {
    for (int dst = 0; dst < kGpus; ++dst) {
      if (src == dst) continue;
      ++records;
      capped += (src + dst) % 3 == 0 ? 1 : 0;
      hops += router.route(src, dst, static_cast<std::uint64_t>(src * kGpus + dst)).hops;
    }
  }
  CHECK(rebuilt.waiting_words == 6 * records + 2 * capped);
  CHECK(kept.waiting_words == 6 * records + 2 * capped + hops);
}
