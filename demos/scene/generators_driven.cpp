// SPDX-License-Identifier: Zlib
// Soft bodies with nodes moved by a script: the twisted strip of the self-collision tests.
#include "demos/scene/deformable_cloth.h"
#include "demos/scene/generator.h"

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>

#include <cmath>
#include <vector>

namespace bulletgpu::demo {

namespace {

// Turns one short edge of a strip about the strip's axis (x) and moves it towards the other edge:
// before every internal step the edge's nodes (mass 0) get the velocities that take them to where
// the edge is at the step's end, so that the move happens inside the step, as the solver sees it.
class TwistScript final : public SceneScript {
public:
    TwistScript(btSoftBody* strip, std::vector<int> nodes, std::vector<btScalar> offsets, btVector3 edge,
                btScalar turnRate, btScalar closing)
        : m_strip(strip), m_nodes(std::move(nodes)), m_offsets(std::move(offsets)), m_edge(edge), m_turnRate(turnRate),
          m_closing(closing) {}

    void beforeStep(btDiscreteDynamicsWorld&, btScalar timeStep) override {
        ++m_steps;
        const double time = double(timeStep) * double(m_steps);
        const double angle = double(m_turnRate) * time;
        const double x = double(m_edge.x()) - double(m_closing) * time;
        for (std::size_t k = 0; k < m_nodes.size(); ++k) {
            const double offset = double(m_offsets[k]);
            const btVector3 target(btScalar(x), btScalar(double(m_edge.y()) - offset * std::sin(angle)),
                                   btScalar(double(m_edge.z()) + offset * std::cos(angle)));
            btSoftBody::Node& node = m_strip->m_nodes[m_nodes[k]];
            node.m_v = (target - node.m_x) / timeStep;
        }
    }

private:
    btSoftBody* m_strip;
    std::vector<int> m_nodes;
    std::vector<btScalar> m_offsets; // each node's distance from the axis across the strip
    btVector3 m_edge;                // the moving edge's centre at the start
    btScalar m_turnRate;
    btScalar m_closing;
    long long m_steps = 0; // internal steps begun
};

} // namespace

void generateTwistedStrip(const JsonReader& params, GeneratorContext& context) {
    btSoftBodyWorldInfo& info = context.softInfo(params);
    const int along = params.positiveInt("along", 16);
    const int across = params.positiveInt("across", 5);
    if (along < 2) params.at("along").fail("expected at least 2 nodes");
    if (across < 2) params.at("across").fail("expected at least 2 nodes");
    const btScalar halfLength = btScalar(params.positiveNumber("length", 2)) / 2;
    const btScalar halfWidth = btScalar(params.positiveNumber("width", 0.5)) / 2;
    const btVector3 center = params.vec3("center", btVector3(0, btScalar(1.5), 0));
    const btVector3 c00 = center + btVector3(-halfLength, 0, -halfWidth);
    const btVector3 c10 = center + btVector3(halfLength, 0, -halfWidth);
    const btVector3 c01 = center + btVector3(-halfLength, 0, halfWidth);
    const btVector3 c11 = center + btVector3(halfLength, 0, halfWidth);
    btSoftBody* strip =
        context.content.addSoftBody(btSoftBodyHelpers::CreatePatch(info, c00, c10, c01, c11, along, across, 0, true));
    strip->getCollisionShape()->setMargin(btScalar(params.number("margin", 0.02)));
    strip->generateBendingConstraints(params.positiveInt("bendingDistance", 2));
    strip->m_cfg.piterations = params.positiveInt("positionIterations", 4);
    strip->setTotalMass(btScalar(params.positiveNumber("mass", 1)));
    if (context.content.deformable()) setUpDeformableCloth(params, context, *strip);
    // Both short edges held (mass 0); the one at +x is driven. Node (i along, j across) is
    // j along + i, as CreatePatch makes them.
    std::vector<int> moving;
    std::vector<btScalar> offsets;
    for (int j = 0; j < across; ++j) {
        strip->setMass(j * along, 0);
        strip->setMass(j * along + along - 1, 0);
        moving.push_back(j * along + along - 1);
        offsets.push_back(-halfWidth + 2 * halfWidth * btScalar(j) / btScalar(across - 1));
    }
    context.content.addScript(std::make_unique<TwistScript>(
        strip, std::move(moving), std::move(offsets), center + btVector3(halfLength, 0, 0),
        btScalar(params.number("turnRate", 2)), btScalar(params.number("closing", 0.09))));
}

} // namespace bulletgpu::demo
