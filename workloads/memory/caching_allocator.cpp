// PyTorch's CUDA caching allocator, the model (caching_allocator.h says which rules of
// c10/cuda/CUDACachingAllocator.cpp it follows): best-fit blocks in two pools, splitting and
// merging, segments from CUDA, release-and-retry at the device limit, expandable segments, and
// torch.cuda.memory_stats()'s counters. The iteration replay that drives it is allocator_replay.h.
#include "workloads/memory/caching_allocator.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::workloads {

namespace {
constexpr std::uint64_t kSmallPage = kSmallBuffer;  // expandable segments: small-pool page
constexpr std::uint64_t kLargePage = kLargeBuffer;  // expandable segments: large-pool page
constexpr std::uint64_t kAddressSpacePerSegment = 1ULL << 40;

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }
}  // namespace

std::uint64_t round_size(std::uint64_t size) {
  return size < kMinBlockSize ? kMinBlockSize : round_up(size, kMinBlockSize);
}

std::uint64_t allocation_size(std::uint64_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return round_up(rounded, kRoundLarge);
}

CachingAllocatorModel::CachingAllocatorModel(AllocatorOptions options) : options_(options) {}

CachingAllocatorModel::FreeKey CachingAllocatorModel::key(int b) const {
  const Block& blk = blocks_[b];
  return {blk.size, segments_[blk.segment].base + blk.offset, b};
}

int CachingAllocatorModel::new_block(const Block& b) {
  if (!spare_blocks_.empty()) {
    const int id = spare_blocks_.back();
    spare_blocks_.pop_back();
    blocks_[id] = b;
    return id;
  }
  blocks_.push_back(b);
  return static_cast<int>(blocks_.size()) - 1;
}

void CachingAllocatorModel::insert_free(int b) {
  pool_set(segments_[blocks_[b].segment].pool).insert(key(b));
}

void CachingAllocatorModel::erase_free(int b) {
  pool_set(segments_[blocks_[b].segment].pool).erase(key(b));
}

// get_free_block: only the best-fit candidate is considered.
int CachingAllocatorModel::find_free_block(Pool pool, std::uint64_t rounded) const {
  const std::set<FreeKey>& set = pool == Pool::Small ? small_free_ : large_free_;
  const auto it = set.lower_bound(FreeKey{rounded, 0, -1});
  if (it == set.end()) return -1;
  const std::uint64_t size = std::get<0>(*it);
  const std::uint64_t max_split = options_.max_split_size;
  const bool limited = max_split != std::numeric_limits<std::uint64_t>::max();
  if (limited && rounded < max_split && size >= max_split) return -1;       // no oversize for small requests
  if (limited && rounded >= max_split && size >= rounded + kLargeBuffer) return -1;  // bounded waste
  return std::get<2>(*it);
}

bool CachingAllocatorModel::should_split(Pool pool, std::uint64_t block_size, std::uint64_t rounded) const {
  const std::uint64_t remaining = block_size - rounded;
  if (pool == Pool::Small || options_.expandable_segments) return remaining >= kMinBlockSize;
  return rounded < options_.max_split_size && remaining > kSmallSize;
}

bool CachingAllocatorModel::reserve(std::uint64_t bytes) {
  auto fits = [&] { return bytes <= options_.capacity_bytes - std::min(options_.capacity_bytes, stats_.reserved); };
  if (fits()) return true;
  if (release_oversize_blocks() && fits()) return true;
  ++stats_.num_alloc_retries;
  release_free_segments();
  return fits();
}

int CachingAllocatorModel::new_segment(Pool pool, std::uint64_t bytes) {
  if (!reserve(bytes)) return -1;
  Segment seg;
  seg.pool = pool;
  seg.base = next_address_;
  seg.size = bytes;
  next_address_ += round_up(bytes, kRoundLarge) + kRoundLarge;
  segments_.push_back(seg);
  const int s = static_cast<int>(segments_.size()) - 1;
  Block b;
  b.segment = s;
  b.size = bytes;
  const int id = new_block(b);
  segments_[s].last_block = id;
  insert_free(id);
  stats_.reserved += bytes;
  ++stats_.num_segments;
  count(stats_.reserved_bytes, pool, bytes);
  count(stats_.segments, pool, 1);
  note_peaks();
  return id;
}

