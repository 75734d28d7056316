// SPDX-License-Identifier: Zlib
// Vertex-face and edge-edge CCD (kernels/narrow/ccd) against the exact ground truth of the
// ccd-queries data set (shared/data, see its README.md; skipped with a message when absent), named
// degenerate cases with known times of impact, and the sampling oracle on small random scenes.
#include "kernels/narrow/ccd/ccd_queries.h"
#include "kernels/reference/brute_force_ccd.h"

#include "support/shared_data.h"
#include "support/test_skip.h"
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace bulletgpu;

namespace {

/// The rational numerator / denominator (decimal integers) as a double, when it is one exactly:
/// the numerator converts exactly (strtod rounds correctly; printing it back gives the same
/// digits), the denominator is a power of two, and the quotient scales back to the numerator.
bool exactRational(const std::string& numerator, const std::string& denominator, double& value) {
    const double n = std::strtod(numerator.c_str(), nullptr);
    const double d = std::strtod(denominator.c_str(), nullptr);
    char printed[400];
    std::snprintf(printed, sizeof(printed), "%.0f", n);
    int exponent = 0;
    if (printed != numerator || !(d > 0.0) || std::frexp(d, &exponent) != 0.5) return false;
    value = n / d;
    return value * d == n;
}

/// One query of the data set: 4 points at t = 0 and at t = 1, and the truth.
struct DataQuery {
    Vec3d x0[4]; ///< Points at t = 0.
    Vec3d x1[4]; ///< Points at t = 1.
    bool truth;  ///< The exact answer.
};

/// The queries of one CSV file (8 rows per query: x, y, z as numerator, denominator, then the
/// truth); false when a value is not a double exactly.
bool readQueries(const std::string& path, std::vector<DataQuery>& queries) {
    std::ifstream in(path);
    std::string line;
    int row = 0;
    DataQuery query{};
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::stringstream fields(line);
        std::string field[7];
        for (std::string& f : field) std::getline(fields, f, ',');
        Vec3d& point = row < 4 ? query.x0[row] : query.x1[row - 4];
        for (int k = 0; k < 3; ++k) {
            if (!exactRational(field[2 * k], field[2 * k + 1], point.v[k])) return false;
        }
        query.truth = field[6] == "1";
        if (++row == 8) {
            queries.push_back(query);
            row = 0;
        }
    }
    return row == 0;
}

/// Totals of one folder of the data set.
struct FolderTally {
    std::size_t queries = 0;         ///< Queries run.
    std::size_t collisions = 0;      ///< Queries whose truth is a collision.
    std::size_t falseNegatives = 0;  ///< Collisions not reported.
    std::size_t falsePositives = 0;  ///< Reported hits whose truth is no collision.
    std::size_t undecided = 0;       ///< Hits reported at the iteration limit.
    std::uint32_t maxIterations = 0; ///< Most boxes examined by one query.
    std::uint32_t maxPending = 0;    ///< Most boxes pending at once in one query.
    double seconds = 0.0;            ///< Time in the CCD calls.
};

/// Runs one query of either kind with a queue of `QueueCapacity` boxes.
template <int QueueCapacity = ccd::cQueueCapacity>
CcdResult runCcd(bool vertexFace, const Vec3d x0[4], const Vec3d x1[4], double eta,
                 const CcdOptions& options = CcdOptions{}) {
    CcdResult result;
    if (vertexFace) {
        vertexFaceCcd<QueueCapacity>(x0, x1, eta, options, result);
    } else {
        edgeEdgeCcd<QueueCapacity>(x0, x1, eta, options, result);
    }
    return result;
}

/// The queue a GPU kernel might afford (64 boxes: 3.5 KiB of stack).
constexpr int cSmallQueue = 64;

/// A point.
Vec3d point(double x, double y, double z) { return Vec3d{{x, y, z}}; }

