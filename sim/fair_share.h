// Max-min fair sharing of capacities among variables (progressive filling), solved incrementally.
//
// The solver knows nothing of links or flows: a *constraint* is a capacity (e.g. a link direction,
// bytes/s) and a *variable* is a rate (e.g. a flow) bounded by every constraint it crosses and by
// an optional cap of its own. The max-min fair allocation raises all rates together; a variable
// stops rising when one of its constraints saturates (it then has the largest rate among that
// constraint's variables) or when it reaches its cap. Formally, for every variable v:
//     rate(v) = cap(v), or there is a constraint c ∋ v with Σ_{u∋c} rate(u) = capacity(c) and
//     rate(v) = max_{u∋c} rate(u).
//
// Incremental: adding or removing a variable, or changing a capacity, marks constraints dirty;
// solve() re-solves only the connected components (of the variable–constraint graph) that hold a
// dirty constraint, and reports the variables whose rate changed. A variable that arrives on idle
// constraints, or leaves them idle, touches nothing else and marks nothing dirty. Nothing is allocated inside
// solve() once the scratch buffers have grown to the largest component seen.
//
// Weights (multiplicity): a variable may stand for w identical flows on a constraint — it then
// counts w times in that constraint's usage (Σ w·rate ≤ capacity) and w times in its fair-share
// divisor, exactly as w separate variables with the same rate would. Symmetry folding uses this
// (workloads/collectives/channel_folding.h): one variable per class of flows that provably move in
// lockstep. Usage is subtracted one unit at a time so that a folded system does the same floating-
// point operations, in the same order, as the unfolded one (same levels, same rounding).
//
// Units are the caller's (clustersim uses bytes/s). Ids are dense; removed variable ids are reused.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace clustersim::sim {

using ConstraintId = std::uint32_t;
using VariableId = std::uint32_t;

inline constexpr int kMaxConstraintsPerVariable = 16;
inline constexpr double kUnlimited = std::numeric_limits<double>::infinity();

struct FairShareConfig {
  // Two shares within this relative distance are the same level (saturate together).
  double relative_tolerance = 1e-12;
};

struct FairShareStats {
  std::uint64_t solves = 0;           // calls to solve() that had work
  std::uint64_t components = 0;       // components re-solved
  std::uint64_t variables_visited = 0;
  std::uint64_t rate_changes = 0;
};

class FairShareSolver {
 public:
  explicit FairShareSolver(FairShareConfig config = {}) : config_(config) {}

  ConstraintId add_constraint(double capacity);
  void set_capacity(ConstraintId c, double capacity);
  double capacity(ConstraintId c) const { return constraints_[c].capacity; }
  std::size_t constraint_count() const { return constraints_.size(); }

  // A variable crossing `constraints` (at most kMaxConstraintsPerVariable, no duplicates) with
  // an optional cap. Its rate is 0 until the next solve(). `weights` (empty: all 1) gives, per
  // constraint, how many identical flows the variable stands for there (each >= 1).
  VariableId add_variable(std::span<const ConstraintId> constraints, double cap = kUnlimited,
                          std::span<const std::uint16_t> weights = {});
  void remove_variable(VariableId v);
  double rate(VariableId v) const { return variables_[v].rate; }
  bool is_live(VariableId v) const { return v < variables_.size() && variables_[v].live; }
  std::size_t live_variables() const { return live_count_; }
  // Variables currently crossing constraint c.
  std::span<const VariableId> variables_of(ConstraintId c) const { return constraints_[c].vars; }
  std::span<const ConstraintId> constraints_of(VariableId v) const {
    return {variables_[v].cons.data(), variables_[v].n};
  }
  double cap(VariableId v) const { return variables_[v].cap; }
  std::uint16_t weight(VariableId v, int k) const { return variables_[v].weight[static_cast<std::size_t>(k)]; }

  bool needs_solve() const { return !dirty_.empty() || !isolated_new_.empty(); }
  // Re-solves every dirty component. Returns the variables whose rate changed (valid until the
  // next call); newly added variables are always included.
  std::span<const VariableId> solve();
  const FairShareStats& stats() const { return stats_; }

 private:
  struct Constraint {
    double capacity = 0;
    std::vector<VariableId> vars;
    double remaining = 0;     // scratch: capacity not yet given to fixed variables
    std::uint32_t unfixed = 0;// scratch: Σ weights of unfixed variables
    std::uint32_t epoch = 0;  // scratch: component visit mark
    bool dirty = false;
  };
  struct Variable {
    double cap = kUnlimited;
    double rate = 0;
    double old_rate = -1;     // scratch
    std::array<ConstraintId, kMaxConstraintsPerVariable> cons{};
    std::array<std::uint32_t, kMaxConstraintsPerVariable> slot{};  // index in cons[k].vars
    std::array<std::uint16_t, kMaxConstraintsPerVariable> weight{};  // flows it stands for on cons[k]
    std::uint32_t epoch = 0;
    std::uint8_t n = 0;
    bool live = false;
    bool fixed = false;
    bool queued = false;      // in isolated_new_, awaiting its first rate
  };
  struct HeapEntry {
    double share;
    ConstraintId c;
  };

  void mark_dirty(ConstraintId c);
  void collect_component(ConstraintId start);
  void solve_component();
  void fix(VariableId v, double r);
  void push_share(ConstraintId c);
  double alone_rate(const Variable& var) const;

  FairShareConfig config_;
  std::vector<Constraint> constraints_;
  std::vector<Variable> variables_;
  std::vector<VariableId> free_ids_;
  std::vector<ConstraintId> dirty_;
  // Variables added onto constraints nobody else used: their component is themselves, so solve()
  // gives them min(cap, capacities) without a component search (unless a later arrival joined them,
  // which makes a constraint dirty and the search covers them).
  std::vector<VariableId> isolated_new_;
  std::size_t live_count_ = 0;
  std::uint32_t epoch_ = 0;
  // Scratch buffers reused by every solve.
  std::vector<ConstraintId> comp_cons_;
  std::vector<VariableId> comp_vars_;
  std::vector<VariableId> capped_;
  std::vector<HeapEntry> heap_;
  std::vector<VariableId> changed_;
  FairShareStats stats_;
};

// The from-scratch reference: straightforward progressive filling over a whole system, written
// independently of the incremental solver so tests can compare the two.
struct ReferenceVariable {
  std::vector<int> constraints;
  double cap = kUnlimited;
};
// Unweighted: a weighted variable is checked against its unfolded copies.
std::vector<double> reference_max_min(const std::vector<double>& capacities,
                                      const std::vector<ReferenceVariable>& variables);

}  // namespace clustersim::sim
