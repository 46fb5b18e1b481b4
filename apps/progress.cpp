// Progress lines on stderr (see progress.h).
#include "apps/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace clustersim::apps {

bool progress_wanted(bool flag) { return flag || isatty(fileno(stderr)) != 0; }

std::string wall_text(double s) {
  if (s < 1) return fmt::format("{:.0f} ms", s * 1e3);
  if (s < 60) return fmt::format("{:.1f} s", s);
  const auto whole = static_cast<long long>(std::llround(s));
  if (whole < 3600) return fmt::format("{} min {:02d} s", whole / 60, static_cast<int>(whole % 60));
  return fmt::format("{} h {:02d} min", whole / 3600, static_cast<int>(whole % 3600 / 60));
}

ProgressLine::ProgressLine(bool enabled, std::size_t total, bool total_is_bound)
    : enabled_(enabled), bound_(total_is_bound), total_(total), start_(std::chrono::steady_clock::now()) {}

double ProgressLine::eta_s(std::size_t done, std::size_t total, double elapsed_s) {
  if (done == 0 || done >= total) return 0.0;
  return elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
}

void ProgressLine::finished(const std::string& label, const std::string& outcome, double wall_s) {
  ++done_;
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = fmt::format("[{}/{}{}] {}  {}  {}", done_, bound_ ? "at most " : "", total_, label, outcome,
                                 wall_text(wall_s));
  if (done_ < total_) line += (bound_ ? "  ETA at most " : "  ETA ") + wall_text(eta_s(done_, total_, elapsed));
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace clustersim::apps