/// A named case: 4 points at t = 0 and t = 1, and the earliest time within eta (negative: none).
struct NamedCase {
    const char* name;       ///< What it shows.
    bool vertexFace;        ///< Vertex-face (else edge-edge).
    Vec3d x0[4];            ///< Points at t = 0.
    Vec3d x1[4];            ///< Points at t = 1.
    double toi;             ///< The true earliest time of impact, or -1 for no impact.
    bool continuum = false; ///< A whole segment of contacts appears at once at `toi` (see below).
};

/// The cases, at unit scale and with eta = 0. Face: a = origin, b = x axis, c = y axis.
std::vector<NamedCase> namedCases() {
    const Vec3d a = point(0, 0, 0), b = point(1, 0, 0), c = point(0, 1, 0);
    // A height that 1 + h rounds away: from z = -1, x0 + (x1 - x0) lands at 0, below h, so the
    // corner values miss the contact unless they are widened by the rounding bound.
    const double h = 3 * 0x1p-60;
    const Vec3d ah = point(0, 0, h), bh = point(1, 0, h), ch = point(0, 1, h);
    return {
        // Vertex-face.
        {"vertex falls through the face", true, {point(0.25, 0.25, 1), a, b, c}, {point(0.25, 0.25, -1), a, b, c}, 0.5},
        {"vertex slides in the face's plane into the face",
         true,
         {point(-1, 0.25, 0), a, b, c},
         {point(1, 0.25, 0), a, b, c},
         0.5},
        {"vertex slides in the face's plane beside the face",
         true,
         {point(-1, -0.25, 0), a, b, c},
         {point(1, -0.25, 0), a, b, c},
         -1},
        {"vertex and face slide together in the plane, touching",
         true,
         {point(0.25, 0.25, 0), a, b, c},
         {point(1.25, 0.25, 0), point(1, 0, 0), point(2, 0, 0), point(1, 1, 0)},
         0},
        {"zero motion, vertex on the face", true, {point(0.25, 0.25, 0), a, b, c}, {point(0.25, 0.25, 0), a, b, c}, 0},
        {"zero motion, vertex above the face",
         true,
         {point(0.25, 0.25, 0.5), a, b, c},
         {point(0.25, 0.25, 0.5), a, b, c},
         -1},
        {"zero motion, everything at one point", true, {a, a, a, a}, {a, a, a, a}, 0},
        {"contact exactly at t = 0", true, {point(0.25, 0.25, 0), a, b, c}, {point(0.25, 0.25, 1), a, b, c}, 0},
        {"contact exactly at t = 1", true, {point(0.25, 0.25, 1), a, b, c}, {point(0.25, 0.25, 0), a, b, c}, 1},
        {"contact exactly at t = 1 at a height lost to rounding",
         true,
         {point(0.25, 0.25, -1), ah, bh, ch},
         {point(0.25, 0.25, h), ah, bh, ch},
         1},
        {"stops 1e-3 short of the face at t = 1",
         true,
         {point(0.25, 0.25, 1), a, b, c},
         {point(0.25, 0.25, 1e-3), a, b, c},
         -1},
        {"vertex passes exactly through an edge", true, {point(0.5, 0, 1), a, b, c}, {point(0.5, 0, -1), a, b, c}, 0.5},
        {"vertex passes exactly through the hypotenuse",
         true,
         {point(0.5, 0.5, 1), a, b, c},
         {point(0.5, 0.5, -1), a, b, c},
         0.5},
        {"vertex passes 1e-3 beside an edge",
         true,
         {point(0.5, -1e-3, 1), a, b, c},
         {point(0.5, -1e-3, -1), a, b, c},
         -1},
        {"vertex passes exactly through a corner", true, {point(0, 1, 1), a, b, c}, {point(0, 1, -1), a, b, c}, 0.5},
        {"face collapsed to a segment sweeps over the vertex",
         true,
         {point(0.5, 0, 0), point(0, 0, 1), point(1, 0, 1), point(1, 0, 1)},
         {point(0.5, 0, 0), point(0, 0, -1), point(1, 0, -1), point(1, 0, -1)},
         0.5,
         true},
        {"face moves onto a resting vertex",
         true,
         {point(0.25, 0.25, 0), point(0, 0, 2), point(1, 0, 2), point(0, 1, 2)},
         {point(0.25, 0.25, 0), point(0, 0, -2), point(1, 0, -2), point(0, 1, -2)},
         0.5},
        // Edge-edge: a = (a0, a1), b = (b0, b1).
        {"crossing edges meet",
         false,
         {a, b, point(0.5, -1, 1), point(0.5, 1, 1)},
         {a, b, point(0.5, -1, -1), point(0.5, 1, -1)},
         0.5},
        {"parallel edges, one sweeps onto the other",
         false,
         {a, b, point(0.5, 1, 0), point(1.5, 1, 0)},
         {a, b, point(0.5, -1, 0), point(1.5, -1, 0)},
         0.5,
         true},
        {"parallel edges, one sweeps past above the other",
         false,
         {a, b, point(0.5, 1, 0.5), point(1.5, 1, 0.5)},
         {a, b, point(0.5, -1, 0.5), point(1.5, -1, 0.5)},
         -1},
        {"collinear edges slide until their ends meet",
         false,
         {a, b, point(2.5, 0, 0), point(3.5, 0, 0)},
         {a, b, point(0.5, 0, 0), point(1.5, 0, 0)},
         0.75},
        {"collinear edges, static, apart",
         false,
         {a, b, point(2, 0, 0), point(3, 0, 0)},
         {a, b, point(2, 0, 0), point(3, 0, 0)},
         -1},
        {"zero motion, edges cross",
         false,
         {a, b, point(0.5, -1, 0), point(0.5, 1, 0)},
         {a, b, point(0.5, -1, 0), point(0.5, 1, 0)},
         0},
        {"zero motion, edges apart",
         false,
         {a, b, point(0.5, -1, 0.5), point(0.5, 1, 0.5)},
         {a, b, point(0.5, -1, 0.5), point(0.5, 1, 0.5)},
         -1},
        {"edges cross exactly at t = 0",
         false,
         {a, b, point(0.5, -1, 0), point(0.5, 1, 0)},
         {a, b, point(0.5, -1, 1), point(0.5, 1, 1)},
         0},
        {"edges cross exactly at t = 1 at a height lost to rounding",
         false,
         {ah, bh, point(0.5, -1, -1), point(0.5, 1, -1)},
         {ah, bh, point(0.5, -1, h), point(0.5, 1, h)},
         1},
        {"edges cross exactly at t = 1",
         false,
         {a, b, point(0.5, -1, 1), point(0.5, 1, 1)},
         {a, b, point(0.5, -1, 0), point(0.5, 1, 0)},
         1},
        {"edge passes exactly through the other's endpoint",
         false,
         {a, b, point(1, -1, 1), point(1, 1, 1)},
         {a, b, point(1, -1, -1), point(1, 1, -1)},
         0.5},
        {"endpoints meet exactly",
         false,
         {a, b, point(1, 0, 1), point(2, 0, 1)},
         {a, b, point(1, 0, -1), point(2, 0, -1)},
         0.5},
        {"edge passes 1e-3 beyond the other's endpoint",
         false,
         {a, b, point(1 + 1e-3, -1, 1), point(1 + 1e-3, 1, 1)},
         {a, b, point(1 + 1e-3, -1, -1), point(1 + 1e-3, 1, -1)},
         -1},
        {"edge collapsed to a point passes through the other",
         false,
         {a, b, point(0.5, 0, 1), point(0.5, 0, 1)},
         {a, b, point(0.5, 0, -1), point(0.5, 0, -1)},
         0.5},
    };
}

