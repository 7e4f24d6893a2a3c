// planck enumerate --world N --gpus-per-node G --model M [--gpu G] [--global-batch B] [--seq-len S]
//   [--micro-batch M] [--allow-cross-node-tp] [--top K] [--format text|json|csv] [--topology FILE]

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/launcher_flags.h"
#include "cli/plan_input.h"
#include "core/base/input_file.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"
#include "sim/enumerate.h"
#include "sim/topology.h"

namespace planck::cli {
namespace {

constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;  // batches and lengths, as a plan allows them

struct EnumerateOptions {
  std::int64_t world = 0;
  std::int64_t gpus_per_node = 8;
  std::string model;
  std::string gpu = "h100-sxm";
  std::int64_t global_batch = 0;  // 0 = world x micro_batch sequences
  std::int64_t seq_len = 8192;
  std::int64_t micro_batch = 1;
  bool micro_batch_given = false;
  bool allow_cross_node_tp = false;
  std::int64_t top = -1;
  std::string rank_by = "throughput";
  bool allow_tight = false;
  std::string framework = "any";
  std::string format = "text";
  std::string topology;
  bool nvls = false;
  bool no_tree = false;
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

int run_enumerate(const EnumerateOptions& o) {
  auto model_plan = load_wrapped("--model", o.model, true);
  if (!model_plan) return kExitCannotRun;
  auto gpu_plan = load_wrapped("--gpu", o.gpu, false);
  if (!gpu_plan) return kExitCannotRun;
  std::optional<sim::Topology> topology;
  sim::SimOptions opts;
  if (auto st = sim::configure_sim_options(opts, topology, o.topology, o.nvls, o.no_tree); !st) {
    print_error(st.message());
    return kExitCannotRun;
  }
  sim::EnumerateRequest req;
  req.world = o.world;
  req.gpus_per_node = o.gpus_per_node;
  req.model = *model_plan->model;
  req.gpu = gpu_plan->cluster.gpu;
  if (o.global_batch > 0) req.global_batch = o.global_batch;
  req.seq_len = o.seq_len;
  req.micro_batch = o.micro_batch;
  req.search_micro_batch = !o.micro_batch_given;
  req.allow_cross_node_tp = o.allow_cross_node_tp;
  req.rank_by_throughput = o.rank_by == "throughput";
  req.allow_tight = o.allow_tight;
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
    std::fprintf(stderr, "planck enumerate: %lld/%lld tp degrees searched, %.1f s\n", static_cast<long long>(done),
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
  return result->valid > 0 ? kExitOk : kExitFindings;
}

void setup_enumerate(CLI::App& app, Action& action) {
  auto o = std::make_shared<EnumerateOptions>();
  app.description(
      "Every factorization of the world into pp x dp_replicate x dp_shard x cp x tp (x ep for MoE models) that is "
      "valid for the model (heads, kv heads, layers, experts, sequence divisibility; TP inside a node unless "
      "--allow-cross-node-tp), with each data-parallel strategy (ddp; fsdp with and without resharding, zero1, "
      "zero2; hsdp) and the least activation checkpointing (none, selective, full) that fits in memory; each "
      "simulated like `planck simulate` and ranked by tokens per second, then memory, then fewer dims; '*' / "
      "\"pareto\" marks the time-vs-memory Pareto front; '!' / \"tight\" marks peak memory above 90% of capacity "
      "(ranked last unless --allow-tight). Sequence parallel is on wherever tp > 1 and the sequence splits; "
      "pipelines try 1f1b, interleaved_1f1b and interleaved_zb with 2, 3, 4, 6 or 8 virtual stages, ZB-H1, zbv "
      "and dualpipev, and keep the fastest (--framework keeps to what Megatron-Core or torchtitan runs). JSON is planck-enumerate/1 (docs/simulator.md); docs/simulator.md.\n"
      "Exit 1 when no layout is valid, 2 on bad usage or an unreadable --model/--gpu/--topology, else 0.");
  app.add_option("--world", o->world, "number of GPUs")->required()->check(whole_number(1, core::kMaxWorld));
  app.add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node")->required()->check(whole_number(1, core::kMaxWorld));
  app.add_option("--model", o->model, "model preset (llama3-8b, llama3-70b, llama3-405b, gpt3-175b, mixtral-8x7b, "
                                      "deepseek-v3, ...), a JSON file holding a plan's \"model\" value, or a Hugging Face config.json")->required();
  app.add_option("--gpu", o->gpu, "GPU preset (h100-sxm, h200, h800, a100-80g, b200, cpu) or a JSON file holding a plan's "
                                  "\"cluster.gpu\" value")->default_str("h100-sxm");
  app.add_option("--global-batch", o->global_batch,
                 "sequences per optimizer step (default: one per GPU, world x micro-batch, stated in the output); "
                 "layouts whose micro_batch x dp degree does not divide it are skipped")->check(whole_number(1, kMaxCount));
  app.add_option("--seq-len", o->seq_len, "tokens per sequence")->default_str("8192")->check(whole_number(1, kMaxCount));
  CLI::Option* micro_batch = app.add_option("--micro-batch", o->micro_batch,
                 "sequences per micro-batch for every layout (default: layouts without a pipeline try 1, 2, 4, 8 and "
                 "16 where they divide the rank's batch, and FSDP / HSDP both gradient syncs, keeping the fastest; "
                 "pipelined layouts use 1)")
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
                 "1f1b and interleaved_1f1b; checkpointing none or full); torchtitan: only what torchtitan runs "
                 "(ddp, FSDP2 with and without resharding, hsdp; every pipeline schedule; none, selective or full). "
                 "any and megatron overlap TP communication wherever sequence parallel runs (--tp-comm-overlap, "
                 "'+atp'); torchtitan leaves async TP off")
      ->check(CLI::IsMember({"any", "megatron", "torchtitan"}))
      ->default_str("any");
  app.add_option("--top", o->top, "print only the best K layouts (default: 20 for text, all for json/csv)")
      ->check(whole_number(0, core::kMaxWorld));
  app.add_option("--format", o->format, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}))->default_str("text");
  app.add_option("--topology", o->topology, "planck-topology/1 profile overriding the GPU's link figures");
  app.add_flag("--nvls", o->nvls, "allow NVLink SHARP all-reduce inside a node");
  app.add_flag("--no-tree", o->no_tree, "ring only: never pick NCCL's tree all-reduce");
  app.add_option("-o,--output", o->output, "write here ('-' = stdout), atomically")->default_str("-");
  action = [o, micro_batch] {
    o->micro_batch_given = micro_batch->count() > 0;
    return run_enumerate(*o);
  };
}

}  // namespace

PLANCK_COMMAND(enumerate, "every valid layout, simulated and ranked", setup_enumerate);

}  // namespace planck::cli
