// How many channels NCCL gives one grouped send/recv, and so how fast a point-to-point transfer
// over NVLink can go.
//
// NCCL runs all-to-all and send/recv as grouped point-to-point operations. Each operation is cut
// into chunks spread over channels, and each channel is one thread block copying its chunks: a
// small transfer uses few channels and cannot fill an NVSwitch port, a large one uses more. The
// count follows NCCL's own rules (src/graph/paths.cc ncclTopoGetNchannels and
// ncclTopoComputeP2pChannels, src/enqueue.cc scheduleP2pTasksToPlan and calcP2pChunkSize,
// v2.19-2.29):
//   p2p channels   = pow2Up(communicator channels), the ring/tree channels duplicated once more
//                    (connect.cc ncclTopoPostset)
//   per peer       = pow2Up(min over peers: 2 x NVLink lanes of the path, 2 for PCIe or network)
//                    capped by the p2p channels
//   min channels   = per peer, halved while min x ranks > p2p channels
//   max channels   = per peer, halved while max x ranks > 4 x p2p channels
//   step           = NCCL_P2P_NVL_CHUNKSIZE 512 KiB on NVLink, 128 KiB on PCIe or across nodes
//   chunk          = max(step/8, bytes/min); doubled channels while chunk > max chunk (32 steps on
//                    one node, 1 step across nodes) and channels <= max/2
// Each channel is assumed to copy at most one NVLink lane's rate (20.6 GB/s on H100, 20 on A100):
// a modelling assumption, not an NCCL constant. It reproduces the staircase of the H100 nccl-tests
// send/recv logs (the same busbw at 32 and 64 MiB, doubling at 128 and 256 MiB; see
// docs/validation.md); the planner exposes it as `CollectivePlan::p2p_nvlink_cap`.
#pragma once

#include "workloads/collectives/nccl_tuner.h"

namespace clustersim::workloads {

struct P2pChannels {
  int p2p_channels = 1;     // NCCL comm->p2pnChannels
  int per_peer = 1;         // comm->p2pnChannelsPerPeer
  int min_channels = 1;     // for this group size
  int max_channels = 1;
  double chunk_bytes = 0;   // bytes per channel
  int channels = 1;         // channels this transfer uses
  double step_bytes = 0;    // NCCL's p2p step: NCCL_P2P_NVL_CHUNKSIZE / NCCL_P2P_NET_CHUNKSIZE
};

// The pipeline fill of one grouped send over NVLink, in µs: one NCCL step that no NVLink transfer
// overlaps. NCCL moves p2p data through a staging FIFO in steps: on H100 the sender writes each
// step over NVLink into the receiver's FIFO and the receiving channel's thread block copies it
// into the user buffer, so the copy of the last step trails the wire; on A100 (P2P read, NCCL's
// default there only: src/graph/paths.cc ncclTopoCheckP2p, "Enable P2P Read for Ampere/NVLink
// only") the sender's local copy of the first step precedes it. Either costs min(chunk, step)
// bytes at the channel's copy rate (one NVLink lane, the same assumption as the cap above):
// 512 KiB / 20.6 GB/s = 25.5 µs on H100. Nothing fitted: the step is NCCL's default, the lane the
// catalog's NVLink rate. The plan charges [model_constants] p2p_drain_steps (default 1) of them
// (collective_runner.cpp; GraphHints::p2p_drain_steps carries it).
double p2p_drain_us(const P2pChannels& c, double lane_GBps);

// The channels one send of `peer_bytes` uses in a group of g.ranks ranks.
P2pChannels nccl_p2p_channels(const NcclGraph& g, double peer_bytes);

}  // namespace clustersim::workloads
