// SPDX-License-Identifier: Zlib
// main() of bulletgpu-example-browser: registers BulletGpu's entries, then runs the main() of
// Bullet's examples/ExampleBrowser/main.cpp, which this build compiles as bulletExampleBrowserMain.
//   --bulletgpu_smoke=<s> (with --start_demo_name=<entry>): a smoke run: the entry prints a line
//   once it has run s seconds and stepped, and the browser exits cSmokeLingerSeconds later.
#include "BulletGpuExamples.h"

#include <cstdlib>
#include <cstring>
#include <vector>

int bulletExampleBrowserMain(int argc, char* argv[]);

namespace {

/// The value of --name=value, or nullptr.
const char* optionValue(const char* argument, const char* name) {
    const std::size_t length = std::strlen(name);
    if (std::strncmp(argument, name, length) != 0 || argument[length] != '=') return nullptr;
    return argument + length + 1;
}

} // namespace

int main(int argc, char* argv[]) {
    constexpr double cSmokeLingerSeconds = 2.0; // time for a script to take its screenshot
    double smokeSeconds = -1;
    std::vector<char*> browserArguments;
    for (int i = 0; i < argc; ++i) {
        if (const char* value = optionValue(argv[i], "--bulletgpu_smoke")) {
            smokeSeconds = std::atof(value);
        } else {
            browserArguments.push_back(argv[i]);
        }
    }
    if (smokeSeconds >= 0) setBulletGpuExampleSmokeRun(smokeSeconds, cSmokeLingerSeconds);
    registerBulletGpuExamples();
    browserArguments.push_back(nullptr);
    return bulletExampleBrowserMain(int(browserArguments.size()) - 1, browserArguments.data());
}
