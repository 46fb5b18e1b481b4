// `run --report`: one self-contained HTML file with the run's numbers and its plots.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>

#include "analysis/html_report.h"
#include "analysis/human_units.h"
#include "run_outputs_test_util.h"

using namespace clustersim;

TEST_CASE("analysis::html_report: self-contained, with SVG plots and the run's numbers") {
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4));
  const std::string html = analysis::html_report(r);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // Nothing fetched: no URL at all; one inline script (table of contents, load marker), none loaded.
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("<script>") == html.rfind("<script>"));
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<style>") != std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
  // The summary's numbers, formatted as the text output does.
  CHECK(html.find(fmt::format("{:.0f} tokens/s", r.tokens_per_s)) != std::string::npos);
  CHECK(html.find(fmt::format("{:.1f}% / {:.1f}%", 100 * r.mfu, 100 * r.hfu)) != std::string::npos);
  CHECK(html.find(fmt::format("{:.3f} ms", r.iteration.iteration_time_s * 1e3)) != std::string::npos);
  // The sections.
  for (const char* section : {"Where the time goes", "Timeline of the first iteration", "Memory per GPU",
                              "Link utilisation over time", "Busiest links per class", "Fabric and NICs", "Scenario"}) {
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

TEST_CASE("analysis::html_report: link utilisation over time per class, the NIC view, readable units") {
  // Two nodes, pipeline across them: NVLink (tensor-parallel), PCIe and NIC (pipeline sends) traffic.
  const auto r = testing::run_with_timeline(testing::small_pipeline(2, 4));
  const std::string html = analysis::html_report(r);
  CHECK(html.find("class=\"util\" data-class=\"NVLink\"") != std::string::npos);
  CHECK(html.find("class=\"util\" data-class=\"NIC\"") != std::string::npos);
  CHECK(html.find("<td>NIC</td><td>node") != std::string::npos);  // busiest NIC links, not only NVLinks
  CHECK(html.find("<table class=\"nics\">") != std::string::npos);
  CHECK(html.find("<th>node1</th>") != std::string::npos);
  CHECK(html.find("0.0 us") == std::string::npos);
  CHECK(html.find("e+0") == std::string::npos);
}

TEST_CASE("analysis::human_units: decimal prefixes, three digits, no exponents, zero without a unit prefix") {
  CHECK(analysis::human_bytes(0) == "0 B");
  CHECK(analysis::human_bytes(512) == "512 B");
  CHECK(analysis::human_bytes(1.05e12) == "1.05 TB");
  CHECK(analysis::human_bytes(1049.6e9) == "1.05 TB");
  CHECK(analysis::human_bytes(999.7e9) == "1.00 TB");  // not "1000 GB"
  CHECK(analysis::human_bytes(43.94e9) == "43.9 GB");
  CHECK(analysis::human_bandwidth(450e9) == "450 GB/s");
  CHECK(analysis::human_seconds(0) == "0 s");
  CHECK(analysis::human_seconds(850e-9) == "850 ns");
  CHECK(analysis::human_seconds(12.5e-6) == "12.5 us");
  CHECK(analysis::human_seconds(1.25e-3) == "1.250 ms");
  CHECK(analysis::human_seconds(3 * 86400) == "3.0 days");
}