/// The points of `x` scaled by `scale` and moved by `offset` on every axis.
void transform(const Vec3d in[4], double scale, double offset, Vec3d out[4]) {
    for (int i = 0; i < 4; ++i) {
        for (int k = 0; k < 3; ++k) out[i].v[k] = in[i][k] * scale + offset;
    }
}

} // namespace

TEST_CASE("CCD finds every collision of the ccd-queries data set", "[narrow][ccd][data]") {
    const std::string root = bulletgpu::test::sharedDataDir() + "/ccd-queries";
    if (!std::filesystem::is_directory(root)) {
        bulletgpu::test::skipTestCase("no ccd-queries at " + root + " (set BULLETGPU_DATA_DIR)");
        return;
    }
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        if (entry.path().extension() == ".csv") files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() == 42);
    // Every input is a double exactly, so eta = 0 asks the same question as the ground truth.
    const double eta = 0.0;
    // The default queue, and a small one: more undecided hits, still no false negative.
    const int capacity = GENERATE(ccd::cQueueCapacity, cSmallQueue);
    std::map<std::string, FolderTally> folders;
    FolderTally total;
    for (const std::string& file : files) {
        std::vector<DataQuery> queries;
        INFO(file);
        REQUIRE(readQueries(file, queries));
        const std::string folder = std::filesystem::path(file).parent_path().lexically_relative(root).generic_string();
        const bool vertexFace = folder.find("vertex-face") != std::string::npos;
        FolderTally& tally = folders[folder];
        for (const DataQuery& query : queries) {
            const auto start = std::chrono::steady_clock::now();
            const CcdResult result = capacity == cSmallQueue ? runCcd<cSmallQueue>(vertexFace, query.x0, query.x1, eta)
                                                             : runCcd(vertexFace, query.x0, query.x1, eta);
            tally.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            ++tally.queries;
            tally.collisions += query.truth;
            tally.falseNegatives += query.truth && !result.hit;
            tally.falsePositives += !query.truth && result.hit;
            tally.undecided += result.undecided;
            tally.maxIterations = std::max(tally.maxIterations, result.iterations);
            tally.maxPending = std::max(tally.maxPending, result.peakPending);
        }
    }
    std::ostringstream table;
    table << "ccd-queries, eta = 0, tolerance " << CcdOptions{}.tolerance << ", queue of " << capacity
          << " boxes:\nfolder  queries  collisions  false-negatives  false-positives  undecided  max-iterations  "
             "max-pending  queries/s\n";
    for (const auto& [name, tally] : folders) {
        table << name << "  " << tally.queries << "  " << tally.collisions << "  " << tally.falseNegatives << "  "
              << tally.falsePositives << "  " << tally.undecided << "  " << tally.maxIterations << "  "
              << tally.maxPending << "  " << static_cast<long long>(tally.queries / tally.seconds) << "\n";
        total.queries += tally.queries;
        total.collisions += tally.collisions;
        total.falseNegatives += tally.falseNegatives;
        total.falsePositives += tally.falsePositives;
        total.undecided += tally.undecided;
        total.seconds += tally.seconds;
    }
    table << "total  " << total.queries << "  " << total.collisions << "  " << total.falseNegatives << "  "
          << total.falsePositives << "  " << total.undecided << "  -  -  "
          << static_cast<long long>(total.queries / total.seconds);
    WARN(table.str());
    REQUIRE(total.falseNegatives == 0);
}

