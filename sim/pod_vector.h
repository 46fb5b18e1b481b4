// A growable array of trivially copyable values whose storage grows with realloc, for the engine's
// per-flow pools (the fair-share solver's variables and constraint blocks, the network model's
// flow records), whose peak is what bounds the largest runs' memory.
//
// Why not std::vector: it grows by allocating the new buffer, copying and then freeing the old, so
// for a moment both are resident: a pool of hundreds of MiB that grows near the peak adds its old
// size to the peak RSS. glibc's realloc moves a large block (mmap'ed, above its mmap threshold) by
// remapping its pages (mremap): nothing is copied and the old pages are not held twice. Capacity
// beyond the size is reserved, not touched, so it costs address space, not RSS.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace clustersim::sim {

template <class T>
class PodVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "PodVector moves its values with realloc");

 public:
  PodVector() = default;
  PodVector(const PodVector& o) { assign(o); }
  PodVector(PodVector&& o) noexcept { swap(o); }
  PodVector& operator=(const PodVector& o) {
    if (this != &o) assign(o);
    return *this;
  }
  PodVector& operator=(PodVector&& o) noexcept {
    swap(o);
    return *this;
  }
  ~PodVector() { std::free(data_); }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }

  // New elements are value-initialised, as std::vector::resize does.
  void resize(std::size_t n) {
    if (n > capacity_) grow(n);
    for (std::size_t i = size_; i < n; ++i) new (data_ + i) T{};
    size_ = n;
  }
  void push_back(const T& v) {
    if (size_ == capacity_) grow(size_ + 1);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }  // keeps the capacity
  // Empties it and gives its storage back (capacity 0).
  void release() {
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    capacity_ = 0;
  }
  T& emplace_back() {
    resize(size_ + 1);
    return back();
  }

  void swap(PodVector& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

 private:
  void grow(std::size_t need) {
    std::size_t cap = capacity_ < 16 ? 16 : capacity_ * 2;
    if (cap < need) cap = need;
    void* p = std::realloc(data_, cap * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    capacity_ = cap;
  }
  void assign(const PodVector& o) {
    size_ = 0;
    if (o.size_ > capacity_) grow(o.size_);
    if (o.size_ > 0) std::memcpy(static_cast<void*>(data_), o.data_, o.size_ * sizeof(T));
    size_ = o.size_;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace clustersim::sim
