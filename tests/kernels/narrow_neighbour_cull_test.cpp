// SPDX-License-Identifier: Zlib
// The self contact query's neighbour cull (kernels/narrow/engine/neighbour_cull_cpu.h): candidates
// that share a vertex are skipped while their patch is proven apart, and every frame's contacts
// still equal the brute-force oracle's, as the mesh deforms into contacts between neighbours.
#include "kernels/narrow/engine/triangle_mesh_set.h"
#include "kernels/reference/brute_force_proximity.h"
#include "tests/kernels/proximity_test_support.h"
#include "tests/support/mesh_generators.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

using namespace bulletgpu;

namespace {

/// A flat n x n grid of side 1 in the xz plane.
PlyMesh flatGrid(std::uint32_t n) {
    return gridMesh(n, n, false, false, [](double u, double v, double* p) {
        p[0] = u;
        p[1] = 0;
        p[2] = v;
    });
}

/// The vertex pairs joined by an edge of `mesh`, lower index first.
std::set<std::pair<std::uint32_t, std::uint32_t>> edgesOf(const PlyMesh& mesh) {
    std::set<std::pair<std::uint32_t, std::uint32_t>> edges;
    for (std::size_t t = 0; t + 2 < mesh.indices.size(); t += 3) {
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t a = mesh.indices[t + k], b = mesh.indices[t + (k + 1) % 3];
            edges.insert({std::min(a, b), std::max(a, b)});
        }
    }
    return edges;
}

/// Vertex-face records whose vertex is joined by an edge to a corner of the face: contacts
/// between features of mesh neighbours, which only a patch not proven apart can report.
std::size_t neighbourVertexFaces(const PlyMesh& mesh, const std::vector<ProximityContact>& contacts) {
    const auto edges = edgesOf(mesh);
    std::size_t count = 0;
    for (const ProximityContact& c : contacts) {
        if (c.kind != static_cast<std::uint32_t>(ProximityKind::VertexFace)) continue;
        bool joined = false;
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t corner = mesh.indices[3 * static_cast<std::size_t>(c.featureB) + k];
            joined = joined || edges.count({std::min(c.featureA, corner), std::max(c.featureA, corner)}) > 0;
        }
        count += joined ? 1 : 0;
    }
    return count;
}

/// Queries `set`'s mesh 0 against itself at `d` and compares with the oracle on `mesh`.
void requireOracle(TriangleMeshSet& set, const PlyMesh& mesh, double d, std::vector<ProximityContact>& contacts) {
    ProximityOptions options;
    options.distance = d;
    set.findSelfProximity(0, options, contacts);
    REQUIRE(sameContacts(contacts, oracleProximity(oracleOf(mesh, 0), nullptr, d, false, true)));
}

} // namespace

TEST_CASE("Neighbour cull: a strip creased slowly until its neighbours touch keeps the oracle's contacts",
          "[narrow][proximity]") {
    // A 25 x 7 strip creased along its middle column of vertices, the crease closing by 3
    // degrees a frame until the halves lie nearly on each other: the patches along the crease
    // are measured while open, proven apart, then come into contact across the crease.
    constexpr std::uint32_t cColumns = 25, cRows = 7;
    const auto creased = [&](double angle) {
        return gridMesh(cColumns, cRows, false, false, [&](double u, double v, double* p) {
            const double x = 2 * u - 1;
            p[0] = x <= 0 ? x : x * std::cos(angle);
            p[1] = x <= 0 ? 0 : x * std::sin(angle);
            p[2] = 0.3 * v;
        });
    };
    const double d = 0.005;
    for (NarrowTraversal traversal : {NarrowTraversal::LeafWalk, NarrowTraversal::Fronts}) {
        PlyMesh strip = creased(0);
        TriangleMeshSet set(2);
        set.setTraversal(traversal);
        addTo(set, strip);
        std::vector<ProximityContact> contacts;
        std::uint64_t skipped = 0;
        for (int frame = 0; frame < 60; ++frame) {
            strip = creased(3.141592653589793 * 3 * frame / 180);
            if (frame > 0) set.setPositions(0, strip.positions.data());
            INFO("traversal " << int(traversal) << ", frame " << frame);
            requireOracle(set, strip, d, contacts);
            skipped += set.stats().neighboursSkipped;
        }
        // The cull was at work, and the last frames hold contacts between neighbours' features.
        REQUIRE(skipped > 0);
        REQUIRE(neighbourVertexFaces(strip, contacts) > 0);
    }
}

