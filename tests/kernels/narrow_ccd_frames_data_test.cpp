// SPDX-License-Identifier: Zlib
// The whole-frame CCD query (kernels/narrow/ccd/ccd_frame_query.h) on the real ccd-frames scenes
// (shared/data, see its README.md; skipped with a message when absent): every vertex-face and
// edge-edge pair that the exact ground truth says collides must be among the candidates and be
// reported; the reported pairs outside the ground truth are counted.
#include "kernels/narrow/ccd/ccd_frame_query.h"
#include "tests/support/ply_mesh.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_skip.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace bulletgpu;

namespace {

/// The whole file as text (empty when it cannot be read).
std::string readText(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Every non-negative integer of a JSON array of index pairs, in order.
std::vector<std::uint64_t> readIntegers(const std::string& path) {
    const std::string text = readText(path);
    std::vector<std::uint64_t> values;
    for (std::size_t i = 0; i < text.size();) {
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
            ++i;
            continue;
        }
        std::uint64_t value = 0;
        for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
            value = 10 * value + (text[i] - '0');
        values.push_back(value);
    }
    return values;
}

/// The booleans of a JSON array, in order.
std::vector<bool> readBooleans(const std::string& path) {
    const std::string text = readText(path);
    std::vector<bool> values;
    for (std::size_t i = text.find_first_of("tf"); i != std::string::npos; i = text.find_first_of("tf", i + 1)) {
        values.push_back(text[i] == 't');
    }
    return values;
}

/// One scene: its folder and the two frames' names.
struct Scene {
    const char* name;      ///< Folder under ccd-frames.
    const char* frames[2]; ///< PLY names at t = 0 and t = 1.
    const char* step;      ///< Prefix of the ground-truth files.
};

/// Ground-truth pairs of one kind that are in `sorted` (sorted by featurePairBefore).
std::size_t countIn(const std::vector<CcdFeaturePair>& pairs, const std::vector<CcdFeaturePair>& sorted) {
    std::size_t found = 0;
    for (const CcdFeaturePair& pair : pairs)
        found += std::binary_search(sorted.begin(), sorted.end(), pair, featurePairBefore);
    return found;
}

} // namespace

TEST_CASE("CCD frame query reports every colliding pair of the ccd-frames scenes", "[narrow][ccd][data]") {
#if defined(__SANITIZE_ADDRESS__)
    // Sanitized builds (CI, 2 cores) run the small scene only: the others take seconds each.
    const Scene scene = Scene{"cloth-funnel", {"227", "228"}, "227"};
#else
    const Scene scene = GENERATE(Scene{"cloth-funnel", {"227", "228"}, "227"},
                                 Scene{"cloth-ball", {"cloth_ball92", "cloth_ball93"}, "92"},
                                 Scene{"rod-twist", {"3036", "3037"}, "3036"});
#endif
    const std::string folder = bulletgpu::test::sharedDataDir() + "/ccd-frames/" + scene.name + "/";
    if (!std::ifstream(folder + "frames/" + scene.frames[0] + ".ply").good()) {
        bulletgpu::test::skipTestCase("no ccd-frames at " + folder + " (set BULLETGPU_DATA_DIR)");
        return;
    }
    const PlyMesh start = readPlyMesh(folder + "frames/" + scene.frames[0] + ".ply");
    const PlyMesh end = readPlyMesh(folder + "frames/" + scene.frames[1] + ".ply");
    REQUIRE(start.indices == end.indices);
    REQUIRE(start.exactPositions.size() == end.exactPositions.size());
    const auto vertices = static_cast<std::uint32_t>(start.exactPositions.size() / 3);
    const auto triangles = static_cast<std::uint32_t>(start.indices.size() / 3);

    CcdFrameQuery query;
    CcdFrameOptions options;
    options.threads = 2;
    CcdFrameResult result;
    query.runSelf(
        CcdMesh{start.exactPositions.data(), end.exactPositions.data(), vertices, start.indices.data(), triangles},
        options, result);

    // Ground-truth ids: vertices, then edges, then faces; edges ordered by (higher, lower) vertex.
    const std::vector<std::uint32_t>& edges = query.edgesOf(0);
    const auto edgeCount = static_cast<std::uint32_t>(edges.size() / 2);
    std::vector<std::uint32_t> truthEdge(edgeCount);
    for (std::uint32_t e = 0; e < edgeCount; ++e) truthEdge[e] = e;
    std::sort(truthEdge.begin(), truthEdge.end(), [&](std::uint32_t x, std::uint32_t y) {
        return edges[2 * x + 1] < edges[2 * y + 1] ||
               (edges[2 * x + 1] == edges[2 * y + 1] && edges[2 * x] < edges[2 * y]);
    });
    std::vector<CcdFeaturePair> truth;
    std::size_t pairsListed = 0;
    for (const bool vertexFace : {true, false}) {
        const std::string kind = vertexFace ? "vf" : "ee";
        const std::vector<std::uint64_t> ids = readIntegers(folder + "boxes/" + scene.step + kind + ".json");
        const std::vector<bool> collides = readBooleans(folder + "mma_bool/" + scene.step + kind + "_mma_bool.json");
        REQUIRE(ids.size() == 2 * collides.size());
        pairsListed += collides.size();
        for (std::size_t q = 0; q < collides.size(); ++q) {
            if (!collides[q]) continue;
            const std::uint64_t x = ids[2 * q], y = ids[2 * q + 1];
            if (vertexFace) {
                REQUIRE(x < vertices);
                REQUIRE(y >= vertices + edgeCount);
                REQUIRE(y < vertices + edgeCount + triangles);
                truth.push_back({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y - vertices - edgeCount),
                                 CcdFeatureKind::VertexFace});
            } else {
                REQUIRE(x >= vertices);
                REQUIRE(y >= vertices);
                REQUIRE(x < vertices + edgeCount);
                REQUIRE(y < vertices + edgeCount);
                const std::uint32_t a = truthEdge[x - vertices], b = truthEdge[y - vertices];
                truth.push_back({std::min(a, b), std::max(a, b), CcdFeatureKind::EdgeEdge});
            }
        }
    }
    std::sort(truth.begin(), truth.end(), featurePairBefore);

    std::vector<CcdFeaturePair> candidates = query.candidates(), reported;
    std::sort(candidates.begin(), candidates.end(), featurePairBefore);
    for (const CcdImpact& impact : result.impacts) reported.push_back(impact.pair);
    const std::size_t candidatesFound = countIn(truth, candidates), reportedFound = countIn(truth, reported);
    const std::size_t falsePositives = reported.size() - reportedFound;
    const CcdFrameCounts& c = result.counts;
    WARN(scene.name << ": " << triangles << " triangles, " << c.trianglePairs << " triangle pairs, " << c.featurePairs
                    << " feature pairs, " << c.firstBoxCulled << " ruled out on the first box, " << c.planeCulled
                    << " plane-separated, " << c.exactTests << " exact tests, " << c.impacts << " impacts ("
                    << c.undecided << " undecided), earliest toi " << result.earliestToi << "; ground truth "
                    << truth.size() << " colliding of " << pairsListed << " listed, " << candidatesFound
                    << " among the candidates, " << reportedFound << " reported; false positives " << falsePositives);
    REQUIRE(candidatesFound == truth.size());
    REQUIRE(reportedFound == truth.size());
}
