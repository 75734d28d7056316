// SPDX-License-Identifier: Zlib
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

/// Error handling of the CUDA layer: every runtime call and launch goes through these.

namespace bulletgpu {

/// Thrown when a CUDA call fails; the broad phase catches it and falls back to the CPU.
class CudaError : public std::runtime_error {
public:
    /// Describes the failed call with its location and CUDA's name and text of the error.
    CudaError(cudaError_t error, const char* call, const char* file, int line)
        : std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) +
                             ") in " + call + " at " + file + ":" + std::to_string(line)),
          m_error(error) {}

    /// The CUDA error code.
    cudaError_t code() const { return m_error; }

private:
    cudaError_t m_error;
};

} // namespace bulletgpu

/// Throws bulletgpu::CudaError when a CUDA runtime call fails. The thread's last-error state is
/// cleared first, so that a caught error (an allocation that failed, say) does not fail the
/// next launch check too.
#define BULLETGPU_CUDA_TRY(call)                                                                                       \
    do {                                                                                                               \
        const cudaError_t bulletgpuStatus = (call);                                                                    \
        if (bulletgpuStatus != cudaSuccess) {                                                                          \
            static_cast<void>(cudaGetLastError());                                                                     \
            throw ::bulletgpu::CudaError(bulletgpuStatus, #call, __FILE__, __LINE__);                                  \
        }                                                                                                              \
    } while (0)

#if defined(BULLETGPU_CUDA_DEBUG_SYNC)
/// Checks a kernel launch, and with BULLETGPU_CUDA_DEBUG_SYNC waits for it too.
#define BULLETGPU_CUDA_CHECK_LAUNCH(stream)                                                                            \
    do {                                                                                                               \
        BULLETGPU_CUDA_TRY(cudaGetLastError());                                                                        \
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));                                                             \
    } while (0)
#else
/// Checks a kernel launch, and with BULLETGPU_CUDA_DEBUG_SYNC waits for it too.
#define BULLETGPU_CUDA_CHECK_LAUNCH(stream) BULLETGPU_CUDA_TRY(cudaGetLastError())
#endif
