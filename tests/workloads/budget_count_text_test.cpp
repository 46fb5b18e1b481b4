// The validation budgets' messages count transfers and events in words people read at a glance
// ("7.06 million transfers, over the budget of 4 million"), not as eight-digit numbers.
#include <doctest/doctest.h>

#include "workloads/collectives/collective_runner.h"

using clustersim::workloads::budget_count_text;

TEST_CASE("workloads::budget_count_text: counts above ten thousand in thousands, millions or billions") {
  CHECK(budget_count_text(512) == "512");
  CHECK(budget_count_text(9999) == "9999");
  CHECK(budget_count_text(12345) == "12.3 thousand");
  CHECK(budget_count_text(4000000) == "4 million");
  CHECK(budget_count_text(7059456) == "7.06 million");
  CHECK(budget_count_text(160491520) == "160 million");
  CHECK(budget_count_text(999999) == "1 million");         // not "1e+03 thousand"
  CHECK(budget_count_text(999999999) == "1 billion");      // not "1e+03 million"
  CHECK(budget_count_text(20000000000ULL) == "20 billion");
}
