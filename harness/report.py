"""Markdown rendering of a result document (tabulate): one table per metric family.

Layouts stand side by side in rows, with ratio columns against the scenario's
base layout, so that a reader compares layouts measured in the same run.
"""

from __future__ import annotations

from typing import Any

from tabulate import tabulate


def pct(value: float, digits: int = 2) -> str:
    return f"{100 * value:.{digits}f}%"


def kib(value: float) -> str:
    return f"{value / 1024:,.1f} KiB" if value < 1024**2 else f"{value / 1024**2:,.2f} MiB"


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "n/a"


def _table(rows: list[list[Any]], headers: list[str]) -> str:
    return str(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))


def render_result(doc: dict[str, Any]) -> str:
    scenario = doc["scenario"]
    machine = doc["machine"]
    lines = [
        f"# {scenario['name']}",
        "",
        scenario["description"],
        "",
        f"Written by ring-harness {doc['harness_version']} (result format "
        f"{doc['format_version']}) from `{doc['scenario_file']}` at {doc['started_at']}, "
        f"commit `{doc['git_commit']}`; {machine['cpu']}, {machine['cores']} cores, "
        f"Python {machine['python']}, numpy {machine['versions']['numpy']}; "
        f"run took {doc['duration_s']} s.",
        "",
    ]
    runs = doc["runs"]
    if any("balance" in run or "collisions" in run for run in runs):
        lines += ["## Balance and collisions", "", balance_table(runs), ""]
    for run in runs:
        if run.get("movement"):
            lines += [f"## Movement ({run['label']})", "", movement_table(run), ""]
    base = scenario["measure"]["base_layout"]
    for run in runs:
        header = f"{run['label']}, {run['ring']['entries']:,} entries"
        layouts = run["layouts"]
        if any("structure_bytes" in r for r in layouts):
            lines += [f"## Memory ({header})", "", memory_table(layouts, base), ""]
        if any("batch_ns" in r for r in layouts):
            lines += [f"## Lookup time ({header})", "", throughput_table(layouts, base), ""]
        if run.get("peers"):
            lines += [f"## Peer libraries ({header})", "", peers_table(run), ""]
        parity = run["parity"]
        lines += [f"Parity: all {len(parity['layouts'])} layouts routed {parity['keys']:,} keys "
                  f"identically to the reference.", ""]
    return "\n".join(lines)


def balance_table(runs: list[dict[str, Any]]) -> str:
    rows = []
    for run in runs:
        b, c = run.get("balance", {}), run.get("collisions", {})
        row = [run["label"], f"{run['ring']['points']:,}",
               f"{run['ring']['entries']:,}"]
        row += [f"{c['collisions']:,}", f"{c['collisions_expected']:,.1f}"] if c else ["", ""]
        if b:
            row += [f"{b['min_keys']:,}", f"{b['max_keys']:,}", f"{b['max_over_mean']:.3f}",
                    pct(b["cv_keys"]), pct(b["cv_arcs"]), pct(b["cv_theory"]),
                    pct(b["cv_floor"])]
        rows.append(row)
    headers = ["ring", "points", "entries", "collisions", "collisions_expected",
               "min keys", "max keys", "max/mean", "cv_keys", "cv_arcs", "cv_theory", "cv_floor"]
    return _table(rows, headers[: max(len(r) for r in rows)])


def movement_table(run: dict[str, Any]) -> str:
    rows = [
        [f"{m['operation']} {m['server']}", f"{m['servers_before']} -> {m['servers_after']}",
         f"{m['keys']:,}", f"{m['ring_moved']:,}", pct(m["ring_moved_fraction"]),
         pct(m["changed_server_share"]), f"{m['mod_n_moved']:,}", pct(m["mod_n_moved_fraction"]),
         "yes" if m["ring_only_changed_server"] else "NO"]
        for m in run["movement"]
    ]
    return _table(rows, ["operation", "servers", "keys", "ring moved", "ring moved %",
                         "changed server's share", "mod N moved", "mod N moved %",
                         "ring moves only to/from it"])


def memory_table(layouts: list[dict[str, Any]], base: str) -> str:
    base_row = next(r for r in layouts if r["layout"] == base)
    rows = [
        [r["layout"], f"{r['entries']:,}", r["entry_size"], f"{r['structure_bytes']:,}",
         f"{r['bytes_per_entry']:.3f}", ratio(r["structure_bytes"], base_row["structure_bytes"]),
         kib(r["build_peak_bytes"]), kib(r["lookup_peak_bytes"]),
         _share(r.get("tracemalloc_bytes"), r["structure_bytes"]),
         f"{kib(r['rss_before_bytes'])} -> {kib(r['rss_after_bytes'])}"]
        for r in layouts if "structure_bytes" in r
    ]
    return _table(rows, ["layout", "entries", "entry_size", "structure_bytes", "bytes_per_entry",
                         f"vs {base}", "build_peak", "lookup_peak", "tracemalloc sees",
                         "RSS (context)"])


def _share(part: float | None, whole: float) -> str:
    # Results written before tracemalloc_bytes existed (same format) leave the cell empty.
    return "" if part is None else f"{part / whole:.0%}"


def _timing(t: dict[str, float]) -> str:
    return f"{t['median']:,.1f} ({t['min']:,.1f}-{t['max']:,.1f})"


def throughput_table(layouts: list[dict[str, Any]], base: str) -> str:
    base_row = next(r for r in layouts if r["layout"] == base)
    rows = [
        [r["layout"], _timing(r["scalar_ns"]),
         ratio(r["scalar_ns"]["median"], base_row["scalar_ns"]["median"]),
         _timing(r["batch_ns"]), ratio(r["batch_ns"]["median"], base_row["batch_ns"]["median"])]
        for r in layouts if "batch_ns" in r
    ]
    return _table(rows, ["layout", "scalar_ns median (min-max)", f"vs {base}",
                         "batch_ns median (min-max)", f"vs {base}"])


def peers_table(run: dict[str, Any]) -> str:
    """Each peer against our smallest layout (bytes per entry) and fastest scalar lookup."""
    ours = [r for r in run["layouts"] if "structure_bytes" in r and "scalar_ns" in r]
    smallest = min(ours, key=lambda r: r["bytes_per_entry"]) if ours else None
    fastest = min(ours, key=lambda r: r["scalar_ns"]["median"]) if ours else None
    rows = []
    for p in run["peers"]:
        row = [p["peer"], f"{p['entries']:,}", f"{100 * p['agreement']:.1f}%"]
        if smallest and "structure_bytes" in p:
            row += [f"{p['bytes_per_entry']:.1f}",
                    f"{p['bytes_per_entry'] / smallest['bytes_per_entry']:.1f}x "
                    f"({smallest['layout']})"]
        if fastest and "scalar_ns" in p:
            row += [_timing(p["scalar_ns"]),
                    f"{p['scalar_ns']['median'] / fastest['scalar_ns']['median']:.1f}x "
                    f"({fastest['layout']})"]
        rows.append(row)
    headers = ["peer", "points", "same owner as our ring", "bytes per point",
               "vs our smallest", "scalar_ns per key (min-max)", "vs our fastest scalar"]
    return _table(rows, headers[: max(len(r) for r in rows)]) + (
        "\n\nPeers look keys up by name (hashing included); our scalar_ns starts from a "
        "precomputed hash."
    )
