// SPDX-License-Identifier: Zlib
#include "bullet_adapter/rope_collision_response.h"

#include <algorithm>
#include <cmath>

namespace bulletgpu {

namespace {

/// Projects nodes i and j to the sum of their radii apart (see projectRopePairs); returns the
/// shortfall it corrected.
double projectPair(const RopeNodes& m, std::uint32_t i, std::uint32_t j) {
    const double weightSum = m.inverseMass[i] + m.inverseMass[j];
    if (!(weightSum > 0)) return 0;
    double gap[3], startGap[3];
    for (int k = 0; k < 3; ++k) gap[k] = m.end[3 * i + k] - m.end[3 * j + k];
    const double distance2 = gap[0] * gap[0] + gap[1] * gap[1] + gap[2] * gap[2];
    const double target = m.radius[i] + m.radius[j];
    // Most listed pairs are apart: settled on squares, before the root and the start positions.
    if (distance2 >= target * target) return 0;
    const double distance = std::sqrt(distance2);
    if (distance >= target) return 0;
    for (int k = 0; k < 3; ++k) startGap[k] = m.start[3 * i + k] - m.start[3 * j + k];
    double n[3];
    double separation = distance;
    if (distance > 0) {
        for (int k = 0; k < 3; ++k) n[k] = gap[k] / distance;
        if (n[0] * startGap[0] + n[1] * startGap[1] + n[2] * startGap[2] < 0) {
            for (double& c : n) c = -c;
            separation = -distance;
        }
    } else {
        const double startLength =
            std::sqrt(startGap[0] * startGap[0] + startGap[1] * startGap[1] + startGap[2] * startGap[2]);
        if (!(startLength > 0)) return 0;
        for (int k = 0; k < 3; ++k) n[k] = startGap[k] / startLength;
    }
    const double push = target - separation;
    const double lambda = push / weightSum;
    for (int k = 0; k < 3; ++k) {
        m.end[3 * i + k] += lambda * m.inverseMass[i] * n[k];
        m.end[3 * j + k] -= lambda * m.inverseMass[j] * n[k];
    }
    const double mu = m.friction ? std::max(m.friction[i], m.friction[j]) : 0;
    if (mu > 0) {
        double slip[3]; // Relative move over the step, across the normal.
        for (int k = 0; k < 3; ++k)
            slip[k] = (m.end[3 * i + k] - m.start[3 * i + k]) - (m.end[3 * j + k] - m.start[3 * j + k]);
        const double along = slip[0] * n[0] + slip[1] * n[1] + slip[2] * n[2];
        for (int k = 0; k < 3; ++k) slip[k] -= along * n[k];
        const double length = std::sqrt(slip[0] * slip[0] + slip[1] * slip[1] + slip[2] * slip[2]);
        if (length > 0) {
            const double taken = (length <= mu * push ? 1 : mu * push / length) / weightSum;
            for (int k = 0; k < 3; ++k) {
                m.end[3 * i + k] -= taken * m.inverseMass[i] * slip[k];
                m.end[3 * j + k] += taken * m.inverseMass[j] * slip[k];
            }
        }
    }
    return push;
}

} // namespace

double projectRopePairs(const RopeNodes& nodes, const std::uint32_t* pairs, std::size_t count, int iterations) {
    double largest = 0;
    for (int iteration = 0; iteration < iterations; ++iteration)
        for (std::size_t p = 0; p < count; ++p) {
            const double shortfall = projectPair(nodes, pairs[2 * p], pairs[2 * p + 1]);
            if (iteration == 0) largest = std::max(largest, shortfall);
        }
    return largest;
}

} // namespace bulletgpu
