// Megatron-LM's runtime flags that change what planck prices, not the layout (docs/import.md
// "Megatron-LM"): CUDA graphs (--cuda-graph-impl with --cuda-graph-modules, formerly
// --cuda-graph-scope; the deprecated --enable-cuda-graph / --external-cuda-graph), FP8 weight
// gathers (--fp8-param-gather), multi-token prediction (--mtp-num-layers), the attention
// kernel (--attention-backend, --transformer-impl local) and frozen weights (--freeze-*). NVIDIA/Megatron-LM@d98e8a6
// megatron/training/arguments.py, megatron/core/transformer/transformer_config.py (cuda_graph_modules).

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "import/megatron/args.h"

namespace planck::import {
namespace {

// --attention-backend (megatron/core/models/common/language_module/language_module.py sets
// Transformer Engine's NVTE_*_ATTN from it) -> training.attention / attention_kernel.
void read_attention_backend(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t) {
  // unfused (TE's) and local (Megatron's own DotProductAttention, as --transformer-impl local
  // builds) materialise the scores, softmax and
  // dropout; flash forces TE's FlashAttention, fused cuDNN's kernel; auto leaves TE to choose,
  // cuDNN on Hopper and later: the megatron stack's default kernel.
  // (Megatron-Bridge configs write the enum member, AttnBackend.fused.)
  std::string backend = f.string("attention-backend").value_or("auto");
  if (backend.rfind("AttnBackend.", 0) == 0) backend.erase(0, std::string("AttnBackend.").size());
  if (backend != "auto" && backend != "flash" && backend != "fused" && backend != "unfused" && backend != "local") {
    b.unmodelled("--attention-backend " + backend, f.line("attention-backend"),
                 "not one of Megatron's AttnBackend (flash, fused, unfused, local, auto): priced as auto");
  }
  // --use-flash-attn (2022-12, d693034) switches the legacy model's ParallelAttention to
  // FlashSelfAttention, flash-attn's kernel (megatron/legacy/model/transformer.py until 8de8238
  // removed it); Megatron-Core models never read it (Transformer Engine, or --attention-backend,
  // picks). An explicit --attention-backend is what runs.
  const bool local = f.string("transformer-impl").value_or("") == "local";
  const bool legacy_flash =
      f.has("use-flash-attn") && !f.has("attention-backend") && (local || f.has("use-legacy-models"));
  if (f.has("use-flash-attn") && !f.has("attention-backend") && !legacy_flash) {
    b.note("--use-flash-attn: read only by the legacy model (--use-legacy-models); Megatron-Core's Transformer "
           "Engine attention picks its own kernel, priced as the stack's default");
  }
  if (legacy_flash) {
    t["attention_kernel"] = "fa2";
    b.locate("/training/attention_kernel", f.line("use-flash-attn"));
    b.note("--use-flash-attn: the legacy model's attention runs flash-attn's FlashSelfAttention "
           "(megatron/legacy/model/transformer.py), priced as FlashAttention-2");
  } else if (backend == "unfused" || backend == "local" || local) {
    t["attention"] = "standard";
  } else if (backend == "flash") {
    t["attention_kernel"] = "fa2";
    b.note("--attention-backend flash: Transformer Engine's FlashAttention, priced as FlashAttention-2 (it runs FA3 "
           "where flash_attn_3 is installed, which a launch script does not say)");
  } else if (backend == "fused") {
    t["attention_kernel"] = "cudnn";
  }
}

// --cuda-graph-impl / --cuda-graph-modules -> training.cuda_graphs (core cuda_graph_scope_names).
void read_cuda_graphs(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t) {
  std::string impl = f.string("cuda-graph-impl").value_or("none");
  int line = f.line("cuda-graph-impl");
  // --enable-cuda-graph is the local implementation, --external-cuda-graph Transformer Engine's
  // (arguments.py maps both onto --cuda-graph-impl).
  if (impl == "none" && (f.has("enable-cuda-graph") || f.has("external-cuda-graph"))) {
    impl = f.has("enable-cuda-graph") ? "local" : "transformer_engine";
    line = f.line(f.has("enable-cuda-graph") ? "enable-cuda-graph" : "external-cuda-graph");
  }
  if (impl == "none") return;
  std::vector<std::string> modules = f.strings("cuda-graph-modules");
  const char* flag = "--cuda-graph-modules";
  if (modules.empty()) {
    modules = f.strings("cuda-graph-scope");
    flag = "--cuda-graph-scope";
  }
  std::vector<std::string> graphs;
  auto add = [&](const std::string& g) {
    if (std::find(graphs.begin(), graphs.end(), g) == graphs.end()) graphs.push_back(g);
  };
  if (impl == "full_iteration") add("full_iteration");
  for (const std::string& m : modules) {
    if (m == "full") {
      add("layer");  // deprecated spelling of the empty list: the whole layer
    } else if (m == "full_iteration" || m == "attn" || m == "mlp" || m == "moe" || m == "moe_router" ||
               m == "moe_preprocess") {
      add(m);
    } else {
      b.unmodelled(std::string(flag) + " " + m, line, "not a layer part planck prices; launched eagerly");
    }
  }
  if (graphs.empty()) add("layer");  // an empty module list captures the whole transformer layer
  t["cuda_graphs"] = graphs;
  std::string list;
  for (const auto& g : graphs) list += (list.empty() ? "" : ", ") + g;
  b.locate("/training/cuda_graphs", line);
  b.note("--cuda-graph-impl " + impl + ": training.cuda_graphs = [" + list +
         "] (replayed kernels take no host launch time; docs/simulator.md \"MoE host time\")");
}

}  // namespace

void megatron_runtime_flags(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t) {
  read_cuda_graphs(f, b, t);
  // --mtp-num-layers: multi-token prediction depths, on the stage with the loss (or a layout's m).
  if (auto mtp = f.string("mtp-num-layers")) {
    char* end = nullptr;
    const long long n = std::strtoll(mtp->c_str(), &end, 10);
    if (end && *end == '\0' && n >= 0 && n <= 64) {
      t["mtp_layers"] = n;
      b.locate("/training/mtp_layers", f.line("mtp-num-layers"));
      b.note("--mtp-num-layers " + *mtp + ": " + std::to_string(n) +
             " multi-token prediction layers priced on the stage with the loss");
    } else {
      b.warn("--mtp-num-layers " + *mtp + " is not an integer in 0..64; multi-token prediction not priced");
    }
  }
  // --fp8-param-gather: the distributed optimizer and Megatron-FSDP all-gather the blocks'
  // weights as FP8 (arguments.py allows it with either).
  if (f.has("fp8-param-gather")) {
    b.plan()["parallelism"]["fp8_param_gather"] = true;
    b.locate("/parallelism/fp8_param_gather", f.line("fp8-param-gather"));
    b.note(t.contains("fp8") ? "--fp8-param-gather: the blocks' weights are all-gathered as FP8 (1 byte a parameter)"
                             : "--fp8-param-gather without --fp8-format: Megatron gathers no FP8 weights; priced in " +
                                   t.value("param_dtype", std::string("bf16")));
  }
  read_attention_backend(f, b, t);
  // --cross-entropy-loss-fusion with --cross-entropy-fusion-impl te runs Transformer Engine's
  // parallel_cross_entropy (megatron/core/models/common/language_module/language_module.py
  // compute_language_model_loss), which keeps the 16-bit logits for backward instead of
  // VocabParallelCrossEntropy's fp32 copy; native (the default), or no fusion, is that copy.
  const std::string impl = f.string("cross-entropy-fusion-impl").value_or("native");
  if (impl != "native" && impl != "te") {
    b.unmodelled("--cross-entropy-fusion-impl " + impl, f.line("cross-entropy-fusion-impl"),
                 "not one of Megatron's (native, te): the loss priced as native's fp32 copy of the logits");
  } else if (impl == "te" && f.has("cross-entropy-loss-fusion")) {
    // Megatron-LM refuses the pair at start-up since #5115 (168cb15, 2026-06-03; arguments.py:1697
    // at d98e8a6); an earlier Megatron-LM runs it, and is what a script with it was written for.
    t["cross_entropy"] = "te";
    b.locate("/training/cross_entropy", f.line("cross-entropy-fusion-impl"));
    b.finding("setting-unmodelled", f.line("cross-entropy-fusion-impl"),
              "--cross-entropy-loss-fusion with --cross-entropy-fusion-impl te: Megatron-LM refuses this pair at "
              "start-up since #5115 (2026-06-03, Transformer Engine's cross entropy's stability issues; use "
              "--cross-entropy-fusion-impl native there); priced as an earlier Megatron-LM runs it, Transformer "
              "Engine's cross entropy keeping the 16-bit logits (training.cross_entropy = te)");
  } else if (impl == "te") {
    b.note("--cross-entropy-fusion-impl te without --cross-entropy-loss-fusion: Megatron runs its unfused "
           "vocab-parallel cross entropy (an fp32 copy of the logits)");
  }
}

// Frozen weights: --freeze-all-layers (Megatron-LM), --freeze-LM / --freeze-ViT
// (examples/multimodal/multimodal_args.py). The plan's model is the language model; a vision
// encoder is not in it.
void megatron_frozen_flags(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t) {
  if (f.has("freeze-all-layers") || f.has("freeze-LM")) {
    t["frozen"] = true;
    const std::string flag = f.has("freeze-LM") ? "freeze-LM" : "freeze-all-layers";
    b.locate("/training/frozen", f.line(flag));
    b.note("--" + flag + ": the language model's weights take no gradient, optimizer state or gradient reduction" +
           (f.has("freeze-LM") ? std::string(" (the vision projection, which trains, is not in the model)") : ""));
  }
  // The entry scripts that always build a vision encoder: pretrain_vlm.py (LLaVAModel with a
  // vision transformer the size of the language model, NVIDIA/Megatron-LM@d144db4
  // pretrain_vlm.py:44-51) and examples/multimodal/train.py (--vision-model-type defaults to
  // "clip", @63be779 examples/multimodal/multimodal_args.py:12).
  const std::string& entry = f.script();
  const std::string base = entry.substr(entry.rfind('/') == std::string::npos ? 0 : entry.rfind('/') + 1);
  const bool vlm_entry =
      base == "pretrain_vlm.py" || (base == "train.py" && entry.find("multimodal") != std::string::npos);
  if (auto vision = f.string("vision-model-type"); vision || vlm_entry) {
    const std::string setting = vision ? "--vision-model-type " + *vision
                                       : base == "pretrain_vlm.py" ? std::string("pretrain_vlm.py's vision encoder")
                                                                   : "--vision-model-type clip (the default of " +
                                                                         entry + ")";
    b.unmodelled(setting, vision ? f.line("vision-model-type") : f.launch_line(),
                 std::string("the vision encoder's weights") +
                     (f.has("freeze-ViT") ? "" : ", gradients, optimizer state") +
                     " and activations are not in the model (only the language model is priced)");
  }
}

}  // namespace planck::import
