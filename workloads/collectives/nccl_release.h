// The rules of NCCL that changed between the releases clustersim knows, one entry per release
// (the CLI's `collective --nccl-version`, the validation rows' stated NCCL): a measurement made
// with NCCL 2.25.1 is replayed with what 2.25.1 launches, not with what the newest release would.
// Every field is read from NCCL's source at the release's tag (the table in nccl_release.cpp
// cites file and tag). The default is v2.30.7, the release the rest of clustersim's NCCL constants
// (nccl_constants.h) follow. Rules checked at every listed tag and found unchanged are not here:
// NCCL_NVLS_CHUNKSIZE 128 KiB and the NVLS all-reduce chunk steps (src/enqueue.cc: 64 KiB below
// 64 x channels x heads x chunk, 32 KiB below 8 x, 16 KiB below 2 x; nccl::nvls_chunk_bytes),
// NCCL_MAX_NVLS_ARITY 32, NVLS_NCHANNELS_SM90 16, the NVLS NVLINK latency 25 us and NET 18 us.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace clustersim::workloads::nccl {

struct NcclRelease {
  const char* version = "2.30.7";  // major.minor.patch, as NCCL_VERSION_CODE prints it
  int major = 2, minor = 30, patch = 7;
  // NVLS channels (src/transport/nvls.cc): Hopper; Blackwell inside one NVLink domain; Blackwell
  // when the communicator spans nodes.
  int nvls_channels_sm90 = 16;
  int nvls_channels_sm100_one_node = 24;
  int nvls_channels_sm100_multi_node = 32;
  // hwLatencies[NET][NVLSTree][Simple] (src/graph/tuning.cc), us: 14 until v2.28.7, 20.9 from v2.28.9.
  double nvls_tree_net_latency_us = 20.9;
  // NCCL's NVLS bandwidth formula (src/graph/tuning.cc). true (2.28+): per channel bwIntra x
  // nvlsEfficiency x (nCh - 1) / nCh (x 2 for all-reduce), algBw = busBw x nRanks / nsteps.
  // false (to 2.27): per channel min(bwIntra, bwInter), algBw = busBw x 5 / 6.
  bool nvls_efficiency_model = true;
};

// The releases known, oldest first.
std::span<const NcclRelease> known_releases();
// v2.30.7, what every output without a release follows.
const NcclRelease& default_release();
// The entry that a version string names: "2.25", "2.25.1", "2.25.1-1" or "v2.25.1-1". A release
// between two entries gets the nearest earlier one (2.26.6 -> 2.26.2; "2.28" alone the latest 2.28
// entry; `exact` says whether it was
// one of the table), one newer than all the newest. nullptr when the string is no version or the
// release is older than every entry.
const NcclRelease* find_release(std::string_view version, bool* exact = nullptr);
// "2.24.3, 2.25.1, ..." for messages.
std::string known_release_list();
// The NVLS channels of a release for a GPU generation (nccl_constants.h compcap_row) and node count.
int nvls_channels(const NcclRelease& r, int cc_row, int nodes);

}  // namespace clustersim::workloads::nccl
