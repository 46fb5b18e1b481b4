#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "topology/catalog.h"

using namespace clustersim;
using namespace clustersim::topology;

TEST_CASE("topology::catalog: every GPU id the scenario spec requires exists with a source") {
  for (const char* id : {"v100-sxm2-32gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb",
                         "h100-sxm5-80gb", "h100-pcie-80gb", "h200-sxm-141gb", "b200", "rtx-3090", "rtx-4090",
                         "l40s", "mi300x", "gb200", "b300", "gb300", "a800-sxm4-80gb", "h800-sxm5-80gb", "h20", "l20",
                         "v100-sxm3-32gb", "v100-sxm3-32gb-h", "h100-nvl-94gb"}) {
    CAPTURE(std::string(id));
    const GpuSpec* g = find_gpu(id);
    REQUIRE(g != nullptr);
    CHECK(g->fp32.value > 0);
    CHECK(g->fp16.value > 0);
    CHECK(g->memory.value > 0);
    CHECK(g->memory_bandwidth.value > 0);
    CHECK(!g->source.empty());
    CHECK(g->nvlink_usable_per_dir() <= g->nvlink_per_dir);
  }
  CHECK(all_gpus().size() == 23);
  CHECK(find_gpu("a100") == nullptr);
}

TEST_CASE("topology::catalog: tensor peaks are dense, not 2:4 sparse") {
  const GpuSpec& h100 = *find_gpu("h100-sxm5-80gb");
  CHECK(h100.peak(Precision::Bf16).value == doctest::Approx(989.4e12));
  CHECK(h100.peak(Precision::Fp8).value == doctest::Approx(1979e12));
  CHECK(h100.peak(Precision::Tf32).value == doctest::Approx(494.7e12));
  CHECK(find_gpu("a100-sxm4-80gb")->peak(Precision::Bf16).value == doctest::Approx(312e12));
  CHECK(find_gpu("b200")->peak(Precision::Bf16).value == doctest::Approx(2250e12));
  CHECK(find_gpu("l40s")->peak(Precision::Fp16).value == doctest::Approx(362.05e12));
  // The China-market L20: about a third of the L40S's tensor rate, the same memory (reported, UNSURE).
  CHECK(find_gpu("l20")->peak(Precision::Fp16).value / find_gpu("l40s")->peak(Precision::Fp16).value ==
        doctest::Approx(0.33).epsilon(0.02));
  CHECK(find_gpu("l20")->memory.value == find_gpu("l40s")->memory.value);
  CHECK(find_gpu("mi300x")->peak(Precision::Bf16).value == doctest::Approx(1307.4e12));
  // H100 NVL (../shared/reference/gpus.csv, the datasheet's NVL column): 835.5 / 1,670.5 TF dense.
  CHECK(find_gpu("h100-nvl-94gb")->peak(Precision::Bf16).value == doctest::Approx(835.5e12));
  CHECK(find_gpu("h100-nvl-94gb")->peak(Precision::Fp8).value == doctest::Approx(1670.5e12));
}

TEST_CASE("topology::catalog: GeForce parts use the FP32-accumulate tensor rate") {
  CHECK(find_gpu("rtx-4090")->peak(Precision::Fp16).value == doctest::Approx(165.2e12));
  CHECK(find_gpu("rtx-3090")->peak(Precision::Bf16).value == doctest::Approx(71e12));
}

TEST_CASE("topology::catalog: V100 falls back to FP32 for TF32 and has no BF16") {
  const GpuSpec& v100 = *find_gpu("v100-sxm2-32gb");
  CHECK(v100.peak(Precision::Tf32) == v100.fp32);
  CHECK(v100.peak(Precision::Bf16).value == 0.0);
  CHECK(v100.peak(Precision::Fp16).value == doctest::Approx(125e12));
}

