// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"

#include <cmath>

/// Exact orientation signs for double coordinates, shared by the CPU and CUDA paths.
///
/// Each predicate first evaluates its determinant in double with Shewchuk's static error bound
/// ("Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric Predicates", 1997):
/// when |det| exceeds the bound its sign is certain. Otherwise the determinant is expanded into
/// products of input coordinates, each product is written exactly as a sum of doubles (Dekker's
/// two-product), and the terms are summed exactly into a non-overlapping expansion whose largest
/// component gives the sign. The result is exact whenever no product underflows or overflows:
/// always for float inputs, and for double inputs of magnitude in [2^-300, 2^300] (or zero).
/// Code must be compiled without floating-point contraction (-ffp-contract=off, --fmad=false).

namespace bulletgpu {

/// A point or vector in double precision.
struct Vec3d {
    double v[3]; ///< x, y, z.

    /// Coordinate `axis` (0, 1 or 2).
    BULLETGPU_HD double operator[](int axis) const { return v[axis]; }
};

namespace exact {

/// Unit roundoff of double (2^-53).
constexpr double cEpsilon = 1.1102230246251565e-16;
/// Shewchuk's orient3d static bound factor (7 + 56 eps) eps.
constexpr double cOrient3dBound = (7.0 + 56.0 * cEpsilon) * cEpsilon;
/// Shewchuk's orient2d static bound factor (3 + 16 eps) eps.
constexpr double cOrient2dBound = (3.0 + 16.0 * cEpsilon) * cEpsilon;
/// Dekker's splitter 2^27 + 1.
constexpr double cSplitter = 134217729.0;
/// Components an orient3d expansion can need (24 products of 4 doubles each).
constexpr int cMaxComponents = 96;

/// |x| (fabs: a sign-bit mask, where a compare would branch on unpredictable signs).
BULLETGPU_HD double magnitude(double x) { return fabs(x); }

/// x + y = a + b exactly, x = fl(a + b).
BULLETGPU_HD void twoSum(double a, double b, double& x, double& y) {
    x = a + b;
    const double bVirtual = x - a;
    const double aVirtual = x - bVirtual;
    y = (a - aVirtual) + (b - bVirtual);
}

/// x + y = a - b exactly, x = fl(a - b).
BULLETGPU_HD void twoDiff(double a, double b, double& x, double& y) {
    x = a - b;
    const double bVirtual = a - x;
    const double aVirtual = x + bVirtual;
    y = (a - aVirtual) + (bVirtual - b);
}

/// hi + lo = a exactly, each with at most 26 significant bits.
BULLETGPU_HD void split(double a, double& hi, double& lo) {
    const double c = cSplitter * a;
    hi = c - (c - a);
    lo = a - hi;
}

/// x + y = a * b exactly, x = fl(a * b).
BULLETGPU_HD void twoProduct(double a, double b, double& x, double& y) {
    x = a * b;
    double aHi, aLo, bHi, bLo;
    split(a, aHi, aLo);
    split(b, bHi, bLo);
    y = aLo * bLo - (((x - aHi * bHi) - aLo * bHi) - aHi * bLo);
}

/// A non-overlapping expansion, components in increasing magnitude, zeros eliminated.
struct Expansion {
    double c[cMaxComponents]; ///< Components, smallest first.
    int size = 0;             ///< Components in use.

    /// Adds b exactly (Shewchuk's Grow-Expansion with zero elimination).
    BULLETGPU_HD void add(double b) {
        double q = b;
        int out = 0;
        for (int i = 0; i < size; ++i) {
            double sum, err;
            twoSum(q, c[i], sum, err);
            q = sum;
            if (err != 0) c[out++] = err;
        }
        if (q != 0) c[out++] = q;
        size = out;
    }

    /// Adds sign * a * b * d exactly (four doubles).
    BULLETGPU_HD void addProduct3(double sign, double a, double b, double d) {
        double x, y, x1, x0, y1, y0;
        twoProduct(a, b, x, y);
        twoProduct(x, d, x1, x0);
        twoProduct(y, d, y1, y0);
        add(sign * x0);
        add(sign * y0);
        add(sign * y1);
        add(sign * x1);
    }

