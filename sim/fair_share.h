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
// The canonical run (what "from scratch" means, bit for bit). Progressive filling as a sequence of
// *events*: each event either saturates the constraint with the lowest current share
// remaining/unfixed (ties: lowest constraint id; keys are exact, never stale) and fixes every
// unfixed variable on it at that share, or, when the lowest cap of an unfixed variable is at or
// below that share (relative tolerance), fixes every unfixed variable with that cap at it. Fixing
// subtracts the rate from each of the variable's constraints, once per unit of weight. The result
// depends only on the set of variables (constraints, caps, weights) and the capacities — not on
// ids, insertion order or history — because all choices are by value and every group fixed in one
// event subtracts one and the same value.
//
// Incremental, exactly (the invariant). Every variable remembers the event that fixed it (`seq`, a
// counter that only grows) and its rate. A change is a variable added, a variable removed, or a
// capacity changed; each has a *threshold* T below which the canonical run cannot change:
//   - removing v: T = rate(v) (v rose with the water on its constraints until then; removing it
//     only raises their shares, so no event below its level moves);
//   - adding v: T = min(cap(v), min over its constraints c of capacity(c) / Σ weights on c), a
//     lower bound on the level at which any of v's constraints can saturate with v on it;
//   - capacity(c) changed: T = min(old, new capacity) / Σ weights on c.
// Every event at a level below T is unchanged, so a variable fixed below T keeps its rate. solve()
// gathers the *affected set*: starting from the changed constraints (lowest threshold first), every
// variable on a gathered constraint whose rate is >= T·(1 − kThresholdMargin) (or that is new) is
// affected and gathers its other constraints. Variables fixed below the threshold are not touched
// beyond being read, and nothing outside the gathered constraints is read at all (a var that meets
// the affected set only through kept variables is independent of it above T). On each gathered
// constraint, the kept variables are subtracted from the capacity in the order of their `seq` (the
// order the canonical run subtracts them), then the canonical run resumes over the affected set.
// So the rates equal a from-scratch solve of the whole system bit for bit
// (tests/sim/fair_share_incremental_test.cpp checks thousands of random add/remove sequences).
//
// Alone at solve time. A variable that is the only one on every constraint it crosses when solve()
// runs is its own component: the canonical run's one event for it gives it min(cap, capacity /
// weight over its constraints), whatever the rest of the system does, and its `seq` orders it
// against nobody. A lockstep ring makes this the common case in a dirty set: at one timestamp a
// rank's next send is added while its previous send on the same links still runs (not alone when
// added: its constraints are marked dirty), then the previous send is removed. solve() gives such
// a variable that rate directly instead of gathering it and running the filling over its
// constraints, and keeps its place in the affected-set order (it stands at the lowest (threshold,
// id) of its dirty constraints, where the gather would have reached it), so the changed variables
// come back in the same order as before.
//
// Weights (multiplicity): a variable may stand for w identical flows on a constraint — it then
// counts w times in that constraint's usage (Σ w·rate ≤ capacity) and w times in its fair-share
// divisor, exactly as w separate variables with the same rate would. Symmetry folding uses this
// (workloads/collectives/channel_folding.h): one variable per class of flows that provably move in
// lockstep. Usage is subtracted one unit at a time so that a folded system does the same floating-
// point operations, in the same order, as the unfolded one (same levels, same rounding).
//
// Memory: struct-of-arrays per variable (rate, seq, and a head of block offset, count and flags:
// 20 bytes; a capped variable names its cap by a 5-bit slot in its head, in a table of the
// solver's distinct caps (at most 31; a collective's flows share one or two), and only a cap that
// finds the table full, or one given with a block (alloc_block), follows its constraints in its
// block, in two more membership entries) plus, per constraint crossed, its id (pooled blocks, 4
// bytes; a split variable holds two segment offsets instead, see Split memberships) and one 4-byte
// entry in the constraint's list; weights (2 bytes per
// constraint) only for weighted variables, in a pool that unweighted systems never grow. A caller
// may allocate a block before adding its variable (alloc_block), hand it to add_variable and read
// it back with block() or members() (the network model keeps a waiting flow's route in its own
// PendingPool instead: 4 bytes per hop, or none (start_rebuilt), given back between stages). Nothing is allocated
// per add/remove/solve once the pools and scratch buffers have grown to their peaks, except that a
// scratch buffer over kKeptScratch entries is given back after a solve that used under a quarter
// of it and grown again by the next large solve (free lists are intrusive: no memory of their own).
// The report (solve()'s ids, 4 bytes each, and old_rates(): 8 bytes only per variable that had a
// rate, plus one bit each) is given back as soon as the caller says it has read it
// (release_report), rather than staying resident until the next solve.
//
// Split memberships (interned halves). A flow's route up to the middle of its path depends on
// fewer things than the whole route (in a fat tree: the hops up to the spine on the source and the
// spine, those after it on the spine and the destination), so many variables share each half while
// no two share the whole (one flow per (source, destination) pair). An unweighted variable of at
// least `split_from` constraints whose cap is not kept in its block is stored *split*: its block
// holds the offsets in member_c_ of two segments (8 bytes instead of 4 per constraint), the first
// its constraints [0, n/2), the second [n/2, n), each an interned run of constraint ids shared by
// all variables (the halves' lengths follow from n; a segment's reference count and length are the
// two entries before its run, so a walk reads the block and the two runs, nothing else; a segment
// no variable uses is given back with its block). Every loop over
// a variable's constraints visits one run of member_c_ or the two segments in order (MemberRange;
// the solver's hot loops, fair_share.cpp walk(), as two plain loops over the same spans): the same
// constraints in the same order as unsplit, so nothing computed changes (exact by construction;
// tests/sim/fair_share_split_test.cpp). Adding a split variable hashes its two halves (no
// allocation once the table has grown to its peak).
//
// Resurrection (a flow replaced by an identical one). A solved variable removed between two solves
// is only *pending* removal until the next solve: it leaves the live set at once (is_live, live
// count), but its memberships, rate and `seq` stay. An add with the same constraints (same order),
// weights and cap (bit for bit) before that solve takes the pending one back under its own id, with
// its rate and `seq`, marking nothing dirty (it searches the last kResurrectWindow removals only:
// where a connection's previous chunk is). The system is then the one before the removal, already
// solved canonically, so the rates are a from-scratch solve's bit for bit (the invariant above is
// about the set of variables alone): a tree or ring step's next chunk costs no re-solve. The
// resurrected id is reported by the next solve() as a new one. Pending removals not taken back are
// carried out (marking dirty at their rate) at the start of solve(), or by remove_variable once
// kResurrectWindow later removals follow them (no add searches them then): a wave of completions
// keeps at most 2·kResurrectWindow pending ids. Earlier removal moves affected sets, not rates.
//
// Constraint lists without slots (tombstones). A variable keeps no index into its constraints'
// lists: removing it (the removal proper, detach) drops an entry at a list's end at once and leaves
// the others in place as tombstones, counts them on each list (`dead`) and records in the variable how many lists still hold it (`refs`); its
// id is reused only once every one of them has been compacted away. A list is compacted (a stable
// filter: the live entries keep their order) when its tombstones outnumber its live entries, and
// whenever a solve gathers it (it is read in full there anyway; a removed solved variable marks its
// lists dirty, so the next solve compacts them). So a list holds at most as many tombstones as live
// entries, and none while a solve reads it (gather, replay_kept, the filling). A list is in the
// order its live variables were added. Nothing computed depends on that order: the affected set
// is a closure, the kept variables are replayed in `seq` order (or all have one rate), and the
// variables fixed by one event all subtract the same value (see the canonical run above); only
// the order of solve()'s report follows it.
//
// Units are the caller's (clustersim uses bytes/s). Ids are dense; removed variable ids are reused.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "sim/pod_vector.h"

