#include "exec/communicator.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace planck::exec {

int dtype_size(DataType type) {
  switch (type) {
    case DataType::kUint8: return 1;
    case DataType::kUint16: return 2;
    case DataType::kFloat16: return 2;
    case DataType::kUint32: return 4;
    case DataType::kUint64: return 8;
  }
  return 1;
}

const char* dtype_name(DataType type) {
  switch (type) {
    case DataType::kUint8: return "uint8";
    case DataType::kUint16: return "uint16";
    case DataType::kFloat16: return "float16";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
  }
  return "?";
}

DataType Communicator::exact_type(int bytes) const {
  switch (bytes) {
    case 1: return DataType::kUint8;
    case 2: return DataType::kUint16;
    case 8: return DataType::kUint64;
    default: return DataType::kUint32;
  }
}

core::Result<Buffer> Communicator::allocate(std::int64_t bytes) {
  if (bytes < 0) return core::Status::error("cannot allocate a buffer of " + std::to_string(bytes) + " bytes");
  // One byte at least, so a zero-byte collective still gets a valid pointer.
  void* p = std::malloc(static_cast<std::size_t>(bytes > 0 ? bytes : 1));
  if (!p) return core::Status::error("out of host memory allocating " + std::to_string(bytes) + " bytes");
  return Buffer(p, bytes, [](void* q) { std::free(q); });
}

core::Status Communicator::to_device(Buffer& dst, const void* host, std::int64_t bytes) {
  if (bytes > dst.bytes()) return core::Status::error("copy of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(dst.bytes()));
  if (bytes > 0) std::memcpy(dst.data(), host, static_cast<std::size_t>(bytes));
  return core::Status::ok();
}

core::Status Communicator::to_host(void* host, const Buffer& src, std::int64_t bytes) {
  if (bytes > src.bytes()) return core::Status::error("copy of " + std::to_string(bytes) + " bytes out of a buffer of " + std::to_string(src.bytes()));
  if (bytes > 0) std::memcpy(host, src.data(), static_cast<std::size_t>(bytes));
  return core::Status::ok();
}

core::Result<double> Communicator::timed(const std::function<core::Status()>& body) {
  auto t0 = std::chrono::steady_clock::now();
  core::Status st = body();
  auto t1 = std::chrono::steady_clock::now();
  if (!st) return st;
  return std::chrono::duration<double>(t1 - t0).count();
}

core::Result<std::int64_t> element_count(std::int64_t bytes, DataType type) {
  const int size = dtype_size(type);
  if (bytes < 0 || bytes % size != 0) {
    return core::Status::error(std::to_string(bytes) + " bytes is not a whole number of " + dtype_name(type) +
                               " elements (" + std::to_string(size) + " bytes each)");
  }
  return bytes / size;
}

}  // namespace planck::exec
