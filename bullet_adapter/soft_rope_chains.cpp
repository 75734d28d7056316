// SPDX-License-Identifier: Zlib
#include "bullet_adapter/soft_rope_chains.h"

#include "bullet_adapter/soft_node_moves.h"
#include "kernels/narrow/ccd/ccd_queries.h"

#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace bulletgpu {

namespace {

/// The chain spheres are this much larger than the contact spheres, so that the pairs a
/// projection pushes into contact are already on the list.
constexpr double cDetectionScale = 1.5;

/// A round searches the whole set anew, instead of the moved nodes' pairs, when more than one
/// node in this many has moved: a walk per moved node costs several times a node's share of the
/// whole search (docs/benchmarks/sphere-chains-cpu.md: walks 3-6x the descent).
constexpr std::size_t cWholeSearchShare = 8;

/// Positions from this magnitude on (or not finite) meet nothing: their nodes search from far
/// away points of their own (SoftRopeChains::searchCentre).
constexpr double cFarAway = 1e15;

/// Nodes sampled, evenly along the ropes, for the common move (SoftRopeChains::shiftFrame).
constexpr std::size_t cFrameSample = 1024;

/// Rounds stop once no pair falls short of its distance by more than this part of the least
/// thickness.
constexpr double cSettledShortfall = 1e-3;

/// Whether `rope` stands for `body` as it is now, with `thickness`.
bool matches(const RopeChain& rope, const btSoftBody* body, double thickness) {
    return rope.body == body && rope.nodeCount == static_cast<std::uint32_t>(body->m_nodes.size()) &&
           rope.linkCount == static_cast<std::uint32_t>(body->m_links.size()) && rope.thickness == thickness;
}

/// Same-rope neighbours within the thickness at rest: |i - j| up to thickness over the shortest
/// structural link's rest length, at least 1.
std::uint32_t restNeighbours(const btSoftBody& body, double thickness) {
    double shortest = HUGE_VAL;
    for (int l = 0; l < body.m_links.size(); ++l)
        if (!body.m_links[l].m_bbending) shortest = std::min(shortest, double(body.m_links[l].m_rl));
    if (!(shortest > 0) || !std::isfinite(shortest)) return 1;
    return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(thickness / shortest)));
}

} // namespace

SoftRopeChains::SoftRopeChains(Backend backend, int threadsOrDevice, int cpuThreads)
    : m_set(backend, threadsOrDevice), m_threads(cpuThreads) {}

bool SoftRopeChains::isRope(const btSoftBody& body) {
    if (body.m_nodes.size() < 2 || body.m_faces.size() != 0) return false;
    for (int l = 0; l < body.m_links.size(); ++l) {
        const btSoftBody::Link& link = body.m_links[l];
        if (link.m_bbending) continue;
        const auto a = link.m_n[0] - &body.m_nodes[0], b = link.m_n[1] - &body.m_nodes[0];
        if (a - b != 1 && b - a != 1) return false;
    }
    return body.m_links.size() > 0;
}

void SoftRopeChains::sync(const btAlignedObjectArray<btSoftBody*>& bodies, const std::vector<char>& selected,
                          const std::vector<double>& thickness) {
    std::size_t wanted = 0;
    bool same = true;
    for (int i = 0; i < bodies.size(); ++i) {
        if (!selected[i] || !isRope(*bodies[i])) continue;
        same = same && wanted < m_ropes.size() && matches(m_ropes[wanted], bodies[i], thickness[i]);
        ++wanted;
    }
    if (same && wanted == m_ropes.size()) return;

    m_listCurrent = false;
    m_ropes.clear();
    m_firsts.clear();
    m_counts.clear();
    m_set.clear();
    m_radius.clear();
    m_queryNeighbours = ~0u;
    m_thinnest = HUGE_VAL;
    for (int i = 0; i < bodies.size(); ++i) {
        btSoftBody* body = bodies[i];
        if (!selected[i] || !isRope(*body)) continue;
        RopeChain rope;
        rope.body = body;
        rope.nodeCount = static_cast<std::uint32_t>(body->m_nodes.size());
        rope.linkCount = static_cast<std::uint32_t>(body->m_links.size());
        rope.thickness = thickness[i];
        rope.neighbours = restNeighbours(*body, thickness[i]);
        rope.first = static_cast<std::uint32_t>(m_radius.size());
        m_queryNeighbours = std::min(m_queryNeighbours, rope.neighbours);
        m_thinnest = std::min(m_thinnest, rope.thickness);
        m_radius.resize(m_radius.size() + rope.nodeCount, thickness[i] / 2);
        m_ropes.push_back(rope);
        m_firsts.push_back(rope.first);
        m_counts.push_back(rope.nodeCount);
    }
    const std::size_t nodes = m_radius.size();
    m_start.resize(3 * nodes);
    m_end.resize(3 * nodes);
    m_queried.resize(3 * nodes);
    m_inverseMass.resize(nodes);
    m_friction.resize(nodes);
    m_centres.resize(3 * nodes);
    m_radii.resize(nodes);
    for (std::size_t n = 0; n < nodes; ++n) m_radii[n] = static_cast<float>(cDetectionScale * m_radius[n]);
    m_farSpacing = 4 * (nodes > 0 ? *std::max_element(m_radii.begin(), m_radii.end()) : 0.0) + 1;
    for (const RopeChain& rope : m_ropes) {
        for (std::uint32_t n = 0; n < rope.nodeCount; ++n) {
            const btVector3& x = rope.body->m_nodes[n].m_x;
            const double position[3] = {double(x.x()), double(x.y()), double(x.z())};
            searchCentre(rope.first + n, position, &m_centres[3 * (rope.first + n)]);
        }
        m_set.addChain(&m_centres[3 * rope.first], &m_radii[rope.first], rope.nodeCount);
    }
}

