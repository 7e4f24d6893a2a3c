#include "sim/pipeline.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace planck::sim {
namespace {

using core::PipelineSchedule;

enum class Op { kF, kB, kW };  // kB is the full backward unless the stage's W is split off
struct Action {
  Op op;
  std::int64_t stage;
  std::int64_t mb;
};
using Order = std::vector<Action>;

// Per-stage micro-batch counters, as torch pipelining keeps them: each stage runs its
// micro-batches in order.
struct Counters {
  std::vector<std::int64_t> f, b, w;
  explicit Counters(std::int64_t stages) : f(stages, 0), b(stages, 0), w(stages, 0) {}
  Action next(Op op, std::int64_t s) {
    auto& c = op == Op::kF ? f : op == Op::kB ? b : w;
    return {op, s, c[s]++};
  }
};

// GPipe: every forward, then every backward (torch ScheduleGPipe).
Order gpipe(std::int64_t r, std::int64_t m) {
  Order o;
  for (std::int64_t i = 0; i < m; ++i) o.push_back({Op::kF, r, i});
  for (std::int64_t i = 0; i < m; ++i) o.push_back({Op::kB, r, i});
  return o;
}

// Interleaved 1F1B and its zero-bubble variant (torch _get_1f1b_rank_ops): warm-up forwards,
// then one forward and one backward per step, then the remaining backwards. The chunk of step k
// cycles every `group` micro-batches (microbatches_per_round); zero-bubble delays each rank's
// weight-gradient passes by `rank` steps so they fill the cool-down (ZB1P, Qi et al. 2024).
// Plain 1F1B is the v = 1 case with one warm-up forward per hop to the last stage (Megatron
// forward_backward_pipelining_without_interleaving: pp - rank - 1); interleaved 1F1B warms up
// two per hop (torch _get_warmup_ops multiply_factor=2), zero-bubble one.
Order interleaved(std::int64_t r, std::int64_t p, std::int64_t v, std::int64_t m, std::int64_t group,
                  std::int64_t factor, bool zero_bubble) {
  const std::int64_t total = m * v;
  const std::int64_t warmup = std::min((v - 1) * group + factor * (p - 1 - r), total);
  auto fwd_stage = [&](std::int64_t k) { return ((k / group) % v) * p + r; };
  auto bwd_stage = [&](std::int64_t k) { return (v - 1 - ((k - warmup) / group) % v) * p + r; };
  Counters c(p * v);
  Order o;
  std::vector<std::int64_t> backward_steps;
  std::size_t weights_done = 0;
  auto backward = [&](std::int64_t k) {
    o.push_back(c.next(Op::kB, bwd_stage(k)));
    backward_steps.push_back(k);
    if (zero_bubble && k - warmup >= r) o.push_back(c.next(Op::kW, bwd_stage(backward_steps[weights_done++])));
  };
  for (std::int64_t k = 0; k < warmup; ++k) o.push_back(c.next(Op::kF, fwd_stage(k)));
  for (std::int64_t k = warmup; k < total; ++k) {
    o.push_back(c.next(Op::kF, fwd_stage(k)));
    backward(k);
  }
  for (std::int64_t k = total; k < total + warmup; ++k) backward(k);
  while (zero_bubble && weights_done < backward_steps.size()) {
    o.push_back(c.next(Op::kW, bwd_stage(backward_steps[weights_done++])));
  }
  return o;
}

// ZBV (torch ScheduleZBVZeroBubble; Qi et al. 2024 §6): chunk 0 is stage r, chunk 1 stage
// 2p-1-r. Counts run to max(2p-1, m) and actions past m are dropped, as torch does.
Order zbv(std::int64_t r, std::int64_t p, std::int64_t m) {
  const std::int64_t s0 = r, s1 = 2 * p - 1 - r, n = std::max(2 * p - 1, m);
  Counters c(2 * p);
  Order o;
  auto add = [&](Op op, std::int64_t s) { o.push_back(c.next(op, s)); };
  for (std::int64_t i = 0; i < 2 * (p - r) - 1; ++i) add(Op::kF, s0);
  for (std::int64_t i = 0; i < r; ++i) add(Op::kF, s1), add(Op::kF, s0);
  for (std::int64_t i = 0; i < p - r; ++i) add(Op::kF, s1), add(Op::kB, s1), add(Op::kW, s1);
  while (c.f[s1] < c.f[s0] || c.f[s0] < n) {
    if (c.f[s0] < n) add(Op::kF, s0);
    add(Op::kB, s0), add(Op::kW, s0);
    add(Op::kF, s1), add(Op::kB, s1), add(Op::kW, s1);
  }
  for (std::int64_t i = 0; i < r; ++i) add(Op::kB, s0), add(Op::kB, s1);
  for (std::int64_t i = 0; i < p - r; ++i) add(Op::kB, s0), add(Op::kW, s0);
  while (c.w[s1] < c.b[s1]) add(Op::kW, s1);
  while (c.w[s0] < c.b[s0]) add(Op::kW, s0);
  std::erase_if(o, [m](const Action& a) { return a.mb >= m; });
  return o;
}

// DualPipeV (torch ScheduleDualPipeV, after DeepSeek's DualPipe): its overlapped F/B pairs are
// timed as the forward followed by the full backward (the overlap hides the pair's
// communication, which this timeline does not carry). A full backward is a B whose W follows at
// once; a split one leaves its W in a queue that later steps drain.
Order dualpipev(std::int64_t r, std::int64_t p, std::int64_t m) {
  const std::int64_t s0 = r, s1 = 2 * p - 1 - r;
  Counters c(2 * p);
  Order o;
  std::deque<Action> pending;
  auto add = [&](Op op, std::int64_t s) { o.push_back(c.next(op, s)); };
  auto full = [&](std::int64_t s) { add(Op::kB, s), add(Op::kW, s); };
  auto split = [&](std::int64_t s) {
    add(Op::kB, s);
    pending.push_back(c.next(Op::kW, s));
  };
  auto drain_one = [&] {
    if (pending.empty()) return;
    o.push_back(pending.front());
    pending.pop_front();
  };
  for (std::int64_t i = 0; i < 2 * (p - r - 1); ++i) add(Op::kF, s0);
  for (std::int64_t i = 0; i < r + 1; ++i) add(Op::kF, s0), add(Op::kF, s1);
  for (std::int64_t i = 0; i < p - r - 1; ++i) split(s1), drain_one(), add(Op::kF, s1);
  for (std::int64_t i = 0; i < m - 2 * p + r + 1; ++i) {
    add(Op::kF, s0), full(s1);
    add(Op::kF, s1), full(s0);
  }
  for (std::int64_t i = 0; i < p - r - 1; ++i) full(s1), add(Op::kF, s1), full(s0);
  bool zb = false;
  const std::int64_t step6 = r + 1;
  for (std::int64_t i = 0; i < step6; ++i) {
    if (i == step6 / 2 && r % 2 == 1) zb = true;
    zb ? split(s1) : full(s1);
    if (i == step6 / 2 && r % 2 == 0) zb = true;
    zb ? split(s0) : full(s0);
  }
  for (std::int64_t i = 0; i < p - r - 1; ++i) drain_one(), zb ? split(s0) : full(s0);
  while (!pending.empty()) drain_one();
  return o;
}

}  // namespace

