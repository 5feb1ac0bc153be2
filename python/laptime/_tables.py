"""Report.to_pandas(): the rows of a report's tables, as the JSON holds them, in a DataFrame.
pandas is optional (pip install laptime[pandas]); nothing here imports it until a table is asked for."""

from . import LaptimeError


def _analyze_sections(report):
    """(pid or None, section) for a single-process report or each process of a multi-process one."""
    if "processes" in report:
        return [(p["pid"], p) for p in report["processes"]]
    return [(report.get("pid"), report)]


def _per_process(key_of):
    def rows(report):
        out = []
        for pid, section in _analyze_sections(report):
            for row in key_of(section):
                out.append(dict(row, pid=pid) if pid is not None else dict(row))
        return out
    return rows


def _per_report(key):
    def rows(job):
        out = []
        for r in job["reports"]:
            for row in r[key]:
                out.append(dict(row, file=r["file"], pid=r.get("pid")))
        return out
    return rows


def _reports(job):
    return [{k: v for k, v in r.items() if k not in ("iterations", "layers", "notes")} for r in job["reports"]]


def _straggler(job):
    s = job["job"].get("straggler")
    return [] if s is None else s["diff"]["rows"]


TABLES = {
    "laptime.analyze/1": {
        "iterations": _per_process(lambda s: s["iterations"]),
        "layers": _per_process(lambda s: s["kernel_mix"]["range_patterns"]),
        "kernels": _per_process(lambda s: s["kernel_mix"]["kernels"]),
    },
    "laptime.job/1": {
        "reports": _reports,
        "iterations": _per_report("iterations"),
        "layers": _per_report("layers"),
        "straggler": _straggler,
    },
    "laptime.diff/1": {"layers": lambda d: d["rows"]},
    "laptime.kernels/1": {"layers": lambda k: k["layers"]},
}


def to_pandas(report, table):
    schema = report.get("schema")
    if "processes" in report and schema is None:
        schema = "laptime.analyze/1"
    tables = TABLES.get(schema)
    if not tables:
        raise LaptimeError("a %s report has no tables for to_pandas()." % (schema or "schema-less"))
    if table not in tables:
        raise LaptimeError("a %s report has no table %r: choose one of %s."
                           % (schema, table, ", ".join(sorted(tables))))
    try:
        import pandas
    except ImportError:
        raise LaptimeError("to_pandas() needs pandas: pip install pandas (or laptime[pandas]).") from None
    return pandas.DataFrame(tables[table](report))
