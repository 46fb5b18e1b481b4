// Incremental progressive filling (see fair_share.h for the canonical run and the invariant).
//
// solve(): gather the affected set from the dirty constraints (lowest threshold first), replay the
// kept variables' subtractions on each gathered constraint in `seq` order, then run the canonical
// filling over the affected set: an exact-key min-heap of shares (an entry is pushed whenever a
// share drops; a popped entry whose share has since grown is re-pushed, one that no longer matches
// is dropped, so the popped constraint always has the lowest current share), and the affected
// capped variables in cap order.
#include "sim/fair_share.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "sim/check.h"

namespace clustersim::sim {

namespace {
bool heap_after(double sa, ConstraintId ca, double sb, ConstraintId cb) {
  return sa > sb || (sa == sb && ca > cb);
}

// The hot loops' walk of a variable's constraints (head `h`): f(c, k) for each, k its position, in
// MemberRange's order, as one plain loop over the run or two over the halves (no per-step test for
// the second part).
template <class Head, class F>
inline void walk(const Head& h, const ConstraintId* ids, F&& f) {
  if (!h.split) {
    for (std::uint32_t k = 0; k < h.n; ++k) f(ids[h.off + k], k);
    return;
  }
  const std::uint32_t na = h.n / 2U;
  const ConstraintId* a = ids + ids[h.off];
  for (std::uint32_t k = 0; k < na; ++k) f(a[k], k);
  const ConstraintId* b = ids + ids[h.off + 1];
  for (std::uint32_t k = na; k < h.n; ++k) f(b[k - na], k);
}
}  // namespace

ConstraintId FairShareSolver::add_constraint(double capacity) {
  CLUSTERSIM_CHECK(capacity > 0 && std::isfinite(capacity), "constraint capacity must be positive and finite");
  constraints_.push_back(Constraint{});
  constraints_.back().capacity = capacity;
  return static_cast<ConstraintId>(constraints_.size() - 1);
}

void FairShareSolver::reset(std::size_t keep_constraints) {
  for (VariableId v = 0; v < head_.size(); ++v) {
    if ((head_[v].flags & (kLive | kPending)) == 0) continue;
    head_[v].flags &= static_cast<std::uint8_t>(~kPending);
    detach(v);
  }
  for (const ConstraintId c : dirty_) constraints_[c].dirty = false;
  // Every constraint now has no variable (a list left with tombstones only is compacted at once),
  // no weight and is clean, as added; its scratch fields
  // are rewritten before they are read, and its epoch is below the kept epoch counter.
  std::vector<Constraint> constraints = std::move(constraints_);
  if (constraints.size() > keep_constraints) constraints.resize(keep_constraints);
  std::vector<std::uint64_t> id_bits = std::move(id_bits_);  // all zero between solves
  const std::uint32_t epoch = epoch_;
  *this = FairShareSolver(config_);
  constraints_ = std::move(constraints);
  id_bits_ = std::move(id_bits);
  epoch_ = epoch;
}

void FairShareSolver::set_capacity(ConstraintId c, double capacity) {
  CLUSTERSIM_CHECK(capacity > 0 && std::isfinite(capacity), "constraint capacity must be positive and finite");
  Constraint& con = constraints_[c];
  const double lower = std::min(con.capacity, capacity);
  con.capacity = capacity;
  if (con.total_weight > 0) mark_dirty(c, lower / static_cast<double>(con.total_weight));
}

void FairShareSolver::mark_dirty(ConstraintId c, double threshold) {
  Constraint& con = constraints_[c];
  if (!con.dirty) {
    con.dirty = true;
    con.threshold = threshold;
    dirty_.push_back(c);
  } else {
    con.threshold = std::min(con.threshold, threshold);
  }
}

std::uint32_t FairShareSolver::alloc_members(std::size_t n) {
  if (n > 0 && free_blocks_[n] != kNone) {
    const std::uint32_t off = free_blocks_[n];
    free_blocks_[n] = member_c_[off];
    return off;
  }
  const auto off = static_cast<std::uint32_t>(member_c_.size());
  CLUSTERSIM_CHECK(member_c_.size() + n < std::numeric_limits<std::uint32_t>::max(), "too many memberships");
  member_c_.resize(member_c_.size() + n);
  if (!weights_.empty()) weights_.resize(member_c_.size());
  return off;
}

std::uint32_t FairShareSolver::alloc_block(std::span<const ConstraintId> cons, std::span<const std::uint16_t> weights) {
  CLUSTERSIM_CHECK(cons.size() <= kMaxConstraintsPerVariable, "too many constraints for one variable");
  CLUSTERSIM_CHECK(weights.empty() || weights.size() == cons.size(), "one weight per constraint");
  const std::uint32_t off = alloc_members(cons.size() + kCapEntries);
  std::copy(cons.begin(), cons.end(), member_c_.begin() + off);
  if (!weights.empty()) {
    if (weights_.size() < member_c_.size()) weights_.resize(member_c_.size());
    std::copy(weights.begin(), weights.end(), weights_.begin() + off);
  }
  return off;
}

void FairShareSolver::free_block(std::uint32_t off, std::size_t n) { free_members(off, n + kCapEntries); }

void FairShareSolver::free_members(std::uint32_t off, std::size_t size) {
  if (size == 0) return;  // no storage
  member_c_[off] = free_blocks_[size];
  free_blocks_[size] = off;
}

VariableId FairShareSolver::add_variable(std::span<const ConstraintId> cons, double cap,
                                         std::span<const std::uint16_t> weights) {
  CLUSTERSIM_CHECK(cons.size() <= kMaxConstraintsPerVariable, "too many constraints for one variable");
  CLUSTERSIM_CHECK(weights.empty() || weights.size() == cons.size(), "one weight per constraint");
  CLUSTERSIM_CHECK(!cons.empty() || std::isfinite(cap), "a variable needs a constraint or a finite cap");
  CLUSTERSIM_CHECK(cap > 0, "variable cap must be positive");
  VariableId v;
  if (!pending_.empty() && resurrect(cons, cap, weights.empty() ? nullptr : weights.data(), v)) return v;
  const std::uint8_t slot = cap_slot_of(cap);
  const bool split = config_.split_from != 0 && cons.size() >= config_.split_from && weights.empty() &&
                     (cap == kUnlimited || slot != 0);
  if (split) {
    // Two segment offsets; the halves are interned first (intern may grow member_c_, so the ids are
    // read from a copy, whoever's storage `cons` is).
    std::array<ConstraintId, kMaxConstraintsPerVariable> ids;
    std::copy(cons.begin(), cons.end(), ids.begin());
    const std::size_t h = cons.size() / 2;
    const std::uint32_t s0 = intern(ids.data(), h);
    const std::uint32_t s1 = intern(ids.data() + h, cons.size() - h);
    const std::uint32_t off = alloc_members(2);
    member_c_[off] = s0;
    member_c_[off + 1] = s1;
    return attach(off, std::span<const ConstraintId>(ids.data(), cons.size()), cap, false, false, slot, true);
  }
  const std::uint32_t off = alloc_var_block(cons, weights, slot != 0 ? kUnlimited : cap);
  return attach(off, block(off, cons.size()), cap, !weights.empty(), false, slot, false);
}

// The index slot where a segment with these ids is or would go (linear probing from its hash).
std::size_t FairShareSolver::segment_home(const ConstraintId* cons, std::size_t n) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
  for (std::size_t k = 0; k < n; ++k) h = (h ^ cons[k]) * 0xff51afd7ed558ccdULL;
  h ^= h >> 29;
  return static_cast<std::size_t>(h) & (seg_index_.size() - 1);
}

