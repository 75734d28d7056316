// SPDX-License-Identifier: Zlib
#include "demos/render/line_chart.h"

#include "demos/render/bitmap_font.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace bulletgpu::demo {

namespace {

constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kInk{30, 30, 30};
constexpr Rgb kGrid{226, 226, 226};
constexpr Rgb kPalette[] = {{31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
                            {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
constexpr int kYTicks = 5; // about this many y intervals
constexpr int kXTicks = 8; // about this many x intervals
constexpr int kTickLength = 5;
constexpr int kGap = 8; // between neighbouring elements, in pixels

/// An axis from 0 to a round maximum, with its tick step and the decimals its labels need.
struct Axis {
    double max;
    double step;
    int decimals;

    std::string label(double value) const {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
        return buffer;
    }
    int tickCount() const { return static_cast<int>(std::lround(max / step)); }
};

/// A round step near a rough one: 1, 2, 2.5 or 5 times a power of ten.
double niceStep(double rough) {
    const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
    const double fraction = rough / magnitude;
    const double nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
    return nice * magnitude;
}

/// The axis from 0 to the smallest multiple of a round step at or above `maximum` (1 when it is
/// not positive). Integer axes (step indices) use whole steps.
Axis roundAxis(double maximum, int intervals, bool integer) {
    if (!(maximum > 0) || !std::isfinite(maximum)) maximum = 1;
    double step = niceStep(maximum / intervals);
    if (integer) step = std::max(1.0, std::floor(step));
    const double top = std::ceil(maximum / step - 1e-9) * step;
    int decimals = 0;
    while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) >
                               1e-6 * step * std::pow(10.0, decimals)) {
        ++decimals;
    }
    return {top, step, decimals};
}

/// A rectangle of pixels, bounds included.
struct Rect {
    int left, top, right, bottom;
    bool contains(int x, int y) const { return x >= left && x <= right && y >= top && y <= bottom; }
};

/// Fills a rectangle, clipped to the image.
void fillRect(Image& image, const Rect& rect, Rgb colour) {
    for (int y = std::max(rect.top, 0); y <= std::min(rect.bottom, image.height - 1); ++y) {
        for (int x = std::max(rect.left, 0); x <= std::min(rect.right, image.width - 1); ++x) image.set(x, y, colour);
    }
}

/// Draws a line `thickness` pixels wide between two points, only inside `clip`.
void drawLine(Image& image, double x0, double y0, double x1, double y1, Rgb colour, int thickness, const Rect& clip) {
    // Liang-Barsky: cut the segment to the clip rectangle first, so far-off points cost nothing.
    double t0 = 0;
    double t1 = 1;
    const double dx = x1 - x0;
    const double dy = y1 - y0;
    const double p[4] = {-dx, dx, -dy, dy};
    const double q[4] = {x0 - clip.left, clip.right - x0, y0 - clip.top, clip.bottom - y0};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0) return;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0) t0 = std::max(t0, t);
        if (p[i] > 0) t1 = std::min(t1, t);
    }
    if (t0 > t1) return;
    const double startX = x0 + t0 * dx;
    const double startY = y0 + t0 * dy;
    const double spanX = (t1 - t0) * dx;
    const double spanY = (t1 - t0) * dy;
    const int steps = static_cast<int>(std::ceil(std::max(std::fabs(spanX), std::fabs(spanY)))) + 1;
    const int half = thickness / 2;
    for (int s = 0; s <= steps; ++s) {
        const int x = static_cast<int>(std::lround(startX + spanX * s / steps));
        const int y = static_cast<int>(std::lround(startY + spanY * s / steps));
        for (int by = y - half; by < y - half + thickness; ++by) {
            for (int bx = x - half; bx < x - half + thickness; ++bx) {
                if (clip.contains(bx, by)) image.setClipped(bx, by, colour);
            }
        }
    }
}

/// Draws one series into the plot rectangle.
void drawSeries(Image& image, const ChartSeries& series, const Rect& plot, const Axis& xAxis, const Axis& yAxis,
                Rgb colour, int thickness) {
    const auto pixelX = [&](std::size_t i) { return plot.left + (plot.right - plot.left) * (double(i) / xAxis.max); };
    const auto pixelY = [&](double v) { return plot.bottom - (plot.bottom - plot.top) * (v / yAxis.max); };
    const std::vector<double>& values = series.values;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!std::isfinite(values[i])) continue;
        const bool hasNext = i + 1 < values.size() && std::isfinite(values[i + 1]);
        const bool hasPrevious = i > 0 && std::isfinite(values[i - 1]);
        if (hasNext) {
            drawLine(image, pixelX(i), pixelY(values[i]), pixelX(i + 1), pixelY(values[i + 1]), colour, thickness,
                     plot);
        } else if (!hasPrevious) {
            // An isolated point: a small square.
            const double x = pixelX(i);
            const double y = pixelY(values[i]);
            const double r = 2.0 * thickness;
            for (double dy = -r; dy <= r; dy += 1) drawLine(image, x - r, y + dy, x + r, y + dy, colour, 1, plot);
        }
    }
}

} // namespace

