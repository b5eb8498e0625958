"""Chart specifications (Vega-Lite) built from figures: bars with ratio labels, and curves.

Each function returns a `Chart` whose data is inline, so a page draws it with
no network access. Vega-Lite is declarative: the spec says what to draw from
which field, and the library does the axes, scales, legends and tooltips;
the HTML renderer (`harness.report.html`) embeds the library itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.core.tables import Chart

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
WIDTH = 560


def bars(title: str, rows: Sequence[dict[str, Any]], *, category: str, value: str,
         value_title: str, label: str, color: str | None = None) -> Chart:
    """Horizontal bars of `value` per `category`, each labelled with its `label` text."""
    encoding: dict[str, Any] = {
        "y": {"field": category, "type": "nominal", "sort": None, "title": None},
        "x": {"field": value, "type": "quantitative", "title": value_title},
        "tooltip": [{"field": category}, {"field": label, "title": value_title}],
    }
    if color:
        encoding["color"] = {"field": color, "type": "nominal"}
    spec = {
        "$schema": SCHEMA, "title": title, "width": WIDTH,
        "data": {"values": list(rows)},
        "layer": [
            {"mark": {"type": "bar"}, "encoding": encoding},
            {"mark": {"type": "text", "align": "left", "dx": 4},
             "encoding": {"y": encoding["y"], "x": encoding["x"],
                          "text": {"field": label}}},
        ],
    }
    return Chart(title, spec)


def grouped_bars(title: str, rows: Sequence[dict[str, Any]], *, category: str, group: str,
                 value: str, value_title: str, label: str) -> Chart:
    """Bars of `value` per `category`, one bar per `group` side by side, labelled."""
    y = {"field": category, "type": "nominal", "sort": None, "title": None}
    offset = {"field": group, "type": "nominal", "sort": None}
    x = {"field": value, "type": "quantitative", "title": value_title}
    spec = {
        "$schema": SCHEMA, "title": title, "width": WIDTH,
        "data": {"values": list(rows)},
        "layer": [
            {"mark": "bar",
             "encoding": {"y": y, "yOffset": offset, "x": x,
                          "color": {"field": group, "type": "nominal", "title": None,
                                    "sort": None},
                          "tooltip": [{"field": category}, {"field": group},
                                      {"field": label, "title": value_title}]}},
            {"mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 10},
             "encoding": {"y": y, "yOffset": offset, "x": x, "text": {"field": label}}},
        ],
    }
    return Chart(title, spec)


def curves(title: str, rows: Sequence[dict[str, Any]], *, x: str, y: str, series: str,
           x_title: str, y_title: str, log: bool = True,
           points: Sequence[str] = (), y_scale: str | None = None,
           marks: Sequence[tuple[float, str]] = ()) -> Chart:
    """Lines of `y` against `x`, one per `series`; series named in `points` are drawn as dots;
    `marks` are (x, label) boundaries drawn as labelled vertical rules (a rollout's stages).

    `y_scale` overrides the y axis's scale: "symlog" is logarithmic away from zero and
    linear near it, so counts of 0 are drawn (a log axis drops them).
    """
    scale = {"type": "log"} if log else {}
    x_enc = {"field": x, "type": "quantitative", "title": x_title, "scale": scale}
    y_enc = {"field": y, "type": "quantitative", "title": y_title,
             "scale": {"type": y_scale} if y_scale else scale}
    # One colour per series across both layers, so lines and dots share one legend.
    domain = list(dict.fromkeys(str(row[series]) for row in rows))
    color = {"field": series, "type": "nominal", "title": None, "scale": {"domain": domain}}
    tooltip = [{"field": series}, {"field": x, "format": ","}, {"field": y, "format": ".4~g"}]
    lines = {"mark": {"type": "line"},
             "transform": [{"filter": {"not": {"field": series, "oneOf": list(points)}}}],
             "encoding": {"x": x_enc, "y": y_enc, "color": color, "tooltip": tooltip}}
    dots = {"mark": {"type": "point", "filled": True, "size": 60},
            "transform": [{"filter": {"field": series, "oneOf": list(points)}}],
            "encoding": {"x": x_enc, "y": y_enc, "color": color, "tooltip": tooltip}}
    layers: list[dict[str, Any]] = [lines, dots] if points else [lines]
    if marks:
        at = [{x: position, "mark": label} for position, label in marks]
        rule_x = {"field": x, "type": "quantitative"}
        layers += [
            {"data": {"values": at}, "mark": {"type": "rule", "strokeDash": [4, 3],
                                              "color": "gray"},
             "encoding": {"x": rule_x}},
            {"data": {"values": at}, "mark": {"type": "text", "align": "left", "dx": 3,
                                              "baseline": "top", "y": 2, "color": "gray"},
             "encoding": {"x": rule_x, "text": {"field": "mark"}}},
        ]
    spec = {"$schema": SCHEMA, "title": title, "width": WIDTH, "height": 320,
            "data": {"values": list(rows)}, "layer": layers}
    return Chart(title, spec)


def shares(title: str, rows: Sequence[dict[str, Any]]) -> Chart:
    """Each server's share (bars, in server order) against its fair share (ticks): rows hold
    `server`, `share` and `expected` (the even split, or weight / total weight)."""
    x = {"field": "server", "type": "nominal", "sort": None,
         "axis": {"labels": len(rows) <= 40}, "title": "server"}
    spec = {
        "$schema": SCHEMA, "title": title, "width": WIDTH, "height": 220,
        "data": {"values": list(rows)},
        "layer": [
            {"mark": "bar",
             "encoding": {"x": x, "y": {"field": "share", "type": "quantitative",
                                        "axis": {"format": "%"}, "title": "share"},
                          "tooltip": [{"field": "server"},
                                      {"field": "share", "format": ".3%"},
                                      {"field": "expected", "format": ".3%"}]}},
            {"mark": {"type": "tick", "color": "black", "thickness": 2},
             "encoding": {"x": x, "y": {"field": "expected", "type": "quantitative"}}},
        ],
    }
    return Chart(title, spec)


def heat_map(title: str, rows: Sequence[dict[str, Any]], *, x: str, y: str, value: str,
             label: str, value_title: str) -> Chart:
    """A square of `value` (a share from 0 to 1) per (`x`, `y`) pair, coloured by it and
    labelled with its `label` text; names keep the order they first appear in."""
    order = list(dict.fromkeys(str(row[y]) for row in rows))
    x_enc = {"field": x, "type": "nominal", "sort": order, "title": None,
             "axis": {"orient": "top", "labelAngle": -40}}
    y_enc = {"field": y, "type": "nominal", "sort": order, "title": None}
    color = {"field": value, "type": "quantitative", "title": value_title,
             "scale": {"domain": [0, 1], "scheme": "blues"}, "legend": {"format": "%"}}
    side = max(160, 44 * len(order))
    spec = {
        "$schema": SCHEMA, "title": title, "width": side, "height": side,
        "data": {"values": list(rows)},
        "layer": [
            {"mark": "rect",
             "encoding": {"x": x_enc, "y": y_enc, "color": color,
                          "tooltip": [{"field": y}, {"field": x},
                                      {"field": label, "title": value_title}]}},
            {"mark": {"type": "text", "fontSize": 10},
             "encoding": {"x": x_enc, "y": y_enc, "text": {"field": label},
                          "color": {"condition": {"test": f"datum['{value}'] > 0.6",
                                                  "value": "white"},
                                    "value": "black"}}},
        ],
    }
    return Chart(title, spec)
