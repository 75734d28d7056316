// SPDX-License-Identifier: Zlib
#pragma once

#include <string>

namespace bulletgpu::test {

/// The folder of real meshes and CCD ground truth (../shared/data, see its README.md) that tests
/// and benchmarks read: BULLETGPU_DATA_DIR when set and not empty, else the shared folder beside
/// the source tree this was built from.
std::string sharedDataDir();

} // namespace bulletgpu::test
