// torchtitan TOML -> plan.
//
// Semantics (docs/sources/mesh.md §2): torchtitan/distributed/parallel_dims.py
// (`_validate`, `build_mesh`, classic 64dc922fc and HEAD b5bcd76c6),
// torchtitan/models/llama3/infra/parallelize.py (`apply_fsdp`, dp mesh after #713/#729),
// torchtitan/train.py (global batch / gradient accumulation), torchtitan/config/job_config.py
// @238fa99 (keys and defaults). Keys lived under [training] / [experimental] until #980
// (2025-03); both layouts are read.

#include <toml++/toml.h>

#include <cctype>
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/presets.h"
#include "import/importer.h"
#include "import/plan_builder.h"
#include "import/formats/toml_reader.h"
#include "import/torchtitan/common.h"
#include "import/torchtitan/toml_keys.h"

namespace planck::import {

namespace {

// The sections a degree key may live in, newest first (#980 moved them to [parallelism]).
const std::vector<std::string> kDegreeSections = {"parallelism", "training", "experimental"};


core::Result<Degrees> read_degrees(TomlReader& r) {
  Degrees d;
  struct Key {
    const char* name;
    std::int64_t* out;
    bool allow_minus_one;
  } keys[] = {
      {"data_parallel_replicate_degree", &d.dpr, false}, {"data_parallel_shard_degree", &d.dps, true},
      {"tensor_parallel_degree", &d.tp, false},          {"pipeline_parallel_degree", &d.pp, false},
      {"context_parallel_degree", &d.cp, false},         {"expert_parallel_degree", &d.ep, false},
      {"expert_tensor_parallel_degree", &d.etp, false},
  };
  for (const Key& k : keys) {
    auto v = r.first_int(kDegreeSections, k.name);
    if (!v) return v.status();
    if (!v->has_value()) continue;
    const TomlInt& got = **v;
    // ParallelDims._validate: "Parallelism degree should be >= 1, except for dp_shard", and
    // dp_shard is -1 or >= 1.
    if (got.value < 1 && !(k.allow_minus_one && got.value == -1)) {
      return r.builder().error(got.line, "[" + got.section + "] " + k.name + " = " + std::to_string(got.value) +
                                             ": torchtitan requires >= 1" +
                                             (k.allow_minus_one ? " or -1 (inferred)" : ""));
    }
    *k.out = got.value;
    d.lines[k.name] = got.line;
    if (std::string(k.name) == "expert_tensor_parallel_degree") d.etp_given = true;
    if (std::string(k.name) == "pipeline_parallel_degree") d.pp_before_980 = got.section != "parallelism";
  }
  return d;
}


std::optional<std::string> preset_for(const std::string& name, const std::string& flavor) {
  std::string candidate;
  if (name == "llama3" || name == "llama3_1") candidate = "llama3-" + flavor;
  if (name == "deepseek_v3" && flavor == "671B") candidate = "deepseek-v3";
  if (name == "deepseek_v3" && flavor == "16B") candidate = "deepseek-v3-16b";
  if (name == "llama4" && (flavor == "17bx16e" || flavor == "17bx16e_irope")) candidate = "llama4-scout";
  if (name == "llama4" && (flavor == "17bx128e" || flavor == "17bx128e_irope")) candidate = "llama4-maverick";
  if (name == "qwen3" && flavor == "30B-A3B") candidate = "qwen3-30b-a3b";
  if (name == "qwen3" && flavor == "235B-A22B") candidate = "qwen3-235b-a22b";
  // torchtitan/models/gpt_oss/__init__.py _20b / _120b (24 / 36 layers, dim 2880, 32 / 128
  // experts top-4, vocab 201088) are OpenAI's gpt-oss-20b / -120b; kimi_k2_7's _kimi_k2_5 text
  // tower (61 layers, dim 7168, 384 experts top-8, 1 shared, vocab 163840) is Kimi K2's shape.
  // The gpt_oss experiment of PR #1754 (pytorch/torchtitan@4d3a84f
  // torchtitan/experiments/gpt_oss/__init__.py:34,38) spelt them "20B" / "120B" (24 / 36 layers,
  // 32 / 128 experts over model/args.py's defaults: the same models); flavour keys are
  // case-sensitive there, and each era used one spelling.
  if (name == "gpt_oss" && (flavor == "20b" || flavor == "120b" || flavor == "20B" || flavor == "120B")) {
    candidate = "gpt-oss-" + flavor;
  }
  if (name.rfind("kimi_k2", 0) == 0 && flavor.rfind("Kimi-K2", 0) == 0) candidate = "kimi-k2";
  candidate = lower(candidate);
  if (!candidate.empty() && core::model_preset(candidate)) return candidate;
  return std::nullopt;
}

// torchtitan schedule names -> planck's; multi-stage ones get 2 stages per rank by default
// (torchtitan pipeline_module_split: stages_per_rank = 1 for single-stage schedules else 2).
struct ScheduleInfo {
  std::string planck_name;
  bool multi_stage = false;
};
std::optional<ScheduleInfo> map_schedule(std::string name) {
  name = lower(name);
  if (name == "1f1b") return ScheduleInfo{"1f1b", false};
  if (name == "gpipe") return ScheduleInfo{"gpipe", false};
  if (name == "interleaved1f1b") return ScheduleInfo{"interleaved_1f1b", true};
  if (name == "interleavedzerobubble") return ScheduleInfo{"interleaved_zb", true};
  if (name == "zbvzerobubble") return ScheduleInfo{"zbv", true};
  if (name == "dualpipev") return ScheduleInfo{"dualpipev", true};
  return std::nullopt;
}

// Async TP is an Inductor pass over the compiled model (torch._inductor.config._micro_pipeline_tp), and
// torchtitan refuses it on an eager one at start-up with RuntimeError("Async TP requires
// --training.compile"): pytorch/torchtitan@15a832d torchtitan/models/llama/parallelize_llama.py:53-58
// ([training] compile, since 8849580, 2024-08-03; for two weeks before it, 0ee573c turned compile on
// itself), @d240be0 torchtitan/distributed/tensor_parallel.py:15-20 maybe_enable_async_tp (needs
// [compile] enable and "model" in components). Both inside `if parallel_dims.tp_enabled`.
core::Status refuse_eager_async_tp(TomlReader& r, const std::string& section, std::int64_t tp) {
  // [compile] enable / components since #1608 (08b8b24, 2025-08-20); [training] compile before.
  const bool compile_section = r.line_in("compile", "enable") > 0 || r.line_in("compile", "components") > 0;
  const bool training_key = r.line_in("training", "compile") > 0;
  std::string why = "neither [compile] enable nor [training] compile is set", fix =
      "set [compile] enable = true (torchtitan since 2025-08-20; [training] compile = true before)";
  if (compile_section) {
    why = "[compile] enable is false or \"model\" is not in its components";
    fix = "set [compile] enable = true with \"model\" in components";
  } else if (training_key) {
    why = "[training] compile is false";
    fix = "set [training] compile = true";
  }
  return r.builder().error(
      r.line_in(section, "enable_async_tensor_parallel"),
      "[" + section + "] enable_async_tensor_parallel = true with tensor_parallel_degree " + std::to_string(tp) +
          " on an uncompiled model (" + why + "): torchtitan raises RuntimeError(\"Async TP requires "
          "--training.compile\") at start-up (pytorch/torchtitan@15a832d torchtitan/models/llama/"
          "parallelize_llama.py:53-58; @d240be0 torchtitan/distributed/tensor_parallel.py:15-20). Fix: " + fix +
          ", or enable_async_tensor_parallel = false");
}

// Mesh dims and the settings they came from; mesh-wide findings point at the first degree written.
// Points each mesh dim at the line of the degree that sets it; with_ep: the mesh has the ep dim
// between dp_shard and cp.
void locate_degrees(PlanBuilder& b, const Degrees& d, bool with_ep) {
  std::vector<const char*> keys = {"pipeline_parallel_degree", "data_parallel_replicate_degree",
                                   "data_parallel_shard_degree", "context_parallel_degree", "tensor_parallel_degree"};
  if (with_ep) keys.insert(keys.begin() + 3, "expert_parallel_degree");
  int first = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto it = d.lines.find(keys[i]);
    if (it == d.lines.end()) continue;
    b.locate("/mesh/shape/" + std::to_string(i), it->second);
    if (first == 0 || it->second < first) first = it->second;
  }
  b.locate("/mesh", first);
  b.locate("/parallelism", first);
}

// --set SECTION.KEY=VALUE (the names torchtitan's CLI takes, `--parallelism.tensor_parallel_degree 8`)
// written into the TOML before it is read: the command line wins.
core::Status apply_sets(toml::table& root, const ImportOptions& options, PlanBuilder& b) {
  for (const auto& [name, text] : options.sets) {
    const std::size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) {
      return core::Status::error("--set " + name + ": a torchtitan setting is SECTION.KEY, e.g. "
                                 "parallelism.tensor_parallel_degree");
    }
    toml::table* t = &root;
    std::size_t start = 0;
    while (start < dot) {
      const std::size_t next = std::min(name.find('.', start), dot);
      const std::string part = name.substr(start, next - start);
      if (!t->contains(part)) t->insert(part, toml::table{});
      t = (*t)[part].as_table();
      if (!t) return core::Status::error("--set " + name + ": " + part + " is not a section of the config");
      start = next + 1;
    }
    const std::string key = name.substr(dot + 1);
    const bool had = t->contains(key);
    const nlohmann::json v = set_value(text);
    if (v.is_boolean()) t->insert_or_assign(key, v.get<bool>());
    else if (v.is_number_integer()) t->insert_or_assign(key, v.get<std::int64_t>());
    else if (v.is_number()) t->insert_or_assign(key, v.get<double>());
    else t->insert_or_assign(key, v.get<std::string>());
    b.note("--set " + name + "=" + text + " from the command line" + (had ? " (replaces the config's value)" : ""));
  }
  return core::Status::ok();
}

}  // namespace

