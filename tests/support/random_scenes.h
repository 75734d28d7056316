// SPDX-License-Identifier: Zlib
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace bulletgpu::test {

/// A box as the tests generate it, in double precision.
struct TestBox {
    double min[3];
    double max[3];
};

/// Shapes of random scenes.
enum class SceneKind { Uniform, Clustered, OneAxis, MixedSizes };

/// Printable name of a scene kind.
inline std::string sceneName(SceneKind kind) {
    switch (kind) {
        case SceneKind::Uniform: return "uniform";
        case SceneKind::Clustered: return "clustered";
        case SceneKind::OneAxis: return "one-axis";
        default: return "mixed-sizes";
    }
}

/// Seeded scene generator: unit-ish boxes at about 0.25 boxes per unit^3 (uniform), in a few
/// dense clusters, strung along the x axis, or with sizes spread over two orders of magnitude.
class SceneGenerator {
public:
    /// A generator with a fixed seed.
    explicit SceneGenerator(std::uint32_t seed) : m_random(seed) {}

    /// One random box of the given kind for a scene of n boxes.
    TestBox box(SceneKind kind, std::size_t n) {
        const double side = std::cbrt(static_cast<double>(n) / 0.25) + 1.0;
        double centre[3] = {0, 0, 0};
        double half[3] = {0.5, 0.5, 0.5};
        switch (kind) {
            case SceneKind::Uniform:
                for (double& c : centre) c = uniform(0, side);
                break;
            case SceneKind::Clustered: {
                const int cluster = static_cast<int>(uniform(0, 4));
                for (int axis = 0; axis < 3; ++axis) centre[axis] = 10.0 * side * cluster + uniform(0, side * 0.3);
                break;
            }
            case SceneKind::OneAxis:
                centre[0] = uniform(0, static_cast<double>(n) * 0.8);
                centre[1] = uniform(0, 0.5);
                centre[2] = uniform(0, 0.5);
                break;
            case SceneKind::MixedSizes:
                for (double& c : centre) c = uniform(0, side);
                for (double& h : half) h = 0.5 * std::exp(uniform(std::log(0.1), std::log(10.0)));
                break;
        }
        TestBox b;
        for (int axis = 0; axis < 3; ++axis) {
            b.min[axis] = centre[axis] - half[axis];
            b.max[axis] = centre[axis] + half[axis];
        }
        return b;
    }

    /// A scene of n boxes.
    std::vector<TestBox> scene(SceneKind kind, std::size_t n) {
        std::vector<TestBox> boxes(n);
        for (auto& b : boxes) b = box(kind, n);
        return boxes;
    }

    /// Moves a box by up to `step` on each axis.
    void jitter(TestBox& b, double step) {
        for (int axis = 0; axis < 3; ++axis) {
            const double d = uniform(-step, step);
            b.min[axis] += d;
            b.max[axis] += d;
        }
    }

    /// Uniform double in [lo, hi).
    double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(m_random); }

    /// Uniform integer in [0, n).
    std::uint32_t below(std::uint32_t n) { return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(m_random); }

private:
    std::mt19937 m_random;
};

} // namespace bulletgpu::test
