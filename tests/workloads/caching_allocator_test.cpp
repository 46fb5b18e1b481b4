#include <doctest/doctest.h>

#include <vector>

#include "tests/workloads/memory_test_util.h"
#include "workloads/memory/allocator_replay.h"
#include "workloads/memory/caching_allocator.h"
#include "workloads/model/model_presets.h"

using namespace clustersim::workloads;

namespace {
constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;
}

TEST_CASE("workloads::CachingAllocatorModel: sizes round up to 512 B and segments follow the size bands") {
  CHECK(round_size(1) == 512);
  CHECK(round_size(512) == 512);
  CHECK(round_size(513) == 1024);
  CHECK(allocation_size(512) == 2 * MiB);        // small pool: 2 MiB segment
  CHECK(allocation_size(1 * MiB) == 2 * MiB);    // 1 MiB is still small
  CHECK(allocation_size(1 * MiB + 512) == 20 * MiB);
  CHECK(allocation_size(9 * MiB) == 20 * MiB);
  CHECK(allocation_size(10 * MiB) == 10 * MiB);  // >= 10 MiB: rounded to 2 MiB
  CHECK(allocation_size(11 * MiB) == 12 * MiB);

  CachingAllocatorModel a;
  const AllocHandle one = a.malloc(1);
  const AllocHandle two = a.malloc(513);
  CHECK(a.block_size(one) == 512);
  CHECK(a.block_size(two) == 1024);
  // Both come from one 2 MiB small segment: 512 + 1024 allocated, 2 MiB reserved.
  CHECK(a.stats().allocated == 1536);
  CHECK(a.stats().reserved == 2 * MiB);
  CHECK(a.stats().num_segments == 1);
}

TEST_CASE("workloads::CachingAllocatorModel: four 512 KiB tensors pack one 2 MiB small segment") {
  CachingAllocatorModel a;
  // 1st: new 2 MiB segment, split 512 KiB | 1.5 MiB free (remainder >= 512 B).
  // 2nd: best fit is the 1.5 MiB block -> 512 KiB | 1 MiB free. 3rd: 512 KiB | 512 KiB free.
  // 4th: exactly the last 512 KiB (remainder 0, no split). 5th: a second segment.
  std::vector<AllocHandle> h;
  for (int i = 0; i < 4; ++i) h.push_back(a.malloc(512 * KiB));
  CHECK(a.stats().num_segments == 1);
  CHECK(a.stats().reserved == 2 * MiB);
  CHECK(a.stats().allocated == 2 * MiB);
  CHECK(a.stats().largest_free_block == 0);
  a.malloc(512 * KiB);
  CHECK(a.stats().num_segments == 2);
  CHECK(a.stats().reserved == 4 * MiB);
}

TEST_CASE("workloads::CachingAllocatorModel: a 5 MiB request gets a 20 MiB segment whose remainder is reused") {
  CachingAllocatorModel a;
  // 5 MiB is in the 1-10 MiB band: cudaMalloc(20 MiB), split 5 | 15 MiB (15 MiB > 1 MiB).
  const AllocHandle first = a.malloc(5 * MiB);
  CHECK(a.stats().reserved == 20 * MiB);
  CHECK(a.stats().inactive_split == 15 * MiB);
  // The second 5 MiB takes the 15 MiB block: 5 | 10 MiB free; no new segment.
  const AllocHandle second = a.malloc(5 * MiB);
  CHECK(a.stats().num_segments == 1);
  CHECK(a.stats().reserved == 20 * MiB);
  CHECK(a.stats().allocated == 10 * MiB);
  CHECK(a.stats().largest_free_block == 10 * MiB);
  CHECK(a.block_size(first) == 5 * MiB);
  CHECK(a.block_size(second) == 5 * MiB);
}

