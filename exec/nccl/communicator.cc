#include "exec/nccl/communicator.h"

#include <cstdio>
#include <string>
#include <thread>

namespace planck::exec::nccl {
namespace {

ncclDataType_t nccl_type(DataType type) {
  switch (type) {
    case DataType::kUint8: return ncclUint8;
    case DataType::kUint32: return ncclUint32;
    case DataType::kUint64: return ncclUint64;
    case DataType::kFloat16: return ncclFloat16;
    case DataType::kUint16: break;  // NCCL has no 16-bit integer: exact_type(2) is float16
  }
  return ncclFloat16;
}

core::Status cuda(cudaError_t rc, const char* call) {
  if (rc == cudaSuccess) return core::Status::ok();
  return core::Status::error(std::string(call) + " failed: " + cudaGetErrorString(rc));
}

core::Status nccl(ncclResult_t rc, const char* call) {
  if (rc == ncclSuccess || rc == ncclInProgress) return core::Status::ok();
  return core::Status::error(std::string(call) + " failed: " + ncclGetErrorString(rc));
}

core::Status non_negative(const char* call, std::int64_t count, DataType type) {
  if (count < 0) return core::Status::error(std::string(call) + ": negative element count " + std::to_string(count));
  if (type == DataType::kUint16) return core::Status::error(std::string(call) + ": NCCL has no uint16 type");
  return core::Status::ok();
}

}  // namespace

Communicator::Communicator(ncclComm_t comm, std::chrono::milliseconds timeout) : comm_(comm), timeout_(timeout) {
  ncclCommUserRank(comm_, &rank_);
  ncclCommCount(comm_, &size_);
  cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
}

Communicator::~Communicator() {
  barrier_buffer_ = Buffer();
  if (stream_) cudaStreamDestroy(stream_);
  if (!aborted_) ncclCommDestroy(comm_);
}

core::Status Communicator::finish(ncclResult_t enqueued, const char* call) {
  if (auto st = nccl(enqueued, call); !st) return st;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    cudaError_t q = cudaStreamQuery(stream_);
    if (q == cudaSuccess) return core::Status::ok();
    if (q != cudaErrorNotReady) return cuda(q, call);
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      abort(std::string(call) + ": " + ncclGetErrorString(async));
      return nccl(async, call);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      const std::string msg = std::string(call) + " at rank " + std::to_string(rank_) + " of " +
                              std::to_string(size_) + " did not complete in " + std::to_string(timeout_.count()) +
                              " ms; communicator aborted";
      abort(msg);
      return core::Status::error(msg);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

core::Result<std::unique_ptr<exec::Communicator>> Communicator::split(int color, int key) {
  ncclComm_t out = nullptr;
  if (auto st = nccl(ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &out, nullptr),
                     "ncclCommSplit");
      !st) {
    return st;
  }
  if (color < 0 || out == nullptr) return std::unique_ptr<exec::Communicator>();
  return std::unique_ptr<exec::Communicator>(new Communicator(out, timeout_));
}

core::Status Communicator::all_reduce(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = non_negative("ncclAllReduce", count, type); !st) return st;
  return finish(ncclAllReduce(send, recv, static_cast<std::size_t>(count), nccl_type(type), ncclSum, comm_, stream_),
                "ncclAllReduce");
}

core::Status Communicator::all_gather(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = non_negative("ncclAllGather", count, type); !st) return st;
  return finish(ncclAllGather(send, recv, static_cast<std::size_t>(count), nccl_type(type), comm_, stream_),
                "ncclAllGather");
}

core::Status Communicator::reduce_scatter(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = non_negative("ncclReduceScatter", count, type); !st) return st;
  return finish(
      ncclReduceScatter(send, recv, static_cast<std::size_t>(count), nccl_type(type), ncclSum, comm_, stream_),
      "ncclReduceScatter");
}

core::Status Communicator::all_to_all(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = non_negative("ncclAlltoAll", count, type); !st) return st;
  return finish(ncclAlltoAll(send, recv, static_cast<std::size_t>(count), nccl_type(type), comm_, stream_),
                "ncclAlltoAll");
}

