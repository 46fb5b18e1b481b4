// The hardware catalog: GPUs, NICs and node presets, with every number's source.
//
// Numbers are copied from ../shared/reference (gpus.csv, links.csv, hardware.md) into
// catalog.cpp with the datasheet or measurement named beside each. Peaks are DENSE (no 2:4
// sparsity). Rates are per direction unless a name says otherwise.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/enum_names.h"
#include "sim/units.h"
#include "topology/topology.h"

namespace clustersim::topology {

// Nvfp4: NVIDIA's 4-bit training format (E2M1 elements, one FP8 E4M3 scale per 16 elements and a
// per-tensor FP32 scale; Blackwell tensor cores apply the block scales in the MMA): the linear
// layers' GEMMs run at the FP4 rate, everything else in bf16 (compute_model.h).
enum class Precision : std::uint8_t { Fp32, Tf32, Fp16, Bf16, Fp8, Nvfp4 };
// The names scenarios take (training.precision); parse with sim::parse.
inline constexpr sim::Choice<Precision> kPrecisionNames[] = {{"fp32", Precision::Fp32}, {"tf32", Precision::Tf32},
                                                             {"fp16", Precision::Fp16}, {"bf16", Precision::Bf16},
                                                             {"fp8", Precision::Fp8}, {"nvfp4", Precision::Nvfp4}};
std::string_view to_string(Precision p);  // sim::name_of(kPrecisionNames, p)
// Whether the linear layers' GEMMs take quantized operands (FP8, or NVFP4's FP4 elements).
inline constexpr bool quantized_linears(Precision p) { return p == Precision::Fp8 || p == Precision::Nvfp4; }

struct GpuSpec {
  std::string id;            // catalog id, e.g. "a100-sxm4-80gb"
  std::string name;          // e.g. "NVIDIA A100 80GB SXM4"
  int compute_capability;    // 70 Volta, 80 Ampere, 86/89 GeForce/Ada, 90 Hopper, 100 Blackwell, 942 MI300X
  // Dense peak throughput per precision; 0 where the GPU has no such unit (e.g. V100 bf16).
  sim::FlopsPerSec fp32, tf32, fp16, bf16, fp8;
  sim::FlopsPerSec fp4{};  // dense FP4 (NVFP4) tensor rate; 0 before Blackwell
  sim::Bytes memory;                 // HBM/GDDR capacity (decimal GB per datasheet)
  sim::BytesPerSec memory_bandwidth; // HBM/GDDR bandwidth
  int nvlink_links;                  // NVLink links per GPU (0 = none)
  sim::BytesPerSec nvlink_per_dir;   // total NVLink bandwidth per direction (all links)
  int pcie_gen;                      // host interface generation (x16)
  sim::Watts tdp;
  int sms;
  double boost_clock_mhz;
  // The SM clock the datasheet's dense tensor peaks assume: peak = SMs x tensor FLOP/clk/SM x
  // this clock. Equal to the boost clock except where NVIDIA quotes tensor peaks lower (H100 SXM:
  // 1830 of 1980 MHz, hardware.md §1.2). 0 = unknown (then the boost clock).
  double tensor_clock_mhz;
  double price_usd;                  // approximate street/launch price; 0 = unknown
  bool nvls;                         // NVSwitch in-switch reduction usable (Hopper+ on NVSwitch)
  std::string source;                // datasheet / whitepaper named
  // One NVLink link, per direction: the signalling payload rate (25 GB/s for NVLink 2-4) and the
  // rate NCCL's topology model assumes a link actually carries (SM80 20 GB/s, ...). The network
  // model uses the usable rate; their ratio is the NVLink protocol efficiency (0.8 on A100).
  sim::BytesPerSec nvlink_link_raw{};
  sim::BytesPerSec nvlink_link_usable{};
  // Base-2 exponentials (MUFU.EX2, the special-function units) one SM retires per clock: 16 on
  // compute capability 5.x - 10.0 (CUDA C++ Programming Guide, "Arithmetic Instructions"
  // throughput table: exp2f / __expf class, 16 results per clock per multiprocessor); Blackwell
  // Ultra (B300, GB300) doubles it for attention's softmax (NVIDIA technical blog "Inside NVIDIA
  // Blackwell Ultra", 2025: 10.7 TeraExponentials/s against Blackwell's 5). FlashAttention's
  // softmax runs one per query-key pair (ComputeModel::softmax_exp_factor).
  double sfu_exp_per_clk = 16;