TEST_CASE("workloads::CachingAllocatorModel: a large block is not split when the remainder is at most 1 MiB") {
  CachingAllocatorModel a;
  // 11 MiB -> segment rounded to 12 MiB; remainder 1 MiB is not > 1 MiB: the whole 12 MiB block
  // is handed out and counted as allocated.
  const AllocHandle h = a.malloc(11 * MiB);
  CHECK(a.block_size(h) == 12 * MiB);
  CHECK(a.stats().allocated == 12 * MiB);
  CHECK(a.stats().inactive_split == 0);
  a.free(h);
  // 10.5 MiB reuses the cached 12 MiB block; remainder 1.5 MiB > 1 MiB: split.
  const AllocHandle g = a.malloc(10 * MiB + 512 * KiB);
  CHECK(a.block_size(g) == 10 * MiB + 512 * KiB);
  CHECK(a.stats().inactive_split == 1 * MiB + 512 * KiB);
  CHECK(a.stats().num_segments == 1);
}

TEST_CASE("workloads::CachingAllocatorModel: with max_split_size set, oversize blocks are never split") {
  AllocatorOptions o;
  o.max_split_size = 20 * MiB;  // max_split_size_mb:20
  CachingAllocatorModel a(o);
  const AllocHandle big = a.malloc(40 * MiB);  // 40 MiB segment, oversize (>= 20 MiB)
  a.free(big);
  // 8 MiB < max_split_size may not take the cached 40 MiB oversize block: a new 20 MiB segment.
  const AllocHandle small = a.malloc(8 * MiB);
  CHECK(a.stats().num_segments == 2);
  CHECK(a.stats().reserved == 60 * MiB);
  // 30 MiB >= max_split_size takes the 40 MiB block (40 < 30 + 20) whole, unsplit.
  const AllocHandle mid = a.malloc(30 * MiB);
  CHECK(a.block_size(mid) == 40 * MiB);
  CHECK(a.stats().allocated == 8 * MiB + 40 * MiB);
  a.free(mid);
  // 18 MiB... < max_split: not the oversize block either; takes the 12 MiB left of the 20 MiB
  // segment? No: 12 < 18, so a new 18 MiB segment (>= 10 MiB rounds to 2 MiB).
  a.malloc(18 * MiB);
  CHECK(a.stats().num_segments == 3);
  a.free(small);
}

TEST_CASE("workloads::CachingAllocatorModel: freed neighbours merge back into one block") {
  CachingAllocatorModel a;
  const AllocHandle x = a.malloc(512 * KiB);
  const AllocHandle y = a.malloc(512 * KiB);
  // Segment: [x 512 KiB][y 512 KiB][free 1 MiB].
  a.free(x);
  // [free 512 KiB][y][free 1 MiB]: two inactive split pieces.
  CHECK(a.stats().inactive_split == 1536 * KiB);
  CHECK(a.stats().largest_free_block == 1 * MiB);
  a.free(y);
  // y merges with both neighbours: one free 2 MiB block, the segment is whole again.
  CHECK(a.stats().inactive_split == 0);
  CHECK(a.stats().largest_free_block == 2 * MiB);
  a.empty_cache();
  CHECK(a.stats().reserved == 0);
  CHECK(a.stats().num_segments == 0);
}

TEST_CASE("workloads::CachingAllocatorModel: expandable segments remove the slivers of a growing-size sequence") {
  // Allocate 12, 14, 16, 18, 20 MiB, freeing each before the next (a batch that grows).
  // Native: no cached block is ever big enough -> one new segment each: 12+14+16+18+20 = 80 MiB.
  // Expandable: 12 MiB maps one 20 MiB page; every later request fits in it: 20 MiB reserved.
  for (bool expandable : {false, true}) {
    AllocatorOptions o;
    o.expandable_segments = expandable;
    CachingAllocatorModel a(o);
    for (std::uint64_t mib = 12; mib <= 20; mib += 2) {
      const AllocHandle h = a.malloc(mib * MiB);
      REQUIRE(h.valid());
      a.free(h);
    }
    CHECK(a.stats().reserved == (expandable ? 20 * MiB : 80 * MiB));
    CHECK(a.stats().peak_allocated == 20 * MiB);
  }
  // Growing past the mapped size maps only the missing pages: 30 MiB needs 10 MiB more than the
  // trailing 20 MiB free block -> one more 20 MiB page, 40 MiB mapped.
  AllocatorOptions o;
  o.expandable_segments = true;
  CachingAllocatorModel a(o);
  a.free(a.malloc(12 * MiB));
  a.malloc(30 * MiB);
  CHECK(a.stats().reserved == 40 * MiB);
}

