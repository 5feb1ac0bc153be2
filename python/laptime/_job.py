"""analyze_many() on a Dask cluster: each report analyzed on a worker by the laptime command itself
(`laptime analyze --job FILE`, so every row is the command's), the straggler's `laptime diff` on a
worker too, and the job summary put together here by the rules of trace/compare/job.cpp, mirrored
line for line: the inputs' expansion, the spread, the straggler's layer, its sentence and command,
the gate. tests/pip checks that the result is the command's own dict, key for key."""

import glob as _glob
import os
import re

from . import LaptimeError, _report

MAX_REPORTS = 100000
_REPORT_EXT = (".sqlite", ".nsys-rep", ".qdrep", ".pt.trace.json", ".json.gz")
_NSYS_REPORT_EXT = (".nsys-rep", ".qdrep")
# Flags of the job, not of one report's analysis (--fail-if-spread goes to each, which checks its
# value with the command's own sentence and, with one row, never trips).
_JOB_ONLY = ("workers", "job")


# --- the inputs (expand_report_inputs) -----------------------------------------------------------

def _natural_sorted(names):
    """natural_less: chunk by chunk (ASCII digit runs before text, by value; text by code point), then
    fewer chunks first, then the names themselves."""
    def key(name):
        chunks = re.findall(r"[0-9]+|[^0-9]+", name)
        return [(0, len(c.lstrip("0")), c.lstrip("0")) if c[0] in "0123456789" else (1, 0, c) for c in chunks], name
    return sorted(names, key=key)


def _is_report_name(name):
    return any(name.endswith(e) and len(name) > len(e) for e in _REPORT_EXT)


def _export_path_for(report):
    stem, _ = os.path.splitext(report)
    return stem + ".sqlite"


def _plural(n, one, many):
    return "%d %s" % (n, one if n == 1 else many)


def expand(args):
    """The report files `args` name, and the notes: what `laptime analyze` reads for them."""
    files = []
    for arg in args:
        if os.path.isdir(arg):
            names = [n for n in os.listdir(arg) if _is_report_name(n) and os.path.isfile(os.path.join(arg, n))]
            if not names:
                raise LaptimeError("the folder %s holds no trace (.sqlite, .nsys-rep, .qdrep, .pt.trace.json or .json.gz file)." % arg, 1)
            prefix = arg if arg.endswith("/") else arg + "/"
            found = [prefix + n for n in _natural_sorted(names)]
        elif not os.path.exists(arg) and any(c in arg for c in "*?["):
            found = _natural_sorted(p for p in _glob.glob(arg) if os.path.isfile(p))
            if not found:
                raise LaptimeError("no file matches %s." % arg, 1)
        else:
            found = [arg]
        files += found
        if len(files) > MAX_REPORTS:
            raise LaptimeError("more than %d reports in one job: name fewer." % MAX_REPORTS, 1)
    reports = {_export_path_for(f) for f in files if f.endswith(_NSYS_REPORT_EXT)}
    seen, out, twice, exports = set(), [], 0, 0
    for f in files:
        if f in seen:
            twice += 1
            continue
        seen.add(f)
        if not f.endswith(_NSYS_REPORT_EXT) and f in reports:
            exports += 1
        else:
            out.append(f)
    notes = []
    if twice:
        notes.append(_plural(twice, "path was", "paths were") + " named more than once: read once.")
    if exports:
        notes.append(_plural(exports, "export", "exports") +
                     " beside its report (R.sqlite with R.nsys-rep) left out: the report is read through it.")
    return out, notes


# --- on the workers ------------------------------------------------------------------------------

def _report_rows(file, options):
    """One report's rows, as the command's job view has them."""
    return _report("analyze", [file], dict(options, job=True), ok_codes=(0, 3))["reports"]


def _straggler_diff(before, after, options):
    return _report("diff", [before, after], options, ok_codes=(0, 3))


# --- the summary (trace/compare/job.cpp) ---------------------------------------------------------

def _which(rows, i):
    r = rows[i]
    w = {"row": i, "file": r["file"], "lap_ms": r["lap_ms"]}
    if "pid" in r:
        w["pid"] = r["pid"]
    return w


