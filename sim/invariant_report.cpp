// The invariant report's bookkeeping and its one-paragraph summary (see invariant_report.h).
#include "sim/invariant_report.h"

#include <algorithm>

namespace clustersim::sim {

InvariantReport::Handle InvariantReport::declare(std::string_view name) {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].name == name) return static_cast<Handle>(i);
  }
  entries_.push_back(Entry{std::string(name), 0, 0, {}});
  return static_cast<Handle>(entries_.size() - 1);
}

void InvariantReport::violated(Handle h, std::string detail) {
  Entry& e = entries_[h];
  ++e.violations;
  if (e.details.size() < kMaxDetails) e.details.push_back(std::move(detail));
}

bool InvariantReport::all_hold() const {
  return std::none_of(entries_.begin(), entries_.end(), [](const Entry& e) { return e.violations > 0; });
}

std::string InvariantReport::summary() const {
  std::string out = "invariants: " + std::to_string(entries_.size()) + " checked, ";
  const auto failed = std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.violations > 0; });
  if (failed == 0) return out + "all hold\n";
  out += std::to_string(failed) + " failed\n";
  for (const Entry& e : entries_) {
    if (e.violations == 0) continue;
    out += "  FAILED " + e.name + ": " + std::to_string(e.violations) + " of " + std::to_string(e.checks) +
           " checks\n";
    for (const std::string& d : e.details) out += "    " + d + "\n";
  }
  return out;
}

}  // namespace clustersim::sim