TEST_CASE("Neighbour cull: vertices that jump onto their neighbours' faces are found", "[narrow][proximity]") {
    // A jittered flat 14 x 14 grid; every fourth frame one vertex jumps to just above a face
    // of its ring's triangles that it is not a corner of, and back the next frame.
    constexpr std::uint32_t cSide = 14;
    const PlyMesh flat = flatGrid(cSide);
    const double edge = 1.0 / (cSide - 1), d = 0.05 * edge;
    std::mt19937 random(7);
    std::uniform_real_distribution<double> jitter(-0.01 * edge, 0.01 * edge);
    TriangleMeshSet set(2);
    addTo(set, flat);
    std::vector<ProximityContact> contacts;
    std::uint64_t skipped = 0;
    std::size_t jumpsFound = 0;
    for (int frame = 0; frame < 48; ++frame) {
        PlyMesh mesh = flat;
        for (float& c : mesh.positions) c += static_cast<float>(jitter(random));
        if (frame % 4 == 3) {
            // Cell (i, i) holds triangles (a, b, d) and (a, d, c) (gridMesh): b jumps over the
            // second, a neighbour of its triangle (a, b, d) that does not hold it.
            const std::uint32_t i = (frame / 4) % (cSide - 3) + 1, a = i * cSide + i, v = a + 1;
            const std::uint32_t* face = &mesh.indices[6 * static_cast<std::size_t>(i * (cSide - 1) + i) + 3];
            for (int k = 0; k < 3; ++k) {
                double centre = 0;
                for (int c = 0; c < 3; ++c) centre += mesh.positions[3 * face[c] + k] / 3;
                mesh.positions[3 * v + k] = static_cast<float>(centre + (k == 1 ? 0.5 * d : 0));
            }
        }
        if (frame > 0) set.setPositions(0, mesh.positions.data());
        INFO("frame " << frame);
        requireOracle(set, mesh, d, contacts);
        skipped += set.stats().neighboursSkipped;
        if (frame % 4 == 3) jumpsFound += neighbourVertexFaces(mesh, contacts) > 0 ? 1 : 0;
    }
    REQUIRE(skipped > 0);
    REQUIRE(jumpsFound == 12);
}

TEST_CASE("Neighbour cull: a wavy cloth moved rigidly far from the origin keeps the oracle's contacts",
          "[narrow][proximity]") {
    // Rigid motion moves no vertex relative to another: proven patches stay proven, at
    // coordinates of 10^5 where float spacing is about 0.008.
    const PlyMesh base = foldedCloth(12, 0.02, 0.06, 0.3);
    const double d = 0.05 * 2.0 / 11;
    TriangleMeshSet set(2);
    addTo(set, base);
    std::vector<ProximityContact> contacts;
    std::uint64_t skipped = 0;
    for (int frame = 0; frame < 12; ++frame) {
        PlyMesh mesh = base;
        const double angle = 0.2 * frame, offset = frame < 6 ? 0.5 * frame : 1e5 + frame;
        for (std::size_t i = 0; i < mesh.positions.size(); i += 3) {
            const double x = base.positions[i], z = base.positions[i + 2];
            mesh.positions[i] = static_cast<float>(std::cos(angle) * x - std::sin(angle) * z + offset);
            mesh.positions[i + 1] = static_cast<float>(base.positions[i + 1] + offset);
            mesh.positions[i + 2] = static_cast<float>(std::sin(angle) * x + std::cos(angle) * z);
        }
        if (frame > 0) set.setPositions(0, mesh.positions.data());
        INFO("frame " << frame);
        requireOracle(set, mesh, d, contacts);
        skipped += set.stats().neighboursSkipped;
    }
    REQUIRE(skipped > 0);
}
