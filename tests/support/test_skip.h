// SPDX-License-Identifier: Zlib
#pragma once

#include <string>

namespace bulletgpu::test {

/// The exit code of a test executable whose every started test case was skipped; ctest shows such
/// a test as skipped (the tests carry SKIP_RETURN_CODE), never as passed.
constexpr int cSkipExitCode = 77;

/// Marks the running test case as skipped because it cannot run here (no GPU, no data), printing
/// why. Return from the test case after calling it. A run of the executable that started only
/// skipped test cases (ctest runs one per process) exits with cSkipExitCode; a run with others
/// exits as they decide, the skips printed.
void skipTestCase(const std::string& reason);

} // namespace bulletgpu::test
