"""Report.to_pandas(): a report's tables as flat rows (one value a cell, named columns) in a DataFrame.

A row of the JSON becomes one row of the table: a nested object becomes columns named by its path
(occupancy.achieved_pct is the column occupancy_achieved_pct; a map of times by name, such as
by_category_ns, one column per name, GEMM_ns), a list of plain values one text cell ("a, b"), a
95% interval two columns (ci_ns_low, ci_ns_high). Lists of objects are tables of their own (the
kernels of an Nsight Compute layer: to_pandas("kernels")), never a cell. pandas is optional (pip
install laptime[pandas]); nothing here imports it until a table is asked for.
"""

from . import LaptimeError

_UNITS = ("_ns", "_us", "_ms", "_pct")


def flat(row, prefix=""):
    """One JSON object as {column: plain value}."""
    out = {}
    for key, value in row.items():
        name = prefix + key
        if isinstance(value, dict):
            unit = next((u for u in _UNITS if key.endswith(u)), None)
            if unit and all(not isinstance(v, (dict, list)) for v in value.values()):
                # A map of one quantity by name: GEMM_ns, attention_ns, ...
                out.update({prefix + k + unit: v for k, v in value.items()})
            else:
                out.update(flat(value, name + "_"))
        elif isinstance(value, list):
            if any(isinstance(v, (dict, list)) for v in value):
                continue  # rows of another table
            if key.startswith("ci_") and len(value) == 2:
                out[name + "_low"], out[name + "_high"] = value
            else:
                out[name] = ", ".join(str(v) for v in value)
        else:
            out[name] = value
    return out


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
                out.append(dict(flat(row), pid=pid) if pid is not None else flat(row))
        return out
    return rows


def _per_report(key):
    def rows(job):
        return [dict(flat(row), file=r["file"], pid=r.get("pid")) for r in job["reports"] for row in r[key]]
    return rows


def _reports(job):
    return [flat(r) for r in job["reports"]]


def _straggler(job):
    s = job["job"].get("straggler")
    return [] if s is None else [flat(row) for row in s["diff"]["rows"]]


def _ncu_kernels(layers_of):
    def rows(report):
        return [dict(flat(k), layer=layer["name"]) for layer in layers_of(report) for k in layer["kernel_list"]]
    return rows


def _ncu_diff_layers(report):
    return [flat(row) for row in report["layers"]]


TABLES = {
    "laptime.analyze/1": {
        "iterations": _per_process(lambda s: s["iterations"]),
        "layers": _per_process(lambda s: s["kernel_mix"]["range_patterns"]),
        "ranges": _per_process(lambda s: s["kernel_mix"]["ranges"]),
        "kernels": _per_process(lambda s: s["kernel_mix"]["kernels"]),
        "gaps": _per_process(lambda s: s["utilization"]["largest_gaps"]),
        "syncs": _per_process(lambda s: s["synchronization"]["calls"]),
    },
    "laptime.job/1": {
        "reports": _reports,
        "iterations": _per_report("iterations"),
        "layers": _per_report("layers"),
        "straggler": _straggler,
    },
    "laptime.diff/1": {"layers": lambda d: [flat(row) for row in d["rows"]]},
    "laptime.kernels/1": {
        "layers": lambda k: [flat(row) for row in k["layers"]],
        "kernels": _ncu_kernels(lambda k: k["layers"]),
    },
    "laptime.kernels.diff/1": {"layers": _ncu_diff_layers},
}


def table_names(report):
    return sorted(TABLES.get(_schema_of(report), {}))


def _schema_of(report):
    schema = report.get("schema")
    if "processes" in report and schema is None:
        schema = "laptime.analyze/1"
    return schema


def rows(report, table):
    """The table's rows as flat dicts (what to_pandas() puts in a DataFrame)."""
    schema = _schema_of(report)
    tables = TABLES.get(schema)
    if not tables:
        raise LaptimeError("a %s report has no tables for to_pandas()." % (schema or "schema-less"))
    if table not in tables:
        raise LaptimeError("a %s report has no table %r: choose one of %s."
                           % (schema, table, ", ".join(sorted(tables))))
    return tables[table](report)


def to_pandas(report, table):
    found = rows(report, table)
    try:
        import pandas
    except ImportError:
        raise LaptimeError("to_pandas() needs pandas: pip install pandas (or laptime[pandas]).") from None
    columns = {}  # the columns in the order they first appear
    for row in found:
        columns.update(dict.fromkeys(row))
    return pandas.DataFrame(found, columns=list(columns))
