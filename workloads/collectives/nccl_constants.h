// The constants of NCCL's own cost model that clustersim uses for protocol effects, verbatim from
// NCCL v2.30.7 src/graph/tuning.cc (as tabulated in ../shared/reference/hardware.md §3.2).
//
// clustersim does not use NCCL's closed-form time; its bandwidth comes from simulating flows on the
// topology. It borrows from NCCL what a flow model cannot derive: the fixed per-collective launch
// cost (baseLat), the per-step software latency of each protocol over each link class (hwLat),
// and the protocol throughput ceilings (llMaxBws, perChMax*). All latencies in microseconds,
// bandwidths in GB/s (1e9 bytes/s), as in NCCL.
#pragma once

#include <algorithm>
#include <iterator>

#include "workloads/collectives/collective_types.h"
#include "workloads/collectives/nccl_release.h"

namespace clustersim::workloads::nccl {

enum class HwClass : int { NvLink = 0, Pci = 1, Net = 2 };
// NCCL's algorithm indices (src/include/plugin/nccl_tuner.h): Tree 0, Ring 1, CollNetDirect 2,
// CollNetChain 3, NVLS 4, NVLSTree 5, PAT 6. clustersim uses Tree, Ring, CollNetDirect (SHARP),
// NVLS and NVLSTree (NVLS inside each NVLink domain, a tree between the domains' NVLS heads over
// the NICs); the tables below keep NCCL's row order for those it has.
enum class NcclAlgo : int { Tree = 0, Ring = 1, CollNetDirect = 2, Nvls = 4, NvlsTree = 5 };

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
// Chunks a pipeline (chain, tree, in-network) streams at once over one connection. One channel is
// one thread block that copies its chunks in order, so a connection is FIFO: chunk c+1 starts when
// chunk c has landed. (Letting several chunks of one connection share the link at once would make
// them all land together at the end and undo the pipelining.)
inline constexpr int kPipelineInFlight = 2;
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

// The in-network algorithms' rows of the same tables (tuning.cc, Simple only; LL/LL128 are 0 =
// not supported): baseLatencies CollNetDirect and NVLS are 0; hwLatencies NVLINK CollNetDirect 3.7,
// NVLS 25; NET CollNetDirect 31, NVLS 18. PCI rows are 0 (NVLS needs NVSwitch).
inline constexpr double kHwLatencyCollNetDirectUs[3] = {3.7, 0.0, 31.0};  // NVLINK, PCI, NET
inline constexpr double kHwLatencyNvlsUs[3] = {25.0, 0.0, 18.0};
// NVLSTree (tuning.cc v2.30.7): NVLINK 25, NET 20.9 (v2.28.7 and before: 14, NcclRelease::
// nvls_tree_net_latency_us; this row is the default release's); baseLat 0.
inline constexpr double kHwLatencyNvlsTreeUs[3] = {25.0, 0.0, 20.9};
// perChMaxTreeLL128Bws[compcap][N1/N2/N4] (tuning.cc).
inline constexpr double kPerChannelMaxTreeLl128GBps[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
// treeCorrectionFactor[proto][log2(nBytes/64)] (tuning.cc ~line 623): Tree all-reduce bandwidth
// multiplier by size, 64 B .. 256 MiB.
inline constexpr double kTreeCorrectionFactor[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
// Topology-search speeds per channel (src/graph/search.cc), GB/s, highest first.
inline constexpr double kSpeedArrayIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
inline constexpr double kSpeedArrayInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                              7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr double kSm90SpeedArrayIntra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
inline constexpr double kSm90SpeedArrayInter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                  15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr double kSm100SpeedArrayIntra[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
inline constexpr double kSm100SpeedArrayInter[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                                   20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// MAXCHANNELS (src/include/device.h). The NVLS channel counts (NVLS_NCHANNELS_SM90 / SM100 /
// SM100_NVL, src/transport/nvls.cc) changed between releases: nccl_release.h, nvls_channels().
inline constexpr int kMaxChannels = 64;
// NCCL_MAX_NVLS_ARITY (src/include/device.h): at most 32 NVLS heads. Each head reduces (multimem
// ld_reduce) and multicasts 1/nHeads of every loop; with 72 GPUs in an NVL72 rack, 32 of them are
// heads and carry their 1/32 share on top of their own data.
inline constexpr int kMaxNvlsArity = 32;
// NCCL_NVLS_CHUNKSIZE default (src/transport/nvls.cc): 128 KiB per head per channel and loop.
inline constexpr double kNvlsChunkBytes = 128.0 * 1024.0;
// perChMaxNVLSTreeBws[compcap][N1/N2/N4] (tuning.cc): NVLSTree per-channel ceiling.
inline constexpr double kPerChannelMaxNvlsTreeGBps[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
// Channel/thread tuning after selection (src/enqueue.cc): while nBytes < nc*nt*threshold, drop a
// channel, then halve the threads. Thresholds in bytes per thread (NCCL_LL_THREAD_THRESHOLD 8,
// NCCL_LL128_THREAD_THRESHOLD 8, NCCL_SIMPLE_THREAD_THRESHOLD 64; Ring/LL is multiplied by nRanks).
inline constexpr int kThreadThreshold[3] = {8, 8, 64};
// Threads per channel (NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
// NCCL_SIMPLE_MAX_NTHREADS 512, + one warp for Simple rings; trees always NCCL_MAX_NTHREADS 640).
inline constexpr int kMaxThreads[3] = {512, 640, 512};
inline constexpr int kWarpSize = 32;
inline constexpr int kTreeThreads = 640;
// Per-step network overhead charged on inter-node ring steps (tuning.cc; NCCL_NET_OVERHEAD):
// Intel 1.0 us, AMD 2.0 us, x3 for Simple.
inline constexpr double kNetOverheadIntelUs = 1.0;
inline constexpr double kNetOverheadAmdUs = 2.0;
// Ring/Simple plateau latency multiplier for Volta (tuning.cc: minCompCap < 80 ? 1.9 : 1.4).
inline constexpr double kRingSimpleMultiNodeLatencyFactorVolta = 1.9;

inline double base_latency_us(NcclAlgo a, Protocol p) {
  if (a == NcclAlgo::Nvls || a == NcclAlgo::NvlsTree || a == NcclAlgo::CollNetDirect) return 0.0;
  return kBaseLatencyUs[static_cast<int>(a)][static_cast<int>(p)];
}
inline double hw_latency_us(HwClass h, NcclAlgo a, Protocol p, const NcclRelease& release = default_release()) {
  if (a == NcclAlgo::Nvls) return p == Protocol::Simple ? kHwLatencyNvlsUs[static_cast<int>(h)] : 0.0;
  if (a == NcclAlgo::NvlsTree) {
    if (p != Protocol::Simple) return 0.0;
    return h == HwClass::Net ? release.nvls_tree_net_latency_us : kHwLatencyNvlsTreeUs[static_cast<int>(h)];
  }
  if (a == NcclAlgo::CollNetDirect) return p == Protocol::Simple ? kHwLatencyCollNetDirectUs[static_cast<int>(h)] : 0.0;
  return kHwLatencyUs[static_cast<int>(h)][static_cast<int>(a)][static_cast<int>(p)];
}

// NCCL's NVLS chunk for an all-reduce of `bytes` (src/enqueue.cc, computeCollChunkInfo, v2.26 and
// v2.30): start from NCCL_NVLS_CHUNKSIZE (32 KiB across nodes when the NVLS bandwidth is
// < 150 GB/s: not the case on Hopper/Blackwell), then with concurrentOps = channels x heads
// drop to 64 KiB below 64 x concurrentOps x chunk, 32 KiB below 8 x, 16 KiB below 2 x.
inline double nvls_chunk_bytes(double bytes, int channels, int heads) {
  const double ops = static_cast<double>(channels) * heads;
  double chunk = kNvlsChunkBytes;
  if (bytes < 64 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 8 * ops * chunk && chunk > 32768) chunk = 32768;
  if (bytes < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  return chunk;
}
// The channel speed of NCCL's NVLS graph (src/graph/search.cc v2.30.7, ncclTopoCompute and
// ncclTopoSearchTryNvls): each NVLS channel is one head and takes its speed `bwIntra` on every GPU's
// NVLink to the switch (twice on its own head's), and inside one NVLink domain the search must keep
// all min(GPUs, NCCL_MAX_NVLS_ARITY) heads ("pull evenly from all GPUs"). The speed is thus the
// fastest entry of the intra speed array with (heads + 1) x speed <= the GPU's NVLink bandwidth
// (GB/s per direction): 8 B200s 80 (9 x 80 = 720 of 721.8), a 72-GPU NVL72 rack 20 (33 x 20 = 660;
// 24 would need 792), 8 H100s 40. 0 when no entry fits.
inline double nvls_channel_speed_GBps(int cc_row, int heads, double gpu_nvlink_GBps) {
  const double* first = cc_row >= 3 ? std::begin(kSm100SpeedArrayIntra) : std::begin(kSm90SpeedArrayIntra);
  const double* last = cc_row >= 3 ? std::end(kSm100SpeedArrayIntra) : std::end(kSm90SpeedArrayIntra);
  for (const double* s = first; s != last; ++s) {
    if ((heads + 1) * *s <= gpu_nvlink_GBps + 1e-9) return *s;
  }
  return 0.0;
}
// The rate of an NVLS all-reduce on an NVLink domain of more GPUs than NCCL_MAX_NVLS_ARITY, as the
// fraction of the GPU's NVLink bandwidth that the replay's payload moves at (its GPUs carry
// (1 + 1/heads) of the payload each way, in_network_collective.h): NCCL's own cost model (tuning.cc
// v2.30.7: per channel bwIntra x nvlsEfficiency x (nCh - 1) / nCh x 2, busBw = nCh x that with
// nCh = heads, algBw = busBw x n / (2 (n - 1))) at the NVLS graph's speed. On a 72-GPU NVL72 rack
// the 32 heads' speed of 20 GB/s gives busBw 917.6 GB/s, 0.90 of nvlsEfficiency (measured 835-847
// at 4-8 GiB, CoreWeave, NCCL 2.26.2). Where every GPU is a head (domain_gpus <= heads) it is
// nvlsEfficiency: there the measured rates follow it and not the speed (8 H100: 482 GB/s busBw
// measured, 476 either way; 4 H100: 367 measured, where the speed of 60 would give 306; 8 B200 /
// B300: 830 / 845, NVIDIA/nccl#1807, #2140).
inline double nvls_wire_efficiency(int cc_row, int heads, int domain_gpus, int ranks, double gpu_nvlink_GBps) {
  const double e = kNvlsEfficiency[cc_row];
  const double speed = nvls_channel_speed_GBps(cc_row, heads, gpu_nvlink_GBps);
  if (domain_gpus <= heads || heads < 2 || ranks < 2 || speed <= 0.0 || gpu_nvlink_GBps <= 0.0) return e;
  const double h = heads, n = ranks;
  const double bus_GBps = h * 2.0 * speed * e * (h - 1.0) / h;
  const double alg_GBps = bus_GBps * n / (2.0 * (n - 1.0));
  return std::min(e, alg_GBps * (1.0 + 1.0 / h) / gpu_nvlink_GBps);
}
// NVLSTree's chunk (same function): 128 KiB, capped at 64 KiB on 4+ nodes
// (NCCL_NVLSTREE_MAX_CHUNKSIZE default), then 64 KiB below 4 x concurrentOps x chunk and 32 KiB
// below 1 x.
inline double nvls_tree_chunk_bytes(double bytes, int channels, int heads, int nodes) {
  const double ops = static_cast<double>(channels) * heads;
  double chunk = nodes >= 4 ? 65536.0 : kNvlsChunkBytes;
  if (bytes < 4 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 1 * ops * chunk && chunk > 32768) chunk = 32768;
  return chunk;
}

}  // namespace clustersim::workloads::nccl
