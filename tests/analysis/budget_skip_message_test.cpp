// Skip reasons of the validation sets are read by people and copied into a shell: sizes print in
// powers of 1024 with their unit ("16 GiB"), and the command's -b/-e take the spelling
// `clustersim collective` parses ("16G"), never the raw byte count.
#include <doctest/doctest.h>

#include "analysis/human_units.h"
#include "analysis/validate_collectives.h"

namespace analysis = clustersim::analysis;

TEST_CASE("analysis::human_binary_bytes: sizes in powers of 1024 with their unit") {
  CHECK(analysis::human_binary_bytes(0) == "0 B");
  CHECK(analysis::human_binary_bytes(512) == "512 B");
  CHECK(analysis::human_binary_bytes(1536) == "1.50 KiB");
  CHECK(analysis::human_binary_bytes(64.0 * 1024 * 1024) == "64 MiB");
  CHECK(analysis::human_binary_bytes(17179869184.0) == "16 GiB");
  CHECK(analysis::human_binary_bytes(1023.9 * 1024) == "1.00 MiB");  // not "1024 KiB"
}

TEST_CASE("analysis::size_flag: the largest power-of-1024 suffix that divides the size, else bytes") {
  CHECK(analysis::size_flag(8) == "8");
  CHECK(analysis::size_flag(1024) == "1K");
  CHECK(analysis::size_flag(128.0 * 1024 * 1024) == "128M");
  CHECK(analysis::size_flag(17179869184.0) == "16G");
  CHECK(analysis::size_flag(1536) == "1536");  // 1.5K is not a size -b reads
  CHECK(analysis::size_flag(12345) == "12345");
}

TEST_CASE("analysis::validate --collectives: a row over the budget names its size with a unit and a pasteable -b/-e") {
  const std::string why = "the replay reached its budget of 20 million events before its collectives finished";
  const std::string reason =
      analysis::collective_budget_skip_reason("tree", "Simple", why, "gb200-nvl72", 20, 17179869184.0);
  CHECK(reason.find("at 16 GiB") != std::string::npos);
  CHECK(reason.find("`clustersim collective --node gb200-nvl72 --nodes 20 -b 16G -e 16G`") != std::string::npos);
  CHECK(reason.find(why) != std::string::npos);
  CHECK(reason.find("17179869184") == std::string::npos);
}
