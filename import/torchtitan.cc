// torchtitan TOML -> plan.
//
// Semantics (shared/reference/mesh-anchors.md §2): torchtitan/distributed/parallel_dims.py
// (`_validate`, `build_mesh`, classic 64dc922fc and HEAD b5bcd76c6),
// torchtitan/models/llama3/infra/parallelize.py (`apply_fsdp`, dp mesh after #713/#729),
// torchtitan/train.py (global batch / gradient accumulation), torchtitan/config/job_config.py
// @238fa99 (keys and defaults). Keys lived under [training] / [experimental] until #980
// (2025-03); both layouts are read.

#include <toml++/toml.h>

#include <cctype>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/presets.h"
#include "import/importer.h"
#include "import/plan_builder.h"
#include "import/toml_reader.h"

namespace planck::import {

namespace {

// Sections planck reads, with every key torchtitan defines there (2024 and 2025 layouts).
const KnownKeys kKnown = {
    {"parallelism",
     {"data_parallel_replicate_degree",
      "data_parallel_shard_degree",
      "fsdp_reshard_after_forward",
      "tensor_parallel_degree",
      "disable_loss_parallel",
      "enable_async_tensor_parallel",
      "enable_compiled_autograd",
      "pipeline_parallel_degree",
      "module_fqns_per_model_part",
      "pipeline_parallel_split_points",
      "pipeline_parallel_first_stage_less_layers",
      "pipeline_parallel_last_stage_less_layers",
      "pipeline_parallel_layers_per_stage",
      "pipeline_parallel_schedule",
      "pipeline_parallel_schedule_csv",
      "pipeline_parallel_microbatch_size",
      "pipeline_parallel_expert_parallel_overlap",
      "context_parallel_degree",
      "context_parallel_load_balancer",
      "context_parallel_rotate_method",
      "expert_parallel_degree",
      "expert_tensor_parallel_degree",
      "expert_parallel_comm_backend"}},
    {"training",
     {"dataset",
      "dataset_path",
      "local_batch_size",
      "global_batch_size",
      "batch_size",
      "seq_len",
      "max_norm",
      "steps",
      "warmup_steps",
      "enable_cpu_offload",
      "mixed_precision_param",
      "mixed_precision_reduce",
      "compile",
      "gc_freq",
      "gc_debug",
      "seed",
      "deterministic",
      "dtype",
      "data_parallel_replicate_degree",
      "data_parallel_shard_degree",
      "tensor_parallel_degree",
      "pipeline_parallel_degree",
      "context_parallel_degree",
      "enable_loss_parallel",
      "disable_loss_parallel",
      "enable_async_tensor_parallel",
      "enable_compiled_autograd",
      "fsdp_reshard_after_forward",
      "enable_fp8_linear",
      "enable_float8_linear",
      "debug_moe_force_load_balance",
      "optimizer",
      "lr_scheduler"}},
    {"experimental",
     {"context_parallel_degree", "pipeline_parallel_degree", "pipeline_parallel_split_points",
      "pipeline_parallel_schedule", "pipeline_parallel_schedule_csv", "pipeline_parallel_microbatches",
      "enable_async_tensor_parallel", "enable_compiled_autograd", "custom_model_path", "custom_import",
      "custom_args_module", "expert_parallel_degree"}},
    {"model",
     {"name", "flavor", "norm_type", "tokenizer_path", "hf_assets_path", "converters", "print_after_conversion",
      "use_flex_attn", "attn_mask_type"}},
    {"activation_checkpoint",
     {"mode", "selective_ac_option", "per_op_sac_force_recompute_mm_shapes_by_fqns", "memory_budget",
      "visualize_memory_budget_pareto", "early_stop", "preserve_rng_state", "determinism_check", "debug"}},
};
const std::vector<std::string> kOtherSections = {
    "job",    "profiling", "metrics",  "optimizer", "lr_scheduler", "checkpoint",        "compile",
    "float8", "mx",        "quantize", "comm",      "validation",   "memory_estimation", "fault_tolerance"};

// The sections a degree key may live in, newest first (#980 moved them to [parallelism]).
const std::vector<std::string> kDegreeSections = {"parallelism", "training", "experimental"};

struct Degrees {
  std::int64_t dpr = 1, dps = -1, tp = 1, pp = 1, cp = 1, ep = 1, etp = 1;
  bool etp_given = false;
};

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
    if (std::string(k.name) == "expert_tensor_parallel_degree") d.etp_given = true;
  }
  return d;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
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
  return std::nullopt;
}

