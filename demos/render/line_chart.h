// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/render/image.h"

#include <cstddef>
#include <string>
#include <vector>

namespace bulletgpu::demo {

/// One line of a chart: a value per step (the x axis is the index). Non-finite values leave a gap.
struct ChartSeries {
    std::string label;          ///< Name shown in the legend.
    std::vector<double> values; ///< The y value at x = 0, 1, 2, ...
};

/// The colour of the series at an index in a chart (a fixed palette of ten, repeating).
Rgb seriesColour(std::size_t index);

/// Draws a line chart: title, axes with ticks, numeric labels and gridlines, one coloured
/// polyline per series (isolated points as squares) and a legend on the right. The y axis runs
/// from 0 to a round maximum above the largest value; text uses a built-in 5x7 bitmap font.
/// Empty series lists and single points are fine.
Image drawLineChart(const std::string& title, const std::string& xLabel, const std::string& yLabel,
                    const std::vector<ChartSeries>& series, int width = 960, int height = 540);

} // namespace bulletgpu::demo
