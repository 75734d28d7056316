// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/cloth_group.h"
#include "bullet_adapter/soft_cloth_meshes.h"

#include <vector>

/// A cloth's step in Bullet's deformable world (btDeformableMultiBodyDynamicsWorld) on the flat
/// buffers of the cloths' self-collision: that world moves the nodes only at the very end of a
/// step (btDeformableBodySolver::applyTransforms: x += dt (v + splitv)), so the response works on
/// the positions the step will reach and hands its corrections back as velocities; its contacts
/// go into the m_faceNodeContacts that Bullet's applyRepulsionForce reads.

namespace bulletgpu {

/// Fills the end buffer of `cloth` (started) with where a step of `dt` takes each node from m_x:
/// x + dt (v + splitv), v first clamped per component to the world's m_maxDisplacement / dt
/// (written back to m_v, as applyTransforms would clamp it), and its inverse masses with m_im,
/// 0 for nodes held by a deformable anchor (applyTransforms puts them where the anchor says).
void predictClothEnd(ClothMesh& cloth, double dt);

/// Appends to the m_faceNodeContacts of `cloth`'s body one DeformableFaceNodeContact for each
/// vertex-face pair of cloth.pairs, at the nodes' m_x as Bullet's CollideFF_DD makes them: the
/// face's unit normal turned towards the node, the barycentric weights of the face's point
/// closest to the node, margin = the cloth's thickness, friction = kDF squared, the body as the
/// collision object. Pairs whose face has no normal (zero area) are left out; returns how many
/// were appended.
std::size_t appendFaceNodeContacts(ClothMesh& cloth);

/// Appends, for each pair of `pairs` (vertex-face pairs between two cloths, ClothGroup), one
/// DeformableFaceNodeContact to the node's body's m_faceNodeContacts, as Bullet's CollideVF_DD
/// makes them between two bodies: built as appendFaceNodeContacts builds them, with margin =
/// `thickness`, friction = the product of the two bodies' kDF and the face's body as the
/// collision object; as CollideVF_DD, none for a held node (m_im 0) against a face with a held
/// node. Returns how many were appended.
std::size_t appendCrossFaceNodeContacts(const std::vector<CrossVertexFace>& pairs, double thickness);

/// Sets the velocity of every node of `cloth` whose end position differs from where a step of
/// `dt` would take it (predictClothEnd, velocities as they are now), so that the step takes it to
/// the end position: v = (end - x) / dt - splitv; returns how many changed.
std::size_t steerNodesToEnd(ClothMesh& cloth, double dt);

} // namespace bulletgpu
