"""`python -m laptime ARGS...` is `laptime ARGS...`: the executable installed with this package (or
$LAPTIME_EXECUTABLE), run with the same arguments, standard input, output and error, and its exit
status. For a Python without the command on PATH (a virtual environment not activated, a notebook's
`!python -m laptime analyze run.nsys-rep`)."""

import os
import sys

from . import executable


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    program = executable()
    try:
        if hasattr(os, "execv") and argv is None:
            os.execv(program, [program, *args])  # the command itself, signals and all
        import subprocess

        return subprocess.run([program, *args]).returncode
    except OSError as e:
        sys.stderr.write("laptime: cannot run %s: %s.\n" % (program, e.strerror or e))
        return 1


if __name__ == "__main__":
    sys.exit(main())