def _spread(rows):
    order = sorted(range(len(rows)), key=lambda i: rows[i]["lap_ms"])  # stable: ties in input order
    fastest, slowest, median = order[0], order[-1], order[(len(order) - 1) // 2]
    slow, med, fast = rows[slowest]["lap_ms"], rows[median]["lap_ms"], rows[fastest]["lap_ms"]
    return {"slowest": slowest, "fastest": fastest, "median": median,
            "slowest_over_median_pct": 100 * (slow - med) / med if med > 0 else 0,
            "slowest_over_fastest_pct": 100 * (slow - fast) / fast if fast > 0 else 0}


def straggler_layer(diff_rows):
    """The index of the row that makes the difference, or -1 (straggler_layer in job.cpp)."""
    def grew(r):
        return not r["whole_iteration"] and r["label"] in ("SLOWER", "ONLY AFTER")

    best = -1
    for i, r in enumerate(diff_rows):
        if grew(r) and (best < 0 or r["change_ns"] > diff_rows[best]["change_ns"]):
            best = i
    while best >= 0:
        parent, child = diff_rows[best], -1
        for i, r in enumerate(diff_rows):
            if not grew(r) or r["depth"] != parent["depth"] + 1 or not r["name"].startswith(parent["name"] + "."):
                continue
            if 2 * r["change_ns"] < parent["change_ns"]:
                continue
            if child < 0 or r["change_ns"] > diff_rows[child]["change_ns"]:
                child = i
        if child < 0:
            break
        best = child
    return best


_PLAIN = re.compile(r"^[A-Za-z0-9+\-./:=@_,]+$")


def _shell_word(w):
    return w if _PLAIN.match(w) else "'" + w.replace("'", "'\\''") + "'"


def _row_label(r):
    return r["file"] + (" (process %d)" % r["pid"] if "pid" in r else "")


def _sentence(slow, med, pct, d, layer):
    whole = d["rows"][0]
    lo, hi = whole["ci_ns"]
    v = ("The slowest, " + _row_label(slow) + ", laps %.3f ms, %.1f%% above the median report, " % (slow["lap_ms"], pct) +
         _row_label(med) + " (%.3f ms). Per iteration on the GPU it takes %+.3f ms [%+.3f, %+.3f] (%s)"
         % (med["lap_ms"], whole["change_ns"] / 1e6, lo / 1e6, hi / 1e6, whole["label"]))
    if layer >= 0:
        x = d["rows"][layer]
        v += "; the layer that makes the difference is " + x["name"] + ", %+.3f ms" % (x["change_ns"] / 1e6)
        if x["label"] == "ONLY AFTER":
            v += " (it runs in the slowest report only)"
        else:
            v += " [%+.3f, %+.3f], %+.1f%%" % (x["ci_ns"][0] / 1e6, x["ci_ns"][1] / 1e6, x["change_pct"])
        v += (", %.0f%% of the iteration's change." % (100 * x["change_ns"] / whole["change_ns"])
              if whole["change_ns"] > 0 else ".")
    elif not d["before"]["layers"] or not d["after"]["layers"]:
        v += ("; the reports have no layer ranges inside their iterations to tell which layer (NVTX ranges per "
              "layer, or PyTorch's emit_nvtx, add them).")
    else:
        v += ("; no layer is measurably slower (each is SAME or UNCLEAR at diff's threshold): the time lies between "
              "the layers (idle GPU, launches) or is spread thin.")
    return v


def _straggler(rows, spread, options, run_diff):
    slow, med = rows[spread["slowest"]], rows[spread["median"]]
    diff_options = {k: options[k] for k in ("range", "skip_warmup") if options.get(k) is not None}
    words = ["laptime", "diff", med["file"], slow["file"]]
    if "pid" in med:
        diff_options["pid_before"] = med["pid"]
        words += ["--pid-before", str(med["pid"])]
    if "pid" in slow:
        diff_options["pid_after"] = slow["pid"]
        words += ["--pid-after", str(slow["pid"])]
    if options.get("range"):
        words += ["--range", options["range"]]
    if options.get("skip_warmup") is not None:
        words += ["--skip-warmup", str(options["skip_warmup"])]
    d = run_diff(med["file"], slow["file"], diff_options)
    layer = straggler_layer(d["rows"])
    return {"slowest": _which(rows, spread["slowest"]), "median": _which(rows, spread["median"]),
            "layer": d["rows"][layer]["name"] if layer >= 0 else None,
            "sentence": _sentence(slow, med, spread["slowest_over_median_pct"], d, layer),
            "command": " ".join(_shell_word(w) for w in words), "diff": d}


def summary(files, notes, rows, options, run_diff):
    """The "job" object over the rows of every report (job_to_json's)."""
    job = {"inputs": len(files), "rows": len(rows), "notes": notes, "spread": None, "straggler": None}
    spread = None
    if len(rows) >= 2:
        spread = _spread(rows)
        job["spread"] = {"slowest": _which(rows, spread["slowest"]), "fastest": _which(rows, spread["fastest"]),
                         "median": _which(rows, spread["median"]),
                         "slowest_over_median_pct": spread["slowest_over_median_pct"],
                         "slowest_over_fastest_pct": spread["slowest_over_fastest_pct"]}
        job["straggler"] = _straggler(rows, spread, options, run_diff)
    gate = options.get("fail_if_spread")
    if gate is not None:
        gate = float(gate)
        failed = spread is not None and spread["slowest_over_median_pct"] > gate
        job["gate"] = {"fail_if_spread_pct": gate, "failed": failed,
                       "reason": ("the slowest report laps %.1f%% above the median, more than --fail-if-spread %g%%."
                                  % (spread["slowest_over_median_pct"], gate)) if failed else ""}
    return job


def on_dask(client, paths, options):
    per_report = {k: v for k, v in options.items() if k not in _JOB_ONLY}
    files, notes = client.submit(expand, paths, pure=False).result()  # where the files are
    futures = client.map(_report_rows, files, [per_report] * len(files), pure=False)
    rows = []
    for future in futures:  # the first failure in input order, as the command's
        rows += future.result()

    def run_diff(before, after, diff_options):
        return client.submit(_straggler_diff, before, after, diff_options, pure=False).result()

    from . import Report

    return Report({"schema": "laptime.job/1", "reports": rows,
                   "job": summary(files, notes, rows, options, run_diff)})