void SoftRopeChains::recordStart() {
    for (const RopeChain& rope : m_ropes)
        for (std::uint32_t n = 0; n < rope.nodeCount; ++n)
            for (int k = 0; k < 3; ++k) m_start[3 * (rope.first + n) + k] = rope.body->m_nodes[n].m_x[k];
}

void SoftRopeChains::collide(int iterations, int rounds, bool continuous, double etaFraction) {
    m_pairCount = 0;
    m_searchMilliseconds = 0;
    m_linkImpacts = m_frozenNodes = 0;
    m_revertedRopes = 0;
    if (m_ropes.empty()) return;
    for (const RopeChain& rope : m_ropes) {
        const bool active = rope.body->isActive();
        for (std::uint32_t n = 0; n < rope.nodeCount; ++n) {
            const btSoftBody::Node& node = rope.body->m_nodes[n];
            const std::uint32_t g = rope.first + n;
            m_inverseMass[g] = active ? node.m_im : 0;
            m_friction[g] = rope.body->m_cfg.kDF;
            for (int k = 0; k < 3; ++k) m_end[3 * g + k] = node.m_x[k];
        }
    }
    m_rounds = m_queries = m_moverUpdates = 0;
    projectRounds(iterations, rounds);
    m_pairCount = m_roundPairs;
    if (continuous) keepLinksApart(iterations, rounds, etaFraction * m_thinnest);
    for (const RopeChain& rope : m_ropes)
        if (rope.body->isActive()) writeBack(rope);
}

void SoftRopeChains::projectRounds(int iterations, int rounds) {
    const RopeNodes nodes{static_cast<std::uint32_t>(m_radius.size()),
                          m_start.data(),
                          m_end.data(),
                          m_inverseMass.data(),
                          m_radius.data(),
                          m_friction.data()};
    for (int round = 0; round < rounds; ++round) {
        ++m_rounds;
        updatePairs();
        if (round == 0) m_roundPairs = m_pairs.size() / 2;
        if (!(m_projection.project(nodes, m_pairs.data(), m_pairs.size() / 2, iterations, m_threads) >
              cSettledShortfall * m_thinnest))
            break;
    }
}

void SoftRopeChains::findLinkImpacts(double eta) {
    const LinkChains chains{m_start.data(), m_end.data(), m_firsts.data(), m_counts.data(),
                            static_cast<std::uint32_t>(m_ropes.size())};
    m_linkCcd.find(chains, eta, m_threads, m_impacts);
    // A pair within eta when the step starts (time of impact 0) is kept only when its links touch
    // during the step: links resting closer than eta, which freezing cannot part, stay free.
    const auto resting = [&](const LinkImpact& impact) {
        if (impact.toi > 0) return false;
        Vec3d x0[4], x1[4];
        const std::uint32_t nodes[4] = {impact.linkA, impact.linkA + 1, impact.linkB, impact.linkB + 1};
        for (int p = 0; p < 4; ++p) {
            for (int k = 0; k < 3; ++k) {
                x0[p].v[k] = m_start[3 * nodes[p] + k];
                x1[p].v[k] = m_end[3 * nodes[p] + k];
            }
        }
        CcdResult touch;
        edgeEdgeCcd(x0, x1, 0.0, CcdOptions{}, touch);
        return !touch.hit;
    };
    m_impacts.erase(std::remove_if(m_impacts.begin(), m_impacts.end(), resting), m_impacts.end());
}