namespace clustersim::sim {

using ConstraintId = std::uint32_t;
using VariableId = std::uint32_t;

inline constexpr int kMaxConstraintsPerVariable = 16;
inline constexpr double kUnlimited = std::numeric_limits<double>::infinity();

struct FairShareConfig {
  // A cap within this relative distance above the lowest share is reached first (the variable is
  // fixed at its cap rather than at the share).
  double relative_tolerance = 1e-12;
  // Variables fixed below threshold·(1 − margin) are kept by an incremental solve; the margin
  // covers rounding in the shares (a few ulps), so it only makes the affected set larger.
  double threshold_margin = 1e-7;
  // Take back a removed variable when an identical one is added before the next solve (see
  // Resurrection above). Off only in tests that compare against the plain path.
  bool resurrect = true;
  // Sequence numbers (`seq`, 32 bits) are renumbered by rank before a solve that could take one
  // at or above this (at most 2^32 - 1). Lower only in tests, to renumber in a small system.
  std::uint64_t seq_limit = 0xffffffffULL;
  // Unweighted variables of at least this many constraints keep them as two interned halves (see
  // Split memberships); 0: never split. Shorter routes gain nothing (two segment offsets are 8 bytes).
  std::uint32_t split_from = 4;
};

// A variable's constraints in order: one run of ids, or two (the halves of a split variable),
// walked as one sequence. A view: valid until the solver's next add, remove or solve.
class MemberRange {
 public:
  MemberRange(std::span<const ConstraintId> first, std::span<const ConstraintId> second)
      : a_(first.data()), a_end_(first.data() + first.size()), b_(second.data()), b_end_(second.data() + second.size()) {
    if (a_ == a_end_) {
      a_ = b_;
      a_end_ = b_end_;
      b_ = b_end_;
    }
  }
  class iterator {
   public:
    iterator(const ConstraintId* p, const ConstraintId* end, const ConstraintId* next, const ConstraintId* next_end)
        : p_(p), end_(end), next_(next), next_end_(next_end) {}
    ConstraintId operator*() const { return *p_; }
    iterator& operator++() {
      if (++p_ == end_ && next_ != next_end_) {
        p_ = next_;
        end_ = next_end_;
        next_ = next_end_;
      }
      return *this;
    }
    bool operator!=(std::default_sentinel_t) const { return p_ != end_; }
    bool operator==(std::default_sentinel_t) const { return p_ == end_; }

