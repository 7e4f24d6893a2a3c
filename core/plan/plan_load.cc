#include "core/plan/plan_load.h"

#include <algorithm>

#include "core/base/input_file.h"
#include "core/plan/presets.h"
#include "core/plan/schema_reader.h"
#include "core/plan/training_load.h"
#include "core/base/str_cat.h"

namespace planck::core {
namespace {

constexpr std::int64_t kMaxModelDim = std::int64_t{1} << 32;  // layers, hidden, vocab, ...
constexpr std::int64_t kMaxRank = kMaxWorld;

const std::vector<std::string> kTopKeys = {"format", "name", "notes", "cluster", "mesh", "parallelism",
                                           "model", "training", "rank_program", "groups"};
const std::vector<std::string> kGpuKeys = {"preset",   "name",       "memory_bytes", "bf16_tflops", "nvlink_gbps",
                                           "nic_gbps", "fp8_tflops", "hbm_gbps",     "host_gbps", "compute"};
const std::vector<std::string> kModelIntKeys = {
    "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "head_dim", "experts", "experts_per_token",
    "moe_ffn_hidden", "shared_experts", "dense_layers", "position_embeddings", "q_lora_rank", "kv_lora_rank",
    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "moe_layer_freq", "expert_groups", "expert_groups_per_token"};

class Loader {
 public:
  Loader(const JsonDoc& doc, Diagnostics& out) : r_(doc, out) {}

  bool load(Plan& plan);

 private:
  void cluster(const nlohmann::json& v, Plan& plan);
  std::optional<GpuSpec> gpu(const nlohmann::json& v, const std::string& ptr);
  void compute_curve(const nlohmann::json& v, const std::string& ptr, ComputeCurve& c);
  void mesh(const nlohmann::json& v, Plan& plan);
  void parallelism(const nlohmann::json& v, Plan& plan);
  std::optional<ModelSpec> model(const nlohmann::json& v, const std::string& ptr);
  void rank_program(const nlohmann::json& v, Plan& plan);
  void groups(const nlohmann::json& v, Plan& plan);

