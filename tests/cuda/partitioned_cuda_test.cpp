// SPDX-License-Identifier: Zlib
// K slabs on streams of one CUDA device against the CPU finder: identical pair sets and deltas,
// frame by frame, with boxes crossing the cuts, churn, a huge box and exact stores. Skips with a
// warning when no device is usable.
#include "kernels/common/cuda_device.h"
#include "kernels/partition/partitioned_pair_finder.h"
#include "kernels/sap/pair_finder_cpu.h"
#include "support/random_scenes.h"
#include "support/cuda_skip.h"
#include "support/test_skip.h"

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

using namespace bulletgpu;
using namespace bulletgpu::test;

TEST_CASE("Partitioned CUDA finder: K streams on one device equal the CPU finder", "[cuda][partition]") {
    if (!cudaDeviceOrSkip("partitioned CUDA test: ")) return;
    const int slabs = GENERATE(1, 2, 3, 4, 7);
    const SceneKind kind = GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis);
    const bool exact = GENERATE(false, true);
    CAPTURE(slabs, sceneName(kind), exact);
    const std::size_t n = 20000;
    SceneGenerator generator(static_cast<std::uint32_t>(slabs * 7 + static_cast<int>(kind)));
    std::vector<TestBox> boxes = generator.scene(kind, n);
    BoxStore gpuStore(exact), cpuStore(exact);
    for (std::uint32_t i = 0; i < n; ++i) {
        gpuStore.insert(i, boxes[i].min, boxes[i].max, 1, ~0u);
        cpuStore.insert(i, boxes[i].min, boxes[i].max, 1, ~0u);
    }
    // A static plane's box spans every slab.
    const double planeMin[3] = {-1e18, -1e18, -1e18}, planeMax[3] = {1e18, 0.5, 1e18};
    gpuStore.insert(static_cast<std::uint32_t>(n), planeMin, planeMax, 1, ~0u);
    cpuStore.insert(static_cast<std::uint32_t>(n), planeMin, planeMax, 1, ~0u);
    const std::unique_ptr<PairFinder> gpu = createPartitionedCudaPairFinder(slabs, {0});
    PairFinderCpu cpu(2);
    for (int frame = 0; frame < 10; ++frame) {
        PairDeltas gpuDeltas, cpuDeltas;
        gpu->update(gpuStore, true, gpuDeltas);
        cpu.update(cpuStore, true, cpuDeltas);
        REQUIRE(gpuDeltas.found == cpuDeltas.found);
        REQUIRE(gpuDeltas.lost == cpuDeltas.lost);
        REQUIRE(static_cast<const PartitionedPairFinder&>(*gpu).pairs() == cpu.pairs());
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!gpuStore.isLive(i)) continue;
            generator.jitter(boxes[i], frame % 3 == 2 ? 4.0 : 0.1);
            gpuStore.update(i, boxes[i].min, boxes[i].max);
            cpuStore.update(i, boxes[i].min, boxes[i].max);
        }
        // Churn: some boxes leave, some come back elsewhere.
        for (int k = 0; k < 50; ++k) {
            const std::uint32_t slot = generator.below(static_cast<std::uint32_t>(n));
            if (gpuStore.isLive(slot)) {
                gpuStore.erase(slot);
                cpuStore.erase(slot);
            } else {
                boxes[slot] = generator.box(kind, n);
                gpuStore.insert(slot, boxes[slot].min, boxes[slot].max, 1, ~0u);
                cpuStore.insert(slot, boxes[slot].min, boxes[slot].max, 1, ~0u);
            }
        }
    }
}
