// training.stack and training.attention_kernel: names and the facts the simulator reads
// (docs/simulator.md "Software stack").

#include <algorithm>
#include <cctype>
#include <string>

#include "core/plan/plan.h"

namespace planck::core {

namespace {

constexpr Stack kStacks[] = {Stack::kMegatron, Stack::kTorchtitanEager, Stack::kTorchtitanCompile, Stack::kFsdp1,
                             Stack::kFsdp2,    Stack::kDeepspeed,       Stack::kMegatronDeepspeed, Stack::kNanotron};
constexpr AttentionKernel kKernels[] = {AttentionKernel::kFa2, AttentionKernel::kFa1, AttentionKernel::kFa3,
                                        AttentionKernel::kCudnn, AttentionKernel::kSdpa};

// Names are written with '_'; '-' is accepted for the same name.
std::string normalised(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return c == '-' ? '_' : std::tolower(c); });
  return out;
}

template <class E, std::size_t N>
std::vector<std::string> names_of(const E (&all)[N]) {
  std::vector<std::string> out;
  for (auto v : all) out.emplace_back(to_string(v));
  return out;
}

}  // namespace

const char* to_string(Stack v) {
  switch (v) {
    case Stack::kMegatron: return "megatron";
    case Stack::kTorchtitanEager: return "torchtitan_eager";
    case Stack::kTorchtitanCompile: return "torchtitan_compile";
    case Stack::kFsdp1: return "fsdp1";
    case Stack::kFsdp2: return "fsdp2";
    case Stack::kDeepspeed: return "deepspeed";
    case Stack::kMegatronDeepspeed: return "megatron_deepspeed";
    case Stack::kNanotron: return "nanotron";
  }
  return "megatron";
}

const char* to_string(AttentionKernel v) {
  switch (v) {
    case AttentionKernel::kFa2: return "fa2";
    case AttentionKernel::kFa1: return "fa1";
    case AttentionKernel::kFa3: return "fa3";
    case AttentionKernel::kCudnn: return "cudnn";
    case AttentionKernel::kSdpa: return "sdpa";
  }
  return "fa2";
}

std::optional<Stack> parse_stack(std::string_view s) {
  const std::string n = normalised(s);
  for (auto v : kStacks) {
    if (n == to_string(v)) return v;
  }
  return std::nullopt;
}

std::optional<AttentionKernel> parse_attention_kernel(std::string_view s) {
  const std::string n = normalised(s);
  for (auto v : kKernels) {
    if (n == to_string(v)) return v;
  }
  return std::nullopt;
}

const std::vector<std::string>& stack_names() {
  static const std::vector<std::string> names = names_of(kStacks);
  return names;
}

const std::vector<std::string>& attention_kernel_names() {
  static const std::vector<std::string> names = names_of(kKernels);
  return names;
}

const std::vector<std::string>& cuda_graph_scope_names() {
  static const std::vector<std::string> names = {"layer", "full_iteration", "attn",          "mlp",
                                                 "moe",   "moe_router",     "moe_preprocess"};
  return names;
}

// Megatron's fused kernels (apply_rope_fusion, bias_swiglu_fusion, TE's fused norms) and
// torch.compile's Inductor fuse each memory-bound op into one read and one write; the others run
// PyTorch's eager ops, one kernel per op (sim/compute.cc prices both).
bool stack_fuses_memory_bound_ops(Stack v) { return v == Stack::kMegatron || v == Stack::kTorchtitanCompile; }

}  // namespace planck::core
