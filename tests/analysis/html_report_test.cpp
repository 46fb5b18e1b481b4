// `run --report`: one self-contained HTML file with the run's numbers and its plots.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>

#include "analysis/html_report.h"
#include "run_outputs_test_util.h"

using namespace clustersim;

TEST_CASE("analysis::html_report: self-contained, with SVG plots and the run's numbers") {
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4));
  const std::string html = analysis::html_report(r);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // Nothing fetched: no URL at all, no script.
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<style>") != std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
  // The summary's numbers, formatted as the text output does.
  CHECK(html.find(fmt::format("{:.0f} tokens/s", r.tokens_per_s)) != std::string::npos);
  CHECK(html.find(fmt::format("{:.1f}% / {:.1f}%", 100 * r.mfu, 100 * r.hfu)) != std::string::npos);
  CHECK(html.find(fmt::format("{:.3f} ms", r.iteration.iteration_time_s * 1e3)) != std::string::npos);
  // The sections.
  for (const char* section : {"Where the time goes", "Timeline of the first iteration", "Memory per GPU",
                              "Busiest links", "Scenario"}) {
    CHECK_MESSAGE(html.find(section) != std::string::npos, section);
  }
  CHECK(html.find("capacity") != std::string::npos);
  CHECK(html.find("node0/gpu0 -&gt; node0/nvswitch") != std::string::npos);  // tensor-parallel traffic
  CHECK(html.find("<pre>") != std::string::npos);
  CHECK(html.find("gpt3-125m") != std::string::npos);  // show_config's model
}

TEST_CASE("analysis::html_report: names in the scenario are escaped") {
  auto r = testing::run_with_timeline(testing::small_pipeline(1, 2));
  r.spec.name = "a <b> & \"c\"";
  const std::string html = analysis::html_report(r);
  CHECK(html.find("a &lt;b&gt; &amp; &quot;c&quot;") != std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
}
