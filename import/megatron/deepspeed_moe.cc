// DeepSpeed-MoE in a Megatron-DeepSpeed launch (microsoft/Megatron-DeepSpeed @f4157be):
// --num-experts is a list (one count, or one per MoE layer), experts every --expert-interval
// layers (megatron/model/transformer.py:1650-1660 get_num_experts_per_layer: layer n, 1-based, is
// MoE when n % interval == 0; default 2, arguments.py:614), deepspeed.moe.layer.MoE with
// ep_size=--moe-expert-parallel-size, k=--topk (default 1), capacity_factor=
// --moe-train-capacity-factor (default 1.0), drop_tokens unless --disable-moe-token-dropping,
// use_residual for --mlp-type residual (transformer.py:1066-1083). DeepSpeed forms the expert-
// parallel groups from consecutive data-parallel ranks (deepspeed/utils/groups.py
// _create_expert_and_data_parallel), which is the mesh ep dim right after dp.

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/plan/presets.h"
#include "import/megatron/deepspeed_fork.h"

namespace planck::import {

void locate_flags(const MegatronFlags& f, PlanBuilder& b, const std::vector<std::string>& dims);

namespace {

core::Status set_moe_model(PlanBuilder& b, std::int64_t experts, std::int64_t topk, std::int64_t interval,
                           bool residual) {
  nlohmann::ordered_json& model = b.plan()["model"];
  if (model.is_string()) {
    auto m = core::model_preset(model.get<std::string>());
    if (!m) return core::Status::error("model preset " + model.get<std::string>() + " not found");
    m->experts = experts;
    m->experts_per_token = topk;
    m->moe_ffn_hidden = m->ffn_hidden;
    m->moe_layer_freq = interval;
    m->shared_experts = residual ? 1 : 0;
    b.set_model(*m, "Megatron-DeepSpeed flags");
    return core::Status::ok();
  }
  model["experts"] = experts;
  model["experts_per_token"] = topk;
  model["moe_ffn_hidden"] = model.value("ffn_hidden", std::int64_t{0});
  if (residual) model["shared_experts"] = 1;
  if (interval > 1) model["moe_layer_freq"] = interval;
  return core::Status::ok();
}

// The ep dim after dp: mesh [pp, dp, cp, tp] -> [pp, dp / ep, ep, cp, tp].
core::Status split_ep(const MegatronFlags& f, PlanBuilder& b, std::int64_t ep) {
  std::vector<std::string> dims;
  std::vector<std::int64_t> shape;
  for (const auto& x : b.plan()["mesh"]["dims"]) dims.push_back(x.get<std::string>());
  for (const auto& x : b.plan()["mesh"]["shape"]) shape.push_back(x.get<std::int64_t>());
  std::vector<std::string> nd, data;
  std::vector<std::int64_t> ns;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != "dp") {
      nd.push_back(dims[i]);
      ns.push_back(shape[i]);
      continue;
    }
    if (shape[i] > 0 && shape[i] % ep != 0) {
      return b.error(f.line("moe-expert-parallel-size"),
                     "--moe-expert-parallel-size " + str(ep) + " does not divide the data-parallel size " +
                         str(shape[i]) + ": DeepSpeed forms expert-parallel groups inside it (groups.py asserts)");
    }
    nd.insert(nd.end(), {"dp", "ep"});
    ns.insert(ns.end(), {shape[i] > 0 ? shape[i] / ep : -1, ep});
  }
  b.set_mesh(nd, ns);
  locate_flags(f, b, nd);
  for (const std::string& dim : nd)
    if (dim == "dp" || dim == "ep") data.push_back(dim);
  b.set_data_rank_program(data,
                          "Megatron-DeepSpeed's: the dp coordinate of the tp-dp-pp grid "
                          "(megatron/core/parallel_state.py get_data_parallel_rank); expert-parallel "
                          "groups are consecutive data-parallel ranks (deepspeed/utils/groups.py)");
  return core::Status::ok();
}

}  // namespace

