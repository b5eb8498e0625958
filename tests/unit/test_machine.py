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


def _arm_cpuinfo(path: Path, implementer: str, part: str, variant: str = "0x3",
                 revision: str = "1", processors: int = 2) -> Path:
    """An arm64 /proc/cpuinfo: no `model name`, only the MIDR codes (and BogoMIPS)."""
    block = ["processor\t: {}", "BogoMIPS\t: 50.00",
             "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics",
             f"CPU implementer\t: {implementer}", "CPU architecture: 8",
             f"CPU variant\t: {variant}", f"CPU part\t: {part}", f"CPU revision\t: {revision}"]
    path.write_text("\n\n".join("\n".join(block).format(i) for i in range(processors)) + "\n")
    return path


def test_arm64_cpus_are_named_by_their_codes(tmp_path: Path) -> None:
    """arm64 writes no model name: a Neoverse N1 (Graviton 2), a Neoverse V1 (Graviton 3)
    and an Ampere core are named by implementer, part, variant, revision and caches, so
    none shares another's name (and so none shares its tunings)."""
    caches = _caches(tmp_path / "caches", "32768K")
    n1 = cpu_model(_arm_cpuinfo(tmp_path / "n1", "0x41", "0xd0c"), caches)
    v1 = cpu_model(_arm_cpuinfo(tmp_path / "v1", "0x41", "0xd40", "0x1"), caches)
    ampere = cpu_model(_arm_cpuinfo(tmp_path / "ampere", "0xc0", "0xac3"), caches)
    unknown = cpu_model(_arm_cpuinfo(tmp_path / "other", "0x99", "0xd0c"), tmp_path / "none")
    machine = platform.machine()
    assert n1 == (f"{machine} Arm (implementer 0x41 part 0xd0c variant 0x3 revision 1, "
                  "L2 512 KiB, L3 32 MiB)")
    assert v1.startswith(f"{machine} Arm (implementer 0x41 part 0xd40 variant 0x1")
    assert ampere.startswith(f"{machine} Ampere (implementer 0xc0 part 0xac3")
    assert unknown == f"{machine} (implementer 0x99 part 0xd0c variant 0x3 revision 1)"
    assert len({n1, v1, ampere, unknown}) == 4


def test_codes_that_differ_in_one_field_give_different_names(tmp_path: Path) -> None:
    """Every code is in the name: two cores that differ only in variant, or only in
    revision, or only in their L3, are two names."""
    names = {
        cpu_model(_arm_cpuinfo(tmp_path / "a", "0x41", "0xd0c", "0x3", "1"), tmp_path / "n"),
        cpu_model(_arm_cpuinfo(tmp_path / "b", "0x41", "0xd0c", "0x4", "1"), tmp_path / "n"),
        cpu_model(_arm_cpuinfo(tmp_path / "c", "0x41", "0xd0c", "0x3", "2"), tmp_path / "n"),
        cpu_model(_arm_cpuinfo(tmp_path / "d", "0x41", "0xd0c"), _caches(tmp_path / "x", "8M")),
        cpu_model(_arm_cpuinfo(tmp_path / "e", "0x41", "0xd0c"), _caches(tmp_path / "y", "16M")),
    }
    assert len(names) == 5


def test_a_32_bit_arm_name_keeps_its_codes(tmp_path: Path) -> None:
    """32-bit ARM kernels write a generic model name ('ARMv7 Processor rev 4 (v7l)', the
    same on a Cortex-A7 and an A53): the codes follow it."""
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: ARMv7 Processor rev 4 (v7l)\n"
                    "CPU implementer\t: 0x41\nCPU part\t: 0xd03\n")
    assert cpu_model(info, tmp_path / "none") == (
        "ARMv7 Processor rev 4 (v7l) (implementer 0x41 part 0xd03)")


def test_a_cpuinfo_that_names_nothing_is_fingerprinted(tmp_path: Path) -> None:
    """Neither a name nor codes: the architecture and a hash of the fields that do not
    change from core to core, so two such CPUs differ and one CPU's cores agree."""
    first, second, other = tmp_path / "1", tmp_path / "2", tmp_path / "3"
    first.write_text("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n")
    second.write_text("processor\t: 7\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd\n")
    other.write_text("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd sve\n")
    names = [cpu_model(path, tmp_path / "none") for path in (first, second, other)]
    assert names[0] == names[1] != names[2]
    assert names[0].startswith(f"{platform.machine()} (cpuinfo ")


def test_odd_bytes_and_controls_in_cpuinfo_are_a_name(tmp_path: Path) -> None:
    """A cpuinfo that is not UTF-8, or holds terminal controls, still gives a name, with
    no control character in it (a name goes into tables and terminals)."""
    info = tmp_path / "cpuinfo"
    info.write_bytes(b"processor\t: 0\nmodel name\t: Odd \xff\x1b]0;title\x07 CPU\n")
    name = cpu_model(info, tmp_path / "none")
    assert name.startswith("Odd \ufffd\\x1b]0;title\\x07 CPU")
    assert name.isprintable()