TEST_CASE("topology::catalog: NVLink usable rate is NCCL's per-link model times the link count") {
  CHECK(find_gpu("a100-sxm4-80gb")->nvlink_usable_per_dir().value == doctest::Approx(240e9));
  CHECK(find_gpu("h100-sxm5-80gb")->nvlink_usable_per_dir().value == doctest::Approx(370.8e9));
  CHECK(find_gpu("b200")->nvlink_usable_per_dir().value == doctest::Approx(18 * 40.1e9));
  CHECK(find_gpu("a100-sxm4-80gb")->nvlink_link_raw.value == doctest::Approx(25e9));
  CHECK(find_gpu("h100-sxm5-80gb")->nvls);
  CHECK_FALSE(find_gpu("a100-sxm4-80gb")->nvls);
}

TEST_CASE("topology::catalog: NICs carry line rate, latency and SHARP capability") {
  for (const char* id : {"ib-edr-100", "ib-hdr-200", "ib-ndr-400", "roce-100", "roce-200", "roce-400", "eth-25",
                         "ib-xdr-800"}) {
    CAPTURE(std::string(id));
    const NicSpec* n = find_nic(id);
    REQUIRE(n != nullptr);
    CHECK(n->per_dir.value > 0);
    CHECK(n->latency.ps > 0);
    CHECK(n->switch_latency.ps > 0);
    CHECK(!n->source.empty());
  }
  CHECK(find_nic("ib-hdr-200")->per_dir.value == doctest::Approx(25e9));
  CHECK(find_nic("ib-ndr-400")->sharp);
  CHECK_FALSE(find_nic("roce-400")->sharp);
  CHECK_FALSE(find_nic("ib-edr-100")->sharp);
}

TEST_CASE("topology::catalog: node presets match the scenario spec") {
  for (const char* id : {"2x-rtx4090-pcie4", "2x-a100-40gb-nvlink-bridge", "hgx-h100-8x", "8x-a100-pcie",
                         "dgx-a100-80gb", "dgx-h100", "dgx-h200", "dgx-b200", "hgx-h800-8x", "hgx-h20-8x",
                         "hgx-a800-8x", "8x-l40s-pcie", "8x-l20-pcie", "8x-rtx4090-pcie", "mi300x-8x", "gb200-nvl72",
                         "dgx-b300", "gb300-nvl72"}) {
    CAPTURE(std::string(id));
    const NodeSpec* n = find_node_preset(id);
    REQUIRE(n != nullptr);
    CHECK(find_gpu(n->gpu) != nullptr);
    CHECK(find_nic(n->nic) != nullptr);
  }
  const NodeSpec& dgx = *find_node_preset("dgx-a100-80gb");
  CHECK(dgx.gpus == 8);
  CHECK(dgx.intra == IntraKind::NvSwitch);
  CHECK(dgx.nic == "ib-hdr-200");
  CHECK(dgx.nics == 8);
  const NodeSpec& pcie = *find_node_preset("8x-a100-pcie");
  CHECK(pcie.intra == IntraKind::Pcie);
  CHECK(pcie.sockets == 2);
  CHECK(pcie.gpus_per_pcie_switch == 2);
  CHECK(find_node_preset("2x-a100-40gb-nvlink-bridge")->intra == IntraKind::NvlinkBridge);
}

TEST_CASE("topology::catalog: internal links use NCCL's modelled PCIe rates") {
  CHECK(pcie_x16_bandwidth(3).value == doctest::Approx(12e9));
  CHECK(pcie_x16_bandwidth(4).value == doctest::Approx(24e9));
  CHECK(pcie_x16_bandwidth(5).value == doctest::Approx(48e9));
  CHECK(cpu_interconnect_bandwidth().value == doctest::Approx(16e9));
  CHECK(nvlink_hop_latency() < pcie_hop_latency());
}

TEST_CASE("topology::gpu_memory_capacity: a MIG slice offers its listed memory, else its nominal GB, never more than the GPU") {
  const GpuSpec& a100_80 = *find_gpu("a100-sxm4-80gb");
  CHECK(gpu_memory_capacity(a100_80, "").value == a100_80.memory.value);
  CHECK(gpu_memory_capacity(a100_80, "3g.40gb").value == doctest::Approx(39.25 * 1073741824.0));
  CHECK(gpu_memory_capacity(*find_gpu("a100-sxm4-40gb"), "1g.5gb").value == doctest::Approx(4.75 * 1073741824.0));
  // H200 has no published MIG table: the profile's nominal GB.
  CHECK(gpu_memory_capacity(*find_gpu("h200-sxm-141gb"), "3g.71gb").value == doctest::Approx(71e9));
  // A 7g profile listed larger than a smaller GPU's memory is capped at the GPU.
  const GpuSpec& rtx = *find_gpu("rtx-4090");
  CHECK(gpu_memory_capacity(rtx, "7g.80gb").value == rtx.memory.value);
}

