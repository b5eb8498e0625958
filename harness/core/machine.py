"""What a result was measured on: machine, software versions, code revision."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


CPUINFO = Path("/proc/cpuinfo")
#: the longest cpuinfo value kept in a name (a model name is under 64 characters)
VALUE_LIMIT = 96
#: the cpuinfo fields that name a CPU, the first present is its name: x86's `model name`,
#: then what other architectures write (powerpc `cpu`, 32-bit ARM `Processor`)
NAME_FIELDS = ("model name", "cpu model", "cpu", "Processor")
#: the fields that tell CPUs of one name apart, with their labels: x86's family, model
#: and stepping; ARM's implementer, part, variant and revision (arm64 writes no `model
#: name`, so these are all it says: two Neoverse cores differ only in `CPU part`)
DETAIL_FIELDS = (("cpu family", "family"), ("model", "model"), ("stepping", "stepping"),
                 ("CPU implementer", "implementer"), ("CPU part", "part"),
                 ("CPU variant", "variant"), ("CPU revision", "revision"))
#: the ARM implementer codes of `CPU implementer` (the Arm ARM's MIDR_EL1 table), the rest
#: named by their code
ARM_IMPLEMENTERS = {"0x41": "Arm", "0x42": "Broadcom", "0x43": "Cavium", "0x46": "Fujitsu",
                    "0x48": "HiSilicon", "0x4e": "NVIDIA", "0x50": "Applied Micro",
                    "0x51": "Qualcomm", "0x61": "Apple", "0x6d": "Microsoft",
                    "0xc0": "Ampere"}
#: fields that change with the core, the clock or the boot, not with the CPU: left out of
#: the fingerprint of a cpuinfo that names nothing
_PER_CORE_FIELDS = frozenset({"processor", "bogomips", "cpu mhz", "core id", "apicid",
                              "initial apicid", "physical id", "siblings", "cpu cores"})


def _printable(value: str) -> str:
    """`value` bounded, with control characters as \\xNN: a name goes into tables and
    terminals."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}"
                   for c in value[:VALUE_LIMIT])


def _first_cpu_fields(cpuinfo: Path) -> dict[str, str]:
    """The first processor's `field: value` lines of /proc/cpuinfo (empty if unreadable);
    bytes that are not UTF-8 are replaced, not a traceback."""
    fields: dict[str, str] = {}
    try:
        text = cpuinfo.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return fields
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor's block ends at its blank line
            continue
        name, colon, value = line.partition(":")
        if colon:
            fields.setdefault(name.strip(), _printable(value.strip()))
    return fields


def _binary_size(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 and size % (1 << 20) == 0 \
        else f"{size >> 10} KiB"


def _fingerprint(fields: dict[str, str]) -> str:
    """12 hex digits of the SHA-256 of the fields that do not change from core to core."""
    lines = sorted(f"{name}: {value}" for name, value in fields.items()
                   if name.lower() not in _PER_CORE_FIELDS)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


def cpu_model(cpuinfo: Path = CPUINFO, caches: Path | None = None) -> str:
    """The CPU's name, with what tells CPUs of that name apart: its family, model and
    stepping (x86) or implementer, part, variant and revision (ARM), and its L2 and L3
    sizes where the kernel reports them. Never empty.

    A cloud VM often shows a masked name: an AMD EPYC of the Zen 2 generation (family 23,
    L3 16 MiB) and one of Zen 3 (family 25, L3 32 MiB) both read "AMD EPYC", and time the
    bucketed batch lookup differently. arm64 writes no name at all, only the codes: a
    name from the platform module alone ("aarch64") would be every ARM server's. The name
    alone would let the tuning cached on one pass for the other's, and a reader could not
    tell which CPU a figure is from. A cpuinfo with neither a name nor those codes gives
    the machine's architecture and a fingerprint of its fields; no cpuinfo at all, what
    the platform module says."""
    fields = _first_cpu_fields(cpuinfo)
    machine = _printable(platform.machine()) or "unknown machine"
    if not fields:
        return _printable(platform.processor()) or machine
    name = next((fields[field] for field in NAME_FIELDS if fields.get(field)), "")
    codes = " ".join(f"{label} {fields[field]}" for field, label in DETAIL_FIELDS
                     if fields.get(field))
    if not name and fields.get("CPU implementer"):
        vendor = ARM_IMPLEMENTERS.get(fields["CPU implementer"].lower())
        name = f"{machine} {vendor}" if vendor else machine
    elif not name and not codes:
        name, codes = machine, f"cpuinfo {_fingerprint(fields)}"
    details = [codes] if codes else []
    sizes = data_cache_sizes(CACHE_DIRECTORY if caches is None else caches)
    details += [f"L{level} {_binary_size(sizes[level])}" for level in (2, 3) if level in sizes]
    return f"{name or machine} ({', '.join(details)})" if details else name or machine


def _memory_bytes(field: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def resident_bytes() -> int:
    """This process's resident set now (VmRSS), 0 where /proc does not say."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def available_memory_bytes() -> int | None:
    """Memory the kernel says a new workload can use (MemAvailable), if known."""
    return _memory_bytes("MemAvailable")


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


#: what a result says, in words, where it has no commit (its JSON holds null)
NOT_A_CHECKOUT = "not a git checkout"


def git_commit() -> str | None:
    """The commit of the checkout the harness package was loaded from, with '-dirty' when
    it has local changes; None when the package is in no git checkout (installed from a
    wheel, or a tree without .git). The code that ran is what a result describes, not
    the folder it ran in: a repository that only surrounds the installed package (a
    virtual environment inside another project, tox's .tox/) must hold this very file.

    Changes under results/ do not count: they are this harness's own output, and a
    run of several scenarios rewrites committed results as it goes. Untracked files do
    count (files git ignores, such as .venv/ and build/, do not): a scenario not yet added
    is an input the commit does not hold, so a run from it is not reproducible from the
    commit alone.
    """
    here = Path(__file__).resolve().parents[2]
    this_file = Path(__file__).resolve().relative_to(here).as_posix()

    def git(*arguments: str) -> str:
        return subprocess.run(["git", *arguments], cwd=here, capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()

    try:
        git("ls-files", "--error-unmatch", "--", this_file)
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=normal", "--", ".",
                    ":(exclude)results")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty else "")


def machine_info() -> dict[str, object]:
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": _memory_bytes("MemTotal"),
        "os": platform.platform(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "versions": {p: _version(p) for p in ("ring-harness", "numpy", "cffi", "memray")},
    }


CACHE_DIRECTORY = Path("/sys/devices/system/cpu/cpu0/cache")


def _cache_bytes(text: str) -> int | None:
    """`32K`, `16384K`, `1M` as sysfs writes a cache size, in bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip()
    try:
        return int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)
    except ValueError:
        return None


def data_cache_sizes(directory: Path = CACHE_DIRECTORY) -> dict[int, int]:
    """{level: bytes} of the data (or unified) caches of the first core, as the kernel
    reports them; empty where it does not (another OS, a container without sysfs)."""
    sizes: dict[int, int] = {}
    for index in sorted(directory.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _cache_bytes((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size:
            sizes[level] = size
    return sizes