core::Status read_deepspeed_moe(const DeepSpeedFork& fork, const MegatronFlags& f, PlanBuilder& b,
                                const MegatronDegrees& d) {
  auto it = fork.taken.find("num-experts");
  PLANCK_IMPORT_TRY(ep, f.positive("moe-expert-parallel-size", 1));
  if (it == fork.taken.end()) {
    if (ep > 1) b.warn("--moe-expert-parallel-size " + str(ep) + " without --num-experts: a dense model, ignored");
    return core::Status::ok();
  }
  const int line = it->second.line;
  std::vector<std::int64_t> counts;
  std::istringstream in(it->second.value);
  for (std::string w; in >> w;) {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(w, &used);
      if (used != w.size() || v < 1 || v > (std::int64_t{1} << 32)) throw std::invalid_argument(w);
      counts.push_back(v);
    } catch (const std::exception&) {
      return b.error(line,
                     "--num-experts takes integers between 1 and 2^32 (one, or one per MoE layer), got '" + w + "'");
    }
  }
  if (counts.empty()) return b.error(line, "--num-experts has no value");
  const std::int64_t experts = *std::max_element(counts.begin(), counts.end());
  if (experts <= 1) {
    b.note("--num-experts 1: a dense model (transformer.py:1065)");
    return core::Status::ok();
  }
  PLANCK_IMPORT_TRY(interval, f.positive("expert-interval", 2));
  PLANCK_IMPORT_TRY(topk, f.positive("topk", 1));
  const auto& model = b.plan()["model"];
  const std::int64_t layers = model.is_object()
                                  ? model.value("layers", std::int64_t{0})
                                  : (model.is_string() ? core::model_preset(model.get<std::string>())->layers : 0);
  if (counts.size() > 1 && layers > 0 && static_cast<std::int64_t>(counts.size()) != layers / interval) {
    return b.error(line, "--num-experts lists " + str(static_cast<std::int64_t>(counts.size())) + " counts for " +
                             str(layers / interval) + " MoE layers (" + str(layers) + " layers / --expert-interval " +
                             str(interval) +
                             "): the fork asserts one count or one per MoE layer (transformer.py:1651)");
  }
  for (std::int64_t c : counts) {
    if (c > 1 && c % ep != 0) {
      return b.error(line, "--num-experts " + str(c) + " is not divisible by --moe-expert-parallel-size " + str(ep) +
                               ": DeepSpeed asserts it (deepspeed/moe/layer.py:59, since DeepSpeed PR #2074 of "
                               "2022-07; before it the MoE layer used min(ep, experts))");
    }
  }
  if (*std::min_element(counts.begin(), counts.end()) != experts) {
    b.unmodelled(
        "--num-experts " + it->second.value, line,
        "a count per MoE layer (pyramid MoE); every MoE layer priced with the largest, " + str(experts) + " experts");
  }
  if (!model.is_null()) {
    const bool residual = f.string("mlp-type").value_or("standard") == "residual";
    if (auto st = set_moe_model(b, experts, topk, interval, residual); !st) return st;
    if (residual) b.note("--mlp-type residual: a dense MLP beside the experts (PR-MoE), priced as one shared expert");
  }
  b.note("DeepSpeed-MoE: " + str(experts) + " experts every " + str(interval) + " layers (--expert-interval), top-" +
         str(topk) + ", expert-parallel size " + str(ep) +
         ", tokens sent by all-to-all (deepspeed/moe/sharded_moe.py)");
  auto& par = b.plan()["parallelism"];
  par["moe_dispatcher"] = "alltoall";
  if (f.has("disable-moe-token-dropping")) {
    par.erase("expert_capacity_factor");
    b.note("--disable-moe-token-dropping: every token reaches its experts (no capacity)");
  } else {
    const double cf = std::stod(f.string("moe-train-capacity-factor").value_or("1.0"));
    par["expert_capacity_factor"] = cf;
    b.note("capacity factor " + f.string("moe-train-capacity-factor").value_or("1.0") +
           " (--moe-train-capacity-factor; the fork's default 1.0), tokens beyond it dropped; --moe-min-capacity " +
           f.string("moe-min-capacity").value_or("4") + " only matters for a handful of tokens");
  }
  if (ep > 1) {
    if (auto st = split_ep(f, b, ep); !st) return st;
    if (d.tp > 1) {
      par["etp"] = d.tp;
      if (!f.has("enable-expert-tensor-parallelism")) {
        b.unmodelled("--moe-expert-parallel-size " + str(ep) + " with tp " + str(d.tp),
                     f.line("moe-expert-parallel-size"),
                     "without --enable-expert-tensor-parallelism each tp rank holds its experts whole; priced as split "
                     "over tp (etp = tp), which under-counts expert memory by tp");
      }
    }
  }
  return core::Status::ok();
}

}  // namespace planck::import
