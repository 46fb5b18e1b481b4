// The DataLoader recurrence and the host-to-device copy flows (see input_feed.h).
#include "workloads/training/input_feed.h"

#include <algorithm>
#include <deque>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

enum Event : std::uint64_t { kLoaderReady = 1, kDecoded = 2, kCopiedWithoutRoute = 3 };

}  // namespace

// Breadth-first over PCIe links from the GPU to the nearest root complex, then the path reversed.
topology::Route host_to_gpu_route(const topology::Topology& topo, int gpu) {
  const topology::DeviceId start = topo.gpu(gpu);
  std::vector<topology::LinkId> via(topo.device_count(), ~topology::LinkId{0});
  std::vector<char> seen(topo.device_count(), 0);
  std::deque<topology::DeviceId> queue{start};
  seen[start] = 1;
  topology::Route route;
  while (!queue.empty()) {
    const topology::DeviceId d = queue.front();
    queue.pop_front();
    if (topo.device(d).kind == topology::DeviceKind::CpuRootComplex) {
      // Walk back to the GPU: each `via` link points away from the GPU, so its reverse points to it.
      for (topology::DeviceId at = d; at != start;) {
        const topology::LinkId up = via[at];
        if (route.hops == topology::kMaxHops) return topology::Route{};
        route.links[route.hops++] = topology::Topology::reverse(up);
        at = topo.link(up).src;
      }
      route.bottleneck = topo.link(route.links[0]).bandwidth;
      for (std::uint8_t h = 0; h < route.hops; ++h) {
        const topology::Link& l = topo.link(route.links[h]);
        route.latency = route.latency + l.latency;
        route.bottleneck = std::min(route.bottleneck, l.bandwidth);
      }
      return route;
    }
    for (topology::LinkId l : topo.out_links(d)) {
      const topology::Link& link = topo.link(l);
      if (link.kind != topology::LinkKind::Pcie || seen[link.dst]) continue;
      if (topo.device(link.dst).kind == topology::DeviceKind::Gpu) continue;  // not through another GPU
      seen[link.dst] = 1;
      via[link.dst] = l;
      queue.push_back(link.dst);
    }
  }
  return route;
}

InputFeedSpec input_feed_spec(const DataSpec& data, int micro_batch, const ComputeConstants& constants,
                              double pcie_bytes_per_s) {
  const double cpu_s = micro_batch * data.cpu_ms_per_sample * 1e-3;
  InputFeedSpec spec;
  spec.batch_cpu_s = cpu_s * (data.gpu_decode ? constants.get("gpu_decode_cpu_share") : 1.0);
  spec.workers = data.loader_workers;
  spec.queue = data.loader_workers * data.prefetch_factor;
  spec.batch_bytes = micro_batch * data.bytes_per_sample;
  spec.pcie_bytes_per_s = pcie_bytes_per_s;
  spec.copy_rate_cap = data.pinned_memory ? 0.0 : pcie_bytes_per_s * constants.get("pageable_h2d_ratio");
  spec.gpu_decode_s = data.gpu_decode ? cpu_s / constants.get("gpu_decode_speedup") : 0.0;
  return spec;
}

InputFeed::InputFeed(sim::Simulator& sim, topology::NetworkModel& net, topology::Route route, InputFeedSpec spec,
                     InputFeedListener* listener, std::uint64_t tag)
    : sim_(sim), net_(net), route_(route), spec_(spec), listener_(listener), tag_(tag) {}

double InputFeed::loader_ready_s(std::size_t j) const {
  const double t = spec_.batch_cpu_s;
  if (spec_.workers <= 0) return taken_s_[j] + t;
  const auto w = static_cast<std::size_t>(spec_.workers), q = static_cast<std::size_t>(spec_.queue);
  if (j < q) return 0.0;
  const double worker_free = j >= w ? ready_s_[j - w] : 0.0;
  return std::max(worker_free, taken_s_[j - q]) + t;
}

void InputFeed::request() {
  CLUSTERSIM_CHECK(state_ == State::Idle, "one batch in flight per data-loading rank");
  state_ = State::Waiting;
  requested_s_ = sim_.now().seconds();
  const std::size_t j = taken_s_.size();
  taken_s_.push_back(requested_s_);
  ready_s_.push_back(loader_ready_s(j));
  const double wait = ready_s_[j] - requested_s_;
  if (wait > 0) {
    sim_.schedule_in(sim::SimTime::from_seconds(wait), this, kLoaderReady);
    return;
  }
  start_copy(false);
}

void InputFeed::start_copy(bool notify) {
  copy_start_s_ = sim_.now().seconds();
  if (spec_.batch_bytes <= 0) {
    if (spec_.gpu_decode_s > 0) {
      sim_.schedule_in(sim::SimTime::from_seconds(spec_.gpu_decode_s), this, kDecoded);
      return;
    }
    ready(notify);
    return;
  }
  if (route_.hops == 0) {  // no root complex above the GPU in this topology: the copy's time only
    const double rate = spec_.copy_rate_cap > 0 ? std::min(spec_.copy_rate_cap, spec_.pcie_bytes_per_s)
                                                : spec_.pcie_bytes_per_s;
    CLUSTERSIM_CHECK(rate > 0, "a host-to-device copy needs a rate");
    sim_.schedule_in(sim::SimTime::from_seconds(spec_.batch_bytes / rate), this, kCopiedWithoutRoute);
    return;
  }
  net_.start(route_, sim::Bytes{spec_.batch_bytes}, this, tag_, sim::SimTime{},
             spec_.copy_rate_cap > 0 ? spec_.copy_rate_cap : sim::kUnlimited);
}

void InputFeed::on_transfer_done(std::uint64_t) {
  if (spec_.gpu_decode_s > 0) {
    sim_.schedule_in(sim::SimTime::from_seconds(spec_.gpu_decode_s), this, kDecoded);
    return;
  }
  ready(true);
}

// A batch ready inside request() is simply there; the listener hears only of later ones.
void InputFeed::ready(bool notify) {
  state_ = State::Ready;
  if (notify) listener_->on_input_ready(tag_);
}

void InputFeed::on_event(std::uint64_t tag) {
  switch (static_cast<Event>(tag)) {
    case kLoaderReady: start_copy(true); break;
    case kCopiedWithoutRoute: on_transfer_done(0); break;
    case kDecoded: ready(true); break;
    default: CLUSTERSIM_CHECK(false, "unknown input-feed event");
  }
}

double InputFeed::consume() {
  CLUSTERSIM_CHECK(state_ == State::Ready, "a pass consumes a batch that is on the GPU");
  state_ = State::Idle;
  return sim_.now().seconds() - requested_s_;
}

}  // namespace clustersim::workloads
