"""Two results side by side: each shared (k, layout) figure with its change."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

#: (section, metric, how to read it out of a layout record)
LAYOUT_FIGURES: list[tuple[str, str]] = [
    ("bytes_per_entry", "bytes_per_entry"),
    ("structure_bytes", "structure_bytes"),
    ("lookup_peak_bytes", "lookup_peak_bytes"),
    ("scalar_ns", "scalar_ns.median"),
    ("batch_ns", "batch_ns.median"),
]
RUN_FIGURES: list[tuple[str, str]] = [
    ("entries", "ring.entries"),
    ("collisions", "collisions.collisions"),
    ("cv_keys", "balance.cv_keys"),
    ("cv_arcs", "balance.cv_arcs"),
]


def _dig(record: dict[str, Any], dotted: str) -> float | None:
    value: Any = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return float(value)


def sibling(layout: str) -> str:
    """A 64-bit layout is compared with its 32-bit sibling (numpy-packed-64 ~ numpy-packed)."""
    return layout.removesuffix("-64")


def _number(value: float) -> str:
    """Counts with thousands separators; measured fractions and times to 6 digits."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def _change(a: float, b: float) -> str:
    if a == b:
        return "="
    return f"{100 * (b - a) / a:+.1f}%" if a else "new"


def render_comparison(a: dict[str, Any], b: dict[str, Any], a_name: str, b_name: str) -> str:
    """A Markdown table of every figure both results hold, with B's change against A."""
    rows = []
    b_runs = {run["label"]: run for run in b["runs"]}
    for run_a in a["runs"]:
        k = run_a["label"]
        run_b = b_runs.get(k)
        if run_b is None:
            continue
        for label, path in RUN_FIGURES:
            va, vb = _dig(run_a, path), _dig(run_b, path)
            if va is not None and vb is not None:
                rows.append([k, "(ring)", label, _number(va), _number(vb), _change(va, vb)])
        b_layouts = {sibling(r["layout"]): r for r in run_b["layouts"]}
        for rec_a in run_a["layouts"]:
            rec_b = b_layouts.get(sibling(rec_a["layout"]))
            if rec_b is None:
                continue
            for label, path in LAYOUT_FIGURES:
                va, vb = _dig(rec_a, path), _dig(rec_b, path)
                if va is not None and vb is not None:
                    name = rec_a["layout"]
                    if rec_b["layout"] != name:
                        name += f" / {rec_b['layout']}"
                    rows.append([k, name, label, _number(va), _number(vb),
                                 _change(va, vb)])
    header = (f"# Comparison\n\nA: `{a_name}` ({a['started_at']}, commit `{a['git_commit']}`)\n"
              f"B: `{b_name}` ({b['started_at']}, commit `{b['git_commit']}`)\n\n")
    if not rows:
        return header + "The two results share no sweep point and layout.\n"
    table: str = tabulate(rows, headers=["ring", "layout", "figure", "A", "B", "B vs A"],
                     tablefmt="github", disable_numparse=True)
    return header + table + "\n"
