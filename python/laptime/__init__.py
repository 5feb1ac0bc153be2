"""laptime's trace analyzer from Python: `laptime analyze`, `diff` and `kernels` as functions that
return their JSON reports as Python objects, and analyze_many() for the reports of a whole job.

    import laptime
    report = laptime.analyze("my_model.nsys-rep")   # or its SQLite export, or `laptime bench --trace`'s file
    report["time_ms"]["lap"], report["kernel_mix"], report["verdict"]
    report.to_pandas("iterations")                 # pandas views (pip install laptime[pandas])
    change = laptime.diff("before.nsys-rep", "after.nsys-rep", threshold=3)
    layers = laptime.kernels("run.ncu-rep")         # an Nsight Compute report per layer
    job = laptime.analyze_many("runs/")             # one report per rank: the spread and the straggler
    job = laptime.analyze_many("runs/", client=Client("scheduler:8786"))   # on a Dask cluster's workers

Keyword options are the command's flags: skip_warmup=2 is --skip-warmup 2, a True value is a
switch, None or False leaves the flag out. Each call runs the laptime executable installed with
this package, the same program as the `laptime` command, so the numbers are the command's; paths
are passed after `--`, so a file named like a flag is a file. Every failure (a missing file, a bad
option, a trace laptime cannot read, an executable that cannot run) raises LaptimeError, whose
message is laptime's one sentence.
"""

import glob as _glob
import json
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["analyze", "analyze_many", "diff", "kernels", "Report", "LaptimeError", "executable"]
__version__ = "0.1.0"

# Options no function takes: what they return is the report itself, and help is the command's.
_REFUSED = {"json": "what the function returns", "help": "the command's own (run `laptime COMMAND --help`)",
            "h": "the command's own (run `laptime COMMAND --help`)"}


class LaptimeError(Exception):
    """laptime refused or failed. str(error) is its sentence; returncode is its exit status (None when
    the executable did not run)."""

    def __init__(self, sentence, returncode=None):
        super().__init__(sentence)
        self.returncode = returncode


def executable():
    """The laptime program these functions run: $LAPTIME_EXECUTABLE, else the one in this package."""
    return os.environ.get("LAPTIME_EXECUTABLE") or str(Path(__file__).resolve().parent / "bin" / "laptime")


def _flags(options):
    args = []
    for key, value in options.items():
        if key in _REFUSED:
            if key == "json":
                raise TypeError("json= is what analyze(), diff() and kernels() return; pass no json option")
            raise LaptimeError("%s= is not an option here: help is %s." % (key, _REFUSED[key]))
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        else:  # one word, so a value that looks like a flag stays the flag's value
            args.append(flag + "=" + (os.fspath(value) if isinstance(value, os.PathLike) else str(value)))
    return args


def _sentence(stderr, returncode):
    """laptime's error sentence: the last line it printed starting "laptime: ", without that prefix."""
    for line in reversed(stderr.splitlines()):
        if line.startswith("laptime: "):
            return line[len("laptime: "):]
    return stderr.strip() or "laptime exited with status %d and said nothing" % returncode


def _run(args):
    try:
        return subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError as e:
        raise LaptimeError("cannot run %s: %s." % (args[0], e.strerror or e)) from None


def _report_text(command, paths, options, ok_codes=(0,)):
    """The JSON text `laptime COMMAND --json` writes, as it wrote it."""
    args_flags = _flags(options)
    with tempfile.TemporaryDirectory(prefix="laptime-") as folder:
        out = os.path.join(folder, "report.json")
        args = [executable(), command, *args_flags, "--json", out, "--", *map(os.fspath, paths)]
        # The text report is not wanted here; notes and errors come on standard error.
        proc = _run(args)
        stderr = proc.stderr.decode("utf-8", errors="replace")
        if proc.returncode not in ok_codes:
            raise LaptimeError(_sentence(stderr, proc.returncode), proc.returncode)
        try:
            with open(out, encoding="utf-8") as f:
                text = f.read()
            json.loads(text)
            return text
        except (OSError, ValueError) as e:
            raise LaptimeError("laptime %s exited with status %d but wrote no readable report (%s)"
                               % (command, proc.returncode, e), proc.returncode) from None


def _report(command, paths, options, ok_codes=(0,)):
    return Report(json.loads(_report_text(command, paths, options, ok_codes)))


def analyze(path, **options):
    """`laptime analyze PATH` as a dict (schema laptime.analyze/1).

    path: an .nsys-rep (exported once with nsys, see the README), its SQLite export, a trace
    from `laptime bench --trace`, or the PyTorch profiler's trace (.json or .json.gz, told by its
    content). options: the command's flags, e.g. range="step *",
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


def kernels(report, other=None, **options):
    """`laptime kernels REPORT [OTHER]` as a dict: an Nsight Compute report (`ncu --csv --page raw`
    output or a .ncu-rep) per layer (schema laptime.kernels/1), or two compared
    (laptime.kernels.diff/1). options: by="block", domain="laptime", layers="run.layers.json",
    peak="peak.json".
    """
    return _report("kernels", [report] + ([other] if other is not None else []), options)


def analyze_many(paths, client=None, **options):
    """The reports of one job (one per rank, or a fleet's), as `laptime analyze A B C --job` writes
    them: a dict (schema laptime.job/1) with "reports" (one per report and process: lap, fill,
    verdict, iterations, layers) and "job" (the spread, the straggler's layers against the median
    report's with diff's intervals, the gate).

    paths: a file, folder or glob, or a list of them (folders: their .sqlite, .nsys-rep, .qdrep,
    .pt.trace.json and .json.gz files; a file named twice, under another name or through a link, is
    one report). options: analyze's flags, and fail_if_spread=PCT (the dict is returned whether or not the gate trips:
    its "gate" says), workers=N (reports in flight on this machine; checked as the command checks it
    with a client too).

    client=None: the laptime command does it all on this machine's cores. client=a
    dask.distributed.Client (pip install laptime[dask]): the laptime command does every step on the
    cluster's workers (where the files must be readable under the same paths): it lists the
    reports, analyzes each on any worker, and puts the summary together from their documents by
    the rules it uses without a cluster, so the dict is the same. An address string is refused
    (TypeError): pass Client("tcp://host:8786"), which you then own and close.
    """
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    options = dict(options, job=True)
    if client is None:
        return _report("analyze", paths, options, ok_codes=(0, 3))
    from . import _job  # the fan-out; every rule is the command's

    _job.check_client(client)
    return _job.on_dask(client, [os.fspath(p) for p in paths], options)


class Report(dict):
    """A report as the command's JSON has it (a dict), with tables as pandas DataFrames."""

    def tables(self):
        """The names to_pandas() takes for this report."""
        from . import _tables

        return _tables.table_names(self)

    def to_pandas(self, table):
        """One table of the report as a pandas DataFrame (pip install laptime[pandas]), flat: one
        value a cell, named columns (a nested member is the column of its path, occupancy_achieved_pct;
        a list of names one text cell). analyze: "iterations", "layers", "ranges", "kernels", "gaps",
        "syncs" (a column "pid" when the capture has several processes; "ranges" and "syncs" hold
        the report's rows: the 1,000 costliest unless top= is given, top=0 for all); analyze_many: "reports",
        "iterations", "layers", "straggler" (columns "file" and "pid"); diff: "layers"; kernels:
        "layers", "kernels" (one row per kernel, its layer a column); two kernels reports: "layers"."""
        from . import _tables

        return _tables.to_pandas(self, table)
