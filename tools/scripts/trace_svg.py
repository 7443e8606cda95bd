#!/usr/bin/env python3
"""Draws `stoker run --trace` files as one SVG timeline, a panel per file.

Usage: tools/scripts/trace_svg.py OUT.svg LABEL=TRACE.json [LABEL=TRACE.json ...]

Each panel has a row per stream (H2D, compute, D2H) and, because producers
of several partitions run at once, a producer row per partition. Bars are
coloured by partition and labelled with its number; all panels share one
time axis so runs can be compared by eye. Standard library only.
"""
import json
import sys
from html import escape

COLOURS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
           "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]
ROW, GAP, LEFT, RIGHT, TOP = 16, 4, 150, 20, 30
WIDTH = 1100


def load(path):
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = []
    for e in events:
        if e.get("ph") != "X":
            continue
        part = int(e["name"].rsplit("#", 1)[-1])
        spans.append((names.get(e["tid"], str(e["tid"])), part, e["ts"] / 1000.0,
                      (e["ts"] + e["dur"]) / 1000.0))
    return spans


def rows_of(spans):
    producers = sorted({p for track, p, _, _ in spans if track.startswith("producer")})
    rows = [("producer #%d" % p, lambda s, p=p: s[0].startswith("producer") and s[1] == p)
            for p in producers]
    for track in ("H2D stream", "compute stream", "D2H stream"):
        if any(s[0] == track for s in spans):
            rows.append((track, lambda s, t=track: s[0] == t))
    return rows


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.exit(__doc__)
    panels = [(a.split("=", 1)[0], load(a.split("=", 1)[1])) for a in argv[2:]]
    end = max(s[3] for _, spans in panels for s in spans)
    scale = (WIDTH - LEFT - RIGHT) / end
    out, y = [], TOP
    for label, spans in panels:
        out.append('<text x="4" y="%d" font-weight="bold">%s</text>' % (y, escape(label)))
        y += GAP + 4
        for name, keep in rows_of(spans):
            out.append('<text x="4" y="%d">%s</text>' % (y + ROW - 4, escape(name)))
            for s in filter(keep, spans):
                x0, x1 = LEFT + s[2] * scale, LEFT + s[3] * scale
                out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>'
                           % (x0, y, max(x1 - x0, 0.5), ROW, COLOURS[s[1] % len(COLOURS)]))
                if x1 - x0 > 12:
                    out.append('<text x="%.1f" y="%d" fill="white">%d</text>'
                               % (x0 + 3, y + ROW - 4, s[1]))
            y += ROW + GAP
        y += 2 * GAP + 10
    for t in range(0, int(end) + 1, 500):  # time axis, ms
        x = LEFT + t * scale
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ccc"/>'
                   % (x, TOP - 10, x, y - 10))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d ms</text>' % (x, y + 4, t))
    with open(argv[1], "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                'font-family="sans-serif" font-size="11">\n' % (WIDTH, y + 14))
        f.write('<rect width="100%" height="100%" fill="white"/>\n')
        f.write("\n".join(out))
        f.write("\n</svg>\n")


if __name__ == "__main__":
    main(sys.argv)
