// The HTML report's link sections (see html_links.h).
#include "analysis/html_links.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/human_units.h"
#include "analysis/link_classes.h"
#include "analysis/link_traffic.h"

namespace clustersim::analysis {

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

constexpr int kBins = 100;                // samples of the simulated time per chart
constexpr std::size_t kPerClass = 3;      // busiest links listed per class
constexpr int kNicNodes = 32;             // nodes shown in the NIC heat map
constexpr int kPlotW = 900, kPlotH = 120, kLeft = 60;


bool has_traffic(const RunReport& r) {
  return r.topology && !r.iteration.link_traffic.empty() && r.iteration.simulated_s > 0;
}

const char* kNoTraffic = "<p>No link carried traffic (or no timeline was recorded).</p>\n";

std::string polyline(const std::vector<double>& v, double ymax) {
  std::string pts;
  const double dx = static_cast<double>(kPlotW) / static_cast<double>(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double y = kPlotH - std::min(v[i], ymax) / ymax * kPlotH;
    pts += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", kLeft + i * dx, y + 6, kLeft + (i + 1) * dx, y + 6);
  }
  return pts;
}

// One class's chart: mean utilisation filled, the busiest link's as a line, 0-100 % axis.
std::string class_chart(const LinkClassSeries& s, double duration_s) {
  std::string svg = fmt::format(R"(<svg class="util" data-class="{}" width="{}" height="{}" role="img">)",
                                link_class_name(s.cls), kLeft + kPlotW + 10, kPlotH + 30);
  svg += fmt::format(R"(<rect x="{}" y="6" width="{}" height="{}" fill="#f4f4f4"/>)", kLeft, kPlotW, kPlotH);
  for (int pct : {0, 50, 100}) {
    const double y = 6 + kPlotH - pct / 100.0 * kPlotH;
    svg += fmt::format(R"(<text x="{}" y="{:.1f}" class="small" text-anchor="end">{}%</text>)", kLeft - 4, y + 4, pct);
  }
  svg += fmt::format(R"(<polygon points="{:.1f},{} {}{:.1f},{}" fill="#4878d0" fill-opacity="0.55"/>)", double(kLeft),
                     kPlotH + 6, polyline(s.mean_util, 1.0), double(kLeft + kPlotW), kPlotH + 6);
  svg += fmt::format(R"(<polyline points="{}" fill="none" stroke="#d65f5f" stroke-width="1"/>)", polyline(s.peak_util, 1.0));
  for (int t = 0; t <= 4; ++t) {
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" class="small" text-anchor="middle">{}</text>)",
                       kLeft + kPlotW * t / 4.0, kPlotH + 24, human_seconds(duration_s * t / 4.0));
  }
  return svg + "</svg>\n";
}

}  // namespace

std::string html_link_utilisation(const RunReport& r) {
  if (!has_traffic(r)) return kNoTraffic;
  const double t = r.iteration.simulated_s;
  const LinkTrafficGrid grid = link_traffic_grid(r.iteration, *r.topology, t / kBins, kBins);
  std::string out = fmt::format(
      "<p>Utilisation per link class over the {} simulated, in {} samples of {}: the filled area is the mean over "
      "all the class's links (bytes carried / their summed capacity), the red line the busiest single link. "
      "Memoised collectives are spread evenly over their spans.</p>\n",
      human_seconds(t), kBins, human_seconds(t / kBins));
  for (const LinkClassSeries& s : link_class_series(grid, *r.topology, t)) {
    out += fmt::format("<h3>{}</h3>\n<p class=\"small\">{} of {} links carried {}; capacity {} in all.</p>\n",
                       link_class_name(s.cls), s.links_used, s.links, human_bytes(s.total_bytes),
                       human_bandwidth(s.capacity_Bps));
    if (s.links_used > 0) out += class_chart(s, t);
  }
  return out;
}

std::string html_busiest_links(const RunReport& r) {
  if (!has_traffic(r)) return kNoTraffic;
  const double t = r.iteration.simulated_s;
  const LinkTrafficGrid grid = link_traffic_grid(r.iteration, *r.topology, t, 1);
  std::string out = fmt::format("<p>Average utilisation over the {} simulated, the {} busiest links of each class "
                                "({} of {} links carried traffic).</p>\n<table class=\"links\">\n"
                                "<tr><th>class</th><th>link</th><th>utilisation</th><th>carried</th><th>capacity</th></tr>\n",
                                human_seconds(t), kPerClass, grid.links.size(), r.topology->link_count());
  for (const LinkClassSeries& s : link_class_series(grid, *r.topology, t)) {
    for (std::size_t i = 0; i < std::min(kPerClass, s.busiest.size()); ++i) {
      const LinkSeries& l = *s.busiest[i];
      const double u = std::min(1.0, l.utilisation(t));
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td><span class=\"bar\"><span style=\"width:{:.1f}%\"></span></span> {:.1f}%</td>"
          "<td>{}</td><td>{}</td></tr>\n",
          link_class_name(s.cls), html_escape(l.name), 100 * u, 100 * u, human_bytes(l.total_bytes),
          human_bandwidth(l.capacity_Bps));
    }
  }
  return out + "</table>\n";
}

