"""laptime's trace analyzer from Python: `laptime analyze` and `laptime diff` as functions that
return their JSON reports (schemas laptime.analyze/1 and laptime.diff/1) as Python objects.

    import laptime
    report = laptime.analyze("my_model.nsys-rep")   # or its SQLite export, or `laptime bench --trace`'s file
    report["steady_state"], report["kernel_mix"], report["verdict"]
    change = laptime.diff("before.nsys-rep", "after.nsys-rep", threshold=3)

Keyword options are the command's flags: skip_warmup=2 is --skip-warmup 2, a True value is a
switch, None or False leaves the flag out. Each call runs the laptime executable installed with
this package, the same program as the `laptime` command, so the numbers are the command's. A
refusal (a missing file, a bad option, a trace laptime cannot read) raises LaptimeError, whose
message is laptime's one sentence.
"""

import json
import os
import subprocess
import tempfile
from pathlib import Path

__all__ = ["analyze", "diff", "LaptimeError", "executable"]
__version__ = "0.1.0"


class LaptimeError(Exception):
    """laptime refused or failed. str(error) is its sentence; returncode is its exit status."""

    def __init__(self, sentence, returncode):
        super().__init__(sentence)
        self.returncode = returncode


def executable():
    """The laptime program these functions run: $LAPTIME_EXECUTABLE, else the one in this package."""
    return os.environ.get("LAPTIME_EXECUTABLE") or str(Path(__file__).resolve().parent / "bin" / "laptime")


def _flags(options):
    args = []
    for key, value in options.items():
        if key == "json":
            raise TypeError("json= is what analyze() and diff() return; pass no json option")
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        else:
            args += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return args


def _sentence(stderr, returncode):
    """laptime's error sentence: the last line it printed starting "laptime: ", without that prefix."""
    for line in reversed(stderr.splitlines()):
        if line.startswith("laptime: "):
            return line[len("laptime: "):]
    return stderr.strip() or "laptime exited with status %d and said nothing" % returncode


def _report(command, paths, options, ok_codes=(0,)):
    with tempfile.TemporaryDirectory(prefix="laptime-") as folder:
        out = os.path.join(folder, "report.json")
        args = [executable(), command, *map(os.fspath, paths), *_flags(options), "--json", out]
        # The text report is not wanted here; notes and errors come on standard error.
        proc = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        stderr = proc.stderr.decode("utf-8", errors="replace")
        if proc.returncode not in ok_codes:
            raise LaptimeError(_sentence(stderr, proc.returncode), proc.returncode)
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def analyze(path, **options):
    """`laptime analyze PATH` as a dict (schema laptime.analyze/1).

    path: an .nsys-rep (exported once with nsys, see the README), its SQLite export, or a trace
    from `laptime bench --trace`. options: the command's flags, e.g. range="step *",
    skip_warmup=2, gap_us=5, top=20, layers="run.layers.json", pid=4100. A capture in which
    several processes have iterations gives each one's report under "processes" (pid=N: that
    process's alone; docs/PROFILING.md 8.8).
    """
    return _report("analyze", [path], options)


def diff(before, after, **options):
    """`laptime diff BEFORE AFTER` as a dict (schema laptime.diff/1).

    options: the command's flags, e.g. by="block", threshold=3, min_change_us=2, seed=1,
    pid_before=4100, pid_after=4200 (a side's process, when its capture holds several), top=5 (the
    dict holds every layer row unless top is given). With fail_if_slower=PCT the dict is returned
    whether or not the gate trips (its "gate" says).
    """
    return _report("diff", [before, after], options, ok_codes=(0, 3))
