// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/proximity_contact.h"

#include <cstdint>
#include <vector>

/// The reduction of one mesh pair's contacts to a handful (per-element, CPU and CUDA), in the
/// spirit of Bullet's btPersistentManifold, which keeps 4 points and, when a fifth arrives, keeps
/// the deepest and replaces the point whose removal leaves the largest area (sortCachedPoints,
/// calcArea4Points). Here the choice is greedy over all contacts, on their points on B
/// (pointB, Bullet's positionWorldOnB):
///  1. the deepest: the smallest distance;
///  2. the point farthest from the first;
///  3. the point maximising the area of the triangle with the first two;
///  4. the point maximising calcArea4Points of the four: the largest |d1 x d2|^2 over the three
///     ways of pairing the four points into two diagonals d1, d2.
/// Each step takes the first (lowest index) of equal values, so the choice is deterministic for
/// a sorted input. Points that add nothing (zero distance or area) are still taken while
/// contacts remain, up to the number asked; at most cMaxReducedContacts.

namespace bulletgpu {

/// The most contacts a reduction keeps per mesh pair (Bullet's MANIFOLD_CACHE_SIZE).
constexpr std::uint32_t cMaxReducedContacts = 4;

/// pointB of a contact in double.
BULLETGPU_HD Vec3d contactPointB(const ProximityContact& c) { return Vec3d{{c.pointB[0], c.pointB[1], c.pointB[2]}}; }

/// |(b - a) x (c - a)|^2: four times the triangle's squared area.
BULLETGPU_HD double triangleArea2(const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const Vec3d n = vecCross(vecSub(b, a), vecSub(c, a));
    return vecDot(n, n);
}

/// Bullet's calcArea4Points: the largest squared cross product of the three diagonal pairings.
BULLETGPU_HD double quadArea2(const Vec3d& p0, const Vec3d& p1, const Vec3d& p2, const Vec3d& p3) {
    const Vec3d c0 = vecCross(vecSub(p0, p1), vecSub(p2, p3));
    const Vec3d c1 = vecCross(vecSub(p0, p2), vecSub(p1, p3));
    const Vec3d c2 = vecCross(vecSub(p0, p3), vecSub(p1, p2));
    const double a0 = vecDot(c0, c0), a1 = vecDot(c1, c1), a2 = vecDot(c2, c2);
    return fmax(a0, fmax(a1, a2));
}

/// The score of contact `i` as the n-th choice after the points picked[0..n-1].
BULLETGPU_HD double reductionScore(const ProximityContact& c, std::uint32_t n, const Vec3d* picked) {
    const Vec3d p = contactPointB(c);
    if (n == 0) return -static_cast<double>(c.distance);
    if (n == 1) return distanceSquared(p, picked[0]);
    if (n == 2) return triangleArea2(picked[0], picked[1], p);
    return quadArea2(picked[0], picked[1], picked[2], p);
}

/// Chooses up to min(maxPoints, cMaxReducedContacts, count) of `count` contacts by the rule
/// above, except that after the deepest, each of the `heldCount` points `held` (a persistent
/// manifold's points on B, in its order) takes the nearest contact within `holdRadius` of it
/// that is not chosen yet, so that a resting manifold keeps its points from step to step; the
/// rule fills the remaining places. Writes the indices to `chosen` in the order chosen and
/// returns how many.
BULLETGPU_HD std::uint32_t reduceContactsHolding(const ProximityContact* contacts, std::uint32_t count,
                                                 std::uint32_t maxPoints, const Vec3d* held, std::uint32_t heldCount,
                                                 double holdRadius, std::uint32_t* chosen) {
    std::uint32_t keep = maxPoints < cMaxReducedContacts ? maxPoints : cMaxReducedContacts;
    keep = count < keep ? count : keep;
    Vec3d picked[cMaxReducedContacts];
    const auto taken = [&](std::uint32_t i, std::uint32_t n) {
        for (std::uint32_t m = 0; m < n; ++m) {
            if (chosen[m] == i) return true;
        }
        return false;
    };
    std::uint32_t n = 0;
    std::uint32_t nextHeld = 0;
    while (n < keep) {
        std::uint32_t bestIndex = count;
        if (n > 0 && nextHeld < heldCount) {
            double best = holdRadius * holdRadius;
            for (std::uint32_t i = 0; i < count; ++i) {
                const double d = distanceSquared(contactPointB(contacts[i]), held[nextHeld]);
                if (!taken(i, n) && d <= best) {
                    best = d;
                    bestIndex = i;
                }
            }
            ++nextHeld;
            if (bestIndex == count) continue;
        } else {
            double best = -INFINITY;
            for (std::uint32_t i = 0; i < count; ++i) {
                const double score = taken(i, n) ? -INFINITY : reductionScore(contacts[i], n, picked);
                if (!taken(i, n) && (score > best || bestIndex == count)) {
                    best = score;
                    bestIndex = i;
                }
            }
        }
        chosen[n] = bestIndex;
        picked[n] = contactPointB(contacts[bestIndex]);
        ++n;
    }
    return keep;
}

/// reduceContactsHolding with no points held: the deepest, then the area rule.
BULLETGPU_HD std::uint32_t reduceContacts(const ProximityContact* contacts, std::uint32_t count,
                                          std::uint32_t maxPoints, std::uint32_t* chosen) {
    return reduceContactsHolding(contacts, count, maxPoints, nullptr, 0, 0, chosen);
}

/// Reduces the contact query's output to at most a few contacts per mesh pair on the CPU, with
/// buffers kept from call to call, so that settled frames allocate nothing.
class ContactReducer {
public:
    /// Reduces `sorted` (contacts sorted by mesh pair, as the contact query returns them) to at
    /// most `maxPoints` contacts per mesh pair with reduceContacts, on up to `threads` OpenMP
    /// threads (<= 0: OpenMP's default): writes them to `out` by mesh pair, each pair's in the
    /// order chosen (deepest first).
    void reduce(const std::vector<ProximityContact>& sorted, std::uint32_t maxPoints,
                std::vector<ProximityContact>& out, int threads);

private:
    std::vector<std::size_t> m_starts;     ///< First contact of each mesh pair, then the end.
    std::vector<std::uint32_t> m_kept;     ///< Contacts kept per mesh pair.
    std::vector<ProximityContact> m_slots; ///< cMaxReducedContacts slots per mesh pair.
};

} // namespace bulletgpu
