// SPDX-License-Identifier: Zlib
#pragma once

/// BULLETGPU_HD marks per-element functions compiled for both the host and the device.
#if defined(__CUDACC__)
#define BULLETGPU_HD __host__ __device__ __forceinline__
#else
#define BULLETGPU_HD inline
#endif
