// SPDX-License-Identifier: Zlib
#pragma once

/// Registers every scene file of BulletGpu's scenes/ folder with Bullet's ExampleBrowser, in a
/// "BulletGpu" folder, each running on bulletgpu::Broadphase (Backend::Auto). Call it before the
/// browser initializes its entries, for example first thing in main() of
/// examples/ExampleBrowser/main.cpp.
void registerBulletGpuExamples();
