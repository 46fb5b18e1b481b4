// NCCL's channel count for grouped send/recv (see p2p_channels.h for the rules and sources).
#include "workloads/collectives/p2p_channels.h"

#include <algorithm>
#include <cmath>

namespace clustersim::workloads {
namespace {
int pow2_up(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}
constexpr double kNvlStepBytes = 512.0 * 1024;  // NCCL_P2P_NVL_CHUNKSIZE default
constexpr double kNetStepBytes = 128.0 * 1024;  // NCCL_P2P_NET_CHUNKSIZE / NCCL_P2P_PCI_CHUNKSIZE
}  // namespace

P2pChannels nccl_p2p_channels(const NcclGraph& g, double peer_bytes) {
  P2pChannels c;
  const int ranks = std::max(1, g.ranks);
  c.p2p_channels = pow2_up(std::min(nccl::kMaxChannels, 2 * std::max(1, g.channels)));
  const bool nvlink = g.intra_hw == nccl::HwClass::NvLink && g.nvlink_lane_GBps > 0;
  int peer = nvlink ? 2 * std::max(1, static_cast<int>(std::floor(g.path_GBps / g.nvlink_lane_GBps + 1e-9))) : 2;
  if (g.nodes > 1) peer = std::min(peer, 2);  // network peers get 2 (one NIC per GPU)
  if (g.ppn < 2) peer = 2;
  c.per_peer = std::min(pow2_up(peer), c.p2p_channels);
  c.min_channels = c.per_peer;
  while (c.min_channels * ranks > c.p2p_channels && c.min_channels > 1) c.min_channels /= 2;
  c.max_channels = c.per_peer;
  while (c.max_channels * ranks > c.p2p_channels * 4 && c.max_channels > 1) c.max_channels /= 2;

  const double step = g.nodes == 1 && g.intra_hw == nccl::HwClass::NvLink ? kNvlStepBytes : kNetStepBytes;
  const double min_size = step / 8;
  const double max_size = g.nodes > 1 ? step : step * 32;
  const double bytes = std::max(0.0, peer_bytes);
  int n = c.min_channels;
  double size = std::max(min_size, std::ceil(bytes / n));
  while (size > max_size && n <= c.max_channels / 2) {
    n *= 2;
    size = std::ceil(bytes / n);
  }
  c.chunk_bytes = std::ceil(size / min_size) * min_size;  // alignUp(size, minSize)
  c.channels = std::max(1, std::min(n, static_cast<int>(std::ceil(bytes / c.chunk_bytes))));
  c.step_bytes = step;
  return c;
}

double p2p_drain_us(const P2pChannels& c, double lane_GBps) {
  if (lane_GBps <= 0) return 0;
  return std::min(c.chunk_bytes, c.step_bytes) / (lane_GBps * 1e3);  // bytes / (GB/s) -> µs
}

}  // namespace clustersim::workloads