  SchemaReader r_;
};

bool Loader::load(Plan& plan) {
  const nlohmann::json& root = r_.doc().root();
  if (!root.is_object()) {
    r_.error("", "a plan must be a JSON object, not " + json_type_name(root),
             "start from one of the plans in plans/ (see docs/plan-format.md)");
    return false;
  }
  r_.check_keys(root, "", kTopKeys);
  if (!root.contains("format")) {
    r_.error("", "missing required field 'format'", "add \"format\": \"planck/1\"");
  } else if (auto f = r_.string(root["format"], "/format"); f && *f != "planck/1") {
    r_.error("/format", "unsupported format \"" + *f + "\"", "this planck reads \"planck/1\"");
  }
  if (root.contains("name")) {
    if (auto s = r_.string(root["name"], "/name")) plan.name = *s;
  }
  if (root.contains("notes")) {
    if (auto s = r_.string_list(root["notes"], "/notes")) plan.notes = *s;
  }
  if (!root.contains("cluster")) {
    r_.error("", "missing required section 'cluster'", "add \"cluster\": {\"nodes\": N, \"gpus_per_node\": G}");
  } else {
    cluster(root["cluster"], plan);
  }
  if (!root.contains("mesh")) {
    r_.error("", "missing required section 'mesh'",
             "add \"mesh\": {\"dims\": [...], \"shape\": [...]} (outermost dim first)");
  } else {
    mesh(root["mesh"], plan);
  }
  if (root.contains("parallelism")) parallelism(root["parallelism"], plan);
  if (root.contains("model")) plan.model = model(root["model"], "/model");
  if (root.contains("training")) load_training(r_, root["training"], plan);
  if (root.contains("rank_program")) rank_program(root["rank_program"], plan);
  if (root.contains("groups")) groups(root["groups"], plan);
  return true;
}

void Loader::cluster(const nlohmann::json& v, Plan& plan) {
  if (!r_.is_object(v, "/cluster", "'cluster'")) return;
  r_.check_keys(v, "/cluster", {"nodes", "gpus_per_node", "nvlink_domain", "gpu"});
  for (const char* key : {"nodes", "gpus_per_node"}) {
    if (!v.contains(key)) {
      r_.error("/cluster", std::string("missing required field 'cluster.") + key + "'");
    }
  }
  if (v.contains("nodes")) {
    if (auto n = r_.integer(v["nodes"], "/cluster/nodes", 1, kMaxRank)) plan.cluster.nodes = *n;
  }
  if (v.contains("gpus_per_node")) {
    if (auto n = r_.integer(v["gpus_per_node"], "/cluster/gpus_per_node", 1, kMaxRank)) plan.cluster.gpus_per_node = *n;
  }
  if (v.contains("nvlink_domain")) {
    if (auto n = r_.integer(v["nvlink_domain"], "/cluster/nvlink_domain", 1, kMaxRank)) {
      plan.cluster.nvlink_domain = *n;
      const std::int64_t g = plan.cluster.gpus_per_node;
      if (g > 0 && *n % g != 0) {
        r_.error("/cluster/nvlink_domain",
                 "cluster.nvlink_domain " + std::to_string(*n) + " is not a whole number of nodes of " +
                     std::to_string(g) + " GPUs",
                 "give a multiple of gpus_per_node (GB200 NVL72: 72 in trays of 4), or leave it out for one node");
      }
    }
  }
  plan.cluster.gpu = *gpu_preset("h100-sxm");
  if (v.contains("gpu")) {
    plan.gpu_given = true;
    if (auto g = gpu(v["gpu"], "/cluster/gpu")) plan.cluster.gpu = *g;
  }
}

std::optional<GpuSpec> Loader::gpu(const nlohmann::json& v, const std::string& ptr) {
  auto preset_named = [&](const nlohmann::json& name, const std::string& p) -> std::optional<GpuSpec> {
    if (name.is_string()) {  // gpu_preset knows the aliases ("h100", "a100") and ignores case
      if (auto g = gpu_preset(name.get<std::string>())) return g;
    }
    auto s = r_.choice(name, p, gpu_preset_names());
    if (!s) return std::nullopt;
    return gpu_preset(*s);
  };
  if (v.is_string()) return preset_named(v, ptr);
  if (!v.is_object()) {
    r_.error(ptr, "'" + ptr + "' must be a preset name or an object, not " + json_type_name(v));
    return std::nullopt;
  }
  r_.check_keys(v, ptr, kGpuKeys);
  GpuSpec g;
  if (v.contains("preset")) {
    auto p = preset_named(v["preset"], ptr + "/preset");
    if (!p) return std::nullopt;
    g = *p;
  } else {
    for (const char* key : {"memory_bytes", "bf16_tflops", "nvlink_gbps", "nic_gbps"}) {
      if (!v.contains(key)) {
        r_.error(ptr, std::string("a custom GPU needs '") + key + "' (or name a \"preset\" to override)");
        return std::nullopt;
      }
    }
    g.name = "custom";
  }
  if (v.contains("name")) {
    if (auto s = r_.string(v["name"], ptr + "/name")) g.name = *s;
  }
  if (v.contains("memory_bytes")) {
    if (auto m = r_.integer(v["memory_bytes"], ptr + "/memory_bytes", 1, std::int64_t{1} << 50)) g.memory_bytes = *m;
  }
  if (v.contains("bf16_tflops")) {
    if (auto x = r_.number(v["bf16_tflops"], ptr + "/bf16_tflops", 1e-6, 1e6)) g.bf16_tflops = *x;
  }
  if (v.contains("nvlink_gbps")) {
    if (auto x = r_.number(v["nvlink_gbps"], ptr + "/nvlink_gbps", 1e-6, 1e6)) g.nvlink_gbps = *x;
  }
  if (v.contains("nic_gbps")) {
    if (auto x = r_.number(v["nic_gbps"], ptr + "/nic_gbps", 1e-6, 1e6)) g.nic_gbps = *x;
  }
  if (v.contains("fp8_tflops")) {
    if (auto x = r_.number(v["fp8_tflops"], ptr + "/fp8_tflops", 0, 1e7)) g.fp8_tflops = *x;
  }
  if (v.contains("hbm_gbps")) {
    if (auto x = r_.number(v["hbm_gbps"], ptr + "/hbm_gbps", 1e-6, 1e7)) g.hbm_gbps = *x;
  }
  if (v.contains("host_gbps")) {
    if (auto x = r_.number(v["host_gbps"], ptr + "/host_gbps", 1e-6, 1e7)) g.host_gbps = *x;
  }
  if (v.contains("compute")) compute_curve(v["compute"], ptr + "/compute", g.compute);
  return g;
}

void Loader::compute_curve(const nlohmann::json& v, const std::string& ptr, ComputeCurve& c) {
  if (!r_.is_object(v, ptr, "the GPU's 'compute'")) return;
  const std::pair<const char*, double*> fields[] = {{"gemm_max", &c.gemm_max},
                                                    {"fp8_gemm_max", &c.fp8_gemm_max},
                                                    {"grouped_gemm_scale", &c.grouped_gemm_scale},
                                                    {"gemm_half_dim", &c.gemm_half_dim},
                                                    {"attention_max", &c.attention_max},
                                                    {"attention_half_seq", &c.attention_half_seq},
                                                    {"hbm_efficiency", &c.hbm_efficiency}};
  std::vector<std::string> keys;
  for (const auto& [key, field] : fields) keys.emplace_back(key);
  r_.check_keys(v, ptr, keys);
  for (const auto& [key, field] : fields) {
    if (!v.contains(key)) continue;
    const bool fraction = std::string_view(key).find("half") == std::string_view::npos;
    if (auto x = r_.number(v[key], ptr + "/" + key, fraction ? 1e-6 : 0.0, fraction ? 1.0 : 1e9)) *field = *x;
  }
}

void Loader::mesh(const nlohmann::json& v, Plan& plan) {
  if (!r_.is_object(v, "/mesh", "'mesh'")) return;
  r_.check_keys(v, "/mesh", {"dims", "shape"});
  if (!v.contains("dims") || !v.contains("shape")) {
    r_.error("/mesh", "'mesh' needs both 'dims' and 'shape'",
             "e.g. \"dims\": [\"dp_replicate\", \"dp_shard\"], \"shape\": [2, 8]");
    return;
  }
  auto dims = r_.string_list(v["dims"], "/mesh/dims");
  const auto& shape = v["shape"];
  if (!shape.is_array()) {
    r_.error("/mesh/shape", "'/mesh/shape' must be an array of integers, not " + json_type_name(shape));
    return;
  }
  std::vector<std::int64_t> sizes;
  bool ok = true;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    // Sizes < 1 are mesh-invalid-dim (a plan error, exit 1), not a schema error: accept any int64 here.
    auto n = r_.integer(shape[i], "/mesh/shape/" + std::to_string(i), INT64_MIN, INT64_MAX);
    if (n) sizes.push_back(*n);
    else ok = false;
  }
  if (!dims || !ok) return;
  if (dims->size() != sizes.size()) {
    r_.error("/mesh/shape", "'mesh.dims' has " + std::to_string(dims->size()) + " names but 'mesh.shape' has " +
                                std::to_string(sizes.size()) + " sizes",
             "give one size per dim");
    return;
  }
  if (dims->empty()) {
    r_.error("/mesh/dims", "'mesh.dims' is empty", "a one-dim mesh is e.g. \"dims\": [\"dp\"], \"shape\": [8]");
    return;
  }
  plan.mesh.dims = *dims;
  plan.mesh.shape = sizes;
}

void Loader::parallelism(const nlohmann::json& v, Plan& plan) {
  if (!r_.is_object(v, "/parallelism", "'parallelism'")) return;
  r_.check_keys(v, "/parallelism", {"data_parallel", "fsdp_dims", "replicate_dims", "reshard_after_forward",
                                    "sequence_parallel", "pipeline_schedule", "virtual_stages", "etp",
                                    "expert_capacity_factor", "async_tp", "overlap_param_gather", "dp_bucket_params",
                                    "pp_scatter_gather", "ep_overlap", "account_for_embedding_in_pipeline_split",
                                    "account_for_loss_in_pipeline_split", "first_stage_layers", "last_stage_layers",
                                    "pipeline_layout", "moe_dispatcher", "expert_imbalance", "fp8_param_gather"});
  Parallelism& p = plan.parallelism;
  p.present = true;
  auto flag = [&](const char* key, auto& out) {
    if (!v.contains(key)) return;
    if (auto b = r_.boolean(v[key], std::string("/parallelism/") + key)) out = *b;
  };
  if (v.contains("data_parallel")) {
    if (auto s = r_.choice(v["data_parallel"], "/parallelism/data_parallel",
                           {"none", "ddp", "fsdp", "zero1", "zero2", "zero3", "hsdp"})) {
      p.data_parallel = parse_data_parallel(*s);
    }
  }
  if (v.contains("fsdp_dims")) p.fsdp_dims = r_.string_list(v["fsdp_dims"], "/parallelism/fsdp_dims");
  if (v.contains("replicate_dims")) p.replicate_dims = r_.string_list(v["replicate_dims"], "/parallelism/replicate_dims");
  flag("reshard_after_forward", p.reshard_after_forward);
  flag("sequence_parallel", p.sequence_parallel);
  if (v.contains("pipeline_schedule")) {
    if (auto s = r_.string(v["pipeline_schedule"], "/parallelism/pipeline_schedule")) {
      p.pipeline_schedule = parse_pipeline_schedule(*s);
      if (!p.pipeline_schedule) {
        r_.error("/parallelism/pipeline_schedule", "unknown pipeline schedule \"" + *s + "\"",
                 "use gpipe, 1f1b, interleaved_1f1b, zbv, interleaved_zb or dualpipev (torchtitan's names such as "
                 "Interleaved1F1B are accepted)");
      }
    }
  }
  if (v.contains("virtual_stages")) {
    if (auto n = r_.integer(v["virtual_stages"], "/parallelism/virtual_stages", 1, 1 << 20)) p.virtual_stages = *n;
  }
  if (v.contains("etp")) p.etp = r_.integer(v["etp"], "/parallelism/etp", 1, 1 << 20);
  if (v.contains("expert_capacity_factor")) {
    p.expert_capacity_factor = r_.number(v["expert_capacity_factor"], "/parallelism/expert_capacity_factor", 1e-3, 1e3);
  }
  flag("async_tp", p.async_tp);
  flag("ep_overlap", p.ep_overlap);
  flag("overlap_param_gather", p.overlap_param_gather);
  flag("fp8_param_gather", p.fp8_param_gather);
  if (v.contains("dp_bucket_params")) {
    p.dp_bucket_params = r_.integer(v["dp_bucket_params"], "/parallelism/dp_bucket_params", 1, kMaxBucketParams);
  }
  flag("pp_scatter_gather", p.pp_scatter_gather);
  flag("account_for_embedding_in_pipeline_split", p.account_for_embedding_in_pipeline_split);
  flag("account_for_loss_in_pipeline_split", p.account_for_loss_in_pipeline_split);
  if (v.contains("first_stage_layers")) {
    p.first_stage_layers = r_.integer(v["first_stage_layers"], "/parallelism/first_stage_layers", 1, 1 << 20);
  }
  if (v.contains("last_stage_layers")) {
    p.last_stage_layers = r_.integer(v["last_stage_layers"], "/parallelism/last_stage_layers", 1, 1 << 20);
  }
  if (v.contains("pipeline_layout")) p.pipeline_layout = r_.string(v["pipeline_layout"], "/parallelism/pipeline_layout");
  if (v.contains("moe_dispatcher")) {
    if (auto s = r_.choice(v["moe_dispatcher"], "/parallelism/moe_dispatcher", {"alltoall", "allgather", "deepep", "hybridep"})) {
      p.moe_dispatcher = parse_moe_dispatcher(*s);
    }
  }
  if (v.contains("expert_imbalance")) {
    p.expert_imbalance = r_.number(v["expert_imbalance"], "/parallelism/expert_imbalance", 1.0, 1e3);
  }
}

std::optional<ModelSpec> Loader::model(const nlohmann::json& v, const std::string& ptr) {
  if (v.is_string()) {
    auto s = r_.choice(v, ptr, model_preset_names());
    if (!s) return std::nullopt;
    return model_preset(*s);
  }
  if (!v.is_object()) {
    r_.error(ptr, "'model' must be a preset name or an object, not " + json_type_name(v));
    return std::nullopt;
  }
  std::vector<std::string> allowed = kModelIntKeys;
  for (const char* k : {"preset", "name", "tied_embeddings", "gated_mlp", "biases", "layer_norm"}) allowed.push_back(k);
  r_.check_keys(v, ptr, allowed);
  ModelSpec m;
  if (v.contains("preset")) {
    auto s = r_.choice(v["preset"], ptr + "/preset", model_preset_names());
    if (!s) return std::nullopt;
    m = *model_preset(*s);
  } else {
    m.name = "custom";
    for (const char* key : {"layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab"}) {
      if (!v.contains(key)) {
        r_.error(ptr, std::string("a custom model needs '") + key + "'",
                 "give layers, hidden, ffn_hidden, heads, kv_heads and vocab, or name a \"preset\"");
        return std::nullopt;
      }
    }
  }
  std::int64_t* fields[] = {&m.layers, &m.hidden, &m.ffn_hidden, &m.heads, &m.kv_heads, &m.vocab,
                            &m.head_dim, &m.experts, &m.experts_per_token, &m.moe_ffn_hidden,
                            &m.shared_experts, &m.dense_layers, &m.position_embeddings, &m.q_lora_rank,
                            &m.kv_lora_rank, &m.qk_nope_head_dim, &m.qk_rope_head_dim, &m.v_head_dim,
                            &m.moe_layer_freq, &m.expert_groups, &m.expert_groups_per_token};
  bool ok = true;
  for (std::size_t i = 0; i < kModelIntKeys.size(); ++i) {
    const std::string& key = kModelIntKeys[i];
    if (!v.contains(key)) continue;
    const bool required_positive = i < 6 || key == "moe_layer_freq";
    auto n = r_.integer(v[key], ptr + "/" + key, required_positive ? 1 : 0, kMaxModelDim);
    if (n) *fields[i] = *n;
    else ok = false;
  }
  if (v.contains("name")) {
    if (auto s = r_.string(v["name"], ptr + "/name")) m.name = *s;
  }
  for (auto [key, field] : {std::pair{"tied_embeddings", &m.tied_embeddings}, std::pair{"gated_mlp", &m.gated_mlp},
                            std::pair{"biases", &m.biases}}) {
    if (v.contains(key)) {
      if (auto b = r_.boolean(v[key], ptr + "/" + key)) *field = *b;
      else ok = false;
    }
  }
  if (v.contains("layer_norm")) {
    if (auto b = r_.boolean(v["layer_norm"], ptr + "/layer_norm")) m.layer_norm = *b;
    else ok = false;
  }
  if (ok && (m.expert_groups > 0 || m.expert_groups_per_token > 0) &&
      (m.expert_groups < 1 || m.experts % m.expert_groups != 0 || m.expert_groups_per_token < 1 ||
       m.expert_groups_per_token > m.expert_groups)) {
    r_.error(ptr + "/expert_groups",
             "expert_groups " + std::to_string(m.expert_groups) + " with expert_groups_per_token " +
                 std::to_string(m.expert_groups_per_token) + " and experts " + std::to_string(m.experts) +
                 ": the groups must split the experts evenly and a token pick 1 to expert_groups of them",
             "give both, as a Hugging Face config's n_group and topk_group, or neither");
    ok = false;
  }
  if (ok && m.dense_layers > m.layers) {
    r_.error(ptr + "/dense_layers", "dense_layers " + std::to_string(m.dense_layers) + " exceeds layers " +
                                        std::to_string(m.layers));
    ok = false;
  }
  if (!ok) return std::nullopt;
  return m;
}

void Loader::rank_program(const nlohmann::json& v, Plan& plan) {
  if (!r_.is_object(v, "/rank_program", "'rank_program'")) return;
  r_.check_keys(v, "/rank_program", {"steps", "outputs"});
  RankProgramSpec rp;
  if (!v.contains("steps")) {
    r_.error("/rank_program", "'rank_program' needs 'steps'", "e.g. \"steps\": [\"dp_rank = dp_replicate.rank\"]");
    return;
  }
  auto steps = r_.string_list(v["steps"], "/rank_program/steps");
  if (!steps) return;
  rp.steps = *steps;
  if (v.contains("outputs")) {
    const auto& o = v["outputs"];
    if (!r_.is_object(o, "/rank_program/outputs", "'rank_program.outputs'")) return;
    rp.has_outputs = true;
    for (auto it = o.begin(); it != o.end(); ++it) {
      auto dims = r_.string_list(it.value(), "/rank_program/outputs/" + json_pointer_escape(it.key()));
      if (!dims) return;
      rp.outputs.emplace_back(it.key(), *dims);
    }
  }
  plan.rank_program = rp;
}

void Loader::groups(const nlohmann::json& v, Plan& plan) {
  if (!r_.is_object(v, "/groups", "'groups'")) return;
  for (auto it = v.begin(); it != v.end(); ++it) {
    std::string ptr = "/groups/" + json_pointer_escape(it.key());
    // Keys are roles or comma-joined dims; that they name real roles/dims is checked against the
    // mesh later (the groups check), where the mesh is known.
    const auto& list = it.value();
    if (!list.is_array()) {
      r_.error(ptr, "'" + ptr + "' must be an array of rank lists, not " + json_type_name(list));
      continue;
    }
    DeclaredGroups g;
    g.key = it.key();
    bool ok = true;
    for (std::size_t i = 0; i < list.size() && ok; ++i) {
      std::string gp = ptr + "/" + std::to_string(i);
      if (!list[i].is_array()) {
        r_.error(gp, "'" + gp + "' must be an array of ranks, not " + json_type_name(list[i]));
        ok = false;
        break;
      }
      std::vector<std::int64_t> ranks;
      ranks.reserve(list[i].size());
      for (std::size_t k = 0; k < list[i].size(); ++k) {
        auto n = r_.integer(list[i][k], gp + "/" + std::to_string(k), 0, kMaxRank - 1);
        if (!n) {
          ok = false;
          break;
        }
        ranks.push_back(*n);
      }
      g.groups.push_back(std::move(ranks));
    }
    if (ok) plan.groups.push_back(std::move(g));
  }
}

}  // namespace

