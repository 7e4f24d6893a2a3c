#include "exec/calibrate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include "exec/collective.h"

namespace planck::exec {
namespace {

using core::Status;

// Solves the k x k system a x = b (k <= 3) by Gaussian elimination; false when singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>* x) {
  const std::size_t k = b.size();
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < k; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    }
    if (std::fabs(a[p][c]) < 1e-300) return false;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (std::size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (std::size_t q = c; q < k; ++q) a[r][q] -= f * a[c][q];
      b[r] -= f * b[c];
    }
  }
  x->resize(k);
  for (std::size_t c = 0; c < k; ++c) (*x)[c] = b[c] / a[c][c];
  return true;
}

// The three regressors of the line for one sample.
std::array<double, 3> features(core::CollOp op, std::int64_t n, std::int64_t bytes) {
  return {1.0, static_cast<double>(core::ring_steps(op, n)),
          static_cast<double>(core::wire_bytes_per_rank(op, n, bytes))};
}

}  // namespace

double CalibrationFit::predict(core::CollOp o, std::int64_t n, std::int64_t bytes) const {
  const auto f = features(o, n, bytes);
  return latency_s + step_latency_s * f[1] + (bandwidth_gbps > 0 ? f[2] / (bandwidth_gbps * 1e9) : 0);
}

std::vector<std::int64_t> calibration_group_sizes(std::int64_t world) {
  std::vector<std::int64_t> out;
  for (std::int64_t g = world; g >= 2; g /= 2) {
    if (world % g == 0) out.push_back(g);
    if (g % 2) break;
  }
  return out;
}

core::Result<std::vector<CalibrationSample>> calibration_sweep(Communicator& world, const CalibrateOptions& o) {
  std::vector<CalibrationSample> samples;
  const int me = world.rank();
  auto guarded = [&](const std::string& what, const std::function<Status()>& fn) {
    return run_guarded(o.watchdog, what, fn);
  };
  for (std::int64_t g : calibration_group_sizes(world.size())) {
    std::unique_ptr<Communicator> comm;
    if (auto st = guarded("calibration split into groups of " + std::to_string(g), [&]() -> Status {
          auto r = world.split(static_cast<int>(me / g), me);
          if (!r) return r.status();
          comm = std::move(*r);
          return Status::ok();
        });
        !st) {
      return st;
    }
    const int n = comm->size();
    for (core::CollOp op : core::kAllCollOps) {
      const DataType type = comm->exact_type(4);
      std::int64_t previous = 0;
      for (std::int64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 4) {
        // Whole elements per rank, as the runner scales its calls.
        const std::int64_t unit = 4 * static_cast<std::int64_t>(n);
        const std::int64_t size = std::max<std::int64_t>(unit, bytes / unit * unit);
        if (size == previous) continue;  // tiny sizes rounded up to the same call: measure it once
        previous = size;
        auto count = count_for_bytes(op, n, size, type);
        if (!count) return count.status();
        const auto send_img = make_send(op, type, comm->rank(), n, *count, 1);
        const auto recv_img = make_recv(op, type, comm->rank(), n, *count, 1);
        auto sbuf = comm->allocate(static_cast<std::int64_t>(send_img.size()));
        auto rbuf = comm->allocate(static_cast<std::int64_t>(recv_img.size()));
        if (!sbuf || !rbuf) return Status::error(!sbuf ? sbuf.message() : rbuf.message());
        if (auto st = comm->to_device(*sbuf, send_img.data(), static_cast<std::int64_t>(send_img.size())); !st) return st;
        if (auto st = comm->to_device(*rbuf, recv_img.data(), static_cast<std::int64_t>(recv_img.size())); !st) return st;
        auto call = [&] { return run_collective(*comm, op, sbuf->data(), rbuf->data(), *count, type); };
        const std::string what = std::string("calibration ") + core::op_name(op) + " of " + std::to_string(size) +
                                 " bytes in groups of " + std::to_string(n);
        std::vector<double> times;
        for (int k = 0; k < o.warmup + o.iters; ++k) {
          if (auto st = guarded(what, [&] { return world.barrier(); }); !st) return st;
          core::Result<double> t = 0.0;
          if (auto st = guarded(what, [&] {
                t = comm->timed(call);
                return t.status();
              });
              !st) {
            return st;
          }
          if (k >= o.warmup) times.push_back(*t);
        }
        auto slowest_r = slowest_per_iteration(world, times);
        if (!slowest_r) return slowest_r.status();
        std::vector<double> slowest = std::move(*slowest_r);
        std::sort(slowest.begin(), slowest.end());
        samples.push_back({op, n, size, slowest[slowest.size() / 2]});
      }
    }
  }
  return samples;
}

std::optional<CalibrationFit> fit_line(const std::vector<CalibrationSample>& samples, std::optional<core::CollOp> op) {
  std::vector<std::array<double, 3>> rows;
  std::vector<double> times;
  for (const auto& s : samples) {
    if (op && s.op != *op) continue;
    if (!(s.time_s > 0)) continue;
    rows.push_back(features(s.op, s.group_size, s.bytes));
    times.push_back(s.time_s);
  }
  if (rows.empty()) return std::nullopt;
  std::optional<CalibrationFit> best;
  double best_err = INFINITY;
  // Every subset that keeps the bandwidth term: a line without it cannot follow the size.
  for (int mask = 4; mask < 8; ++mask) {
    std::vector<int> cols;
    for (int c = 0; c < 3; ++c) {
      if (mask & (1 << c)) cols.push_back(c);
    }
    // Normal equations of min sum (x . f_i - t_i)^2 / t_i: timing noise grows with the time,
    // so each sample counts with the inverse of its time (a variance proportional to t). Pure
    // relative error (1 / t^2) let the many small calls drown the large ones a training step
    // is made of; plain absolute error ignored the small ones.
    const std::size_t k = cols.size();
    std::vector<std::vector<double>> a(k, std::vector<double>(k, 0));
    std::vector<double> b(k, 0), x;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double w = 1.0 / times[i];
      for (std::size_t p = 0; p < k; ++p) {
        b[p] += w * rows[i][cols[p]] * times[i];
        for (std::size_t q = 0; q < k; ++q) a[p][q] += w * rows[i][cols[p]] * rows[i][cols[q]];
      }
    }
    if (!solve(a, b, &x)) continue;
    if (std::any_of(x.begin(), x.end(), [](double v) { return v < 0; })) continue;
    double coef[3] = {0, 0, 0};
    for (std::size_t p = 0; p < k; ++p) coef[cols[p]] = x[p];
    double err = 0, rel = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double pred = coef[0] + coef[1] * rows[i][1] + coef[2] * rows[i][2];
      err += (pred - times[i]) * (pred - times[i]) / times[i];
      rel += (pred / times[i] - 1) * (pred / times[i] - 1);
    }
    if (err < best_err) {
      best_err = err;
      CalibrationFit f;
      f.op = op.value_or(core::CollOp::kAllReduce);
      f.latency_s = coef[0];
      f.step_latency_s = coef[1];
      f.bandwidth_gbps = coef[2] > 0 ? 1.0 / coef[2] / 1e9 : 0;
      f.rms_relative_error = std::sqrt(rel / static_cast<double>(rows.size()));
      f.samples = static_cast<std::int64_t>(rows.size());
      best = f;
    }
  }
  return best;
}

}  // namespace planck::exec