void SoftRopeChains::freeze(std::uint32_t g) {
    if (m_frozen[g]) return;
    m_frozen[g] = 1;
    ++m_frozenNodes;
    m_inverseMass[g] = 0;
    for (int k = 0; k < 3; ++k) m_end[3 * g + k] = m_start[3 * g + k];
}

std::uint32_t SoftRopeChains::ropeOf(std::uint32_t g) const {
    const auto after = std::upper_bound(m_ropes.begin(), m_ropes.end(), g,
                                        [](std::uint32_t node, const RopeChain& rope) { return node < rope.first; });
    return static_cast<std::uint32_t>(after - m_ropes.begin()) - 1;
}

void SoftRopeChains::keepLinksApart(int iterations, int rounds, double eta) {
    m_frozen.assign(m_radius.size(), 0);
    m_reverted.assign(m_ropes.size(), 0);
    findLinkImpacts(eta);
    m_linkImpacts = m_impacts.size();
    for (int pass = 0; pass < cCcdPasses && !m_impacts.empty(); ++pass) {
        for (const LinkImpact& impact : m_impacts)
            for (const std::uint32_t g : {impact.linkA, impact.linkA + 1, impact.linkB, impact.linkB + 1}) freeze(g);
        projectRounds(iterations, rounds);
        findLinkImpacts(eta);
    }
    // Each round sends at least one more rope back, or stops: the impacts left are then between
    // ropes back at their start, which do not move (links already within eta when the step began).
    for (bool sentBack = true; sentBack && !m_impacts.empty();) {
        sentBack = false;
        for (const LinkImpact& impact : m_impacts) {
            for (const std::uint32_t g : {impact.linkA, impact.linkB}) {
                const std::uint32_t r = ropeOf(g);
                if (m_reverted[r]) continue;
                m_reverted[r] = 1;
                sentBack = true;
                ++m_revertedRopes;
                for (std::uint32_t n = 0; n < m_ropes[r].nodeCount; ++n) freeze(m_ropes[r].first + n);
            }
        }
        findLinkImpacts(eta);
    }
}

void SoftRopeChains::searchCentre(std::uint32_t g, const double* position, float* centre) const {
    if (std::fabs(position[0]) < cFarAway && std::fabs(position[1]) < cFarAway && std::fabs(position[2]) < cFarAway) {
        for (int k = 0; k < 3; ++k) centre[k] = static_cast<float>(position[k]);
        return;
    }
    centre[0] = static_cast<float>(cFarAway);
    centre[1] = 0;
    centre[2] = static_cast<float>(m_farSpacing * g);
}

void SoftRopeChains::shiftFrame() {
    const std::size_t nodes = m_radius.size();
    const std::size_t stride = std::max<std::size_t>(1, nodes / cFrameSample);
    for (int k = 0; k < 3; ++k) {
        m_frameSample.clear();
        for (std::size_t g = 0; g < nodes; g += stride) {
            const double move = m_end[3 * g + k] - m_queried[3 * g + k] - m_frame[k];
            if (std::isfinite(move)) m_frameSample.push_back(move);
        }
        if (m_frameSample.empty()) continue;
        const auto middle = m_frameSample.begin() + static_cast<std::ptrdiff_t>(m_frameSample.size() / 2);
        std::nth_element(m_frameSample.begin(), middle, m_frameSample.end());
        m_frame[k] += *middle;
    }
}

void SoftRopeChains::findMovers() {
    shiftFrame();
    double largest = std::max({std::fabs(m_frame[0]), std::fabs(m_frame[1]), std::fabs(m_frame[2])});
    for (const std::vector<double>* positions : {&m_end, &m_queried})
        for (const double x : *positions)
            if (std::fabs(x) < cFarAway) largest = std::max(largest, std::fabs(x));
    const double rounding = 0x1p-14 * (1 + largest);
    const double reach = (cDetectionScale - 1) * m_thinnest / 2 - rounding;
    const double reach2 = reach > 0 ? reach * reach : 0;
    m_movers.clear();
    const auto nodes = static_cast<std::uint32_t>(m_radius.size());
    for (std::uint32_t g = 0; g < nodes; ++g) {
        double m2 = 0;
        for (int k = 0; k < 3; ++k) {
            const double d = m_end[3 * g + k] - m_queried[3 * g + k] - m_frame[k];
            m2 += d * d;
        }
        if (!(m2 < reach2)) m_movers.push_back(g);
    }
}