   private:
    const ConstraintId* p_;
    const ConstraintId* end_;
    const ConstraintId* next_;
    const ConstraintId* next_end_;
  };
  iterator begin() const { return {a_, a_end_, b_, b_end_}; }
  std::default_sentinel_t end() const { return {}; }
  std::size_t size() const { return static_cast<std::size_t>((a_end_ - a_) + (b_end_ - b_)); }
  bool empty() const { return a_ == a_end_; }
  ConstraintId back() const { return b_ != b_end_ ? b_end_[-1] : a_end_[-1]; }
  // The ids as one span: the run itself when there is one, else copied into `buf`.
  using Buffer = std::array<ConstraintId, kMaxConstraintsPerVariable>;
  std::span<const ConstraintId> contiguous(Buffer& buf) const {
    if (b_ == b_end_) return {a_, static_cast<std::size_t>(a_end_ - a_)};
    const auto na = static_cast<std::size_t>(a_end_ - a_);
    std::copy(a_, a_end_, buf.begin());
    std::copy(b_, b_end_, buf.begin() + static_cast<std::ptrdiff_t>(na));
    return {buf.data(), size()};
  }

 private:
  const ConstraintId* a_;
  const ConstraintId* a_end_;
  const ConstraintId* b_;
  const ConstraintId* b_end_;
};

struct FairShareStats {
  std::uint64_t solves = 0;           // calls to solve() that had work
  std::uint64_t components = 0;       // affected sets re-solved, plus variables solved alone
  std::uint64_t variables_visited = 0;// variables re-solved (the affected sets' sizes)
  std::uint64_t rate_changes = 0;
  std::uint64_t resurrections = 0;     // removed variables taken back by an identical add
  std::uint64_t renumberings = 0;      // times the sequence numbers were renumbered (seq_limit)
};

class FairShareSolver {
 public:
  explicit FairShareSolver(FairShareConfig config = {}) : config_(config) {
    config_.seq_limit = std::min<std::uint64_t>(config_.seq_limit, 0xffffffffULL);          // 32 bits
  }