    /// Sign of the exact sum: -1, 0 or +1.
    BULLETGPU_HD int sign() const {
        if (size == 0) return 0;
        return c[size - 1] > 0 ? 1 : -1;
    }
};

/// Adds sign * det(u, v, w) (rows u, v, w) exactly to `e`.
BULLETGPU_HD void addDet3(Expansion& e, double sign, const Vec3d& u, const Vec3d& v, const Vec3d& w) {
    e.addProduct3(sign, u[0], v[1], w[2]);
    e.addProduct3(-sign, u[0], v[2], w[1]);
    e.addProduct3(-sign, u[1], v[0], w[2]);
    e.addProduct3(sign, u[1], v[2], w[0]);
    e.addProduct3(sign, u[2], v[0], w[1]);
    e.addProduct3(-sign, u[2], v[1], w[0]);
}

/// Exact sign of det(a - d, b - d, c - d), expanded into products of the input coordinates
/// (whether or not their differences round).
BULLETGPU_HD int orient3dExpansion(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
    // det(a-d, b-d, c-d) = det(a,b,c) - det(d,b,c) - det(a,d,c) - det(a,b,d).
    Expansion e;
    addDet3(e, 1.0, a, b, c);
    addDet3(e, -1.0, d, b, c);
    addDet3(e, -1.0, a, d, c);
    addDet3(e, -1.0, a, b, d);
    return e.sign();
}

/// True when x is zero or of a magnitude whose triple products neither underflow nor overflow.
BULLETGPU_HD bool productSafe(double x) {
    const double m = magnitude(x);
    return m == 0 || (m >= 0x1p-300 && m <= 0x1p300);
}

/// Exact sign of det(a - d, b - d, c - d). Zero when the four points share one coordinate (they
/// lie in a plane x, y or z = constant, as a flat cloth or ground on an axis plane: every term of
/// the determinant has a factor from each coordinate). Where every difference is exact (nearby
/// coordinates, as in a mesh) and of a safe magnitude, the determinant of the differences is
/// expanded: six products in an expansion of at most 24 components, instead of
/// orient3dExpansion's 24 in 96.
BULLETGPU_HD int orient3dExact(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
    for (int k = 0; k < 3; ++k)
        if (a[k] == d[k] && b[k] == d[k] && c[k] == d[k]) return 0;
    Vec3d ad, bd, cd;
    bool exactDifferences = true;
    for (int k = 0; k < 3; ++k) {
        double tail[3];
        twoDiff(a[k], d[k], ad.v[k], tail[0]);
        twoDiff(b[k], d[k], bd.v[k], tail[1]);
        twoDiff(c[k], d[k], cd.v[k], tail[2]);
        exactDifferences = exactDifferences && tail[0] == 0 && tail[1] == 0 && tail[2] == 0 && productSafe(ad.v[k]) &&
                           productSafe(bd.v[k]) && productSafe(cd.v[k]);
    }
    if (!exactDifferences) return orient3dExpansion(a, b, c, d);
    Expansion e;
    addDet3(e, 1.0, ad, bd, cd);
    return e.sign();
}

/// Exact sign of (b - a)_i (c - a)_j - (b - a)_j (c - a)_i, expanded into six products of the
/// input coordinates (whether or not their differences round).
BULLETGPU_HD int orient2dExpansion(const Vec3d& a, const Vec3d& b, const Vec3d& c, int i, int j) {
    Expansion e;
    const double terms[6][3] = {{1, b[i], c[j]},  {-1, b[i], a[j]}, {-1, a[i], c[j]},
                                {-1, b[j], c[i]}, {1, b[j], a[i]},  {1, a[j], c[i]}};
    for (const auto& t : terms) {
        double x, y;
        twoProduct(t[1], t[2], x, y);
        e.add(t[0] * y);
        e.add(t[0] * x);
    }
    return e.sign();
}

/// Exact sign of the 2D determinant of (b - a, c - a) in coordinates (i, j). Where the four
/// differences are exact and of a safe magnitude, from their two products written exactly as
/// sums of two doubles (an expansion of at most 4 components); else orient2dExpansion.
BULLETGPU_HD int orient2dExact(const Vec3d& a, const Vec3d& b, const Vec3d& c, int i, int j) {
    double bai, baj, cai, caj, tail[4];
    twoDiff(b[i], a[i], bai, tail[0]);
    twoDiff(b[j], a[j], baj, tail[1]);
    twoDiff(c[i], a[i], cai, tail[2]);
    twoDiff(c[j], a[j], caj, tail[3]);
    if (tail[0] != 0 || tail[1] != 0 || tail[2] != 0 || tail[3] != 0 || !productSafe(bai) || !productSafe(baj) ||
        !productSafe(cai) || !productSafe(caj))
        return orient2dExpansion(a, b, c, i, j);
    double left, leftTail, right, rightTail;
    twoProduct(bai, caj, left, leftTail);
    twoProduct(baj, cai, right, rightTail);
    Expansion e;
    e.add(leftTail);
    e.add(-rightTail);
    e.add(left);
    e.add(-right);
    return e.sign();
}

} // namespace exact

/// Sign of det(a - d, b - d, c - d): +1 when d lies below the plane through a, b, c oriented
/// counter-clockwise seen from above, 0 when the four points are coplanar. Exact (see above).
BULLETGPU_HD int orient3d(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
    const double adx = a[0] - d[0], bdx = b[0] - d[0], cdx = c[0] - d[0];
    const double ady = a[1] - d[1], bdy = b[1] - d[1], cdy = c[1] - d[1];
    const double adz = a[2] - d[2], bdz = b[2] - d[2], cdz = c[2] - d[2];
    const double bdxcdy = bdx * cdy, cdxbdy = cdx * bdy;
    const double cdxady = cdx * ady, adxcdy = adx * cdy;
    const double adxbdy = adx * bdy, bdxady = bdx * ady;
    const double det = adz * (bdxcdy - cdxbdy) + bdz * (cdxady - adxcdy) + cdz * (adxbdy - bdxady);
    using exact::magnitude;
    const double permanent = (magnitude(bdxcdy) + magnitude(cdxbdy)) * magnitude(adz) +
                             (magnitude(cdxady) + magnitude(adxcdy)) * magnitude(bdz) +
                             (magnitude(adxbdy) + magnitude(bdxady)) * magnitude(cdz);
    const double bound = exact::cOrient3dBound * permanent;
    // Branch-free sign: the signs of nearby triangles are unpredictable, the filter's failure rare.
    const int sign = static_cast<int>(det > bound) - static_cast<int>(-det > bound);
    return sign != 0 ? sign : exact::orient3dExact(a, b, c, d);
}

/// The plane through a, b and c prepared for orient3d against many points: the 2x2 minors of
/// its edges from a, computed once (for a mesh, once per triangle and frame).
///
/// orient3dOnPlane expands the determinant along d - a, det = (d - a) . ((b - a) x (c - a)),
/// which is -orient3d's determinant. Each of its six terms is, like each of Shewchuk's, a
/// product of three rounded differences, two of them multiplied and subtracted from another
/// such product, the third multiplied in and the three minors summed: at most seven roundings,
/// so Shewchuk's static bound on the matching permanent certifies the sign just as in
/// orient3d. When the bound does not decide, orient3d itself (with its exact expansion) answers.
struct PlaneMinors {
    double normal[3];    ///< (b - a) x (c - a), rounded.
    double permanent[3]; ///< Sums of the minors' absolute products.
};

/// The minors of the plane through a, b and c.
BULLETGPU_HD PlaneMinors planeMinors(const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const double ux = b[0] - a[0], uy = b[1] - a[1], uz = b[2] - a[2];
    const double vx = c[0] - a[0], vy = c[1] - a[1], vz = c[2] - a[2];
    const double uyvz = uy * vz, uzvy = uz * vy, uzvx = uz * vx, uxvz = ux * vz, uxvy = ux * vy, uyvx = uy * vx;
    using exact::magnitude;
    return PlaneMinors{
        {uyvz - uzvy, uzvx - uxvz, uxvy - uyvx},
        {magnitude(uyvz) + magnitude(uzvy), magnitude(uzvx) + magnitude(uxvz), magnitude(uxvy) + magnitude(uyvx)}};
}

/// The sign of orient3d(a, b, c, d) when the static filter certifies it from `plane` =
/// planeMinors(a, b, c), else 0 (d too near the plane to tell, or on it).
BULLETGPU_HD int orient3dOnPlaneFiltered(const PlaneMinors& plane, const Vec3d& a, const Vec3d& d) {
    const double wx = d[0] - a[0], wy = d[1] - a[1], wz = d[2] - a[2];
    const double det = (plane.normal[0] * wx + plane.normal[1] * wy) + plane.normal[2] * wz;
    using exact::magnitude;
    const double permanent =
        (plane.permanent[0] * magnitude(wx) + plane.permanent[1] * magnitude(wy)) + plane.permanent[2] * magnitude(wz);
    const double bound = exact::cOrient3dBound * permanent;
    return static_cast<int>(-det > bound) - static_cast<int>(det > bound);
}

/// orient3d(a, b, c, d), exactly, from `plane` = planeMinors(a, b, c).
BULLETGPU_HD int orient3dOnPlane(const PlaneMinors& plane, const Vec3d& a, const Vec3d& b, const Vec3d& c,
                                 const Vec3d& d) {
    const int sign = orient3dOnPlaneFiltered(plane, a, d);
    return sign != 0 ? sign : orient3d(a, b, c, d);
}

/// Sign of the 2D determinant of (b - a, c - a) in coordinates (i, j): +1 when a, b, c turn
/// counter-clockwise, 0 when collinear. Exact (see above).
BULLETGPU_HD int orient2d(const Vec3d& a, const Vec3d& b, const Vec3d& c, int i, int j) {
    const double left = (b[i] - a[i]) * (c[j] - a[j]);
    const double right = (b[j] - a[j]) * (c[i] - a[i]);
    const double det = left - right;
    const double bound = exact::cOrient2dBound * (exact::magnitude(left) + exact::magnitude(right));
    const int sign = static_cast<int>(det > bound) - static_cast<int>(-det > bound);
    return sign != 0 ? sign : exact::orient2dExact(a, b, c, i, j);
}

} // namespace bulletgpu
