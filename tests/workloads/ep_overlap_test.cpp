// Megatron-Core's MoE all-to-all overlaps (workloads/training/ep_overlap.h): the combined 1F1B
// layer pair on two streams, the combined schedule's order (one more warm-up forward, paired
// backwards), and the shared experts beside the all-to-alls.
#include <doctest/doctest.h>

#include <vector>

#include "workloads/training/ep_overlap.h"
#include "workloads/training/pipeline_schedule.h"

using namespace clustersim::workloads;

TEST_CASE("workloads::combined_layer_pair_s: the pair hides every all-to-all behind the other pass's compute") {
  const EpLayerPass f{1.0, 2.0, 1.0, 1.0};  // attention, experts, dispatch, combine
  const EpLayerPass b{2.0, 4.0, 1.0, 1.0};
  // comm:    combine_b [0,1] | dispatch_f [1,2], dispatch_b [5,6] | combine_f [7,8]
  // compute: attn_f [0,1]    | experts_b [1,5], experts_f [5,7]   | attn_b [7,9]
  CHECK(combined_layer_pair_s(f, b, 0.0) == doctest::Approx(9.0));
  CHECK(f.alone() + b.alone() == doctest::Approx(13.0));
  CHECK(combined_layer_saving_s({f, b}, 0.0) == doctest::Approx(4.0));
  // Half the SMs to the all-to-alls: each compute node runs at half rate while one is in flight.
  CHECK(combined_layer_pair_s(f, b, 0.5) == doctest::Approx(11.0));
  // Nothing to hide: the pair is the two passes' compute back to back.
  const EpLayerPass cf{1.0, 2.0, 0.0, 0.0}, cb{2.0, 4.0, 0.0, 0.0};
  CHECK(combined_layer_pair_s(cf, cb, 0.15) == doctest::Approx(9.0));
  // An all-to-all longer than the compute beside it stays partly exposed.
  const EpLayerPass slow{1.0, 1.0, 5.0, 5.0};
  CHECK(combined_layer_pair_s(slow, slow, 0.0) > 10.0);
  CHECK(combined_layer_pair_s(slow, slow, 0.0) < slow.alone() * 2);
}

TEST_CASE("workloads::pipeline_order: the combined 1F1B order runs one more warm-up forward and pairs the steady backwards") {
  // p = 1 (combined_1f1b_schedule_for_no_pipelining): F0, (F1, B0), (F2, B1), (F3, B2), B3.
  const std::vector<PipelineStep> o = pipeline_order(Schedule::OneFOneB, 1, 1, 4, 0, true);
  REQUIRE(o.size() == 8);
  CHECK((o[0].forward && o[1].forward && !o[2].forward));
  CHECK(o[2].micro_batch == 0);
  CHECK(o[2].paired);
  CHECK(o[1].micro_batch == 1);
  CHECK(!o[7].paired);  // the cool-down backward runs alone
  int paired = 0;
  for (const PipelineStep& s : o) paired += s.paired ? 1 : 0;
  CHECK(paired == 3);
  // Without the overlap nothing is paired and the order is plain 1F1B.
  for (const PipelineStep& s : pipeline_order(Schedule::OneFOneB, 1, 1, 4, 0)) CHECK(!s.paired);
  // Interleaved: (p - r - 1) x 2 + (v - 1) x p + 1 warm-up forwards.
  const std::vector<PipelineStep> i = pipeline_order(Schedule::Interleaved, 2, 2, 4, 1, true);
  int warmup = 0;
  while (i[static_cast<std::size_t>(warmup)].forward) ++warmup;
  CHECK(warmup == 0 * 2 + 1 * 2 + 1 + 1);  // the warm-up, then the steady phase opens with a forward
  CHECK(i[static_cast<std::size_t>(warmup)].paired);
}