TEST_CASE("topology::mig_profiles: a family's profiles come smallest first, and GPUs without a table have none") {
  const std::vector<MigProfile> h100 = mig_profiles("h100-sxm5-80gb");
  REQUIRE(h100.size() == 6);
  CHECK(h100.front().profile == "1g.10gb");
  CHECK(h100.back().profile == "7g.80gb");
  for (std::size_t i = 1; i < h100.size(); ++i) CHECK(h100[i - 1].memory_gib <= h100[i].memory_gib);
  CHECK(mig_profiles("a100-pcie-40gb").front().profile == "1g.5gb");
  CHECK(mig_profiles("b200").empty());
}

// Dense tensor FLOP per SM per clock: Ampere GA100 1024 FMA = 2048 FLOP (A100 whitepaper),
// Hopper GH100 twice that (Hopper whitepaper). Where the clock is published (A800 = A100's 1410
// MHz, H800 = H100's 1830 MHz tensor clock, hardware.md §1.2), the datasheet peak must be
// SMs x FLOP/clk x clock.
TEST_CASE("topology::catalog: export variants' peaks are SMs x tensor FLOP/clk x the published clock") {
  const GpuSpec& a800 = *find_gpu("a800-sxm4-80gb");
  CHECK(a800.sms * 2048.0 * a800.tensor_clock_mhz * 1e6 == doctest::Approx(a800.bf16.value).epsilon(0.02));
  const GpuSpec& h800 = *find_gpu("h800-sxm5-80gb");
  CHECK(h800.sms * 4096.0 * h800.tensor_clock_mhz * 1e6 == doctest::Approx(h800.bf16.value).epsilon(0.02));
  CHECK(h800.fp8.value == doctest::Approx(2 * h800.bf16.value).epsilon(0.001));
  // The H20's cap is not a clock: its published peak is far below what its SMs give at any
  // Hopper clock (>= 1 GHz), and the catalog gives no clock rather than a fake one.
  const GpuSpec& h20 = *find_gpu("h20");
  CHECK(h20.tensor_clock_mhz == 0.0);
  CHECK(h20.bf16.value < h20.sms * 4096.0 * 1.0e9 * 0.5);
  CHECK(h20.bf16.value == doctest::Approx(148e12));
}

TEST_CASE("topology::catalog: H800 and A800 keep their compute but lose NVLink, H20 keeps NVLink") {
  const GpuSpec& h800 = *find_gpu("h800-sxm5-80gb");
  const GpuSpec& h100 = *find_gpu("h100-sxm5-80gb");
  CHECK(h800.bf16 == h100.bf16);
  CHECK(h800.nvlink_per_dir.value == doctest::Approx(200e9));  // 400 GB/s bidirectional
  CHECK(h800.nvlink_usable_per_dir().value == doctest::Approx(8 * 20.6e9));
  CHECK(find_gpu("a800-sxm4-80gb")->nvlink_usable_per_dir().value == doctest::Approx(8 * 20e9));
  CHECK(find_gpu("h20")->nvlink_usable_per_dir() == h100.nvlink_usable_per_dir());
  CHECK(find_gpu("h20")->memory.value > h100.memory.value);
}

TEST_CASE("topology::catalog: rack-scale and AMD presets") {
  const NodeSpec& nvl72 = *find_node_preset("gb200-nvl72");
  CHECK(nvl72.gpus == 72);
  CHECK(nvl72.intra == IntraKind::NvSwitch);
  CHECK(nvl72.nics == 72);  // one scale-out NIC per GPU
  CHECK(find_gpu(nvl72.gpu)->nvlink_per_dir.value == doctest::Approx(900e9));  // 1.8 TB/s bidirectional
  const NodeSpec& mi = *find_node_preset("mi300x-8x");
  CHECK(mi.intra == IntraKind::XgmiMesh);
  CHECK(find_gpu(mi.gpu)->nvlink_links == mi.gpus - 1);  // one link to each peer
  CHECK_FALSE(find_gpu(mi.gpu)->nvls);
}

