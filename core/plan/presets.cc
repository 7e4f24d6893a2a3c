#include "core/plan/presets.h"

#include <algorithm>
#include <cctype>

namespace planck::core {
namespace {

// GPU figures (docs/sources/simulator.md §5): memory as nvidia-smi reports the total
// (H100 SXM 81559 MiB, H200 143771 MiB, A100 80GB 81920 MiB); dense BF16 and FP8 TFLOP/s and HBM
// bandwidth from NVIDIA's datasheets (A100 80GB SXM 312 / none / 2039 GB/s; H100 SXM and H800 SXM
// 989 / 1979 / 3350; H200 989 / 1979 / 4800; B200 2250 / 4500 / 8000, 180 GB per GPU in a DGX
// B200); NVLink per direction per GPU (NVLink3 300 GB/s, NVLink4 450, H800's cut-down NVLink 200,
// NVLink5 900); NIC per GPU (400 Gb/s NDR = 50 GB/s; 200 Gb/s HDR per A100 = 25 GB/s).
// Host link (host_gbps, GPU <-> CPU memory, per direction): PCIe Gen5 x16 128 GB/s both
// directions = 64 per direction on H100 SXM, H200 and H800 (NVIDIA H100 and H200 datasheets,
// "PCIe Gen5: 128GB/s"), PCIe Gen4 64 GB/s = 32 on A100 80GB SXM (A100 datasheet, "PCIe Gen4:
// 64GB/s"); DGX B200's hosts (Xeon Platinum 8570) are PCIe Gen5, so 64 there too.
// "cpu" describes an MPI run on one host: shared memory as the intra-node link, a 10 GbE NIC.
// H800 (the export H100 SXM): H100's memory, dense BF16/FP8 and HBM, NVLink cut to 400 GB/s both
// directions (200 per direction), one 400 Gb/s IB NIC per GPU; the DeepSeek-V3 report (§3.2.2)
// measures "NVLink ... 160 GB/s" and "IB (50 GB/s)" on its H800 cluster.
//
// Compute curves (docs/simulator.md "Compute model"): gemm_max and gemm_half_dim are fitted by
// scripts/fit_compute.py to the fit half of tests/data/published/runs.csv as it was on 2026-11-23
// (validation is leave-one-source-out since issue 31 and refits per fold; A100 rows for
// a100-80g, H100 rows for the Hopper parts); attention_max / attention_half_seq come from the
// FlashAttention-2 forward+backward causal head-dim-128 benchmark charts (Dao-AILab/flash-attention
// README, A100 99..189 and H100 163..328 TFLOP/s at seq 512..16k); hbm_efficiency is an assumed
// 0.8 of the datasheet bandwidth. H200 and H800 share the H100 SXM's SMs and clocks, so its curve;
// B200's gemm_max is H100's scaled by the ratio of their best-shape GEMM efficiencies (77.6% vs
// 80.3%, stas00/ml-engineering MAMF table), its attention figures are H100's.
// Refit of 2026-11-23, after the Megatron-Core rows got the overlap flags their README states
// (--tp-comm-overlap, --overlap-param-gather, Megatron's DDP bucket): gemm_half_dim 128 (the best
// of 32 / 64 / 128 / 256 on a first search), gemm_max 0.811 (A100, 9 fit rows) and 0.709 (H100,
// 6 fit rows), fit-set mean |error| 4.0%.
// fp8_gemm_max (training.fp8) fitted the same way on the 11 FP8 fit rows (NeMo 24.07 and
// Megatron-Bridge DGX-H100 runs, settings from their recipes), the BF16 curve held: 0.572 of the
// FP8 peak, fit-set mean |error| 5.7% (2026-11-24). A100 has no FP8 tensor cores (unused there).
// Refit of 2026-11-25 (issue 31): gemm_max and fp8_gemm_max fitted on every published source of
// tests/data/published/validation.csv, each source weighted equally (sim_published_step_times
// prints "fitted on every source"; the same fit without each source is its leave-one-source-out
// score): A100 0.780, H100 0.630, FP8 0.608. They were 0.811 / 0.709 / 0.572 when only Megatron
// and NeMo rows were fitted; the PyTorch-native stacks' runs pull the shared ceiling down.
// grouped_gemm_scale (the last figure): the expert GEMMs' efficiency relative to a dense GEMM of
// the same shape, fitted on the published MoE runs of tests/data/published/moe_validation.csv per
// GPU generation together with the shared MoE constants (sim/moe_band.h;
// sim_published_moe_test checks these are its optimum): Hopper 0.6 (28 H100 rows), Blackwell 0.7
// (125 B200, B300, GB200 and GB300 rows). Leave-one-source-out 13.3% over the 153 rows
// (2026-11-27: Megatron's attention priced as cuDNN's at the model's head dim; 0.7 / 0.8 and
// 14.8% with FlashAttention-2 at head dim 128).
// Ampere has no MoE row: it takes Hopper's.
constexpr ComputeCurve kAmpere{0.778, 128, 0.624, 500, 0.8, 0.778, 0.6};
// Refit of 2026-11-26 (issue 31, second pass): the 500 W part's interpolated peak, FSDP2's copy
// passes, nanotron's sequence parallelism and fused norm / rotary kernels move the H100 fit to
// 0.603 and FP8 to 0.610 (A100 0.780 unchanged). Refit of 2026-11-27: the Megatron rows on Hopper
// and later priced with the cuDNN attention Transformer Engine selects there (core::
// attention_kernel_of) and every kernel scaled to the model's head dim move them to 0.597 and
// 0.570, A100 to 0.778.
constexpr ComputeCurve kHopper{0.597, 128, 0.343, 550, 0.8, 0.570, 0.6};
constexpr ComputeCurve kBlackwell{0.597 * 77.6 / 80.3, 128, 0.343, 550, 0.8, 0.570 * 77.6 / 80.3, 0.7};
// AMD Instinct (CDNA3 MI300X / MI325X, CDNA4 MI355X). No published training run on them is
// fitted: their GEMM and attention ceilings are Hopper's scaled by the best-shape BF16 GEMM
// efficiency of the same MAMF finder on both parts (mag-/gpu_benchmark README: MI300X 758.3 of
// 1,307.4 TFLOP/s, H100 SXM 792.1 of 989), FP8 by the same ratio; MI355X takes MI300X's curve
// (no published MAMF). simulate says the step time on them is unvalidated.
constexpr double kCdnaScale = (758.3 / 1307.4) / (792.1 / 989.0);
constexpr ComputeCurve kCdna{0.597 * kCdnaScale, 128, 0.343 * kCdnaScale, 550, 0.8, 0.570 * kCdnaScale, 0.6};
const GpuSpec kGpus[] = {
    {"h100-sxm", 81559LL * 1024 * 1024, 989.0, 450.0, 50.0, 1979.0, 3350.0, 64.0, kHopper},
    // torchtitan's benchmark part: H100 with 96 GB HBM2e at "2.4 TB/sec peak", capped at 500 W
    // (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, "Grand Teton"), whose
    // footnote 2 says its peak lies "between SXM and NVL". No clock under the cap is published:
    // the peaks are interpolated in board power between NVIDIA's datasheet points, H100 NVL at
    // 400 W (835 dense BF16, 1,670 FP8 TFLOP/s) and H100 SXM5 at 700 W (989, 1,979): at 500 W
    // 835 + (989 - 835) x 100 / 300 = 886 and 1,670 + 309 / 3 = 1,773. PCIe as the SXM5's.
    {"h100-96g-500w", 96LL * 1024 * 1024 * 1024, 886.0, 450.0, 50.0, 1773.0, 2400.0, 64.0, kHopper},
    {"h200", 143771LL * 1024 * 1024, 989.0, 450.0, 50.0, 1979.0, 4800.0, 64.0, kHopper},
    {"h800", 81559LL * 1024 * 1024, 989.0, 200.0, 50.0, 1979.0, 3350.0, 64.0, kHopper},
    {"a100-80g", 81920LL * 1024 * 1024, 312.0, 300.0, 25.0, 0.0, 2039.0, 32.0, kAmpere},
    // A100 SXM4 40 GB: the 80 GB part's SMs, clocks and PCIe with HBM2 at 1,555 GB/s (NVIDIA
    // A100 datasheet); llm-foundry's A100-40GB rows (tests/data/published/runs_new.csv).
    {"a100-40g", 40LL * 1024 * 1024 * 1024, 312.0, 300.0, 25.0, 0.0, 1555.0, 32.0, kAmpere},
    {"b200", 180LL * 1000 * 1000 * 1000, 2250.0, 900.0, 50.0, 4500.0, 8000.0, 64.0, kBlackwell},
    // Grace-Blackwell and Blackwell Ultra, dense peaks per GPU (sparse / 2): GB200 NVL72 (NVIDIA
    // datasheet: 360 PFLOPS FP16/BF16 and 720 FP8 with sparsity, 13.4 TB HBM3e at 576 TB/s over 72
    // GPUs: 2,500 / 5,000 TFLOP/s, 186 GB, 8,000 GB/s; ConnectX-7 400 Gb/s per GPU); GB300 NVL72
    // (the same BF16 / FP8 peaks, about 20 TB over 72 GPUs: 279 GB; ConnectX-8 800 Gb/s); HGX
    // B300 (B200's BF16 / FP8 peaks, 270 GB; ConnectX-8). Per-GPU figures as Verda's table
    // (verda.com/blog/gb300-nvl72-architecture) gives them; NVLink 5 is 900 GB/s per direction on
    // all. The host link of a GB part is NVLink-C2C, 900 GB/s both ways per Grace shared by its 2
    // GPUs: 225 GB/s per GPU per direction; B300's PCIe Gen 6 x16: 128. Their compute curve is
    // B200's (Blackwell's, fitted on B200 runs). An NVL72 rack is one NVLink domain of up to 72
    // GPUs in trays of 4: cluster.nvlink_domain says how many of them a job's links reach.
    {"gb200", 186LL * 1000 * 1000 * 1000, 2500.0, 900.0, 50.0, 5000.0, 8000.0, 225.0, kBlackwell},
    {"gb300", 279LL * 1000 * 1000 * 1000, 2500.0, 900.0, 100.0, 5000.0, 8000.0, 225.0, kBlackwell},
    {"b300", 270LL * 1000 * 1000 * 1000, 2250.0, 900.0, 100.0, 4500.0, 8000.0, 128.0, kBlackwell},
    // AMD datasheets, dense peaks: MI300X 1,307.4 BF16 / 2,614.9 FP8 TFLOP/s, HBM3 5,300 GB/s;
    // MI325X the same peaks, 256 GB HBM3E at 6,000 GB/s; MI355X 2,500 / 5,000 ("2.5 / 5 PF"), 288 GB
    // HBM3E at 8,000 GB/s. Memory as PyTorch reports the total: MI300X total_memory=196592MB
    // (ROCm/ROCm#4203); MI325X and MI355X their nominal GiB. Infinity Fabric between the 8 GPUs
    // of a node is a full mesh of 7 links, not a switch: 896 GB/s both ways in all on MI300X /
    // MI325X (448 per direction), 1,075 on MI355X (7 x 153.6; 537 per direction), priced as a
    // switch of that bandwidth (two GPUs alone get one link). 400 Gb/s NIC per GPU, PCIe Gen5 x16.
    {"mi300x", 196592LL * 1024 * 1024, 1307.4, 448.0, 50.0, 2614.9, 5300.0, 64.0, kCdna},
    {"mi325x", 256LL * 1024 * 1024 * 1024, 1307.4, 448.0, 50.0, 2614.9, 6000.0, 64.0, kCdna},
    {"mi355x", 288LL * 1024 * 1024 * 1024, 2500.0, 537.6, 50.0, 5000.0, 8000.0, 64.0, kCdna},
    {"cpu", 16LL * 1024 * 1024 * 1024, 1.0, 10.0, 1.25, 0.0, 20.0, 20.0, ComputeCurve{}},
};

// A decoder-only transformer's shape; every preset below starts from one.
ModelSpec decoder(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t ffn, std::int64_t heads,
                  std::int64_t kv_heads, std::int64_t head_dim, std::int64_t vocab) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = ffn;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = head_dim;
  m.vocab = vocab;
  return m;
}

ModelSpec llama(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t ffn, std::int64_t heads) {
  return decoder(name, layers, hidden, ffn, heads, 8, 128, 128256);
}

// Shapes: docs/sources/simulator.md §6 (Llama 3 from meta-llama/llama-models sku_list.py; Mixtral from
// arXiv:2401.04088 Table 1; DeepSeek-V3 from its tech report and HF config; GPT-3 from Brown
// et al. 2020 Table 2.1).
std::vector<ModelSpec> make_models() {
  std::vector<ModelSpec> out;
  out.push_back(llama("llama3-8b", 32, 4096, 14336, 32));
  out.push_back(llama("llama3-70b", 80, 8192, 28672, 64));
  out.push_back(llama("llama3-405b", 126, 16384, 53248, 128));
  // Qwen3's dense models, from their Hugging Face config.json (copies in tests/data/import/hf/):
  // GQA with 8 KV heads of 128, the two smallest with tied embeddings.
  auto qwen3 = [](const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t ffn, std::int64_t heads,
                  bool tied) {
    ModelSpec m = decoder(name, layers, hidden, ffn, heads, 8, 128, 151936);
    m.tied_embeddings = tied;
    return m;
  };
  out.push_back(qwen3("qwen3-0.6b", 28, 1024, 3072, 16, true));
  out.push_back(qwen3("qwen3-1.7b", 28, 2048, 6144, 16, true));
  out.push_back(qwen3("qwen3-8b", 36, 4096, 12288, 32, false));
  out.push_back(qwen3("qwen3-32b", 64, 5120, 25600, 64, false));

  ModelSpec gpt3;
  gpt3.name = "gpt3-175b";
  gpt3.layers = 96;
  gpt3.hidden = 12288;
  gpt3.ffn_hidden = 49152;
  gpt3.heads = 96;
  gpt3.kv_heads = 96;
  gpt3.vocab = 50257;
  gpt3.head_dim = 128;
  gpt3.tied_embeddings = true;
  gpt3.gated_mlp = false;
  gpt3.biases = true;
  gpt3.position_embeddings = 2048;
  out.push_back(gpt3);

  ModelSpec mixtral;
  mixtral.name = "mixtral-8x7b";
  mixtral.layers = 32;
  mixtral.hidden = 4096;
  mixtral.ffn_hidden = 14336;
  mixtral.heads = 32;
  mixtral.kv_heads = 8;
  mixtral.vocab = 32000;
  mixtral.head_dim = 128;
  mixtral.experts = 8;
  mixtral.experts_per_token = 2;
  mixtral.moe_ffn_hidden = 14336;
  out.push_back(mixtral);

  ModelSpec ds;
  ds.name = "deepseek-v3";
  ds.layers = 61;
  ds.hidden = 7168;
  ds.ffn_hidden = 18432;
  ds.heads = 128;
  ds.kv_heads = 128;
  ds.vocab = 129280;
  ds.head_dim = 128;
  ds.experts = 256;
  ds.experts_per_token = 8;
  ds.moe_ffn_hidden = 2048;
  ds.shared_experts = 1;
  ds.dense_layers = 3;
  ds.q_lora_rank = 1536;
  ds.kv_lora_rank = 512;
  ds.qk_nope_head_dim = 128;
  ds.qk_rope_head_dim = 64;
  ds.v_head_dim = 128;
  // Node-limited routing: 8 groups, a token's experts in 4 of them (HF config n_group / topk_group;
  // DeepSeek-V3 report §2.1.2, "each token will be sent to at most M = 4 nodes").
  ds.expert_groups = 8;
  ds.expert_groups_per_token = 4;
  out.push_back(ds);

  // MoE shapes from the models' Hugging Face config.json (copies in tests/data/hf/, README there
  // gives their source); DeepSeek-V3 16B is torchtitan's deepseek_v3 "16B" flavor
  // (torchtitan/models/deepseek_v3/__init__.py, pytorch/torchtitan@7e4ab859).
  auto moe = [](const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t ffn, std::int64_t heads,
                 std::int64_t kv, std::int64_t head_dim, std::int64_t vocab, std::int64_t experts, std::int64_t top_k,
                 std::int64_t moe_ffn, std::int64_t shared, std::int64_t dense, std::int64_t freq) {
    ModelSpec m = decoder(name, layers, hidden, ffn, heads, kv, head_dim, vocab);
    m.experts = experts;
    m.experts_per_token = top_k;
    m.moe_ffn_hidden = moe_ffn;
    m.shared_experts = shared;
    m.dense_layers = dense;
    m.moe_layer_freq = freq;
    return m;
  };
  auto mla = [](ModelSpec m, std::int64_t q_rank) {
    m.q_lora_rank = q_rank;
    m.kv_lora_rank = 512;
    m.qk_nope_head_dim = 128;
    m.qk_rope_head_dim = 64;
    m.v_head_dim = 128;
    return m;
  };
  ModelSpec v3_671b = ds;
  v3_671b.name = "deepseek-v3-671b";
  out.push_back(v3_671b);
  out.push_back(mla(moe("deepseek-v3-16b", 27, 2048, 10944, 16, 16, 0, 102400, 64, 6, 1408, 2, 1, 1), 0));
  out.push_back(mla(moe("kimi-k2", 61, 7168, 18432, 64, 64, 0, 163840, 384, 8, 2048, 1, 1, 1), 1536));
  out.push_back(moe("llama4-scout", 48, 5120, 16384, 40, 8, 128, 202048, 16, 1, 8192, 1, 0, 1));
  out.push_back(moe("llama4-maverick", 48, 5120, 16384, 40, 8, 128, 202048, 128, 1, 8192, 1, 0, 2));
  out.push_back(moe("qwen3-30b-a3b", 48, 2048, 6144, 32, 4, 128, 151936, 128, 8, 768, 0, 0, 1));
  out.push_back(moe("qwen3-235b-a22b", 94, 4096, 12288, 64, 4, 128, 151936, 128, 8, 1536, 0, 0, 1));
  out.push_back(moe("gpt-oss-20b", 24, 2880, 2880, 64, 8, 64, 201088, 32, 4, 2880, 0, 0, 1));
  out.push_back(moe("gpt-oss-120b", 36, 2880, 2880, 64, 8, 64, 201088, 128, 4, 2880, 0, 0, 1));
  out.push_back(moe("mixtral-8x22b", 56, 6144, 16384, 48, 8, 0, 32000, 8, 2, 16384, 0, 0, 1));
  return out;
}

const std::vector<ModelSpec>& models() {
  static const std::vector<ModelSpec> kModels = make_models();
  return kModels;
}

}  // namespace