TEST_CASE("workloads::CachingAllocatorModel: over capacity it frees cached segments, retries, then reports OOM") {
  AllocatorOptions o;
  o.capacity_bytes = 64 * MiB;
  CachingAllocatorModel a(o);
  const AllocHandle x = a.malloc(40 * MiB);
  a.free(x);
  // 50 MiB: the cached 40 MiB block is too small and cudaMalloc(50 MiB) next to it would exceed
  // 64 MiB: release the free segment, retry, succeed.
  const AllocHandle y = a.malloc(50 * MiB);
  CHECK(y.valid());
  CHECK(a.stats().num_alloc_retries == 1);
  CHECK(a.stats().reserved == 50 * MiB);
  // 20 MiB more: 70 > 64 and nothing cached to release: retry, then out of memory.
  CHECK_FALSE(a.malloc(20 * MiB).valid());
  CHECK(a.stats().num_alloc_retries == 2);
  CHECK(a.stats().num_ooms == 1);
}

TEST_CASE("workloads::replay_training_iteration: reserved covers allocated and matches the analytical peak") {
  const MemoryRequest q = clustersim::testing::gpt3_1_3b_dp8_request();
  const AllocatorReplay native = replay_training_iteration(q, AllocatorOptions{});
  CHECK_FALSE(native.out_of_memory);
  CHECK(native.stats.peak_reserved >= native.stats.peak_allocated);
  CHECK(native.stats.allocated <= native.stats.reserved);
  // The replay's peak is close to the analytical model's states + activations (within 10%).
  MemoryRequest analytic = q;
  analytic.options.include_runtime = false;
  const MemoryBreakdown b = estimate_memory(analytic);
  const double model_bytes = (b.params + b.grads + b.optimizer + b.activations).value;
  CHECK(static_cast<double>(native.stats.peak_allocated) == doctest::Approx(model_bytes).epsilon(0.10));
  AllocatorOptions ex;
  ex.expandable_segments = true;
  const AllocatorReplay expandable = replay_training_iteration(q, ex);
  CHECK(expandable.fragmentation <= native.fragmentation);
}

TEST_CASE("workloads::replay_training_iteration: the interleaved schedule holds pp(v+1) - 1 chunks, as the formula") {
  // Llama 3 70B on TP4 x PP8 x VP5, seq 8192 (Megatron-Bridge's H100 layout): stage 0 holds
  // 8 x (1 + 7/40) = 9.4 micro-batches of its 10 layers = 47 chunks of 2 layers (Megatron's
  // 2(pp-1) + (v-1)pp warm-up chunk forwards + 1). Replaying whole micro-batches (ceil 9.4 = 10)
  // held 100 layer-sets instead of 94 and ran out of memory below the formula's requirement.
  MemoryRequest q;
  q.model = *find_model_preset("llama3-70b");
  q.parallel.tp = 4;
  q.parallel.pp = 8;
  q.parallel.dp = 2;
  q.parallel.virtual_stages = 5;
  q.parallel.schedule = Schedule::Interleaved;
  q.parallel.sequence_parallel = true;
  q.parallel.distributed_optimizer = true;
  q.training.global_batch = 128;
  q.training.precision = clustersim::topology::Precision::Fp8;
  q.options.include_runtime = false;
  const MemoryBreakdown b = estimate_memory(q);
  const AllocatorReplay r = replay_training_iteration(q, AllocatorOptions{});
  CHECK_FALSE(r.out_of_memory);
  // The replay allocates what the formula counts on stage 0, plus one layer's activation-gradient
  // temporaries during its backward, which the formula leaves out: the input gradient 2sbh/t (SP)
  // and the MLP intermediate gradient 2sbf/t, 33.5 MB + 117.4 MB. Ten whole micro-batches would
  // have added 6 % of the activations, 2.9 GiB.
  const double temporaries = 2.0 * 8192 * 8192 / 4 + 2.0 * 8192 * 28672 / 4;
  CHECK(static_cast<double>(r.stats.peak_allocated) == doctest::Approx(b.total.value + temporaries).epsilon(0.0001));
}