void FairShareSolver::index_segment(std::uint32_t off) {
  const std::size_t mask = seg_index_.size() - 1;
  std::size_t i = segment_home(member_c_.data() + off, member_c_[off - 1]);
  while (seg_index_[i] != kNone) i = (i + 1) & mask;
  seg_index_[i] = off;
}

void FairShareSolver::grow_segment_index() {
  std::vector<std::uint32_t> old(std::max<std::size_t>(64, 2 * seg_index_.size()), kNone);
  old.swap(seg_index_);
  for (const std::uint32_t off : old) {
    if (off != kNone) index_segment(off);
  }
}

// The segment holding exactly these ids (one more reference), interned now if none does; its offset.
std::uint32_t FairShareSolver::intern(const ConstraintId* cons, std::size_t n) {
  if (2 * (seg_live_ + 1) > seg_index_.size()) grow_segment_index();
  const std::size_t mask = seg_index_.size() - 1;
  std::size_t i = segment_home(cons, n);
  for (; seg_index_[i] != kNone; i = (i + 1) & mask) {
    const std::uint32_t off = seg_index_[i];
    if (member_c_[off - 1] == n && std::equal(cons, cons + n, member_c_.data() + off)) {
      CLUSTERSIM_CHECK(member_c_[off - 2] != std::numeric_limits<std::uint32_t>::max(), "too many uses of one segment");
      ++member_c_[off - 2];
      return off;
    }
  }
  const std::uint32_t off = alloc_members(kSegmentHeader + n) + kSegmentHeader;
  member_c_[off - 2] = 1;
  member_c_[off - 1] = static_cast<ConstraintId>(n);
  std::copy(cons, cons + n, member_c_.begin() + off);
  seg_index_[i] = off;
  ++seg_live_;
  return off;
}

// One reference fewer; the last gives the segment back (its index slot emptied by backward shift,
// so that every other segment stays reachable from its home slot).
void FairShareSolver::release_segment(std::uint32_t off) {
  if (--member_c_[off - 2] != 0) return;
  const std::uint32_t n = member_c_[off - 1];
  const std::size_t mask = seg_index_.size() - 1;
  std::size_t hole = segment_home(member_c_.data() + off, n);
  while (seg_index_[hole] != off) hole = (hole + 1) & mask;
  for (std::size_t j = (hole + 1) & mask; seg_index_[j] != kNone; j = (j + 1) & mask) {
    const std::uint32_t other = seg_index_[j];
    const std::size_t home = segment_home(member_c_.data() + other, member_c_[other - 1]);
    // Moves back unless its home lies cyclically in (hole, j].
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      seg_index_[hole] = seg_index_[j];
      hole = j;
    }
  }
  seg_index_[hole] = kNone;
  free_members(off - kSegmentHeader, kSegmentHeader + n);
  --seg_live_;
}