std::int64_t stage_rank(PipelineSchedule schedule, std::int64_t pp, std::int64_t stage) {
  if (schedule == PipelineSchedule::kZbv || schedule == PipelineSchedule::kDualPipeV) {
    return stage < pp ? stage : 2 * pp - 1 - stage;
  }
  return stage % pp;
}

namespace {

bool splits_weight_grad(PipelineSchedule s) {
  return s == PipelineSchedule::kInterleavedZb || s == PipelineSchedule::kZbv || s == PipelineSchedule::kDualPipeV;
}

}  // namespace

core::Status check_pipeline_shape(const PipelineInput& in) {
  const std::string name = core::to_string(in.schedule);
  const std::int64_t p = in.pp, v = in.virtual_stages, m = in.micro_batches;
  if (p < 1 || v < 1 || m < 1) {
    return core::Status::error("pipeline " + name + ": pp " + std::to_string(p) + ", virtual_stages " +
                               std::to_string(v) + " and micro_batches " + std::to_string(m) + " must all be >= 1");
  }
  if (static_cast<std::int64_t>(in.stages.size()) != p * v) {
    return core::Status::error("pipeline " + name + ": " + std::to_string(in.stages.size()) +
                               " stage times given for pp " + std::to_string(p) + " x virtual_stages " +
                               std::to_string(v) + " = " + std::to_string(p * v) + " stages");
  }
  const bool v_shape = in.schedule == PipelineSchedule::kZbv || in.schedule == PipelineSchedule::kDualPipeV;
  const bool multi = in.schedule == PipelineSchedule::kInterleaved1F1B || in.schedule == PipelineSchedule::kInterleavedZb;
  if (v_shape && v != 2) {
    return core::Status::error("pipeline " + name + " runs exactly 2 virtual stages per rank, not " + std::to_string(v));
  }
  if (!v_shape && !multi && v != 1) {
    return core::Status::error("pipeline " + name + " runs 1 stage per rank, not " + std::to_string(v) +
                               " (use interleaved_1f1b for virtual stages)");
  }
  if (multi) {
    const std::int64_t rounds = std::max<std::int64_t>(1, m / p);
    if (m % rounds != 0) {
      return core::Status::error("pipeline " + name + ": micro_batches " + std::to_string(m) +
                                 " must be a multiple of the number of rounds max(1, m / pp) = " +
                                 std::to_string(rounds) + " (torch pipelining's rule)");
    }
  }
  if (in.schedule == PipelineSchedule::kDualPipeV && m < 2 * p) {
    return core::Status::error("pipeline dualpipev needs micro_batches >= 2 x pp = " + std::to_string(2 * p) +
                               ", got " + std::to_string(m));
  }
  for (const auto& st : in.stages) {
    if (!(st.forward_s >= 0) || !(st.backward_input_s >= 0) || !(st.backward_weight_s >= 0) ||
        !(st.activation_units >= 0)) {
      return core::Status::error("pipeline " + name + ": stage times and activation units must be >= 0");
    }
  }
  if (!(in.p2p_s >= 0)) return core::Status::error("pipeline " + name + ": p2p time must be >= 0");
  return core::Status::ok();
}

