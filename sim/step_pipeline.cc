#include "sim/step_pipeline.h"

#include <algorithm>

namespace planck::sim {

std::vector<std::int64_t> stage_layers(std::int64_t layers, std::int64_t stages) {
  stages = std::max<std::int64_t>(1, stages);
  layers = std::max<std::int64_t>(0, layers);
  std::vector<std::int64_t> out(static_cast<std::size_t>(stages), 0);
  if (stages == 1) {
    out[0] = layers;
    return out;
  }
  if (layers % stages == 0) {
    // Megatron's split (the only one without --decoder-first-pipeline-num-layers): L / stages each.
    std::fill(out.begin(), out.end(), layers / stages);
    return out;
  }
  const std::int64_t effective = layers + 2, per = effective / stages, extra = effective % stages;
  if (per < 1) {
    // More stages than units (verify's layers-indivisible rejects it): one layer each, in order.
    for (std::int64_t s = 0; s < std::min(stages, layers); ++s) out[static_cast<std::size_t>(s)] = 1;
    return out;
  }
  std::int64_t left = layers;
  for (std::int64_t s = 0; s < stages; ++s) {
    std::int64_t n = per + (s < extra ? 1 : 0) - (s == 0 || s == stages - 1 ? 1 : 0);
    n = std::min(std::max<std::int64_t>(0, n), left);
    out[static_cast<std::size_t>(s)] = n;
    left -= n;
  }
  out.back() += left;  // never happens with the split above; keeps every layer placed
  return out;
}

std::vector<std::int64_t> stage_split(const StageCosts& c) {
  const std::int64_t n = std::max<std::int64_t>(1, c.pp) * std::max<std::int64_t>(1, c.virtual_stages);
  if (static_cast<std::int64_t>(c.split.size()) == n) return c.split;
  return stage_layers(c.layers, n);
}

PipelineInput pipeline_input(const StageCosts& c) {
  PipelineInput in;
  in.schedule = c.schedule;
  in.pp = std::max<std::int64_t>(1, c.pp);
  in.virtual_stages = std::max<std::int64_t>(1, c.virtual_stages);
  in.micro_batches = std::max<std::int64_t>(1, c.micro_batches);
  in.p2p_s = in.pp > 1 ? c.p2p_s : 0;
  const std::int64_t n_stages = in.pp * in.virtual_stages;
  const std::vector<std::int64_t> per = stage_split(c);
  const std::int64_t loss = c.loss_stage >= 0 && c.loss_stage < n_stages ? c.loss_stage : n_stages - 1;
  const std::int64_t embedding = c.embedding_stage >= 0 && c.embedding_stage < n_stages ? c.embedding_stage : 0;
  const std::int64_t mtp = c.mtp_stage >= 0 && c.mtp_stage < n_stages ? c.mtp_stage : loss;
  const double v = static_cast<double>(in.virtual_stages);
  in.stages.reserve(per.size());
  for (std::int64_t s = 0; s < n_stages; ++s) {
    const double n = static_cast<double>(per[static_cast<std::size_t>(s)]);
    const bool first = s == embedding, last = s == loss, has_mtp = s == mtp;
    StageTimes t;
    t.forward_s =
        n * c.layer_f + (first ? c.first_f : 0) + (last ? c.last_f : 0) + (has_mtp ? c.mtp_f : 0) + c.rank_f / v;
    const double b =
        n * c.layer_b + (first ? c.first_b : 0) + (last ? c.last_b : 0) + (has_mtp ? c.mtp_b : 0) + c.rank_b / v;
    t.backward_weight_s = n * c.layer_w + (last ? c.last_w : 0) + (has_mtp ? c.mtp_w : 0);
    t.backward_input_s = std::max(0.0, b - t.backward_weight_s);
    t.activation_units = n + (has_mtp ? static_cast<double>(c.mtp_units) : 0);
    in.stages.push_back(t);
  }
  return in;
}

double busiest_rank_per_micro_batch(const PipelineInput& in) {
  std::vector<double> busy(static_cast<std::size_t>(in.pp), 0.0);
  for (std::size_t s = 0; s < in.stages.size(); ++s) {
    const StageTimes& t = in.stages[s];
    busy[static_cast<std::size_t>(stage_rank(in.schedule, in.pp, static_cast<std::int64_t>(s)))] +=
        t.forward_s + t.backward_input_s + t.backward_weight_s;
  }
  return *std::max_element(busy.begin(), busy.end());
}

double closed_form_makespan(const PipelineInput& in) {
  const double m = static_cast<double>(std::max<std::int64_t>(1, in.micro_batches));
  const double busiest = m * busiest_rank_per_micro_batch(in);
  if (in.pp <= 1 || in.stages.empty()) return busiest;
  double f = 0, b = 0, w = 0;
  for (const StageTimes& t : in.stages) {
    f += t.forward_s;
    b += t.backward_input_s;
    w += t.backward_weight_s;
  }
  const double n = static_cast<double>(in.stages.size());
  f /= n, b /= n, w /= n;
  double hop = f + b + w;
  switch (in.schedule) {
    case core::PipelineSchedule::kGpipe:
    case core::PipelineSchedule::k1F1B:
    case core::PipelineSchedule::kInterleaved1F1B: break;
    case core::PipelineSchedule::kInterleavedZb:
    case core::PipelineSchedule::kZbv:
    case core::PipelineSchedule::kDualPipeV: hop = std::max(0.0, f + b - w); break;
  }
  // Fewer micro-batches than ranks: the first micro-batch's pass through all pp x v chunks
  // bounds the step, (m + pv - 1) chunk passes instead of (m v + p - 1).
  const double p = static_cast<double>(in.pp), v = static_cast<double>(in.virtual_stages);
  const double hops = std::max(p - 1.0, p * v - 1.0 - m * (v - 1.0));
  return busiest + hops * hop + 2 * (p - 1.0) * in.p2p_s;
}

core::Result<PipelineStep> pipeline_step(const StageCosts& c, bool use_timeline) {
  PipelineInput in = pipeline_input(c);
  in.makespan_only = true;  // the step needs the makespan; memory has its own activation_peaks
  if (in.pp > 1) {
    if (auto st = check_pipeline_shape(in); !st.is_ok()) return st;
  }
  PipelineStep out;
  out.layers_per_stage = stage_split(c);
  out.busiest_s = static_cast<double>(in.micro_batches) * busiest_rank_per_micro_batch(in);
  const std::int64_t passes = in.pp * in.virtual_stages * in.micro_batches * 3;
  // The closed form is checked for m >= 2 pp; shorter pipelines always run the timeline.
  const bool short_pipeline = in.micro_batches < 2 * in.pp;
  if (in.pp > 1 && passes <= kMaxTimelinePasses && (use_timeline || short_pipeline)) {
    auto tl = simulate_pipeline(in);
    if (!tl) return tl.status();
    out.makespan_s = tl->makespan_s;
    out.timeline = true;
  } else {
    out.makespan_s = closed_form_makespan(in);
  }
  out.makespan_s = std::max(out.makespan_s, out.busiest_s);
  out.bubble_s = out.makespan_s - out.busiest_s;
  out.bubble_fraction = out.busiest_s > 0 ? out.bubble_s / out.busiest_s : 0;
  return out;
}

}  // namespace planck::sim