std::uint8_t FairShareSolver::cap_slot_of(double cap) {
  if (cap == kUnlimited) return 0;
  const auto bits = std::bit_cast<std::uint64_t>(cap);
  if (cap_slot_last_ != 0 && std::bit_cast<std::uint64_t>(cap_slots_[cap_slot_last_ - 1]) == bits) return cap_slot_last_;
  for (std::uint8_t k = 0; k < cap_slot_count_; ++k) {
    if (std::bit_cast<std::uint64_t>(cap_slots_[k]) == bits) return cap_slot_last_ = static_cast<std::uint8_t>(k + 1);
  }
  if (cap_slot_count_ == kCapSlots) return 0;  // kept in the block
  cap_slots_[cap_slot_count_++] = cap;
  return cap_slot_last_ = cap_slot_count_;
}

// A block for a new variable: its constraints (and weights), then, only when it is capped, its cap
// in two more entries of member_c_ (see Memory in fair_share.h).
std::uint32_t FairShareSolver::alloc_var_block(std::span<const ConstraintId> cons, std::span<const std::uint16_t> weights,
                                               double cap) {
  CLUSTERSIM_CHECK(cons.size() <= kMaxConstraintsPerVariable, "too many constraints for one variable");
  CLUSTERSIM_CHECK(weights.empty() || weights.size() == cons.size(), "one weight per constraint");
  const bool capped = cap != kUnlimited;
  const std::uint32_t off = alloc_members(cons.size() + (capped ? kCapEntries : 0));
  std::copy(cons.begin(), cons.end(), member_c_.begin() + off);
  if (!weights.empty()) {
    if (weights_.size() < member_c_.size()) weights_.resize(member_c_.size());
    std::copy(weights.begin(), weights.end(), weights_.begin() + off);
  }
  if (capped) std::memcpy(member_c_.data() + off + cons.size(), &cap, sizeof(cap));
  return off;
}

VariableId FairShareSolver::add_variable(std::uint32_t off, std::size_t count, double cap, bool weighted) {
  const std::span<const ConstraintId> cons = block(off, count);
  CLUSTERSIM_CHECK(!cons.empty() || std::isfinite(cap), "a variable needs a constraint or a finite cap");
  CLUSTERSIM_CHECK(cap > 0, "variable cap must be positive");
  VariableId v;
  if (!pending_.empty() && resurrect(cons, cap, weighted ? weights_.data() + off : nullptr, v)) {
    free_block(off, count);  // the resurrected variable keeps its own (identical) block
    return v;
  }
  if (cap != kUnlimited) std::memcpy(member_c_.data() + off + count, &cap, sizeof(cap));  // (the block's room)
  return attach(off, cons, cap, weighted, true, 0, false);
}

// A new variable on block `off` (checked by the caller, and no pending removal to take back).
// `cons` are its constraints (the block's own, or the caller's for a split variable).
VariableId FairShareSolver::attach(std::uint32_t off, std::span<const ConstraintId> cons, double cap, bool weighted,
                                   bool room, std::uint8_t cap_slot, bool split) {
  const std::uint16_t* wts = weighted ? weights_.data() + off : nullptr;
  VariableId v;
  std::uint8_t keep = 0;
  if (free_ids_ != kNone) {
    v = free_ids_;
    free_ids_ = static_cast<VariableId>(seq_[v]);
    keep = head_[v].flags & kQueued;  // a stale entry in isolated_new_ still stands for this id
  } else {
    v = static_cast<VariableId>(rate_.size());
    rate_.push_back(0);
    seq_.push_back(0);
    head_.push_back(VarHead{});
  }
  const auto n = static_cast<std::uint8_t>(cons.size());
  rate_[v] = 0;
  seq_[v] = 0;
  head_[v].off = off;
  head_[v].n = n & 31U;
  head_[v].split = split;
  head_[v].flags = static_cast<std::uint8_t>(kLive | keep);
  head_[v].weighted = weighted;
  head_[v].capped = cap != kUnlimited && cap_slot == 0;
  head_[v].room = room;
  head_[v].cap_slot = cap_slot & 31U;
  head_[v].refs = 0;
  bool isolated = true;
  double threshold = cap;
  for (std::size_t k = 0; k < cons.size(); ++k) {
    Constraint& c = constraints_[cons[k]];
    isolated = isolated && c.live() == 0;
    const std::uint16_t w = wts == nullptr ? std::uint16_t{1} : wts[k];
    CLUSTERSIM_CHECK(w >= 1, "a variable's weight on a constraint is at least 1");
    c.vars.push_back(v);
    c.total_weight += w;
    threshold = std::min(threshold, c.capacity / static_cast<double>(c.total_weight));
  }
  if (isolated) {
    if ((head_[v].flags & kQueued) == 0) {
      head_[v].flags |= kQueued;
      isolated_new_.push_back(v);
    }
  } else {
    for (std::size_t k = 0; k < cons.size(); ++k) mark_dirty(cons[k], threshold);
  }
  ++live_count_;
  return v;
}

