// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp), one device and
// one stream, to estimate reserved vs allocated memory and fragmentation.
//
// Rules (shared/reference/hardware.md section 6, constants verbatim from the source):
//   * Sizes round up to a multiple of kMinBlockSize (512 B; smaller requests take 512 B).
//     roundup_power2_divisions is not modelled.
//   * Requests <= kSmallSize (1 MiB) use the small pool, others the large pool.
//   * A new segment (cudaMalloc) is kSmallBuffer (2 MiB) for small requests, kLargeBuffer (20 MiB)
//     for 1-10 MiB, else the request rounded up to kRoundLarge (2 MiB).
//   * Best fit: the smallest cached block >= the request (ties by address). With max_split_size set,
//     a request < max_split_size never takes an "oversize" block (>= max_split_size), and a request
//     >= max_split_size takes one only if block < request + kLargeBuffer. Only the best-fit
//     candidate is tried, as in get_free_block.
//   * Split: small pool if the remainder >= 512 B; large pool only if request < max_split_size and
//     remainder > 1 MiB. An unsplit block is handed out whole and counted whole in `allocated`.
//   * Free blocks merge with free neighbours of their segment. Segments go back to CUDA only when a
//     cudaMalloc would exceed `capacity_bytes`: first oversize cached blocks (only when
//     max_split_size is set), then every fully-free segment (release_cached_blocks); each retry
//     counts in num_alloc_retries.
//   * expandable_segments: one segment per pool whose mapped size grows in pages (2 MiB small,
//     20 MiB large) at its end; new pages merge with a trailing free block, so a growing request
//     reuses the same memory instead of leaving slivers. Splitting is allowed down to 512 B.
// Sizes are bytes (std::uint64_t: the allocator counts exact integers).
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

namespace clustersim::workloads {

inline constexpr std::uint64_t kMinBlockSize = 512;
inline constexpr std::uint64_t kSmallSize = 1048576;
inline constexpr std::uint64_t kSmallBuffer = 2097152;
inline constexpr std::uint64_t kLargeBuffer = 20971520;
inline constexpr std::uint64_t kMinLargeAlloc = 10485760;
inline constexpr std::uint64_t kRoundLarge = 2097152;

struct AllocatorOptions {
  std::uint64_t max_split_size = std::numeric_limits<std::uint64_t>::max();  // max_split_size_mb
  bool expandable_segments = false;
  std::uint64_t capacity_bytes = std::numeric_limits<std::uint64_t>::max();  // device memory
  int stage = 0;  // pipeline stage replayed (fit_memory: the most loaded one)
};

// One of torch.cuda.memory_stats()'s counters: current value, its peak, the total ever added
// ("Tot Alloc") and the total ever removed ("Tot Freed").
struct AllocatorStat {
  std::uint64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void add(std::uint64_t n) {
    current += n;
    allocated += n;
    peak = current > peak ? current : peak;
  }
  void sub(std::uint64_t n) {
    current -= n;
    freed += n;
  }
};

// PyTorch's StatType order: the aggregate, then the small pool (blocks <= 1 MiB), then the large.
enum AllocatorPoolIndex : int { kAllPools = 0, kSmallPool = 1, kLargePool = 2 };

struct AllocatorStats {
  std::uint64_t allocated = 0, reserved = 0, active = 0;
  // Per pool (AllocatorPoolIndex), as memory_summary() prints them: bytes handed out (rounded
  // blocks), bytes requested (before rounding), bytes held from CUDA, blocks handed out and
  // segments held. One stream and no recordStream: active equals allocated.
  AllocatorStat allocated_bytes[3], requested_bytes[3], reserved_bytes[3], allocations[3], segments[3];
  std::uint64_t inactive_split_pool[3] = {0, 0, 0};  // free pieces of split segments, bytes
  std::uint64_t inactive_split_blocks[3] = {0, 0, 0};  // and how many
  std::uint64_t peak_allocated = 0, peak_reserved = 0;
  std::uint64_t largest_free_block = 0;
  std::uint64_t inactive_split = 0;  // free pieces of segments that hold more than one block
  int num_segments = 0;
  int num_alloc_retries = 0;
  int num_ooms = 0;
};

struct AllocHandle {
  int block = -1;
  bool valid() const { return block >= 0; }
};

std::uint64_t round_size(std::uint64_t size);
std::uint64_t allocation_size(std::uint64_t rounded);  // segment size for a new cudaMalloc

class CachingAllocatorModel {
 public:
  explicit CachingAllocatorModel(AllocatorOptions options = {});

  // An invalid handle means out of memory (after the release-and-retry steps).
  AllocHandle malloc(std::uint64_t size);
  void free(AllocHandle handle);
  // The block size handed out (the rounded request, or the whole block when not split).
  std::uint64_t block_size(AllocHandle handle) const;
  AllocatorStats stats() const;
  // torch.cuda.empty_cache(): returns every fully-free segment.
  void empty_cache();

 private:
  enum class Pool : std::uint8_t { Small, Large };
  struct Block {
    int segment = -1;
    std::uint64_t offset = 0, size = 0;
    bool allocated = false;
    std::uint64_t requested = 0;  // the caller's size, while allocated
    int prev = -1, next = -1;
  };
  struct Segment {
    Pool pool = Pool::Small;
    std::uint64_t base = 0, size = 0;
    bool live = true;
    bool expandable = false;
    int last_block = -1;
  };
  using FreeKey = std::tuple<std::uint64_t, std::uint64_t, int>;  // size, address, block

  std::set<FreeKey>& pool_set(Pool p) { return p == Pool::Small ? small_free_ : large_free_; }
  FreeKey key(int b) const;
  int new_block(const Block& b);
  int find_free_block(Pool pool, std::uint64_t rounded) const;
  int grow(Pool pool, std::uint64_t rounded);         // the fresh free block, -1 if out of memory
  int new_segment(Pool pool, std::uint64_t bytes);
  bool reserve(std::uint64_t bytes);
  bool release_oversize_blocks();
  bool release_free_segments();
  void release_segment(Segment& seg);  // its one free block back to the spares, its bytes to CUDA
  bool should_split(Pool pool, std::uint64_t block_size, std::uint64_t rounded) const;
  void insert_free(int b);
  void erase_free(int b);
  int merge(int b, int neighbour);
  void note_peaks();
  // Adds (or with `sub`, removes) n to a counter of the aggregate and of the pool.
  static void count(AllocatorStat (&stat)[3], Pool pool, std::uint64_t n, bool sub = false);

  AllocatorOptions options_;
  std::vector<Block> blocks_;
  std::vector<int> spare_blocks_;
  std::vector<Segment> segments_;
  std::set<FreeKey> small_free_, large_free_;
  int expandable_[2] = {-1, -1};
  std::uint64_t next_address_ = 1ULL << 40;
  AllocatorStats stats_;
};

}  // namespace clustersim::workloads