TEST_CASE("The error bound's upward rounding is nextafter toward +infinity", "[narrow][ccd]") {
    const double special[] = {0.0,     -0.0,    0x1p-1074, -0x1p-1074, 0x1p-1022, -0x1p-1022, 1.0,    -1.0,
                              0x1p-53, DBL_MAX, -DBL_MAX,  HUGE_VAL,   -HUGE_VAL, 1e300,      -1e-300};
    for (const double x : special) {
        INFO("x " << x);
        REQUIRE(ccd::roundUp(x) == std::nextafter(x, HUGE_VAL));
        REQUIRE(std::signbit(ccd::roundUp(x)) == std::signbit(std::nextafter(x, HUGE_VAL)));
    }
    REQUIRE(std::isnan(ccd::roundUp(NAN)));
    std::mt19937_64 rng(29);
    for (int trial = 0; trial < 100000; ++trial) {
        std::uint64_t bits = rng();
        double x;
        std::memcpy(&x, &bits, sizeof(x));
        if (std::isnan(x)) continue;
        REQUIRE(ccd::roundUp(x) == std::nextafter(x, HUGE_VAL));
    }
}

TEST_CASE("CCD named cases report the impact no later than the true time", "[narrow][ccd]") {
    // Unit scale, a tiny scale whose products fall in the subnormal range, and large coordinates
    // far from the origin; the tolerance scales with the case.
    struct Scale {
        double scale;  ///< Factor on every coordinate.
        double offset; ///< Then added to every coordinate.
    };
    const Scale scale =
        GENERATE(Scale{1.0, 0.0}, Scale{1e-8, 0.0}, Scale{1e-300, 0.0}, Scale{1e8, 1e10}, Scale{1.0, 1e6});
    CcdOptions options;
    options.tolerance = 1e-6 * scale.scale;
    for (const NamedCase& test : namedCases()) {
        Vec3d x0[4], x1[4];
        transform(test.x0, scale.scale, scale.offset, x0);
        transform(test.x1, scale.scale, scale.offset, x1);
        const CcdResult result = runCcd(test.vertexFace, x0, x1, 0.0, options);
        INFO(test.name << " at scale " << scale.scale << ", offset " << scale.offset << ": hit " << result.hit
                       << ", toi " << result.toi << ", " << result.iterations << " boxes");
        if (test.toi >= 0.0) {
            REQUIRE(result.hit);
            CHECK(result.toi <= test.toi);
            // Not the contract, a sanity check: the lower bound is close. A continuum of contacts
            // appearing at once must be ruled out along its whole length just before it appears,
            // which fills the box queue: the hit is then undecided, its bound less tight.
            CHECK(result.undecided == test.continuum);
            CHECK(result.toi >= test.toi - (test.continuum ? 1e-3 : 1e-5));
        } else {
            CHECK_FALSE(result.undecided);
            CHECK_FALSE(result.hit);
        }
    }
}

