// The what-if models on their own: fp16 dynamic loss scaling against a GradScaler sequence worked
// out by hand, and the input feed (DataLoader recurrence, host-to-device copies as engine flows
// that share the GPU's PCIe link with other traffic).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/simulator.h"
#include "topology/builders.h"
#include "topology/catalog.h"
#include "topology/network_model.h"
#include "workloads/training/input_feed.h"
#include "workloads/training/loss_scaling.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

// Gradients whose max |g| is always 0.5 (sigma 0): a scale overflows fp16 iff scale x 0.5 > 65504,
// so 2^16 is clean and 2^17 overflows.
AmpSpec fixed_gradients() {
  AmpSpec a;
  a.init_scale = 65536.0;
  a.growth_factor = 2.0;
  a.backoff_factor = 0.5;
  a.growth_interval = 3;
  a.grad_max_median = 0.5;
  a.grad_max_sigma = 0.0;
  return a;
}

struct Recorder final : InputFeedListener, topology::TransferListener {
  sim::Simulator* sim = nullptr;
  std::vector<double> ready_s, flow_done_s;
  void on_input_ready(std::uint64_t) override { ready_s.push_back(sim->now().seconds()); }
  void on_transfer_done(std::uint64_t) override { flow_done_s.push_back(sim->now().seconds()); }
};

}  // namespace

TEST_CASE("workloads::simulate_loss_scaling: follows GradScaler's sequence step by step") {
  // By hand, growth_interval 3: steps 0-2 at 2^16 are clean, the third clean step grows the scale
  // to 2^17; step 3 overflows (skipped, back off to 2^16); steps 4-6 clean, grow; step 7 skipped;
  // steps 8-10 clean and the last grows to 2^17. Nine updates take 11 steps.
  const LossScaleResult r = simulate_loss_scaling(fixed_gradients(), 9);
  CHECK(r.successful_steps == 9);
  CHECK(r.skipped_steps == 2);
  CHECK(r.total_steps() == 11);
  CHECK(r.backoffs == 2);
  CHECK(r.growths == 3);
  CHECK(r.first_skip_step == 3);
  CHECK(r.final_scale == 131072.0);
  // Scales over the 11 steps: 16,16,16,17,16,16,16,17,16,16,16 (log2): mean 178/11.
  CHECK(r.mean_log2_scale == doctest::Approx(178.0 / 11.0));
  CHECK(r.time_factor() == doctest::Approx(11.0 / 9.0));
}

TEST_CASE("workloads::simulate_loss_scaling: a static scale below the overflow never skips and never moves") {
  AmpSpec a = fixed_gradients();
  a.dynamic = false;
  a.init_scale = 1024.0;
  const LossScaleResult r = simulate_loss_scaling(a, 1000);
  CHECK(r.skipped_steps == 0);
  CHECK(r.growths == 0);
  CHECK(r.final_scale == 1024.0);
  CHECK(r.time_factor() == 1.0);
}

TEST_CASE("workloads::overflow_probability and underflow_fraction: one half at the median, monotone in the scale") {
  AmpSpec a;  // lognormal max|g| with median 0.05
  CHECK(overflow_probability(a, kFp16Max / a.grad_max_median) == doctest::Approx(0.5));
  CHECK(overflow_probability(a, 1024.0) < overflow_probability(a, 65536.0));
  CHECK(underflow_fraction(a, kFp16MinSubnormal / a.grad_median) == doctest::Approx(0.5));
  CHECK(underflow_fraction(a, 65536.0) < underflow_fraction(a, 1.0));
}

TEST_CASE("workloads::host_to_gpu_route: from the GPU's root complex down to the GPU over PCIe") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("2x-rtx4090-pcie4"));
  const topology::Route route = host_to_gpu_route(topo, 1);
  REQUIRE(route.hops > 0);
  CHECK(topo.device(topo.link(route.links[0]).src).kind == topology::DeviceKind::CpuRootComplex);
  CHECK(topo.link(route.links[route.hops - 1]).dst == topo.gpu(1));
  for (std::uint8_t h = 0; h < route.hops; ++h) CHECK(topo.link(route.links[h]).kind == topology::LinkKind::Pcie);
}