// Expandable: map enough pages at the end of the pool's segment that its trailing free block (if
// any) plus the new pages hold the request.
int CachingAllocatorModel::grow(Pool pool, std::uint64_t rounded) {
  if (!options_.expandable_segments) return new_segment(pool, allocation_size(rounded));
  int& s = expandable_[pool == Pool::Small ? 0 : 1];
  if (s < 0) {
    Segment seg;
    seg.pool = pool;
    seg.base = next_address_;
    seg.size = 0;
    seg.expandable = true;
    next_address_ += kAddressSpacePerSegment;
    segments_.push_back(seg);
    s = static_cast<int>(segments_.size()) - 1;
    ++stats_.num_segments;
    count(stats_.segments, pool, 1);
  }
  const std::uint64_t page = pool == Pool::Small ? kSmallPage : kLargePage;
  const int last = segments_[s].last_block;
  const bool trailing_free = last >= 0 && !blocks_[last].allocated;
  const std::uint64_t have = trailing_free ? blocks_[last].size : 0;
  const std::uint64_t bytes = round_up(rounded - have, page);
  if (!reserve(bytes)) return -1;
  int grown = last;
  if (trailing_free) {
    erase_free(last);
    blocks_[last].size += bytes;
    insert_free(last);
  } else {
    Block b;
    b.segment = s;
    b.offset = segments_[s].size;
    b.size = bytes;
    b.prev = last;
    const int id = new_block(b);
    if (last >= 0) blocks_[last].next = id;
    segments_[s].last_block = id;
    insert_free(id);
    grown = id;
  }
  segments_[s].size += bytes;
  stats_.reserved += bytes;
  count(stats_.reserved_bytes, pool, bytes);
  note_peaks();
  return grown;
}

AllocHandle CachingAllocatorModel::malloc(std::uint64_t size) {
  const std::uint64_t rounded = round_size(size);
  const Pool pool = rounded <= kSmallSize ? Pool::Small : Pool::Large;
  int b = find_free_block(pool, rounded);
  if (b < 0) {
    b = grow(pool, rounded);  // like alloc_block, the fresh memory is used directly
    if (b < 0) {
      ++stats_.num_ooms;
      return AllocHandle{};
    }
    CLUSTERSIM_CHECK(blocks_[b].size >= rounded, "a fresh segment must hold the request it was made for");
  }
  erase_free(b);
  if (should_split(pool, blocks_[b].size, rounded)) {
    Block rest;
    rest.segment = blocks_[b].segment;
    rest.offset = blocks_[b].offset + rounded;
    rest.size = blocks_[b].size - rounded;
    rest.prev = b;
    rest.next = blocks_[b].next;
    const int r = new_block(rest);  // may reallocate blocks_: index only from here on
    if (blocks_[r].next >= 0) blocks_[blocks_[r].next].prev = r;
    blocks_[b].next = r;
    blocks_[b].size = rounded;
    Segment& seg = segments_[blocks_[b].segment];
    if (seg.last_block == b) seg.last_block = r;
    insert_free(r);
  }
  blocks_[b].allocated = true;
  blocks_[b].requested = size;
  count(stats_.allocated_bytes, pool, blocks_[b].size);
  count(stats_.requested_bytes, pool, size);
  count(stats_.allocations, pool, 1);
  stats_.allocated += blocks_[b].size;
  stats_.active += blocks_[b].size;
  note_peaks();
  return AllocHandle{b};
}

int CachingAllocatorModel::merge(int b, int neighbour) {
  if (neighbour < 0 || blocks_[neighbour].allocated) return b;
  erase_free(neighbour);
  Block& blk = blocks_[b];
  const Block& nb = blocks_[neighbour];
  Segment& seg = segments_[blk.segment];
  if (nb.next == b) {  // neighbour precedes b
    blk.offset = nb.offset;
    blk.prev = nb.prev;
    if (blk.prev >= 0) blocks_[blk.prev].next = b;
  } else {             // neighbour follows b
    blk.next = nb.next;
    if (blk.next >= 0) blocks_[blk.next].prev = b;
    if (seg.last_block == neighbour) seg.last_block = b;
  }
  blk.size += nb.size;
  spare_blocks_.push_back(neighbour);
  return b;
}

