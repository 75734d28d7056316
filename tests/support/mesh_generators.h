// SPDX-License-Identifier: Zlib
#pragma once

#include "tests/support/ply_mesh.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

/// Procedural triangle meshes for tests and benchmarks: grids, tori, spheres, cubes, soups and
/// piles of bodies.

namespace bulletgpu {

/// A grid of nu x nv vertices with two triangles per cell, at positions place(u, v) for
/// u, v in [0, 1].
template <typename Place>
PlyMesh gridMesh(std::uint32_t nu, std::uint32_t nv, bool wrapU, bool wrapV, Place place) {
    PlyMesh mesh;
    for (std::uint32_t j = 0; j < nv; ++j) {
        for (std::uint32_t i = 0; i < nu; ++i) {
            const double u = wrapU ? double(i) / nu : double(i) / (nu - 1);
            const double v = wrapV ? double(j) / nv : double(j) / (nv - 1);
            double p[3];
            place(u, v, p);
            for (double c : p) mesh.positions.push_back(static_cast<float>(c));
        }
    }
    const std::uint32_t cellsU = wrapU ? nu : nu - 1, cellsV = wrapV ? nv : nv - 1;
    for (std::uint32_t j = 0; j < cellsV; ++j) {
        for (std::uint32_t i = 0; i < cellsU; ++i) {
            const std::uint32_t a = j * nu + i, b = j * nu + (i + 1) % nu;
            const std::uint32_t c = ((j + 1) % nv) * nu + i, d = ((j + 1) % nv) * nu + (i + 1) % nu;
            mesh.indices.insert(mesh.indices.end(), {a, b, d, a, d, c});
        }
    }
    return mesh;
}

/// A square cloth of side 2 folded in half along x = 0 onto itself, the upper layer waving by
/// `amplitude` around a gap of `gap`, so that it passes through the lower layer; `phase`
/// animates the waves.
inline PlyMesh foldedCloth(std::uint32_t n, double gap, double amplitude, double phase) {
    return gridMesh(n, n, false, false, [&](double u, double v, double* p) {
        const double x = 2 * u - 1;
        const double wave = amplitude * std::sin(7 * x + 5 * v + phase) * std::cos(4 * v - phase);
        const double bend = 0.5 * gap * (1 - std::cos(3.141592653589793 * std::fmin(std::fabs(x) * 20, 1.0)));
        p[0] = -std::fabs(x) + 0.01 * std::sin(3 * v + phase);
        p[1] = x > 0 ? bend + wave * std::fmin(x * 5, 1.0) : 0.1 * amplitude * std::sin(9 * v + 3 * x);
        p[2] = 2 * v - 1;
    });
}

/// foldedCloth(n, 0.02, 0.06, phase) draped over a ball of radius 0.6 at the origin, falling onto it
/// as `phase` grows: both layers follow the ball's top and hang down past its rim, so the
/// fold's crossings persist while the whole sheet moves (the animated cloth-over-sphere scene).
inline PlyMesh drapedCloth(std::uint32_t n, double phase) {
    PlyMesh mesh = foldedCloth(n, 0.02, 0.06, phase);
    const double drop = phase < 2.0 ? 0.5 * (1 - phase / 2.0) : 0.0;
    for (std::size_t v = 0; v < mesh.positions.size(); v += 3) {
        const double x = mesh.positions[v], z = mesh.positions[v + 2];
        const double r = std::sqrt(x * x + z * z), radius = 0.6;
        const double surface = r < radius ? std::sqrt(radius * radius - r * r) : -1.5 * (r - radius);
        mesh.positions[v + 1] = static_cast<float>(mesh.positions[v + 1] + surface + drop);
    }
    return mesh;
}

/// A torus of centre-line radius `major` and tube radius `minor` around the z axis.
inline PlyMesh torusMesh(std::uint32_t nu, std::uint32_t nv, double major, double minor) {
    return gridMesh(nu, nv, true, true, [&](double u, double v, double* p) {
        const double a = 6.283185307179586 * u, b = 6.283185307179586 * v;
        p[0] = (major + minor * std::cos(b)) * std::cos(a);
        p[1] = (major + minor * std::cos(b)) * std::sin(a);
        p[2] = minor * std::sin(b);
    });
}

/// A UV sphere of `radius` around `centre`.
inline PlyMesh sphereMesh(std::uint32_t nu, std::uint32_t nv, const double* centre, double radius) {
    return gridMesh(nu, nv, true, false, [&](double u, double v, double* p) {
        const double a = 6.283185307179586 * u, b = 3.141592653589793 * (v - 0.5);
        p[0] = centre[0] + radius * std::cos(b) * std::cos(a);
        p[1] = centre[1] + radius * std::cos(b) * std::sin(a);
        p[2] = centre[2] + radius * std::sin(b);
    });
}

/// A square cloth of side 2 in the plane y = 0, dented downwards around x = z = 0 by `depth`
/// over `radius` (a cloth under a pressing ball).
inline PlyMesh dentedCloth(std::uint32_t n, double radius, double depth) {
    return gridMesh(n, n, false, false, [&](double u, double v, double* p) {
        const double x = 2 * u - 1, z = 2 * v - 1;
        const double r2 = (x * x + z * z) / (radius * radius);
        p[0] = x;
        p[1] = r2 < 1 ? -depth * (1 - r2) * (1 - r2) : 0.0;
        p[2] = z;
    });
}

/// `count` random triangles with corners within `size` of a centre uniform in [-1, 1]^3.
inline PlyMesh triangleSoup(std::uint32_t count, double size, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> centre(-1, 1), offset(-size, size);
    PlyMesh mesh;
    for (std::uint32_t t = 0; t < count; ++t) {
        const double c[3] = {centre(rng), centre(rng), centre(rng)};
        for (int corner = 0; corner < 3; ++corner) {
            for (int k = 0; k < 3; ++k) mesh.positions.push_back(static_cast<float>(c[k] + offset(rng)));
            mesh.indices.push_back(3 * t + corner);
        }
    }
    return mesh;
}

/// triangleSoup(count, size, seed) after `time`, every triangle drifting at its own random
/// velocity of up to `speed` per axis and bouncing inside [-1, 1]^3: the triangles mix, so a tree
/// built at time 0 and only refitted degrades (like the N-body scene of Wang, Tang et al. 2018).
/// With `driftBelow` < 1 only the triangles whose centres start in the corner [-1, driftBelow]^3
/// drift, bouncing inside it, so the tree degrades only in the subtrees over that corner.
inline PlyMesh driftingSoup(std::uint32_t count, double size, std::uint32_t seed, double speed, double time,
                            double driftBelow = 1.0) {
    PlyMesh mesh = triangleSoup(count, size, seed);
    std::mt19937 rng(seed + 1);
    std::uniform_real_distribution<double> velocity(-speed, speed);
    // Position folded into [-1, hi] by reflection at the walls.
    const auto bounce = [](double x, double hi) {
        const double width = hi + 1;
        double y = std::fmod(x + 1, 2 * width);
        if (y < 0) y += 2 * width;
        return y <= width ? y - 1 : hi - (y - width);
    };
    for (std::uint32_t t = 0; t < count; ++t) {
        float* corners = mesh.positions.data() + 9 * static_cast<std::size_t>(t);
        double centre[3];
        bool drifts = true;
        for (int k = 0; k < 3; ++k) {
            centre[k] = (double(corners[k]) + corners[3 + k] + corners[6 + k]) / 3;
            drifts = drifts && (driftBelow >= 1.0 || centre[k] < driftBelow);
        }
        for (int k = 0; k < 3; ++k) {
            const double v = velocity(rng);
            if (!drifts) continue;
            const double shift = bounce(centre[k] + v * time, driftBelow < 1.0 ? driftBelow : 1.0) - centre[k];
            for (int c = 0; c < 3; ++c) corners[3 * c + k] = static_cast<float>(corners[3 * c + k] + shift);
        }
    }
    return mesh;
}

/// A cube of half-side `radius` around the origin whose six faces are n x n grids of squares
/// (12 n^2 triangles), or, with `spherical`, the cube's points pushed out onto the sphere of
/// `radius` (a cube sphere). `welded` shares the vertices of the faces' common edges (a closed
/// mesh); otherwise every face keeps its own, so positions repeat along the twelve seams and
/// triangles across a seam touch without sharing a vertex index.
inline PlyMesh cubeMesh(std::uint32_t n, double radius, bool spherical, bool welded) {
    PlyMesh mesh;
    // Lattice points (i, j, k in [0, n]) are placed by one formula, so a seam's two copies of a
    // point have the same coordinates, bit for bit.
    std::map<std::array<std::uint32_t, 3>, std::uint32_t> shared;
    const auto vertex = [&](const std::array<std::uint32_t, 3>& lattice) {
        if (welded) {
            const auto found = shared.find(lattice);
            if (found != shared.end()) return found->second;
        }
        double p[3], length = 0;
        for (int k = 0; k < 3; ++k) {
            p[k] = 2.0 * lattice[k] / n - 1.0;
            length += p[k] * p[k];
        }
        const double scale = spherical ? radius / std::sqrt(length) : radius;
        for (double c : p) mesh.positions.push_back(static_cast<float>(c * scale));
        const auto index = static_cast<std::uint32_t>(mesh.positions.size() / 3 - 1);
        if (welded) shared.emplace(lattice, index);
        return index;
    };
    for (std::uint32_t face = 0; face < 6; ++face) {
        // Face `face` lies at lattice 0 or n on axis face / 2; u and v run along the other two.
        const std::uint32_t axis = face / 2, side = face % 2 == 0 ? 0 : n;
        const std::uint32_t uAxis = (axis + 1) % 3, vAxis = (axis + 2) % 3;
        std::vector<std::uint32_t> grid((n + 1) * (n + 1));
        for (std::uint32_t j = 0; j <= n; ++j) {
            for (std::uint32_t i = 0; i <= n; ++i) {
                std::array<std::uint32_t, 3> lattice{};
                lattice[axis] = side;
                lattice[uAxis] = i;
                lattice[vAxis] = j;
                grid[j * (n + 1) + i] = vertex(lattice);
            }
        }
        for (std::uint32_t j = 0; j < n; ++j) {
            for (std::uint32_t i = 0; i < n; ++i) {
                const std::uint32_t a = grid[j * (n + 1) + i], b = grid[j * (n + 1) + i + 1];
                const std::uint32_t c = grid[(j + 1) * (n + 1) + i], d = grid[(j + 1) * (n + 1) + i + 1];
                mesh.indices.insert(mesh.indices.end(), {a, b, d, a, d, c});
            }
        }
    }
    return mesh;
}

/// A mesh in its own frame placed in the world by a rigid transform (row-major 3x4 [R | t]).
struct PlacedMesh {
    PlyMesh mesh;                     ///< Own frame.
    std::array<double, 12> transform; ///< Own frame to world.
};

/// The rotation by `angle` about the unit `axis`, then the translation `t`, as [R | t].
inline std::array<double, 12> axisAngleTransform(const double* axis, double angle, const double* t) {
    const double c = std::cos(angle), s = std::sin(angle), C = 1 - c;
    const double x = axis[0], y = axis[1], z = axis[2];
    return {x * x * C + c,     x * y * C - z * s, x * z * C + y * s, t[0], //
            y * x * C + z * s, y * y * C + c,     y * z * C - x * s, t[1], //
            z * x * C - y * s, z * y * C + x * s, z * z * C + c,     t[2]};
}

/// A pile of `count` closed bodies of 300 to 588 triangles (welded cube spheres of radius 0.5,
/// welded cubes of half-side 0.4, tori of radii 0.33 and 0.15, in turn) on a jittered grid of
/// spacing 0.95 in columns of 7 x 7, each turned at random: neighbours touch or interpenetrate
/// slightly. After `time` every body has moved by its own small velocity (up to 0.01 per axis)
/// and turned by up to 0.02 rad about its axis: frames at nearby times are a settling pile.
inline std::vector<PlacedMesh> bodyPile(std::uint32_t count, std::uint32_t seed, double time) {
    const PlyMesh shapes[3] = {cubeMesh(7, 0.5, true, true), cubeMesh(5, 0.4, false, true),
                               torusMesh(20, 12, 0.33, 0.15)};
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> jitter(-0.05, 0.05), speed(-0.01, 0.01), turn(-0.02, 0.02),
        angle(0, 6.283185307179586);
    std::normal_distribution<double> gaussian;
    std::vector<PlacedMesh> pile;
    for (std::uint32_t b = 0; b < count; ++b) {
        const std::uint32_t column = 7;
        const double cell[3] = {double(b % column), double(b / (column * column)), double(b / column % column)};
        double axis[3], length = 0, t[3];
        for (int k = 0; k < 3; ++k) {
            axis[k] = gaussian(rng);
            length += axis[k] * axis[k];
        }
        for (double& a : axis) a /= std::sqrt(length);
        const double start = angle(rng), spin = turn(rng);
        for (int k = 0; k < 3; ++k) t[k] = 0.95 * cell[k] + jitter(rng);
        for (int k = 0; k < 3; ++k) t[k] += speed(rng) * time;
        pile.push_back(PlacedMesh{shapes[b % 3], axisAngleTransform(axis, start + spin * time, t)});
    }
    return pile;
}

/// Four large closed bodies pressed into one another (23,868 triangles): a cube sphere of
/// radius 1 (7,500 triangles), a torus of radii 1.1 and 0.35 (96 x 40 grid, 7,680) through which
/// it sinks, a cube of half-side 0.8 (4,800) and a smaller cube sphere of radius 0.7 (3,888)
/// leaning on both. After `time` the bodies have turned and slid slightly.
inline std::vector<PlacedMesh> largeBodies(double time) {
    const double up[3] = {0, 0, 1}, tilted[3] = {0.6, 0, 0.8}, side[3] = {0, 1, 0};
    const double sphere[3] = {0, 0, 0.3 + 0.02 * time}, torus[3] = {0, 0, 0};
    const double cube[3] = {1.9 - 0.02 * time, 0, 0.3}, small[3] = {-1.0, 1.3, 0.5 + 0.01 * time};
    return {PlacedMesh{cubeMesh(25, 1.0, true, true), axisAngleTransform(up, 0.1 + 0.02 * time, sphere)},
            PlacedMesh{torusMesh(96, 40, 1.1, 0.35), axisAngleTransform(tilted, 0.2 + 0.01 * time, torus)},
            PlacedMesh{cubeMesh(20, 0.8, false, true), axisAngleTransform(side, 0.3 - 0.02 * time, cube)},
            PlacedMesh{cubeMesh(18, 0.7, true, true), axisAngleTransform(tilted, 0.5 * time, small)}};
}

/// The bodies moved by their transforms (in double, rounded to float) and joined into one mesh.
inline PlyMesh mergedMesh(const std::vector<PlacedMesh>& bodies) {
    PlyMesh merged;
    for (const PlacedMesh& body : bodies) {
        const auto first = static_cast<std::uint32_t>(merged.positions.size() / 3);
        const double* m = body.transform.data();
        for (std::size_t v = 0; v < body.mesh.positions.size(); v += 3) {
            const double p[3] = {body.mesh.positions[v], body.mesh.positions[v + 1], body.mesh.positions[v + 2]};
            for (int r = 0; r < 3; ++r) {
                merged.positions.push_back(
                    static_cast<float>(m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3]));
            }
        }
        for (std::uint32_t index : body.mesh.indices) merged.indices.push_back(first + index);
    }
    return merged;
}