// Preset names compare without regard to case; "h100" is the SXM part (the H100 most training
// clusters use, and nvidia-smi's "NVIDIA H100 80GB HBM3"); "a100" the 80 GB one.
namespace {
bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

std::optional<GpuSpec> gpu_preset(std::string_view name) {
  if (same_name(name, "h100")) name = "h100-sxm";
  if (same_name(name, "a100")) name = "a100-80g";
  for (const auto& g : kGpus) {
    if (same_name(name, g.name)) return g;
  }
  return std::nullopt;
}

std::optional<ModelSpec> model_preset(std::string_view name) {
  for (const auto& m : models()) {
    if (same_name(name, m.name)) return m;
  }
  return std::nullopt;
}

std::optional<ModelSpec> model_preset_by_shape(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                               std::int64_t kv_heads) {
  for (const auto& m : models()) {
    const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    if (m.layers == layers && m.hidden == hidden && m.heads == heads && kv == kv_heads) return m;
  }
  return std::nullopt;
}

bool blackwell(const GpuSpec& gpu) {
  for (const char* name : {"b200", "gb200", "b300", "gb300"}) {
    if (gpu.name == name) return true;
  }
  return false;
}

bool amd_instinct(const GpuSpec& gpu) { return gpu.name.rfind("mi3", 0) == 0; }

bool mx_tensor_cores(const GpuSpec& gpu) { return blackwell(gpu) || gpu.name == "mi355x"; }

std::int64_t rack_nvlink_gpus(const GpuSpec& gpu) { return gpu.name == "gb200" || gpu.name == "gb300" ? 72 : 0; }

std::vector<std::string> gpu_preset_names() {
  std::vector<std::string> out;
  for (const auto& g : kGpus) out.push_back(g.name);
  return out;
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> out;
  for (const auto& m : models()) out.push_back(m.name);
  return out;
}

ParamCounts param_counts(const ModelSpec& m) {
  ParamCounts c;
  const double h = static_cast<double>(m.hidden);
  const double hd = static_cast<double>(m.effective_head_dim());
  const double heads = static_cast<double>(m.heads);
  const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads);
  if (m.kv_lora_rank > 0) {
    // Multi-head latent attention (DeepSeek-V2/V3): low-rank q and kv projections with their
    // norms, decoupled rope key, output projection.
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double q = m.q_lora_rank > 0
                         ? h * m.q_lora_rank + static_cast<double>(m.q_lora_rank) * heads * qk + m.q_lora_rank
                         : h * heads * qk;
    const double kvp = h * static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) +
                       static_cast<double>(m.kv_lora_rank) * heads * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim) +
                       m.kv_lora_rank;
    c.attention = q + kvp + heads * static_cast<double>(m.v_head_dim) * h;
  } else {
    c.attention = h * heads * hd + 2 * h * kv * hd + heads * hd * h;
    if (m.biases) c.attention += heads * hd + 2 * kv * hd + h;
  }
  const double mats = m.gated_mlp ? 3 : 2;
  const double ffn = static_cast<double>(m.ffn_hidden);
  double dense_mlp = mats * h * ffn + (m.biases ? ffn + h : 0);
  const double norms = m.biases ? 4 * h : 2 * h;  // two LayerNorms (weight+bias) or two RMSNorms
  c.per_layer_dense = c.attention + dense_mlp + norms;
  const double moe_ffn = static_cast<double>(m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden);
  c.expert = mats * h * moe_ffn;
  std::int64_t moe_layers = 0;
  if (m.is_moe()) {
    moe_layers = m.moe_layer_count();
    c.per_layer_moe = c.attention + norms + static_cast<double>(m.experts + m.shared_experts) * c.expert +
                      h * static_cast<double>(m.experts);  // router
  }
  const double dense_layers = static_cast<double>(m.layers - moe_layers);
  c.embedding = static_cast<double>(m.vocab) * h + static_cast<double>(m.position_embeddings) * h;
  c.head = m.tied_embeddings ? 0 : static_cast<double>(m.vocab) * h;
  const double final_norm = m.biases ? 2 * h : h;
  c.total = dense_layers * c.per_layer_dense + static_cast<double>(moe_layers) * c.per_layer_moe + c.embedding +
            c.head + final_norm;
  double active_moe = c.attention + norms +
                      static_cast<double>(m.experts_per_token + m.shared_experts) * c.expert +
                      h * static_cast<double>(m.experts);
  c.active = dense_layers * c.per_layer_dense + static_cast<double>(moe_layers) * active_moe + c.embedding +
             c.head + final_norm;
  return c;
}

}  // namespace planck::core
