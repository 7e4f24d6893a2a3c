// exec's MPI all-reduce path (exec::run_collective through the Communicator interface) against
// a raw MPI_Allreduce loop of the same sizes, in the same run: the interface's overhead ratio.
//
// How it runs: Google Benchmark chooses iteration counts by timing, which would let MPI ranks
// disagree and deadlock, so every benchmark here has a fixed iteration count and both paths
// are timed with MPI_Wtime inside ONE benchmark (manual time), alternating raw and exec calls (and
// which of the two goes first) so that both see the same machine state. MPI is initialised by a static object before
// benchmark_main runs and finalised after it.
//   mpirun -np 2 build/bench/bench_exec           (2 ranks: real communication over MPI)
//   build/bench/bench_exec                         (singleton MPI: a 1-rank communicator, which
//                                                   isolates the per-call software overhead)
// Counters: raw_us and exec_us are the mean seconds per call (x 1e6) of each path,
// overhead_ratio = exec_us / raw_us. Run only rank 0's output matters (rank 1 prints the same
// shape); with --benchmark_out the files are written per process.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "planck/config.h"

#if PLANCK_HAVE_MPI
#include <mpi.h>

#include "exec/collective.h"
#include "exec/mpi/communicator.h"
#include "exec/mpi/world.h"

namespace {

struct MpiSession {
  MpiSession() {
    // The same pinned algorithms planck exec uses; shared memory is fine here (no wire count).
    planck::exec::mpi::configure(false);
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  ~MpiSession() { MPI_Finalize(); }
};
const MpiSession kSession;

void BM_ExecVsRawAllreduce(benchmark::State& state) {
  const auto bytes = static_cast<std::int64_t>(state.range(0));
  const std::int64_t count = bytes / 4;
  planck::exec::mpi::Communicator world(MPI_COMM_WORLD, false);
  std::vector<std::uint32_t> send(static_cast<std::size_t>(count), 1), recv(static_cast<std::size_t>(count), 0);
  double raw_s = 0, exec_s = 0;
  // Each path is timed between a barrier and its own end; which path goes first alternates
  // every iteration, so neither always inherits the other's warm caches or rank skew.
  auto time_raw = [&]() -> double {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
  };
  planck::core::Status status = planck::core::Status::ok();
  auto time_exec = [&]() -> double {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    status = planck::exec::run_collective(world, planck::core::CollOp::kAllReduce, send.data(), recv.data(), count,
                                          planck::exec::DataType::kUint32);
    return MPI_Wtime() - t0;
  };
  std::int64_t k = 0;
  for (auto _ : state) {
    double r = 0, e = 0;
    if (k++ % 2 == 0) {
      r = time_raw();
      e = time_exec();
    } else {
      e = time_exec();
      r = time_raw();
    }
    if (!status) {
      state.SkipWithError(status.message().c_str());
      break;
    }
    raw_s += r;
    exec_s += e;
    state.SetIterationTime(r + e);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["raw_us"] = raw_s / n * 1e6;
  state.counters["exec_us"] = exec_s / n * 1e6;
  state.counters["overhead_ratio"] = raw_s > 0 ? exec_s / raw_s : 0;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * bytes * 2);
}
// Fixed iterations: every rank must make the same number of collective calls.
BENCHMARK(BM_ExecVsRawAllreduce)->Arg(4 << 10)->Iterations(200)->UseManualTime();
BENCHMARK(BM_ExecVsRawAllreduce)->Arg(64 << 10)->Iterations(100)->UseManualTime();
BENCHMARK(BM_ExecVsRawAllreduce)->Arg(1 << 20)->Iterations(60)->UseManualTime();
BENCHMARK(BM_ExecVsRawAllreduce)->Arg(16 << 20)->Iterations(10)->UseManualTime();

}  // namespace

#else

void BM_ExecVsRawAllreduce(benchmark::State& state) {
  for (auto _ : state) {
  }
  state.SkipWithError("built without MPI: nothing to compare");
}
BENCHMARK(BM_ExecVsRawAllreduce);

#endif
