"""What a result says it was measured on: the CPU told apart where its name is masked."""

from __future__ import annotations

import platform
from pathlib import Path

from harness.core.machine import cpu_model

ZEN2 = {"cpu family": "23", "model": "49", "stepping": "0"}
ZEN3 = {"cpu family": "25", "model": "1", "stepping": "1"}


def _cpuinfo(path: Path, name: str, fields: dict[str, str], processors: int = 2) -> Path:
    block = ["processor\t: {}", "vendor_id\t: AuthenticAMD", f"model name\t: {name}",
             *(f"{field}\t: {value}" for field, value in fields.items())]
    path.write_text("\n\n".join("\n".join(block).format(i) for i in range(processors)) + "\n")
    return path


def _caches(folder: Path, l3: str) -> Path:
    for index, (level, kind, size) in enumerate([(1, "Data", "32K"), (2, "Unified", "512K"),
                                                 (3, "Unified", l3)]):
        entry = folder / f"index{index}"
        entry.mkdir(parents=True)
        (entry / "level").write_text(f"{level}\n")
        (entry / "type").write_text(f"{kind}\n")
        (entry / "size").write_text(f"{size}\n")
    return folder


def test_two_cpus_of_one_masked_name_are_told_apart(tmp_path: Path) -> None:
    """A cloud VM's 'AMD EPYC' of Zen 2 and of Zen 3: the family, model, stepping and the
    L2 and L3 sizes follow the name, so a cached tuning of one does not pass for the
    other's and a reader sees which CPU a figure is from."""
    zen2 = cpu_model(_cpuinfo(tmp_path / "zen2", "AMD EPYC", ZEN2),
                     _caches(tmp_path / "caches2", "16384K"))
    zen3 = cpu_model(_cpuinfo(tmp_path / "zen3", "AMD EPYC", ZEN3),
                     _caches(tmp_path / "caches3", "32768K"))
    assert zen2 == "AMD EPYC (family 23 model 49 stepping 0, L2 512 KiB, L3 16 MiB)"
    assert zen3 == "AMD EPYC (family 25 model 1 stepping 1, L2 512 KiB, L3 32 MiB)"


def test_only_the_first_processor_is_read(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: First\ncpu family\t: 6\n\n"
                    "processor\t: 1\nmodel name\t: Second\ncpu family\t: 7\n")
    assert cpu_model(info, tmp_path / "no-caches") == "First (family 6)"


def test_what_the_kernel_does_not_say_is_left_out(tmp_path: Path) -> None:
    """No family lines (an ARM machine) and no sysfs caches: the name alone; no cpuinfo at
    all: what the platform module says."""
    bare = cpu_model(_cpuinfo(tmp_path / "arm", "Neoverse-N1", {}), tmp_path / "none")
    assert bare == "Neoverse-N1"
    assert cpu_model(tmp_path / "missing", tmp_path / "none") == (
        platform.processor() or platform.machine())