TEST_CASE("CCD with the default tolerance stays conservative at every scale", "[narrow][ccd]") {
    // A tolerance far below the rounding error (large coordinates) or far above the scene
    // (tiny coordinates) costs precision, never a collision.
    const double scale = GENERATE(1e-300, 1e-8, 1e8, 1e15);
    for (const NamedCase& test : namedCases()) {
        if (test.toi < 0.0) continue;
        Vec3d x0[4], x1[4];
        transform(test.x0, scale, 0.0, x0);
        transform(test.x1, scale, 0.0, x1);
        const CcdResult result = runCcd(test.vertexFace, x0, x1, 0.0);
        INFO(test.name << " at scale " << scale << ": toi " << result.toi);
        REQUIRE(result.hit);
        CHECK(result.toi <= test.toi);
    }
}

TEST_CASE("CCD reports random exact touches at every scale", "[narrow][ccd]") {
    // Features that touch exactly at t = 1/2 with eta = 0: dyadic coordinates of 21 bits and
    // parameters u, v in sixteenths (vertex-face) or powers of two (edge-edge) keep the contact
    // point, the midpoints and the end positions x1 = 2 x(1/2) - x0 exact in double, and a power
    // of two scales them exactly, from the subnormal range up to the bound's limit of 2^1000.
    const int exponent = GENERATE(-1000, -300, -40, 0, 40, 300, 990);
    std::mt19937_64 random(291);
    std::uniform_int_distribution<int> integer(-(1 << 20), 1 << 20), sixteenth(0, 16), halvings(0, 4);
    const auto dyadic = [&] {
        return point(std::ldexp(integer(random), -20), std::ldexp(integer(random), -20),
                     std::ldexp(integer(random), -20));
    };
    const auto combine = [](const Vec3d& a, double u, const Vec3d& b) {
        return point(a[0] + u * (b[0] - a[0]), a[1] + u * (b[1] - a[1]), a[2] + u * (b[2] - a[2]));
    };
    std::size_t queries = 0, undecided = 0;
    for (int q = 0; q < 2000; ++q) {
        const bool vertexFace = q % 2 == 0;
        // Positions at t = 1/2, touching.
        Vec3d middle[4];
        for (int i = 1; i < 4; ++i) middle[i] = dyadic();
        if (vertexFace) {
            const double u = sixteenth(random) / 16.0, v = (16 - sixteenth(random)) / 16.0 * (1.0 - u);
            const Vec3d onEdge = combine(middle[1], u, middle[2]);
            middle[0] =
                point(onEdge[0] + v * (middle[3][0] - middle[1][0]), onEdge[1] + v * (middle[3][1] - middle[1][1]),
                      onEdge[2] + v * (middle[3][2] - middle[1][2]));
        } else {
            // b1 = b0 + (P - b0) / v with P = a0 + u (a1 - a0) on edge a and v = 2^-j.
            middle[0] = dyadic();
            const Vec3d contact = combine(middle[0], sixteenth(random) / 16.0, middle[1]);
            middle[3] = combine(middle[2], std::ldexp(1.0, halvings(random)), contact);
        }
        Vec3d x0[4], x1[4];
        for (int i = 0; i < 4; ++i) {
            x0[i] = dyadic();
            for (int k = 0; k < 3; ++k) {
                x1[i].v[k] = std::ldexp(2.0 * middle[i][k] - x0[i][k], exponent);
                x0[i].v[k] = std::ldexp(x0[i][k], exponent);
            }
        }
        const CcdResult result = runCcd(vertexFace, x0, x1, 0.0);
        INFO("query " << q << " at scale 2^" << exponent << ": toi " << result.toi);
        REQUIRE(result.hit);
        REQUIRE(result.toi <= 0.5);
        ++queries;
        undecided += result.undecided;
    }
    CHECK(undecided * 100 <= queries);
}

