// Pipeline orders: every pass once, dependencies satisfiable, known warm-up counts.
#include <doctest/doctest.h>

#include <set>
#include <tuple>

#include "workloads/training/parallel_layout.h"
#include "workloads/training/pipeline_schedule.h"

using namespace clustersim::workloads;

TEST_CASE("workloads::pipeline_order: every schedule runs each forward and backward exactly once") {
  for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved}) {
    const int p = 4, v = s == Schedule::Interleaved ? 2 : 1, m = 8;
    for (int r = 0; r < p; ++r) {
      std::set<std::tuple<int, int, bool>> seen;
      for (const auto& st : pipeline_order(s, p, v, m, r)) {
        CHECK(seen.insert({st.chunk, st.micro_batch, st.forward}).second);
      }
      CHECK(seen.size() == static_cast<std::size_t>(2 * m * v));
    }
  }
}

TEST_CASE("workloads::pipeline_order: 1F1B rank r warms up with p - r - 1 forwards") {
  // p = 4, m = 8: rank 0 runs 3 forwards before its first backward, the last rank none.
  const auto r0 = pipeline_order(Schedule::OneFOneB, 4, 1, 8, 0);
  int warm = 0;
  while (r0[static_cast<std::size_t>(warm)].forward) ++warm;
  CHECK(warm == 4);  // 3 warm-up forwards + the first forward of the steady state
  const auto r3 = pipeline_order(Schedule::OneFOneB, 4, 1, 8, 3);
  CHECK(r3[0].forward);
  CHECK_FALSE(r3[1].forward);
}

TEST_CASE("workloads::pipeline_order: a backward never precedes its own forward on a rank") {
  for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved}) {
    const int p = 4, v = s == Schedule::Interleaved ? 3 : 1, m = 8;
    for (int r = 0; r < p; ++r) {
      std::set<std::pair<int, int>> forwarded;
      for (const auto& st : pipeline_order(s, p, v, m, r)) {
        if (st.forward) {
          forwarded.insert({st.chunk, st.micro_batch});
        } else {
          CHECK(forwarded.count({st.chunk, st.micro_batch}) == 1);
        }
      }
    }
  }
}

TEST_CASE("workloads::ParallelLayout: tensor parallel is fastest, then data, then pipeline") {
  ParallelLayout l{8, 16, 8};
  CHECK(l.gpus() == 1024);
  CHECK(l.rank(0, 0, 1) == 128);
  CHECK(l.tp_group(1, 0) == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(l.dp_group(3, 0).size() == 16);
  CHECK(l.dp_group(3, 0)[1] == 11);
}