// A solved variable waits for the next solve (see Resurrection in fair_share.h); one never solved
// changed nothing that was solved and goes at once.
void FairShareSolver::remove_variable(VariableId v) {
  CLUSTERSIM_CHECK(is_live(v), "removing a variable that is not live");
  --live_count_;
  if ((head_[v].flags & kSolved) == 0 || !config_.resurrect) {
    detach(v);
    return;
  }
  head_[v].flags = static_cast<std::uint8_t>((head_[v].flags & ~(kLive | kReport)) | kPending);
  pending_.push_back(v);
  if (pending_.size() < 2 * kResurrectWindow) return;
  // The oldest kResurrectWindow pending removals are out of every later add's search (it looks at
  // the last kResurrectWindow only), so they are carried out now, in order, rather than at the next
  // solve: pending_ stays below 2·kResurrectWindow entries instead of holding a wave of completions
  // (4 bytes per flow at the peak). An id removed again since (resurrected in between) is carried
  // out by its newer entry. Carried out before the solve, a removal can change which variables the
  // solve gathers (its thresholds are lower bounds either way), not the rates (fair_share.h).
  for (std::size_t i = 0; i < kResurrectWindow; ++i) {
    const VariableId u = pending_[i];
    if ((head_[u].flags & kPending) == 0) continue;  // taken back, or carried out already
    if (std::find(pending_.begin() + static_cast<std::ptrdiff_t>(i) + 1, pending_.end(), u) != pending_.end()) continue;
    head_[u].flags &= static_cast<std::uint8_t>(~kPending);
    detach(u);
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(kResurrectWindow));
}

bool FairShareSolver::same_variable(VariableId v, std::span<const ConstraintId> cons, double cap,
                                    const std::uint16_t* weights) const {
  if (head_[v].n != cons.size() || std::bit_cast<std::uint64_t>(this->cap(v)) != std::bit_cast<std::uint64_t>(cap)) return false;
  if (head_[v].weighted != (weights != nullptr)) {
    // Weighted against unweighted: the same only if every weight is 1.
    for (std::uint32_t k = 0; k < cons.size(); ++k) {
      if (weight_k(v, k) != (weights == nullptr ? 1 : weights[k])) return false;
    }
  } else if (weights != nullptr && !std::equal(weights, weights + cons.size(), weights_.data() + head_[v].off)) {
    return false;
  }
  std::size_t k = 0;
  for (const ConstraintId c : members(v)) {
    if (c != cons[k++]) return false;
  }
  return true;
}

// Takes back a pending removal identical to the variable being added, if one is among the last
// kResurrectWindow removals (a connection's next chunk follows its previous one's removal
// directly; an older match missed only costs the re-solve that would have happened anyway).
bool FairShareSolver::resurrect(std::span<const ConstraintId> cons, double cap, const std::uint16_t* weights,
                                VariableId& out) {
  const std::size_t window = std::min(pending_.size(), kResurrectWindow);
  for (std::size_t i = pending_.size(); i > pending_.size() - window; --i) {
    const VariableId v = pending_[i - 1];
    if ((head_[v].flags & kPending) == 0 || !same_variable(v, cons, cap, weights)) continue;
    head_[v].flags = static_cast<std::uint8_t>((head_[v].flags & ~kPending) | kLive);
    if ((head_[v].flags & kReport) == 0) {
      head_[v].flags |= kReport;
      resurrected_.push_back(v);
    }
    ++live_count_;
    ++stats_.resurrections;
    out = v;
    return true;
  }
  return false;
}

void FairShareSolver::carry_out_removals() {
  for (VariableId v : pending_) {
    if ((head_[v].flags & kPending) == 0) continue;  // taken back, or carried out already
    head_[v].flags &= static_cast<std::uint8_t>(~kPending);
    detach(v);
  }
  pending_.clear();
}

// Takes v off its constraints (the removal proper): its entries in their lists become tombstones
// (one at a list's end is dropped at once), and its id is freed once the last of them is gone.
void FairShareSolver::detach(VariableId v) {
  const std::uint32_t off = head_[v].off;
  const std::uint32_t n = head_[v].n;
  const bool solved = (head_[v].flags & kSolved) != 0;
  const double rate = rate_[v];
  head_[v].flags &= kQueued;
  head_[v].refs = static_cast<std::uint8_t>(n);
  rate_[v] = 0;
  if (n == 0) push_free_id(v);
  walk(head_[v], member_c_.data(), [&](ConstraintId cid, std::uint32_t k) {
    Constraint& c = constraints_[cid];
    c.total_weight -= weight_k(v, k);
    if (c.vars.back() == v) {
      // The last one added (a pipelined chunk's, or alone on c): dropped in place, the order kept.
      c.vars.pop_back();
      if (--head_[v].refs == 0) push_free_id(v);
    } else {
      ++c.dead;
    }
    if (c.dead > c.live()) compact(cid);  // (may free v's id: only its head and block are read below)
    const std::size_t live = c.live();
    // Others on this constraint may now rise from v's level up; an emptied constraint has nobody
    // to tell, and a variable never solved changed nothing that was solved.
    if (live > 0 && solved) mark_dirty(cid, rate);
  });
  if (head_[v].split) {
    release_segment(member_c_[off]);
    release_segment(member_c_[off + 1]);
    free_members(off, 2);
    return;
  }
  free_members(off, n + (head_[v].capped || head_[v].room ? kCapEntries : 0));
}

// A stable filter: the live entries keep their order; each tombstone dropped releases its
// variable's hold, and the last release frees the id.
void FairShareSolver::compact(ConstraintId cid) {
  Constraint& c = constraints_[cid];
  std::size_t out = 0;
  for (const VariableId u : c.vars) {
    if (head_[u].refs == 0) {
      c.vars[out++] = u;
    } else if (--head_[u].refs == 0) {
      push_free_id(u);
    }
  }
  c.vars.resize(out);
  c.dead = 0;
}

