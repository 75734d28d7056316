// SPDX-License-Identifier: Zlib
#include <bulletgpu/CollisionDispatcher.h>

#include "mesh_batch.h"

#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/CollisionShapes/btCollisionShape.h>

#include <new>
#include <stdexcept>

namespace bulletgpu {
namespace detail {

/// Makes the mesh algorithm for pairs of mesh shapes, and the fallback's otherwise.
class MeshCreateFunc : public btCollisionAlgorithmCreateFunc {
public:
    explicit MeshCreateFunc(CollisionDispatcher& owner) : m_owner(owner) {}

    btCollisionAlgorithm* CreateCollisionAlgorithm(btCollisionAlgorithmConstructionInfo& ci,
                                                   const btCollisionObjectWrapper* body0,
                                                   const btCollisionObjectWrapper* body1) override {
        const btCollisionShape* shape0 = body0->getCollisionShape();
        const btCollisionShape* shape1 = body1->getCollisionShape();
        const bool sphere0 = isSphereShape(shape0), sphere1 = isSphereShape(shape1);
        const bool meshes = isMeshShape(shape0) && isMeshShape(shape1);
        const bool sphereOnMesh = (sphere0 && isConcaveMeshShape(shape1)) || (sphere1 && isConcaveMeshShape(shape0));
        if (meshes || sphereOnMesh) {
            MeshInstances& instances = m_owner.m_batch->instances();
            try {
                const std::uint32_t mesh0 = sphere0
                                                ? cNoMesh
                                                : instances.acquire(MeshInstanceKey{body0->getCollisionObject(), shape0,
                                                                                    body0->m_partId, body0->m_index});
                std::uint32_t mesh1;
                try {
                    mesh1 = sphere1 ? cNoMesh
                                    : instances.acquire(MeshInstanceKey{body1->getCollisionObject(), shape1,
                                                                        body1->m_partId, body1->m_index});
                } catch (...) {
                    if (mesh0 != cNoMesh) instances.release(mesh0);
                    throw;
                }
                void* memory = ci.m_dispatcher1->allocateCollisionAlgorithm(sizeof(MeshCollisionAlgorithm));
                return new (memory) MeshCollisionAlgorithm(ci, body0, body1, *m_owner.m_batch, mesh0, mesh1);
            } catch (const std::invalid_argument& error) {
                m_owner.m_batch->log(std::string("a mesh pair goes to Bullet's algorithm: ") + error.what());
            }
        }
        btCollisionAlgorithmCreateFunc* fallback = m_owner.m_fallback[shape0->getShapeType()][shape1->getShapeType()];
        return fallback != nullptr ? fallback->CreateCollisionAlgorithm(ci, body0, body1) : nullptr;
    }

private:
    CollisionDispatcher& m_owner;
};

} // namespace detail

namespace {

/// Whether the mesh algorithm takes pairs of these shape types (by type; the create function
/// checks the shapes themselves).
bool meshPairTypes(int type0, int type1) {
    const auto isGimpact = [](int t) { return t == GIMPACT_SHAPE_PROXYTYPE; };
    const auto isStatic = [](int t) {
        return t == TRIANGLE_MESH_SHAPE_PROXYTYPE || t == SCALED_TRIANGLE_MESH_SHAPE_PROXYTYPE;
    };
    const auto isPolyhedron = [](int t) {
        return t == BOX_SHAPE_PROXYTYPE || t == CONVEX_HULL_SHAPE_PROXYTYPE || t == CONVEX_TRIANGLEMESH_SHAPE_PROXYTYPE;
    };
    const auto oneWay = [&](int a, int b) {
        return (isGimpact(a) && (isGimpact(b) || isStatic(b) || isPolyhedron(b))) || (isPolyhedron(a) && isStatic(b)) ||
               (a == SPHERE_SHAPE_PROXYTYPE && (isGimpact(b) || isStatic(b)));
    };
    return oneWay(type0, type1) || oneWay(type1, type0);
}

/// sizeof(MeshCollisionAlgorithm) must fit the element of Bullet's algorithm pool (192 bytes on
/// Debian's float and double builds; its allocator only asserts the size).
static_assert(sizeof(MeshCollisionAlgorithm) <= 120, "MeshCollisionAlgorithm outgrew Bullet's algorithm pool");

} // namespace

CollisionDispatcher::CollisionDispatcher(btCollisionConfiguration* configuration, const NarrowConfig& config)
    : btCollisionDispatcher(configuration), m_batch(std::make_unique<detail::MeshBatch>(config)),
      m_createFunc(std::make_unique<detail::MeshCreateFunc>(*this)) {
    installMeshAlgorithm();
}

CollisionDispatcher::~CollisionDispatcher() = default;

void CollisionDispatcher::installMeshAlgorithm() {
    for (int i = 0; i < MAX_BROADPHASE_COLLISION_TYPES; ++i) {
        for (int j = 0; j < MAX_BROADPHASE_COLLISION_TYPES; ++j) {
            if (!meshPairTypes(i, j) || m_doubleDispatchContactPoints[i][j] == m_createFunc.get()) continue;
            m_fallback[i][j] = m_doubleDispatchContactPoints[i][j];
            m_doubleDispatchContactPoints[i][j] = m_createFunc.get();
        }
    }
}

void CollisionDispatcher::dispatchAllCollisionPairs(btOverlappingPairCache* pairCache, const btDispatcherInfo& info,
                                                    btDispatcher* dispatcher) {
    installMeshAlgorithm();
    m_batch->open();
    btCollisionDispatcher::dispatchAllCollisionPairs(pairCache, info, dispatcher);
    m_batch->run();
}

Backend CollisionDispatcher::backend() const { return m_batch->backend(); }

std::string CollisionDispatcher::description() const { return m_batch->description(); }

const MeshBatchStats& CollisionDispatcher::meshStats() const { return m_batch->stats(); }

bool CollisionDispatcher::refreshMesh(const btCollisionShape* shape) {
    return m_batch->instances().refreshShape(shape);
}

const TriangleMeshSet& CollisionDispatcher::engine() const { return m_batch->engine(); }

std::size_t CollisionDispatcher::meshInstances() const { return m_batch->instances().liveCount(); }

} // namespace bulletgpu
