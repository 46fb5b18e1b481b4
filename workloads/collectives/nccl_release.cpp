// NCCL's per-release rules (see nccl_release.h). Each entry was read at the tag named in its
// comment from github.com/NVIDIA/nccl:
//  - NVLS channels: src/transport/nvls.cc. v2.24.3-1: NCCL_PARAM(NvlsChannels, "NVLS_NCHANNELS",
//    16) for every GPU. v2.25.1-1 and v2.26.2-1: NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100 32
//    (compCap >= 100), on one node and across nodes alike. v2.27.3-1 to v2.30.7-1: adds
//    NVLS_NCHANNELS_SM100_NVL 24, taken when the communicator is on one node (multiNode ? SM100 :
//    SM100_NVL). v2.30.3-1 also adds ncclNvlsTreeSm100Tuning (multi-node SM100 channels and
//    NVLSTree chunk by NIC speed and ppn); not modelled in any entry (clustersim's default replay
//    predates it), see docs/model.md.
//  - NVLSTree NET latency: src/graph/tuning.cc hwLat[NCCL_HW_NET] NVLSTree Simple: 14 at
//    v2.24.3-1 .. v2.28.7-1, 20.9 from v2.28.9-1 on.
//  Every patch tag between two entries (v2.26.3/5/6, v2.27.5/6/7, v2.28.7, v2.29.3/7, v2.30.3/4)
//  was checked and has its entry's values for these rules.
//  - NVLS bandwidth: src/graph/tuning.cc. v2.24.3-1 .. v2.27.3-1: bw = min(bwIntra, bwInter)
//    (NVLSTree: bwInter / 2 beyond 2 nodes), busBw = nChannels x bw, NVLS/NVLSTree ratio 5.0/6.0.
//    v2.28.3-1 on: nvlsEfficiency[compCap] x (nChannels - 1) / nChannels, and NVLS/NVLSTree convert
//    with the ring's nRanks / nsteps.
#include "workloads/collectives/nccl_release.h"

#include <charconv>
#include <iterator>

namespace clustersim::workloads::nccl {
namespace {

constexpr NcclRelease kReleases[] = {
    // version   maj min pat  sm90 sm100 1node, multi  NVLSTree NET  efficiency model
    {"2.24.3", 2, 24, 3, 16, 16, 16, 14.0, false},  // v2.24.3-1
    {"2.25.1", 2, 25, 1, 16, 32, 32, 14.0, false},  // v2.25.1-1
    {"2.26.2", 2, 26, 2, 16, 32, 32, 14.0, false},  // v2.26.2-1
    {"2.27.3", 2, 27, 3, 16, 24, 32, 14.0, false},  // v2.27.3-1
    {"2.28.3", 2, 28, 3, 16, 24, 32, 14.0, true},   // v2.28.3-1 (v2.28.7-1 alike)
    {"2.28.9", 2, 28, 9, 16, 24, 32, 20.9, true},   // v2.28.9-1
    {"2.29.2", 2, 29, 2, 16, 24, 32, 20.9, true},   // v2.29.2-1
    {"2.30.7", 2, 30, 7, 16, 24, 32, 20.9, true},   // v2.30.7-1
};

// Parses "v2.25.1-1", "2.25.1" or "2.25" into major, minor, patch (-1 when absent).
bool parse_version(std::string_view s, int& major, int& minor, int& patch) {
  if (!s.empty() && (s.front() == 'v' || s.front() == 'V')) s.remove_prefix(1);
  if (const auto dash = s.find('-'); dash != std::string_view::npos) s = s.substr(0, dash);
  int parts[3] = {-1, -1, -1};
  int n = 0;
  while (!s.empty() && n < 3) {
    const auto dot = s.find('.');
    const std::string_view part = s.substr(0, dot);
    int v = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 0) return false;
    parts[n++] = v;
    if (dot == std::string_view::npos) {
      s = {};
    } else {
      s.remove_prefix(dot + 1);
      if (s.empty()) return false;
    }
  }
  if (!s.empty() || n < 2) return false;
  major = parts[0];
  minor = parts[1];
  patch = parts[2];
  return true;
}

}  // namespace

std::span<const NcclRelease> known_releases() { return kReleases; }

const NcclRelease& default_release() { return kReleases[std::size(kReleases) - 1]; }

const NcclRelease* find_release(std::string_view version, bool* exact) {
  int major = 0, minor = 0, patch = 0;
  if (!parse_version(version, major, minor, patch)) return nullptr;
  const NcclRelease* best = nullptr;
  bool same = false;
  for (const NcclRelease& r : kReleases) {
    const bool is_same = r.major == major && r.minor == minor && (patch < 0 || r.patch == patch);
    const bool earlier = r.major < major || (r.major == major && r.minor < minor) ||
                         (r.major == major && r.minor == minor && (patch < 0 || r.patch <= patch));
    if (is_same || earlier) {
      best = &r;
      same = is_same;
    }
  }
  if (exact != nullptr) *exact = same;
  return best;
}

std::string known_release_list() {
  std::string out;
  for (const NcclRelease& r : kReleases) out += (out.empty() ? "" : ", ") + std::string(r.version);
  return out;
}

int nvls_channels(const NcclRelease& r, int cc_row, int nodes) {
  if (cc_row >= 3) return nodes > 1 ? r.nvls_channels_sm100_multi_node : r.nvls_channels_sm100_one_node;
  return r.nvls_channels_sm90;
}

}  // namespace clustersim::workloads::nccl