void SoftRopeChains::updatePairs() {
    if (m_listCurrent) {
        findMovers();
        if (m_movers.empty()) return;
        if (m_movers.size() * cWholeSearchShare < m_radius.size()) {
            updateMovers();
            ++m_moverUpdates;
            return;
        }
    }
    findPairs();
    ++m_queries;
}

void SoftRopeChains::appendPairs(std::vector<std::uint32_t>& pairs) const {
    for (const ChainContact& c : m_contacts) {
        const RopeChain& a = m_ropes[c.chainA];
        if (c.chainA == c.chainB && std::max(c.sphereA, c.sphereB) - std::min(c.sphereA, c.sphereB) <= a.neighbours)
            continue;
        pairs.push_back(a.first + c.sphereA);
        pairs.push_back(m_ropes[c.chainB].first + c.sphereB);
    }
}

void SoftRopeChains::updateMovers() {
    const auto begin = std::chrono::steady_clock::now();
    m_isMover.resize(m_radius.size(), 0);
    m_moverCentres.clear();
    for (const std::uint32_t g : m_movers) {
        m_isMover[g] = 1;
        for (int k = 0; k < 3; ++k) {
            m_queried[3 * g + k] = m_end[3 * g + k] - m_frame[k];
        }
        searchCentre(g, &m_queried[3 * g], &m_centres[3 * g]);
        m_moverCentres.insert(m_moverCentres.end(), &m_centres[3 * g], &m_centres[3 * g] + 3);
    }
    // The chain set's global sphere order is the nodes' (chains added in the ropes' order).
    m_set.moveSpheres(m_movers.data(), static_cast<std::uint32_t>(m_movers.size()), m_moverCentres.data());
    ChainQuery query;
    query.excludedNeighbours = m_queryNeighbours;
    m_set.findContactsOf(m_movers.data(), static_cast<std::uint32_t>(m_movers.size()), query, m_contacts);
    m_newPairs.clear();
    appendPairs(m_newPairs);
    // The kept pairs (no mover in them) and the movers' new ones, both in (first, second) order.
    m_mergedPairs.clear();
    std::size_t kept = 0, added = 0;
    const auto before = [](const std::uint32_t* x, const std::uint32_t* y) {
        return x[0] != y[0] ? x[0] < y[0] : x[1] < y[1];
    };
    while (kept < m_pairs.size() || added < m_newPairs.size()) {
        if (kept < m_pairs.size() && (m_isMover[m_pairs[kept]] || m_isMover[m_pairs[kept + 1]])) {
            kept += 2;
            continue;
        }
        const bool takeKept =
            added == m_newPairs.size() || (kept < m_pairs.size() && before(&m_pairs[kept], &m_newPairs[added]));
        std::vector<std::uint32_t>& from = takeKept ? m_pairs : m_newPairs;
        std::size_t& at = takeKept ? kept : added;
        m_mergedPairs.push_back(from[at]);
        m_mergedPairs.push_back(from[at + 1]);
        at += 2;
    }
    m_pairs.swap(m_mergedPairs);
    for (const std::uint32_t g : m_movers) m_isMover[g] = 0;
    m_searchMilliseconds += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
}

void SoftRopeChains::findPairs() {
    const auto begin = std::chrono::steady_clock::now();
    m_listCurrent = true;
    m_queried = m_end;
    m_frame[0] = m_frame[1] = m_frame[2] = 0;
    for (std::uint32_t chain = 0; chain < m_ropes.size(); ++chain) {
        const RopeChain& rope = m_ropes[chain];
        for (std::uint32_t g = rope.first; g < rope.first + rope.nodeCount; ++g)
            searchCentre(g, &m_end[3 * g], &m_centres[3 * g]);
        m_set.setPositions(chain, &m_centres[3 * rope.first]);
    }
    ChainQuery query;
    query.excludedNeighbours = m_queryNeighbours;
    m_set.findContacts(query, m_contacts);
    m_pairs.clear();
    appendPairs(m_pairs);
    m_searchMilliseconds += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
}

void SoftRopeChains::writeBack(const RopeChain& rope) const {
    moveNodesTo(*rope.body, &m_end[3 * std::size_t(rope.first)], rope.nodeCount, rope.body->m_sst.sdt);
}

} // namespace bulletgpu
