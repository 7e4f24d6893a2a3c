#include "exec/runner.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstring>
#include <functional>
#include <map>
#include <thread>

#include "exec/collective.h"

namespace planck::exec {
namespace {

using core::Status;

std::string dims_key(const std::vector<std::string>& dims) {
  std::string k;
  for (const auto& d : dims) k += (k.empty() ? "" : ",") + d;
  return k;
}

Status guarded(const RunOptions& o, const std::string& what, const std::function<Status()>& fn) {
  return run_guarded(o.watchdog, what, fn);
}

core::Result<std::uint64_t> sum_u64(Communicator& world, std::uint64_t mine) {
  std::uint64_t total = 0;
  if (auto st = world.all_reduce(&mine, &total, 1, DataType::kUint64); !st) return st;
  return total;
}

// Every rank's values, rank-major: all_gather of the bit patterns.
core::Result<std::vector<double>> gather_doubles(Communicator& world, const std::vector<double>& mine) {
  std::vector<std::uint64_t> bits(mine.size()), all(mine.size() * world.size());
  std::memcpy(bits.data(), mine.data(), mine.size() * sizeof(double));
  if (auto st = world.all_gather(bits.data(), all.data(), static_cast<std::int64_t>(bits.size()), DataType::kUint64);
      !st) {
    return st;
  }
  std::vector<double> out(all.size());
  std::memcpy(out.data(), all.data(), all.size() * sizeof(double));
  return out;
}

// Ranks that put bytes on the wire in one group under the modelled algorithm: all of them,
// except the last rank of a broadcast chain (core/schedule/collectives.h).
std::int64_t senders(core::CollOp op, std::int64_t n) {
  if (n <= 1) return 0;
  return op == core::CollOp::kBroadcast ? n - 1 : n;
}

TimeStats stats_of(std::vector<double> v) {
  TimeStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return s;
}

}  // namespace

core::Status run_guarded(Watchdog* watchdog, const std::string& what, const std::function<core::Status()>& fn) {
  if (watchdog) watchdog->arm(what);
  Status st = fn();
  if (watchdog) watchdog->disarm();
  if (!st) return Status::error(what + ": " + st.message());
  return st;
}

core::Result<std::vector<double>> slowest_per_iteration(Communicator& world, const std::vector<double>& mine) {
  if (mine.empty()) return std::vector<double>();
  auto all = gather_doubles(world, mine);
  if (!all) return all.status();
  std::vector<double> slowest(mine.size(), 0);
  for (std::size_t i = 0; i < all->size(); ++i) slowest[i % mine.size()] = std::max(slowest[i % mine.size()], (*all)[i]);
  return slowest;
}

Prediction ring_prediction(const core::ScheduledCollective& c) {
  Prediction p;
  p.bytes_sent_per_rank = core::wire_bytes_per_rank(c.op, c.group_size, c.bytes_per_call);
  return p;
}

double scale_factor(const core::Schedule& schedule, std::int64_t max_bytes) {
  std::int64_t largest = 0;
  for (const auto& c : schedule.collectives) largest = std::max(largest, c.bytes_per_call);
  if (largest <= max_bytes || largest <= 0) return 1.0;
  return static_cast<double>(max_bytes) / static_cast<double>(largest);
}

std::int64_t scaled_bytes(const core::ScheduledCollective& c, double factor) {
  if (c.bytes_per_call <= 0) return 0;
  const std::int64_t unit = std::max<std::int64_t>(1, c.dtype_bytes) * std::max<std::int64_t>(1, c.group_size);
  const auto units = static_cast<std::int64_t>(static_cast<double>(c.bytes_per_call) * factor / static_cast<double>(unit));
  return std::max<std::int64_t>(1, units) * unit;
}

namespace {

// Communicators of one run: one per distinct dim set, plus one per host for the wire counters.
struct Comms {
  std::map<std::string, std::unique_ptr<Communicator>> by_dims;
  std::unique_ptr<Communicator> host;
  Communicator& of(const core::ScheduledCollective& c) { return *by_dims[dims_key(c.dims)]; }
};

// The colour a rank passes when splitting for a group set: its group, or (an injected fault)
// the next group's.
int colour_for(const core::GroupSet& gs, int me, const Fault& fault) {
  const auto g = gs.group_of(me);
  if (fault.kind == Fault::Kind::kWrongColour && fault.rank == me) return static_cast<int>((g + 1) % gs.num_groups());
  return static_cast<int>(g);
}

// Splits the host and every role's communicators and checks each role's real members against
// the mesh's group (MembershipResult per role).
Status build_communicators(Communicator& world, const core::Mesh& mesh, const core::Schedule& schedule,
                           const RunOptions& o, Comms& comms, ExecReport& report) {
  const int me = world.rank();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const int host_color = static_cast<int>(std::hash<std::string>{}(host) & 0x7fffffff);
  if (auto st = guarded(o, "host split", [&]() -> Status {
        auto r = world.split(host_color, me);
        if (!r) return r.status();
        comms.host = std::move(*r);
        return Status::ok();
      });
      !st) {
    return st;
  }
  for (const auto& c : schedule.collectives) {
    const std::string key = dims_key(c.dims);
    const core::GroupSet gs = mesh.groups(c.dims);
    if (!comms.by_dims.count(key)) {
      Status st = guarded(o, "split for [" + key + "]", [&]() -> Status {
        auto r = world.split(colour_for(gs, me, o.fault), static_cast<int>(gs.index_in_group(me)));
        if (!r) return r.status();
        comms.by_dims[key] = std::move(*r);
        return Status::ok();
      });
      if (!st) return st;
    }
    bool seen = false;
    for (const auto& m : report.membership) seen = seen || (m.role == c.role && m.dims == c.dims);
    if (seen) continue;
    Communicator& g = *comms.by_dims[key];
    std::uint64_t mine = static_cast<std::uint64_t>(me);
    std::vector<std::uint64_t> members(static_cast<std::size_t>(g.size()));
    Status st = guarded(o, "membership of " + c.role + " [" + key + "]",
                        [&] { return g.all_gather(&mine, members.data(), 1, DataType::kUint64); });
    if (!st) return st;
    const std::vector<std::int64_t> expected = gs.members(gs.group_of(me));
    bool ok = expected.size() == members.size();
    for (std::size_t i = 0; ok && i < members.size(); ++i) ok = static_cast<std::int64_t>(members[i]) == expected[i];
    auto wrong = sum_u64(world, ok ? 0 : 1);
    if (!wrong) return wrong.status();
    MembershipResult m;
    m.role = c.role;
    m.dims = c.dims;
    m.groups = gs.num_groups();
    m.group_size = gs.group_size();
    m.wrong_ranks = static_cast<std::int64_t>(*wrong);
    m.ok = *wrong == 0;
    report.membership.push_back(std::move(m));
  }
  return Status::ok();
}

// One op's buffers and its call.
struct OpCall {
  Communicator* g = nullptr;
  core::CollOp op{};
  DataType type{};
  std::int64_t count = 0;
  std::uint32_t seed = 0;
  Buffer send, recv;
  std::vector<unsigned char> out;
  Status call() { return run_collective(*g, op, send.data(), recv.data(), count, type); }
  // nccl-tests CheckData: wrong elements of the last call's result on this rank.
  core::Result<std::int64_t> wrong() {
    if (auto st = g->to_host(out.data(), recv, static_cast<std::int64_t>(out.size())); !st) return st;
    return count_wrong(op, type, g->rank(), g->size(), count, seed, out);
  }
};

core::Result<OpCall> prepare(Communicator& g, const core::ScheduledCollective& c, std::int64_t bytes, std::size_t index,
                             const Fault& fault, int world_rank) {
  OpCall k;
  k.g = &g;
  k.op = c.op;
  k.type = g.exact_type(c.dtype_bytes);
  auto count = count_for_bytes(c.op, g.size(), bytes, k.type);
  if (!count) return count.status();
  k.count = *count;
  k.seed = static_cast<std::uint32_t>(index + 1);
  std::vector<unsigned char> send_img = make_send(c.op, k.type, g.rank(), g.size(), k.count, k.seed);
  const std::vector<unsigned char> recv_img = make_recv(c.op, k.type, g.rank(), g.size(), k.count, k.seed);
  // Injected fault: this rank's first element is one off, so every result that depends on it is wrong.
  if (fault.kind == Fault::Kind::kWrongData && fault.rank == world_rank && !send_img.empty()) send_img[0] ^= 1;
  auto send_buf = g.allocate(static_cast<std::int64_t>(send_img.size()));
  if (!send_buf) return send_buf.status();
  auto recv_buf = g.allocate(static_cast<std::int64_t>(recv_img.size()));
  if (!recv_buf) return recv_buf.status();
  k.send = std::move(*send_buf);
  k.recv = std::move(*recv_buf);
  if (auto st = g.to_device(k.send, send_img.data(), static_cast<std::int64_t>(send_img.size())); !st) return st;
  if (auto st = g.to_device(k.recv, recv_img.data(), static_cast<std::int64_t>(recv_img.size())); !st) return st;
  k.out.resize(recv_img.size());
  return k;
}

// Warm-up, timed iterations (the slowest rank per iteration) and the data check.
Status time_and_check(Communicator& world, OpCall& k, const RunOptions& o, const std::string& label, OpResult& r) {
  auto check = [&]() -> Status {
    auto w = k.wrong();
    if (!w) return w.status();
    r.wrong_elements = std::max(r.wrong_elements, *w);
    return Status::ok();
  };
  auto call = [&] { return k.call(); };
  for (int w = 0; w < o.warmup; ++w) {
    if (auto st = guarded(o, label + " warmup", call); !st) return st;
    if (o.check_every_iteration) {
      if (auto st = check(); !st) return st;
    }
  }
  std::vector<double> times;
  for (int i = 0; i < o.iters; ++i) {
    if (auto st = guarded(o, "barrier before " + label, [&] { return world.barrier(); }); !st) return st;
    core::Result<double> t = 0.0;
    if (auto st = guarded(o, label, [&] {
          t = k.g->timed(call);
          return t.status();
        });
        !st) {
      return st;
    }
    times.push_back(*t);
    if (o.check_every_iteration) {
      if (auto st = check(); !st) return st;
    }
  }
  if (auto st = check(); !st) return st;
  auto slowest = slowest_per_iteration(world, times);
  if (!slowest) return slowest.status();
  r.measured_time_s = stats_of(*slowest);
  if (r.measured_time_s.median > 0) {
    r.algbw_gbps = static_cast<double>(r.bytes_per_call) / r.measured_time_s.median / 1e9;
    r.busbw_gbps = r.algbw_gbps * core::bus_factor(r.op, r.group_size);
  }
  auto wrong = sum_u64(world, static_cast<std::uint64_t>(r.wrong_elements));
  if (!wrong) return wrong.status();
  r.wrong_elements = static_cast<std::int64_t>(*wrong);
  return Status::ok();
}

// Wire bytes: host interface counters around `reps` fenced calls, minus an idle window of the
// same length and the same barriers (their traffic and background traffic cancel out).
Status wire_probe(Communicator& world, Comms& comms, OpCall& k, const RunOptions& o, const std::string& label,
                  std::int64_t groups, OpResult& r) {
  const std::int64_t sending = groups * senders(r.op, r.group_size);
  if (!o.wire || sending <= 0 || r.predicted_bytes_sent_per_rank <= 0) {
    r.wire_source = o.wire ? "unmeasured: no bytes on the wire (group of 1)"
                           : "unmeasured: " + (o.wire_unavailable.empty() ? std::string("no counter") : o.wire_unavailable);
    return Status::ok();
  }
  const bool leader = comms.host->rank() == 0;
  const std::int64_t api_bytes = core::wire_bytes_per_rank(r.op, r.group_size, r.bytes_per_call);
  const std::int64_t per_call_total = std::max<std::int64_t>(1, api_bytes * sending);
  // Calls below the gate are reported, not held to the tolerance: one repetition is enough.
  const std::int64_t reps = r.predicted_bytes_sent_per_rank < kWireGateBytes
                                ? 1
                                : std::clamp<std::int64_t>(o.wire_min_total_bytes / per_call_total + 1, 1, 1000);
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  auto read = [&](std::uint64_t* v) -> Status {
    if (!leader) return Status::ok();
    auto x = o.wire->read();
    if (!x) return x.status();
    *v = *x;
    return Status::ok();
  };
  // Each read sits between two barriers: no rank can send this op's bytes before the leader
  // has read the counter, nor the next step's before it reads again.
  Status st = guarded(o, label + " wire measurement", [&]() -> Status {
    if (auto s = world.barrier(); !s) return s;
    if (auto s = read(&a); !s) return s;
    if (auto s = world.barrier(); !s) return s;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < reps; ++i) {
      if (auto s = k.call(); !s) return s;
    }
    if (auto s = world.barrier(); !s) return s;
    double busy_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (auto s = read(&b); !s) return s;
    if (auto s = world.barrier(); !s) return s;
    // Every rank idles for rank 0's duration so the idle window ends together.
    auto all = gather_doubles(world, {busy_s});
    if (!all) return all.status();
    busy_s = (*all)[0];
    if (auto s = world.barrier(); !s) return s;
    if (auto s = read(&c); !s) return s;
    if (auto s = world.barrier(); !s) return s;
    std::this_thread::sleep_for(std::chrono::duration<double>(busy_s));
    if (auto s = world.barrier(); !s) return s;
    if (auto s = read(&d); !s) return s;
    return world.barrier();
  });
  if (!st) return st;
  // Two's complement in the sum keeps a (noise) negative delta exact.
  auto total = sum_u64(world, leader ? (b - a) - (d - c) : 0);
  if (!total) return total.status();
  r.wire_bytes_measured = static_cast<std::int64_t>(*total) / (reps * sending);
  r.wire_source = o.wire->source();
  return Status::ok();
}

// Per-peer traffic of one call from the transport, against the prediction (or --expect's).
Status traffic_probe(Communicator& world, OpCall& k, const RunOptions& o, const std::string& label,
                     const TrafficMatrix& predicted, OpResult& r) {
  if (!o.traffic) {
    r.traffic.source = "unmeasured: " + (o.traffic_unavailable.empty() ? std::string("no per-peer source") : o.traffic_unavailable);
    return Status::ok();
  }
  core::Result<TrafficMatrix> measured = TrafficMatrix();
  Status st = guarded(o, label + " traffic measurement", [&]() -> Status {
    if (auto s = world.barrier(); !s) return s;
    if (auto s = o.traffic->begin(); !s) return s;
    if (auto s = k.call(); !s) return s;
    // A call can return while its last eager sends still wait in the transport's own queue (they
    // reach the socket during later progress); the barrier completes only once every rank has
    // what it needed from the call, so its bytes are in the kernel's counters before they are
    // read. The barrier's own few hundred bytes stay inside the header allowance.
    if (auto s = world.barrier(); !s) return s;
    measured = o.traffic->end(world);
    return measured.status();
  });
  if (!st) return st;
  r.traffic = compare_traffic(predicted, *measured);
  r.traffic.source = o.traffic->source();
  std::int64_t busiest = 0;
  for (std::int64_t from = 0; from < measured->world; ++from) {
    std::int64_t sent = 0;
    for (std::int64_t to = 0; to < measured->world; ++to) sent += measured->at(from, to);
    busiest = std::max(busiest, sent);
  }
  r.measured_bytes_sent_per_rank = busiest;
  r.bytes_source = o.traffic->source();
  return Status::ok();
}

TrafficMatrix perturbed(TrafficMatrix m, const Fault& fault) {
  if (fault.kind != Fault::Kind::kPerturbPrediction) return m;
  for (auto& b : m.bytes) b = static_cast<std::int64_t>(static_cast<double>(b) * (1 + fault.factor));
  return m;
}

}  // namespace

