// Megatron-LM's pipeline-split and MoE token-dispatch flags -> parallelism (docs/import.md
// "Megatron-LM"): --account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split,
// --decoder-first/last-pipeline-num-layers, --pipeline-model-parallel-layout (core/plan/
// pipeline_split.h checks them as Megatron does), --moe-token-dispatcher-type with
// --moe-enable-deepep / --moe-flex-dispatcher-backend.

#include <optional>
#include <string>

#include "core/plan/pipeline_split.h"
#include "import/megatron/args.h"

namespace planck::import {
namespace {


}  // namespace

core::Result<std::optional<std::int64_t>> megatron_layout_chunks(const MegatronFlags& f, PlanBuilder& b,
                                                                 const MegatronDegrees& d) {
  const auto layout = f.string("pipeline-model-parallel-layout");
  if (!layout) return std::optional<std::int64_t>{};
  const int line = f.line("pipeline-model-parallel-layout");
  auto stages = core::parse_pipeline_layout(*layout);
  if (!stages) return b.error(line, "--pipeline-model-parallel-layout: " + stages.message());
  const auto n = static_cast<std::int64_t>(stages->size());
  if (n % d.pp != 0) {
    return b.error(line, "--pipeline-model-parallel-layout has " + str(n) + " stages, not a multiple of pp " +
                             str(d.pp) + " (Megatron-LM megatron/training/arguments.py:941-949 asserts it)");
  }
  if (f.has("num-layers-per-virtual-pipeline-stage") || f.has("num-virtual-stages-per-pipeline-rank")) {
    return b.error(line, "--pipeline-model-parallel-layout with a virtual-pipeline flag (Megatron-LM "
                         "megatron/training/arguments.py:927-939 allows only one of them)");
  }
  b.note("--pipeline-model-parallel-layout: " + str(n) + " stages over pp " + str(d.pp) + " = " + str(n / d.pp) +
         " chunks per rank");
  return std::optional<std::int64_t>{n / d.pp};
}

core::Status megatron_layers_divide(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d,
                                    std::optional<std::int64_t> layers) {
  // Megatron checks the world (arguments.py:432) first: a world tp x pp x cp does not divide is
  // verify's mesh-world-mismatch, the error the job dies with.
  if (!layers || d.pp == 1 || d.dp == -1) return core::Status::ok();
  // Megatron-DeepSpeed builds GPTModelPipe, a DeepSpeed PipelineModule that partitions the layers
  // itself (partition_method, 'type:transformer' by default: uneven counts allowed); only the
  // non-pipe ParallelTransformer asserts divisibility (microsoft/Megatron-DeepSpeed gpt_model.py,
  // bigscience-workshop/Megatron-DeepSpeed model/gpt_model.py --pp-partition-method).
  if (f.has("deepspeed") && !f.has("no-pipeline-parallel")) {
    if (*layers % d.pp != 0 && !f.has("pp-partition-method")) {  // bigscience.cc reads that split
      b.note("--num-layers " + str(*layers) + " over --pipeline-model-parallel-size " + str(d.pp) +
             ": DeepSpeed's PipelineModule partitions them itself (partition_method), uneven counts allowed; the "
             "largest stage sets the pace (layers-indivisible)");
    }
    return core::Status::ok();
  }
  for (const char* split : {"pipeline-model-parallel-layout", "num-virtual-stages-per-pipeline-rank",
                            "decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers",
                            "hybrid-layer-pattern", "hybrid-override-pattern"}) {
    if (f.has(split)) return core::Status::ok();  // checked by its own rules (or not by this assertion)
  }
  const bool emb = f.has("account-for-embedding-in-pipeline-split"), loss = f.has("account-for-loss-in-pipeline-split");
  const std::int64_t units = *layers + (emb ? 1 : 0) + (loss ? 1 : 0);
  if (units % d.pp == 0) return core::Status::ok();
  const std::string counted = emb || loss ? " + " + str(units - *layers) + " (embedding / loss)" : "";
  return b.error(f.line("num-layers"),
                 "--num-layers " + str(*layers) + counted + " is not divisible by --pipeline-model-parallel-size " +
                     str(d.pp) +
                     ": Megatron refuses it at start-up (megatron/training/arguments.py asserts \"Number of layers "
                     "should be divisible by the pipeline-model-parallel size\"; Megatron-Core's "
                     "get_num_layers_to_build asserts the same); give uneven stages with "
                     "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers or "
                     "--pipeline-model-parallel-layout, or change the layers or pp");
}

core::Status megatron_split_and_dispatch(const MegatronFlags& f, PlanBuilder& b) {
  auto& par = b.plan()["parallelism"];
  for (const char* flag : {"account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split"}) {
    if (!f.has(flag)) continue;
    std::string key(flag);
    for (char& c : key) c = c == '-' ? '_' : c;
    par[key] = true;
    b.locate("/parallelism/" + key, f.line(flag));
  }
  for (const auto& [flag, key] : {std::pair{"decoder-first-pipeline-num-layers", "first_stage_layers"},
                                  std::pair{"decoder-last-pipeline-num-layers", "last_stage_layers"}}) {
    PLANCK_IMPORT_TRY(n, f.integer(flag));
    if (!n) continue;
    if (*n < 1) return b.error(f.line(flag), std::string("--") + flag + " must be > 0 (transformer_config.py:2303)");
    par[key] = *n;
    b.locate(std::string("/parallelism/") + key, f.line(flag));
  }
  if (auto layout = f.string("pipeline-model-parallel-layout")) {
    par["pipeline_layout"] = *layout;
    b.locate("/parallelism/pipeline_layout", f.line("pipeline-model-parallel-layout"));
  }

  // Token dispatcher: TransformerConfig's default is allgather (transformer_config.py:891);
  // --moe-enable-deepep is the deprecated spelling of flex + deepep (:1743-1752).
  if (!f.has("num-experts")) return core::Status::ok();
  const std::string type = f.string("moe-token-dispatcher-type").value_or("allgather");
  const int line = f.line("moe-token-dispatcher-type");
  std::string dispatcher;
  if (type == "allgather" || type == "alltoall") {
    dispatcher = type;
    if (f.has("moe-enable-deepep")) {
      return b.error(f.line("moe-enable-deepep"), "--moe-enable-deepep needs --moe-token-dispatcher-type flex "
                                                  "(transformer_config.py:1743-1745 raises ValueError)");
    }
  } else if (type == "flex") {
    const std::string backend =
        f.has("moe-enable-deepep") ? "deepep" : f.string("moe-flex-dispatcher-backend").value_or("deepep");
    if (backend == "deepep" || backend == "hybridep") {
      dispatcher = backend;
    } else {
      dispatcher = "alltoall";
      b.warn("--moe-flex-dispatcher-backend " + backend + ": not modelled; priced as a plain all-to-all");
    }
  } else {
    return b.error(line, "--moe-token-dispatcher-type " + type + ": Megatron-LM knows allgather, alltoall and flex");
  }
  par["moe_dispatcher"] = dispatcher;
  if (f.has("moe-token-dispatcher-type")) b.locate("/parallelism/moe_dispatcher", line);
  if (!f.has("moe-token-dispatcher-type")) {
    b.note("no --moe-token-dispatcher-type: Megatron-LM's default allgather dispatcher (transformer_config.py:891)");
  }
  return core::Status::ok();
}

}  // namespace planck::import