  // Dense peak at a precision. tf32 falls back to fp32 on GPUs without a TF32 unit (V100), as
  // frameworks then run FP32 math. bf16 does NOT fall back: a GPU without bf16 (V100) returns 0
  // and callers must refuse the configuration. fp8 and nvfp4 likewise return 0 where there is no unit.
  sim::FlopsPerSec peak(Precision p) const;
  // nvlink_links x nvlink_link_usable: what one GPU can push over all its links, per direction.
  sim::BytesPerSec nvlink_usable_per_dir() const { return nvlink_link_usable * nvlink_links; }
};

struct NicSpec {
  std::string id;               // "ib-edr-100" | "ib-hdr-200" | "ib-ndr-400" | "ib-xdr-800" | "roce-100" | "roce-200" | "roce-400" | "eth-25"
  std::string name;
  sim::BytesPerSec per_dir;     // line rate per direction
  sim::SimTime latency;         // NIC + cable, one way
  sim::SimTime switch_latency;  // one switch hop of this fabric
  bool sharp;                   // switches of this fabric can reduce in-network (SHARP)
  FabricRouting routing;        // how its switches spread flows over equal up-links
  std::string source;
};

// How a node's GPUs reach each other: through an NVSwitch crossbar (DGX/HGX, and the NVLink
// switch trays of an NVL72 rack), NVLink bridges between pairs, PCIe only, or a full mesh of
// point-to-point scale-up links with no switch (AMD MI300X: one xGMI link per GPU pair).
enum class IntraKind : std::uint8_t { NvSwitch, NvlinkBridge, Pcie, XgmiMesh };
// The names scenarios take (cluster.node.intra); parse with sim::parse.
inline constexpr sim::Choice<IntraKind> kIntraKindNames[] = {{"nvswitch", IntraKind::NvSwitch},
                                                             {"nvlink-bridge", IntraKind::NvlinkBridge},
                                                             {"pcie", IntraKind::Pcie},
                                                             {"xgmi-mesh", IntraKind::XgmiMesh}};
std::string_view to_string(IntraKind k);  // sim::name_of(kIntraKindNames, k)

// Where a node's NICs plug into its PCIe tree: on the PCIe switch of a GPU (DGX/HGX: PIX or PXB
// from that GPU), or on a CPU root port of their own (PHB from the GPUs of that socket, as on ALCF
// Polaris' HPE Apollo 6500, whose `nvidia-smi topo -m` shows mlx5_0/1 at PHB). NCCL uses this path
// type to decide whether LL128 is safe across nodes (nccl_tuner.cpp, ll128_enabled).
enum class NicAttach : std::uint8_t { PcieSwitch, RootPort };
inline constexpr sim::Choice<NicAttach> kNicAttachNames[] = {{"pcie-switch", NicAttach::PcieSwitch},
                                                             {"root-port", NicAttach::RootPort}};

// What one server (node) looks like. A preset or an explicit [cluster.node] table.
struct NodeSpec {
  std::string id;             // preset id, or "custom"
  std::string description;
  std::string gpu;            // GpuSpec id
  int gpus = 8;               // GPUs per node
  IntraKind intra = IntraKind::NvSwitch;
  int pcie_gen = 4;           // 3 | 4 | 5 | 6 (x16 per GPU)
  int gpus_per_pcie_switch = 2;
  int sockets = 2;
  std::string nic;            // NicSpec id
  int nics = 8;               // NICs per node
  NicAttach nic_attach = NicAttach::PcieSwitch;  // where the NICs sit in the PCIe tree
  // The host side as `nvidia-smi topo -m` prints it (catalog.cpp names each preset's source). One
  // NUMA node per socket; GPUs and NICs are split evenly over sockets as the PCIe tree is built.
  int cores_per_socket = 0;   // physical CPU cores per socket; 0 = unknown (CPU Affinity "N/A")
  int threads_per_core = 2;   // SMT / Hyper-Threading: logical CPUs per core, numbered core-major
  // PCIe switch levels between a GPU and its root port: 1 = the GPU and its NICs on one switch
  // (PIX between them), 2 = a cascade (PXB between them, as on DGX A100's PEX88096 pairs).
  int pcie_switch_tiers = 1;
  // Each PCIe switch on its own root port (host bridge): two switches of one socket read NODE
  // (across host bridges inside a NUMA node) instead of PHB (through one host bridge).
  bool host_bridge_per_switch = false;
};

// --- MIG (hardware.md section 5, `nvidia-smi mig -lgip`) ---------------------------------------

// A MIG profile's usable memory as nvidia-smi lists it, for one GPU family.
struct MigProfile {
  std::string_view gpu_family;  // "a100-40", "a100-80", "h100-80" (see mig_profiles)
  std::string_view profile;     // as nvidia-smi names it, e.g. "3g.40gb"
  double memory_gib;            // usable memory of the slice, GiB
  sim::Bytes memory() const { return sim::Bytes{memory_gib * 1073741824.0}; }
};

// The listed profiles of a GPU's family, smallest first: A100 40GB, A100 80GB, H100 80GB (catalog
// ids by prefix and memory size); empty for GPUs without a published table (H200, B200, ...).
std::vector<MigProfile> mig_profiles(std::string_view gpu_id);

// A MIG slice of a GPU: its compute slices (of 7), memory slices (of 8) and SMs.
struct MigSlice {
  int compute_slices = 7;
  int memory_slices = 8;
  int sms = 0;  // SMs of the slice
};
// Throws std::invalid_argument for a malformed profile.
MigSlice resolve_mig(const GpuSpec& gpu, std::string_view profile);

// The memory one GPU (or its MIG slice, `mig` non-empty) offers: the listed GiB of the profile, or
// the profile's nominal GB for GPUs without a published table; never more than the whole GPU.
// The one capacity rule of the compute model and the memory report.
sim::Bytes gpu_memory_capacity(const GpuSpec& gpu, std::string_view mig);

const GpuSpec* find_gpu(std::string_view id);
const NicSpec* find_nic(std::string_view id);
const NodeSpec* find_node_preset(std::string_view id);
std::span<const GpuSpec> all_gpus();
std::span<const NicSpec> all_nics();
std::span<const NodeSpec> all_node_presets();

// Per-direction usable bandwidth and latency of the internal links, with sources in catalog.cpp.
sim::BytesPerSec pcie_x16_bandwidth(int gen);
sim::SimTime pcie_hop_latency();
sim::BytesPerSec cpu_interconnect_bandwidth();  // socket-to-socket, as GPU P2P sees it
sim::SimTime cpu_interconnect_latency();
sim::SimTime nvlink_hop_latency();  // one NVLink edge (GPU <-> NVSwitch, or half a bridge)

}  // namespace clustersim::topology