  ConstraintId add_constraint(double capacity);
  void reserve_constraints(std::size_t n) { constraints_.reserve(n); }
  // Back to the state of a new solver with the same constraints (and capacities): every variable
  // removed (pending removals carried out), ids, pools, scratch and statistics as new. A caller
  // that simulates many short runs on one large network (the collective memo: ~400 k links on
  // 16,384 GPUs) keeps one solver instead of building its constraints again each time.
  // `keep_constraints` drops the constraints added after the first that many (e.g. a network's
  // virtual links, which belong to one run).
  void reset(std::size_t keep_constraints = static_cast<std::size_t>(-1));
  void set_capacity(ConstraintId c, double capacity);
  double capacity(ConstraintId c) const { return constraints_[c].capacity; }
  std::size_t constraint_count() const { return constraints_.size(); }

  // A variable crossing `constraints` (at most kMaxConstraintsPerVariable, no duplicates) with
  // an optional cap. Its rate is 0 until the next solve(). `weights` (empty: all 1) gives, per
  // constraint, how many identical flows the variable stands for there (each >= 1).
  VariableId add_variable(std::span<const ConstraintId> constraints, double cap = kUnlimited,
                          std::span<const std::uint16_t> weights = {});
  // Blocks: a constraint list (and weights, when not empty) kept in the solver's pool at `off`,
  // with room for a cap after it (kCapEntries more entries, used when the variable is capped).
  // add_variable(off, ...) gives the block to the new variable, which frees it when it is removed
  // for good (it may outlive remove_variable until the next solve, and its ids stay readable
  // until then; a freed block's first entry chains the free list). A resurrected variable keeps its own block and frees the one passed:
  // read it back with block_of(). A block never added is freed with free_block().
  std::uint32_t alloc_block(std::span<const ConstraintId> constraints, std::span<const std::uint16_t> weights = {});
  void free_block(std::uint32_t off, std::size_t n);
  std::span<const ConstraintId> block(std::uint32_t off, std::size_t n) const { return {member_c_.data() + off, n}; }
  const std::uint16_t* block_weights(std::uint32_t off) const { return weights_.data() + off; }
  VariableId add_variable(std::uint32_t off, std::size_t n, double cap, bool weighted);
  std::uint32_t block_of(VariableId v) const { return head_[v].off; }
  // Variable v's constraints and its weights (null: all 1), readable until it is removed for good.
  MemberRange members(VariableId v) const {
    const VarHead h = head_[v];
    if (!h.split) return {std::span<const ConstraintId>(member_c_.data() + h.off, h.n), {}};
    return {std::span<const ConstraintId>(member_c_.data() + member_c_[h.off], h.n / 2U),
            std::span<const ConstraintId>(member_c_.data() + member_c_[h.off + 1], h.n - h.n / 2U)};
  }
  bool is_split(VariableId v) const { return head_[v].split; }
  std::size_t segment_count() const { return seg_live_; }  // interned halves in use (tests)
  const std::uint16_t* weights_of(VariableId v) const {
    return head_[v].weighted ? weights_.data() + head_[v].off : nullptr;
  }
  void remove_variable(VariableId v);
  double rate(VariableId v) const { return rate_[v]; }
  bool is_live(VariableId v) const { return v < head_.size() && (head_[v].flags & kLive) != 0; }
  std::size_t live_variables() const { return live_count_; }
  // Variables currently crossing constraint c (live or pending removal), in the order they were
  // added (a copy without the tombstones: for tests and checks).
  std::vector<VariableId> variables_of(ConstraintId c) const;
  // Entries of constraint c's list, tombstones included (for tests of the list's bound).
  std::size_t list_entries(ConstraintId c) const { return constraints_[c].vars.size(); }
  std::vector<ConstraintId> constraints_of(VariableId v) const;  // (a copy: for tests and checks)
  // Its cap (kUnlimited when it has none): kept after its constraints in its block, only when capped.
  double cap(VariableId v) const {
    if (head_[v].cap_slot != 0) return cap_slots_[head_[v].cap_slot - 1];
    if (!head_[v].capped) return kUnlimited;
    double c;
    std::memcpy(&c, member_c_.data() + head_[v].off + head_[v].n, sizeof(c));
    return c;
  }
  std::uint16_t weight(VariableId v, int k) const { return weight_k(v, static_cast<std::uint32_t>(k)); }