// Blackwell Ultra (B300 / GB300): the rack spec table's per-GPU figures (GB300 NVL72 / 72, sparse/2)
// and the DGX B300 datasheet's network. A GB300 must out-run a GB200 at every tensor precision and
// hold more HBM; both racks keep the same NVLink 5 domain; the ConnectX-8 NIC doubles the
// scale-out rate, which PCIe Gen5 (48 GB/s modelled) could not feed, hence Gen6 on both presets.
TEST_CASE("topology::catalog: Blackwell Ultra presets (dgx-b300, gb300-nvl72)") {
  const GpuSpec& gb300 = *find_gpu("gb300");
  const GpuSpec& gb200 = *find_gpu("gb200");
  CHECK(gb300.bf16.value == doctest::Approx(360e15 / 72 / 2));
  CHECK(gb300.fp8.value == doctest::Approx(720e15 / 72 / 2));
  CHECK(gb300.fp8.value >= gb200.fp8.value);
  CHECK(gb300.memory.value > 1.5 * gb200.memory.value);  // 288 GB vs 186 GB
  CHECK(gb300.memory_bandwidth.value * 72 == doctest::Approx(576e12));
  CHECK(gb300.nvlink_per_dir == gb200.nvlink_per_dir);
  CHECK(gb300.sms * 8192.0 * gb300.tensor_clock_mhz * 1e6 == doctest::Approx(gb300.bf16.value).epsilon(0.01));
  const NodeSpec& rack = *find_node_preset("gb300-nvl72");
  const NodeSpec& old_rack = *find_node_preset("gb200-nvl72");
  CHECK(rack.gpus == old_rack.gpus);
  CHECK(rack.sockets == old_rack.sockets);
  CHECK(rack.nics == 72);
  const NicSpec& cx8 = *find_nic(rack.nic);
  CHECK(cx8.per_dir.value == doctest::Approx(100e9));  // 800 Gb/s
  CHECK(cx8.per_dir.value > find_nic(old_rack.nic)->per_dir.value);
  CHECK(pcie_x16_bandwidth(rack.pcie_gen).value >= 0.9 * cx8.per_dir.value);
  const NodeSpec& dgx = *find_node_preset("dgx-b300");
  CHECK(dgx.gpu == "b300");
  CHECK(dgx.gpus == 8);
  CHECK(dgx.nic == "ib-xdr-800");
  CHECK(dgx.nics == 8);
  CHECK(find_gpu(dgx.gpu)->memory.value == gb300.memory.value);
}

TEST_CASE("topology::catalog: no GPU's peak is quoted at a clock above the highest SM clock it reaches") {
  // tensor_clock_mhz is the clock the datasheet peak implies (SMs x FLOP/clk/SM); boost_clock_mhz the
  // highest SM clock the part runs (nvidia-smi's max clock where a capture is cited). A peak quoted
  // above it would make the SM count or the peak wrong.
  for (const GpuSpec& g : all_gpus()) {
    if (g.boost_clock_mhz <= 0 || g.tensor_clock_mhz <= 0) continue;
    CAPTURE(g.id);
    CHECK(g.tensor_clock_mhz <= g.boost_clock_mhz);
  }
  // Every Blackwell part has its measured boost clock and a power limit.
  for (const char* id : {"b200", "gb200", "b300", "gb300"}) {
    const GpuSpec& g = *find_gpu(id);
    CAPTURE(g.id);
    CHECK(g.boost_clock_mhz > 1900);
    CHECK(g.tdp.value >= 1000);
  }
  // The HGX B300 as measured: B200's 148 SMs and tensor clock, a 1,100 W limit (GB300: 1,400 W).
  CHECK(find_gpu("b300")->sms == find_gpu("b200")->sms);
  CHECK(find_gpu("b300")->tdp.value == doctest::Approx(1100));
  CHECK(find_gpu("gb300")->tdp.value == doctest::Approx(1400));
}