std::vector<VariableId> FairShareSolver::variables_of(ConstraintId c) const {
  std::vector<VariableId> out;
  for (const VariableId v : constraints_[c].vars) {
    if (head_[v].refs == 0) out.push_back(v);
  }
  return out;
}

// The solved variables' sequence numbers, replaced by their ranks (1, 2, ...; equal ones stay
// equal): only their order is ever read (replay_kept), so every solve after this one does what it
// would have done. Free ids (their seq_ chains the free list) and unsolved variables (0) are kept.
void FairShareSolver::renumber_seqs() {
  std::vector<std::pair<std::uint32_t, VariableId>> solved;
  for (VariableId v = 0; v < head_.size(); ++v) {
    if ((head_[v].flags & kSolved) != 0) solved.emplace_back(seq_[v], v);
  }
  std::sort(solved.begin(), solved.end());
  std::uint32_t rank = 0;
  for (std::size_t i = 0; i < solved.size(); ++i) {
    if (i == 0 || solved[i].first != solved[i - 1].first) ++rank;
    seq_[solved[i].second] = rank;
  }
  seq_counter_ = rank;
  ++stats_.renumberings;
}

std::vector<ConstraintId> FairShareSolver::constraints_of(VariableId v) const {
  std::vector<ConstraintId> out;
  for (const ConstraintId c : members(v)) out.push_back(c);
  return out;
}

namespace {
// Gives a scratch buffer back when it is large and this solve used under a quarter of it.
template <class V>
void trim(V& v, std::size_t used, std::size_t kept) {
  if (v.capacity() > kept && used < v.capacity() / 4) V().swap(v);
}
}  // namespace

void FairShareSolver::trim_scratch() {
  trim(comp_cons_, comp_cons_.size(), kKeptScratch);
  trim(comp_vars_, comp_vars_.size(), kKeptScratch);
  trim(old_rates_, old_rates_.size(), kKeptScratch);
  trim(capped_, capped_.size(), kKeptScratch);
  trim(heap_, comp_cons_.size(), kKeptScratch);
  trim(kept_, kept_.size(), kKeptScratch);
  trim(dirty_order_, dirty_order_.size(), kKeptScratch);
}

void FairShareSolver::release_report() {
  changed_.clear();
  changed_old_.clear();
  changed_had_.clear();
  if (changed_.capacity() > kKeptScratch) changed_.release();
  if (changed_old_.capacity() > kKeptScratch) changed_old_.release();
  if (changed_had_.capacity() > kKeptScratch / 64) changed_had_.release();
}

std::vector<double> FairShareSolver::old_rates_copy() const {
  std::vector<double> out;
  OldRates r = old_rates();
  for (std::size_t i = 0; i < changed_.size(); ++i) out.push_back(r.next());
  return out;
}

std::span<const VariableId> FairShareSolver::solve() {
  // The previous solve's report has been read: give it back only when that solve used under a
  // quarter of it (back-to-back large solves would otherwise regrow it every time).
  trim(changed_, changed_.size(), kKeptScratch);
  trim(changed_old_, changed_old_.size(), kKeptScratch);
  trim(changed_had_, changed_had_.size(), kKeptScratch / 64);
  changed_.clear();
  changed_old_.clear();
  changed_had_.clear();
  carry_out_removals();
  if (dirty_.empty() && isolated_new_.empty() && resurrected_.empty()) return changed_;
  // One solve takes at most one sequence number per variable fixed alone or new and alone, and
  // one per event of the filling (at most one per constraint or variable): renumber first when
  // that could pass the limit.
  if (seq_counter_ + 3 * static_cast<std::uint64_t>(head_.size()) + constraints_.size() + 1 >= config_.seq_limit) {
    renumber_seqs();
  }
  ++stats_.solves;
  ++epoch_;
  comp_cons_.clear();
  comp_vars_.clear();
  old_rates_.clear();
  if (!dirty_.empty()) {
    order_dirty();
    for (const auto& [threshold, c] : dirty_order_) {
      Constraint& con = constraints_[c];
      const VariableId only = only_variable(con);
      if (only != kNone && (head_[only].flags & kAlone) != 0) {
        take_alone(only, threshold);
        continue;
      }
      con.dirty = false;
      con.threshold = kUnlimited;
      if (con.epoch == epoch_) continue;  // gathered from a lower threshold already
      gather(c, threshold);
    }
    dirty_.clear();
    if (!comp_vars_.empty()) {
      ++stats_.components;
      stats_.variables_visited += comp_vars_.size();
      run_filling();
    }
  }
  for (VariableId v : isolated_new_) {
    head_[v].flags &= static_cast<std::uint8_t>(~kQueued);
    if (!is_live(v) || (head_[v].flags & (kAffected | kSolved)) != 0) continue;  // gone, or solved above
    rate_[v] = alone_rate(v);
    seq_[v] = static_cast<std::uint32_t>(++seq_counter_);
    head_[v].flags |= kSolved;
    ++stats_.components;
    ++stats_.variables_visited;
    changed_.push_back(v);  // (new: no old rate)
  }
  isolated_new_.clear();
  // (The filling's variables were marked solved by run_filling.)
  // Resurrected variables are reported like new ones (once, unless the filling already did).
  for (VariableId v : changed_) head_[v].flags &= static_cast<std::uint8_t>(~kReport);
  for (VariableId v : resurrected_) {
    if ((head_[v].flags & (kReport | kLive)) != (kReport | kLive)) continue;
    head_[v].flags &= static_cast<std::uint8_t>(~kReport);
    changed_.push_back(v);  // (reported as new: no old rate)
  }
  resurrected_.clear();
  stats_.rate_changes += changed_.size();
  trim_scratch();
  return changed_;
}

