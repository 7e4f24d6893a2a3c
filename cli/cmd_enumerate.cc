// planck enumerate --world N --gpus-per-node G --model M [--gpu G] [--global-batch B] [--seq-len S]
//   [--micro-batch M] [--allow-cross-node-tp] [--top K] [--format text|json|csv] [--topology FILE]
// planck enumerate --plan TEMPLATE [any of the above, each overriding the template's value]

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/launcher_flags.h"
#include "cli/plan_input.h"
#include "cli/config_input.h"
#include "cli/verify_config.h"
#include "cli/verify_registry.h"
#include "core/base/format.h"
#include "core/base/input_file.h"
#include "core/check/report.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"
#include "sim/enumerate.h"
#include "sim/topology.h"

namespace planck::cli {
namespace {

constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;  // batches and lengths, as a plan allows them

// 0 / "" = not given on the command line: the template's value, else the default.
struct EnumerateOptions {
  std::string plan;  // --plan TEMPLATE
  std::int64_t world = 0;
  std::int64_t gpus_per_node = 0;
  std::int64_t nvlink_domain = 0;
  std::string model;
  std::string gpu;
  std::int64_t global_batch = 0;  // 0 = world x micro_batch sequences
  std::int64_t seq_len = 0;       // 8192
  std::int64_t micro_batch = 0;   // searched where no pipeline runs, else 1
  bool allow_cross_node_tp = false;
  std::int64_t top = -1;
  std::string rank_by = "throughput";
  bool allow_tight = false;
  std::string framework = "any";
  std::string fp8;  // training.fp8 of every layout; "" = the template's, else none
  std::string format = "text";
  std::string topology;
  bool nvls = false;
  bool no_tree = false;
  int threads = 0;  // 0 = one per core
  std::string output = "-";
};

// A preset name, or a JSON file holding what a plan's `model` / `cluster.gpu` may hold: read
// through the plan loader itself (one schema, one set of messages) by wrapping it in a minimal
// plan. `pointer` is where the value sits in that plan ("/model" or "/cluster/gpu").
std::optional<core::Plan> load_wrapped(const std::string& flag, const std::string& value, bool is_model) {
  std::string json;
  if (is_model) {
    auto v = model_value(flag, value);
    if (!v) return std::nullopt;
    json = v->dump(2);
  } else if (core::gpu_preset(value)) {
    json = nlohmann::json(value).dump();
  } else {
    auto text = core::read_input(value);
    if (!text) {
      std::string known;
      for (const auto& n : core::gpu_preset_names()) known += (known.empty() ? "" : ", ") + n;
      print_error(flag + " " + value + ": neither a preset (" + known + ") nor a readable JSON file: " + text.message());
      return std::nullopt;
    }
    json = *text;
  }
  // The value starts on line 2 so the loader's line numbers are the file's plus one.
  const std::string plan = is_model
                               ? "{\"model\":\n" + json + "\n,\"format\":\"planck/1\",\"cluster\":{\"nodes\":1,\"gpus_per_node\":1},\"mesh\":{\"dims\":[\"tp\"],\"shape\":[1]}}"
                               : "{\"cluster\":{\"gpu\":\n" + json + "\n,\"nodes\":1,\"gpus_per_node\":1},\"format\":\"planck/1\",\"mesh\":{\"dims\":[\"tp\"],\"shape\":[1]}}";
  core::LoadedPlan loaded = core::load_plan_text(plan, value);
  if (!loaded.plan) {
    const std::string prefix = is_model ? "/model" : "/cluster/gpu";
    for (const auto& d : loaded.diagnostics.items()) {
      std::string where = d.pointer.rfind(prefix, 0) == 0 ? d.pointer.substr(prefix.size()) : d.pointer;
      std::string pos = d.line > 1 ? ":" + std::to_string(d.line - 1) + ":" + std::to_string(d.column) : "";
      print_error(flag + " " + value + pos + (where.empty() ? "" : " at " + where) + ": " + d.message +
                  (d.hint.empty() ? "" : " (" + d.hint + ")"));
    }
    return std::nullopt;
  }
  return std::move(loaded.plan);
}

// --plan TEMPLATE: a planck/1 plan, or a framework config imported as every command reads one
// (cli/config_input.h; its cluster from --world / --gpus-per-node when the config does not state
// it), that `planck verify` can check (no plan-syntax, plan-schema or rank-program-invalid on its
// own mesh), or nullopt after printing why not, naming the file.
std::optional<core::Plan> load_template(const std::string& path, const core::CheckRegistry& checks,
                                        const EnumerateOptions& o) {
  auto framework = config_framework(path, ConfigOptions{});
  std::optional<core::Plan> plan;
  if (framework && *framework != "plan") {
    ConfigOptions config;
    if (o.gpus_per_node > 0) config.gpus_per_node = o.gpus_per_node;
    if (o.world > 0 && o.gpus_per_node > 0 && o.world % o.gpus_per_node == 0) config.nodes = o.world / o.gpus_per_node;
    auto input = load_plan_input(path, config);
    if (!input) {
      print_error("--plan " + path + ": not a config enumerate can start from (fix it as above)");
      return std::nullopt;
    }
    plan = std::move(input->plan);
  } else {
    core::LoadedPlan loaded = core::load_plan_file(path);
    if (!loaded.plan) {
      print_load_failure(path, loaded.diagnostics);
      print_error("--plan " + path + ": not a plan enumerate can start from (fix it as above)");
      return std::nullopt;
    }
    plan = std::move(loaded.plan);
  }
  std::optional<core::Mesh> mesh = core::plan_mesh(*plan, nullptr);
  static const std::vector<core::Observed> kNoRun;
  core::Diagnostics found = core::run_checks(checks, core::CheckContext{*plan, mesh ? &*mesh : nullptr, &kNoRun});
  std::erase_if(found.items(), [](const core::Diagnostic& d) { return !core::is_cannot_run_rule(d.rule); });
  if (!found.items().empty()) {
    print_load_failure(path, found);
    print_error("--plan " + path + ": `planck verify` cannot check this plan, so neither can enumerate (fix it as above)");
    return std::nullopt;
  }
  return plan;
}

// Whether the template's file states training.<field> (a field left to its default states nothing:
// enumerate then searches it as without --plan).
bool states_training(const core::Plan& t, const char* field) {
  const auto& j = t.doc.root();
  return j.contains("training") && j["training"].is_object() && j["training"].contains(field);
}

// The template's values where the command line gives none (docs/simulator.md "enumerate --plan").
bool fill_from_template(EnumerateOptions& o, const core::Plan& t) {
  const std::string gpn_from = o.gpus_per_node == 0 ? "cluster.gpus_per_node of --plan " + o.plan : "--gpus-per-node";
  if (o.gpus_per_node == 0) o.gpus_per_node = t.cluster.gpus_per_node;
  if (o.nvlink_domain == 0) o.nvlink_domain = t.cluster.nvlink_domain;
  if (o.world == 0) {
    const auto world = t.world();
    if (!world || *world < 1 || *world > core::kMaxWorld) {
      print_error("--plan " + o.plan + ": cluster.nodes x cluster.gpus_per_node is not a world between 1 and " +
                  std::to_string(core::kMaxWorld) + "; give --world");
      return false;
    }
    o.world = *world;
  }
  if (o.world > o.gpus_per_node && o.world % o.gpus_per_node != 0) {
    print_error("--world " + std::to_string(o.world) + " is not a multiple of " + std::to_string(o.gpus_per_node) +
                " GPUs per node (" + gpn_from +
                "): nodes must be whole; give a --world that is, or --gpus-per-node");
    return false;
  }
  if (!t.training) return true;
  if (o.global_batch == 0 && t.training->global_batch) o.global_batch = *t.training->global_batch;
  if (o.seq_len == 0 && t.training->seq_len) o.seq_len = *t.training->seq_len;
  if (o.micro_batch == 0 && states_training(t, "micro_batch")) o.micro_batch = t.training->micro_batch;
  return true;
}

int run_enumerate(EnumerateOptions o) {
  std::optional<core::Plan> base;
  const core::CheckRegistry checks = o.plan.empty() ? core::CheckRegistry{} : verify_registry();
  if (!o.plan.empty()) {
    base = load_template(o.plan, checks, o);
    if (!base || !fill_from_template(o, *base)) return kExitCannotRun;
    if (o.model.empty() && !base->model) {
      print_error("--plan " + o.plan + " has no \"model\": give --model (a preset, a model JSON or a Hugging Face config.json)");
      return kExitCannotRun;
    }
  } else if (o.world == 0 || o.gpus_per_node == 0 || o.model.empty()) {
    print_error("--world, --gpus-per-node and --model are required without --plan (see planck enumerate --help)");
    return kExitCannotRun;
  }
  if (o.seq_len == 0) o.seq_len = 8192;
  const bool search_micro_batch = o.micro_batch == 0;
  if (o.micro_batch == 0) o.micro_batch = 1;
  std::optional<core::Plan> model_plan, gpu_plan;
  if (!o.model.empty() && !(model_plan = load_wrapped("--model", o.model, true))) return kExitCannotRun;
  if ((!base || !o.gpu.empty()) && !(gpu_plan = load_wrapped("--gpu", o.gpu.empty() ? "h100-sxm" : o.gpu, false))) {
    return kExitCannotRun;
  }
  std::optional<sim::Topology> topology;
  sim::SimOptions opts;
  if (auto st = sim::configure_sim_options(opts, topology, o.topology, o.nvls, o.no_tree); !st) {
    print_error(st.message());
    return kExitCannotRun;
  }
  sim::EnumerateRequest req;
  req.world = o.world;
  req.gpus_per_node = o.gpus_per_node;
  req.nvlink_domain = o.nvlink_domain;
  req.model = model_plan ? *model_plan->model : *base->model;
  req.gpu = gpu_plan ? gpu_plan->cluster.gpu : base->cluster.gpu;
  if (base) {
    req.checks = &checks;
    if (base->training) req.least_checkpointing = base->training->activation_checkpointing;
    if (states_training(*base, "grad_sync")) req.grad_sync = base->training->grad_sync;
    req.base = std::move(base);
  }
  if (o.global_batch > 0) req.global_batch = o.global_batch;
  req.seq_len = o.seq_len;
  req.micro_batch = o.micro_batch;
  req.search_micro_batch = search_micro_batch;
  req.allow_cross_node_tp = o.allow_cross_node_tp;
  req.rank_by_throughput = o.rank_by == "throughput";
  req.allow_tight = o.allow_tight;
  req.threads = o.threads;
  if (!o.fp8.empty()) req.fp8 = core::parse_fp8_recipe(o.fp8);
  req.framework = o.framework == "megatron"     ? sim::Framework::kMegatron
                  : o.framework == "torchtitan" ? sim::Framework::kTorchtitan
                                                : sim::Framework::kAny;
  req.sim = opts;
  // Progress on stderr once the search has run for a second, then at most once a second.
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  bool printed = false;
  req.progress = [&](std::int64_t done, std::int64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (now - start < std::chrono::seconds(1) || (printed && now - last < std::chrono::seconds(1) && done < total)) return;
    if (done >= total && !printed) return;
    std::fprintf(stderr, "planck enumerate: %lld/%lld (tp, cp, pp) splits searched, %.1f s\n", static_cast<long long>(done),
                 static_cast<long long>(total), std::chrono::duration<double>(now - start).count());
    last = now;
    printed = true;
  };
  auto result = sim::enumerate(req);
  if (!result) {
    print_error(result.message());
    return kExitCannotRun;
  }
  std::int64_t top = o.top;
  if (top < 0 && o.format == "text") top = 20;
  std::string out = o.format == "json"  ? sim::enumerate_to_json(*result, top)
                    : o.format == "csv" ? sim::enumerate_to_csv(*result, top)
                                        : sim::enumerate_to_text(*result, req, top);
  if (!write_output(o.output, out)) return kExitCannotRun;
  return result->valid > result->rejected ? kExitOk : kExitFindings;
}

void setup_enumerate(CLI::App& app, Action& action) {
  auto o = std::make_shared<EnumerateOptions>();
  app.description(
      "Every factorization of the world into pp x dp_replicate x dp_shard x cp x tp (x ep for MoE models) that is "
      "valid for the model (heads, kv heads, layers, experts, sequence divisibility; TP inside a node unless "
      "--allow-cross-node-tp), with each data-parallel strategy (ddp; fsdp with and without resharding, zero1, "
      "zero2; hsdp) and the least activation checkpointing (none, selective, full) that fits in memory, full on "
      "the fewest layers that fit (every N-th layer, 'full 1/N'; megatron: the first N of each chunk, 'full "
      "N/ch'); each "
      "simulated like `planck simulate` and ranked by tokens per second, then memory, then fewer dims; '*' / "
      "\"pareto\" marks the time-vs-memory Pareto front; '!' / \"tight\" marks peak memory above 90% of capacity "
      "(ranked last unless --allow-tight). Sequence parallel is on wherever tp > 1 and the sequence splits; "
      "pipelines try 1f1b, interleaved_1f1b and interleaved_zb with 2, 3, 4, 6 or 8 virtual stages, ZB-H1, zbv "
      "and dualpipev, and keep the fastest (--framework keeps to what Megatron-Core or torchtitan runs). JSON is planck-enumerate/1 (docs/simulator.md).\n"
      "--plan TEMPLATE starts from a planck/1 plan: it supplies the cluster (world = nodes x gpus_per_node), gpu, "
      "model, training (global_batch, seq_len, dtypes, optimizer; micro_batch and grad_sync where it states them; its "
      "activation_checkpointing is the lightest tried), the parallelism settings that are not the layout "
      "(fsdp_dims, replicate_dims, async_tp, dp_bucket_params, ...) and the rank_program; a flag given on the "
      "command line overrides the template's value. Each candidate becomes the template with its own mesh and "
      "layout fields, and every `planck verify` rule runs on it: one with an error is marked 'x' / \"rejected\" "
      "(its rules listed) and ranked after every clean layout; warnings are listed, rules that could not run are "
      "said.\n"
      "Exit 1 when no layout is valid (with --plan: none passes every rule), 2 on bad usage or an unreadable "
      "--plan/--model/--gpu/--topology, else 0.");
  app.add_option("--plan", o->plan,
                 "a planck/1 plan to start from (see above and docs/simulator.md \"enumerate --plan\"); framework "
                 "configs: `planck import` them first");
  app.add_option("--world", o->world, "number of GPUs (required without --plan; default: the template's nodes x gpus_per_node)")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node (required without --plan; default: the template's)")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_option("--nvlink-domain", o->nvlink_domain,
                 "GPUs sharing one NVLink domain, a whole number of nodes (GB200 / GB300 NVL72: up to 72 in trays "
                 "of 4; default: the template's, else a node)")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_option("--model", o->model, "model preset (llama3-8b, llama3-70b, llama3-405b, gpt3-175b, mixtral-8x7b, "
                                      "deepseek-v3, ...), a JSON file holding a plan's \"model\" value, or a Hugging Face "
                                      "config.json (required without --plan; default: the template's)");
  app.add_option("--gpu", o->gpu,
                 "GPU preset (" + core::join(core::gpu_preset_names(), ", ") +
                     ") or a JSON file holding a plan's \"cluster.gpu\" value (default: the template's, else "
                     "h100-sxm)");
  app.add_option("--global-batch", o->global_batch,
                 "sequences per optimizer step (default: the template's training.global_batch, else one per GPU, world x "
                 "micro-batch, stated in the output); layouts whose micro_batch x dp degree does not divide it are "
                 "skipped")->check(whole_number(1, kMaxCount));
  app.add_option("--seq-len", o->seq_len, "tokens per sequence (default: the template's, else 8192)")
      ->check(whole_number(1, kMaxCount));
  app.add_option("--micro-batch", o->micro_batch,
                 "sequences per micro-batch for every layout (default: the template's training.micro_batch when it "
                 "states one; else layouts without a pipeline try 1, 2, 4, 8 and 16 where they divide the rank's "
                 "batch, and FSDP / HSDP both gradient syncs unless the template states its grad_sync, keeping the "
                 "fastest; pipelined layouts use 1)")
      ->check(whole_number(1, kMaxCount));
  app.add_flag("--allow-cross-node-tp", o->allow_cross_node_tp, "also try TP groups that span nodes");
  app.add_option("--rank-by", o->rank_by,
                 "throughput: tokens per second first (the default); time: step time first (the same ranking "
                 "when every layout runs the same global batch, as they do)")
      ->check(CLI::IsMember({"time", "throughput"}))
      ->default_str("throughput");
  app.add_flag("--allow-tight", o->allow_tight,
               "rank layouts whose peak memory is above memory-tight's 90% of capacity among the others (default: "
               "marked '!' and ranked after every layout that fits comfortably; the least checkpointing that fits "
               "comfortably is chosen first)");
  app.add_option("--framework", o->framework,
                 "any (the default): combine every option planck models; megatron: only what Megatron-Core runs "
                 "(ddp, zero1 = distributed optimizer, zero2 / fsdp = Megatron-FSDP, no dp_replicate x dp_shard; "
                 "1f1b and interleaved_1f1b; checkpointing none or full, block recompute); torchtitan: only what torchtitan runs "
                 "(ddp, FSDP2 with and without resharding, hsdp; every pipeline schedule; none, selective or full on every "
                 "layer). "
                 "any and megatron overlap TP communication wherever sequence parallel runs (--tp-comm-overlap, "
                 "'+atp'); torchtitan leaves async TP off (with --plan: the template's async_tp decides)")
      ->check(CLI::IsMember({"any", "megatron", "torchtitan"}))
      ->default_str("any");
  app.add_option("--fp8", o->fp8,
                 "train every layout's linear layers in FP8 with this scaling recipe: none, tensorwise (Transformer "
                 "Engine delayed / current scaling, torchao tensorwise), rowwise, blockwise, mxfp8 (default: the "
                 "template's training.fp8, else none; docs/simulator.md \"FP8\")")
      ->check(CLI::IsMember(core::fp8_recipe_names(), CLI::ignore_case));
  app.add_option("--top", o->top,
                 "print only the best K layouts (default: 20 for text, all for json/csv); with --plan a rejected "
                 "layout ranks after every clean one, so it shows only when fewer than K are clean")
      ->check(whole_number(0, core::kMaxWorld));
  app.add_option("--format", o->format, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}))->default_str("text");
  app.add_option("--topology", o->topology, "planck-topology/1 profile overriding the GPU's link figures");
  app.add_flag("--nvls", o->nvls, "allow NVLink SHARP all-reduce inside a node");
  app.add_flag("--no-tree", o->no_tree, "ring only: never pick NCCL's tree all-reduce");
  app.add_option("--threads", o->threads,
                 "search this many (tp, cp, pp) splits side by side (default 0: one per core); the result is the same")
      ->check(CLI::Range(0, 4096))
      ->default_str("0");
  app.add_option("-o,--output", o->output, "write here ('-' = stdout), atomically")->default_str("-");
  action = [o] { return run_enumerate(*o); };
}

}  // namespace

PLANCK_COMMAND(enumerate, "every valid layout, simulated and ranked", setup_enumerate);

}  // namespace planck::cli