  bool needs_solve() const {
    return !dirty_.empty() || !isolated_new_.empty() || !pending_.empty() || !resurrected_.empty();
  }
  // Re-solves the affected set. Returns the variables whose rate changed (valid until the next
  // call); newly added variables are always included.
  std::span<const VariableId> solve();
  // The rates the variables reported by the last solve() had before it, in the same order (0 for a
  // new or a resurrected one), so that a caller need not keep a copy of each rate. Only the nonzero
  // ones are stored (a wave of new flows, the largest report, has none), with one bit per reported
  // variable saying which: read them in report order with next().
  class OldRates {
   public:
    OldRates(const double* rates, const std::uint64_t* bits, std::size_t words)
        : p_(rates), bits_(bits), words_(words) {}
    double next() {
      const std::size_t w = i_ / 64;
      const bool had = w < words_ && ((bits_[w] >> (i_ % 64)) & 1U) != 0;
      ++i_;
      return had ? *p_++ : 0.0;
    }

   private:
    const double* p_;
    const std::uint64_t* bits_;
    std::size_t words_;
    std::size_t i_ = 0;
  };
  OldRates old_rates() const { return {changed_old_.data(), changed_had_.data(), changed_had_.size()}; }
  std::vector<double> old_rates_copy() const;  // all of them, in report order (for tests)
  // The caller has read the last solve's report (solve()'s span and old_rates() end here): a large
  // one is given back now instead of at the next solve, so that it does not stay resident while
  // the flows it reported stream (12 bytes per reported variable; docs/benchmarks.md, flowmem12).
  void release_report();
  const FairShareStats& stats() const { return stats_; }

 private:
  // kAlone: alone on all its constraints at solve time, with one entry in dirty_order_ (see
  // order_dirty()). kPending: removed, may be resurrected until the next solve; kReport:
  // resurrected, to be reported by the next solve.
  enum : std::uint8_t {
    kLive = 1, kQueued = 2, kAffected = 4, kFixed = 8, kSolved = 16, kAlone = 32, kPending = 64, kReport = 128
  };
  struct Constraint {
    double capacity = 0;
    PodVector<VariableId> vars;  // (PodVector: a long list grows without a second copy; pod_vector.h)
    std::uint64_t total_weight = 0; // Σ weights of the variables on it
    double threshold = kUnlimited;  // lowest pending change threshold (while dirty)
    double remaining = 0;           // scratch: capacity not yet given to fixed variables
    double share = 0;               // scratch: remaining / unfixed, the exact heap key
    std::uint32_t unfixed = 0;      // scratch: Σ weights of unfixed affected variables
    std::uint32_t epoch = 0;        // scratch: gathered in the current solve
    std::uint32_t heap_pos = 0;     // scratch: its entry's index in heap_ (kNone: none), see run_filling
    std::uint32_t dead = 0;         // tombstones in vars (at most its live entries; see above)
    bool dirty = false;
    std::size_t live() const { return vars.size() - dead; }
  };
  struct HeapEntry {
    double share;
    ConstraintId c;
  };

