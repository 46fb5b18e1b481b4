// The self-contained HTML run report (see html_report.h).
#include "analysis/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/html_links.h"
#include "analysis/human_units.h"
#include "scenarios/loader.h"
#include "scenarios/show_config.h"

namespace clustersim::analysis {
namespace {

constexpr int kChartWidth = 1100;  // px of the plotting area
constexpr int kLabelWidth = 190;   // px left of it for row labels


std::string seconds(double s) { return human_seconds(s); }

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / 1073741824.0); }

struct Part {
  std::string label;
  double value;
  const char* colour;
};

// A horizontal stacked bar with a legend; `marker` (if > 0) draws a vertical line at that value.
std::string stacked_bar(const std::vector<Part>& parts, double scale, double marker, const std::string& marker_label,
                        const std::string& (*format)(double, std::string&)) {
  const int h = 34, legend_y = 58;
  std::string svg = fmt::format(R"(<svg width="{}" height="{}" role="img">)",
                                kChartWidth + 40, legend_y + 22 * static_cast<int>((parts.size() + 2) / 3) + 10);
  double x = 0;
  std::string buf;
  for (const Part& p : parts) {
    const double w = scale > 0 ? p.value / scale * kChartWidth : 0;
    if (w > 0) {
      svg += fmt::format(R"(<rect x="{:.2f}" y="10" width="{:.2f}" height="{}" fill="{}"><title>{}: {}</title></rect>)", x,
                         w, h, p.colour, html_escape(p.label), format(p.value, buf));
    }
    x += w;
  }
  if (marker > 0) {
    const double mx = marker / scale * kChartWidth;
    svg += fmt::format(R"(<line x1="{0:.2f}" x2="{0:.2f}" y1="4" y2="{1}" stroke="#c00" stroke-width="2"/>)", mx, h + 16);
    svg += fmt::format(R"(<text x="{:.2f}" y="{}" class="small" text-anchor="end" fill="#c00">{}</text>)", mx - 4, h + 24,
                       html_escape(marker_label));
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const int lx = static_cast<int>(i % 3) * 360, ly = legend_y + 22 * static_cast<int>(i / 3);
    svg += fmt::format(R"(<rect x="{}" y="{}" width="14" height="14" fill="{}"/>)", lx, ly, parts[i].colour);
    svg += fmt::format(R"(<text x="{}" y="{}">{}: {}</text>)", lx + 20, ly + 12, html_escape(parts[i].label),
                       format(parts[i].value, buf));
  }
  return svg + "</svg>\n";
}

const std::string& fmt_time(double v, std::string& buf) { return buf = seconds(v); }
const std::string& fmt_mem(double v, std::string& buf) { return buf = gib(v); }

std::string summary(const RunReport& r) {
  const auto& s = r.spec;
  std::vector<std::pair<std::string, std::string>> rows = {
      {"cluster", fmt::format("{} GPUs = {} x {} ({})", r.gpus, r.nodes, s.cluster.node.id, s.cluster.node.gpu)},
      {"model", fmt::format("{} layers, hidden {}, {:.1f} B parameters", s.model.layers, s.model.hidden,
                            s.model.parameters() / 1e9)},
      {"layout", fmt::format("tp {}{} x pp {} x dp {}, global batch {}, micro-batch {}", s.parallel.tp,
                             s.parallel.cp > 1 ? fmt::format(" x cp {}", s.parallel.cp) : "", s.parallel.pp,
                             s.parallel.dp, s.training.global_batch, s.training.micro_batch)},
      {"iteration time", seconds(r.iteration.iteration_time_s)},
      {"throughput", fmt::format("{:.0f} tokens/s, {:.2f} samples/s", r.tokens_per_s, r.samples_per_s)},
      {"model TFLOP/s per GPU", fmt::format("{:.1f}", r.model_tflops_per_gpu)},
      {"MFU / HFU", fmt::format("{:.1f}% / {:.1f}%", 100 * r.mfu, 100 * r.hfu)},
      {"memory per GPU", fmt::format("{:.1f} GiB of {:.1f} GiB ({})", r.memory.required / 1073741824.0,
                                     r.memory.capacity / 1073741824.0, r.memory.fits ? "fits" : "DOES NOT FIT")},
  };
  if (r.time_to_train_s) rows.emplace_back("time to train", fmt::format("{:.1f} days", *r.time_to_train_s / 86400));
  if (r.energy_kwh) rows.emplace_back("energy", fmt::format("{:.0f} kWh", *r.energy_kwh));
  if (r.cost_usd) rows.emplace_back("cost", fmt::format("${:.0f}", *r.cost_usd));
  rows.emplace_back("simulator", fmt::format("{} events, {} flows, {} iteration(s)", r.iteration.events,
                                             r.iteration.flows, r.iteration.iterations));
  std::string out = "<table class=\"summary\">\n";
  for (const auto& [k, v] : rows) out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_escape(k), html_escape(v));
  return out + "</table>\n";
}

