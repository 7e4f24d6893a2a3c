// Shape rules: batch, heads, KV heads, layers per stage, sequence, experts (docs/verify.md).

#include "core/mesh/plan_mesh.h"
#include "core/check/checks.h"
#include "core/base/int128.h"
#include "core/plan/pipeline_split.h"
#include "core/plan/plan_load.h"
#include "core/mesh/roles.h"

namespace planck::core {
namespace {

void add(Diagnostics& out, const char* rule, Severity sev, std::string msg, std::string ptr, std::string hint) {
  Diagnostic d;
  d.rule = rule;
  d.severity = sev;
  d.message = std::move(msg);
  d.pointer = std::move(ptr);
  d.hint = std::move(hint);
  out.add(std::move(d));
}

std::string s(std::int64_t v) { return std::to_string(v); }

// The model pointer: the field itself when the model is an object that states it.
std::string model_ptr(const Plan& plan, const char* field) {
  const auto& root = plan.doc.root();
  if (root.contains("model") && root["model"].is_object() && root["model"].contains(field)) {
    return std::string("/model/") + field;
  }
  return "/model";
}

void check_batch(const Plan& plan, const Mesh& mesh, Diagnostics& out) {
  if (!plan.training || !plan.training->global_batch) return;
  const Training& t = *plan.training;
  const std::int64_t dp = degrees(mesh).dp_degree();
  const std::int64_t gb = *t.global_batch;
  // 128-bit: micro_batch and grad_accumulation may each be up to 2^40.
  const Int128 per_step = static_cast<Int128>(t.micro_batch) * dp;
  if (t.grad_accumulation) {
    const Int128 total = per_step * *t.grad_accumulation;
    if (total != gb) {
      add(out, "batch-indivisible", Severity::kError,
          "global_batch " + s(gb) + " != micro_batch " + s(t.micro_batch) + " x grad_accumulation " +
              s(*t.grad_accumulation) + " x dp_degree " + s(dp) + " (= " +
              (total > INT64_MAX ? std::string("more than 2^63") : s(static_cast<std::int64_t>(total))) + ")",
          "/training/global_batch",
          "make global_batch = micro_batch x grad_accumulation x dp_degree (dp_degree = " + s(dp) + " on " +
              mesh.to_string() + ")");
    }
  } else if (per_step > gb || gb % static_cast<std::int64_t>(per_step) != 0) {
    add(out, "batch-indivisible", Severity::kError,
        "global_batch " + s(gb) + " is not a multiple of micro_batch " + s(t.micro_batch) + " x dp_degree " + s(dp) +
            " = " + (per_step > INT64_MAX ? std::string("more than 2^63") : s(static_cast<std::int64_t>(per_step))) +
            ", so grad_accumulation cannot be derived",
        "/training/global_batch",
        "choose global_batch as a multiple of " +
            (per_step > INT64_MAX ? std::string("micro_batch x dp_degree") : s(static_cast<std::int64_t>(per_step))));
  }
}

// The pointer of the first Megatron split option the plan states.
std::string split_ptr(const Plan& plan) {
  for (const char* k : {"pipeline_layout", "first_stage_layers", "last_stage_layers",
                        "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"}) {
    const auto& root = plan.doc.root();
    if (root.contains("parallelism") && root["parallelism"].is_object() && root["parallelism"].contains(k)) {
      return std::string("/parallelism/") + k;
    }
  }
  return "/parallelism";
}

void check_megatron_split(const Plan& plan, std::int64_t pp, std::int64_t layers, Diagnostics& out) {
  const std::int64_t v = plan.parallelism.virtual_stages;
  auto split = megatron_split(plan.parallelism, layers, pp, v);
  if (!split) {
    add(out, "layers-indivisible", Severity::kError, "Megatron-LM refuses this pipeline split: " + split.message(),
        split_ptr(plan), "give a split Megatron-LM builds (docs/plan-format.md \"Pipeline split\")");
    return;
  }
  // Megatron asserts the layout's MTP layers match --mtp-num-layers
  // (pipeline_parallel_layer_layout.py validate_layer_layout, "Number of mtp layers in layout must
  // match mtp_num_layers").
  const std::int64_t mtp = plan.training ? plan.training->mtp_layers : 0;
  if (mtp > 0 && plan.parallelism.pipeline_layout && split->mtp_layers != mtp) {
    add(out, "layers-indivisible", Severity::kError,
        "pipeline_layout holds " + s(split->mtp_layers) + " MTP layers m but training.mtp_layers is " + s(mtp) +
            " (Megatron-LM: \"Number of mtp layers in layout must match mtp_num_layers\")",
        "/training/mtp_layers", "write " + s(mtp) + " m before the loss L in the layout, or set mtp_layers to " +
                                    s(split->mtp_layers));
  }
  if (split->virtual_stages != v) {
    add(out, "layers-indivisible", Severity::kError,
        "pipeline_layout gives " + s(split->virtual_stages) + " chunks per pipeline rank but virtual_stages is " + s(v),
        "/parallelism/virtual_stages",
        "set virtual_stages to " + s(split->virtual_stages) +
            " (Megatron derives it from the layout: megatron/training/arguments.py:941-952)");
  }
}

void check_model(const Plan& plan, const Mesh& mesh, Diagnostics& out) {
  if (!plan.model) return;
  const ModelSpec& m = *plan.model;
  const Degrees d = degrees(mesh);
  if (d.tp > 1 && m.heads % d.tp != 0) {
    add(out, "heads-indivisible", Severity::kError,
        "heads " + s(m.heads) + " of model " + m.name + " are not divisible by tp " + s(d.tp),
        "/mesh/shape/" + s(mesh.index_of("tp")), "choose tp dividing " + s(m.heads));
  }
  const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (d.tp > 1 && kv % d.tp != 0 && d.tp % kv != 0) {
    add(out, "kv-heads-indivisible", Severity::kError,
        "kv_heads " + s(kv) + " of model " + m.name + " and tp " + s(d.tp) +
            " divide neither way (KV heads are split across TP ranks, or replicated when tp is a multiple)",
        "/mesh/shape/" + s(mesh.index_of("tp")), "choose tp dividing " + s(kv) + " or a multiple of it");
  }
  const std::int64_t v = plan.parallelism.virtual_stages;
  const std::int64_t stages = d.pp * v;
  if (has_megatron_split(plan.parallelism)) {
    // Megatron's own split: it runs exactly what Megatron-LM accepts (core/plan/pipeline_split.h).
    check_megatron_split(plan, d.pp, m.layers, out);
  } else if (d.pp > 1 || v > 1) {
    if (m.layers < stages) {
      add(out, "layers-indivisible", Severity::kError,
          "model " + m.name + " has " + s(m.layers) + " layers, fewer than pp " + s(d.pp) + " x virtual_stages " +
              s(v) + " = " + s(stages) + " stages",
          model_ptr(plan, "layers"), "use at most " + s(m.layers) + " pipeline stages in all");
    } else if (m.layers % stages != 0) {
      const std::int64_t largest = (m.layers + stages - 1) / stages;
      add(out, "layers-indivisible", Severity::kWarning,
          s(m.layers) + " layers over pp " + s(d.pp) + " x virtual_stages " + s(v) + " = " + s(stages) +
              " stages do not divide evenly: the largest stage has " + s(largest) + " layers, the smallest " +
              s(m.layers / stages) + ", so the pipeline runs at the pace of the largest",
          model_ptr(plan, "layers"), "choose pp x virtual_stages dividing " + s(m.layers));
    }
  }
}

// Expert parallelism (docs/plan-format.md "Mixture of experts"): the expert-parallel group is
// ep x cp (x tp when etp = 1); etp is 1 or tp.
void check_experts(const Plan& plan, const Mesh& mesh, Diagnostics& out) {
  const std::int64_t tp = mesh.size("tp");
  if (plan.parallelism.etp && *plan.parallelism.etp != 1 && *plan.parallelism.etp != tp) {
    add(out, "etp-invalid", Severity::kError,
        "parallelism.etp " + s(*plan.parallelism.etp) + " is neither 1 nor tp " + s(tp) +
            ": expert tensor parallelism either splits each expert over the whole tp group or not at all",
        "/parallelism/etp", "set etp to 1 (the tp ranks join the expert-parallel group) or to " + s(tp));
    return;
  }
  if (!plan.model || !plan.model->is_moe() || !mesh.has("ep")) return;
  const ModelSpec& m = *plan.model;
  const std::vector<std::string> dims = expert_parallel_dims(plan, mesh);
  const GroupSet g = mesh.groups(dims);
  const std::int64_t ep = g.group_size();
  std::string spelled = "ep " + s(mesh.size("ep"));
  for (const auto& dim : dims) {
    if (dim != "ep") spelled += " x " + dim + " " + s(mesh.size(dim));
  }
  if (ep > 1 && m.experts % ep != 0) {
    add(out, "experts-indivisible", Severity::kError,
        "experts " + s(m.experts) + " of model " + m.name + " are not divisible by the expert-parallel group " +
            s(ep) + (dims.size() > 1 ? " (" + spelled + ")" : std::string(" (ep ") + s(ep) + ")"),
        "/mesh/shape/" + s(mesh.index_of("ep")), "choose an expert-parallel group dividing " + s(m.experts));
    return;
  }
  const std::int64_t gpn = link_domain(plan.cluster);
  if (ep > 1 && gpn > 0 && ep <= gpn && g.max_nodes_spanned(gpn) > 1) {
    add(out, "ep-crosses-nodes", Severity::kWarning,
        "the expert-parallel group of " + s(ep) + " ranks (" + spelled + ") spans " + s(g.max_nodes_spanned(gpn)) +
            " " + std::string(link_domain_word(plan.cluster)) + "s though it fits in one " + link_domain_word(plan.cluster) +
            " of " + s(gpn) + " GPUs: every MoE layer's all-to-all crosses the NICs",
        "/mesh/dims", "move ep (and the dims it borrows) to the end of mesh.dims so its ranks are consecutive");
  }
  if (plan.parallelism.expert_capacity_factor) {
    const double cf = *plan.parallelism.expert_capacity_factor;
    add(out, "expert-capacity", Severity::kNote,
        "capacity factor " + std::to_string(cf) + ": each expert takes at most ceil(tokens x top-k / experts x " +
            std::to_string(cf) + ") tokens per micro-batch; " +
            (cf < 1.0 ? "below 1 tokens are dropped even when the router is balanced"
                      : "tokens beyond it are dropped when the router is imbalanced") +
            ", and the padded buffers cost all-to-all bytes and expert FLOPs as if full",
        "/parallelism/expert_capacity_factor", "dropless routing (no capacity factor) sends only the routed tokens");
  }
}

void check_seq(const Plan& plan, const Mesh& mesh, Diagnostics& out) {
  if (!plan.training || !plan.training->seq_len) return;
  const std::int64_t seq = *plan.training->seq_len;
  const Degrees d = degrees(mesh);
  // Context parallelism with load balancing splits the sequence into 2 x cp chunks
  // (torchtitan seq_len_divisor, Megatron CP zig-zag).
  if (d.cp > 1 && seq % (2 * d.cp) != 0) {
    add(out, "seq-indivisible", Severity::kError,
        "seq_len " + s(seq) + " is not divisible by 2 x cp = " + s(2 * d.cp) +
            " (context parallelism splits the sequence into 2 x cp load-balanced chunks)",
        "/training/seq_len", "choose seq_len as a multiple of " + s(2 * d.cp));
  }
  if (plan.parallelism.sequence_parallel && d.tp > 1 && seq % d.tp != 0) {
    add(out, "seq-indivisible", Severity::kError,
        "seq_len " + s(seq) + " is not divisible by tp " + s(d.tp) + " with sequence_parallel on",
        "/training/seq_len", "choose seq_len as a multiple of " + s(d.tp));
  }
}

}  // namespace

void add_group_checks(CheckRegistry& registry);

void add_core_checks(CheckRegistry& registry) {
  Check mesh;
  mesh.name = "mesh";
  mesh.needs_mesh = false;
  mesh.rules = {{"mesh-world-mismatch", Severity::kError, "product of mesh.shape != nodes x gpus_per_node"},
                {"mesh-invalid-dim", Severity::kError, "bad size, duplicate or unknown dim, dp with dp_replicate/dp_shard"}};
  mesh.run = [](const CheckContext& ctx, Diagnostics& out) { plan_mesh(ctx.plan, &out); };
  registry.add(std::move(mesh));

  add_group_checks(registry);

  Check div;
  div.name = "divisibility";
  div.rules = {{"batch-indivisible", Severity::kError, "global_batch != micro_batch x grad_accumulation x dp_degree", {kInputGlobalBatch}},
               {"heads-indivisible", Severity::kError, "heads % tp != 0", {kInputModel}},
               {"kv-heads-indivisible", Severity::kError, "kv_heads and tp divide neither way", {kInputModel}},
               {"layers-indivisible", Severity::kError, "layers < pp x virtual_stages or a split Megatron-LM refuses (error); uneven stages (warning)", {kInputModel}},
               {"seq-indivisible", Severity::kError, "seq_len not divisible by 2 x cp, or by tp with sequence parallel", {kInputSeqLen}},
               {"experts-indivisible", Severity::kError, "experts % expert-parallel group (ep x cp [x tp]) != 0", {kInputModel}},
               {"etp-invalid", Severity::kError, "parallelism.etp is neither 1 nor tp", {}},
               {"ep-crosses-nodes", Severity::kWarning, "the expert-parallel group spans nodes though it fits in one", {kInputModel}},
               {"expert-capacity", Severity::kNote, "a capacity factor drops or pads tokens per expert", {kInputModel}}};
  div.run = [](const CheckContext& ctx, Diagnostics& out) {
    check_batch(ctx.plan, *ctx.mesh, out);
    check_model(ctx.plan, *ctx.mesh, out);
    check_experts(ctx.plan, *ctx.mesh, out);
    check_seq(ctx.plan, *ctx.mesh, out);
  };
  registry.add(std::move(div));
}

}  // namespace planck::core