void CachingAllocatorModel::free(AllocHandle handle) {
  CLUSTERSIM_CHECK(handle.valid() && blocks_[handle.block].allocated, "free of a block that is not allocated");
  const int b = handle.block;
  blocks_[b].allocated = false;
  const Pool pool = segments_[blocks_[b].segment].pool;
  count(stats_.allocated_bytes, pool, blocks_[b].size, true);
  count(stats_.requested_bytes, pool, blocks_[b].requested, true);
  count(stats_.allocations, pool, 1, true);
  stats_.allocated -= blocks_[b].size;
  stats_.active -= blocks_[b].size;
  merge(b, blocks_[b].prev);
  merge(b, blocks_[b].next);
  insert_free(b);
}

std::uint64_t CachingAllocatorModel::block_size(AllocHandle handle) const {
  return handle.valid() ? blocks_[handle.block].size : 0;
}

// release_available_cached_blocks, simplified: with max_split_size set, every cached oversize block
// that is a whole segment goes back to CUDA.
bool CachingAllocatorModel::release_oversize_blocks() {
  if (options_.max_split_size == std::numeric_limits<std::uint64_t>::max()) return false;
  bool released = false;
  for (std::size_t s = 0; s < segments_.size(); ++s) {
    Segment& seg = segments_[s];
    if (!seg.live || seg.expandable || seg.size < options_.max_split_size) continue;
    const int b = seg.last_block;
    if (blocks_[b].allocated || blocks_[b].prev >= 0) continue;
    release_segment(seg);
    released = true;
  }
  return released;
}

// release_cached_blocks: every segment that is one free block goes back to CUDA. Expandable
// segments keep their mapping in this model (PyTorch unmaps their free pages).
bool CachingAllocatorModel::release_free_segments() {
  bool released = false;
  for (Segment& seg : segments_) {
    if (!seg.live || seg.expandable) continue;
    const int b = seg.last_block;
    if (blocks_[b].allocated || blocks_[b].prev >= 0 || blocks_[b].next >= 0) continue;
    release_segment(seg);
    released = true;
  }
  return released;
}

void CachingAllocatorModel::release_segment(Segment& seg) {
  erase_free(seg.last_block);
  spare_blocks_.push_back(seg.last_block);
  seg.live = false;
  stats_.reserved -= seg.size;
  --stats_.num_segments;
  count(stats_.reserved_bytes, seg.pool, seg.size, true);
  count(stats_.segments, seg.pool, 1, true);
}

void CachingAllocatorModel::count(AllocatorStat (&stat)[3], Pool pool, std::uint64_t n, bool sub) {
  for (const int i : {static_cast<int>(kAllPools), static_cast<int>(pool == Pool::Small ? kSmallPool : kLargePool)}) {
    if (sub) {
      stat[i].sub(n);
    } else {
      stat[i].add(n);
    }
  }
}

void CachingAllocatorModel::empty_cache() { release_free_segments(); }

void CachingAllocatorModel::note_peaks() {
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
}

AllocatorStats CachingAllocatorModel::stats() const {
  AllocatorStats s = stats_;
  s.largest_free_block = 0;
  s.inactive_split = 0;
  for (const int pool : {static_cast<int>(kSmallPool), static_cast<int>(kLargePool)}) {
    for (const FreeKey& k : pool == kSmallPool ? small_free_ : large_free_) {
      const Block& b = blocks_[std::get<2>(k)];
      s.largest_free_block = std::max(s.largest_free_block, b.size);
      if (b.prev < 0 && b.next < 0) continue;
      s.inactive_split += b.size;
      for (const int i : {static_cast<int>(kAllPools), pool}) {
        s.inactive_split_pool[i] += b.size;
        ++s.inactive_split_blocks[i];
      }
    }
  }
  return s;
}

}  // namespace clustersim::workloads
