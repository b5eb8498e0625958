"""Fail unless the C core that `import harness` loads is a sanitizer build (tox -e sanitize).

A test run against an uninstrumented build would pass and prove nothing: this checks
that both compiled modules come from the installed wheel, not a checkout's in-place
build, and carry AddressSanitizer and UndefinedBehaviorSanitizer checks.
"""

import sys
from pathlib import Path

import harness.core.native.compiled._ring_c
import harness.core.native.compiled._scalar

CHECKOUT = Path(__file__).resolve().parent.parent
#: symbols only an -fsanitize=address,undefined build references
MARKERS = (b"__asan_report_", b"__ubsan_handle_")


def main() -> int:
    for module in (harness.core.native.compiled._ring_c, harness.core.native.compiled._scalar):
        path = Path(str(module.__file__)).resolve()
        if path.is_relative_to(CHECKOUT / "harness"):
            print(f"check_sanitized: {path} is the checkout's build, not the wheel's")
            return 1
        missing = [marker.decode() for marker in MARKERS if marker not in path.read_bytes()]
        if missing:
            print(f"check_sanitized: {path} has no {', '.join(missing)} calls: not sanitized")
            return 1
        print(f"check_sanitized: {path} is instrumented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