// dirty_order_: the dirty constraints, lowest threshold first, ties by id (the keys are copied
// next to the ids so that the sort reads one contiguous array; often already in order) — except
// that a variable alone on its constraints (see the header) has one entry, at the lowest key of
// its dirty constraints, which are cleaned here.
void FairShareSolver::order_dirty() {
  dirty_order_.clear();
  for (ConstraintId c : dirty_) {
    Constraint& con = constraints_[c];
    const VariableId v = only_variable(con);
    if (v != kNone && (head_[v].flags & kAlone) != 0) continue;  // entered already
    if (v == kNone || !alone(v)) {
      dirty_order_.emplace_back(con.threshold, c);
      continue;
    }
    head_[v].flags |= kAlone;
    std::pair<double, ConstraintId> first{kUnlimited, std::numeric_limits<ConstraintId>::max()};
    for (const ConstraintId c2 : members(v)) {
      Constraint& mine = constraints_[c2];
      if (!mine.dirty) continue;
      first = std::min(first, std::pair<double, ConstraintId>{mine.threshold, c2});
      mine.dirty = false;
      mine.threshold = kUnlimited;
    }
    dirty_order_.push_back(first);
  }
  sort_dirty_order();
}

// Sorts dirty_order_ by (threshold, id) as std::sort would, cheaply in the two common shapes: keys
// sorted but for a short tail (a timestamp's changes arrive in the order the previous solve
// reported its changes, plus a few stragglers): the tail is sorted and inserted; and one threshold
// for all (the links of one collective's step): the ids are set in a bit map over their range and
// read back in order, O(n + range / 64) instead of O(n log n). Nothing is allocated once the bit
// map has grown to the constraint count.
void FairShareSolver::sort_dirty_order() {
  constexpr std::size_t kMaxTail = 16;
  auto& keys = dirty_order_;
  const auto tail = std::is_sorted_until(keys.begin(), keys.end());
  if (tail == keys.end()) return;
  if (keys.end() - tail <= static_cast<std::ptrdiff_t>(kMaxTail)) {
    std::sort(tail, keys.end());
    for (auto it = tail; it != keys.end(); ++it) std::rotate(std::upper_bound(keys.begin(), it, *it), it, it + 1);
    return;
  }
  const double threshold = keys.front().first;
  ConstraintId lo = keys.front().second, hi = lo;
  bool one_threshold = true;
  for (const auto& [t, c] : keys) {
    one_threshold = one_threshold && t == threshold;
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  if (!one_threshold || (hi - lo) / 64 > 4 * keys.size()) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  if (id_bits_.size() * 64 < constraints_.size()) id_bits_.resize(constraints_.size() / 64 + 1, 0);
  for (const auto& key : keys) id_bits_[key.second / 64] |= std::uint64_t{1} << (key.second % 64);
  std::size_t out = 0;
  for (std::size_t w = lo / 64; w <= hi / 64; ++w) {
    for (std::uint64_t bits = id_bits_[w]; bits != 0; bits &= bits - 1) {
      keys[out++] = {threshold, static_cast<ConstraintId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)))};
    }
    id_bits_[w] = 0;
  }
}

bool FairShareSolver::alone(VariableId v) const {
  for (const ConstraintId c : members(v)) {
    if (constraints_[c].live() != 1) return false;
  }
  return true;
}

// Joins the affected set already fixed at its alone rate (one event of its own), at the place the
// gather from its lowest dirty constraint would have put it, and on the same terms (kept if solved
// below the threshold); run_filling() skips it but for reporting a change.
void FairShareSolver::take_alone(VariableId v, double threshold) {
  const std::uint8_t f = head_[v].flags & static_cast<std::uint8_t>(~kAlone);
  head_[v].flags = f;
  if ((f & kSolved) != 0 && rate_[v] < threshold * (1 - config_.threshold_margin)) return;  // kept
  head_[v].flags = static_cast<std::uint8_t>(f | kAffected | kFixed);
  comp_vars_.push_back(v);
  if ((f & kSolved) != 0) old_rates_.push_back(rate_[v]);
  rate_[v] = alone_rate(v);
  seq_[v] = static_cast<std::uint32_t>(++seq_counter_);
  ++alone_fixed_;
}

// Breadth-first from `start`: a variable on a gathered constraint is affected unless it was fixed
// below the threshold; an affected variable gathers all its constraints.
void FairShareSolver::gather(ConstraintId start, double threshold) {
  const double keep_below = threshold * (1 - config_.threshold_margin);
  constraints_[start].epoch = epoch_;
  std::size_t i = comp_cons_.size();
  comp_cons_.push_back(start);
  for (; i < comp_cons_.size(); ++i) {
    if (constraints_[comp_cons_[i]].dead != 0) compact(comp_cons_[i]);  // read in full anyway
    for (VariableId v : constraints_[comp_cons_[i]].vars) {
      const std::uint8_t f = head_[v].flags;
      if ((f & kAffected) != 0) continue;
      if ((f & kSolved) != 0 && rate_[v] < keep_below) continue;  // kept
      head_[v].flags = static_cast<std::uint8_t>(f | kAffected);
      comp_vars_.push_back(v);
      if ((f & kSolved) != 0) old_rates_.push_back(rate_[v]);
      walk(head_[v], member_c_.data(), [&](ConstraintId cid, std::uint32_t) {
        Constraint& c = constraints_[cid];
        if (c.epoch != epoch_) {
          c.epoch = epoch_;
          comp_cons_.push_back(cid);
        }
      });
    }
  }
}

