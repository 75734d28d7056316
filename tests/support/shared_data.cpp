// SPDX-License-Identifier: Zlib
#include "tests/support/shared_data.h"

#include <cstdlib>

namespace bulletgpu::test {

std::string sharedDataDir() {
    const char* fromEnvironment = std::getenv("BULLETGPU_DATA_DIR");
    return fromEnvironment != nullptr && *fromEnvironment != 0 ? fromEnvironment : BULLETGPU_DEFAULT_DATA_DIR;
}

} // namespace bulletgpu::test
