// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/cuda_check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

/// Owning wrappers of the CUDA objects the engines (pair finder, sphere chains, narrow phase)
/// keep from frame to frame. Their destructors ignore errors, so they never throw.

namespace bulletgpu::detail {

/// Capacity after growing to hold `count` elements: at least half again the old capacity.
inline std::uint64_t grownCapacity(std::uint64_t capacity, std::uint64_t count) {
    return std::max(count, capacity + capacity / 2);
}

/// Device array that only grows. Growing waits for `stream` (which may still use the old
/// array), frees it first and discards its contents.
template <typename T>
class DeviceBuffer {
public:
    /// An empty buffer (null data, no capacity).
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    /// Frees the array.
    ~DeviceBuffer() { cudaFree(m_data); }

    /// Makes room for at least `count` elements; returns whether the array was replaced.
    bool reserve(std::uint64_t count, cudaStream_t stream) {
        if (count <= m_capacity) return false;
        const std::uint64_t capacity = grownCapacity(m_capacity, count);
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        T* old = m_data;
        m_data = nullptr;
        m_capacity = 0;
        BULLETGPU_CUDA_TRY(cudaFree(old));
        BULLETGPU_CUDA_TRY(cudaMalloc(&m_data, capacity * sizeof(T)));
        m_capacity = capacity;
        return true;
    }

    /// The array (null before the first reserve).
    T* data() const { return m_data; }
    /// Elements the array holds.
    std::uint64_t capacity() const { return m_capacity; }

private:
    T* m_data = nullptr;
    std::uint64_t m_capacity = 0;
};

/// Page-locked host array that only grows, for asynchronous copies. Growing waits for `stream`
/// (which may still copy from the old array) and discards the contents.
template <typename T>
class PinnedBuffer {
public:
    /// An empty buffer (null data, no capacity).
    PinnedBuffer() = default;
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    /// Frees the array.
    ~PinnedBuffer() { cudaFreeHost(m_data); }

    /// Makes room for at least `count` elements.
    void reserve(std::uint64_t count, cudaStream_t stream) {
        if (count <= m_capacity) return;
        const std::uint64_t capacity = grownCapacity(m_capacity, count);
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        T* old = m_data;
        m_data = nullptr;
        m_capacity = 0;
        BULLETGPU_CUDA_TRY(cudaFreeHost(old));
        BULLETGPU_CUDA_TRY(cudaMallocHost(&m_data, capacity * sizeof(T)));
        m_capacity = capacity;
    }

    /// The array (null before the first reserve).
    T* data() const { return m_data; }

private:
    T* m_data = nullptr;
    std::uint64_t m_capacity = 0;
};

/// Makes a device current for a scope and restores the caller's device afterwards.
class DeviceScope {
public:
    /// Switches to `device` when it is not already current.
    explicit DeviceScope(int device) : m_device(device) {
        BULLETGPU_CUDA_TRY(cudaGetDevice(&m_previous));
        if (m_previous != m_device) BULLETGPU_CUDA_TRY(cudaSetDevice(m_device));
    }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;
    /// Restores the caller's device.
    ~DeviceScope() {
        if (m_previous != m_device) cudaSetDevice(m_previous);
    }

private:
    int m_device;
    int m_previous = 0;
};

/// A non-blocking CUDA stream on one device.
class CudaStream {
public:
    /// Creates the stream on `device`.
    explicit CudaStream(int device) {
        const DeviceScope scope(device);
        BULLETGPU_CUDA_TRY(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    }
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    /// Waits for the stream's work, then destroys it.
    ~CudaStream() {
        cudaStreamSynchronize(m_stream);
        cudaStreamDestroy(m_stream);
    }

    /// The stream handle.
    cudaStream_t get() const { return m_stream; }

private:
    cudaStream_t m_stream = nullptr;
};

/// A fixed set of timing events on one device.
template <int Count>
class CudaEvents {
public:
    /// Creates the events on `device`.
    explicit CudaEvents(int device) {
        const DeviceScope scope(device);
        try {
            for (cudaEvent_t& event : m_events) BULLETGPU_CUDA_TRY(cudaEventCreate(&event));
        } catch (...) {
            destroy();
            throw;
        }
    }
    CudaEvents(const CudaEvents&) = delete;
    CudaEvents& operator=(const CudaEvents&) = delete;
    /// Destroys the events.
    ~CudaEvents() { destroy(); }

    /// Event number `index`.
    cudaEvent_t operator[](int index) const { return m_events[index]; }

private:
    void destroy() {
        for (cudaEvent_t event : m_events) {
            if (event != nullptr) cudaEventDestroy(event);
        }
    }

    cudaEvent_t m_events[Count] = {};
};

} // namespace bulletgpu::detail
