#include "core/plan/plan.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace planck::core {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

const char* to_string(DataParallel v) {
  switch (v) {
    case DataParallel::kNone: return "none";
    case DataParallel::kDdp: return "ddp";
    case DataParallel::kFsdp: return "fsdp";
    case DataParallel::kZero1: return "zero1";
    case DataParallel::kZero2: return "zero2";
    case DataParallel::kZero3: return "zero3";
    case DataParallel::kHsdp: return "hsdp";
  }
  return "none";
}

const char* to_string(PipelineSchedule v) {
  switch (v) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::k1F1B: return "1f1b";
    case PipelineSchedule::kInterleaved1F1B: return "interleaved_1f1b";
    case PipelineSchedule::kZbv: return "zbv";
    case PipelineSchedule::kInterleavedZb: return "interleaved_zb";
    case PipelineSchedule::kDualPipeV: return "dualpipev";
  }
  return "1f1b";
}

const char* to_string(GradSync v) {
  switch (v) {
    case GradSync::kEveryMicrobatch: return "every_microbatch";
    case GradSync::kLastMicrobatch: return "last_microbatch";
    case GradSync::kLastMicrobatchReplicate: return "last_microbatch_replicate";
  }
  return "last_microbatch";
}

std::int64_t recomputed_layers(const Training& t, std::int64_t layers, std::int64_t chunks) {
  if (t.activation_checkpointing != Checkpointing::kFull || layers <= 0) return 0;
  if (t.recompute_every) return layers / std::max<std::int64_t>(1, *t.recompute_every);
  if (t.recompute_num_layers) {
    const std::int64_t c = std::max<std::int64_t>(1, chunks);
    return *t.recompute_num_layers >= (layers + c - 1) / c ? layers : std::min(layers, *t.recompute_num_layers * c);
  }
  return layers;
}

const char* to_string(Checkpointing v) {
  switch (v) {
    case Checkpointing::kNone: return "none";
    case Checkpointing::kSelective: return "selective";
    case Checkpointing::kSelectiveAttention: return "selective_attention";
    case Checkpointing::kFull: return "full";
  }
  return "none";
}

const char* to_string(Attention v) { return v == Attention::kStandard ? "standard" : "flash"; }

const char* to_string(Fp8Recipe v) {
  switch (v) {
    case Fp8Recipe::kNone: return "none";
    case Fp8Recipe::kTensorwise: return "tensorwise";
    case Fp8Recipe::kRowwise: return "rowwise";
    case Fp8Recipe::kBlockwise: return "blockwise";
    case Fp8Recipe::kMxfp8: return "mxfp8";
  }
  return "none";
}

constexpr Fp8Recipe kFp8Recipes[] = {Fp8Recipe::kNone, Fp8Recipe::kTensorwise, Fp8Recipe::kRowwise,
                                     Fp8Recipe::kBlockwise, Fp8Recipe::kMxfp8};

std::optional<Fp8Recipe> parse_fp8_recipe(std::string_view s) {
  for (auto v : kFp8Recipes) {
    if (lower(s) == to_string(v)) return v;
  }
  return std::nullopt;
}

const std::vector<std::string>& fp8_recipe_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (auto v : kFp8Recipes) out.emplace_back(to_string(v));
    return out;
  }();
  return names;
}

const char* to_string(OffloadDevice v) {
  switch (v) {
    case OffloadDevice::kNone: return "none";
    case OffloadDevice::kCpu: return "cpu";
    case OffloadDevice::kNvme: return "nvme";
  }
  return "none";
}

std::optional<OffloadDevice> parse_offload_device(std::string_view s) {
  for (auto v : {OffloadDevice::kNone, OffloadDevice::kCpu, OffloadDevice::kNvme}) {
    if (lower(s) == to_string(v)) return v;
  }
  return std::nullopt;
}

const char* to_string(MoeDispatcher v) {
  switch (v) {
    case MoeDispatcher::kAllToAll: return "alltoall";
    case MoeDispatcher::kAllGather: return "allgather";
    case MoeDispatcher::kDeepEp: return "deepep";
    case MoeDispatcher::kHybridEp: return "hybridep";
  }
  return "alltoall";
}

