// SPDX-License-Identifier: Zlib
#include "demos/app/demo_options.h"

#include "demos/common/broadphase_factory.h"
#include "demos/common/narrow_factory.h"
#include "demos/common/soft_solver_factory.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace bulletgpu::demo {
namespace {

constexpr const char* cUsage =
    "usage: bulletgpu-demo [--scene FILE] [--broadphase NAME | --compare [NAME,NAME,...]]\n"
    "                      [--narrow NAME | --narrow NAME,NAME,... | --narrow compare]\n"
    "                      [--soft-solver NAME | --soft-solver NAME,NAME,... | --soft-solver compare]\n"
    "                      [--self-intersections] [--steps N] [--scale F] [--json FILE] [--csv FILE]\n"
    "                      [--render DIR] [--render-every K] [--size WxH] [--plot FILE] [--list]\n"
    "\n"
    "Steps a scene file headlessly with one or several broadphases (and narrow phases) and prints a\n"
    "per-phase table. Options take their value after a space or an '=' (--narrow=compare).\n"
    "  --scene FILE        scene to run (default: %s)\n"
    "  --broadphase NAME   one of: dbvt sap simple bulletgpu bulletgpu-cpu bulletgpu-cuda (default: bulletgpu);\n"
    "                      the bulletgpu names take -k<K> for K slabs, e.g. bulletgpu-cpu-k2\n"
    "  --compare [LIST]    run several broadphases on the same scene (default list: dbvt,bulletgpu);\n"
    "                      the first is the reference for time ratios and physics agreement\n"
    "  --narrow NAME       narrow phase for mesh pairs: bullet (btCollisionDispatcher, GImpact through\n"
    "                      btGImpactCollisionAlgorithm), bulletgpu, bulletgpu-cpu or bulletgpu-cuda\n"
    "                      (bulletgpu::CollisionDispatcher); a list runs each broadphase with each, the\n"
    "                      first being the reference; compare is bullet,bulletgpu (default: the scene\n"
    "                      file's \"world.narrow\")\n"
    "  --soft-solver NAME  soft-body solver of soft scenes: bullet (Bullet's btDefaultSoftBodySolver),\n"
    "                      bulletgpu, bulletgpu-cpu or bulletgpu-cuda (bulletgpu::SoftBodySolver: cloth and\n"
    "                      rope self-collision); a list runs each broadphase and narrow phase with each,\n"
    "                      the first being the reference; compare is bullet,bulletgpu (default: the scene\n"
    "                      file's \"world.softSolver\", bullet when it has none); in deformable scenes,\n"
    "                      bullet is btDeformableMultiBodyDynamicsWorld and the bulletgpu names\n"
    "                      bulletgpu::DeformableMultiBodyDynamicsWorld (cloth self-collision)\n"
    "  --self-intersections  after every step, count the cloths' intersecting triangle pairs (sharing\n"
    "                      no vertex) and measure the ropes' closest non-neighbour nodes; reported\n"
    "                      per run and in the JSON and CSV\n"
    "  --steps N           steps per run (default: the scene file's own count)\n"
    "  --scale F           multiply the object counts of scalable scenes (box fields, Avril et al.)\n"
    "  --json FILE         write the report as JSON\n"
    "  --csv FILE          write one row per step and broadphase as CSV\n"
    "  --render DIR        write PNG frames from the scene's camera to\n"
    "                      DIR/<broadphase>[/<narrow>][/<soft solver>]/\n"
    "  --render-every K    steps between rendered frames (default 10)\n"
    "  --size WxH          rendered frame size (default 960x540)\n"
    "  --plot FILE         write a PNG chart of step time per frame for each broadphase\n"
    "  --list              list the scene files beside the default scene\n";

std::vector<std::string> splitList(const std::string& list) {
    std::vector<std::string> items;
    std::stringstream stream(list);
    for (std::string item; std::getline(stream, item, ',');) {
        if (!item.empty()) items.push_back(item);
    }
    return items;
}

int parsePositive(const std::string& option, const std::string& text) {
    std::size_t used = 0;
    int value = 0;
    try {
        value = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || value <= 0) {
        throw std::invalid_argument(option + " needs a positive integer, got '" + text + "'");
    }
    return value;
}

void checkBroadphaseName(const std::string& name) {
    if (isBroadphaseName(name)) return;
    throw std::invalid_argument("unknown broadphase '" + name +
                                "' (dbvt, sap, simple, bulletgpu, bulletgpu-cpu or bulletgpu-cuda, the last three "
                                "optionally with -k<slabs>, e.g. bulletgpu-cpu-k2)");
}

/// The names of a --narrow or --soft-solver value: compare (bullet, then bulletgpu) or a
/// comma-separated list of `known` names, each a `what` ("narrow phase"); `plural` names them in
/// the error for an empty list.
std::vector<std::string> readChoices(const std::string& text, const std::string& option, const std::string& what,
                                     const std::string& plural, const std::vector<std::string>& known) {
    if (text == "compare") return {"bullet", "bulletgpu"};
    std::vector<std::string> names = splitList(text);
    if (names.empty()) throw std::invalid_argument(option + " needs " + plural);
    for (const std::string& name : names) {
        if (!holdsName(known, name))
            throw std::invalid_argument("unknown " + what + " '" + name + "' (" + joinedNames(known) + ", or compare)");
    }
    return names;
}

std::vector<std::string> readNarrowPhases(const std::string& text) {
    return readChoices(text, "--narrow", "narrow phase", "narrow-phase names", narrowPhaseNames());
}

std::vector<std::string> readSoftSolvers(const std::string& text) {
    return readChoices(text, "--soft-solver", "soft-body solver", "soft-body solver names", softSolverNames());
}

} // namespace

