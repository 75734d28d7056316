// SPDX-License-Identifier: Zlib
// Catch2's runner, with skipped test cases (support/test_skip.h) turned into ctest's skip code.
#define CATCH_CONFIG_RUNNER
#include "support/test_skip.h"

#include <catch2/catch.hpp>

#include <cstdio>

namespace {

int gCasesStarted = 0;
int gCasesSkipped = 0;
bool gCurrentCaseSkipped = false;

/// Counts the test cases a run starts, and those that skipped (once, however many generator
/// values or sections called skipTestCase).
struct CaseCounter : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        TestEventListenerBase::testCaseStarting(info);
        ++gCasesStarted;
        gCurrentCaseSkipped = false;
    }
    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        TestEventListenerBase::testCaseEnded(stats);
        if (gCurrentCaseSkipped) ++gCasesSkipped;
    }
};

} // namespace

CATCH_REGISTER_LISTENER(CaseCounter)

void bulletgpu::test::skipTestCase(const std::string& reason) {
    gCurrentCaseSkipped = true;
    std::printf("SKIPPED: %s\n", reason.c_str());
    std::fflush(stdout);
}

int main(int argc, char* argv[]) {
    const int result = Catch::Session().run(argc, argv);
    if (result == 0 && gCasesStarted > 0 && gCasesSkipped == gCasesStarted) return bulletgpu::test::cSkipExitCode;
    return result;
}
