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
  r.gpus = 32;
  r.spec.cluster.node.gpus = 8;  // one stage a node: tp 8
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
  const analysis::RunReport r = pipeline_with_reductions();
  const std::string note = analysis::memo_caveat_text(r);
  CHECK(note.find("in flight for 60% of the step") != std::string::npos);
  CHECK(note.find("--full") != std::string::npos);
  // Each of these alone takes the note away.
  struct Case {
    const char* why;
    void (*change)(analysis::RunReport&);
  };
  const Case cases[] = {
      {"under half the step", [](analysis::RunReport& x) { x.iteration.breakdown.dp_overlapped = 3.9; }},
      {"run with --full: the reductions ran as flows", [](analysis::RunReport& x) { x.iteration.live_positions = 8; }},
      {"one node", [](analysis::RunReport& x) { x.nodes = 1; }},
      {"one stage", [](analysis::RunReport& x) { x.spec.parallel.pp = 1; }},
      {"stages that send nothing", [](analysis::RunReport& x) { x.iteration.pp_bytes_per_gpu = 0; }},
      // tp 2 x dp 2, two stages a node: the replicas share a node, so the reductions reach no NIC.
      {"stages smaller than a node",
       [](analysis::RunReport& x) {
         x.spec.parallel.tp = 2;
         x.spec.parallel.dp = 2;
         x.spec.parallel.pp = 8;
       }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.why);
    analysis::RunReport x = pipeline_with_reductions();
    c.change(x);
    CHECK(analysis::memo_caveat_text(x).empty());
  }
}