/// cubeMesh(n, 1, true, false), a cube sphere whose faces keep their own vertices along the
/// seams, squeezed along z by `squeeze` with a ripple turned by `phase`: the seams' triangles
/// touch across every seam, and each frame moves every vertex.
inline PlyMesh seamSphere(std::uint32_t n, double squeeze, double phase) {
    PlyMesh mesh = cubeMesh(n, 1.0, true, false);
    for (std::size_t v = 0; v < mesh.positions.size(); v += 3) {
        const double x = mesh.positions[v], y = mesh.positions[v + 1], z = mesh.positions[v + 2];
        const double ripple = 1 + 0.03 * std::sin(5 * std::atan2(y, x) + phase) * std::sqrt(x * x + y * y);
        mesh.positions[v] = static_cast<float>(x * ripple);
        mesh.positions[v + 1] = static_cast<float>(y * ripple);
        mesh.positions[v + 2] = static_cast<float>(z * (1 - squeeze));
    }
    return mesh;
}

/// The mean length of a mesh's triangle sides, in double (a side shared by two triangles counts
/// twice).
inline double meanEdge(const PlyMesh& m) {
    double sum = 0;
    const std::size_t sides = m.indices.size();
    for (std::size_t s = 0; s < sides; ++s) {
        const float* p = &m.positions[3 * static_cast<std::size_t>(m.indices[s])];
        const float* q = &m.positions[3 * static_cast<std::size_t>(m.indices[s - s % 3 + (s % 3 + 1) % 3])];
        const double dx = double(p[0]) - q[0], dy = double(p[1]) - q[1], dz = double(p[2]) - q[2];
        sum += std::sqrt(dx * dx + dy * dy + dz * dz);
    }
    return sum / static_cast<double>(sides);
}

} // namespace bulletgpu
