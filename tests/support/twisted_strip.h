// SPDX-License-Identifier: Zlib
#pragma once

#include "support/cloth_scene.h"

#include <BulletSoftBody/btSoftBody.h>

#include <cmath>
#include <vector>

namespace bulletgpu::test {

/// A strip 2 m long (x from -1 to 1) and 0.5 m wide (z from -0.25 to 0.25) at height 1.5,
/// `along` x `across` nodes (CreatePatch order: node (i along, j across) is j * along + i), held
/// at its two short edges, the edge at x = +1 turning about the x axis at `turnRate` radians a
/// second and moving towards the other at `closing` metres a second, so that the strip coils
/// onto itself.
struct TwistedStrip {
    int along;       ///< Nodes along the strip.
    int across;      ///< Nodes across it.
    double turnRate; ///< Turning speed of the moving edge (rad/s).
    double closing;  ///< Speed at which it closes in (m/s).

    /// Corners of the strip, as CreatePatch takes them (c00, c10, c01, c11).
    btVector3 corner(int i) const {
        return btVector3(i % 2 == 0 ? -1 : 1, btScalar(1.5), i < 2 ? btScalar(-0.25) : btScalar(0.25));
    }

    /// Pins both short edges of `strip` (mass 0) and returns the moving edge's nodes.
    std::vector<int> hold(btSoftBody& strip) const {
        std::vector<int> moving;
        for (int j = 0; j < across; ++j) {
            strip.setMass(j * along, 0);
            strip.setMass(j * along + along - 1, 0);
            moving.push_back(j * along + along - 1);
        }
        return moving;
    }

    /// Gives the `moving` nodes the velocities that take them, over step `step` of `dt`, to where
    /// the edge is at its end (so that the move happens inside the step).
    void drive(btSoftBody& strip, const std::vector<int>& moving, int step, double dt) const {
        const double angle = turnRate * dt * step;
        const double x = 1 - closing * dt * step;
        for (const int n : moving) {
            const double z0 = -0.25 + 0.5 * ((n / along) / double(across - 1));
            const btVector3 target(btScalar(x), btScalar(1.5 - z0 * std::sin(angle)), btScalar(z0 * std::cos(angle)));
            strip.m_nodes[n].m_v = (target - strip.m_nodes[n].m_x) / btScalar(dt);
        }
    }
};

/// Holds `strip` (made with `shape`) and steps `world` `steps` times by `dt`, driving the moving
/// edge; returns the steps after which some pair of triangles sharing no vertex met, counted by
/// the engine's discrete query (and by brute force every `bruteEvery` steps; the steps where they
/// disagree go to `mismatches`).
inline int stepTwistedStrip(btDynamicsWorld& world, btSoftBody& strip, const TwistedStrip& shape, int steps, double dt,
                            int bruteEvery, int& mismatches) {
    const std::vector<int> moving = shape.hold(strip);
    IntersectionCounter counter(strip);
    int stepsWithIntersections = 0;
    mismatches = 0;
    for (int step = 1; step <= steps; ++step) {
        shape.drive(strip, moving, step, dt);
        world.stepSimulation(btScalar(dt), 0);
        const std::size_t found = counter.count(strip);
        if (found > 0) ++stepsWithIntersections;
        if (bruteEvery > 0 && step % bruteEvery == 0 && bruteForceIntersections(strip) != found) ++mismatches;
    }
    return stepsWithIntersections;
}

} // namespace bulletgpu::test