// [training] batch keys (train.py): global_batch_size = -1 means local x dp degree; gradient
// accumulation = global / (local x dp degree), asserted to divide. Under PP the local batch is
// cut into local / pipeline_parallel_microbatch_size pipeline micro-batches.
core::Result<nlohmann::ordered_json> read_training(TomlReader& r, const Degrees& d, std::int64_t dps_known) {
  PlanBuilder& b = r.builder();
  nlohmann::ordered_json t;
  auto local_new = r.int_in("training", "local_batch_size");
  if (!local_new) return local_new.status();
  auto local_old = r.int_in("training", "batch_size");
  if (!local_old) return local_old.status();
  auto global_r = r.int_in("training", "global_batch_size");
  if (!global_r) return global_r.status();
  auto seq_r = r.int_in("training", "seq_len");
  if (!seq_r) return seq_r.status();
  auto mbs_r = r.int_in("parallelism", "pipeline_parallel_microbatch_size");
  if (!mbs_r) return mbs_r.status();
  auto nmb_r = r.int_in("experimental", "pipeline_parallel_microbatches");
  if (!nmb_r) return nmb_r.status();

  std::optional<TomlInt> local = local_new->has_value() ? *local_new : *local_old;
  const std::int64_t local_bs = local ? local->value : 8;  // job_config default
  if (!local) b.note("local_batch_size not set: torchtitan default 8");
  for (const auto* v : {&local, &*seq_r, &*mbs_r, &*nmb_r}) {
    if (v->has_value() && (*v)->value < 1) {
      return b.error((*v)->line,
                     "[" + (*v)->section + "] " + (*v)->key + " = " + std::to_string((*v)->value) + " must be >= 1");
    }
  }
  std::int64_t accum = 1;
  bool accum_known = dps_known != -1;
  std::optional<std::int64_t> global;
  if (global_r->has_value() && (*global_r)->value == 0) {
    return b.error((*global_r)->line, "global_batch_size = 0: torchtitan asserts global_batch_size > 0");
  }
  if (dps_known != -1) {
    auto dp = checked_mul(d.dpr, dps_known);
    auto per_step = dp ? checked_mul(local_bs, *dp) : std::nullopt;
    if (!per_step) return b.error(0, "local_batch_size x data-parallel degree overflows a 64-bit integer");
    if (!global_r->has_value() || (*global_r)->value < 0) {
      global = *per_step;
      b.note("global batch = local_batch_size " + std::to_string(local_bs) + " x dp degree " + std::to_string(*dp) +
             " = " + std::to_string(*global) + " (global_batch_size unset or -1)");
    } else {
      global = (*global_r)->value;
      if (*global % *per_step == 0) {
        accum = *global / *per_step;
        b.note("gradient accumulation = global " + std::to_string(*global) + " / (local " + std::to_string(local_bs) +
               " x dp " + std::to_string(*dp) + ") = " + std::to_string(accum) + " (torchtitan train.py)");
      } else {
        accum_known = false;
        b.warn("global_batch_size " + std::to_string(*global) + " is not a multiple of local_batch_size " +
               std::to_string(local_bs) + " x dp degree " + std::to_string(*dp) +
               ": torchtitan's assertion fails; `planck verify` reports it");
      }
    }
  } else if (global_r->has_value() && (*global_r)->value > 0) {
    global = (*global_r)->value;
  }
  if (global) t["global_batch"] = *global;

  if (d.pp > 1) {
    std::int64_t n_mb = 0;
    std::int64_t mbs = mbs_r->has_value() ? (*mbs_r)->value : 1;
    if (nmb_r->has_value()) {  // before #980: the number of micro-batches, not their size
      n_mb = (*nmb_r)->value;
      if (local_bs % n_mb == 0) mbs = local_bs / n_mb;
    } else if (local_bs % mbs == 0) {
      n_mb = local_bs / mbs;
    }
    if (n_mb == 0 || local_bs % n_mb != 0) {
      accum_known = false;
      b.warn("local batch " + std::to_string(local_bs) + " does not split into pipeline micro-batches of " +
             std::to_string(mbs));
    }
    t["micro_batch"] = mbs;
    if (accum_known) {
      t["grad_accumulation"] = accum * n_mb;
      b.note("pipeline: " + std::to_string(n_mb) + " micro-batches of " + std::to_string(mbs) + " per local batch" +
             (accum > 1 ? " x " + std::to_string(accum) + " accumulation steps" : ""));
    }
    // torch.distributed.pipelining defers the gradient reduction to each schedule.step's last backward.
    t["grad_sync"] = "last_microbatch";
  } else {
    t["micro_batch"] = local_bs;
    if (accum_known) t["grad_accumulation"] = accum;
    // train.py's train_step runs forward_backward_step per micro-batch without disabling
    // gradient sync, so FSDP/DDP reduce on every micro-batch.
    t["grad_sync"] = accum > 1 ? "every_microbatch" : "last_microbatch";
    if (accum > 1)
      b.note("grad_sync = every_microbatch: torchtitan's train_step does not disable gradient sync while accumulating");
  }
  t["seq_len"] = seq_r->has_value() ? (*seq_r)->value : 2048;
  if (!seq_r->has_value()) b.note("seq_len not set: torchtitan default 2048");

  for (const char* key : {"mixed_precision_param", "mixed_precision_reduce"}) {
    auto v = r.string_in("training", key);
    if (!v) return v.status();
    if (!v->has_value()) continue;
    auto dt = core::parse_dtype((*v)->value);
    if (!dt) return b.error((*v)->line, std::string("[training] ") + key + " = '" + (*v)->value + "' is not a dtype");
    t[std::string(key) == "mixed_precision_param" ? "param_dtype" : "reduce_dtype"] = core::to_string(*dt);
  }
  auto opt = r.string_in("optimizer", "name");
  if (!opt) return opt.status();
  if (opt->has_value()) {
    std::string o = lower((*opt)->value);
    if (o == "adamw" || o == "adam")
      t["optimizer"] = o;
    else
      b.note("optimizer " + (*opt)->value + " is not one planck models; left at its default");
  }
  auto ac = r.string_in("activation_checkpoint", "mode");
  if (!ac) return ac.status();
  if (ac->has_value()) {
    const std::string mode = lower((*ac)->value);
    if (mode == "none" || mode == "selective" || mode == "full") {
      t["activation_checkpointing"] = mode;
    } else {
      b.warn("activation_checkpoint.mode '" + (*ac)->value + "' has no planck equivalent; treated as none");
    }
  }
  return t;
}

}  // namespace