namespace {

// A NIC's link to its switch (send) and back (receive); -1 when missing.
std::pair<long, long> nic_links(const topology::Topology& topo, topology::DeviceId nic) {
  long send = -1, receive = -1;
  for (topology::LinkId l : topo.out_links(nic)) {
    if (topo.link(l).kind != topology::LinkKind::Network) continue;
    send = l;
    const topology::DeviceId sw = topo.link(l).dst;
    for (topology::LinkId back : topo.out_links(sw))
      if (topo.link(back).dst == nic) receive = back;
  }
  return {send, receive};
}

std::string nic_cell(const topology::Topology& topo, const LinkTrafficGrid& grid, topology::DeviceId nic, double t) {
  const auto [send, receive] = nic_links(topo, nic);
  const auto bytes_of = [&grid](long l) {
    const LinkSeries* s = l >= 0 ? grid.find(static_cast<topology::LinkId>(l)) : nullptr;
    return s ? s->total_bytes : 0.0;
  };
  const double cap = send >= 0 ? topo.link(static_cast<topology::LinkId>(send)).bandwidth.value : 0.0;
  const double sent = bytes_of(send), received = bytes_of(receive);
  const double u = cap > 0 && t > 0 ? std::min(1.0, std::max(sent, received) / (cap * t)) : 0.0;
  return fmt::format("<td class=\"nic\" style=\"background:rgba(72,120,208,{:.3f})\" title=\"{}: sent {}, received {} "
                     "({} per direction)\">{:.0f}%</td>",
                     u, html_escape(topo.device(nic).name), human_bytes(sent), human_bytes(received), human_bandwidth(cap),
                     100 * u);
}

std::string nic_heat_map(const RunReport& r, const LinkTrafficGrid& grid) {
  const topology::Topology& topo = *r.topology;
  std::vector<std::vector<topology::DeviceId>> by_server(static_cast<std::size_t>(std::max(0, topo.servers())));
  for (topology::DeviceId d = 0; d < topo.device_count(); ++d) {
    const auto& dev = topo.device(d);
    if (dev.kind == topology::DeviceKind::Nic && dev.server >= 0 && dev.server < topo.servers())
      by_server[static_cast<std::size_t>(dev.server)].push_back(d);
  }
  if (by_server.empty() || by_server.front().empty()) return "<p>The nodes have no NICs.</p>\n";
  std::string out = "<p>Each NIC's busier direction, average over the simulated time (hover for bytes).</p>\n"
                    "<table class=\"nics\">\n<tr><th>node</th>";
  for (std::size_t n = 0; n < by_server.front().size(); ++n) out += fmt::format("<th>nic{}</th>", n);
  out += "</tr>\n";
  const int shown = std::min(topo.servers(), kNicNodes);
  for (int s = 0; s < shown; ++s) {
    out += fmt::format("<tr><th>node{}</th>", s);
    for (topology::DeviceId nic : by_server[static_cast<std::size_t>(s)])
      out += nic_cell(topo, grid, nic, r.iteration.simulated_s);
    out += "</tr>\n";
  }
  out += "</table>\n";
  if (topo.servers() > shown) out += fmt::format("<p>First {} of {} nodes.</p>\n", shown, topo.servers());
  return out;
}

}  // namespace

std::string html_fabric_view(const RunReport& r) {
  if (!has_traffic(r)) return kNoTraffic;
  const double t = r.iteration.simulated_s;
  const LinkTrafficGrid grid = link_traffic_grid(r.iteration, *r.topology, t, 1);
  std::string out = "<table class=\"fabric\">\n<tr><th>class</th><th>links</th><th>carried traffic</th>"
                    "<th>bytes</th><th>mean utilisation</th><th>capacity</th></tr>\n";
  for (const LinkClassSeries& s : link_class_series(grid, *r.topology, t)) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td></tr>\n",
                       link_class_name(s.cls), s.links, s.links_used, human_bytes(s.total_bytes),
                       100 * s.mean_util.front(), human_bandwidth(s.capacity_Bps));
  }
  return out + "</table>\n" + nic_heat_map(r, grid);
}

}  // namespace clustersim::analysis
