// Waiting transfers whose listener builds the route again (NetworkModel::start_rebuilt): an
// all-to-all among the 16 GPUs of two DGX H100 (NVLink and fabric routes, capped and uncapped,
// with and without extra latency) lands at the same times, in the same order and with the same
// link bytes as with start(), while its waiting records keep no links (6 words each, 8 capped,
// where start() keeps 6 (8) + 1 per hop). start_regenerated (the listener gives bytes and cap
// again too) lands the same and keeps no record at all, but for tags at or above its limit.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <memory>
#include <tuple>
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
    route = router.route(src_of(tag), dst_of(tag), pair_tag(tag));
  }
  void transfer_of(std::uint64_t tag, topology::Route& route, double& bytes, double& cap) const override {
    ++regenerated;
    route = router.route(src_of(tag), dst_of(tag), pair_tag(tag));
    bytes = bytes_of(src_of(tag), dst_of(tag)).value;
    cap = cap_of(src_of(tag), dst_of(tag));
  }
  // Tags at or above kFar stand for tag - kFar (start_regenerated keeps a record for them).
  static constexpr std::uint64_t kFar = topology::NetworkModel::kRegeneratedTagLimit;
  static std::uint64_t pair_tag(std::uint64_t tag) { return tag >= kFar ? tag - kFar : tag; }
  static int src_of(std::uint64_t tag) { return static_cast<int>(pair_tag(tag) / kGpus); }
  static int dst_of(std::uint64_t tag) { return static_cast<int>(pair_tag(tag) % kGpus); }
  static sim::Bytes bytes_of(int src, int dst) { return sim::Bytes{1e6 * (1 + (src * 7 + dst) % 5)}; }
  static double cap_of(int src, int dst) { return (src + dst) % 3 == 0 ? 20e9 : sim::kUnlimited; }
  sim::Simulator& sim;
  const topology::Router& router;
  std::vector<std::pair<std::uint64_t, std::int64_t>> done;  // tag, landing time (ps)
  mutable int rebuilt = 0;
  mutable int regenerated = 0;
};

struct Run {
  std::vector<std::pair<std::uint64_t, std::int64_t>> done;
  std::vector<double> link_bytes;
  std::size_t waiting_words = 0;  // the pending pool's words once every transfer waits
  int rebuilt = 0;
  int regenerated = 0;
  std::uint64_t events = 0;
};

enum class Mode { kStart, kRebuilt, kRegenerated };