TEST_CASE("workloads::CachingAllocatorModel: memory_stats' per-pool counters (current, peak, total alloc and freed)") {
  // Three 100 KiB tensors (small pool: one 2 MiB segment) and one 5 MiB tensor (large pool: one
  // 20 MiB segment); then one small one is freed.
  CachingAllocatorModel a;
  const AllocHandle s1 = a.malloc(100 * KiB), s2 = a.malloc(100 * KiB), s3 = a.malloc(100 * KiB);
  const AllocHandle big = a.malloc(5 * MiB + 7);
  a.free(s2);
  const AllocatorStats st = a.stats();
  CHECK(st.allocations[kSmallPool].current == 2);
  CHECK(st.allocations[kSmallPool].peak == 3);
  CHECK(st.allocations[kSmallPool].allocated == 3);
  CHECK(st.allocations[kSmallPool].freed == 1);
  CHECK(st.allocations[kLargePool].current == 1);
  CHECK(st.allocations[kAllPools].current == 3);
  CHECK(st.allocations[kAllPools].peak == 4);
  CHECK(st.allocated_bytes[kSmallPool].current == 2 * 100 * KiB);
  CHECK(st.allocated_bytes[kLargePool].current == 5 * MiB + 512);  // rounded to 512 B
  CHECK(st.requested_bytes[kLargePool].current == 5 * MiB + 7);     // as asked
  CHECK(st.reserved_bytes[kSmallPool].current == 2 * MiB);
  CHECK(st.reserved_bytes[kLargePool].current == 20 * MiB);
  CHECK(st.segments[kAllPools].current == 2);
  CHECK(st.segments[kAllPools].current == static_cast<std::uint64_t>(st.num_segments));
  // The freed 100 KiB sits between two allocated blocks of its segment: non-releasable.
  CHECK(st.inactive_split_blocks[kSmallPool] >= 1);
  CHECK(st.inactive_split_pool[kAllPools] == st.inactive_split);
  a.free(s1);
  a.free(s3);
  a.free(big);
  const AllocatorStats end = a.stats();
  CHECK(end.allocations[kAllPools].current == 0);
  CHECK(end.allocations[kAllPools].allocated == end.allocations[kAllPools].freed);
  CHECK(end.allocated_bytes[kAllPools].freed == end.allocated_bytes[kAllPools].allocated);
}

TEST_CASE("workloads::replay_training_iteration: every counter is alloc - freed, and the pools sum to the aggregate") {
  MemoryRequest q;
  q.model = *find_model_preset("gpt3-1.3b");
  q.parallel.tp = 1;
  q.parallel.pp = 1;
  q.parallel.dp = 1;
  q.training.micro_batch = 2;
  q.training.global_batch = 4;
  q.capacity = clustersim::sim::Bytes{80e9};
  const AllocatorStats st = replay_training_iteration(q, AllocatorOptions{}).stats;
  for (const AllocatorStat* stat : {st.allocated_bytes, st.requested_bytes, st.reserved_bytes, st.allocations, st.segments}) {
    for (int i = 0; i < 3; ++i) CHECK(stat[i].current == stat[i].allocated - stat[i].freed);
    CHECK(stat[kAllPools].current == stat[kSmallPool].current + stat[kLargePool].current);
    CHECK(stat[kAllPools].allocated == stat[kSmallPool].allocated + stat[kLargePool].allocated);
    CHECK(stat[kAllPools].peak <= stat[kSmallPool].peak + stat[kLargePool].peak);
  }
  // A training iteration: weights and activations are large; many allocations in both pools.
  CHECK(st.allocations[kLargePool].allocated > 10);
  CHECK(st.allocations[kSmallPool].allocated > 0);
  CHECK(st.allocated_bytes[kAllPools].peak == st.peak_allocated);
  CHECK(st.reserved_bytes[kAllPools].peak == st.peak_reserved);
  CHECK(st.requested_bytes[kAllPools].allocated <= st.allocated_bytes[kAllPools].allocated);
}
