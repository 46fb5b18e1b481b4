// Binning link traffic on a time grid (see link_traffic.h).
#include "analysis/link_traffic.h"

#include <algorithm>
#include <cmath>

namespace clustersim::analysis {

std::string link_name(const topology::Topology& topo, topology::LinkId l) {
  const topology::Link& link = topo.link(l);
  return topo.device(link.src).name + " -> " + topo.device(link.dst).name;
}

namespace {

// Adds `bytes` spread evenly over [start, end) to the bins it overlaps.
void spread(std::vector<double>& bins, double bin_s, double start, double end, double bytes) {
  const int n = static_cast<int>(bins.size());
  const auto bin_of = [&](double t) { return std::clamp(static_cast<int>(std::floor(t / bin_s)), 0, n - 1); };
  const int first = bin_of(start), last = bin_of(end);
  if (end <= start || first == last) {
    bins[static_cast<std::size_t>(first)] += bytes;
    return;
  }
  const double rate = bytes / (end - start);
  for (int b = first; b <= last; ++b) {
    const double lo = b == first ? start : b * bin_s;
    const double hi = b == last ? end : (b + 1) * bin_s;
    bins[static_cast<std::size_t>(b)] += rate * std::max(0.0, hi - lo);
  }
}

}  // namespace

LinkTrafficGrid link_traffic_grid(const workloads::IterationResult& it, const topology::Topology& topo, double bin_s,
                                  int bins) {
  LinkTrafficGrid grid;
  grid.bin_s = bin_s;
  grid.bins = std::max(1, bins);
  grid.index.assign(topo.link_count(), -1);
  // Links in id order: collect the set first, so positions do not depend on record order.
  std::vector<char> used(topo.link_count(), 0);
  for (const auto& rec : it.link_traffic) {
    for (const auto& [l, w] : it.link_loads[static_cast<std::size_t>(rec.load)].links) used[l] = 1;
  }
  for (topology::LinkId l = 0; l < topo.link_count(); ++l) {
    if (!used[l]) continue;
    grid.index[l] = static_cast<int>(grid.links.size());
    LinkSeries s;
    s.link = l;
    s.name = link_name(topo, l);
    s.kind = topo.link(l).kind;
    s.capacity_Bps = topo.link(l).bandwidth.value;
    s.bytes.assign(static_cast<std::size_t>(grid.bins), 0.0);
    grid.links.push_back(std::move(s));
  }
  for (const auto& rec : it.link_traffic) {
    for (const auto& [l, w] : it.link_loads[static_cast<std::size_t>(rec.load)].links) {
      LinkSeries& s = grid.links[static_cast<std::size_t>(grid.index[l])];
      s.total_bytes += rec.bytes * w;
      spread(s.bytes, bin_s, rec.start_s, rec.end_s, rec.bytes * w);
    }
  }
  return grid;
}

}  // namespace clustersim::analysis
