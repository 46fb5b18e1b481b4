// Max-flow with Boost.Graph's push-relabel on integer capacities (bytes per second, rounded down),
// so that the result is exact and independent of floating-point summation order.
#include "topology/bisection.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace clustersim::topology {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using Graph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, std::int64_t,
                    boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                    boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

class FlowGraph {
 public:
  explicit FlowGraph(std::size_t vertices) : g_(vertices) {}
  void add(std::size_t from, std::size_t to, std::int64_t capacity) {
    auto cap = boost::get(boost::edge_capacity, g_);
    auto rev = boost::get(boost::edge_reverse, g_);
    const auto e = boost::add_edge(from, to, g_).first;
    const auto back = boost::add_edge(to, from, g_).first;
    cap[e] = capacity;
    cap[back] = 0;
    rev[e] = back;
    rev[back] = e;
  }
  std::int64_t max_flow(std::size_t source, std::size_t sink) {
    return boost::push_relabel_max_flow(g_, source, sink);
  }

 private:
  Graph g_;
};

}  // namespace

double bisection_bandwidth_Bps(const Topology& topo, int gpus) {
  const int n = gpus <= 0 ? topo.gpu_count() : std::min(gpus, topo.gpu_count());
  if (n < 2) return 0.0;
  const std::size_t source = topo.device_count();
  const std::size_t sink = source + 1;
  FlowGraph g(topo.device_count() + 2);
  std::int64_t total = 0;
  for (const Link& link : topo.links()) {
    const auto cap = static_cast<std::int64_t>(link.bandwidth.value);
    g.add(link.src, link.dst, cap);
    total += cap;
  }
  const std::int64_t unbounded = total + 1;  // more than any cut
  for (int r = 0; r < n; ++r)
    g.add(r < n / 2 ? source : topo.gpu(r), r < n / 2 ? topo.gpu(r) : sink, unbounded);
  return static_cast<double>(g.max_flow(source, sink));
}

}  // namespace clustersim::topology
