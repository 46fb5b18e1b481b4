// The one duration rule of text outputs: a non-zero time never reads "0.000 ms" or "0.0 us".
#include <doctest/doctest.h>

#include "analysis/human_units.h"

using clustersim::analysis::duration_text;

TEST_CASE("analysis::duration_text: each value is shown in the largest unit where it is at least 1") {
  CHECK(duration_text(12.5) == "12.500 s");
  CHECK(duration_text(0.0123) == "12.300 ms");
  CHECK(duration_text(4.2e-5) == "42.000 us");
  CHECK(duration_text(3e-8) == "30.000 ns");
  CHECK(duration_text(0) == "0.000 ms");
}

TEST_CASE("analysis::duration_text: no non-zero duration from 1 ps to 1000 s reads as zero") {
  for (double s = 1e-12; s < 1e3; s *= 1.7) {
    const std::string t = duration_text(s);
    CAPTURE(s);
    CAPTURE(t);
    CHECK(t.rfind("0.000 ", 0) == std::string::npos);
    CHECK(t.rfind("0.0", 0) == std::string::npos);
  }
}