DemoOptions parseDemoOptions(int argc, char** argv, const std::string& defaultScene) {
    DemoOptions options;
    options.scenePath = defaultScene;
    options.broadphases = {"bulletgpu"};
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        // --option=value is --option value.
        std::string inlineValue;
        const std::size_t equals = arg.find('=');
        const bool hasInlineValue = arg.rfind("--", 0) == 0 && equals != std::string::npos;
        if (hasInlineValue) {
            inlineValue = arg.substr(equals + 1);
            arg = arg.substr(0, equals);
        }
        auto value = [&]() -> std::string {
            if (hasInlineValue) return inlineValue;
            if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--scene") {
            options.scenePath = value();
        } else if (arg == "--broadphase") {
            options.broadphases = {value()};
        } else if (arg == "--compare") {
            const bool hasList = hasInlineValue || (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0);
            options.broadphases = hasList ? splitList(value()) : std::vector<std::string>{"dbvt", "bulletgpu"};
            if (options.broadphases.empty()) throw std::invalid_argument("--compare needs broadphase names");
        } else if (arg == "--narrow") {
            options.narrows = readNarrowPhases(value());
        } else if (arg == "--soft-solver") {
            options.softSolvers = readSoftSolvers(value());
        } else if (arg == "--steps") {
            options.steps = parsePositive(arg, value());
        } else if (arg == "--scale") {
            const std::string text = value();
            std::size_t used = 0;
            try {
                options.scale = std::stod(text, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != text.size() || !(options.scale > 0)) {
                throw std::invalid_argument("--scale needs a positive number, got '" + text + "'");
            }
        } else if (arg == "--json") {
            options.jsonPath = value();
        } else if (arg == "--csv") {
            options.csvPath = value();
        } else if (arg == "--render") {
            options.renderDir = value();
        } else if (arg == "--render-every") {
            options.renderEvery = parsePositive(arg, value());
        } else if (arg == "--size") {
            const std::string text = value();
            const std::size_t x = text.find('x');
            if (x == std::string::npos) throw std::invalid_argument("--size needs WxH, got '" + text + "'");
            options.renderWidth = parsePositive(arg, text.substr(0, x));
            options.renderHeight = parsePositive(arg, text.substr(x + 1));
        } else if (arg == "--plot") {
            options.plotPath = value();
        } else if (hasInlineValue && (arg == "--list" || arg == "--help" || arg == "--self-intersections")) {
            throw std::invalid_argument(arg + " takes no value");
        } else if (arg == "--self-intersections") {
            options.countSelfIntersections = true;
        } else if (arg == "--list") {
            options.listScenes = true;
        } else if (arg == "--help" || arg == "-h") {
            std::printf(cUsage, defaultScene.c_str());
            std::exit(0);
        } else {
            throw std::invalid_argument("unknown option '" + arg + "' (see --help)");
        }
    }
    for (const std::string& name : options.broadphases) checkBroadphaseName(name);
    return options;
}

} // namespace bulletgpu::demo
