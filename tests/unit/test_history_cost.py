"""The history index's cost: each entry's figures kept in a sidecar so that a run rewrites
the index without reading the results again, and the rewrite bounded before any work (in
the memory and time `run` checks), on a large synthetic history."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.errors import ResultFormatError
from harness.report import history_figures
from harness.report.history import Entry, entries, machine_name
from harness.report.history_figures import index_cost, sidecar_path, write_sidecar
from harness.report.history_page import write_index
from harness.report.results import load_result
from harness.run import estimate
from tests.paths import ROOT
from tests.unit.test_history import _run

#: a committed result of about 21 KB and 100 figures: the entry copied many times
RESULT = ROOT / "results" / "tutorial.json"


def _history(folder: Path, count: int, sidecars: bool) -> Path:
    """`count` copies of RESULT as this machine's entries, with sidecars or without (a
    history older than them)."""
    history, result = folder / "h", load_result(RESULT)
    (history / machine_name()).mkdir(parents=True)
    for number in range(1, count + 1):
        path = history / machine_name() / f"{number:04d}.json"
        shutil.copyfile(RESULT, path)
        if sidecars:
            write_sidecar(Entry(machine_name(), number, path), result)
    return history


def _index_peak(history: Path) -> int:
    tracemalloc.start()
    try:
        write_index(history)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_index_reads_sidecars_not_results(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """With 300 entries' sidecars, the index reads no result, holds less than the bound,
    and shows every run."""
    history = _history(tmp_path, 300, sidecars=True)
    cost = index_cost(history)
    assert (cost.entries, cost.unread) == (300, 0)

    def refuse(path: object) -> None:
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(history_figures, "load_result", refuse)
    assert _index_peak(history) <= cost.bytes
    page = (history / "index.html").read_text()
    assert "300 runs of" in page


def test_an_older_history_is_read_once_within_its_bound(tmp_path: Path) -> None:
    """Entries without sidecars are read one at a time, within the bound, and get their
    sidecars; the next index is then bounded by the sidecars alone, a smaller figure."""
    history = _history(tmp_path, 150, sidecars=False)
    cost = index_cost(history)
    assert (cost.entries, cost.unread) == (150, 150)
    assert _index_peak(history) <= cost.bytes
    assert all(sidecar_path(e.path).is_file() for e in entries(history, machine_name()))
    again = index_cost(history)
    assert again.unread == 0 and again.bytes < cost.bytes and again.seconds < cost.seconds
    assert _index_peak(history) <= again.bytes


def test_a_changed_or_damaged_sidecar_is_rebuilt(tmp_path: Path) -> None:
    """An entry rewritten after its sidecar, or a sidecar that is not one, is read again:
    the index shows what the entry holds now."""
    history = _history(tmp_path, 2, sidecars=True)
    first, second = entries(history, machine_name())
    document = json.loads(first.path.read_text())
    document["git_commit"] = "f" * 40
    first.path.write_text(json.dumps(document))
    sidecar_path(second.path).write_text('{"sidecar": 1, "figures": [["a"]]}')
    # The rewritten entry by its time, the damaged sidecar by its head: the index will read
    # both results, and its cost says so.
    assert index_cost(history).unread == 2
    page = write_index(history).read_text()
    assert "fffffff" in page and "2 runs of" in page
    assert history_figures.kept_figures(second).figures  # rebuilt from the entry
    size = second.path.stat().st_size
    huge = (f'{{"sidecar": 1, "entry_bytes": {size}, "scenario": "s", "commit": "c", '
            f'"figures": [["a", "(ring)", "entries", "run", {"9" * 400}]]}}')
    for hostile in ("[" * 100_000, huge, huge.replace("entries", "nothing"), '"figures"',
                    "\x00\xff"):
        sidecar_path(second.path).write_text(hostile)
        assert history_figures.kept_figures(second).figures  # each refused, then rebuilt
    sidecar_path(first.path).unlink()
    first.path.write_text("not json")
    with pytest.raises(ResultFormatError):
        history_figures.kept_figures(first)


def test_run_writes_the_sidecar_and_counts_the_index(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` keeps each entry's sidecar beside it; a history whose index would not fit in
    memory, or in the time budget, is refused before any work, naming the history."""
    assert _run(tmp_path) == 0
    (entry,) = entries(tmp_path / "h", machine_name())
    assert str(sidecar_path(entry.path)) in capsys.readouterr().out
    # 400 entries never read: their bound outweighs the small run's own.
    big = _history(tmp_path / "big", 400, sidecars=False)
    cost = index_cost(big)
    scenario = tmp_path / "small.toml"
    monkeypatch.setattr(estimate, "available_memory_bytes", lambda: int(cost.bytes))
    assert main(["run", str(scenario), "--no-progress", "--history", str(big)]) == 2
    err = capsys.readouterr().err
    assert f"the run history's index ({big}, 400 entries" in err and "memory" in err
    assert len(err.strip().splitlines()) == 1 and not (big / "index.html").exists()
    monkeypatch.setattr(estimate, "available_memory_bytes", lambda: None)
    minutes = cost.seconds / 60 / 2
    assert main(["run", str(scenario), "--no-progress", "--history", str(big),
                 "--max-minutes", f"{minutes:.6f}"]) == 2
    assert "the run history's index" in capsys.readouterr().err
    assert len(entries(big, machine_name())) == 400


def test_a_sidecar_that_only_looks_current_is_priced_as_its_result(tmp_path: Path) -> None:
    """Sidecars newer than their entries but naming another size, another version, or
    nothing (hostile heads, generated), are priced as the results the index will read:
    the cost matches a history without sidecars."""
    heads = ['{"sidecar": 1, "entry_bytes": 1, "figures": []}',
             '{"sidecar": 99, "entry_bytes": %d, "figures": []}', "", "\x00" * 300,
             '{"figures": [], "sidecar": 1, "entry_bytes": %d}', "not json at all"]
    bare = index_cost(_history(tmp_path / "bare", len(heads), sidecars=False))
    history = _history(tmp_path / "lying", len(heads), sidecars=True)
    for entry, head in zip(entries(history, machine_name()), heads, strict=True):
        text = head % entry.path.stat().st_size if "%d" in head else head
        sidecar_path(entry.path).write_text(text)
    found = index_cost(history)
    assert found.unread == len(heads)
    assert found.bytes >= bare.bytes
    assert _index_peak(history) <= found.bytes
