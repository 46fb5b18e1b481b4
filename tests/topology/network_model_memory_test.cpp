// The network model's memory per flow (network_model.h): a long transfer whose rate changes many
// times (short transfers come and go on its link, one after the other) must not keep one stale
// completion entry per change; its superseded batches give their entries back at once. The event
// count is still that of one event per posted entry, and the long transfer still arrives when the
// rates say.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "sim/simulator.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/network_model.h"
#include "topology/routing.h"

using namespace clustersim;

namespace {

// Starts `shorts` short transfers one after the other on the long transfer's route, recording the
// most batch entries the model holds at any arrival.
struct Chain final : topology::TransferListener {
  Chain(topology::NetworkModel& n, const topology::Route& r, int count) : net(n), route(r), shorts(count) {}
  void on_transfer_done(std::uint64_t tag) override {
    most_held = std::max(most_held, net.held_entries());
    if (tag == kLong) {
      long_done = true;
      return;
    }
    if (shorts-- > 0) net.start(route, sim::Bytes{1e5}, this, 1);
  }
  static constexpr std::uint64_t kLong = 0;
  topology::NetworkModel& net;
  topology::Route route;
  int shorts;
  std::size_t most_held = 0;
  bool long_done = false;
};

}  // namespace

TEST_CASE("topology::NetworkModel: a flow whose rate changes k times does not hold k stale completion entries") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("dgx-h100", 2));
  const topology::Router router(topo);
  const topology::Route route = router.route(0, 8);  // across the fabric
  REQUIRE(route.hops > 0);
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  constexpr int kShorts = 200;
  Chain chain(net, route, kShorts);
  net.start(route, sim::Bytes{1e12}, &chain, Chain::kLong);  // long enough to outlast every short one
  net.start(route, sim::Bytes{1e5}, &chain, 1);
  sim.run();
  CHECK(chain.long_done);
  CHECK(chain.shorts < 0);  // every short transfer ran while the long one streamed
  // Each short transfer changes the long one's rate twice (when it starts and when it ends).
  CHECK(net.stats().rate_updates >= 2 * kShorts);
  CHECK(chain.most_held <= 4);
}
