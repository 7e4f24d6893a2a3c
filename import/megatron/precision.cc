// Megatron-LM's precision and optimizer flags -> training.param_dtype, reduce_dtype, optimizer,
// optimizer_state_dtype and offload. NVIDIA/Megatron-LM@d98e8a6:
//   megatron/training/arguments.py:1076-1085 maps the dtype strings (fp32, bf16, fp16, fp8);
//   arguments.py:1204-1217: with --bf16, gradients are accumulated and all-reduced in fp32
//     (accumulate_allreduce_grads_in_fp32) unless --grad-reduce-in-bf16, or unless
//     --main-grads-dtype is not fp32; --accumulate-allreduce-grads-in-fp32 with a non-fp32
//     --main-grads-dtype asserts;
//   arguments.py:3666-3684: --use-precision-aware-optimizer and its dtype flags (--main-grads-dtype
//     fp32|bf16, --main-params-dtype fp32|fp16, --exp-avg(-sq)-dtype fp32|fp16|bf16|fp8);
//   megatron/core/optimizer/optimizer_config.py:468-480: without the precision-aware optimizer
//     each of those dtypes must be fp32 (asserted when the optimizer config is built).

#include <string>

#include "import/megatron/args.h"

namespace planck::import {
namespace {

// The dtypes only the precision-aware optimizer may lower: Megatron refuses them otherwise.
core::Status check_optimizer_dtypes(const MegatronFlags& f, PlanBuilder& b) {
  if (f.has("use-precision-aware-optimizer")) return core::Status::ok();
  for (const char* flag : {"main-grads-dtype", "main-params-dtype", "exp-avg-dtype", "exp-avg-sq-dtype"}) {
    const auto v = f.string(flag);
    if (!v || *v == "fp32") continue;
    std::string attr = flag;
    for (char& c : attr) c = c == '-' ? '_' : c;
    return b.error(f.line(flag), std::string("--") + flag + " " + *v +
                                     " without --use-precision-aware-optimizer: Megatron refuses it at start-up "
                                     "(megatron/core/optimizer/optimizer_config.py asserts \"" + attr +
                                     " can only be fp32 when not using precision-aware optimizer\"); add "
                                     "--use-precision-aware-optimizer or drop the flag");
  }
  return core::Status::ok();
}

}  // namespace

// --optimizer (arguments.py: adam, sgd, muon, dist_muon, lion, soap, adaptive_muon) and the
// precision-aware optimizer's state and master-weight dtypes; --optimizer-cpu-offload.
void read_optimizer(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t) {
  const std::string opt = f.string("optimizer").value_or("adam");
  if (opt == "adam") {
    t["optimizer"] = "adamw";  // Megatron's adam applies decoupled weight decay (AdamW)
  } else if (opt == "sgd" || opt == "lion") {
    t["optimizer"] = opt;
  } else if (opt == "muon" || opt == "dist_muon" || opt == "adaptive_muon") {
    t["optimizer"] = "muon";
    b.note("--optimizer " + opt + ": one momentum state for the layers' matrices, AdamW's two for embedding and "
           "output layer; the Newton-Schulz iterations' FLOPs are not priced");
  } else {
    b.unmodelled("--optimizer " + opt, f.line("optimizer"), "AdamW's states assumed (12 bytes a parameter)");
  }
  if (f.has("use-precision-aware-optimizer")) {
    const std::string avg = f.string("exp-avg-dtype").value_or("fp32");
    const std::string sq = f.string("exp-avg-sq-dtype").value_or("fp32");
    if (avg == "bf16" && sq == "bf16") {
      t["optimizer_state_dtype"] = "bf16";
      b.note("--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16: Adam's moments kept in bf16");
    } else if (avg != "fp32" || sq != "fp32") {
      b.unmodelled("--exp-avg-dtype " + avg + " --exp-avg-sq-dtype " + sq,
                   f.line(avg != "fp32" ? "exp-avg-dtype" : "exp-avg-sq-dtype"), "optimizer states priced in fp32");
    }
    const std::string main_params = f.string("main-params-dtype").value_or("fp32");
    if (main_params != "fp32") {
      b.unmodelled("--main-params-dtype " + main_params, f.line("main-params-dtype"), "master weights priced in fp32");
    }
  }
  if (f.has("optimizer-cpu-offload")) {
    t["offload_optimizer"] = "cpu";
    b.note("--optimizer-cpu-offload: optimizer states and master weights in host memory (HybridDeviceOptimizer)");
    if (f.has("optimizer-offload-fraction")) {
      b.unmodelled("--optimizer-offload-fraction", f.line("optimizer-offload-fraction"),
                   "the whole optimizer assumed offloaded");
    }
  }
}

core::Result<std::string> read_precision(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t) {
  if (auto st = check_optimizer_dtypes(f, b); !st) return st;
  const std::string param = f.has("bf16") ? "bf16" : f.has("fp16") ? "fp16" : "fp32";
  const std::string main_grads = f.string("main-grads-dtype").value_or("fp32");
  if (main_grads != "fp32" && main_grads != "bf16") {
    return b.error(f.line("main-grads-dtype"), "--main-grads-dtype " + main_grads +
                                                   ": Megatron's argparse accepts only fp32 or bf16 (arguments.py)");
  }
  const bool accumulate_fp32 = f.has("accumulate-allreduce-grads-in-fp32");
  // Megatron-FSDP's --megatron-fsdp-grad-comm-dtype / --megatron-fsdp-main-grads-dtype bf16 keep
  // the gradients and their reduce-scatter in bf16, as --grad-reduce-in-bf16 does for the DDP.
  const bool bf16_grads = f.has("grad-reduce-in-bf16") ||
                          (f.string("megatron-fsdp-grad-comm-dtype") == std::optional<std::string>("bf16") &&
                           f.string("megatron-fsdp-main-grads-dtype").value_or("bf16") == "bf16");
  std::string reduce = accumulate_fp32 ? "fp32" : param;
  if (param == "bf16") {
    if (accumulate_fp32 && main_grads != "fp32" && !f.has("grad-reduce-in-bf16")) {
      return b.error(f.line("main-grads-dtype"),
                     "--main-grads-dtype " + main_grads +
                         " with --accumulate-allreduce-grads-in-fp32: Megatron refuses it at start-up (arguments.py "
                         "asserts \"--main-grads-dtype can only be fp32 when --accumulate-allreduce-grads-in-fp32 is "
                         "set\"); drop one of the two");
    }
    if (bf16_grads) {
      reduce = "bf16";
    } else if (main_grads == "bf16") {
      reduce = "bf16";
      b.note("--main-grads-dtype bf16 with --bf16: gradients accumulated and reduced in bf16 (arguments.py sets "
             "accumulate_allreduce_grads_in_fp32 only for fp32 main grads)");
    } else {
      reduce = "fp32";
      b.note("bf16 gradients accumulated and reduced in fp32 (arguments.py forces it for --bf16)");
    }
  }
  t["param_dtype"] = param;
  t["reduce_dtype"] = reduce;
  return param;
}

}  // namespace planck::import