LoadedPlan load_plan_text(std::string_view text, const std::string& path) {
  LoadedPlan out;
  JsonParseError err;
  auto doc = JsonDoc::parse(text, &err);
  if (!doc && err.duplicate_key) {
    Diagnostic d;
    d.rule = "plan-schema";
    d.severity = Severity::kError;
    d.message = str_cat("ambiguous plan: ", err.message,
                        "; JSON allows it, but tools disagree whether the first or the last value counts");
    d.line = err.pos.line;
    d.column = err.pos.column;
    d.hint = "keep one of the two values and delete the other";
    out.diagnostics.add(std::move(d));
    return out;
  }
  if (!doc) {
    Diagnostic d;
    d.rule = "plan-syntax";
    d.severity = Severity::kError;
    d.message = "not valid JSON: " + err.message;
    d.line = err.pos.line;
    d.column = err.pos.column;
    d.hint = "fix the JSON at this line and column (a JSON linter such as `python3 -m json.tool` shows it too)";
    out.diagnostics.add(std::move(d));
    return out;
  }
  Plan plan;
  plan.path = path;
  plan.doc = std::move(*doc);
  Loader loader(plan.doc, out.diagnostics);
  loader.load(plan);
  if (!out.diagnostics.has_errors()) out.plan = std::move(plan);
  return out;
}

LoadedPlan load_plan_file(const std::string& path) {
  auto text = read_input(path);
  if (!text) {
    LoadedPlan out;
    Diagnostic d;
    d.rule = "plan-syntax";
    d.severity = Severity::kError;
    d.message = text.message();
    d.hint = "pass the path of a planck/1 JSON plan (see plans/)";
    out.diagnostics.add(std::move(d));
    return out;
  }
  return load_plan_text(*text, path);
}

}  // namespace planck::core