  void mark_dirty(ConstraintId c, double threshold);
  void order_dirty();
  void sort_dirty_order();
  bool alone(VariableId v) const;
  void take_alone(VariableId v, double threshold);
  void detach(VariableId v);
  void compact(ConstraintId c);  // drops c's tombstones (frees the ids no list holds any more)
  // The one live variable on c (kNone unless exactly one; then c has at most one tombstone).
  VariableId only_variable(const Constraint& c) const {
    if (c.live() != 1) return kNone;
    return head_[c.vars[0]].refs == 0 ? c.vars[0] : c.vars[1];
  }
  bool same_variable(VariableId v, std::span<const ConstraintId> cons, double cap,
                     const std::uint16_t* weights) const;
  bool resurrect(std::span<const ConstraintId> cons, double cap, const std::uint16_t* weights, VariableId& out);
  VariableId attach(std::uint32_t off, std::span<const ConstraintId> cons, double cap, bool weighted, bool room,
                    std::uint8_t cap_slot, bool split);
  // Split memberships: a segment is an interned run of constraint ids in member_c_, named by the
  // offset of its first id (its reference count at off - 2, its length at off - 1).
  std::uint32_t intern(const ConstraintId* cons, std::size_t n);
  void release_segment(std::uint32_t off);
  std::size_t segment_home(const ConstraintId* cons, std::size_t n) const;  // its hash's index slot
  void index_segment(std::uint32_t off);
  void grow_segment_index();
  void free_members(std::uint32_t off, std::size_t size);  // a block of `size` entries
  // Variable v's weight on its k-th constraint (a weighted variable is never split).
  std::uint16_t weight_k(VariableId v, std::uint32_t k) const {
    return (head_[v].weighted) ? weights_[head_[v].off + k] : std::uint16_t{1};
  }
  void carry_out_removals();
  void renumber_seqs();
  void gather(ConstraintId start, double threshold);
  void replay_kept(ConstraintId c);
  void run_filling();
  bool saturate_lowest(double& level);
  void fix(VariableId v, double r);
  void queue_share(ConstraintId c);  // its share dropped: its entry's key lowered, or an entry added
  void heap_up(std::size_t i);
  void heap_down(std::size_t i);
  void heap_pop();
  double alone_rate(VariableId v) const;
  std::uint32_t alloc_members(std::size_t n);
  std::uint32_t alloc_var_block(std::span<const ConstraintId> cons, std::span<const std::uint16_t> weights, double cap);