// The gathered constraint's state at the point where the canonical run reaches the affected set:
// capacity minus its kept variables, subtracted in the order the run fixed them.
void FairShareSolver::replay_kept(ConstraintId c) {
  Constraint& con = constraints_[c];
  con.remaining = con.capacity;
  kept_.clear();
  bool one_rate = true;
  for (VariableId v : con.vars) {
    if ((head_[v].flags & kAffected) != 0) continue;
    one_rate = one_rate && (kept_.empty() || rate_[v] == rate_[kept_.front().second]);
    kept_.emplace_back(seq_[v], v);
  }
  if (kept_.empty()) return;
  // Equal rates subtract the same value: any order gives the same bits.
  if (!one_rate) std::sort(kept_.begin(), kept_.end());
  for (const auto& [seq, v] : kept_) {
    std::uint16_t w = 1;
    if (head_[v].weighted) {  // (never split: its block is one run)
      for (std::uint32_t j = head_[v].off; j < head_[v].off + head_[v].n; ++j) {
        if (member_c_[j] == c) {
          w = weights_[j];
          break;
        }
      }
    }
    const double r = rate_[v];
    for (std::uint16_t k = 0; k < w; ++k) con.remaining = std::max(0.0, con.remaining - r);
  }
}

// heap_ is a binary min-heap of (share, id) with at most one entry per constraint, whose index the
// constraint keeps (heap_pos), so a dropped share lowers the key in place. (Pushing a new entry
// per drop, as before, picked the same constraint at every event but held a stale entry per drop:
// 12 bytes per flow at the peak of the 1,024-GPU unfolded all-to-all, docs/benchmarks.md.) An entry's key is at most its constraint's
// share: a share that grows is re-keyed only when its entry reaches the top (saturate_lowest).
void FairShareSolver::heap_up(std::size_t i) {
  const HeapEntry e = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!heap_after(heap_[parent].share, heap_[parent].c, e.share, e.c)) break;
    heap_[i] = heap_[parent];
    constraints_[heap_[i].c].heap_pos = static_cast<std::uint32_t>(i);
    i = parent;
  }
  heap_[i] = e;
  constraints_[e.c].heap_pos = static_cast<std::uint32_t>(i);
}

void FairShareSolver::heap_down(std::size_t i) {
  const HeapEntry e = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_after(heap_[child].share, heap_[child].c, heap_[child + 1].share, heap_[child + 1].c)) ++child;
    if (!heap_after(e.share, e.c, heap_[child].share, heap_[child].c)) break;
    heap_[i] = heap_[child];
    constraints_[heap_[i].c].heap_pos = static_cast<std::uint32_t>(i);
    i = child;
  }
  heap_[i] = e;
  constraints_[e.c].heap_pos = static_cast<std::uint32_t>(i);
}

void FairShareSolver::heap_pop() {
  constraints_[heap_.front().c].heap_pos = kNone;
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  if (heap_.empty()) return;
  heap_[0] = last;
  heap_down(0);
}

void FairShareSolver::queue_share(ConstraintId c) {
  Constraint& con = constraints_[c];
  if (con.heap_pos == kNone) {
    con.heap_pos = static_cast<std::uint32_t>(heap_.size());
    heap_.push_back(HeapEntry{con.share, c});
  } else if (con.share < heap_[con.heap_pos].share) {
    heap_[con.heap_pos].share = con.share;  // (a key below the share, after the share grew, is kept)
  } else {
    return;
  }
  heap_up(con.heap_pos);
}

// A variable alone on its constraints: the canonical run's single event (its w copies split each
// capacity evenly, as w separate variables would).
double FairShareSolver::alone_rate(VariableId v) const {
  double level = kUnlimited;
  std::uint32_t k = 0;
  for (const ConstraintId c : members(v)) level = std::min(level, constraints_[c].capacity / weight_k(v, k++));
  const double c = cap(v);
  return c <= level * (1 + config_.relative_tolerance) ? c : level;
}

void FairShareSolver::fix(VariableId v, double r) {
  head_[v].flags |= kFixed;
  rate_[v] = r;
  seq_[v] = static_cast<std::uint32_t>(seq_counter_);
  walk(head_[v], member_c_.data(), [&](ConstraintId c, std::uint32_t k) {
    Constraint& con = constraints_[c];
    const std::uint16_t weight = weight_k(v, k);
    // One copy at a time: the same subtractions, in the same order, as unfolded copies.
    for (std::uint16_t w = 0; w < weight; ++w) con.remaining = std::max(0.0, con.remaining - r);
    con.unfixed -= weight;
    if (con.unfixed == 0) return;
    const double share = con.remaining / con.unfixed;
    const bool dropped = share < con.share;
    con.share = share;
    if (dropped) queue_share(c);
  });
}