namespace {

Order rank_order(const PipelineInput& in, std::int64_t r) {
  const std::int64_t p = in.pp, v = in.virtual_stages, m = in.micro_batches;
  switch (in.schedule) {
    case PipelineSchedule::kGpipe: return gpipe(r, m);
    case PipelineSchedule::k1F1B: return interleaved(r, p, 1, m, m, 1, false);
    case PipelineSchedule::kInterleaved1F1B:
    case PipelineSchedule::kInterleavedZb: {
      const std::int64_t group = m / std::max<std::int64_t>(1, m / p);
      const bool zb = in.schedule == PipelineSchedule::kInterleavedZb;
      return interleaved(r, p, v, m, group, zb ? 1 : 2, zb);
    }
    case PipelineSchedule::kZbv: return zbv(r, p, m);
    case PipelineSchedule::kDualPipeV: return dualpipev(r, p, m);
  }
  return {};
}

// Every rank's order of one (schedule, pp, v, m): they depend on nothing else, and enumerate
// asks for the same few shapes across thousands of layouts, so they are made once per thread
// and kept (bounded: the cache is emptied past kMaxCachedActions actions).
using Orders = std::vector<Order>;
constexpr std::size_t kMaxCachedActions = std::size_t{1} << 21;

std::shared_ptr<const Orders> rank_orders(const PipelineInput& in) {
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t>;
  thread_local std::map<Key, std::shared_ptr<const Orders>> cache;
  thread_local std::size_t cached_actions = 0;
  const Key key{static_cast<int>(in.schedule), in.pp, in.virtual_stages, in.micro_batches};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto orders = std::make_shared<Orders>();
  std::size_t actions = 0;
  for (std::int64_t r = 0; r < in.pp; ++r) {
    orders->push_back(rank_order(in, r));
    actions += orders->back().size();
  }
  if (cached_actions + actions > kMaxCachedActions) {
    cache.clear();
    cached_actions = 0;
  }
  cached_actions += actions;
  cache.emplace(key, orders);
  return orders;
}

}  // namespace

