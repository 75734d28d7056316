// SPDX-License-Identifier: Zlib
// Self-collision of the real ccd-frames meshes (shared/data, see its README.md) against the
// box-culled oracle, frame by frame, and a refit from one frame to the next. Skipped with a
// message when the data folder is absent.
#include "tests/support/ply_mesh.h"
#include "tests/support/shared_data.h"
#include <bulletgpu/TriangleMeshSet.h>
#include "kernels/reference/brute_force_triangles.h"

#include "support/test_skip.h"
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace bulletgpu;

namespace {

/// True when `path` can be opened.
bool readable(const std::string& path) { return std::ifstream(path).good(); }

/// One scene of ccd-frames: its two frames.
struct Scene {
    const char* name;
    const char* frames[2];
};

} // namespace

TEST_CASE("Self-collision of the ccd-frames meshes equals the box-culled oracle", "[narrow][data]") {
    const Scene scene =
        GENERATE(Scene{"cloth-funnel", {"227", "228"}}, Scene{"cloth-ball", {"cloth_ball92", "cloth_ball93"}},
                 Scene{"rod-twist", {"3036", "3037"}});
    const std::string folder = bulletgpu::test::sharedDataDir() + "/ccd-frames/" + scene.name + "/frames/";
    const std::string first = folder + scene.frames[0] + ".ply";
    if (!readable(first)) {
        bulletgpu::test::skipTestCase("no real data at " + first + " (set BULLETGPU_DATA_DIR)");
        return;
    }
    // One set with boxes, one with OBBs: both must give the oracle's pairs.
    TriangleMeshSet withBoxes(2), withObbs(2);
    std::uint32_t mesh = 0;
    std::vector<TriangleContact> contacts;
    for (int f = 0; f < 2; ++f) {
        const PlyMesh frame = readPlyMesh(folder + scene.frames[f] + ".ply");
        const auto triangles = static_cast<std::uint32_t>(frame.indices.size() / 3);
        const std::vector<TriangleContact> expected =
            sweptContacts(OracleMesh{frame.positions.data(), frame.indices.data(), triangles, nullptr, mesh}, nullptr);
        for (TriangleMeshSet* set : {&withBoxes, &withObbs}) {
            if (f == 0) {
                mesh = set->addMesh(frame.positions.data(), static_cast<std::uint32_t>(frame.positions.size() / 3),
                                    frame.indices.data(), triangles);
                if (set == &withObbs) set->setBoundingVolume(mesh, BoundingVolume::Obb);
            } else {
                set->setPositions(mesh, frame.positions.data());
            }
            set->findSelfContacts(mesh, contacts);
            REQUIRE(set->stats().refitted == (f == 0 ? 0u : 1u));
            const std::string invalid = set->validate();
            INFO(invalid);
            REQUIRE(invalid.empty());
            INFO(scene.name << " frame " << scene.frames[f] << (set == &withObbs ? " with OBBs: " : ": ") << triangles
                            << " triangles, " << contacts.size() << " intersecting pairs, oracle " << expected.size());
            REQUIRE(contacts.size() == expected.size());
            std::size_t mismatches = 0;
            for (std::size_t c = 0; c < contacts.size(); ++c) {
                if (std::memcmp(&contacts[c], &expected[c], sizeof(TriangleContact)) != 0) ++mismatches;
            }
            REQUIRE(mismatches == 0);
            // The refitted tree and a fresh build agree.
            set->requestRebuild(mesh);
            std::vector<TriangleContact> rebuilt;
            set->findSelfContacts(mesh, rebuilt);
            REQUIRE(rebuilt.size() == contacts.size());
            REQUIRE((contacts.empty() ||
                     std::memcmp(rebuilt.data(), contacts.data(), contacts.size() * sizeof(TriangleContact)) == 0));
        }
    }
}