std::string breakdown(const RunReport& r) {
  const auto& b = r.iteration.breakdown;
  std::vector<Part> parts = {{"compute", b.compute, "#4878d0"},
                             {"exposed comm (tensor-parallel)", b.tp_comm, "#ee854a"},
                             {"exposed comm (data-parallel)", b.dp_exposed, "#d65f5f"},
                             {"exposed comm (expert all-to-all)", b.ep_comm, "#dc7ec0"},
                             {"pipeline bubble", b.pipeline_bubble, "#bbbbbb"},
                             {"optimizer", b.optimizer, "#956cb4"},
                             {"other", b.other, "#dddd88"}};
  // Context parallelism's exposed exchange, after the tensor-parallel part, only when there is one.
  if (b.cp_exposed > 0) parts.insert(parts.begin() + 2, Part{"exposed comm (context-parallel)", b.cp_exposed, "#d5bb67"});
  double total = 0;
  for (const Part& p : parts) total += p.value;
  return fmt::format("<p>Pipeline rank {} (the last to finish), per iteration.</p>\n", r.iteration.critical_rank) +
         stacked_bar(parts, std::max(total, r.iteration.iteration_time_s), 0, "", fmt_time);
}

const char* span_colour(const workloads::TimelineSpan& s) {
  switch (s.kind) {
    case workloads::SpanKind::Forward: return "#4878d0";
    case workloads::SpanKind::Backward: return "#6acc64";
    case workloads::SpanKind::Optimizer: return "#956cb4";
    case workloads::SpanKind::TensorParallel: return "#ee854a";
    case workloads::SpanKind::ContextParallel: return "#d5bb67";
    case workloads::SpanKind::PipelineSend: return "#8c8c8c";
    case workloads::SpanKind::DataParallel: return "#d65f5f";
    case workloads::SpanKind::ExpertParallel: return "#dc7ec0";
    case workloads::SpanKind::DataStall: return "#797979";
  }
  return "#000";
}

std::string gantt(const RunReport& r) {
  double end = 0;
  int ranks = 0;
  for (const auto& s : r.iteration.timeline) {
    if (s.iteration != 0) continue;
    end = std::max(end, s.end_s);
    ranks = std::max(ranks, s.rank + 1);
  }
  if (end <= 0) return "<p>No timeline was recorded.</p>\n";
  const int row_h = 16, rank_gap = 10, rank_h = 3 * row_h + rank_gap, top = 24;
  const int height = top + ranks * rank_h + 40;
  const double scale = kChartWidth / end;
  std::string svg = fmt::format(R"(<svg width="{}" height="{}" role="img">)",
                                kLabelWidth + kChartWidth + 20, height);
  static const char* kStreams[] = {"compute", "pipeline send", "DP comm"};
  for (int rank = 0; rank < ranks; ++rank) {
    const int y0 = top + rank * rank_h;
    for (int st = 0; st < 3; ++st) {
      svg += fmt::format(R"(<text x="0" y="{}" class="small">rank {} {}</text>)", y0 + st * row_h + 12, rank, kStreams[st]);
      svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#f4f4f4"/>)", kLabelWidth, y0 + st * row_h,
                         kChartWidth, row_h - 2);
    }
  }
  for (const auto& s : r.iteration.timeline) {
    if (s.iteration != 0 || s.stream > 2) continue;  // the input pipeline's stalls: the text report says them
    const bool nested = s.kind == workloads::SpanKind::TensorParallel || s.kind == workloads::SpanKind::ContextParallel ||
                        s.kind == workloads::SpanKind::ExpertParallel;
    const int y = top + s.rank * rank_h + s.stream * row_h + (nested ? 8 : 0);
    const double x = kLabelWidth + s.start_s * scale, w = std::max(0.5, (s.end_s - s.start_s) * scale);
    std::string title = fmt::format("{} [{} - {}]", s.name, seconds(s.start_s), seconds(s.end_s));
    if (s.bytes > 0) title += fmt::format(", {} over {}", human_bytes(s.bytes), s.link_class);
    svg += fmt::format(R"(<rect x="{:.2f}" y="{}" width="{:.2f}" height="{}" fill="{}" stroke="#fff" stroke-width="0.3"><title>{}</title></rect>)",
                       x, y, w, nested ? row_h - 10 : row_h - 2, span_colour(s), html_escape(title));
  }
  // Time axis.
  const int ay = top + ranks * rank_h + 4;
  for (int t = 0; t <= 10; ++t) {
    const double x = kLabelWidth + kChartWidth * t / 10.0;
    svg += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#999"/>)", x, ay, ay + 5);
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" class="small" text-anchor="middle">{}</text>)", x, ay + 18,
                       seconds(end * t / 10.0));
  }
  svg += "</svg>\n";
  const std::string legend =
      "<p class=\"legend\"><span style=\"background:#4878d0\"></span>forward <span style=\"background:#6acc64\"></span>"
      "backward <span style=\"background:#ee854a\"></span>tensor-parallel (total of the pass, shown at its end) "
      "<span style=\"background:#956cb4\"></span>optimizer <span style=\"background:#8c8c8c\"></span>pipeline send "
      "<span style=\"background:#d65f5f\"></span>data-parallel collective "
      "<span style=\"background:#dc7ec0\"></span>expert all-to-all (MoE)</p>\n";
  return legend + svg;
}