// `far`: every other transfer's tag is at or above start_regenerated's limit. `count_bytes`: link
// byte counts kept (count_link_bytes; without, no transfer keeps its bytes and none are reported).
Run run(const topology::Topology& topo, Mode mode, bool far = false, bool count_bytes = true) {
  const topology::Router router(topo);
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  if (count_bytes) net.count_link_bytes();
  AllToAll listener(sim, router);
  for (int src = 0; src < kGpus; ++src) {
    for (int dst = 0; dst < kGpus; ++dst) {
      if (src == dst) continue;
      const std::uint64_t pair = static_cast<std::uint64_t>(src * kGpus + dst);
      const std::uint64_t tag = far && pair % 2 == 1 ? pair + AllToAll::kFar : pair;
      const topology::Route route = router.route(src, dst, pair);
      const double cap = AllToAll::cap_of(src, dst);
      const sim::SimTime extra = sim::SimTime::from_us((src % 4) * 0.5);
      const sim::Bytes bytes = AllToAll::bytes_of(src, dst);
      if (mode == Mode::kRegenerated) {
        net.start_regenerated(route, bytes, &listener, tag, extra, cap);
      } else if (mode == Mode::kRebuilt) {
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
  for (auto& [tag, at] : r.done) tag = AllToAll::pair_tag(tag);
  if (count_bytes) {
    for (topology::LinkId l = 0; l < topo.link_count(); ++l) r.link_bytes.push_back(net.link_bytes(l));
  }
  r.rebuilt = listener.rebuilt;
  r.regenerated = listener.regenerated;
  r.events = sim.events_processed();
  return r;
}

}  // namespace

TEST_CASE("topology::NetworkModel: start_rebuilt lands as start() does and keeps no links while waiting") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("dgx-h100", 2));
  const Run kept = run(topo, Mode::kStart);
  const Run rebuilt = run(topo, Mode::kRebuilt);
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

namespace {

bool same_link_bytes(const Run& a, const Run& b) {
  if (a.link_bytes.size() != b.link_bytes.size()) return false;
  for (std::size_t l = 0; l < a.link_bytes.size(); ++l) {
    if (std::bit_cast<std::uint64_t>(a.link_bytes[l]) != std::bit_cast<std::uint64_t>(b.link_bytes[l])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("topology::NetworkModel: start_regenerated lands as start() does and keeps no record while waiting") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("dgx-h100", 2));
  const Run kept = run(topo, Mode::kStart);
  const Run regenerated = run(topo, Mode::kRegenerated);
  REQUIRE(kept.done.size() == static_cast<std::size_t>(kGpus * (kGpus - 1)));
  CHECK(regenerated.done == kept.done);
  CHECK(regenerated.events == kept.events);
  CHECK(same_link_bytes(regenerated, kept));
  CHECK(regenerated.rebuilt == 0);
  CHECK(regenerated.regenerated == kGpus * (kGpus - 1));
  CHECK(regenerated.waiting_words == 0);  // nothing but the batch entries

  // Tags at or above the limit fall back to start_rebuilt (a 6- or 8-word record each), landing the same.
  const Run far = run(topo, Mode::kRegenerated, true);
  CHECK(far.done == kept.done);
  CHECK(far.events == kept.events);
  CHECK(same_link_bytes(far, kept));
  CHECK(far.rebuilt + far.regenerated == kGpus * (kGpus - 1));
  CHECK(far.rebuilt > 0);
  CHECK(far.regenerated > 0);
  CHECK(far.waiting_words > 0);
}

namespace {

// One listener per transfer, all logging to one list: (tag, landing time, listener id).
struct Logged final : topology::TransferListener {
  Logged(sim::Simulator& s, std::vector<std::tuple<std::uint64_t, std::int64_t, int>>& l, int i) : sim(s), log(l), id(i) {}
  void on_transfer_done(std::uint64_t tag) override { log.emplace_back(tag, sim.now().ps, id); }
  sim::Simulator& sim;
  std::vector<std::tuple<std::uint64_t, std::int64_t, int>>& log;
  int id;
};

constexpr int kCopies = 3;  // transfers per GPU pair
// Transfer k of a pair: every third one with a tag at or above the slot limit, some with no bytes.
std::uint64_t copy_tag(std::uint64_t pair, int k) {
  return pair * kCopies + static_cast<std::uint64_t>(k) + (k == 2 ? topology::NetworkModel::kRegeneratedTagLimit : 0);
}

// The 16-GPU all-to-all three times over, started with start(), by one listener or by one
// listener per transfer (720: more than NetworkModel::kRegeneratedListeners slots).
std::vector<std::tuple<std::uint64_t, std::int64_t, int>> run_listeners(const topology::Topology& topo, bool many) {
  const topology::Router router(topo);
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  std::vector<std::tuple<std::uint64_t, std::int64_t, int>> log;
  std::vector<std::unique_ptr<Logged>> listeners;
  int i = 0;
  for (int src = 0; src < kGpus; ++src) {
    for (int dst = 0; dst < kGpus; ++dst) {
      if (src == dst) continue;
      const auto pair = static_cast<std::uint64_t>(src * kGpus + dst);
      for (int k = 0; k < kCopies; ++k, ++i) {
        if (many || listeners.empty()) listeners.push_back(std::make_unique<Logged>(sim, log, many ? i : 0));
        const sim::Bytes bytes = k == 1 && pair % 5 == 0 ? sim::Bytes{0} : AllToAll::bytes_of(src, dst);
        net.start(router.route(src, dst, pair), bytes, listeners.back().get(), copy_tag(pair, k),
                  sim::SimTime::from_us((src % 4) * 0.5), AllToAll::cap_of(src, dst));
      }
    }
  }
  sim.run();
  return log;
}

}  // namespace

TEST_CASE("topology::NetworkModel: a stream names its listener and tag through a slot or the side table") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("dgx-h100", 2));
  const auto one = run_listeners(topo, false);
  const auto many = run_listeners(topo, true);
  const std::size_t n = static_cast<std::size_t>(kGpus * (kGpus - 1) * kCopies);
  static_assert(kGpus * (kGpus - 1) * kCopies > static_cast<int>(topology::NetworkModel::kRegeneratedListeners));
  REQUIRE(one.size() == n);
  REQUIRE(many.size() == n);
  // Each transfer reached its own listener with its own tag, at the time and in the order it
  // lands with a single listener.
  std::vector<std::uint64_t> tag_of_listener;
  for (int src = 0; src < kGpus; ++src) {
    for (int dst = 0; dst < kGpus; ++dst) {
      if (src == dst) continue;
      for (int k = 0; k < kCopies; ++k) tag_of_listener.push_back(copy_tag(static_cast<std::uint64_t>(src * kGpus + dst), k));
    }
  }
  int right = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const auto& [tag, at, id] = many[j];
    right += tag_of_listener[static_cast<std::size_t>(id)] == tag && std::get<0>(one[j]) == tag && std::get<1>(one[j]) == at;
  }
  CHECK(right == static_cast<int>(n));
}

TEST_CASE("topology::NetworkModel: without link byte counts the transfers land at the same times and in the same order") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("dgx-h100", 2));
  for (const Mode mode : {Mode::kStart, Mode::kRebuilt, Mode::kRegenerated}) {
    const Run counted = run(topo, mode);
    const Run plain = run(topo, mode, false, false);
    REQUIRE(counted.done.size() == static_cast<std::size_t>(kGpus * (kGpus - 1)));
    CHECK(plain.done == counted.done);  // (tags and arrival times, in order)
    CHECK(plain.events == counted.events);
    CHECK(plain.link_bytes.empty());
    double sum = 0;
    for (const double b : counted.link_bytes) sum += b;
    CHECK(sum > 0);
  }
}