core::Result<ActivationPeaks> activation_peaks(const PipelineInput& in) {
  if (auto st = check_pipeline_shape(in); !st.is_ok()) return st;
  PipelineInput scan = in;
  const std::int64_t p = in.pp, m = in.micro_batches;
  const bool periodic = m > 3 * p && m % p == 0;
  if (periodic && in.schedule != PipelineSchedule::kGpipe) scan.micro_batches = 3 * p;
  const bool split = splits_weight_grad(in.schedule);
  ActivationPeaks out;
  out.units.assign(static_cast<std::size_t>(p), 0.0);
  out.in_flight.assign(static_cast<std::size_t>(p), 0);
  const auto orders = rank_orders(scan);
  for (std::int64_t r = 0; r < p; ++r) {
    double held = 0;
    std::int64_t held_n = 0;
    for (const Action& a : (*orders)[static_cast<std::size_t>(r)]) {
      const double u = in.stages[static_cast<std::size_t>(a.stage)].activation_units;
      if (a.op == Op::kF) {
        held += u;
        out.units[static_cast<std::size_t>(r)] = std::max(out.units[static_cast<std::size_t>(r)], held);
        out.in_flight[static_cast<std::size_t>(r)] = std::max(out.in_flight[static_cast<std::size_t>(r)], ++held_n);
      } else if ((a.op == Op::kW) == split) {
        held -= u;
        --held_n;
      }
    }
  }
  return out;
}

namespace {

// A makespan-only timeline is a pure function of its input, and enumerate prices the same
// stages under several data-parallel strategies and gradient syncs: those repeat from here
// (bounded per thread like the orders).
struct TimelineKey {
  int schedule;
  std::int64_t pp, v, m;
  double p2p;
  std::vector<double> stages;  // f, b_input, b_weight per stage
  bool operator<(const TimelineKey& o) const {
    return std::tie(schedule, pp, v, m, p2p, stages) < std::tie(o.schedule, o.pp, o.v, o.m, o.p2p, o.stages);
  }
};
constexpr std::size_t kMaxCachedTimelines = 1 << 14;

TimelineKey timeline_key(const PipelineInput& in) {
  TimelineKey k{static_cast<int>(in.schedule), in.pp, in.virtual_stages, in.micro_batches, in.p2p_s, {}};
  k.stages.reserve(in.stages.size() * 3);
  for (const StageTimes& st : in.stages) {
    k.stages.insert(k.stages.end(), {st.forward_s, st.backward_input_s, st.backward_weight_s});
  }
  return k;
}

core::Result<PipelineTimeline> run_timeline(const PipelineInput& in);

}  // namespace

core::Result<PipelineTimeline> simulate_pipeline(const PipelineInput& in) {
  if (!in.makespan_only) return run_timeline(in);
  thread_local std::map<TimelineKey, PipelineTimeline> cache;
  TimelineKey key = timeline_key(in);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto tl = run_timeline(in);
  if (!tl) return tl;
  if (cache.size() >= kMaxCachedTimelines) cache.clear();
  cache.emplace(std::move(key), *tl);
  return tl;
}