core::Result<ImportResult> import_torchtitan(std::string_view text, const std::string& path,
                                             const ImportOptions& options) {
  PlanBuilder b("torchtitan", path);
  auto parsed = parse_toml(text, b);
  if (!parsed) return parsed.status();
  if (auto st = apply_sets(*parsed, options, b); !st) return st;
  return import_torchtitan_table(*parsed, b, options, {});
}

core::Result<ImportResult> import_torchtitan_table(const toml::table& root, PlanBuilder& b,
                                                   const ImportOptions& options, const TorchtitanInput& input) {
  TomlReader r(root, b);
  r.set_lines(input.lines);
  // Sections and keys of torchtitan's JobConfig, every TOML generation (import/torchtitan/toml_keys.h).
  // [experimental] custom_args_module (since #1053; [job] custom_config_module before) names a
  // module whose dataclass torchtitan merges into JobConfig (config/manager.py): its sections.
  std::string extension;
  for (const auto& [section, key] :
       {std::pair{"experimental", "custom_args_module"}, std::pair{"job", "custom_config_module"}}) {
    auto named = r.string_in(section, key);
    if (!named) return named.status();
    if (*named && !(*named)->value.empty()) extension = (*named)->value;
  }
  if (input.check_unknown_keys) r.check_keys(torchtitan_toml_classes(), "JobConfig", extension);

  auto world_r = b.resolve_world(options, {});
  if (!world_r) return world_r.status();
  const World world = *world_r;
  b.set_cluster(world);

  auto deg_r = read_degrees(r);
  if (!deg_r) return deg_r.status();
  Degrees d = *deg_r;
  auto others = checked_product({d.dpr, d.cp, d.tp, d.pp});
  if (!others) return b.error(0, "dp_replicate x cp x tp x pp overflows a 64-bit integer");

  // ParallelDims._validate: dp_shard = -1 is world // (dp_replicate*cp*tp*pp), then the product
  // must equal the world ("Invalid parallel dims: ... != WORLD_SIZE").
  std::int64_t dps_written = d.dps;
  std::int64_t dps_used = d.dps;
  if (d.dps == -1) {
    std::int64_t q = world.size / *others;
    if (q >= 1 && q * *others == world.size) {
      dps_written = dps_used = q;
      b.note("data_parallel_shard_degree = -1 inferred as world " + std::to_string(world.size) + " // (dp_replicate " +
             std::to_string(d.dpr) + " x cp " + std::to_string(d.cp) + " x tp " + std::to_string(d.tp) + " x pp " +
             std::to_string(d.pp) + ") = " + std::to_string(q) + " (torchtitan ParallelDims._validate)");
    } else {
      dps_used = std::max<std::int64_t>(q, 1);
      b.warn("data_parallel_shard_degree = -1 cannot be inferred: world " + std::to_string(world.size) +
             " is not a multiple of dp_replicate x cp x tp x pp = " + std::to_string(*others) +
             "; torchtitan stops with 'Invalid parallel dims'. Kept as -1 so `planck verify` reports it");
    }
  } else {
    auto prod = checked_mul(*others, d.dps);
    if (!prod) return b.error(0, "dp_replicate x dp_shard x cp x tp x pp overflows a 64-bit integer");
    if (*prod != world.size) {
      b.warn("dp_replicate(" + std::to_string(d.dpr) + ") * dp_shard(" + std::to_string(d.dps) + ") * cp(" +
             std::to_string(d.cp) + ") * tp(" + std::to_string(d.tp) + ") * pp(" + std::to_string(d.pp) +
             ") = " + std::to_string(*prod) + " != world " + std::to_string(world.size) +
             ": torchtitan stops with 'Invalid parallel dims'; written as configured so `planck verify` reports it");
    }
  }
  // Expert parallelism borrows ranks from dp_shard x cp, and from tp too when etp = 1 (the only
  // choice since ETP's removal in 2026-04; classic ParallelDims allowed etp = tp). planck's mesh
  // factors the borrowed dp_shard part out as the `ep` dim, so the expert-parallel group is
  // ep x cp (x tp) and the expert-FSDP group (efsdp) is what stays in dp_shard
  // (docs/plan-format.md "Mixture of experts"; torchtitan parallel_dims.py build_mesh).
  std::int64_t mesh_ep = 1, mesh_dps = dps_written;
  const std::int64_t etp = d.etp_given ? d.etp : 1;
  if (d.ep > 1) {
    const std::string nums = "ep=" + std::to_string(d.ep) + ", dp_shard=" + std::to_string(dps_used) +
                             ", cp=" + std::to_string(d.cp) + ", tp=" + std::to_string(d.tp);
    if (etp != d.tp && etp != 1) {
      return b.error(0, "expert_tensor_parallel_degree " + std::to_string(etp) + " must be 1 or tp (" +
                            std::to_string(d.tp) + ") in torchtitan");
    }
    if ((dps_used * d.cp * d.tp) % (d.ep * etp) != 0) {
      return b.error(0, "torchtitan rejects " + nums + ", etp=" + std::to_string(etp) +
                            ": (dp_shard x cp x tp) % (ep x etp) != 0 (ParallelDims)");
    }
    const std::int64_t borrowed = d.cp * (etp == 1 ? d.tp : 1);  // ranks EP takes besides dp_shard
    if (d.ep % borrowed != 0 || dps_used % (d.ep / borrowed) != 0) {
      return b.error(0, "planck cannot lay out " + nums + ", etp=" + std::to_string(etp) +
                            ": it represents the expert-parallel group as cp" + (etp == 1 ? " x tp" : "") +
                            " x a factor of dp_shard, so ep must be a multiple of " + std::to_string(borrowed) +
                            " whose quotient divides dp_shard");
    }
    mesh_ep = d.ep / borrowed;
    if (dps_written != -1) mesh_dps = dps_used / mesh_ep;
    b.note("expert parallel ep=" + std::to_string(d.ep) + " = mesh ep " + std::to_string(mesh_ep) + " x cp " +
           std::to_string(d.cp) + (etp == 1 ? " x tp " + std::to_string(d.tp) : std::string()) +
           ": borrowed from dp_shard x cp" + (etp == 1 ? " x tp" : "") + ", so dp_shard " + std::to_string(dps_used) +
           " becomes dp_shard " + std::to_string(mesh_dps) + " x ep " + std::to_string(mesh_ep) +
           " (the expert-FSDP group efsdp is dp_shard)");
  }
  if (d.ep > 1) {
    b.set_mesh({"pp", "dp_replicate", "dp_shard", "ep", "cp", "tp"}, {d.pp, d.dpr, mesh_dps, mesh_ep, d.cp, d.tp});
    locate_degrees(b, d, true);
    b.note("mesh order [pp, dp_replicate, dp_shard, ep, cp, tp], tp fastest (torchtitan build_mesh; the sparse "
           "mesh (pp, dp_replicate, efsdp, ep) unflattens the same ranks)");
  } else {
    b.set_mesh({"pp", "dp_replicate", "dp_shard", "cp", "tp"}, {d.pp, d.dpr, dps_written, d.cp, d.tp});
    locate_degrees(b, d, false);
    b.note("mesh order [pp, dp_replicate, dp_shard, cp, tp], tp fastest (torchtitan build_mesh)");
  }

  // [parallelism] context_parallel_rotate_method (job_config.py, default "allgather"): how the K/V
  // shards reach each rank (set_rotate_method); planck prices a ring of K/V chunks, the same bytes.
  if (d.cp > 1) {
    PLANCK_IMPORT_TRY(rotate, r.string_in("parallelism", "context_parallel_rotate_method"));
    const std::string method = rotate ? rotate->value : "allgather";
    b.note("context parallelism rotates K/V by " + method + (rotate ? "" : " (torchtitan's default)") +
           ": priced as a ring of K/V chunks (the same bytes; the " + method + "'s overlap with attention is not "
           "modelled apart)");
  }
  // parallelize.py: FSDP when dp_shard > 1 or cp > 1; fully_shard gets (dp_replicate, dp_shard_cp)
  // when dp_replicate > 1 (HSDP, #713/#729), else dp_shard_cp; DDP when only dp_replicate > 1.
  nlohmann::ordered_json par;
  std::vector<std::string> fsdp_dims = {"dp_shard"};
  if (d.cp > 1) fsdp_dims.push_back("cp");
  const bool fsdp_enabled = dps_used > 1 || d.cp > 1;
  if (fsdp_enabled && d.dpr > 1) {
    par["data_parallel"] = "hsdp";
    par["fsdp_dims"] = fsdp_dims;
    par["replicate_dims"] = {"dp_replicate"};
    b.note("HSDP: fully_shard receives the 2-D mesh (dp_replicate, dp_shard" + std::string(d.cp > 1 ? "_cp" : "") +
           ") (torchtitan parallelize.py, fixed in #713)");
  } else if (fsdp_enabled) {
    par["data_parallel"] = "fsdp";
    par["fsdp_dims"] = fsdp_dims;
    b.note(std::string("FSDP over dp_shard") + (d.cp > 1 ? " x cp (dp_shard_cp)" : ""));
  } else if (d.dpr > 1) {
    par["data_parallel"] = "ddp";
    if (d.tp > 1 || d.pp > 1) {
      b.warn("torchtitan's parallelize.py raises 'DDP has not supported > 1D parallelism' for dp_replicate=" +
             std::to_string(d.dpr) + " with tp=" + std::to_string(d.tp) + ", pp=" + std::to_string(d.pp));
    }
  } else {
    par["data_parallel"] = "none";
  }

  std::string policy = "default";
  if (auto v = r.first_string(kDegreeSections, "fsdp_reshard_after_forward"); !v) {
    return v.status();
  } else if (v->has_value()) {
    policy = (*v)->value;
  }
  if (policy == "always" || policy == "never") {
    par["reshard_after_forward"] = policy == "always";
  } else {
    if (policy != "default")
      b.warn("fsdp_reshard_after_forward = '" + policy + "' is not default|always|never; used default");
    par["reshard_after_forward"] = d.pp == 1;
    if (d.pp > 1)
      b.note("reshard_after_forward = false: torchtitan's 'default' policy keeps parameters unsharded under PP");
  }
  std::string async_section;  // where async TP is turned on with tp > 1 ("" when it is not)
  for (const char* section : {"parallelism", "experimental"}) {
    auto async = r.bool_in(section, "enable_async_tensor_parallel");
    if (!async) return async.status();
    if (async->value_or(false) && d.tp > 1) {
      par["async_tp"] = true;
      async_section = section;
    }
  }
  // torchft ([fault_tolerance] enable, torchtitan/components/ft.py): the dp_replicate dim becomes
  // torchft's managed process group across replica groups launched apart, and a semi_sync_method
  // (diloco, local_sgd) replaces the per-step gradient all-reduce with one every sync_steps.
  if (auto ft = r.bool_in("fault_tolerance", "enable"); !ft) {
    return ft.status();
  } else if (ft->value_or(false)) {
    auto semi = r.string_in("fault_tolerance", "semi_sync_method");
    if (!semi) return semi.status();
    b.unmodelled("[fault_tolerance] enable = true (torchft)", r.line_in("fault_tolerance", "enable"),
                 "this file's replica group is priced alone: the replica groups torchft joins over dp_replicate "
                 "(group_size) and its quorum traffic are not in the plan");
    if (semi->has_value()) {
      b.unmodelled("[fault_tolerance] semi_sync_method = \"" + (*semi)->value + "\"", (*semi)->line,
                   "gradients priced as all-reduced every step; " + (*semi)->value +
                       " syncs the replicas only every sync_steps steps");
    }
  }
  // Loss parallel (torchtitan's train step enters loss_parallel() when tp > 1 unless
  // disable_loss_parallel; [training] before 2025-03, [parallelism] after): the logits stay
  // vocab-sharded over tp. Without it each tp rank holds the whole vocabulary's logits.
  for (const char* section : {"parallelism", "training"}) {
    auto off = r.bool_in(section, "disable_loss_parallel");
    if (!off) return off.status();
    if (off->value_or(false) && d.tp > 1) {
      b.unmodelled(std::string("[") + section + "] disable_loss_parallel = true",
                   r.line_in(section, "disable_loss_parallel"),
                   "the logits and loss priced vocab-sharded over tp (loss parallel); without it each tp rank holds "
                   "the whole vocabulary's logits");
    }
  }
  par["sequence_parallel"] = d.tp > 1;
  if (d.tp > 1) b.note("sequence_parallel = true: torchtitan applies SequenceParallel to the norms whenever tp > 1");

  std::int64_t virtual_stages = 1;
  std::optional<SplitPoints> split_points;
  if (d.pp > 1) {
    std::string sched = "1F1B";
    auto s = r.first_string(kDegreeSections, "pipeline_parallel_schedule");
    if (!s) return s.status();
    if (s->has_value()) {
      sched = (*s)->value;
      b.locate("/parallelism/pipeline_schedule", (*s)->line);
    }
    auto info = map_schedule(sched);
    PLANCK_IMPORT_TRY(split, read_split_points(r));
    if (!info) {
      b.warn("pipeline schedule '" + sched + "' has no planck equivalent; left out (1f1b assumed by planck)");
    } else {
      par["pipeline_schedule"] = info->planck_name;
      if (info->multi_stage && !split) {
        virtual_stages = 2;
        b.note("schedule " + sched + " is multi-stage: 2 stages per rank (torchtitan's default split, " +
               (d.pp_before_980 ? std::string("pipeline.py generate_split_points)")
                                : std::string("without pipeline_parallel_split_points or _layers_per_stage)")));
      }
    }
    if (split) {
      PLANCK_IMPORT_TRY(vs, split_stages_per_rank(*split, d.pp, info ? info->planck_name : sched, b));
      virtual_stages = vs;
      split_points = *split;
    }
  }
  par["virtual_stages"] = virtual_stages;
  d.stages_per_rank = virtual_stages;
  if (d.ep > 1 && d.tp > 1) par["etp"] = etp;
  // DualPipeV's expert all-to-all overlap is on unless the config turns it off
  // (pipeline_parallel_expert_parallel_overlap, default true; docs/simulator.md "Expert-parallel overlap").
  if (auto ov = r.bool_in("parallelism", "pipeline_parallel_expert_parallel_overlap"); !ov) {
    return ov.status();
  } else if (ov->has_value() && !**ov && d.ep > 1 && d.pp > 1) {
    par["ep_overlap"] = false;
    b.note("pipeline_parallel_expert_parallel_overlap = false: parallelism.ep_overlap false");
  }
  // torchtitan's expert_parallel_comm_backend (job_config.py, "standard" | "deepep"; later
  // releases add "hybridep"): the token dispatcher.
  if (auto be = r.string_in("parallelism", "expert_parallel_comm_backend"); !be) {
    return be.status();
  } else if (be->has_value() && d.ep > 1) {
    const std::string& v = (*be)->value;
    if (v == "standard" || v == "deepep" || v == "hybridep") {
      par["moe_dispatcher"] = v == "standard" ? "alltoall" : v;
      b.locate("/parallelism/moe_dispatcher", (*be)->line);
    } else {
      return b.error((*be)->line, "[parallelism] expert_parallel_comm_backend = \"" + v +
                                      "\": torchtitan knows standard, deepep and hybridep");
    }
  }
  b.plan()["parallelism"] = par;

  // Model: [model] name + flavor -> a planck preset.
  auto name = r.string_in("model", "name");
  auto flavor = r.string_in("model", "flavor");
  if (!name) return name.status();
  if (!flavor) return flavor.status();
  std::string model_name = name->has_value() ? (*name)->value : "llama3";
  std::string model_flavor = flavor->has_value() ? (*flavor)->value : "debugmodel";
  if (flavor->has_value()) b.locate("/model", (*flavor)->line);
  if (auto preset = preset_for(model_name, model_flavor)) {
    b.plan()["model"] = *preset;
    b.note("model " + model_name + " flavor " + model_flavor + " -> preset " + *preset);
    say_preset_layers(*preset, model_name + " flavor " + model_flavor, flavor->has_value() ? (*flavor)->line : 0, b);
  } else if (!input.model_args || !registry_model(*input.model_args, model_name + " flavor " + model_flavor, b,
                                                  flavor->has_value() ? (*flavor)->line : 0)) {
    b.warn("model " + model_name + " flavor " + model_flavor +
           " has no planck preset; model left out (add a \"model\" object for the divisibility and memory checks)");
  }

  if (split_points) {
    const auto spec = b.plan().contains("model") && b.plan()["model"].is_string()
                          ? core::model_preset(b.plan()["model"].get<std::string>())
                          : std::nullopt;
    check_split_layers(*split_points, spec ? spec->layers : 0, d.pp * virtual_stages, b);
  }

  auto training = read_torchtitan_training(r, d, dps_written == -1 ? -1 : dps_used);
  if (!training) return training.status();
  b.plan()["training"] = *training;
  if (!async_section.empty() && (*training)["stack"] == "torchtitan_eager") {
    return refuse_eager_async_tp(r, async_section, d.tp);
  }

  if (dps_written != -1) {
    // train.py: dp_rank/dp_degree are the flattened "dp" mesh's local rank and size: r x S + s.
    // With ep, torchtitan's dp_shard is planck's dp_shard x ep (ep inside, faster).
    if (d.ep > 1) {
      b.plan()["rank_program"] = {{"steps",
                                   {"dp_rank = (dp_replicate.rank * dp_shard.size + dp_shard.rank) * ep.size + ep.rank",
                                    "dp_degree = dp_replicate.size * dp_shard.size * ep.size"}}};
    } else {
      b.plan()["rank_program"] = {{"steps",
                                   {"dp_rank = dp_replicate.rank * dp_shard.size + dp_shard.rank",
                                    "dp_degree = dp_replicate.size * dp_shard.size"}}};
    }
  }
  return b.finish();
}

}  // namespace planck::import
