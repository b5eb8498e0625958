import sys

from harness.cli import Terminated, main

try:
    sys.exit(main())
except Terminated:
    # A SIGTERM that landed while main was already reporting another way of stopping: the
    # handler's exception escaped that report. Still one line and 143, never a traceback.
    print("terminated", file=sys.stderr)
    sys.exit(143)