namespace {

core::Result<PipelineTimeline> run_timeline(const PipelineInput& in) {
  if (auto st = check_pipeline_shape(in); !st.is_ok()) return st;
  const std::int64_t p = in.pp, m = in.micro_batches, n_stages = p * in.virtual_stages;
  const bool split = splits_weight_grad(in.schedule);
  const auto shared_orders = rank_orders(in);
  const Orders& orders = *shared_orders;
  // finish[op][stage * m + mb]; < 0 until the action has run.
  std::vector<double> finish[3];
  for (auto& f : finish) f.assign(static_cast<std::size_t>(n_stages * m), -1.0);
  auto done = [&](Op op, std::int64_t s, std::int64_t mb) { return finish[static_cast<int>(op)][s * m + mb]; };
  auto hop = [&](std::int64_t a, std::int64_t b) {
    return stage_rank(in.schedule, p, a) == stage_rank(in.schedule, p, b) ? 0.0 : in.p2p_s;
  };
  // When the action's input is there (< 0: not yet).
  auto ready = [&](const Action& a) -> double {
    switch (a.op) {
      case Op::kF: {
        if (a.stage == 0) return 0.0;
        const double t = done(Op::kF, a.stage - 1, a.mb);
        return t < 0 ? t : t + hop(a.stage - 1, a.stage);
      }
      case Op::kB: {
        if (a.stage == n_stages - 1) return done(Op::kF, a.stage, a.mb);
        const double t = done(Op::kB, a.stage + 1, a.mb);
        return t < 0 ? t : t + hop(a.stage + 1, a.stage);
      }
      case Op::kW: return done(Op::kB, a.stage, a.mb);
    }
    return -1.0;
  };
  PipelineTimeline tl;
  tl.busy_s.assign(p, 0.0);
  std::vector<double> clock(p, 0.0);
  std::vector<std::size_t> next(p, 0);
  std::size_t remaining = 0;
  for (const auto& o : orders) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (std::int64_t r = 0; r < p; ++r) {
      for (; next[r] < orders[r].size(); ++next[r], --remaining, progressed = true) {
        const Action& a = orders[r][next[r]];
        const double t_in = ready(a);
        if (t_in < 0) break;
        const StageTimes& st = in.stages[a.stage];
        const double dur = a.op == Op::kF   ? st.forward_s
                           : a.op == Op::kW ? st.backward_weight_s
                           : split          ? st.backward_input_s
                                            : st.backward_input_s + st.backward_weight_s;
        const double start = std::max(clock[r], t_in);
        clock[r] = start + dur;
        finish[static_cast<int>(a.op)][a.stage * m + a.mb] = clock[r];
        tl.busy_s[r] += dur;
        if (!in.makespan_only) {
          tl.actions.push_back({r, a.stage, a.mb, a.op == Op::kF ? 'F' : (a.op == Op::kW ? 'W' : 'B'), start, clock[r]});
        }
      }
    }
    if (!progressed) {
      return core::Status::error("pipeline " + std::string(core::to_string(in.schedule)) +
                                 ": the schedule's per-rank orders wait on each other (internal error)");
    }
  }
  if (!in.makespan_only) {
    auto peaks = activation_peaks(in);
    if (!peaks) return peaks.status();
    tl.peak_activation = std::move(peaks->units);
    tl.peak_in_flight = std::move(peaks->in_flight);
  }
  for (std::int64_t r = 0; r < p; ++r) tl.makespan_s = std::max(tl.makespan_s, clock[r]);
  if (tl.makespan_s > 0) {
    double idle = 0;
    for (std::int64_t r = 0; r < p; ++r) idle += (tl.makespan_s - tl.busy_s[r]) / tl.makespan_s;
    tl.bubble_fraction = idle / static_cast<double>(p);
  }
  return tl;
}

}  // namespace

double equal_stage_makespan(PipelineSchedule schedule, std::int64_t pp, std::int64_t v, std::int64_t m, double f,
                            double b, double w) {
  const double p = static_cast<double>(pp), chunks = static_cast<double>(m * std::max<std::int64_t>(1, v));
  const double hop = schedule == PipelineSchedule::kInterleavedZb ? f + b - w : f + b;
  return chunks * (f + b + w) + (p - 1.0) * hop;
}

}  // namespace planck::sim
