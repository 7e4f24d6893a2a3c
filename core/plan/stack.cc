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
constexpr CrossEntropy kCrossEntropies[] = {CrossEntropy::kFused, CrossEntropy::kEager, CrossEntropy::kCompiled,
                                            CrossEntropy::kTe};
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

const char* to_string(CrossEntropy v) {
  switch (v) {
    case CrossEntropy::kFused: return "fused";
    case CrossEntropy::kEager: return "eager";
    case CrossEntropy::kCompiled: return "compiled";
    case CrossEntropy::kTe: return "te";
  }
  return "fused";
}

std::optional<CrossEntropy> parse_cross_entropy(std::string_view s) {
  const std::string n = normalised(s);
  for (auto v : kCrossEntropies) {
    if (n == to_string(v)) return v;
  }
  return std::nullopt;
}

const std::vector<std::string>& cross_entropy_names() {
  static const std::vector<std::string> names = names_of(kCrossEntropies);
  return names;
}

CrossEntropy cross_entropy_of(const Training& t) {
  if (t.cross_entropy) return *t.cross_entropy;
  switch (t.stack) {
    case Stack::kTorchtitanCompile: return CrossEntropy::kCompiled;
    case Stack::kTorchtitanEager:
    case Stack::kFsdp1:
    case Stack::kFsdp2: return CrossEntropy::kEager;
    default: return CrossEntropy::kFused;
  }
}

AttentionKernel attention_kernel_of(const Training& t) {
  if (t.attention_kernel) return *t.attention_kernel;
  return t.stack == Stack::kMegatron ? AttentionKernel::kCudnn : AttentionKernel::kFa2;
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

const std::vector<std::string>& recompute_module_names() {
  static const std::vector<std::string> names = {"core_attn", "moe_act", "layernorm",     "mla_up_proj",
                                                 "mlp",       "moe",     "shared_experts"};
  return names;
}

RecomputeModules recompute_modules_of(const Training& t) {
  RecomputeModules r;
  if (t.activation_checkpointing != Checkpointing::kSelectiveAttention) {
    r.core_attn = false;
    return r;
  }
  if (!t.recompute_modules) return r;
  const std::vector<std::string>& list = *t.recompute_modules;
  auto has = [&](const char* m) { return std::find(list.begin(), list.end(), m) != list.end(); };
  r.core_attn = has("core_attn");
  r.moe_act = has("moe_act");
  r.layernorm = has("layernorm");
  r.mla_up_proj = has("mla_up_proj");
  r.mlp = has("mlp");
  r.moe = has("moe");
  r.shared_experts = has("shared_experts");
  return r;
}

// Megatron's fused kernels (apply_rope_fusion, bias_swiglu_fusion, TE's fused norms) and
// torch.compile's Inductor fuse each memory-bound op into one read and one write. nanotron's Llama
// runs its norms as a Triton kernel (TritonRMSNorm) and its rotary embedding through
// flash-attn's fused kernel (flash_attn.layers.rotary), but SwiGLU as two eager ops
// (GLUActivation: act(gate) * up; huggingface/nanotron@c2528430 src/nanotron/models/llama.py).
// The other stacks run PyTorch's eager ops, one kernel per op (sim/compute.cc prices both).
EagerOps stack_eager_ops(Stack v) {
  switch (v) {
    case Stack::kMegatron:
    case Stack::kTorchtitanCompile: return {};
    case Stack::kNanotron: return {false, false, true};
    default: return {true, true, true};
  }
}

}  // namespace planck::core
