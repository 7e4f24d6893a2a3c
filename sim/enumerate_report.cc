// Rendering an enumeration: "planck-enumerate/1" JSON (docs/simulator.md), CSV with the same rows, and
// a text table.

#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/enumerate.h"
#include "core/base/format.h"
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
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < shown(r, top); ++i) {
    const Layout& l = r.layouts[i];
    rows.push_back({{"mesh", {{"dims", l.dims}, {"shape", l.shape}}},
                    {"parallelism",
                     {{"data_parallel", core::to_string(l.data_parallel)},
                      {"reshard_after_forward", l.reshard_after_forward},
                      {"sequence_parallel", l.sequence_parallel},
                      {"pipeline_schedule", "1f1b"}}},
                    {"training",
                     {{"activation_checkpointing", core::to_string(l.checkpointing)},
                      {"grad_accumulation", l.micro_batches}}},
                    {"step_time_s", l.step_time_s},
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
                    {"pareto", l.pareto}});
  }
  j["layouts"] = rows;
  return j.dump(2) + "\n";
}

std::string enumerate_to_csv(const EnumerateResult& r, std::int64_t top) {
  std::ostringstream o;
  o << "rank";
  if (!r.layouts.empty()) {
    for (const auto& d : r.layouts.front().dims) o << "," << d;
  }
  o << ",data_parallel,reshard_after_forward,sequence_parallel,activation_checkpointing,grad_accumulation,"
       "step_time_s,compute_time_s,exposed_comm_time_s,memory_peak,bytes_sent_per_rank,flops_per_rank,tflops_per_gpu,mfu,"
       "bubble_fraction,gemm_s,attention_s,memory_bound_s,recompute_s,tokens_per_step,tokens_per_s,pareto\n";
  for (std::size_t i = 0; i < shown(r, top); ++i) {
    const Layout& l = r.layouts[i];
    o << i + 1;
    for (auto s : l.shape) o << "," << s;
    o << "," << core::to_string(l.data_parallel) << "," << (l.reshard_after_forward ? "true" : "false") << ","
      << (l.sequence_parallel ? "true" : "false") << "," << core::to_string(l.checkpointing) << "," << l.micro_batches
      << "," << number(l.step_time_s) << "," << number(l.compute_time_s) << "," << number(l.exposed_comm_time_s) << ","
      << l.memory_peak << "," << l.bytes_sent_per_rank << "," << number(l.flops_per_rank) << ","
      << number(l.tflops_per_gpu) << "," << number(l.mfu) << "," << number(l.bubble_fraction) << ","
      << number(l.gemm_s) << "," << number(l.attention_s) << "," << number(l.memory_bound_s) << ","
      << number(l.recompute_s) << "," << number(l.tokens_per_step) << ","
      << number(l.tokens_per_s) << "," << (l.pareto ? "true" : "false") << "\n";
  }
  return o.str();
}

std::string enumerate_to_text(const EnumerateResult& r, const EnumerateRequest& req, std::int64_t top) {
  std::ostringstream o;
  o << req.model.name << " on " << r.world << " x " << req.gpu.name << " (" << req.gpus_per_node
    << " per node), seq " << req.seq_len << ", micro-batch " << req.micro_batch << ": " << r.considered
    << " factorizations considered, " << r.valid << " valid layouts";
  if (shown(r, top) < r.layouts.size()) o << ", best " << shown(r, top) << " shown";
  o << (req.rank_by_throughput ? ", ranked by tokens/s" : ", ranked by step time") << "\n";
  if (!req.global_batch && !req.rank_by_throughput) {
    o << "(no --global-batch: each layout runs one micro-batch per data-parallel rank, so step times compare "
         "different amounts of work; see tokens/s or --rank-by throughput)\n";
  }
  o << "\n";
  o << pad("#", 5) << pad("mesh", 52) << pad("strategy", 18) << pad("ckpt", 10) << pad("step", 11) << pad("exposed", 11)
    << pad("memory", 11) << pad("sent/rank", 11) << pad("tokens/s", 11) << pad("TFLOP/s", 9) << pad("MFU", 7)
    << pad("bubble", 8) << "pareto\n";
  for (std::size_t i = 0; i < shown(r, top); ++i) {
    const Layout& l = r.layouts[i];
    std::string strat = core::to_string(l.data_parallel);
    if ((l.data_parallel == core::DataParallel::kFsdp || l.data_parallel == core::DataParallel::kHsdp) &&
        !l.reshard_after_forward) {
      strat += "-noreshard";
    }
    if (l.sequence_parallel) strat += "+sp";
    o << pad(std::to_string(i + 1), 5) << pad(mesh_string(l), 52) << pad(strat, 18)
      << pad(core::to_string(l.checkpointing), 10) << pad(human_seconds(l.step_time_s), 11)
      << pad(human_seconds(l.exposed_comm_time_s), 11) << pad(core::format_bytes(l.memory_peak), 11)
      << pad(core::format_bytes(l.bytes_sent_per_rank), 11) << pad(number(l.tokens_per_s), 11)
      << pad(number(std::round(l.tflops_per_gpu * 10) / 10), 9) << pad(number(std::round(l.mfu * 1000) / 1000), 7)
      << pad(number(std::round(l.bubble_fraction * 1000) / 1000), 8) << (l.pareto ? "*" : "")
      << "\n";
  }
  if (r.layouts.empty()) o << "no layout fits: more GPUs, a larger --gpu, or a shorter --seq-len\n";
  return o.str();
}

}  // namespace planck::sim