// The lowest current share among constraints with unfixed variables (kUnlimited when none); the
// heap's top entry is then that constraint's.
bool FairShareSolver::saturate_lowest(double& level) {
  while (!heap_.empty()) {
    const HeapEntry top = heap_.front();
    const Constraint& con = constraints_[top.c];
    if (con.unfixed != 0 && top.share == con.share) {
      level = top.share;
      return true;
    }
    if (con.unfixed != 0) {  // grew since (an entry's key is never above its share): re-keyed
      heap_.front().share = con.share;
      heap_down(0);
    } else {
      heap_pop();
    }
  }
  level = kUnlimited;
  return false;
}

void FairShareSolver::run_filling() {
  const auto after = [](const HeapEntry& a, const HeapEntry& b) { return heap_after(a.share, a.c, b.share, b.c); };
  for (ConstraintId c : comp_cons_) {
    constraints_[c].unfixed = 0;
    constraints_[c].heap_pos = kNone;
  }
  capped_.clear();
  for (VariableId v : comp_vars_) {
    if ((head_[v].flags & kFixed) != 0) continue;  // alone, fixed already (take_alone)
    walk(head_[v], member_c_.data(),
         [&](ConstraintId c, std::uint32_t k) { constraints_[c].unfixed += weight_k(v, k); });
    if (head_[v].has_cap()) capped_.push_back(v);
  }
  heap_.clear();
  for (ConstraintId c : comp_cons_) {
    Constraint& con = constraints_[c];
    if (con.unfixed == 0) continue;
    replay_kept(c);
    con.share = con.remaining / con.unfixed;
    heap_.push_back(HeapEntry{con.share, c});
  }
  std::make_heap(heap_.begin(), heap_.end(), after);
  for (std::size_t i = 0; i < heap_.size(); ++i) constraints_[heap_[i].c].heap_pos = static_cast<std::uint32_t>(i);
  // Capped variables by cap; equal caps are fixed in one event, so their order does not matter.
  // A collective's flows mostly share one cap: then they are in order already, and std::sort over
  // equal keys would still cost n log n (a fifth of a contended tree replay's time, session 22).
  const auto by_cap = [this](VariableId a, VariableId b) { return cap(a) < cap(b); };
  if (!std::is_sorted(capped_.begin(), capped_.end(), by_cap)) std::sort(capped_.begin(), capped_.end(), by_cap);

  std::size_t next_capped = 0;
  std::size_t fixed = alone_fixed_;
  alone_fixed_ = 0;
  const double tol = config_.relative_tolerance;
  while (fixed < comp_vars_.size()) {
    double level = kUnlimited;
    const bool saturating = saturate_lowest(level);
    while (next_capped < capped_.size() && (head_[capped_[next_capped]].flags & kFixed) != 0) ++next_capped;
    if (next_capped < capped_.size() && this->cap(capped_[next_capped]) <= level * (1 + tol)) {
      const double cap = this->cap(capped_[next_capped]);
      ++seq_counter_;
      for (; next_capped < capped_.size() && this->cap(capped_[next_capped]) == cap; ++next_capped) {
        if ((head_[capped_[next_capped]].flags & kFixed) != 0) continue;
        fix(capped_[next_capped], cap);
        ++fixed;
      }
      continue;
    }
    CLUSTERSIM_CHECK(saturating, "an unfixed variable has no constraint and no cap");
    const ConstraintId level_c = heap_.front().c;
    heap_pop();
    ++seq_counter_;
    for (VariableId v : constraints_[level_c].vars) {
      if ((head_[v].flags & (kAffected | kFixed)) != kAffected) continue;
      fix(v, level);
      ++fixed;
    }
  }
  // The report is written in place over comp_vars_ and old_rates_ (entry i goes to kept <= i, an
  // old rate to one at or before where it was read), which then become changed_ and changed_old_:
  // a large solve holds 4 bytes per affected variable, 8 more per one solved before, for its
  // scratch and its report together, plus a bit per reported one. A variable was solved before iff
  // it has kSolved still (the filling only adds kAffected and kFixed), which is when the gather
  // pushed its old rate. solve() appends to the report only after the filling, so it is empty
  // here. Each affected variable is marked solved on the way (what solve() did after the filling;
  // it reads only kAffected | kSolved meanwhile).
  CLUSTERSIM_CHECK(changed_.empty() && changed_had_.empty(), "the filling's variables are reported first");
  std::size_t kept = 0, read = 0, kept_old = 0;
  for (std::size_t i = 0; i < comp_vars_.size(); ++i) {
    const VariableId v = comp_vars_[i];
    const std::uint8_t f = head_[v].flags;
    const bool had = (f & kSolved) != 0;
    const double old = had ? old_rates_[read++] : 0.0;
    head_[v].flags = static_cast<std::uint8_t>((f & ~(kAffected | kFixed)) | kSolved);
    if (had && rate_[v] == old) continue;
    comp_vars_[kept] = v;
    if (kept % 64 == 0) changed_had_.push_back(0);
    // A resurrected variable is reported as a new one (its rate before: 0).
    if (had && (f & kReport) == 0) {
      old_rates_[kept_old++] = old;
      changed_had_.back() |= std::uint64_t{1} << (kept % 64);
    }
    ++kept;
  }
  CLUSTERSIM_CHECK(read == old_rates_.size(), "one old rate per affected variable solved before");
  comp_vars_.resize(kept);
  old_rates_.resize(kept_old);
  changed_.swap(comp_vars_);
  changed_old_.swap(old_rates_);
  comp_vars_.clear();
  old_rates_.clear();
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
