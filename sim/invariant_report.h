// What the invariant checks of one or more simulations found: which invariants were checked, how
// many times, and the first few violations of each with their numbers.
//
// The checks themselves live in the lowest layer that can see each fact (sim/engine_invariants.h
// for the engine's time, link capacities and bytes; workloads/ for collectives and iterations);
// they all write here, through a handle per invariant declared up front. An invariant declared but
// never exercised (a run with no flows) still counts as checked: nothing contradicted it. The
// report is plain data; two simulations in one process keep two reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::sim {

class InvariantReport {
 public:
  using Handle = std::uint32_t;
  // Kept details per invariant; the rest are only counted.
  static constexpr std::size_t kMaxDetails = 3;

  struct Entry {
    std::string name;
    std::uint64_t checks = 0;
    std::uint64_t violations = 0;
    std::vector<std::string> details;  // the first kMaxDetails violations, with their numbers
  };

  // The handle of `name`, declaring it on first use (order of first declaration is report order).
  Handle declare(std::string_view name);
  void checked(Handle h, std::uint64_t n = 1) { entries_[h].checks += n; }
  // One failed check (count it with checked() as well): keeps the detail while there is room.
  void violated(Handle h, std::string detail);

  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t declared() const { return entries_.size(); }
  bool all_hold() const;
  // "invariants: 6 checked, all hold", or the failed ones, one indented line per kept detail.
  std::string summary() const;

 private:
  std::vector<Entry> entries_;
};

}  // namespace clustersim::sim
