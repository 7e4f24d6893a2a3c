// Rendering an enumeration: "planck-enumerate/1" JSON (docs/simulator.md), CSV with the same rows, and
// a text table.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/enumerate.h"
#include "sim/moe_band.h"
#include "core/base/format.h"
#include "core/plan/presets.h"
#include "sim/format.h"

namespace planck::sim {
namespace {

std::size_t shown(const EnumerateResult& r, std::int64_t top) {
  const std::size_t n = r.layouts.size();
  return top < 0 ? n : std::min(n, static_cast<std::size_t>(top));
}

std::string mesh_string(const Layout& l) {
  std::string s = "mesh[";
  for (std::size_t i = 0; i < l.dims.size(); ++i) {
    s += (i ? "," : "") + l.dims[i] + "=" + std::to_string(l.shape[i]);
  }
  return s + "]";
}

// "full 1/3": every third layer recomputed (torchtitan layer SAC); "full 2/ch": the first two
// layers of each pipeline chunk (Megatron's block method).
std::string checkpointing_label(const Layout& l) {
  std::string s = core::to_string(l.checkpointing);
  if (l.recompute_every > 0) s += " 1/" + std::to_string(l.recompute_every);
  if (l.recompute_num_layers > 0) s += " " + std::to_string(l.recompute_num_layers) + "/ch";
  return s;
}

std::string joined(const std::vector<std::string>& rules, const char* sep) {
  std::string s;
  for (const auto& r : rules) s += (s.empty() ? "" : sep) + r;
  return s;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string enumerate_to_json(const EnumerateResult& r, std::int64_t top) {
  nlohmann::json j;
  j["format"] = "planck-enumerate/1";
  j["world"] = r.world;
  j["considered"] = r.considered;
  j["valid"] = r.valid;
  j["global_batch"] = r.global_batch;
  j["global_batch_default"] = r.global_batch_default;
  j["framework"] = to_string(r.framework);
  j["fp8"] = core::to_string(r.fp8);
  if (r.error_band > 0) j["error_band"] = r.error_band;
  if (r.checked) {
    j["plan"] = r.template_path;
    j["rejected_layouts"] = r.rejected;
    j["unchecked"] = r.unchecked;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < shown(r, top); ++i) {
    const Layout& l = r.layouts[i];
    nlohmann::json row = {{"mesh", {{"dims", l.dims}, {"shape", l.shape}}},
                    {"parallelism",
                     {{"data_parallel", core::to_string(l.data_parallel)},
                      {"reshard_after_forward", l.reshard_after_forward},
                      {"sequence_parallel", l.sequence_parallel},
                      {"async_tp", l.async_tp},
                      {"pipeline_schedule", core::to_string(l.pipeline_schedule)},
                      {"virtual_stages", l.virtual_stages}}},
                    {"training",
                     {{"activation_checkpointing", core::to_string(l.checkpointing)},
                      {"micro_batch", l.micro_batch},
                      {"grad_accumulation", l.micro_batches},
                      {"grad_sync", core::to_string(l.grad_sync)}}},
                    {"step_time_s", l.step_time_s},
                    {"step_time_low_s", l.step_time_low_s},
                    {"step_time_high_s", l.step_time_high_s},
                    {"compute_time_s", l.compute_time_s},
                    {"exposed_comm_time_s", l.exposed_comm_time_s},
                    {"memory_peak", l.memory_peak},
                    {"bytes_sent_per_rank", l.bytes_sent_per_rank},
                    {"flops_per_rank", l.flops_per_rank},
                    {"tflops_per_gpu", l.tflops_per_gpu},
                    {"mfu", l.mfu},
                    {"bubble_fraction", l.bubble_fraction},
                    {"compute",
                     {{"gemm_s", l.gemm_s},
                      {"attention_s", l.attention_s},
                      {"memory_bound_s", l.memory_bound_s},
                      {"recompute_s", l.recompute_s}}},
                    {"tokens_per_step", l.tokens_per_step},
                    {"tokens_per_s", l.tokens_per_s},
                    {"tight", l.tight},
                    {"pareto", l.pareto}};
    if (r.fp8 != core::Fp8Recipe::kNone) row["training"]["fp8"] = core::to_string(r.fp8);
    if (l.recompute_every > 0) row["training"]["recompute_every"] = l.recompute_every;
    if (l.recompute_num_layers > 0) row["training"]["recompute_num_layers"] = l.recompute_num_layers;
    if (l.etp > 0) row["parallelism"]["etp"] = l.etp;
    if (l.ep_overlap) row["parallelism"]["ep_overlap"] = true;
    if (r.checked) {
      row["rejected"] = l.rejected;
      row["warnings"] = l.warnings;
      row["unchecked"] = l.unchecked;
    }
    rows.push_back(std::move(row));
  }
  j["layouts"] = rows;
  return j.dump(2) + "\n";
}

std::string enumerate_to_csv(const EnumerateResult& r, std::int64_t top) {
  std::ostringstream o;
  // One column per dim any shown layout has, in mesh order: an MoE enumeration mixes layouts
  // with an ep dim and without (ep = 1), and a layout without a dim has size 1 there.
  std::vector<std::string> dims;
  for (std::size_t i = 0; i < shown(r, top); ++i) {
    const auto& ld = r.layouts[i].dims;
    for (std::size_t j = 0; j < ld.size(); ++j) {
      if (std::find(dims.begin(), dims.end(), ld[j]) != dims.end()) continue;
      // Insert after the dim that precedes it in this layout (dims keep one relative order).
      auto at = dims.begin();
      if (j > 0) at = std::find(dims.begin(), dims.end(), ld[j - 1]) + 1;
      dims.insert(at, ld[j]);
    }
  }
  o << "rank";
  for (const auto& d : dims) o << "," << d;
  o << ",data_parallel,reshard_after_forward,sequence_parallel,activation_checkpointing,grad_accumulation,"
       "step_time_s,compute_time_s,exposed_comm_time_s,memory_peak,bytes_sent_per_rank,flops_per_rank,tflops_per_gpu,"
       "mfu,"
       "bubble_fraction,gemm_s,attention_s,memory_bound_s,recompute_s,tokens_per_step,tokens_per_s,pareto,"
       "pipeline_schedule,virtual_stages,tight,ep_overlap,async_tp,micro_batch,grad_sync,recompute_every,"
       "recompute_num_layers,step_time_low_s,step_time_high_s"
    << (r.checked ? ",rejected,warnings,unchecked" : "") << "\n";
  for (std::size_t i = 0; i < shown(r, top); ++i) {
    const Layout& l = r.layouts[i];
    o << i + 1;
    for (const auto& d : dims) {
      const auto it = std::find(l.dims.begin(), l.dims.end(), d);
      o << "," << (it == l.dims.end() ? 1 : l.shape[static_cast<std::size_t>(it - l.dims.begin())]);
    }
    o << "," << core::to_string(l.data_parallel) << "," << (l.reshard_after_forward ? "true" : "false") << ","
      << (l.sequence_parallel ? "true" : "false") << "," << core::to_string(l.checkpointing) << "," << l.micro_batches
      << "," << number(l.step_time_s) << "," << number(l.compute_time_s) << "," << number(l.exposed_comm_time_s) << ","
      << l.memory_peak << "," << l.bytes_sent_per_rank << "," << number(l.flops_per_rank) << ","
      << number(l.tflops_per_gpu) << "," << number(l.mfu) << "," << number(l.bubble_fraction) << "," << number(l.gemm_s)
      << "," << number(l.attention_s) << "," << number(l.memory_bound_s) << "," << number(l.recompute_s) << ","
      << number(l.tokens_per_step) << "," << number(l.tokens_per_s) << "," << (l.pareto ? "true" : "false") << ","
      << core::to_string(l.pipeline_schedule) << "," << l.virtual_stages << "," << (l.tight ? "true" : "false") << ","
      << (l.ep_overlap ? "true" : "false") << "," << (l.async_tp ? "true" : "false") << "," << l.micro_batch << ","
      << core::to_string(l.grad_sync) << "," << l.recompute_every << "," << l.recompute_num_layers << ","
      << number(l.step_time_low_s) << "," << number(l.step_time_high_s);
    if (r.checked) o << "," << joined(l.rejected, ";") << "," << joined(l.warnings, ";") << "," << joined(l.unchecked, ";");
    o << "\n";
  }
  return o.str();
}

std::string enumerate_to_text(const EnumerateResult& r, const EnumerateRequest& req, std::int64_t top) {
  std::ostringstream o;
  o << req.model.name << " on " << r.world << " x " << req.gpu.name << " (" << req.gpus_per_node << " per node"
    << (req.nvlink_domain > 0 ? ", NVLink domain " + std::to_string(req.nvlink_domain) : std::string()) << "), seq "
    << req.seq_len << ", micro-batch "
    << (req.search_micro_batch ? std::string("1-16 without a pipeline, else 1") : std::to_string(req.micro_batch)) << ": " << r.considered
    << " factorizations considered, " << r.valid << " valid layouts";
  if (shown(r, top) < r.layouts.size()) o << ", best " << shown(r, top) << " shown";
  o << (req.rank_by_throughput ? ", ranked by tokens/s" : ", ranked by step time");
  if (r.framework != Framework::kAny) o << ", only what " << to_string(r.framework) << " runs";
  if (r.fp8 != core::Fp8Recipe::kNone) o << ", FP8 linears (" << core::to_string(r.fp8) << ")";
  o << "\n";
  if (r.error_band > 0) o << moe_error_band_note() << "\n";
  o << "global batch " << r.global_batch << " sequences"
    << (r.global_batch_default ? " (default: one per GPU; set --global-batch)" : "") << "; '!' = above memory-tight's "
    << "90% of capacity" << (req.allow_tight ? "" : ", ranked after the others (--allow-tight ranks them together)")
    << "\n";
  if (r.checked) {
    o << "every layout is the plan " << r.template_path << " with its mesh and layout fields, checked by every rule of "
      << "`planck verify`: " << r.rejected << " rejected, marked 'x' (rules in the last column) and ranked after "
      << "every clean layout\n";
    if (!r.unchecked.empty()) {
      o << "rules that could not run (an input the template lacks, see `planck verify " << r.template_path
        << "`): " << joined(r.unchecked, ", ") << "\n";
    }
  }
  if (!r.layouts.empty() && r.layouts.front().step_time_s > 0) {
    // Every layout shares the plan's stack, so one band (sim/uncertainty.h); JSON / CSV give each
    // layout's step_time_low_s / step_time_high_s.
    const Layout& f = r.layouts.front();
    o << "step times likely x" << number(std::round(f.step_time_low_s / f.step_time_s * 100) / 100) << "-x"
      << number(std::round(f.step_time_high_s / f.step_time_s * 100) / 100)
      << " of the figure shown (published / predicted on held-out published runs, docs/simulator.md)\n";
    if (core::amd_instinct(req.gpu)) {
      o << "no published run on " << req.gpu.name
        << " is fitted: its curve is H100's scaled by a measured GEMM efficiency, and the band above is NVIDIA "
           "runs' (docs/simulator.md \"GPU presets and their curves\")\n";
    }
  }
  o << "\n";
  o << pad("#", 5) << pad("mesh", 52) << pad("strategy", 26) << pad("pipeline", 20) << pad("ckpt", 10) << pad("mb x k", 9)
    << pad("step", 11) << pad("exposed", 11)
    << pad("memory", 11) << pad("sent/rank", 11) << pad("tokens/s", 11) << pad("TFLOP/s", 9) << pad("MFU", 7)
    << pad("bubble", 8) << (r.checked ? pad("pareto", 8) + "verify" : "pareto") << "\n";
  for (std::size_t i = 0; i < shown(r, top); ++i) {
    const Layout& l = r.layouts[i];
    std::string strat = core::to_string(l.data_parallel);
    if ((l.data_parallel == core::DataParallel::kFsdp || l.data_parallel == core::DataParallel::kHsdp) &&
        !l.reshard_after_forward) {
      strat += "-noreshard";
    }
    if (l.sequence_parallel) strat += l.async_tp ? "+sp+atp" : "+sp";
    if (l.etp > 0) strat += "+etp" + std::to_string(l.etp);
    if (l.grad_sync == core::GradSync::kEveryMicrobatch) strat += "+sync/mb";
    std::string pipe = "-";
    if (l.shape.front() > 1) {
      pipe = core::to_string(l.pipeline_schedule);
      if (l.virtual_stages > 1) pipe += " v" + std::to_string(l.virtual_stages);
    }
    if (l.ep_overlap) pipe += (pipe == "-" ? "" : " ") + std::string("+a2a");
    o << pad(std::to_string(i + 1) + (l.tight ? "!" : "") + (l.rejected.empty() ? "" : "x"), 5)
      << pad(mesh_string(l), 52) << pad(strat, 26) << pad(pipe, 20) << pad(checkpointing_label(l), 10)
      << pad(std::to_string(l.micro_batch) + " x " + std::to_string(l.micro_batches), 9)
      << pad(human_seconds(l.step_time_s), 11) << pad(human_seconds(l.exposed_comm_time_s), 11)
      << pad(core::format_bytes(l.memory_peak), 11) << pad(core::format_bytes(l.bytes_sent_per_rank), 11)
      << pad(number(l.tokens_per_s), 11) << pad(number(std::round(l.tflops_per_gpu * 10) / 10), 9)
      << pad(number(std::round(l.mfu * 1000) / 1000), 7) << pad(number(std::round(l.bubble_fraction * 1000) / 1000), 8);
    if (!r.checked) {
      o << (l.pareto ? "*" : "") << "\n";
      continue;
    }
    o << pad(l.pareto ? "*" : "", 8)
      << (!l.rejected.empty()   ? "rejected: " + joined(l.rejected, ", ")
          : !l.warnings.empty() ? "warnings: " + joined(l.warnings, ", ")
                                : std::string("clean"))
      << "\n";
  }
  if (r.layouts.empty()) o << "no layout fits: more GPUs, a larger --gpu, or a shorter --seq-len\n";
  if (r.checked && r.valid > 0 && r.rejected == r.valid) {
    o << "no layout passes every rule of " << r.template_path << ": fix what the last column names (`planck verify "
      << r.template_path << "` shows it on the template's own layout)\n";
  }
  return o.str();
}

}  // namespace planck::sim