core::Status Communicator::broadcast(void* buffer, std::int64_t count, DataType type, int root) {
  if (auto st = non_negative("ncclBroadcast", count, type); !st) return st;
  return finish(
      ncclBroadcast(buffer, buffer, static_cast<std::size_t>(count), nccl_type(type), root, comm_, stream_),
      "ncclBroadcast");
}

core::Status Communicator::send(const void* buffer, std::int64_t count, DataType type, int peer) {
  if (auto st = non_negative("ncclSend", count, type); !st) return st;
  return finish(ncclSend(buffer, static_cast<std::size_t>(count), nccl_type(type), peer, comm_, stream_), "ncclSend");
}

core::Status Communicator::recv(void* buffer, std::int64_t count, DataType type, int peer) {
  if (auto st = non_negative("ncclRecv", count, type); !st) return st;
  return finish(ncclRecv(buffer, static_cast<std::size_t>(count), nccl_type(type), peer, comm_, stream_), "ncclRecv");
}

core::Status Communicator::send_recv(const void* send_buffer, int dst, void* recv_buffer, int src,
                                     std::int64_t count, DataType type) {
  if (auto st = non_negative("ncclSend/ncclRecv", count, type); !st) return st;
  // Grouped, so the pair proceeds together (NCCL docs: point-to-point communication).
  ncclGroupStart();
  ncclResult_t a = ncclSend(send_buffer, static_cast<std::size_t>(count), nccl_type(type), dst, comm_, stream_);
  ncclResult_t b = ncclRecv(recv_buffer, static_cast<std::size_t>(count), nccl_type(type), src, comm_, stream_);
  ncclResult_t c = ncclGroupEnd();
  return finish(a != ncclSuccess ? a : (b != ncclSuccess ? b : c), "ncclSend/ncclRecv");
}

core::Status Communicator::barrier() {
  // NCCL has no barrier: a one-element all-reduce orders every member the same way.
  if (!barrier_buffer_.data()) {
    auto buf = allocate(4);
    if (!buf) return buf.status();
    barrier_buffer_ = std::move(*buf);
  }
  return all_reduce(barrier_buffer_.data(), barrier_buffer_.data(), 1, DataType::kUint32);
}

void Communicator::abort(const std::string& reason) {
  std::fprintf(stderr, "planck: %s\n", reason.c_str());
  if (!aborted_) {
    aborted_ = true;
    ncclCommAbort(comm_);
  }
}

DataType Communicator::exact_type(int bytes) const {
  return bytes == 2 ? DataType::kFloat16 : exec::Communicator::exact_type(bytes);
}

core::Result<Buffer> Communicator::allocate(std::int64_t bytes) {
  void* p = nullptr;
  if (auto st = cuda(cudaMalloc(&p, static_cast<std::size_t>(bytes > 0 ? bytes : 1)), "cudaMalloc"); !st) return st;
  return Buffer(p, bytes, [](void* q) { cudaFree(q); });
}

core::Status Communicator::to_device(Buffer& dst, const void* host, std::int64_t bytes) {
  if (bytes > dst.bytes()) return core::Status::error("copy of " + std::to_string(bytes) + " bytes into a device buffer of " + std::to_string(dst.bytes()));
  return cuda(cudaMemcpy(dst.data(), host, static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice), "cudaMemcpy");
}

core::Status Communicator::to_host(void* host, const Buffer& src, std::int64_t bytes) {
  if (bytes > src.bytes()) return core::Status::error("copy of " + std::to_string(bytes) + " bytes out of a device buffer of " + std::to_string(src.bytes()));
  return cuda(cudaMemcpy(host, src.data(), static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost), "cudaMemcpy");
}

core::Result<double> Communicator::timed(const std::function<core::Status()>& body) {
  // CUDA events bracket the work on the stream, as nccl-tests times its loop.
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream_);
  core::Status st = body();
  cudaEventRecord(stop, stream_);
  cudaError_t rc = cudaEventSynchronize(stop);
  float ms = 0;
  if (rc == cudaSuccess) rc = cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!st) return st;
  if (auto c = cuda(rc, "cudaEventElapsedTime"); !c) return c;
  return static_cast<double>(ms) / 1e3;
}

}  // namespace planck::exec::nccl