Status run_plan(Communicator& world, const core::Mesh& mesh, const core::Schedule& schedule, const RunOptions& o,
                ExecReport& report) {
  const int me = world.rank();
  if (world.size() != mesh.world()) {
    return Status::error("the launcher started " + std::to_string(world.size()) + " ranks but the plan's mesh " +
                         mesh.to_string() + " has " + std::to_string(mesh.world()));
  }
  report.world = world.size();
  report.warmup = o.warmup;
  report.iters = o.iters;
  report.max_bytes = o.max_bytes;
  const double factor = o.factor ? *o.factor : scale_factor(schedule, o.max_bytes);
  report.scale_factor = factor;

  Comms comms;
  if (auto st = build_communicators(world, mesh, schedule, o, comms, report); !st) return st;
  if (!std::all_of(report.membership.begin(), report.membership.end(), [](const auto& m) { return m.ok; })) {
    // A communicator with the wrong members may not even agree on sizes: running ops on it
    // could hang, so the run stops at the finding.
    report.notes.push_back("no op was run: a communicator's members differ from the plan's groups");
    summarize(report);
    return Status::ok();
  }
  if (o.fault.kind == Fault::Kind::kKill && me == o.fault.rank) {
    std::fprintf(stderr, "planck: rank %d: killing itself as asked (--inject kill:%d)\n", me, me);
    std::fflush(stderr);
    std::raise(SIGKILL);
  }

  for (std::size_t index = 0; index < schedule.collectives.size(); ++index) {
    const core::ScheduledCollective& c = schedule.collectives[index];
    Communicator& g = comms.of(c);
    const std::string label = std::string(core::op_name(c.op)) + " of role " + c.role + " (op " +
                              std::to_string(index) + ")";
    OpResult r;
    r.role = c.role;
    r.dims = c.dims;
    r.op = c.op;
    r.phase = c.phase;
    r.what = c.what;
    r.group_size = g.size();
    r.groups = c.groups;
    r.unscaled_bytes_per_call = c.bytes_per_call;
    r.calls_per_step = c.calls_per_step;

    core::ScheduledCollective scaled = c;
    scaled.bytes_per_call = scaled_bytes(c, factor);
    scaled.calls_per_step = 1;
    const Prediction pred = o.predict ? o.predict(scaled) : ring_prediction(scaled);
    r.predicted_bytes_sent_per_rank = pred.bytes_sent_per_rank;
    r.predicted_time_s = pred.time_s;
    r.link = pred.link;
    r.model = pred.model;

    auto k = prepare(g, c, scaled.bytes_per_call, index, o.fault, me);
    if (!k) return Status::error(label + ": " + k.message());
    r.dtype = dtype_name(k->type);
    r.bytes_per_call = bytes_for_count(c.op, g.size(), k->count, k->type);
    // What the API was handed; replaced by the transport's count when it has one.
    r.measured_bytes_sent_per_rank = core::wire_bytes_per_rank(c.op, g.size(), r.bytes_per_call);
    r.bytes_source = "api";

    if (auto st = time_and_check(world, *k, o, label, r); !st) return st;
    if (auto st = wire_probe(world, comms, *k, o, label, c.groups, r); !st) return st;
    TrafficMatrix predicted(mesh.world());
    if (o.expect) {
      if (auto e = o.expect(scaled)) {
        predicted = predict_traffic(c.op, e->bytes, e->groups, mesh.world());
        r.expected = e->label;
      } else {
        r.expected = "not in the intended plan";
      }
    } else {
      predicted = predict_traffic(c.op, r.bytes_per_call, mesh.groups(c.dims), mesh.world());
    }
    if (auto st = traffic_probe(world, *k, o, label, perturbed(std::move(predicted), o.fault), r); !st) return st;
    report.ops.push_back(std::move(r));
  }
  summarize(report);
  return Status::ok();
}

}  // namespace planck::exec
