// The constants of NCCL's own cost model that clustersim uses for protocol effects, verbatim from
// NCCL v2.30.7 src/graph/tuning.cc (as tabulated in ../shared/reference/hardware.md §3.2).
//
// clustersim does not use NCCL's closed-form time; its bandwidth comes from simulating flows on the
// topology. It borrows from NCCL what a flow model cannot derive: the fixed per-collective launch
// cost (baseLat), the per-step software latency of each protocol over each link class (hwLat),
// and the protocol throughput ceilings (llMaxBws, perChMax*). All latencies in microseconds,
// bandwidths in GB/s (1e9 bytes/s), as in NCCL.
#pragma once

#include "workloads/collective_types.h"

namespace clustersim::workloads::nccl {

enum class HwClass : int { NvLink = 0, Pci = 1, Net = 2 };
enum class NcclAlgo : int { Tree = 0, Ring = 1 };

// baseLatencies[algo][proto] (tuning.cc): one-off cost of a collective launch.
inline constexpr double kBaseLatencyUs[2][3] = {
    {6.8, 14.0, 8.4},  // Tree  LL, LL128, Simple
    {6.6, 14.0, 8.4},  // Ring
};
// hwLatencies[hw][algo][proto] (tuning.cc): per-step latency.
inline constexpr double kHwLatencyUs[3][2][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},   // NVLINK: Tree, Ring
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},    // PCI
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}},  // NET
};
// llMaxBws[compcap row][N1/N2/N4] (tuning.cc): LL protocol ceiling on bus bandwidth.
inline constexpr double kLlMaxBwGBps[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
// perChMaxRingLL128Bws[compcap][N1/N2/N4]: LL128 per-channel ceiling.
inline constexpr double kPerChannelMaxRingLl128GBps[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
// perChMaxTreeBws[compcap][N1/N2/N4]: tree per-channel ceiling (Simple).
inline constexpr double kPerChannelMaxTreeGBps[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
// nvlsEfficiency[compcap]: NVLS (NVSwitch SHARP) bandwidth efficiency.
inline constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// NCCL_STEPS: buffer slots per connection, i.e. chunks a sender may have in flight.
inline constexpr int kSteps = 8;
// Ring/Simple "plateau" multiplier of the latency when nNodes > 1 (tuning.cc, sm80+: 1.4).
inline constexpr double kRingSimpleMultiNodeLatencyFactor = 1.4;

// Row of the tables above for a GPU compute capability (Volta 0, Ampere 1, Hopper 2, Blackwell 3).
inline int compcap_row(int compute_capability) {
  if (compute_capability >= 100 && compute_capability < 200) return 3;
  if (compute_capability >= 90) return 2;
  if (compute_capability >= 80) return 1;
  return 0;
}
// Column of the tables above for a node count (N1, N2, N4+).
inline int nodes_column(int nodes) { return nodes <= 1 ? 0 : (nodes == 2 ? 1 : 2); }

inline double base_latency_us(NcclAlgo a, Protocol p) { return kBaseLatencyUs[static_cast<int>(a)][static_cast<int>(p)]; }
inline double hw_latency_us(HwClass h, NcclAlgo a, Protocol p) {
  return kHwLatencyUs[static_cast<int>(h)][static_cast<int>(a)][static_cast<int>(p)];
}

}  // namespace clustersim::workloads::nccl