std::optional<MoeDispatcher> parse_moe_dispatcher(std::string_view s) {
  for (auto v : {MoeDispatcher::kAllToAll, MoeDispatcher::kAllGather, MoeDispatcher::kDeepEp, MoeDispatcher::kHybridEp}) {
    if (lower(s) == to_string(v)) return v;
  }
  return std::nullopt;
}

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = {"adamw", "adam",  "adam8bit",   "adafactor", "lamb",
                                                 "sgd",   "lion",  "muon",       "onebit_adam"};
  return names;
}

std::optional<Attention> parse_attention(std::string_view s) {
  for (auto v : {Attention::kFlash, Attention::kStandard}) {
    if (s == to_string(v)) return v;
  }
  return std::nullopt;
}

const char* to_string(DType v) {
  switch (v) {
    case DType::kFp32: return "fp32";
    case DType::kBf16: return "bf16";
    case DType::kFp16: return "fp16";
    case DType::kFp8: return "fp8";
  }
  return "bf16";
}

int dtype_bytes(DType v) {
  switch (v) {
    case DType::kFp32: return 4;
    case DType::kBf16: return 2;
    case DType::kFp16: return 2;
    case DType::kFp8: return 1;
  }
  return 2;
}

std::optional<DataParallel> parse_data_parallel(std::string_view s) {
  for (auto v : {DataParallel::kNone, DataParallel::kDdp, DataParallel::kFsdp, DataParallel::kZero1,
                 DataParallel::kZero2, DataParallel::kZero3, DataParallel::kHsdp}) {
    if (lower(s) == to_string(v)) return v;
  }
  return std::nullopt;
}

std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view s) {
  std::string l = lower(s);
  // torchtitan's class names (torch.distributed.pipelining): GPipe, 1F1B, Interleaved1F1B,
  // ZBVZeroBubble, InterleavedZeroBubble, DualPipeV; and planck's own snake_case names.
  if (l == "gpipe") return PipelineSchedule::kGpipe;
  if (l == "1f1b") return PipelineSchedule::k1F1B;
  if (l == "interleaved_1f1b" || l == "interleaved1f1b") return PipelineSchedule::kInterleaved1F1B;
  if (l == "zbv" || l == "zbvzerobubble") return PipelineSchedule::kZbv;
  if (l == "dualpipev") return PipelineSchedule::kDualPipeV;
  if (l == "interleaved_zb" || l == "interleavedzerobubble" || l == "interleavedzb") {
    return PipelineSchedule::kInterleavedZb;
  }
  return std::nullopt;
}

std::optional<GradSync> parse_grad_sync(std::string_view s) {
  for (auto v : {GradSync::kEveryMicrobatch, GradSync::kLastMicrobatch, GradSync::kLastMicrobatchReplicate}) {
    if (lower(s) == to_string(v)) return v;
  }
  return std::nullopt;
}

std::optional<Checkpointing> parse_checkpointing(std::string_view s) {
  for (auto v : {Checkpointing::kNone, Checkpointing::kSelective, Checkpointing::kSelectiveAttention,
                 Checkpointing::kFull}) {
    if (lower(s) == to_string(v)) return v;
  }
  return std::nullopt;
}

std::optional<DType> parse_dtype(std::string_view s) {
  std::string l = lower(s);
  if (l == "fp32" || l == "float32") return DType::kFp32;
  if (l == "bf16" || l == "bfloat16") return DType::kBf16;
  if (l == "fp16" || l == "float16") return DType::kFp16;
  if (l == "fp8" || l == "float8") return DType::kFp8;
  return std::nullopt;
}

std::optional<std::int64_t> Plan::world() const {
  std::int64_t w = 0;
  if (__builtin_mul_overflow(cluster.nodes, cluster.gpus_per_node, &w)) return std::nullopt;
  return w;
}

}  // namespace planck::core
