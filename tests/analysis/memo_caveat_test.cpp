// run_text's caveat on the memo: memoised data-parallel reductions in flight for most of a
// multi-node pipeline's step share its NICs with the stages' sends, which the memo does not
// simulate (docs/model.md, "Memoised collectives"); the note says so, and only then.
#include <doctest/doctest.h>

#include <string>

#include "analysis/run_report.h"

using namespace clustersim;

namespace {

// A multi-node pipeline whose reductions are in flight for 60% of a 10 s step, memoised.
analysis::RunReport pipeline_with_reductions() {
  analysis::RunReport r;
  r.nodes = 4;
  r.gpus = 32;  // 8 a node, one stage a node: tp 8
  r.spec.parallel.tp = 8;
  r.spec.parallel.pp = 4;
  r.iteration.iteration_time_s = 10.0;
  r.iteration.pp_bytes_per_gpu = 1e9;
  r.iteration.breakdown.dp_exposed = 1.0;
  r.iteration.breakdown.dp_overlapped = 5.0;
  return r;
}

}  // namespace

TEST_CASE("analysis::memo_caveat_text: named where memoised reductions run beside a multi-node pipeline's sends") {
  analysis::RunReport r = pipeline_with_reductions();
  const std::string note = analysis::memo_caveat_text(r);
  CHECK(note.find("in flight for 60% of the step") != std::string::npos);
  CHECK(note.find("--full") != std::string::npos);
  // Not: under half the step.
  r.iteration.breakdown.dp_overlapped = 3.9;
  CHECK(analysis::memo_caveat_text(r).empty());
  // Not: run with --full (the reductions ran as flows).
  r = pipeline_with_reductions();
  r.iteration.live_positions = 8;
  CHECK(analysis::memo_caveat_text(r).empty());
  // Not: one node, one stage, or stages that send nothing across the fabric.
  r = pipeline_with_reductions();
  r.nodes = 1;
  CHECK(analysis::memo_caveat_text(r).empty());
  r = pipeline_with_reductions();
  r.spec.parallel.pp = 1;
  CHECK(analysis::memo_caveat_text(r).empty());
  r = pipeline_with_reductions();
  r.iteration.pp_bytes_per_gpu = 0;
  CHECK(analysis::memo_caveat_text(r).empty());
  // Not: stages smaller than a node (tp 2 x dp 2, two stages a node): the replicas share a node, so
  // the reductions never reach a NIC.
  r = pipeline_with_reductions();
  r.spec.parallel.tp = 2;
  r.spec.parallel.dp = 2;
  r.spec.parallel.pp = 8;
  r.gpus = 32;
  r.nodes = 4;
  CHECK(analysis::memo_caveat_text(r).empty());
}
