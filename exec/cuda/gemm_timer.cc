// cuBLAS implementation of exec/gemm_timer.h, compiled into the GPU plugin (exec/gpu_plugin.h).

#include "exec/cuda/gemm_timer_cublas.h"

#include <algorithm>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace planck::exec {
namespace {

core::Status cuda_error(const char* what, cudaError_t e) {
  return core::Status::error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

core::Result<GemmTimings> cublas_time_gemms(const std::vector<GemmShape>& shapes, int warmup, int iters) {
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    return core::Status::error(std::string("no CUDA GPU on this host (cudaGetDeviceCount: ") +
                               (e == cudaSuccess ? "0 devices" : cudaGetErrorString(e)) +
                               "): run calibrate --compute on a GPU host");
  }
  GemmTimings out;
  cudaDeviceProp prop{};
  if (cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) return cuda_error("cudaGetDeviceProperties", e);
  out.device = prop.name;
  long long max_a = 0, max_b = 0, max_c = 0;
  for (const auto& s : shapes) {
    max_a = std::max(max_a, s.m * s.k);
    max_b = std::max(max_b, s.k * s.n);
    max_c = std::max(max_c, s.m * s.n);
  }
  void *a = nullptr, *b = nullptr, *c = nullptr;
  const std::size_t half = 2;
  if (cudaError_t e = cudaMalloc(&a, static_cast<std::size_t>(max_a) * half); e != cudaSuccess) return cuda_error("cudaMalloc A", e);
  if (cudaError_t e = cudaMalloc(&b, static_cast<std::size_t>(max_b) * half); e != cudaSuccess) return cuda_error("cudaMalloc B", e);
  if (cudaError_t e = cudaMalloc(&c, static_cast<std::size_t>(max_c) * half); e != cudaSuccess) return cuda_error("cudaMalloc C", e);
  cudaMemset(a, 0, static_cast<std::size_t>(max_a) * half);
  cudaMemset(b, 0, static_cast<std::size_t>(max_b) * half);
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return core::Status::error("cublasCreate failed");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const float alpha = 1.0f, beta = 0.0f;
  core::Status failed = core::Status::ok();
  for (const auto& s : shapes) {
    // Column-major C[m,n] = A[m,k] B[k,n], as the frameworks' row-major X W^T maps onto cuBLAS.
    auto call = [&] {
      return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s.m), static_cast<int>(s.n),
                          static_cast<int>(s.k), &alpha, a, CUDA_R_16BF, static_cast<int>(s.m), b, CUDA_R_16BF,
                          static_cast<int>(s.k), &beta, c, CUDA_R_16BF, static_cast<int>(s.m), CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT);
    };
    for (int i = 0; i < warmup; ++i) call();
    cudaEventRecord(start);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < iters && st == CUBLAS_STATUS_SUCCESS; ++i) st = call();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    if (st != CUBLAS_STATUS_SUCCESS) {
      failed = core::Status::error("cublasGemmEx failed for m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                                   " k=" + std::to_string(s.k) + " (status " + std::to_string(static_cast<int>(st)) + ")");
      break;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    out.seconds.push_back(static_cast<double>(ms) / 1e3 / iters);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  if (!failed) return failed;
  return out;
}

}  // namespace planck::exec
