// The hardware catalog. Every number is copied from ../shared/reference (gpus.csv, links.csv,
// hardware.md §1-2), which names the datasheet or the NCCL source file; the `source` strings and
// the comments carry that attribution on. Peaks are DENSE (datasheet sparse figures halved where
// the datasheet quotes 2:4 sparsity). Bandwidths are per direction. GB = 1e9 bytes.
#include "topology/catalog.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace clustersim::topology {
namespace {

using namespace sim::literals;

constexpr sim::FlopsPerSec tf(double v) { return sim::FlopsPerSec{v * 1e12}; }
constexpr sim::BytesPerSec gbps(double v) { return sim::BytesPerSec{v * 1e9}; }
constexpr sim::Bytes gb(double v) { return sim::Bytes{v * 1e9}; }
// GPU memory sizes on datasheets count binary gigabytes: HBM/GDDR stacks are 2^k bytes, and
// nvidia-smi reports 81,920 MiB for an A100 80GB, 40,960 MiB for an A100 40GB and 24,564 MiB for
// an RTX 4090 (24 GiB less a reserved sliver). H100/H200 expose slightly less than the nominal
// GiB (81,559 MiB; 143,771 MiB) -- within 1%, covered by the memory model's runtime terms.
constexpr sim::Bytes gib(double v) { return sim::Bytes{v * 1073741824.0}; }

// --- NVLink per link, per direction (hardware.md §2.2, links.csv) -----------------------------
// Raw: the lane-rate payload of one link (NVLink 2/3/4: 25 GB/s, NVLink 5: 50 GB/s, GA102 bridge
// x4 link: 14.0625 GB/s). Usable: NCCL's topology model (src/graph/topo.h, NCCL 2.30.7):
// SM70_NVLINK_BW 20, SM80_NVLINK_BW 20, SM86_NVLINK_BW 12, SM90_NVLINK_BW 20.6,
// SM100_NVLINK_BW 40.1. usable / raw is the NVLink protocol efficiency (packet headers, flow
// control credits): 0.80 on NVLink 2/3, 0.824 on NVLink 4, 0.802 on NVLink 5.
constexpr sim::BytesPerSec kNvlink2Raw = gbps(25.0), kNvlink2Usable = gbps(20.0);    // V100
constexpr sim::BytesPerSec kNvlink3Raw = gbps(25.0), kNvlink3Usable = gbps(20.0);    // A100
constexpr sim::BytesPerSec kGa102BridgeRaw = gbps(14.0625), kGa102BridgeUsable = gbps(12.0);
constexpr sim::BytesPerSec kNvlink4Raw = gbps(25.0), kNvlink4Usable = gbps(20.6);    // H100/H200
constexpr sim::BytesPerSec kNvlink5Raw = gbps(50.0), kNvlink5Usable = gbps(40.1);    // B200
// MI300X Infinity Fabric (xGMI): 7 links x 128 GB/s bidirectional = 64 GB/s per direction per
// peer (AMD MI300X datasheet, hardware.md §1.2). No RCCL-modelled efficiency is in the reference,
// so usable = raw (UNSURE). Stored in the nvlink fields as the GPU's scale-up link.
constexpr sim::BytesPerSec kXgmiRaw = gbps(64.0), kXgmiUsable = gbps(64.0);

const std::array<GpuSpec, 23> kGpus = {{
    {.id = "v100-sxm2-32gb", .name = "NVIDIA V100 SXM2 32GB", .compute_capability = 70,
     // Tensor 125 TF is FP16 multiply / FP32 accumulate; no TF32, BF16 or FP8 units.
     .fp32 = tf(15.7), .tf32 = tf(0), .fp16 = tf(125), .bf16 = tf(0), .fp8 = tf(0),
     .memory = gib(32), .memory_bandwidth = gbps(900), .nvlink_links = 6,
     .nvlink_per_dir = gbps(150), .pcie_gen = 3, .tdp = sim::Watts{300}, .sms = 80,
     .boost_clock_mhz = 1530, .tensor_clock_mhz = 1530, .price_usd = 0, .nvls = false,
     .source = "NVIDIA V100 datasheet; Volta whitepaper; NCCL topo.h SM70_NVLINK_BW",
     .nvlink_link_raw = kNvlink2Raw, .nvlink_link_usable = kNvlink2Usable},
    // The SXM3 parts of the DGX-2 (16 GPUs on NVSwitch): the same GV100 die (80 SMs, 81,920 fp16
    // tensor FLOP/clk) at a higher power limit. NVIDIA raised V100's limit from 300 to 350 W for
    // the DGX-2 (2 PFLOPS = 16 x 125 TF) and to 450 W per GPU for the DGX-2H (2.1 PFLOPS, 12 kW;
    // ServeTheHome via tomshw.it and tomshardware.com/news/nvidia-worlds-largest-gpu-dgx-2h,38089).
    // NVIDIA ADLR's Megatron v1.0 post (nv-adlr.github.io/MegatronLMV1, 2020-05-15) puts 62.4
    // TFLOP/s at "48% of the theoretical peak FLOPS for a single GPU in a DGX2-H server": 130 TF,
    // i.e. 130e12 / 81,920 = 1587 MHz; the tensor clock is 1530 x 130/125 = 1591 MHz (DERIVED).
    // HBM2 and NVLink as the SXM2 part (UNSURE: no per-GPU SXM3 datasheet in shared/reference).
    {.id = "v100-sxm3-32gb", .name = "NVIDIA V100 SXM3 32GB (DGX-2, 350 W)", .compute_capability = 70,
     .fp32 = tf(15.7), .tf32 = tf(0), .fp16 = tf(125), .bf16 = tf(0), .fp8 = tf(0),
     .memory = gib(32), .memory_bandwidth = gbps(900), .nvlink_links = 6,
     .nvlink_per_dir = gbps(150), .pcie_gen = 3, .tdp = sim::Watts{350}, .sms = 80,
     .boost_clock_mhz = 1530, .tensor_clock_mhz = 1530, .price_usd = 0, .nvls = false,
     .source = "NVIDIA DGX-2 (2 PFLOPS, 16 GPUs); 350 W per GPU: ServeTheHome via tomshw.it (DGX-2H "
               "article); else as the V100 SXM2",
     .nvlink_link_raw = kNvlink2Raw, .nvlink_link_usable = kNvlink2Usable},
    {.id = "v100-sxm3-32gb-h", .name = "NVIDIA V100 SXM3 32GB-H (DGX-2H, 450 W)", .compute_capability = 70,
     .fp32 = tf(16.3), .tf32 = tf(0), .fp16 = tf(130), .bf16 = tf(0), .fp8 = tf(0),
     .memory = gib(32), .memory_bandwidth = gbps(900), .nvlink_links = 6,
     .nvlink_per_dir = gbps(150), .pcie_gen = 3, .tdp = sim::Watts{450}, .sms = 80,
     .boost_clock_mhz = 1591, .tensor_clock_mhz = 1591, .price_usd = 0, .nvls = false,
     .source = "NVIDIA ADLR Megatron v1.0 post (130 TF peak per DGX-2H GPU: 62.4 TF = 48%); DGX-2H "
               "2.1 PFLOPS at 12 kW, 450 W per GPU (tomshardware.com 38089; tomshw.it); else as SXM2",
     .nvlink_link_raw = kNvlink2Raw, .nvlink_link_usable = kNvlink2Usable},
    {.id = "a100-sxm4-40gb", .name = "NVIDIA A100 40GB SXM4", .compute_capability = 80,
     .fp32 = tf(19.5), .tf32 = tf(156), .fp16 = tf(312), .bf16 = tf(312), .fp8 = tf(0),
     .memory = gib(40), .memory_bandwidth = gbps(1555), .nvlink_links = 12,
     .nvlink_per_dir = gbps(300), .pcie_gen = 4, .tdp = sim::Watts{400}, .sms = 108,
     .boost_clock_mhz = 1410, .tensor_clock_mhz = 1410, .price_usd = 0, .nvls = false,
     .source = "NVIDIA A100 datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4); Ampere GA100 "
               "whitepaper; NCCL topo.h SM80_NVLINK_BW",
     .nvlink_link_raw = kNvlink3Raw, .nvlink_link_usable = kNvlink3Usable},
    {.id = "a100-sxm4-80gb", .name = "NVIDIA A100 80GB SXM4", .compute_capability = 80,
     .fp32 = tf(19.5), .tf32 = tf(156), .fp16 = tf(312), .bf16 = tf(312), .fp8 = tf(0),
     .memory = gib(80), .memory_bandwidth = gbps(2039), .nvlink_links = 12,
     .nvlink_per_dir = gbps(300), .pcie_gen = 4, .tdp = sim::Watts{400}, .sms = 108,
     .boost_clock_mhz = 1410, .tensor_clock_mhz = 1410, .price_usd = 0, .nvls = false,
     .source = "NVIDIA A100 80GB datasheet; NCCL topo.h SM80_NVLINK_BW",
     .nvlink_link_raw = kNvlink3Raw, .nvlink_link_usable = kNvlink3Usable},
    // PCIe A100s: datasheet peaks equal the SXM part's; the NVLink bridge pairs two cards with
    // 600 GB/s bidirectional = 12 NVLink3 links x 25 GB/s per direction (MEDIUM confidence).
    {.id = "a100-pcie-40gb", .name = "NVIDIA A100 40GB PCIe", .compute_capability = 80,
     .fp32 = tf(19.5), .tf32 = tf(156), .fp16 = tf(312), .bf16 = tf(312), .fp8 = tf(0),
     .memory = gib(40), .memory_bandwidth = gbps(1555), .nvlink_links = 12,
     .nvlink_per_dir = gbps(300), .pcie_gen = 4, .tdp = sim::Watts{250}, .sms = 108,
     .boost_clock_mhz = 1410, .tensor_clock_mhz = 1410, .price_usd = 10000, .nvls = false,
     .source = "NVIDIA A100 PCIe product brief PB-10137; A100 datasheet (bridge 600 GB/s); price: "
               "the AI server guide's mid tier (shared/context, \"1x A100 40GB, about $10000\"; UNSURE)",
     .nvlink_link_raw = kNvlink3Raw, .nvlink_link_usable = kNvlink3Usable},
    {.id = "a100-pcie-80gb", .name = "NVIDIA A100 80GB PCIe", .compute_capability = 80,
     .fp32 = tf(19.5), .tf32 = tf(156), .fp16 = tf(312), .bf16 = tf(312), .fp8 = tf(0),
     .memory = gib(80), .memory_bandwidth = gbps(1935), .nvlink_links = 12,
     .nvlink_per_dir = gbps(300), .pcie_gen = 4, .tdp = sim::Watts{300}, .sms = 108,
     .boost_clock_mhz = 1410, .tensor_clock_mhz = 1410, .price_usd = 0, .nvls = false,
     .source = "NVIDIA A100 80GB datasheet; A100 PCIe product brief PB-10137",
     .nvlink_link_raw = kNvlink3Raw, .nvlink_link_usable = kNvlink3Usable},
    // Hopper datasheet tensor figures are with sparsity; dense = half (TF32 494.7, BF16 989.4,
    // FP8 1979). Price: reported street range $25-30k, midpoint (UNSURE, +-30 %).
    {.id = "h100-sxm5-80gb", .name = "NVIDIA H100 SXM5 80GB", .compute_capability = 90,
     .fp32 = tf(67), .tf32 = tf(494.7), .fp16 = tf(989.4), .bf16 = tf(989.4), .fp8 = tf(1979),
     .memory = gib(80), .memory_bandwidth = gbps(3350), .nvlink_links = 18,
     .nvlink_per_dir = gbps(450), .pcie_gen = 5, .tdp = sim::Watts{700}, .sms = 132,
     .boost_clock_mhz = 1980, .tensor_clock_mhz = 1830, .price_usd = 27500, .nvls = true,
     .source = "NVIDIA H100 datasheet (sparse/2); Hopper whitepaper; NCCL topo.h SM90_NVLINK_BW",
     .nvlink_link_raw = kNvlink4Raw, .nvlink_link_usable = kNvlink4Usable},
    // H100 PCIe: 114 SMs at 1755 MHz; bridge 600 GB/s, 12 links is an ASSUMPTION (600 / 50).
    // Tensor clock DERIVED: 756.5 TF / (114 SMs x 4096 dense FLOP/clk/SM) = 1620 MHz.
    {.id = "h100-pcie-80gb", .name = "NVIDIA H100 PCIe 80GB", .compute_capability = 90,
     .fp32 = tf(51), .tf32 = tf(378), .fp16 = tf(756.5), .bf16 = tf(756.5), .fp8 = tf(1513),
     .memory = gib(80), .memory_bandwidth = gbps(2000), .nvlink_links = 12,
     .nvlink_per_dir = gbps(300), .pcie_gen = 5, .tdp = sim::Watts{350}, .sms = 114,
     .boost_clock_mhz = 1755, .tensor_clock_mhz = 1620, .price_usd = 27500, .nvls = true,
     .source = "NVIDIA H100 datasheet (sparse/2); H100 PCIe product brief PB-11133",
     .nvlink_link_raw = kNvlink4Raw, .nvlink_link_usable = kNvlink4Usable},
    // H100 NVL: the NVL column of NVIDIA's H100 datasheet, per GPU (../shared/reference/gpus.csv
    // "H100 NVL (per GPU)": 94 GB HBM3 at 3.9 TB/s, 835.5 / 1,670.5 TF bf16 / fp8 dense, 350-400 W,
    // sold as NVLink-bridged pairs at 600 GB/s). 132 SMs UNSURE (the reference's). Bridge links:
    // 12 is an ASSUMPTION (600 / 50), as for the H100 PCIe. Tensor clock DERIVED: 835.5 TF / (132
    // SMs x 4096 dense FLOP/clk/SM) = 1545 MHz; the datasheet gives no boost clock, so the derived
    // one stands for it. No public price.
    {.id = "h100-nvl-94gb", .name = "NVIDIA H100 NVL 94GB", .compute_capability = 90,
     .fp32 = tf(60), .tf32 = tf(417.5), .fp16 = tf(835.5), .bf16 = tf(835.5), .fp8 = tf(1670.5),
     .memory = gib(94), .memory_bandwidth = gbps(3900), .nvlink_links = 12,
     .nvlink_per_dir = gbps(300), .pcie_gen = 5, .tdp = sim::Watts{400}, .sms = 132,
     .boost_clock_mhz = 1545, .tensor_clock_mhz = 1545, .price_usd = 0, .nvls = true,
     .source = "NVIDIA H100 datasheet, H100 NVL column (sparse/2), as ../shared/reference/gpus.csv quotes it",
     .nvlink_link_raw = kNvlink4Raw, .nvlink_link_usable = kNvlink4Usable},
    {.id = "h200-sxm-141gb", .name = "NVIDIA H200 SXM 141GB", .compute_capability = 90,
     .fp32 = tf(67), .tf32 = tf(494.7), .fp16 = tf(989.4), .bf16 = tf(989.4), .fp8 = tf(1979),
     .memory = gib(141), .memory_bandwidth = gbps(4800), .nvlink_links = 18,
     .nvlink_per_dir = gbps(450), .pcie_gen = 5, .tdp = sim::Watts{700}, .sms = 132,
     .boost_clock_mhz = 1980, .tensor_clock_mhz = 1830, .price_usd = 35000, .nvls = true,
     .source = "NVIDIA H200 product page/datasheet (GH100 compute as H100 SXM); price reported "
               "$30-40k (UNSURE)",
     .nvlink_link_raw = kNvlink4Raw, .nvlink_link_usable = kNvlink4Usable},
    // B200: HGX B200 column of NVIDIA's GB200 NVL72 / HGX B200 spec table, sparse/2 (FP4 18 PF* ->
    // 9,000 dense; ../shared/reference/gpus.csv fp4_dense_tflops, hardware.md §1.2). SM count
    // 148 is not in NVIDIA's table (UNSURE). Boost clock 1,965 MHz and the 1,000 W limit: nvidia-smi
    // -q -x of an 8x B200 node (max and max-customer-boost SM clock, default power limit;
    // NVIDIA/k8s-test-infra@5f8956ad tests/e2e/go/assertions/nvidiasmi/testdata/hardware/qx-b200.xml,
    // "real-hardware nvidia-smi captures"). Tensor clock DERIVED and UNSURE: 2250 TF / (148 SMs x
    // 8192 dense FLOP/clk/SM, twice Hopper's per SM) = 1856 MHz, below the boost clock.
    {.id = "b200", .name = "NVIDIA B200 (HGX, per GPU)", .compute_capability = 100,
     .fp32 = tf(75), .tf32 = tf(1100), .fp16 = tf(2250), .bf16 = tf(2250), .fp8 = tf(4500), .fp4 = tf(9000),
     .memory = gib(180), .memory_bandwidth = gbps(7700), .nvlink_links = 18,
     .nvlink_per_dir = gbps(900), .pcie_gen = 5, .tdp = sim::Watts{1000}, .sms = 148,
     .boost_clock_mhz = 1965, .tensor_clock_mhz = 1856, .price_usd = 35000, .nvls = true,
     .source = "NVIDIA HGX B200 / GB200 NVL72 spec table (sparse/2); boost clock: nvidia-smi capture, "
               "NVIDIA/k8s-test-infra qx-b200.xml; price: J. Huang, CNBC 2024 ($30-40k); NCCL topo.h "
               "SM100_NVLINK_BW",
     .nvlink_link_raw = kNvlink5Raw, .nvlink_link_usable = kNvlink5Usable},
    // GB200 NVL72's Blackwell GPU: GB200 NVL72 column of the same spec table, per GPU, sparse/2
    // (hardware.md §1.2: BF16 2,500 dense, FP8 5,000, FP4 10,000, 186 GB HBM3e, 8 TB/s, up to 1,200 W). SM count
    // 148 as B200 (UNSURE); tensor clock DERIVED: 2500 TF / (148 x 8192) = 2062 MHz, which is the
    // SM clock nvidia-smi reports as its maximum, with the 1,200 W default power limit
    // (k8s-test-infra@5f8956ad qx-gb200.xml, 4x GB200 of a p6e-gb200 node; boost clock from it).
    // The 18 NVLink 5 links go to the rack's NVLink switch trays (gb200-nvl72 node preset).
    {.id = "gb200", .name = "NVIDIA GB200 (Blackwell GPU of the NVL72 rack)", .compute_capability = 100,
     .fp32 = tf(80), .tf32 = tf(1250), .fp16 = tf(2500), .bf16 = tf(2500), .fp8 = tf(5000), .fp4 = tf(10000),
     .memory = gib(186), .memory_bandwidth = gbps(8000), .nvlink_links = 18,
     .nvlink_per_dir = gbps(900), .pcie_gen = 5, .tdp = sim::Watts{1200}, .sms = 148,
     .boost_clock_mhz = 2062, .tensor_clock_mhz = 2062, .price_usd = 0, .nvls = true,
     .source = "NVIDIA GB200 NVL72 spec table, GB200 NVL72 column per GPU (sparse/2); boost clock: "
               "nvidia-smi capture, NVIDIA/k8s-test-infra qx-gb200.xml; NCCL topo.h SM100_NVLINK_BW",
     .nvlink_link_raw = kNvlink5Raw, .nvlink_link_usable = kNvlink5Usable},
    // B300 (Blackwell Ultra), HGX B300 column of NVIDIA's HGX spec table, per GPU = the 8-GPU
    // figures / 8, sparse/2: TF32 18 PF* -> 1,125, BF16 36 PF* -> 2,250, FP8 72 PF* -> 4,500, FP32
    // 600 -> 75; "up to 2.3 TB" HBM3e -> 288 GB, 1.8 TB/s NVLink 5 per GPU (table quoted by
    // fibermall.com/blog/?p=17161 and glennklockwood.com/garden/processors/B300; not in
    // ../shared/reference). Memory bandwidth 8 TB/s is the GTC 2025 GB300 figure (glennklockwood.com,
    // UNSURE for the HGX part). Measured on a "NVIDIA B300 SXM6 AC" (sm_103a) by ademeure/QuickRunCUDA
    // @fede479c b300_clean/B300_TRUE_REFERENCE.md, 2026-04-18: 148 SMs (NVIDIA's Blackwell Ultra
    // blog's 160 is the full die), boost 2,032 MHz, power limit at most 1,100 W; the 1,100 W also
    // in Verda's datacrunch-research/blogs@1bb44355 blackwell-vms ("up to 1,100W vs. 1,000W in
    // B200"). Tensor clock DERIVED as B200's: 2250 TF / (148 x 8192) = 1856 MHz. The same page
    // measures cuBLAS bf16 8192^3 at 1,883 TF/s on random data (2,242 on zeros), in line with
    // measured_matmul.cpp's 1,769. PCIe Gen6 host link per fibermall. Dense FP4 (NVFP4): HGX B300 "FP4
    // Tensor Core 144 PF* | 108 PF" (sparse | dense) / 8 = 13,500: Blackwell Ultra raised the FP4
    // rate 1.5x over Blackwell, not FP8 (NVIDIA Blackwell Ultra datasheet; not in ../shared/reference:
    // UNSURE).
    {.id = "b300", .name = "NVIDIA B300 (HGX, per GPU)", .compute_capability = 100,
     .fp32 = tf(75), .tf32 = tf(1125), .fp16 = tf(2250), .bf16 = tf(2250), .fp8 = tf(4500), .fp4 = tf(13500),
     .memory = gib(288), .memory_bandwidth = gbps(8000), .nvlink_links = 18,
     .nvlink_per_dir = gbps(900), .pcie_gen = 6, .tdp = sim::Watts{1100}, .sms = 148,
     .boost_clock_mhz = 2032, .tensor_clock_mhz = 1856, .price_usd = 0, .nvls = true,
     .source = "NVIDIA HGX B300 spec table (per GPU = /8, sparse/2) as quoted by fibermall.com and "
               "glennklockwood.com; SMs, boost clock, 1,100 W: measured, ademeure/QuickRunCUDA "
               "b300_clean/B300_TRUE_REFERENCE.md; NCCL topo.h SM100_NVLINK_BW",
     .nvlink_link_raw = kNvlink5Raw, .nvlink_link_usable = kNvlink5Usable, .sfu_exp_per_clk = 32},
    // GB300 NVL72's Blackwell Ultra GPU: NVIDIA GB300 NVL72 spec table (nvidia.com/en-us/data-center/
    // gb300-nvl72), rack figures / 72, sparse/2: TF32 180 PF* -> 1,250, BF16 360 PF* -> 2,500, FP8
    // 720 PF* -> 5,000, FP32 6 PF -> 83.3; GPU memory "up to 21 TB | 576 TB/s" -> 288 GB HBM3e,
    // 8 TB/s; NVLink 130 TB/s -> 1.8 TB/s per GPU (18 NVLink 5 links). Not in ../shared/reference.
    // 1,400 W per GPU: the default power limit nvidia-smi reports on a 4x GB300 node, with a maximum
    // SM clock of 2,070 MHz (k8s-test-infra@5f8956ad qx-gb300.xml; boost clock from it). SM count
    // 160, the full die of NVIDIA's Blackwell Ultra blog (UNSURE: the HGX B300 measures 148, and
    // 2500 TF at 148 SMs would be quoted at 2,062 MHz, GB200's own clock; kept at 160 until a
    // GB300 count is published, see docs/validation.md session 26); tensor clock DERIVED and
    // UNSURE: 2500 TF / (160 x 8192) = 1907 MHz. Compute capability: Blackwell Ultra is sm_103 (CUDA 12.9
    // release notes); 100 is kept, as for b300, since every model branch keys on the major 10.
    // PCIe Gen6 to the ConnectX-8 SuperNIC (NVIDIA ConnectX-8 SuperNIC datasheet: PCIe Gen6 x16).
    // Dense FP4 (NVFP4): the same table's "FP4 Tensor Core 1,440 PF* | 1,080 PF" / 72 = 15,000, the
    // "15 PFLOPS dense NVFP4" per Blackwell Ultra GPU of NVIDIA's Blackwell Ultra technical blog
    // (not in ../shared/reference: UNSURE).
    {.id = "gb300", .name = "NVIDIA GB300 (Blackwell Ultra GPU of the NVL72 rack)", .compute_capability = 100,
     .fp32 = tf(83.3), .tf32 = tf(1250), .fp16 = tf(2500), .bf16 = tf(2500), .fp8 = tf(5000), .fp4 = tf(15000),
     .memory = gib(288), .memory_bandwidth = gbps(8000), .nvlink_links = 18,
     .nvlink_per_dir = gbps(900), .pcie_gen = 6, .tdp = sim::Watts{1400}, .sms = 160,
     .boost_clock_mhz = 2070, .tensor_clock_mhz = 1907, .price_usd = 0, .nvls = true,
     .source = "NVIDIA GB300 NVL72 spec table, per GPU = rack / 72 (sparse/2); 1,400 W and boost clock: "
               "nvidia-smi capture, NVIDIA/k8s-test-infra qx-gb300.xml; SM count: NVIDIA Blackwell Ultra "
               "blog (UNSURE); NCCL topo.h SM100_NVLINK_BW",
     .nvlink_link_raw = kNvlink5Raw, .nvlink_link_usable = kNvlink5Usable, .sfu_exp_per_clk = 32},
    // --- Export variants for China (US export rules 2022-2023) -----------------------------------
    // A800: the A100 80GB SXM with NVLink cut to 8 links / 400 GB/s bidirectional (links.csv,
    // NVLink 3.0 row: "A800 export variant: 8 links / 400 GB/s"); compute and memory as A100 80GB.
    {.id = "a800-sxm4-80gb", .name = "NVIDIA A800 80GB SXM4", .compute_capability = 80,
     .fp32 = tf(19.5), .tf32 = tf(156), .fp16 = tf(312), .bf16 = tf(312), .fp8 = tf(0),
     .memory = gib(80), .memory_bandwidth = gbps(2039), .nvlink_links = 8,
     .nvlink_per_dir = gbps(200), .pcie_gen = 4, .tdp = sim::Watts{400}, .sms = 108,
     .boost_clock_mhz = 1410, .tensor_clock_mhz = 1410, .price_usd = 0, .nvls = false,
     .source = "NVIDIA A800 datasheet via links.csv (8 NVLink 3 links, 400 GB/s); compute as A100 80GB "
               "datasheet; NCCL topo.h SM80_NVLINK_BW",
     .nvlink_link_raw = kNvlink3Raw, .nvlink_link_usable = kNvlink3Usable},
    // H800 SXM: the H100 SXM die, clocks and tensor peaks with NVLink cut to 400 GB/s
    // bidirectional (NVIDIA H800 datasheet as summarised by philisun.com "H800 vs H100"; DeepSeek-V3
    // technical report, arXiv 2412.19437 §3.1, measures ~160 GB/s of NVLink per GPU on H800 nodes).
    // 8 links is DERIVED: 400 GB/s / (2 x 25 GB/s per NVLink 4 link). FP64 is cut to ~1 TF (not
    // modelled). Price unknown.
    {.id = "h800-sxm5-80gb", .name = "NVIDIA H800 SXM5 80GB", .compute_capability = 90,
     .fp32 = tf(67), .tf32 = tf(494.7), .fp16 = tf(989.4), .bf16 = tf(989.4), .fp8 = tf(1979),
     .memory = gib(80), .memory_bandwidth = gbps(3350), .nvlink_links = 8,
     .nvlink_per_dir = gbps(200), .pcie_gen = 5, .tdp = sim::Watts{700}, .sms = 132,
     .boost_clock_mhz = 1980, .tensor_clock_mhz = 1830, .price_usd = 0, .nvls = true,
     .source = "NVIDIA H800 datasheet (NVLink 400 GB/s; compute as H100 SXM, sparse/2); DeepSeek-V3 "
               "report arXiv 2412.19437; NCCL topo.h SM90_NVLINK_BW",
     .nvlink_link_raw = kNvlink4Raw, .nvlink_link_usable = kNvlink4Usable},
    // H20: a Hopper part capped for the 2023 export rule. Dense tensor peaks FP16/BF16 148, FP8
    // 296, TF32 74, FP32 44 TFLOPS; 96 GB HBM3 at 4.0 TB/s; full 900 GB/s NVLink 4; 400 W (NVIDIA
    // H20 spec sheet as reported by willitrunai.com/gpus/h20-96gb and zangshuxian.com, UNSURE: no
    // NVIDIA page in the reference). 78 SMs from a Geekbench 6 listing (UNSURE). The tensor cap is a
    // firmware limit, not SMs x clock (78 x 4096 FLOP/clk would need a 463 MHz clock), so no clock
    // is given (0: unpublished) and the compute model's peak is the capped one.
    {.id = "h20", .name = "NVIDIA H20 96GB", .compute_capability = 90,
     .fp32 = tf(44), .tf32 = tf(74), .fp16 = tf(148), .bf16 = tf(148), .fp8 = tf(296),
     .memory = gib(96), .memory_bandwidth = gbps(4000), .nvlink_links = 18,
     .nvlink_per_dir = gbps(450), .pcie_gen = 5, .tdp = sim::Watts{400}, .sms = 78,
     .boost_clock_mhz = 0, .tensor_clock_mhz = 0, .price_usd = 0, .nvls = true,
     .source = "NVIDIA H20 spec sheet as reported (willitrunai.com, zangshuxian.com; UNSURE); SMs: "
               "Geekbench 6 listing (UNSURE); NCCL topo.h SM90_NVLINK_BW",
     .nvlink_link_raw = kNvlink4Raw, .nvlink_link_usable = kNvlink4Usable},
    // Left out for want of a source: the L20 (AD102, 92 SMs, 48 GB GDDR6 864 GB/s, 275 W per
    // third-party spec databases) -- no NVIDIA figure for its tensor peaks was found, and the
    // "32 % of L40S" reports are hearsay; the RTX 4090 48 GB -- a board-partner modification with
    // no NVIDIA datasheet.
    // GeForce: FP16/BF16 tensor with FP32 accumulate (what AMP training uses) runs at half rate.
    {.id = "rtx-3090", .name = "NVIDIA GeForce RTX 3090", .compute_capability = 86,
     .fp32 = tf(35.6), .tf32 = tf(35.6), .fp16 = tf(71), .bf16 = tf(71), .fp8 = tf(0),
     .memory = gib(24), .memory_bandwidth = gbps(936), .nvlink_links = 4,
     .nvlink_per_dir = gbps(56.25), .pcie_gen = 4, .tdp = sim::Watts{350}, .sms = 82,
     .boost_clock_mhz = 1695, .tensor_clock_mhz = 1695, .price_usd = 1499, .nvls = false,
     .source = "NVIDIA GA102 whitepaper v2 Appendix A (FP32-accumulate rates; bridge 4 x4 links "
               "14.0625 GB/s/dir); MSRP Sept 2020; NCCL topo.h SM86_NVLINK_BW",
     .nvlink_link_raw = kGa102BridgeRaw, .nvlink_link_usable = kGa102BridgeUsable},
    {.id = "rtx-4090", .name = "NVIDIA GeForce RTX 4090", .compute_capability = 89,
     .fp32 = tf(82.6), .tf32 = tf(82.6), .fp16 = tf(165.2), .bf16 = tf(165.2), .fp8 = tf(330.3),
     .memory = gib(24), .memory_bandwidth = gbps(1008), .nvlink_links = 0,
     .nvlink_per_dir = gbps(0), .pcie_gen = 4, .tdp = sim::Watts{450}, .sms = 128,
     .boost_clock_mhz = 2520, .tensor_clock_mhz = 2520, .price_usd = 1599, .nvls = false,
     .source = "NVIDIA Ada Lovelace whitepaper Appendix A (FP32-accumulate rates); MSRP Oct 2022",
     .nvlink_link_raw = gbps(0), .nvlink_link_usable = gbps(0)},
    {.id = "l40s", .name = "NVIDIA L40S", .compute_capability = 89,
     .fp32 = tf(91.6), .tf32 = tf(183), .fp16 = tf(362.05), .bf16 = tf(362.05), .fp8 = tf(733),
     .memory = gib(48), .memory_bandwidth = gbps(864), .nvlink_links = 0,
     .nvlink_per_dir = gbps(0), .pcie_gen = 4, .tdp = sim::Watts{350}, .sms = 142,
     .boost_clock_mhz = 2520, .tensor_clock_mhz = 2520, .price_usd = 0, .nvls = false,
     .source = "NVIDIA L40S datasheet (sparse/2; full-rate FP32 accumulate)",
     .nvlink_link_raw = gbps(0), .nvlink_link_usable = gbps(0)},
    // L20: the AD102 part NVIDIA sells in China (Nov 2023) in place of the L40S. No NVIDIA datasheet
    // is public (UNSURE): 92 SMs, 48 GB GDDR6 at 864 GB/s, PCIe 4.0 x16, 275 W, 2520 MHz boost from
    // third-party listings (technical.city, topcpu.net "A40 PCIe vs L20"); tensor rates as reported
    // from the spec sheet circulated to Chinese cloud vendors (taoguba.com.cn: "L20 is 32% of the
    // L40S's compute"): FP16/BF16 119.5 dense, FP8 239 dense (sparse / 2), i.e. 512 FP16 FLOP per
    // clock per SM with FP32 accumulate, the GeForce rate, against the L40S's 1,024.
    {.id = "l20", .name = "NVIDIA L20 (UNSURE: no public datasheet)", .compute_capability = 89,
     .fp32 = tf(59.35), .tf32 = tf(59.75), .fp16 = tf(119.5), .bf16 = tf(119.5), .fp8 = tf(239),
     .memory = gib(48), .memory_bandwidth = gbps(864), .nvlink_links = 0,
     .nvlink_per_dir = gbps(0), .pcie_gen = 4, .tdp = sim::Watts{275}, .sms = 92,
     .boost_clock_mhz = 2520, .tensor_clock_mhz = 2520, .price_usd = 0, .nvls = false,
     .source = "UNSURE: third-party listings (technical.city, topcpu.net; 92 SMs, 864 GB/s, 275 W) and the "
               "reported spec sheet (taoguba.com.cn: FP16 119.5 / FP8 239 dense, 32% of L40S)",
     .nvlink_link_raw = gbps(0), .nvlink_link_usable = gbps(0)},
    // MI300X: AMD quotes dense and sparse; dense used. Price: analyst estimates $10-15k (UNSURE).
    {.id = "mi300x", .name = "AMD Instinct MI300X", .compute_capability = 942,
     .fp32 = tf(163.4), .tf32 = tf(653.7), .fp16 = tf(1307.4), .bf16 = tf(1307.4),
     .fp8 = tf(2614.9), .memory = gib(192), .memory_bandwidth = gbps(5300), .nvlink_links = 7,
     .nvlink_per_dir = gbps(448), .pcie_gen = 5, .tdp = sim::Watts{750}, .sms = 304,
     .boost_clock_mhz = 2100, .tensor_clock_mhz = 2100, .price_usd = 12500, .nvls = false,
     .source = "AMD Instinct MI300X datasheet; CDNA3 whitepaper (Infinity Fabric 7 x 128 GB/s)",
     .nvlink_link_raw = kXgmiRaw, .nvlink_link_usable = kXgmiUsable},
}};

// --- NICs (links.csv, hardware.md §2.4) -------------------------------------------------------
// per_dir is the line rate. latency is NIC + cable one way, chosen so that GPU -> PCIe -> NIC ->
// one switch -> NIC -> PCIe -> GPU (4 PCIe hops of 0.5 us + NIC + one switch hop) lands on NCCL's
// NET Ring LL per-step latency of 2.7 us for InfiniBand (tuning.cc hwLat NET); end-to-end NIC to
// NIC this is 0.73-0.79 us, inside the measured ~0.6-1.0 us RDMA range. RoCE: measured 1.5-3 us
// end to end (UNSURE); 1.2 us + a 0.3 us Ethernet switch hop gives the low end. Switch hops:
// Switch-IB 2 (EDR) ~90 ns, Quantum (HDR) ~130 ns (both UNSURE in links.csv); Quantum-2 (NDR)
// assumed like Quantum; Ethernet (Spectrum class) 0.3 us and 25GbE 0.5 us are estimates (UNSURE).
// SHARP: Quantum (HDR) and Quantum-2 (NDR) switches reduce in-network.
// Routing (see FabricRouting): InfiniBand fabrics are routed by the subnet manager's destination
// tables (d-mod-k over up-ports); RoCE and plain Ethernet hash each flow over ECMP up-links;
// Slingshot routes adaptively per packet, which spreads load at least as evenly as d-mod-k, so it
// is modelled as balanced destination routing (UNSURE: no congestion-dependent path choice).
const std::array<NicSpec, 9> kNics = {{
    {.id = "ib-edr-100", .name = "InfiniBand EDR 100 Gb/s (ConnectX-5)", .per_dir = gbps(12.5),
     .latency = sim::SimTime::from_ns(600), .switch_latency = sim::SimTime::from_ns(90),
     .sharp = false, .routing = FabricRouting::DestinationModK, .source = "IBTA EDR 4x25G; links.csv (EDR: 12.5 GB/s, ~90 ns hop UNSURE)"},
    {.id = "ib-hdr-200", .name = "InfiniBand HDR 200 Gb/s (ConnectX-6)", .per_dir = gbps(25),
     .latency = sim::SimTime::from_ns(600), .switch_latency = sim::SimTime::from_ns(130),
     .sharp = true, .routing = FabricRouting::DestinationModK,
     .source = "IBTA HDR 4x50G; DGX A100 datasheet; links.csv (~130 ns Quantum hop UNSURE)"},
    {.id = "ib-ndr-400", .name = "InfiniBand NDR 400 Gb/s (ConnectX-7)", .per_dir = gbps(50),
     .latency = sim::SimTime::from_ns(600), .switch_latency = sim::SimTime::from_ns(130),
     .sharp = true, .routing = FabricRouting::DestinationModK,
     .source = "IBTA NDR 4x100G; NVIDIA DGX BasePOD RA; Quantum-2 hop assumed as Quantum (UNSURE)"},
    // XDR 800 Gb/s (ConnectX-8 SuperNIC, Quantum-X800 switches; links.csv "InfiniBand,XDR": 4 x
    // 212.5 Gb/s, 100 GB/s per direction; hardware.md §2.4). The Quantum-X800 switch reduces
    // in-network (SHARP v4, NVIDIA Quantum-X800 product brief). NIC and switch-hop latency are not
    // published: taken as NDR's (UNSURE).
    {.id = "ib-xdr-800", .name = "InfiniBand XDR 800 Gb/s (ConnectX-8)", .per_dir = gbps(100),
     .latency = sim::SimTime::from_ns(600), .switch_latency = sim::SimTime::from_ns(130),
     .sharp = true, .routing = FabricRouting::DestinationModK,
     .source = "IBTA XDR 4x200G; links.csv (XDR, ConnectX-8, Quantum-X800); latency as NDR (UNSURE)"},
    {.id = "roce-100", .name = "RoCEv2 100 GbE", .per_dir = gbps(12.5),
     .latency = sim::SimTime::from_ns(1200), .switch_latency = sim::SimTime::from_ns(300),
     .sharp = false, .routing = FabricRouting::FlowHash, .source = "IEEE 802.3 100GbE; links.csv (RoCE e2e ~1.5-3 us UNSURE)"},
    {.id = "roce-200", .name = "RoCEv2 200 GbE", .per_dir = gbps(25),
     .latency = sim::SimTime::from_ns(1200), .switch_latency = sim::SimTime::from_ns(300),
     .sharp = false, .routing = FabricRouting::FlowHash, .source = "IEEE 802.3 200GbE; links.csv (RoCE e2e ~1.5-3 us UNSURE)"},
    {.id = "roce-400", .name = "RoCEv2 400 GbE (Spectrum-X class)", .per_dir = gbps(50),
     .latency = sim::SimTime::from_ns(1200), .switch_latency = sim::SimTime::from_ns(300),
     .sharp = false, .routing = FabricRouting::FlowHash, .source = "IEEE 802.3 400GbE; NVIDIA HGX AI Factory RA; links.csv (UNSURE lat)"},
    {.id = "eth-25", .name = "Ethernet 25 GbE", .per_dir = gbps(3.125),
     .latency = sim::SimTime::from_ns(2000), .switch_latency = sim::SimTime::from_ns(500),
     .sharp = false, .routing = FabricRouting::FlowHash, .source = "IEEE 802.3by 25GbE (25 Gb/s = 3.125 GB/s); latency estimate UNSURE"},
    // HPE Slingshot 11 (Cassini NIC, Rosetta switch): 200 Gb/s Ethernet-based HPC fabric, no
    // in-network reduction usable by NCCL. Latency as RoCE (Ethernet framing, UNSURE); Rosetta
    // port-to-port ~0.35 us (UNSURE). Used by ALCF Polaris (2 NICs per node).
    {.id = "slingshot-200", .name = "HPE Slingshot 11 200 Gb/s (Cassini)", .per_dir = gbps(25),
     .latency = sim::SimTime::from_ns(1200), .switch_latency = sim::SimTime::from_ns(350),
     .sharp = false, .routing = FabricRouting::DestinationModK,
     .source = "HPE Slingshot 11 (200 Gb/s per port); ALCF Polaris machine overview (2 NICs/node); latency UNSURE"},
}};

// --- Node presets (scenario.md "Preset ids that must exist") -----------------------------------
const std::array<NodeSpec, 20> kNodes = {{
    // Desktop/workstation boards wire their x16 slots straight to CPU root ports (no PLX switch),
    // and GeForce cards have P2P disabled, so GPU-to-GPU traffic bounces through the host: each GPU
    // sits alone on a "switch" that stands for its root port (gpus_per_pcie_switch = 1), and the
    // two meet at the root complex (nvidia-smi shows PHB). One 25GbE port for scale-out.
    {.id = "2x-rtx4090-pcie4",
     .description = "2x RTX 4090 on PCIe 4.0 x16 root ports, one socket, no NVLink (entry tier)",
     .gpu = "rtx-4090", .gpus = 2, .intra = IntraKind::Pcie, .pcie_gen = 4,
     .gpus_per_pcie_switch = 1, .sockets = 1, .nic = "eth-25", .nics = 1},
    // Same board layout as above; the NVLink bridge carries GPU-to-GPU traffic.
    {.id = "2x-a100-40gb-nvlink-bridge",
     .description = "2x A100 40GB PCIe joined by an NVLink bridge (12 links), one socket (mid tier)",
     .gpu = "a100-pcie-40gb", .gpus = 2, .intra = IntraKind::NvlinkBridge, .pcie_gen = 4,
     .gpus_per_pcie_switch = 1, .sockets = 1, .nic = "roce-100", .nics = 1},
    // The H100 NVL's own unit: one NVLink-bridged pair (the datasheet's "NVLink bridge" pairs), the
    // mid-tier board above with the current card. NIC ASSUMED as for the A100 pair.
    {.id = "2x-h100-nvl-bridge",
     .description = "2x H100 NVL 94GB PCIe Gen5 joined by an NVLink bridge (600 GB/s), one socket",
     .gpu = "h100-nvl-94gb", .gpus = 2, .intra = IntraKind::NvlinkBridge, .pcie_gen = 5,
     .gpus_per_pcie_switch = 1, .sockets = 1, .nic = "roce-100", .nics = 1},
    // HGX H100 baseboard in a 2-socket host: 4 PCIe Gen5 switches, 2 GPUs + 2 NDR NICs each.
    {.id = "hgx-h100-8x",
     .description = "HGX H100 8-GPU: 8x H100 SXM on NVSwitch gen3, 8x IB NDR 400 (high tier)",
     .gpu = "h100-sxm5-80gb", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 5,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-ndr-400", .nics = 8},
    // Dual-socket 8-GPU PCIe box (hardware.md §2.6): each socket feeds 2 Gen4 switches (PEX88096
    // class), 2 GPUs per switch; one 100 GbE RoCE NIC per switch (4 per node).
    {.id = "8x-a100-pcie",
     .description = "8x A100 80GB PCIe, 2 sockets x 2 PCIe Gen4 switches x 2 GPUs, no NVLink, "
                    "4x RoCE 100 GbE (one per switch)",
     .gpu = "a100-pcie-80gb", .gpus = 8, .intra = IntraKind::Pcie, .pcie_gen = 4,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "roce-100", .nics = 4},
    {.id = "dgx-a100-80gb",
     .description = "DGX A100: 8x A100 80GB SXM, 6 NVSwitch gen2, 2x AMD EPYC 7742, 8x IB HDR 200",
     .gpu = "a100-sxm4-80gb", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 4,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-hdr-200", .nics = 8,
     // NVIDIA DGX A100 User Guide (system specifications; "Network Connections, Cables, and
     // Adaptors"): 2x AMD EPYC 7742, 64 cores each with SMT; GPUs and HDR NICs in pairs below
     // cascaded PCIe Gen4 switches, each pair on its own root port, GPUs 0-3 on socket 0 and 4-7 on
     // socket 1. One NUMA node per socket is assumed (NPS1; the BIOS may set NPS4, UNSURE).
     .cores_per_socket = 64, .threads_per_core = 2, .pcie_switch_tiers = 2, .host_bridge_per_switch = true},
    {.id = "dgx-h100",
     .description = "DGX H100: 8x H100 SXM, 4 NVSwitch gen3 (NVLink 4), 8x IB NDR 400",
     .gpu = "h100-sxm5-80gb", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 5,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-ndr-400", .nics = 8,
     // NVIDIA DGX H100/H200 User Guide (hardware overview): 2x Intel Xeon Platinum 8480C, 56 cores
     // each with Hyper-Threading; 4 PCIe Gen5 switches with 2 GPUs and 2 ConnectX-7 each, each
     // switch on its own root port; GPUs 0-3 on NUMA node 0, 4-7 on NUMA node 1.
     .cores_per_socket = 56, .threads_per_core = 2, .pcie_switch_tiers = 1, .host_bridge_per_switch = true},
    {.id = "dgx-h200",
     .description = "DGX H200: 8x H200 SXM 141GB, 4 NVSwitch gen3 (NVLink 4), 8x IB NDR 400",
     .gpu = "h200-sxm-141gb", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 5,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-ndr-400", .nics = 8,
     // The DGX H100 host (same user guide): 2x Xeon Platinum 8480C, 56 cores, 4 Gen5 switches.
     .cores_per_socket = 56, .threads_per_core = 2, .pcie_switch_tiers = 1, .host_bridge_per_switch = true},
    // DGX B200 (DGX B200 user guide; DGX BasePOD / SuperPOD B200 reference architecture, links.csv
    // "Node NICs, DGX B200"): 8x B200 180 GB HBM3e on two NVLink 5 switch chips (1.8 TB/s per GPU,
    // the GPU preset's 18 links), 2x Intel Xeon Platinum 8570, 8x single-port ConnectX-7 400 Gb/s
    // (4 OSFP cages) for the compute fabric; the 2 dual-port BlueField-3 serve storage and are not
    // modelled. PCIe Gen5 host links; 2 GPUs + 2 NICs per PCIe switch as on DGX H100 (UNSURE).
    {.id = "dgx-b200",
     .description = "DGX B200: 8x B200 180GB, NVSwitch gen4 (NVLink 5), 2x Xeon 8570, 8x IB NDR 400",
     .gpu = "b200", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 5,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-ndr-400", .nics = 8,
     // Intel Xeon Platinum 8570 (Intel ARK): 56 cores, Hyper-Threading.
     .cores_per_socket = 56, .threads_per_core = 2, .pcie_switch_tiers = 1, .host_bridge_per_switch = true},
    // DGX B300 (NVIDIA DGX B300 datasheet): 8x Blackwell Ultra (B300, 288 GB HBM3e, 2.3 TB total)
    // on NVLink 5 switches (14.4 TB/s aggregate = 1.8 TB/s per GPU), 2x Intel Xeon 6776P, 8 OSFP
    // ports serving 8x single-port ConnectX-8 VPI up to 800 Gb/s InfiniBand (one per GPU), 2x
    // dual-port BlueField-3 for storage (not modelled). Each ConnectX-8 carries its own PCIe Gen6
    // switch (ConnectX-8 SuperNIC datasheet), modelled as 2 GPUs + 2 NICs per Gen6 switch as on
    // DGX B200 (UNSURE: the board's exact tree is not published). Xeon 6776P: 64 cores with
    // Hyper-Threading (Intel ARK; UNSURE that DGX B300 ships exactly this SKU everywhere).
    {.id = "dgx-b300",
     .description = "DGX B300: 8x B300 288GB, NVLink 5 switches, 2x Xeon 6776P, 8x IB XDR 800 (ConnectX-8)",
     .gpu = "b300", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 6,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-xdr-800", .nics = 8,
     .cores_per_socket = 64, .threads_per_core = 2, .pcie_switch_tiers = 1, .host_bridge_per_switch = true},
    // --- Nodes a buyer in China can get (export variants on the HGX baseboards) -----------------
    // HGX H800: the HGX H100 baseboard (4 NVSwitch gen3) with H800 GPUs. DeepSeek-V3's H800
    // cluster (arXiv 2412.19437 §3.1) gives each GPU one 400 Gb/s InfiniBand NIC (50 GB/s).
    {.id = "hgx-h800-8x",
     .description = "HGX H800 8-GPU: 8x H800 SXM (NVLink cut to 400 GB/s) on NVSwitch gen3, 8x IB NDR 400",
     .gpu = "h800-sxm5-80gb", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 5,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-ndr-400", .nics = 8},
    // HGX H20: the same baseboard with H20s (full 900 GB/s NVLink); one 400 Gb/s NIC per GPU as on
    // HGX H100 (ASSUMPTION: vendors ship H20 servers with the HGX H100 network layout).
    {.id = "hgx-h20-8x",
     .description = "HGX H20 8-GPU: 8x H20 96GB on NVSwitch gen3 (900 GB/s), 8x IB NDR 400",
     .gpu = "h20", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 5,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-ndr-400", .nics = 8},
    // HGX A800: the HGX A100 baseboard (6 NVSwitch gen2) with A800s; network as DGX A100.
    {.id = "hgx-a800-8x",
     .description = "HGX A800 8-GPU: 8x A800 80GB SXM (NVLink cut to 400 GB/s) on NVSwitch gen2, 8x IB HDR 200",
     .gpu = "a800-sxm4-80gb", .gpus = 8, .intra = IntraKind::NvSwitch, .pcie_gen = 4,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-hdr-200", .nics = 8},
    // 8x L40S PCIe: the dual-socket layout of 8x-a100-pcie (2 Gen4 switches per socket, 2 GPUs
    // each, no NVLink: the L40S has none). One 200 GbE RoCE NIC per switch (ASSUMPTION: NVIDIA's
    // L40S/OVX servers ship 200 GbE; UNSURE).
    {.id = "8x-l40s-pcie",
     .description = "8x L40S 48GB PCIe Gen4, 2 sockets x 2 PCIe switches x 2 GPUs, no NVLink, 4x RoCE 200 GbE",
     .gpu = "l40s", .gpus = 8, .intra = IntraKind::Pcie, .pcie_gen = 4,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "roce-200", .nics = 4},
    // 8x L20 PCIe: the L20 server layout of 8x-l40s-pcie (same AD102 board class; servers sold in
    // China with 200 GbE or HDR 200 per the same report, taoguba.com.cn; UNSURE).
    {.id = "8x-l20-pcie",
     .description = "8x L20 48GB PCIe Gen4, 2 sockets x 2 PCIe switches x 2 GPUs, no NVLink, 4x RoCE 200 GbE",
     .gpu = "l20", .gpus = 8, .intra = IntraKind::Pcie, .pcie_gen = 4,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "roce-200", .nics = 4},
    // 8x RTX 4090: GeForce cards have peer-to-peer disabled, so every GPU-to-GPU copy bounces
    // through host memory: each GPU on its own root port as in 2x-rtx4090-pcie4 (PHB within a
    // socket, SYS across). One 100 GbE port per socket (ASSUMPTION, UNSURE).
    {.id = "8x-rtx4090-pcie",
     .description = "8x RTX 4090 24GB on PCIe 4.0 root ports, 2 sockets, P2P disabled, 2x RoCE 100 GbE",
     .gpu = "rtx-4090", .gpus = 8, .intra = IntraKind::Pcie, .pcie_gen = 4,
     .gpus_per_pcie_switch = 1, .sockets = 2, .nic = "roce-100", .nics = 2},
    // AMD Instinct MI300X platform (AMD MI300X datasheet, CDNA3 whitepaper): 8 OAM GPUs on a
    // universal baseboard, every pair joined by one Infinity Fabric (xGMI) link, 7 per GPU -- a full
    // mesh, no switch (intra = xgmi-mesh). Hosts pair it with 8x 400 Gb/s NICs, one per GPU (e.g.
    // Azure ND MI300X v5: 8x ConnectX-7 NDR; UNSURE for other OEMs), PCIe Gen5, 2 sockets.
    {.id = "mi300x-8x",
     .description = "AMD MI300X platform: 8x MI300X OAM, xGMI full mesh (7 x 64 GB/s per GPU), 8x IB NDR 400",
     .gpu = "mi300x", .gpus = 8, .intra = IntraKind::XgmiMesh, .pcie_gen = 5,
     .gpus_per_pcie_switch = 2, .sockets = 2, .nic = "ib-ndr-400", .nics = 8},
    // --- Rack-scale NVLink ---------------------------------------------------------------------
    // GB200 NVL72 (NVIDIA GB200 NVL72 spec; links.csv "NVLink Switch gen4"; hardware.md §2.3):
    // one "node" is the whole rack, because the rack is one NVLink domain: 18 compute trays of 2
    // GB200 superchips (1 Grace + 2 GPUs each) = 72 GPUs, every GPU's 18 NVLink 5 links to the 9
    // NVLink switch trays (18 switch chips, 1.8 TB/s per GPU, non-blocking). The switch trays are
    // folded into the one crossbar device, as NVSwitch chips are in a DGX (builders.cpp). Scale-out:
    // one ConnectX-7 400 Gb/s NIC per GPU (hardware.md §2.4, GB200 NVL72 row), racks joined by
    // InfiniBand. 36 sockets = the 36 Grace CPUs, each with its 2 GPUs and 2 NICs on one PCIe
    // "switch"; Grace-to-Grace links are modelled as the generic CPU interconnect (UNSURE; no GPU
    // route uses them, NVLink joins every GPU pair).
    {.id = "gb200-nvl72",
     .description = "GB200 NVL72 rack: 72x GB200 GPU in one NVLink 5 domain (9 NVLink switch trays), 36x Grace, "
                    "72x IB NDR 400",
     .gpu = "gb200", .gpus = 72, .intra = IntraKind::NvSwitch, .pcie_gen = 5,
     .gpus_per_pcie_switch = 2, .sockets = 36, .nic = "ib-ndr-400", .nics = 72},
    // GB300 NVL72 (NVIDIA GB300 NVL72 spec): the GB200 NVL72 rack with Blackwell Ultra: 72 GB300
    // GPUs and 36 Grace CPUs in one NVLink 5 domain (130 TB/s, 1.8 TB/s per GPU, 9 NVLink switch
    // trays), folded into one crossbar as in gb200-nvl72. Scale-out: one ConnectX-8 SuperNIC per
    // GPU at 800 Gb/s ("NVIDIA ConnectX-8 SuperNIC ... 800 Gb/s per GPU", GB300 NVL72 page;
    // hardware.md §2.5 marks the CX-8 row UNSURE), PCIe Gen6 between GPU and NIC.
    {.id = "gb300-nvl72",
     .description = "GB300 NVL72 rack: 72x GB300 GPU in one NVLink 5 domain (9 NVLink switch trays), 36x Grace, "
                    "72x IB XDR 800 (ConnectX-8)",
     .gpu = "gb300", .gpus = 72, .intra = IntraKind::NvSwitch, .pcie_gen = 6,
     .gpus_per_pcie_switch = 2, .sockets = 36, .nic = "ib-xdr-800", .nics = 72},
    // ALCF Polaris (docs.alcf.anl.gov/polaris/hardware-overview/machine-overview): HPE Apollo 6500
    // Gen10+, one AMD EPYC 7543P (Milan), 4x A100-SXM4-40GB all-to-all NVLink (NV4 between every
    // pair = the GPU's 12 links), 2 Slingshot 11 NICs, each on a root port of its own (the page's
    // device-affinity table: mlx5_0 PHB to GPU3, mlx5_1 PHB to GPU1; nic_attach = root-port). The
    // NVLink mesh is modelled as the NVSwitch crossbar (same 12 links per GPU; a mesh gives one
    // pair at most 4 links, which only matters for single-pair traffic). Each GPU on its own root
    // port (one GPU per "switch"), one socket.
    {.id = "polaris-a100-4x",
     .description = "ALCF Polaris: 4x A100 SXM4 40GB (NVLink mesh), 1x EPYC 7543P, 2x Slingshot 11 200 Gb/s",
     .gpu = "a100-sxm4-40gb", .gpus = 4, .intra = IntraKind::NvSwitch, .pcie_gen = 4,
     .gpus_per_pcie_switch = 1, .sockets = 1, .nic = "slingshot-200", .nics = 2,
     .nic_attach = NicAttach::RootPort},
}};

// --- MIG profiles (hardware.md section 5) -----------------------------------------------------
// Usable memory per profile as `nvidia-smi mig -lgip` lists it. The A100 80GB values are marked
// UNSURE there; its 1g.10gb slice takes the lower of the quoted 9.5-9.75 GiB.
constexpr MigProfile kMigProfiles[] = {
    {"a100-40", "1g.5gb", 4.75},   {"a100-40", "1g.10gb", 9.75},  {"a100-40", "2g.10gb", 9.75},
    {"a100-40", "3g.20gb", 19.62}, {"a100-40", "4g.20gb", 19.62}, {"a100-40", "7g.40gb", 39.50},
    {"a100-80", "1g.10gb", 9.5},   {"a100-80", "1g.20gb", 19.5},  {"a100-80", "2g.20gb", 19.5},
    {"a100-80", "3g.40gb", 39.25}, {"a100-80", "4g.40gb", 39.25}, {"a100-80", "7g.80gb", 79.0},
    {"h100-80", "1g.10gb", 9.75},  {"h100-80", "1g.20gb", 19.62}, {"h100-80", "2g.20gb", 19.62},
    {"h100-80", "3g.40gb", 39.50}, {"h100-80", "4g.40gb", 39.50}, {"h100-80", "7g.80gb", 79.25},
};

std::string_view mig_family(std::string_view gpu_id) {
  const bool a100 = gpu_id.starts_with("a100"), h100 = gpu_id.starts_with("h100");
  const bool gb40 = gpu_id.find("40gb") != std::string_view::npos;
  if (a100) return gb40 ? "a100-40" : "a100-80";
  if (h100) return "h100-80";
  return "";
}

// "3g.40gb" -> {3, 40}; {0, 0} when malformed.
std::pair<int, int> mig_slices_and_gb(std::string_view profile) {
  int slices = 0, gb = 0;
  const std::string text(profile);
  if (std::sscanf(text.c_str(), "%dg.%dgb", &slices, &gb) != 2) return {0, 0};
  return {slices, gb};
}

template <class T, std::size_t N>
const T* find_by_id(const std::array<T, N>& table, std::string_view id) {
  const auto it = std::find_if(table.begin(), table.end(), [&](const T& t) { return t.id == id; });
  return it == table.end() ? nullptr : &*it;
}

}  // namespace

std::string_view to_string(Precision p) { return sim::name_of(kPrecisionNames, p); }

std::string_view to_string(IntraKind k) { return sim::name_of(kIntraKindNames, k); }

sim::FlopsPerSec GpuSpec::peak(Precision p) const {
  switch (p) {
    case Precision::Fp32: return fp32;
    case Precision::Tf32: return tf32.value > 0 ? tf32 : fp32;
    case Precision::Fp16: return fp16;
    case Precision::Bf16: return bf16;  // 0 on V100: no fallback, callers refuse
    case Precision::Fp8: return fp8;
    case Precision::Nvfp4: return fp4;
  }
  return sim::FlopsPerSec{};
}

const GpuSpec* find_gpu(std::string_view id) { return find_by_id(kGpus, id); }
const NicSpec* find_nic(std::string_view id) { return find_by_id(kNics, id); }
const NodeSpec* find_node_preset(std::string_view id) { return find_by_id(kNodes, id); }
std::span<const GpuSpec> all_gpus() { return kGpus; }
std::span<const NicSpec> all_nics() { return kNics; }
std::span<const NodeSpec> all_node_presets() { return kNodes; }

// NCCL's modelled usable PCIe x16 rate (src/graph/topo.cc kvDictPciGen, NCCL 2.30.7: 8 GT/s ->
// 60, 16 -> 120, 32 -> 240, 64 -> 480, in 100 Mb/s per lane; bw = 16 lanes x speed / 80 GB/s):
// 12 / 24 / 48 / 96 GB/s, about 75 % of the raw 15.75 / 31.5 / 63 / 121 GB/s.
sim::BytesPerSec pcie_x16_bandwidth(int gen) {
  switch (gen) {
    case 3: return gbps(12);
    case 4: return gbps(24);
    case 5: return gbps(48);
    case 6: return gbps(96);
    default: return gbps(gen < 3 ? 12 : 96);
  }
}

// NCCL charges 1.0 us per ring step over PCI with LL (tuning.cc hwLat PCI Ring LL); a GPU to GPU
// step through one switch is two hops, so one hop is 0.5 us (hardware.md §2.1: device-level hop
// ~0.5-1 us).
sim::SimTime pcie_hop_latency() { return 500_ns; }

// NCCL's AMD_BW 16 GB/s (src/graph/topo.h): AMD EPYC Rome/Milan xGMI, the CPU of the DGX A100
// (2x EPYC 7742) and of most 2020-2022 PCIe Gen4 GPU servers (Intel had no Gen4 before Ice Lake).
sim::BytesPerSec cpu_interconnect_bandwidth() { return gbps(16); }

// links.csv, UPI row: "~100+ ns extra hop" for crossing sockets.
sim::SimTime cpu_interconnect_latency() { return 100_ns; }

// NCCL charges 0.6 us per NVLink ring step with LL (tuning.cc hwLat NVLINK Ring LL); GPU ->
// NVSwitch -> GPU is two edges, so one edge is 0.3 us (a bridge edge counts both halves).
sim::SimTime nvlink_hop_latency() { return 300_ns; }

// --- MIG -----------------------------------------------------------------------------------------

std::vector<MigProfile> mig_profiles(std::string_view gpu_id) {
  const std::string_view family = mig_family(gpu_id);
  std::vector<MigProfile> out;
  for (const MigProfile& m : kMigProfiles) {
    if (m.gpu_family == family) out.push_back(m);
  }
  return out;
}

// SMs per MIG profile (hardware.md section 5, nvidia-smi mig -lgip): A100 14 per compute slice (98
// of 108 in 7g); H100/H200 1g 16 (1g.20gb 26), 2g 32, 3g 60, 4g 64, 7g all 132. Other GPUs (B200:
// no published table): compute slices / 7 of the SMs. Memory slices = profile GB / (GPU GB / 8).
MigSlice resolve_mig(const GpuSpec& gpu, std::string_view profile) {
  const auto [slices, gb] = mig_slices_and_gb(profile);
  if (slices < 1 || slices > 7 || gb <= 0) throw std::invalid_argument("invalid MIG profile '" + std::string(profile) + "'");
  MigSlice s;
  s.compute_slices = slices;
  const double gpu_gb = gpu.memory.value / 1e9;
  s.memory_slices = std::clamp(static_cast<int>(std::lround(gb / (gpu_gb / 8.0))), 1, 8);
  if (gpu.compute_capability == 80) {
    s.sms = 14 * slices;
  } else if (gpu.compute_capability == 90) {
    switch (slices) {
      case 1: s.sms = s.memory_slices >= 2 ? 26 : 16; break;
      case 2: s.sms = 32; break;
      case 3: s.sms = 60; break;
      case 4: s.sms = 64; break;
      default: s.sms = gpu.sms; break;
    }
  } else {
    s.sms = std::max(1, gpu.sms * slices / 7);
  }
  return s;
}

sim::Bytes gpu_memory_capacity(const GpuSpec& gpu, std::string_view mig) {
  if (mig.empty()) return gpu.memory;
  double slice = mig_slices_and_gb(mig).second * 1e9;  // not listed: the profile's nominal GB
  for (const MigProfile& m : mig_profiles(gpu.id)) {
    if (m.profile == mig) slice = m.memory().value;
  }
  return sim::Bytes{std::min(gpu.memory.value, slice)};
}

}  // namespace clustersim::topology
