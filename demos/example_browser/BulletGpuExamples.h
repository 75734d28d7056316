// SPDX-License-Identifier: Zlib
#pragma once

/// Registers every scene file of BulletGpu's scenes folder with Bullet's ExampleBrowser, in a
/// "BulletGpu" folder listed before Bullet's own entries, each running on bulletgpu::Broadphase
/// (Backend::Auto, or BULLETGPU_BACKEND). Call it before the browser initializes its entries;
/// bulletgpu-example-browser (tools/example-browser.sh) does, first thing in main(). The scenes
/// come from BULLETGPU_SCENES_DIR when set, else from the installed package's share folder, else
/// from the source tree the library was built from.
void registerBulletGpuExamples();

/// For headless smoke runs: the next BulletGpu entry to start prints one line
/// ("bulletgpu-example: <entry>: ... substeps ...") once it has run for reportAfterSeconds of
/// wall-clock time and stepped at least once, so that a script can take a screenshot of the
/// window, then asks the browser to exit lingerSeconds later. (The browser's own PNG dump is not
/// used: under Mesa's software OpenGL it loses the 3D view.)
void setBulletGpuExampleSmokeRun(double reportAfterSeconds, double lingerSeconds);
