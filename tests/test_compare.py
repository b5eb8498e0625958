"""compare: figures matched by sweep point and layout, 64-bit layouts with their siblings."""

from typing import Any

from harness.compare import render_comparison, sibling


def _doc(layout: str, bytes_per_entry: float, collisions: int) -> dict[str, Any]:
    return {
        "started_at": "t", "git_commit": "c",
        "runs": [{
            "label": "k=10", "ring": {"entries": 1000},
            "collisions": {"collisions": collisions},
            "layouts": [{"layout": layout, "bytes_per_entry": bytes_per_entry}],
        }],
    }


def test_sibling_strips_the_width_suffix() -> None:
    """numpy-packed-64 is compared with numpy-packed; other names are left alone."""
    assert sibling("numpy-packed-64") == "numpy-packed"
    assert sibling("bucketed") == "bucketed"


def test_comparison_rows_and_changes() -> None:
    """A 32-bit and a 64-bit result line up: collisions to zero, bytes per entry +66.7%."""
    table = render_comparison(_doc("numpy-packed", 6.0, 120), _doc("numpy-packed-64", 10.0, 0),
                              "a.json", "b.json")
    assert "| k=10   | numpy-packed / numpy-packed-64 | bytes_per_entry | 6 " in table
    assert "+66.7%" in table
    assert "| collisions      | 120 " in table and "-100.0%" in table
    assert "| entries         | 1,000 " in table


def test_nothing_in_common() -> None:
    """Results without a shared sweep point say so instead of printing an empty table."""
    other = _doc("tuples", 90.0, 0)
    other["runs"][0]["label"] = "k=99"
    assert "share no sweep point" in render_comparison(_doc("tuples", 90, 0), other, "a", "b")