TEST_CASE("CCD reports undecided queries as hits no later than the impact", "[narrow][ccd]") {
    const NamedCase falls = namedCases()[0];
    SECTION("iteration limit") {
        CcdOptions options;
        options.maxIterations = 3;
        const CcdResult result = runCcd(true, falls.x0, falls.x1, 0.0, options);
        REQUIRE(result.hit);
        CHECK(result.undecided);
        CHECK(result.iterations == 3);
        CHECK(result.toi <= falls.toi);
    }
    SECTION("coordinates outside the bound's domain") {
        Vec3d x1[4] = {falls.x1[0], falls.x1[1], falls.x1[2], falls.x1[3]};
        x1[3].v[2] = 1e305;
        CcdResult result = runCcd(true, falls.x0, x1, 0.0);
        CHECK((result.hit && result.undecided && result.toi == 0.0));
        x1[3].v[2] = std::nan("");
        result = runCcd(false, falls.x0, x1, 0.0);
        CHECK((result.hit && result.undecided && result.toi == 0.0));
    }
}

TEST_CASE("CCD finds every contact of small random scenes that the sampling oracle finds", "[narrow][ccd]") {
    // Two triangles moving at random in [-1, 1]^3: their 6 vertex-face and 9 edge-edge pairs.
#if defined(__SANITIZE_ADDRESS__)
    // Sanitized builds (CI, 2 cores) run a quarter of the scenes.
    const int scenes = 50;
#else
    const int scenes = 200;
#endif
    const int steps = 10000;
    // The oracle's distances carry double rounding of about 1e-15: a sampled contact counts
    // when the distance is below eta by a margin well above that.
    const double margin = 1e-9;
    const double eta = GENERATE(0.01, 0.1);
    std::mt19937_64 random(29);
    std::uniform_real_distribution<double> coordinate(-1.0, 1.0);
    std::size_t pairs = 0, sampledHits = 0, ccdHits = 0, farHits = 0;
    double largestEarliness = 0.0;
    for (int s = 0; s < scenes; ++s) {
        Vec3d x0[6], x1[6];
        for (int i = 0; i < 6; ++i) {
            for (int k = 0; k < 3; ++k) {
                x0[i].v[k] = coordinate(random);
                x1[i].v[k] = x0[i].v[k] + coordinate(random);
            }
        }
        // Pairs: vertex i of one triangle against the other face; edge i of one against edge j of
        // the other.
        for (int pair = 0; pair < 15; ++pair) {
            const bool vertexFace = pair < 6;
            int index[4];
            if (vertexFace) {
                const int triangle = pair / 3, other = 3 * (1 - triangle);
                index[0] = 3 * triangle + pair % 3;
                for (int c = 0; c < 3; ++c) index[1 + c] = other + c;
            } else {
                const int i = (pair - 6) / 3, j = (pair - 6) % 3;
                index[0] = i;
                index[1] = (i + 1) % 3;
                index[2] = 3 + j;
                index[3] = 3 + (j + 1) % 3;
            }
            Vec3d p0[4], p1[4];
            double speed = 0.0;
            for (int c = 0; c < 4; ++c) {
                p0[c] = x0[index[c]];
                p1[c] = x1[index[c]];
                speed = std::max(speed, sampling::length(sampling::sub(p1[c], p0[c])));
            }
            const SampledCcd sampled = vertexFace ? sampleVertexFace(p0, p1, eta - margin, steps)
                                                  : sampleEdgeEdge(p0, p1, eta - margin, steps);
            const CcdResult result = runCcd(vertexFace, p0, p1, eta);
            ++pairs;
            sampledHits += sampled.hit;
            ccdHits += result.hit;
            INFO("scene " << s << " pair " << pair << ": sampled first " << sampled.firstTime << ", toi "
                          << result.toi);
            REQUIRE_FALSE(result.undecided);
            if (sampled.hit) {
                REQUIRE(result.hit);
                REQUIRE(result.toi <= sampled.firstTime);
                largestEarliness = std::max(largestEarliness, sampled.firstTime - result.toi);
            }
            // A hit far from every sample would be a false positive beyond the tolerance: the
            // cube [-eta, eta]^3 reaches sqrt(3) eta, and the features move at most 2 speed / steps
            // between samples.
            farHits += result.hit && sampled.minDistance > std::sqrt(3.0) * eta + 2.0 * speed / steps + 1e-5;
        }
    }
    WARN("random scenes, eta " << eta << ": " << pairs << " pairs, " << sampledHits << " sampled hits, " << ccdHits
                               << " CCD hits, largest (first sample - toi) " << largestEarliness);
    CHECK(sampledHits > pairs / 20);
    CHECK(farHits == 0);
}