core::Result<ImportResult> import_torchtitan(std::string_view text, const std::string& path,
                                             const ImportOptions& options) {
  PlanBuilder b("torchtitan", path);
  auto parsed = parse_toml(text, b);
  if (!parsed) return parsed.status();
  TomlReader r(*parsed, b);
  r.warn_unknown(kKnown, kOtherSections);

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
    b.note("mesh order [pp, dp_replicate, dp_shard, ep, cp, tp], tp fastest (torchtitan build_mesh; the sparse "
           "mesh (pp, dp_replicate, efsdp, ep) unflattens the same ranks)");
  } else {
    b.set_mesh({"pp", "dp_replicate", "dp_shard", "cp", "tp"}, {d.pp, d.dpr, dps_written, d.cp, d.tp});
    b.note("mesh order [pp, dp_replicate, dp_shard, cp, tp], tp fastest (torchtitan build_mesh)");
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
  par["sequence_parallel"] = d.tp > 1;
  if (d.tp > 1) b.note("sequence_parallel = true: torchtitan applies SequenceParallel to the norms whenever tp > 1");

  std::int64_t virtual_stages = 1;
  if (d.pp > 1) {
    std::string sched = "1F1B";
    auto s = r.first_string(kDegreeSections, "pipeline_parallel_schedule");
    if (!s) return s.status();
    if (s->has_value()) sched = (*s)->value;
    auto info = map_schedule(sched);
    if (!info) {
      b.warn("pipeline schedule '" + sched + "' has no planck equivalent; left out (1f1b assumed by planck)");
    } else {
      par["pipeline_schedule"] = info->planck_name;
      if (info->multi_stage) {
        virtual_stages = 2;
        b.note("schedule " + sched +
               " is multi-stage: 2 stages per rank (torchtitan default without "
               "pipeline_parallel_layers_per_stage)");
      }
    }
  }
  par["virtual_stages"] = virtual_stages;
  if (d.ep > 1 && d.tp > 1) par["etp"] = etp;
  b.plan()["parallelism"] = par;

  // Model: [model] name + flavor -> a planck preset.
  auto name = r.string_in("model", "name");
  auto flavor = r.string_in("model", "flavor");
  if (!name) return name.status();
  if (!flavor) return flavor.status();
  std::string model_name = name->has_value() ? (*name)->value : "llama3";
  std::string model_flavor = flavor->has_value() ? (*flavor)->value : "debugmodel";
  if (auto preset = preset_for(model_name, model_flavor)) {
    b.plan()["model"] = *preset;
    b.note("model " + model_name + " flavor " + model_flavor + " -> preset " + *preset);
  } else {
    b.warn("model " + model_name + " flavor " + model_flavor +
           " has no planck preset; model left out (add a \"model\" object for the divisibility and memory checks)");
  }

  auto training = read_training(r, d, dps_written == -1 ? -1 : dps_used);
  if (!training) return training.status();
  b.plan()["training"] = *training;

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