Rgb seriesColour(std::size_t index) { return kPalette[index % (sizeof kPalette / sizeof kPalette[0])]; }

Image drawLineChart(const std::string& title, const std::string& xLabel, const std::string& yLabel,
                    const std::vector<ChartSeries>& series, int width, int height) {
    if (width < 1 || height < 1) throw std::invalid_argument("drawLineChart: the image needs at least one pixel");
    Image image(width, height, kBackground);
    const int scale = std::max(1, std::min(width / 480, height / 270));
    const int textHeight = kGlyphHeight * scale;
    const int thickness = scale;

    // Axes: y from 0 to a round maximum, x over the step indices.
    double maxValue = 0;
    std::size_t maxCount = 0;
    for (const ChartSeries& s : series) {
        maxCount = std::max(maxCount, s.values.size());
        for (const double v : s.values) {
            if (std::isfinite(v)) maxValue = std::max(maxValue, v);
        }
    }
    const Axis yAxis = roundAxis(maxValue, kYTicks, false);
    const Axis xAxis = roundAxis(maxCount > 1 ? double(maxCount - 1) : 1.0, kXTicks, true);

    // Layout: title on top, y label and tick labels on the left, x labels below, legend on the right.
    int yTickWidth = 0;
    for (int i = 0; i <= yAxis.tickCount(); ++i)
        yTickWidth = std::max(yTickWidth, textWidth(yAxis.label(i * yAxis.step), scale));
    int legendWidth = 0;
    for (const ChartSeries& s : series) legendWidth = std::max(legendWidth, textWidth(s.label, scale));
    legendWidth = series.empty() ? 0 : std::min(width / 3, 4 * kGap + 3 * textHeight + legendWidth);
    const int titleScale = scale + 1;
    const Rect plot{kGap + textHeight + kGap + yTickWidth + kTickLength + kGap / 2,
                    kGap + kGlyphHeight * titleScale + 2 * kGap, width - 1 - kGap - legendWidth,
                    height - 1 - (kTickLength + kGap / 2 + 2 * textHeight + 2 * kGap)};

    drawText(image, (width - textWidth(title, titleScale)) / 2, kGap, title, kInk, titleScale);
    if (plot.right - plot.left < 2 || plot.bottom - plot.top < 2) return image;

    // Gridlines, ticks and their labels.
    for (int i = 0; i <= yAxis.tickCount(); ++i) {
        const int y =
            plot.bottom - static_cast<int>(std::lround((plot.bottom - plot.top) * (i * yAxis.step / yAxis.max)));
        fillRect(image, {plot.left, y, plot.right, y}, kGrid);
        fillRect(image, {plot.left - kTickLength, y, plot.left, y}, kInk);
        const std::string label = yAxis.label(i * yAxis.step);
        drawText(image, plot.left - kTickLength - kGap / 2 - textWidth(label, scale), y - textHeight / 2, label, kInk,
                 scale);
    }
    for (int i = 0; i <= xAxis.tickCount(); ++i) {
        const int x =
            plot.left + static_cast<int>(std::lround((plot.right - plot.left) * (i * xAxis.step / xAxis.max)));
        fillRect(image, {x, plot.top, x, plot.bottom}, kGrid);
        fillRect(image, {x, plot.bottom, x, plot.bottom + kTickLength}, kInk);
        const std::string label = xAxis.label(i * xAxis.step);
        drawText(image, x - textWidth(label, scale) / 2, plot.bottom + kTickLength + kGap / 2, label, kInk, scale);
    }
    fillRect(image, {plot.left, plot.top, plot.left, plot.bottom}, kInk);
    fillRect(image, {plot.left, plot.bottom, plot.right, plot.bottom}, kInk);
    drawText(image, plot.left + (plot.right - plot.left - textWidth(xLabel, scale)) / 2,
             plot.bottom + kTickLength + kGap / 2 + textHeight + kGap, xLabel, kInk, scale);
    drawTextUpwards(image, kGap, plot.top + (plot.bottom - plot.top + textWidth(yLabel, scale)) / 2, yLabel, kInk,
                    scale);

    // The series, inside the axes, and the legend.
    const Rect inside{plot.left + 1, plot.top, plot.right, plot.bottom - 1};
    for (std::size_t i = 0; i < series.size(); ++i) {
        drawSeries(image, series[i], inside, xAxis, yAxis, seriesColour(i), thickness + 1);
        const int rowY = plot.top + static_cast<int>(i) * (textHeight + kGap);
        const int swatchLeft = plot.right + kGap;
        fillRect(image,
                 {swatchLeft + kGap, rowY + textHeight / 2 - thickness, swatchLeft + kGap + 3 * textHeight,
                  rowY + textHeight / 2 + thickness},
                 seriesColour(i));
        drawText(image, swatchLeft + 2 * kGap + 3 * textHeight, rowY, series[i].label, kInk, scale);
    }
    return image;
}

} // namespace bulletgpu::demo
