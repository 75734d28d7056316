// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/cuda_device.h"
#include "tests/support/test_skip.h"

#include <string>

namespace bulletgpu::test {

/// Whether device 0 can run the tests; when it cannot, skips the test case, saying why: `what`
/// (the test's name and a colon, such as "CCD CUDA test: ") followed by the probe's reason.
inline bool cudaDeviceOrSkip(const std::string& what) {
    const CudaDeviceProbe probe = probeCudaDevice(0);
    if (!probe.usable) skipTestCase(what + probe.reason);
    return probe.usable;
}

} // namespace bulletgpu::test
