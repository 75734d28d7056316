// SPDX-License-Identifier: Zlib
#pragma once

#include "tests/support/ply_mesh.h"

#include <cmath>
#include <cstdint>
#include <random>

/// Procedural triangle meshes for tests and benchmarks: grids, tori, spheres and soups.

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

} // namespace bulletgpu