TEST_CASE("workloads::InputFeed: the copy is an engine flow that shares the GPU's PCIe link with other traffic") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("2x-rtx4090-pcie4"));
  const topology::Route route = host_to_gpu_route(topo, 0);
  const double bw = route.bottleneck.value, bytes = 1e9;
  InputFeedSpec spec;
  spec.batch_bytes = bytes;
  spec.pcie_bytes_per_s = bw;
  auto copy_time = [&](bool other_flow) {
    sim::Simulator sim;
    topology::NetworkModel net(sim, topo);
    Recorder rec;
    rec.sim = &sim;
    InputFeed feed(sim, net, route, spec, &rec, 7);
    feed.request();
    if (other_flow) net.start(route, sim::Bytes{bytes}, &rec, 1);  // e.g. a NIC's or a peer's data into the GPU
    sim.run();
    REQUIRE(rec.ready_s.size() == 1);
    CHECK(feed.state() == InputFeed::State::Ready);
    return rec.ready_s[0];
  };
  const double alone = copy_time(false), shared = copy_time(true);
  CHECK(alone == doctest::Approx(bytes / bw).epsilon(0.01));
  // Max-min fair share: two equal flows on one bottleneck take twice as long.
  CHECK(shared == doctest::Approx(2 * bytes / bw).epsilon(0.01));
}

TEST_CASE("workloads::InputFeed: pageable memory caps the copy, the loader's own time comes first") {
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("2x-rtx4090-pcie4"));
  const topology::Route route = host_to_gpu_route(topo, 0);
  const double bw = route.bottleneck.value, bytes = 1e8;
  InputFeedSpec spec;
  spec.batch_bytes = bytes;
  spec.pcie_bytes_per_s = bw;
  spec.copy_rate_cap = 0.5 * bw;
  spec.batch_cpu_s = 0.010;  // loader_workers = 0: the training loop makes the batch itself
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  Recorder rec;
  rec.sim = &sim;
  InputFeed feed(sim, net, route, spec, &rec, 0);
  feed.request();
  sim.run();
  REQUIRE(rec.ready_s.size() == 1);
  CHECK(rec.ready_s[0] == doctest::Approx(0.010 + bytes / (0.5 * bw)).epsilon(0.01));
  CHECK(feed.loader_wait_s() == doctest::Approx(0.010));
  CHECK(feed.consume() == doctest::Approx(rec.ready_s[0]));
}

TEST_CASE("workloads::InputFeed: with workers the loader follows DataLoader's round robin and queue") {
  // W = 2 workers, Q = 2 x 1 = 2, T = 10 ms per batch, no copy. Batches 0 and 1 are queued at the
  // start; batch 2's index goes out when batch 0 is taken (t = 0), so it is ready at 10 ms; batch
  // 3's when batch 1 is taken (t = 0), ready at 10 ms on the other worker; batch 4 on worker 0
  // after batch 2 (10 ms) and once batch 2 is taken (10 ms): 20 ms.
  const topology::Topology topo = topology::build_cluster(topology::preset_cluster("2x-rtx4090-pcie4"));
  InputFeedSpec spec;
  spec.batch_cpu_s = 0.010;
  spec.workers = 2;
  spec.queue = 2;
  sim::Simulator sim;
  topology::NetworkModel net(sim, topo);
  Recorder rec;
  rec.sim = &sim;
  InputFeed feed(sim, net, host_to_gpu_route(topo, 0), spec, &rec, 0);
  std::vector<double> got;
  for (int j = 0; j < 5; ++j) {
    feed.request();
    if (feed.state() != InputFeed::State::Ready) sim.run();
    got.push_back(sim.now().seconds());
    feed.consume();
  }
  CHECK(got[0] == 0.0);
  CHECK(got[1] == 0.0);
  CHECK(got[2] == doctest::Approx(0.010));
  CHECK(got[3] == doctest::Approx(0.010));
  CHECK(got[4] == doctest::Approx(0.020));
}