TEST_CASE("Parameter boxes hold their dyadic bounds exactly", "[narrow][ccd]") {
    // Random chains of halvings down to cMinWidth, each box held both ways: as the queue stores
    // it and as six doubles halved at 0.5 (lo + hi). The bounds must agree bit for bit, and so
    // must the queue's order.
    std::mt19937_64 random(404);
    struct Doubles {
        double lo[3], hi[3];
        std::int32_t level;
    };
    std::vector<ccd::ParameterBox> boxes;
    std::vector<Doubles> reference;
    for (int chain = 0; chain < 200; ++chain) {
        ccd::ParameterBox box = ccd::ParameterBox::whole();
        Doubles expected{{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}, 0};
        for (int step = 0; step < 3 * ccd::cFinestLevel; ++step) {
            const int d = static_cast<int>(random() % 3);
            if (!(expected.hi[d] - expected.lo[d] > ccd::cMinWidth)) continue;
            const bool upper = random() % 2 == 1;
            const double middle = 0.5 * (expected.lo[d] + expected.hi[d]);
            (upper ? expected.lo[d] : expected.hi[d]) = middle;
            ++expected.level;
            ccd::ParameterBox lower, higher;
            box.halve(d, lower, higher);
            box = upper ? higher : lower;
            REQUIRE(box.level == expected.level);
            for (int k = 0; k < 3; ++k) {
                REQUIRE(box.lo(k) == expected.lo[k]);
                REQUIRE(box.hi(k) == expected.hi[k]);
            }
            if (random() % 8 == 0) {
                boxes.push_back(box);
                reference.push_back(expected);
            }
        }
    }
    REQUIRE(boxes.size() > 500);
    for (std::size_t i = 0; i + 1 < boxes.size(); ++i) {
        const std::size_t j = random() % boxes.size();
        const bool expectedBefore =
            reference[i].lo[0] < reference[j].lo[0] ||
            (reference[i].lo[0] == reference[j].lo[0] && reference[i].level > reference[j].level);
        REQUIRE(ccd::before(boxes[i], boxes[j]) == expectedBefore);
    }
}
