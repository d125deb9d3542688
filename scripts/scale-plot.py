#!/usr/bin/env python3
"""Draws benchmark.bash -scale's curves: one small panel per metric, the
size of the work on a logarithmic x axis, one line per candidate.

    scale-plot.py RESULTS.tsv OUT.svg [TITLE]

RESULTS.tsv has the columns candidate, metric, size, value (a header line
first); a metric is named "PART: what (unit)" and its sizes are numbers.
Points of one candidate and metric with several values (rounds) are
drawn at their median.
"""
import csv
import math
import statistics
import sys
from xml.sax.saxutils import escape

COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b']
PANEL_W, PANEL_H, COLS = 300, 190, 3
LEFT, RIGHT, TOP, BOTTOM = 58, 28, 28, 36


def size_label(v):
    for unit, div in (('Gi', 1 << 30), ('Mi', 1 << 20)):
        if v >= div and v % div == 0:
            return f'{v // div} {unit}B'
    if v >= 1000 and v % 1000 == 0:
        return f'{v // 1000}k'
    return str(v)


def nice_max(v):
    if v <= 0:
        return 1
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * e:
            return m * e
    return 10 * e


def fmt(v):
    return f'{v:.3g}' if v < 1000 else f'{v:,.0f}'


def panel(metric, series, candidates, x0, y0):
    sizes = sorted({s for c in series for s in series[c]})
    top = nice_max(max(v for c in series for v in series[c].values()))
    pw, ph = PANEL_W - LEFT - RIGHT, PANEL_H - TOP - BOTTOM
    lo, hi = math.log(sizes[0]), math.log(sizes[-1])

    def px(s):
        return x0 + LEFT + (pw / 2 if hi == lo else (math.log(s) - lo) / (hi - lo) * pw)

    def py(v):
        return y0 + TOP + ph - v / top * ph

    parts = [f'<text x="{x0 + PANEL_W / 2}" y="{y0 + 16}" text-anchor="middle" font-weight="bold">{escape(metric)}</text>',
             f'<rect x="{x0 + LEFT}" y="{y0 + TOP}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    for i in range(5):
        v = top * i / 4
        parts.append(f'<line x1="{x0 + LEFT}" x2="{x0 + LEFT + pw}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{x0 + LEFT - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{fmt(v)}</text>')
    for s in sizes:
        parts.append(f'<text x="{px(s):.1f}" y="{y0 + TOP + ph + 14}" text-anchor="middle">{size_label(s)}</text>')
    for c in candidates:
        if c not in series:
            continue
        color = COLORS[candidates.index(c) % len(COLORS)]
        pts = [(px(s), py(v)) for s, v in sorted(series[c].items())]
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}"/>')
        parts.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>' for x, y in pts)
    return parts


def main(argv):
    rows = list(csv.DictReader(open(argv[1]), delimiter='\t'))
    title = argv[3] if len(argv) > 3 else 'benchmark.bash -scale'
    candidates, metrics, raw = [], [], {}
    for r in rows:
        c, m = r['candidate'], r['metric']
        if c not in candidates:
            candidates.append(c)
        if m not in metrics:
            metrics.append(m)
        raw.setdefault(m, {}).setdefault(c, {}).setdefault(int(r['size']), []).append(float(r['value']))
    rows_n = math.ceil(len(metrics) / COLS)
    width, height = COLS * PANEL_W, rows_n * PANEL_H + 56
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="8" y="18" font-size="13" font-weight="bold">{escape(title)}</text>']
    for i, c in enumerate(candidates):
        color = COLORS[i % len(COLORS)]
        svg.append(f'<rect x="{8 + i * 150}" y="28" width="14" height="4" fill="{color}"/>'
                   f'<text x="{26 + i * 150}" y="34">{escape(c)}</text>')
    for i, m in enumerate(metrics):
        series = {c: {s: statistics.median(v) for s, v in pts.items()} for c, pts in raw[m].items()}
        svg.extend(panel(m, series, candidates, (i % COLS) * PANEL_W, 48 + (i // COLS) * PANEL_H))
    svg.append('</svg>')
    with open(argv[2], 'w') as f:
        f.write('\n'.join(svg) + '\n')


if __name__ == '__main__':
    main(sys.argv)
