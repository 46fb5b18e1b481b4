// `clustersim validate --collectives`: the collective model against measured nccl-tests (and one
// torch.distributed) bandwidths, analysis/validation/data/collectives.csv (a copy of
// shared/reference/collectives.csv; measured values and source columns never edited).
//
// Each usable row is simulated on the node preset its system maps to, with the row's GPU and node
// count and operation, and `--algo auto`: what NCCL's tuner would pick (nccl_tuner.h), because
// the logs rarely say which algorithm ran. Predicted busbw is compared with the row's busbw; rows
// whose logged busbw rounds to 0.00 use bytes / time_us x nccl-tests' factor instead (same row,
// more digits). Rows group by system x operation x size band (< 1 MiB, 1-64 MiB, >= 64 MiB) and
// each group gets a MAPE. Targets: <= 10 % for >= 64 MiB, <= 20 % for 1-64 MiB, none below 1 MiB
// (latency-dominated sizes are printed, not targeted). Rows that cannot be mapped are listed as
// skipped with the reason.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "workloads/collectives/host_launch.h"

namespace clustersim::analysis {

struct CollectiveValidationRow {
  int line = 0;                 // line in the CSV (1 = header)
  std::string source;
  std::string system;           // the CSV's system column
  std::string system_label;     // short: "hgx-h100-8x x1, 8 GPUs"
  std::string collective;       // the CSV's name: all_reduce, ...
  int gpus = 0, nodes = 0;
  double bytes = 0;
  double measured_time_us = 0;
  double measured_busbw = 0;    // GB/s
  bool simulated = false;
  std::string skip_reason;
  double predicted_time_us = 0;
  double predicted_busbw = 0;   // GB/s
  std::string algo, protocol;   // what ran
  std::string notes;            // the CSV's notes column (how the log was taken)
  std::string launch;           // how the benchmark issued it: "-g 8", "torch per call", "" (one GPU per process)
  double device_time_us = 0;    // the replay alone, before the host's share (host_launch.h)
  std::string band;             // "<1MiB" | "1-64MiB" | ">=64MiB"
  std::string nccl_stated;      // the CSV's nccl_version column: the release the source states, "" if none
  std::string nccl_rules;       // the release whose rules replayed the row (nccl_release.h)
  std::string nccl_label() const;  // "2.25.1", "2.27.7 as 2.27.3", "" when unstated (default rules)
  double error_pct() const;     // (predicted - measured) / measured * 100
};

struct CollectiveValidationGroup {
  std::string system_label, collective, band;
  int rows = 0;
  double mape_pct = 0;
  double target_pct = 0;        // 0: no target for this band
  bool meets() const { return target_pct <= 0 || mape_pct <= target_pct; }
};

struct CollectiveValidation {
  std::vector<CollectiveValidationRow> rows;      // every CSV row, simulated or skipped
  std::vector<CollectiveValidationGroup> groups;  // first-seen order
  double wall_s = 0;
  std::string data_file = "collectives.csv";  // the CSV's file name, for the report's title
};

// Reads `csv_path` (default: CLUSTERSIM_DATA_DIR/collectives.csv) and simulates every usable row,
// each with the NCCL release its nccl_version column states (nccl_release.h: the nearest earlier
// entry of the table for a release between two, the oldest for one older than all, the default
// v2.30.7 when the column is empty or absent).
// Throws std::runtime_error when the file cannot be read.
CollectiveValidation run_collective_validation(const std::string& csv_path = {});
// The bundled data: collectives.csv (A100/H100/H200 nodes) and collectives_gb200.csv (CoreWeave's
// GB200 NVL72 all-reduce table, 1, 2 and 20 racks; the nodes column counts racks), a file of its own
// because its 144-GPU rows take minutes to replay.
std::string default_collectives_csv();
std::string gb200_collectives_csv();
std::string collective_validation_text(const CollectiveValidation& v);
std::string collective_validation_json(const CollectiveValidation& v);

// How the row's benchmark issued and timed the collective, from its notes: nccl-tests' `-g N`
// (one thread issuing N GPUs), torch.distributed (CUDA events around each call, one process per
// GPU), else one GPU per process, pipelined iterations (nccl-tests' default under MPI).
workloads::HostLaunch benchmark_host_launch(const std::string& notes);

// MAPE targets per band (percent; 0 = none).
double collective_target_pct(const std::string& band);
std::string collective_size_band(double bytes);

// The skip reason of a row whose replay ran past the validation budget: what NCCL's tuner picks,
// the size for people to read ("16 GiB"), why it stopped, and the command that simulates it with
// the size as -b/-e parse it ("-b 16G -e 16G").
std::string collective_budget_skip_reason(std::string_view algo, std::string_view protocol, std::string_view why,
                                          std::string_view preset, int nodes, double bytes);

}  // namespace clustersim::analysis
