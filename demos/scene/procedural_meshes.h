// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/scene/tri_mesh.h"

#include <LinearMath/btVector3.h>

#include <string>
#include <vector>

namespace bulletgpu::demo {

/// Vertices in taruHullPoints(), as many as Bullet's TaruVtx.
constexpr int cTaruVertexCount = 43;

/// A barrel-like convex point cloud with 43 vertices, standing in for BenchmarkDemo's TaruVtx
/// (which is not copied): three rings of 14 points (radius 0.75 at y = -1 and y = 1, radius 1.05
/// at y = 0) and a bung on top at (0, 1.15, 0).
std::vector<btVector3> taruHullPoints();

/// A closed torus around the y axis: the tube circle is swept around the axis in majorSegments
/// steps and has minorSegments points, so it has majorSegments * minorSegments vertices and
/// twice as many triangles (SoftDemo's torus: radii 2 and 0.5, 30 x 10, 300 vertices, 600
/// triangles).
TriMesh torusMesh(btScalar majorRadius, btScalar minorRadius, int majorSegments, int minorSegments);

/// Grid sizes (vertices along x and z) of the eight landscape tiles. Their triangle counts are
/// those of BenchmarkDemo's Landscape01..08 (3,906 / 3,770 / 3,906 / 4,032 / 4,290 / 4,420 /
/// 4,284 / 4,160: 32,768 in all) and their vertex counts add up to the same 17,160.
const std::vector<std::pair<int, int>>& landscapeTileGrids();

/// The eight landscape tiles: a 2 x 4 arrangement of height-field grids covering a square of the
/// given side centred on the origin, heights from one smooth procedural function (so tiles meet
/// at their shared edges) scaled by heightScale.
std::vector<TriMesh> landscapeTiles(btScalar side, btScalar heightScale);

/// Reads the triangles of a Wavefront OBJ file (faces are triangulated). Throws
/// std::runtime_error with tinyobjloader's message when the file cannot be read or has no faces.
TriMesh loadObjMesh(const std::string& path);

} // namespace bulletgpu::demo
