// `clustersim run --dmon FILE`: the simulated iterations sampled like `dcgmi dmon -e FIELDS -d MS`
// prints them (DCGM >= 4.x layout, hardware.md section 4.2): a "#Entity" header with each field's
// short name left-aligned in 16 characters plus 2 of padding, an "ID" line (units: empty), the
// header again every 14 rows, rows "GPU <id>" with the GPU's index on its host (a cluster's rows
// name the host first, "node3 GPU 5"), integers for int64 fields and 3 decimals for doubles.
//
// One row per sample period and representative GPU: tensor rank 0 and data-parallel rank 0 of each
// pipeline rank (tensor- and data-parallel replicas run the same work and are folded onto it; a
// comment line before the first header says so). A sample covers [k d, (k+1) d) of the simulated
// iterations; the last one covers what is left and is averaged over that part only.
//
// How each field is estimated (docs/outputs.md has the details):
//   203 GPUTL  % of the period with the compute stream busy (passes incl. their blocking tensor-
//              parallel collectives, optimizer). Real GPUTL also counts NCCL kernels on other
//              streams, so it reads higher when data-parallel communication is exposed.
//   204 MCUTL  % of the period with device memory read or written: per compute span, the memory
//              side of its ops' rooflines (bytes / (HBM bandwidth x streaming efficiency), capped
//              by each op's time); the optimizer counts as memory-bound throughout.
//   1009/1010 PCITX/PCIRX, 1011/1012 NVLTX/NVLRX  bytes/s on the GPU's PCIe / NVLink links,
//              outgoing / incoming (link traffic: live flows, collectives spread over their spans).
//   1002 SMACT ratio 0-1: share of the period running compute kernels (the passes less their
//              blocking collectives, which hold few SMs; optimizer).
//   1004 TENSO ratio 0-1: share of the period the tensor pipes are active: the matmuls' FLOPs at
//              the sustained tensor peak (stage_costs' tensor_busy), spread over their passes.
//   1005 DRAMA ratio 0-1: the memory-busy time of MCUTL as a ratio.
//   155 POWER  W: TDP x (idle fraction + (1 - idle fraction) x busy share), run_report's model.
//   100 SMCLK  MHz: boost clock x the compute model's clock ratio while busy, boost clock idle.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/run_report.h"

namespace clustersim::analysis {

struct DmonField {
  int id;
  std::string_view short_name;  // the dmon column header
  bool is_double;               // printed with 3 decimals
};

// The fields `--dmon` can sample, in id order.
std::span<const DmonField> dmon_fields();

// "203,204,1011": throws std::invalid_argument naming the bad entry and listing the supported ids.
std::vector<int> parse_dmon_fields(std::string_view list);

struct DmonOptions {
  std::vector<int> fields{203, 204, 1011, 1012, 155};
  double period_ms = 1000;  // >= 1, as dcgmi requires
};

// The samples as text. Needs a report run with RunOptions::timeline set.
std::string dmon_text(const RunReport& r, const DmonOptions& options);

}  // namespace clustersim::analysis
