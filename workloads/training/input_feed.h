// One data-loading GPU's input pipeline inside the iteration simulation ([data]): a PyTorch
// DataLoader (or DALI with gpu_decode) hands the training loop one micro-batch per forward pass of
// the first virtual stage (token ids) or the last (labels), and the batch is copied host-to-device
// as a live flow on the engine, from the GPU's CPU root complex down its PCIe path, so it competes
// with every other flow there (NIC traffic of PCIe-attached NICs, GPU-to-GPU traffic through the
// root complex on PCIe-only nodes) and they with it.
//
// The loader, exactly as torch.utils.data.DataLoader schedules it with W = loader_workers > 0 and
// Q = W x prefetch_factor: the index of batch j is sent to worker j mod W when batch j - Q is taken
// by the training loop, and a worker makes its batches in order, each taking T (one core's time for
// a micro-batch: samples x cpu_ms_per_sample, times gpu_decode_cpu_share with gpu_decode):
//     ready_j = max(ready_{j-W}, taken_{j-Q}) + T        (ready_j = 0 for j < Q: the queue is full
//                                                         when the measured iterations start)
// With W = 0 (DataLoader's default) the training loop makes the batch itself: ready_j = taken_j + T.
// In the steady state a loader slower than the GPU makes every micro-batch wait T/W - (GPU time per
// micro-batch); the queue depth only decides how soon that starts.
// The copy runs on the compute stream before the pass (tensor.to(device) on the current stream):
// pinned memory DMAs at the links' rate; pageable memory is staged through a pinned bounce buffer
// by a CPU memcpy, so the flow is capped at pageable_h2d_ratio x the PCIe x16 rate (CUDA C++ Best
// Practices Guide, "Pinned Memory"). With gpu_decode the GPU then decodes the batch for
// T_cpu / gpu_decode_speedup on the compute stream (DALI / nvJPEG). The pass waits for all of it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/simulator.h"
#include "topology/network_model.h"
#include "topology/topology.h"
#include "workloads/compute/compute_model.h"
#include "workloads/training/input_pipeline.h"

namespace clustersim::workloads {

// What one micro-batch costs the pipeline (seconds, bytes), from [data] and the model constants.
struct InputFeedSpec {
  double batch_cpu_s = 0;    // T: one worker's time for one micro-batch
  int workers = 0;           // W
  int queue = 0;             // Q = W x prefetch_factor (0 with W = 0)
  double batch_bytes = 0;    // host-to-device bytes per micro-batch
  double copy_rate_cap = 0;  // bytes/s cap of the copy flow (pageable); 0: none (pinned)
  double pcie_bytes_per_s = 0;  // the copy's rate when the GPU has no host route (no flow then)
  double gpu_decode_s = 0;   // GPU decode per micro-batch (gpu_decode), on the compute stream
};

// One micro-batch of `micro_batch` samples under [data], with the model constants
// pageable_h2d_ratio, gpu_decode_speedup and gpu_decode_cpu_share (compute_constants.cpp has their
// sources) and the GPU's PCIe x16 rate (bytes/s).
InputFeedSpec input_feed_spec(const DataSpec& data, int micro_batch, const ComputeConstants& constants,
                              double pcie_bytes_per_s);

// Told when a requested batch is on the GPU (decoded when gpu_decode): `tag` is the feed's.
class InputFeedListener {
 public:
  virtual void on_input_ready(std::uint64_t tag) = 0;

 protected:
  ~InputFeedListener() = default;
};

// The host -> GPU path: the GPU's nearest CPU root complex down the PCIe tree to the GPU (empty,
// hops = 0, when the topology has no root complex above the GPU).
topology::Route host_to_gpu_route(const topology::Topology& topo, int gpu);

class InputFeed final : public sim::EventHandler, public topology::TransferListener {
 public:
  InputFeed(sim::Simulator& sim, topology::NetworkModel& net, topology::Route route, InputFeedSpec spec,
            InputFeedListener* listener, std::uint64_t tag);

  enum class State : std::uint8_t { Idle, Waiting, Ready };
  State state() const { return state_; }
  // The training loop takes the next batch now: from the loader, then copied (and decoded).
  void request();
  // The pass starts with the ready batch; returns how long the stream waited for it (seconds).
  double consume();
  const topology::Route& route() const { return route_; }
  std::uint64_t tag() const { return tag_; }
  // When the last copy flow started and ended (seconds), for timelines.
  double copy_start_s() const { return copy_start_s_; }
  double loader_wait_s() const { return copy_start_s_ - requested_s_; }

  void on_event(std::uint64_t tag) override;
  void on_transfer_done(std::uint64_t tag) override;

 private:
  double loader_ready_s(std::size_t j) const;  // ready_j (the recurrence above)
  void start_copy(bool notify);  // notify: tell the listener when ready even if at once
  void ready(bool notify);

  sim::Simulator& sim_;
  topology::NetworkModel& net_;
  topology::Route route_;
  InputFeedSpec spec_;
  InputFeedListener* listener_;
  std::uint64_t tag_;
  State state_ = State::Idle;
  std::vector<double> taken_s_, ready_s_;  // per batch j, over the whole run
  double requested_s_ = 0, copy_start_s_ = 0;
};

}  // namespace clustersim::workloads
