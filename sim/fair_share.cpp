// Incremental progressive filling (see fair_share.h for the model and its invariant).
//
// Per dirty component: every constraint starts with its full capacity and all its variables
// unfixed. Repeatedly take the lowest fair share `remaining / unfixed` over constraints (a lazy
// min-heap: shares only grow as variables are fixed at or below them, so a stale entry is never
// too large) and the lowest cap among unfixed capped variables; whichever is lower fixes its
// variables at that level and subtracts them from every constraint they cross.
#include "sim/fair_share.h"

#include <algorithm>
#include <cmath>

#include "sim/check.h"

namespace clustersim::sim {

ConstraintId FairShareSolver::add_constraint(double capacity) {
  CLUSTERSIM_CHECK(capacity > 0 && std::isfinite(capacity), "constraint capacity must be positive and finite");
  constraints_.push_back(Constraint{});
  constraints_.back().capacity = capacity;
  return static_cast<ConstraintId>(constraints_.size() - 1);
}

void FairShareSolver::set_capacity(ConstraintId c, double capacity) {
  CLUSTERSIM_CHECK(capacity > 0 && std::isfinite(capacity), "constraint capacity must be positive and finite");
  constraints_[c].capacity = capacity;
  mark_dirty(c);
}

void FairShareSolver::mark_dirty(ConstraintId c) {
  if (!constraints_[c].dirty) {
    constraints_[c].dirty = true;
    dirty_.push_back(c);
  }
}

VariableId FairShareSolver::add_variable(std::span<const ConstraintId> cons, double cap,
                                         std::span<const std::uint16_t> weights) {
  CLUSTERSIM_CHECK(cons.size() <= kMaxConstraintsPerVariable, "too many constraints for one variable");
  CLUSTERSIM_CHECK(weights.empty() || weights.size() == cons.size(), "one weight per constraint");
  CLUSTERSIM_CHECK(!cons.empty() || std::isfinite(cap), "a variable needs a constraint or a finite cap");
  CLUSTERSIM_CHECK(cap > 0, "variable cap must be positive");
  VariableId v;
  if (!free_ids_.empty()) {
    v = free_ids_.back();
    free_ids_.pop_back();
  } else {
    v = static_cast<VariableId>(variables_.size());
    variables_.emplace_back();
  }
  Variable& var = variables_[v];
  var.cap = cap;
  var.rate = 0;
  var.old_rate = -1;
  var.n = static_cast<std::uint8_t>(cons.size());
  var.live = true;
  var.epoch = 0;
  bool isolated = true;
  for (std::size_t k = 0; k < cons.size(); ++k) isolated = isolated && constraints_[cons[k]].vars.empty();
  for (std::size_t k = 0; k < cons.size(); ++k) {
    Constraint& c = constraints_[cons[k]];
    var.cons[k] = cons[k];
    var.weight[k] = weights.empty() ? std::uint16_t{1} : weights[k];
    CLUSTERSIM_CHECK(var.weight[k] >= 1, "a variable's weight on a constraint is at least 1");
    var.slot[k] = static_cast<std::uint32_t>(c.vars.size());
    c.vars.push_back(v);
    if (!isolated) mark_dirty(cons[k]);
  }
  if (isolated && !var.queued) {
    var.queued = true;
    isolated_new_.push_back(v);
  }
  ++live_count_;
  return v;
}

void FairShareSolver::remove_variable(VariableId v) {
  Variable& var = variables_[v];
  CLUSTERSIM_CHECK(var.live, "removing a variable that is not live");
  for (int k = 0; k < var.n; ++k) {
    Constraint& c = constraints_[var.cons[k]];
    const std::uint32_t s = var.slot[k];
    const VariableId last = c.vars.back();
    c.vars[s] = last;
    c.vars.pop_back();
    if (last != v) {
      Variable& moved = variables_[last];
      for (int j = 0; j < moved.n; ++j) {
        if (moved.cons[j] == var.cons[k]) {
          moved.slot[j] = s;
          break;
        }
      }
    }
    // Others on this constraint may now rise; an emptied constraint has nobody to tell.
    if (!c.vars.empty()) mark_dirty(var.cons[k]);
  }
  var.live = false;
  var.rate = 0;
  free_ids_.push_back(v);
  --live_count_;
}

std::span<const VariableId> FairShareSolver::solve() {
  changed_.clear();
  if (dirty_.empty() && isolated_new_.empty()) return changed_;
  ++stats_.solves;
  ++epoch_;
  for (ConstraintId c : dirty_) {
    constraints_[c].dirty = false;
    if (constraints_[c].epoch == epoch_ || constraints_[c].vars.empty()) continue;
    collect_component(c);
    solve_component();
  }
  dirty_.clear();
  for (VariableId v : isolated_new_) {
    Variable& var = variables_[v];
    var.queued = false;
    if (!var.live || var.epoch == epoch_) continue;  // gone, or solved with a component above
    const double r = alone_rate(var);
    var.rate = r;
    var.old_rate = r;
    ++stats_.components;
    ++stats_.variables_visited;
    changed_.push_back(v);
  }
  isolated_new_.clear();
  stats_.rate_changes += changed_.size();
  return changed_;
}

void FairShareSolver::collect_component(ConstraintId start) {
  comp_cons_.clear();
  comp_vars_.clear();
  constraints_[start].epoch = epoch_;
  comp_cons_.push_back(start);
  for (std::size_t i = 0; i < comp_cons_.size(); ++i) {
    for (VariableId v : constraints_[comp_cons_[i]].vars) {
      Variable& var = variables_[v];
      if (var.epoch == epoch_) continue;
      var.epoch = epoch_;
      comp_vars_.push_back(v);
      for (int k = 0; k < var.n; ++k) {
        Constraint& c = constraints_[var.cons[k]];
        if (c.epoch != epoch_) {
          c.epoch = epoch_;
          comp_cons_.push_back(var.cons[k]);
        }
      }
    }
  }
}

void FairShareSolver::push_share(ConstraintId c) {
  const Constraint& con = constraints_[c];
  heap_.push_back(HeapEntry{con.remaining / con.unfixed, c});
  std::push_heap(heap_.begin(), heap_.end(), [](const HeapEntry& a, const HeapEntry& b) {
    return a.share > b.share || (a.share == b.share && a.c > b.c);
  });
}

// A variable alone on its constraints: its w copies split each capacity evenly, as w separate
// variables would (the component solve's first level, capacity / w).
double FairShareSolver::alone_rate(const Variable& var) const {
  double r = var.cap;
  for (int k = 0; k < var.n; ++k) r = std::min(r, constraints_[var.cons[k]].capacity / var.weight[k]);
  return r;
}

void FairShareSolver::fix(VariableId v, double r) {
  Variable& var = variables_[v];
  var.fixed = true;
  var.rate = r;
  for (int k = 0; k < var.n; ++k) {
    Constraint& c = constraints_[var.cons[k]];
    // One copy at a time: the same subtractions, in the same order, as unfolded copies.
    for (std::uint16_t w = 0; w < var.weight[k]; ++w) c.remaining = std::max(0.0, c.remaining - r);
    c.unfixed -= var.weight[k];
  }
}

void FairShareSolver::solve_component() {
  ++stats_.components;
  stats_.variables_visited += comp_vars_.size();

  // Fast path: one variable alone on its constraints.
  if (comp_vars_.size() == 1) {
    Variable& var = variables_[comp_vars_[0]];
    const double r = alone_rate(var);
    if (r != var.rate || var.old_rate < 0) changed_.push_back(comp_vars_[0]);
    var.rate = r;
    var.old_rate = r;
    return;
  }

  const auto heap_less = [](const HeapEntry& a, const HeapEntry& b) {
    return a.share > b.share || (a.share == b.share && a.c > b.c);
  };
  heap_.clear();
  capped_.clear();
  for (ConstraintId c : comp_cons_) {
    Constraint& con = constraints_[c];
    con.remaining = con.capacity;
    con.unfixed = 0;
    heap_.push_back(HeapEntry{0.0, c});
  }
  for (VariableId v : comp_vars_) {
    const Variable& var = variables_[v];
    for (int k = 0; k < var.n; ++k) constraints_[var.cons[k]].unfixed += var.weight[k];
  }
  for (HeapEntry& e : heap_) e.share = constraints_[e.c].remaining / constraints_[e.c].unfixed;
  std::make_heap(heap_.begin(), heap_.end(), heap_less);
  for (VariableId v : comp_vars_) {
    Variable& var = variables_[v];
    var.old_rate = var.old_rate < 0 ? -1.0 : var.rate;
    var.fixed = false;
    if (std::isfinite(var.cap)) capped_.push_back(v);
  }
  // Capped variables are taken lowest cap first. Flows of one collective usually share one cap:
  // then the component's visit order (deterministic) is already an order, and the sort is skipped.
  bool one_cap = true;
  for (VariableId v : capped_) one_cap = one_cap && variables_[v].cap == variables_[capped_.front()].cap;
  if (!one_cap) {
    std::sort(capped_.begin(), capped_.end(), [this](VariableId a, VariableId b) {
      return variables_[a].cap < variables_[b].cap || (variables_[a].cap == variables_[b].cap && a < b);
    });
  }

  std::size_t next_capped = 0;
  std::size_t fixed = 0;
  const double tol = config_.relative_tolerance;
  while (fixed < comp_vars_.size()) {
    // Lowest current share among constraints that still have unfixed variables.
    double level = kUnlimited;
    ConstraintId level_c = 0;
    while (!heap_.empty()) {
      const HeapEntry top = heap_.front();
      const Constraint& con = constraints_[top.c];
      if (con.unfixed == 0) {
        std::pop_heap(heap_.begin(), heap_.end(), heap_less);
        heap_.pop_back();
        continue;
      }
      const double share = con.remaining / con.unfixed;
      if (share > top.share * (1 + tol) + 1e-300) {  // stale: re-insert with the grown share
        std::pop_heap(heap_.begin(), heap_.end(), heap_less);
        heap_.pop_back();
        push_share(top.c);
        continue;
      }
      level = share;
      level_c = top.c;
      break;
    }
    while (next_capped < capped_.size() && variables_[capped_[next_capped]].fixed) ++next_capped;
    if (next_capped < capped_.size() && variables_[capped_[next_capped]].cap <= level * (1 + tol)) {
      fix(capped_[next_capped], variables_[capped_[next_capped]].cap);
      ++fixed;
      continue;
    }
    CLUSTERSIM_CHECK(std::isfinite(level), "an unfixed variable has no constraint and no cap");
    // Saturate level_c: every unfixed variable on it gets the level.
    std::pop_heap(heap_.begin(), heap_.end(), heap_less);
    heap_.pop_back();
    for (VariableId v : constraints_[level_c].vars) {
      if (variables_[v].fixed) continue;
      fix(v, level);
      ++fixed;
    }
  }
  for (VariableId v : comp_vars_) {
    Variable& var = variables_[v];
    if (var.old_rate < 0 || var.rate != var.old_rate) changed_.push_back(v);
    var.old_rate = var.rate;
  }
}

std::vector<double> reference_max_min(const std::vector<double>& capacities,
                                      const std::vector<ReferenceVariable>& variables) {
  const std::size_t nv = variables.size();
  std::vector<double> rate(nv, 0.0);
  std::vector<bool> done(nv, false);
  std::vector<double> remaining = capacities;
  std::size_t left = nv;
  while (left > 0) {
    // The level at which the next constraint saturates or the next variable hits its cap.
    double level = kUnlimited;
    for (std::size_t c = 0; c < capacities.size(); ++c) {
      int users = 0;
      for (std::size_t v = 0; v < nv; ++v) {
        if (done[v]) continue;
        for (int k : variables[v].constraints) users += (k == static_cast<int>(c));
      }
      if (users > 0) level = std::min(level, remaining[c] / users);
    }
    for (std::size_t v = 0; v < nv; ++v) {
      if (!done[v]) level = std::min(level, variables[v].cap);
    }
    // Fix every variable that is capped at the level or crosses a constraint saturated at it.
    std::vector<std::size_t> now;
    for (std::size_t v = 0; v < nv; ++v) {
      if (done[v]) continue;
      bool stop = variables[v].cap <= level * (1 + 1e-12);
      for (int c : variables[v].constraints) {
        int users = 0;
        for (std::size_t u = 0; u < nv; ++u) {
          if (done[u]) continue;
          for (int k : variables[u].constraints) users += (k == c);
        }
        if (remaining[c] / users <= level * (1 + 1e-12)) stop = true;
      }
      if (stop) now.push_back(v);
    }
    for (std::size_t v : now) {
      rate[v] = level;
      done[v] = true;
      --left;
      for (int c : variables[v].constraints) remaining[c] = std::max(0.0, remaining[c] - level);
    }
  }
  return rate;
}

}  // namespace clustersim::sim