std::string memory(const RunReport& r) {
  const nlohmann::json m = memory_json_block(r.memory);
  const auto v = [&m](const char* k) { return m.contains(k) ? m[k].get<double>() : 0.0; };
  std::vector<Part> parts = {{"parameters", v("params"), "#4878d0"},
                             {"gradients", v("grads"), "#6acc64"},
                             {"optimizer states", v("optimizer"), "#956cb4"},
                             {"activations", v("activations"), "#ee854a"},
                             {"other (buffers, runtime, fragmentation)", v("other"), "#bbbbbb"}};
  const double total = v("total"), capacity = v("capacity");
  return fmt::format("<p>Most loaded GPU: {} required of {} capacity ({}).</p>\n", gib(total), gib(capacity),
                     r.memory.fits ? "fits" : "does not fit") +
         stacked_bar(parts, std::max(total, capacity) * 1.02, capacity, "capacity " + gib(capacity), fmt_mem);
}

constexpr const char* kStyle = R"(<style>
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table.summary th { text-align: left; padding: 2px 16px 2px 0; font-weight: 600; }
table.summary td { font-variant-numeric: tabular-nums; }
svg text { font-size: 12px; fill: #222; } svg text.small { font-size: 11px; }
pre { background: #f6f6f6; padding: 10px; font-size: 12px; overflow-x: auto; }
p.legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }
h3 { font-size: 14px; margin: 14px 0 2px; } p.small { font-size: 12px; margin: 0 0 4px; color: #555; }
table.links, table.fabric, table.nics { border-collapse: collapse; font-size: 12px; font-variant-numeric: tabular-nums; }
table.links td, table.links th, table.fabric td, table.fabric th { padding: 2px 10px 2px 0; text-align: left; }
table.nics td.nic { width: 44px; text-align: center; border: 1px solid #fff; }
span.bar { display: inline-block; width: 200px; height: 10px; background: #f4f4f4; vertical-align: middle; }
span.bar span { display: block; height: 10px; background: #4878d0; }
nav#toc a { margin-right: 14px; font-size: 13px; }
</style>
)";

// The page's only script: a table of contents from the section headings, then a marker element
// (#report-ok with the number of charts) that says the page loaded without a script error; an
// error leaves #report-js-error instead. Nothing is fetched.
constexpr const char* kScript = R"(<script>
(function () {
  function fail(message) {
    var d = document.createElement("div");
    d.id = "report-js-error";
    d.textContent = String(message);
    document.body.appendChild(d);
  }
  window.addEventListener("error", function (e) { fail(e.message); });
  try {
    var nav = document.getElementById("toc");
    var headings = document.querySelectorAll("h2[id]");
    for (var i = 0; i < headings.length; i++) {
      var a = document.createElement("a");
      a.href = "#" + headings[i].id;
      a.textContent = headings[i].textContent;
      nav.appendChild(a);
    }
    var ok = document.createElement("div");
    ok.id = "report-ok";
    ok.hidden = true;
    ok.setAttribute("data-sections", String(headings.length));
    ok.setAttribute("data-charts", String(document.querySelectorAll("svg").length));
    document.body.appendChild(ok);
  } catch (e) {
    fail(e);
  }
})();
</script>
)";

std::string section(const char* id, const char* title, const std::string& body) {
  return fmt::format("<h2 id=\"{}\">{}</h2>\n", id, title) + body;
}

}  // namespace

std::string html_report(const RunReport& r) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>clustersim: {}</title>\n", html_escape(r.spec.name));
  out += kStyle;
  out += "</head>\n<body>\n";
  out += fmt::format("<h1>clustersim run: {}</h1>\n<nav id=\"toc\"></nav>\n", html_escape(r.spec.name));
  out += section("summary", "Summary", summary(r));
  out += section("time", "Where the time goes", breakdown(r));
  out += section("timeline", "Timeline of the first iteration", gantt(r));
  out += section("memory", "Memory per GPU", memory(r));
  out += section("utilisation", "Link utilisation over time", html_link_utilisation(r));
  out += section("links", "Busiest links per class", html_busiest_links(r));
  out += section("fabric", "Fabric and NICs", html_fabric_view(r));
  out += section("scenario", "Scenario", "<pre>" + html_escape(scenarios::show_config(r.spec)) + "</pre>\n");
  out += section("text", "Text summary", "<pre>" + html_escape(run_text(r)) + "</pre>\n");
  out += kScript;
  return out + "</body>\n</html>\n";
}

}  // namespace clustersim::analysis