  FairShareConfig config_;
  std::vector<Constraint> constraints_;
  // Variables, struct of arrays (PodVector: the per-variable pools grow without a copy; pod_vector.h).
  PodVector<double> rate_;
  PodVector<std::uint32_t> seq_;      // the event that fixed it (0: never solved); see seq_limit
  struct VarHead {
    std::uint32_t off = 0;  // first membership entry (split: its two segments' offsets)
    std::uint8_t n : 5 = 0;     // constraints crossed
    bool split : 1 = false;     // its block holds two segment offsets (see Split memberships)
    std::uint8_t flags = 0;
    bool weighted : 1 = false;  // weights_ holds its weights (else all 1)
    bool capped : 1 = false;    // its cap follows its constraints in member_c_ (else kUnlimited)
    bool room : 1 = false;      // its block has room for a cap (alloc_block) whether or not capped
    std::uint8_t cap_slot : 5 = 0;  // its cap is cap_slots_[cap_slot - 1] (0: none there; see cap_slot_of)
    std::uint8_t refs = 0;      // removed: lists still holding its tombstone (its id is free at 0)
    bool has_cap() const { return capped || cap_slot != 0; }
  };
  static_assert(sizeof(VarHead) == 8, "see Memory above");
  static_assert(sizeof(double) == 2 * sizeof(ConstraintId), "a cap takes two membership entries");
  static constexpr std::size_t kCapEntries = 2;
  PodVector<VarHead> head_;
  // Distinct caps of variables added with add_variable(constraints, cap), by value (bit pattern):
  // a collective's flows share one or two caps (a channel's wire rate, a p2p NVLink bound), so a
  // capped variable names its cap by a 5-bit slot in its head instead of two membership entries.
  // A cap that finds the table full is kept in the variable's block as before. Never shrinks
  // (reset() empties it).
  static constexpr std::size_t kCapSlots = 31;
  std::array<double, kCapSlots> cap_slots_{};
  std::uint8_t cap_slot_count_ = 0;
  std::uint8_t cap_slot_last_ = 0;  // the slot found last (a run of adds shares one cap)
  std::uint8_t cap_slot_of(double cap);  // 0: unlimited, or the table is full
  // Memberships, pooled: entries head_[v].off .. head_[v].off + head_[v].n - 1 (no slot in the
  // constraints' lists: see Constraint lists without slots above). Freed blocks are reused by
  // variables crossing the same number of constraints.
  PodVector<ConstraintId> member_c_;
  PodVector<std::uint16_t> weights_;        // flows the variable stands for on c; grown only once weighted
  // Segments (split memberships): each a block of kSegmentHeader + n entries of member_c_, the
  // variables using it (refs) and n, then its n ids; named by the offset of its ids. seg_index_ is
  // an open-addressing table (linear probing, at most half full) of the live segments' offsets by
  // content. A segment's block is freed like any other (free_members).
  static constexpr std::uint32_t kSegmentHeader = 2;
  std::vector<std::uint32_t> seg_index_;
  std::size_t seg_live_ = 0;
  // Free lists, intrusive (nothing per freed variable beyond its own storage): the free blocks of
  // n entries are chained through their first entry's member_c_ (n >= 1; an empty block has no
  // storage to keep), the free ids through their seq_ (an id is free once no list holds it). Both are stacks, last freed first reused.
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::array<std::uint32_t, kMaxConstraintsPerVariable + kCapEntries + 1> free_blocks_ = make_free_heads();
  VariableId free_ids_ = kNone;
  static std::array<std::uint32_t, kMaxConstraintsPerVariable + kCapEntries + 1> make_free_heads() {
    std::array<std::uint32_t, kMaxConstraintsPerVariable + kCapEntries + 1> a{};
    a.fill(kNone);
    return a;
  }
  void push_free_id(VariableId v) {
    seq_[v] = free_ids_;
    free_ids_ = v;
  }
  // Scratch buffers larger than this many entries are given back after a solve that used less
  // than a quarter of them (a stage's wave of flows grows them; the solves that follow are small),
  // so they do not add to the next peak of live flows. Regrowing costs one reallocation per
  // doubling at the next large solve, which is O(its size) anyway.
  static constexpr std::size_t kKeptScratch = 1 << 16;
  void trim_scratch();
  std::vector<ConstraintId> dirty_;
  std::vector<std::pair<double, ConstraintId>> dirty_order_;  // scratch: (threshold, id), solve's order
  std::vector<std::uint64_t> id_bits_;  // scratch: one bit per constraint, all zero between solves
  // Variables added onto constraints nobody else used: they are alone, so solve() gives them their
  // alone rate without a search (unless a later arrival joined them, which dirties a constraint).
  std::vector<VariableId> isolated_new_;
  // Removals pending until the next solve (the last kResurrectWindow are searched by an add);
  // resurrected_ lists the ids to report.
  static constexpr std::size_t kResurrectWindow = 8;
  std::vector<VariableId> pending_;
  std::vector<VariableId> resurrected_;
  std::size_t live_count_ = 0;
  std::uint32_t epoch_ = 0;
  std::uint64_t seq_counter_ = 0;  // below config_.seq_limit (renumber_seqs)
  // Scratch buffers reused by every solve. The affected variables and their old rates (and the
  // report they become) are PodVectors: a large solve's gather grows them without holding the old
  // and the new buffer at once (pod_vector.h), which was the moment of the peak. old_rates_ holds
  // only the affected variables that were solved before (kSolved), in comp_vars_'s order.
  std::vector<ConstraintId> comp_cons_;
  PodVector<VariableId> comp_vars_;
  PodVector<double> old_rates_;
  std::vector<VariableId> capped_;
  std::vector<HeapEntry> heap_;
  std::vector<std::pair<std::uint32_t, VariableId>> kept_;
  PodVector<VariableId> changed_;
  // old_rates(): the nonzero old rates of changed_, in order, and bit i of changed_had_ set when
  // changed_[i] has one (words past its end: none).
  PodVector<double> changed_old_;
  PodVector<std::uint64_t> changed_had_;
  std::size_t alone_fixed_ = 0;  // variables of comp_vars_ fixed by take_alone() in this solve
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
