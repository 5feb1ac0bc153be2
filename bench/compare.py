#!/usr/bin/env python3
"""Side-by-side table of bench reports: `laptime bench --json` and bench/torch_baseline.py.

    python3 bench/compare.py runs/*.json
    python3 bench/compare.py --markdown runs/*.json >> docs/PERF.md

Every file must be a "laptime.bench/1" report. One row per file: framework, model,
precision, mode (eager / graph / compile), shape, median lap, p10-p90, throughput, TFLOP/s,
the SM clock under the steady laps (the median of `laptime bench`'s per-lap NVML readings, and
how many laps ran throttled, the power cap most often; "-" for a report without them), the
energy a forward takes (`energy`: joules per forward and mJ per token or image from NVML's
energy counter, the mean watts, the steady laps at the power cap; "-" for a report without it,
with a note giving the reason a report states), the speedup over the PyTorch eager run of the
same model, precision and shape in energy (baseline joules / these joules) and in time (baseline
median / this median) when the files include one, and the variant: laptime's
`config.variant` (which kernels ran: attention core, stem, GEMM choice) or torch.compile's
mode, then the LAPTIME_* switches the run had set (`config.switches`, in brackets), "-" when the
report has none of these. Rows are grouped by model,
precision and shape, the eager baseline first, then in the order given.

A report that is missing, is not JSON, or lacks a field the table needs is named with the
reason, and the exit status is 1. Standard library only.
"""

import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

SCHEMA = "laptime.bench/1"
BASELINE = "pytorch-eager"
HEADER = (
    "framework",
    "model",
    "precision",
    "mode",
    "shape",
    "lap ms",
    "p10-p90 ms",
    "throughput",
    "TFLOP/s",
    "SM MHz",
    "J/forward",
    "mJ/item",
    "W",
    "at cap",
    "J vs eager",
    "vs eager",
    "variant",
)
NUMERIC = {"lap ms", "p10-p90 ms", "throughput", "TFLOP/s", "J/forward", "mJ/item", "W", "at cap", "vs eager",
           "J vs eager"}  # right-aligned


class ReportError(Exception):
    """A report that cannot be read; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Run:
    path: str
    framework: str
    model: str
    precision: str
    mode: str
    shape: str
    median_ms: float
    p10_ms: float
    p90_ms: float
    items_per_s: float
    item: str
    tflops: float
    flops: float
    variant: str = "-"
    clock: str = "-"
    joules: Optional[float] = None  # per forward; None without an energy figure
    mj_per_item: Optional[float] = None
    watts: Optional[float] = None
    at_cap: str = "-"
    no_energy: str = ""  # the reason a report gives for having no energy figure

    @property
    def workload(self) -> Tuple[str, str, str]:
        """What must match for two runs to be compared: the same work at the same precision."""
        return (self.model, self.precision, self.shape)


def _field(report: dict, dotted: str, kind: type, path: str):
    value = report
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            raise ReportError(f"{path}: missing {dotted}")
        value = value[key]
    if kind is float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise ReportError(f"{path}: {dotted} is {value!r}, not a finite number")
        return float(value)
    if not isinstance(value, kind):
        raise ReportError(f"{path}: {dotted} is {value!r}, not a {kind.__name__}")
    return value


def _variant(report: dict) -> str:
    """Which implementation ran: laptime's config.variant or torch.compile's mode, and the
    LAPTIME_* switches set ("[LAPTIME_CUTLASS_PDL=on]"), else "-"."""
    config = report.get("config")
    if not isinstance(config, dict):
        return "-"
    parts = []
    for key, prefix in (("variant", ""), ("compile_mode", "mode=")):
        value = config.get(key)
        if isinstance(value, str) and value:
            parts.append(prefix + value)
            break
    switches = config.get("switches")
    if isinstance(switches, dict) and switches:
        parts.append("[" + ", ".join(f"{k}={v}" for k, v in sorted(switches.items())) + "]")
    return " ".join(parts) or "-"


def _clock(report: dict) -> str:
    """The steady laps' median SM clock and how many ran throttled: "1665 (20/20 throttled)"."""
    laps = [
        it
        for it in report.get("iterations") or []
        if isinstance(it, dict) and not it.get("warmup") and isinstance(it.get("sm_mhz"), int)
    ]
    if not laps:
        return "-"
    median = statistics.median(it["sm_mhz"] for it in laps)
    throttled = sum(1 for it in laps if it.get("throttled") is True)
    return f"{median:.0f}" + (f" ({throttled}/{len(laps)} throttled)" if throttled else "")


def _energy(report: dict, path: str) -> dict:
    """The Run fields of the report's `energy`: the figures when it measured them, else the
    reason it gives (absent: a report from before the bench measured energy, no reason)."""
    energy = report.get("energy")
    if energy is None:
        return {}
    if not isinstance(energy, dict) or not isinstance(energy.get("available"), bool):
        return {"no_energy": "its energy member is malformed"}
    if not energy["available"]:
        reason = energy.get("reason")
        return {"no_energy": reason if isinstance(reason, str) else "it says none"}
    fields = {
        "joules": _field(report, "energy.joules_per_forward", float, path),
        "mj_per_item": _field(report, "energy.mj_per_item", float, path),
        "watts": _field(report, "energy.mean_watts", float, path),
    }
    cap, laps = energy.get("laps_at_cap"), energy.get("laps")
    if isinstance(cap, int) and isinstance(laps, int) and not isinstance(cap, bool):
        fields["at_cap"] = f"{cap}/{laps}"
    return fields


def load_run(path: str) -> Run:
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        raise ReportError(f"{path}: cannot read it ({e.strerror})") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(report, dict):
        raise ReportError(f"{path}: a JSON {type(report).__name__}, not a bench report")
    schema = report.get("schema")
    if schema != SCHEMA:
        raise ReportError(f"{path}: schema is {schema!r}, expected {SCHEMA!r}")
    run = Run(
        path=path,
        framework=_field(report, "framework", str, path),
        model=_field(report, "config.model", str, path),
        precision=_field(report, "config.precision", str, path),
        mode=_field(report, "config.mode", str, path),
        shape=_field(report, "config.shape", str, path),
        median_ms=_field(report, "steady_ms.median", float, path),
        p10_ms=_field(report, "steady_ms.p10", float, path),
        p90_ms=_field(report, "steady_ms.p90", float, path),
        items_per_s=_field(report, "throughput.items_per_s", float, path),
        item=_field(report, "throughput.item", str, path),
        tflops=_field(report, "tflops", float, path),
        flops=_field(report, "flops_per_forward", float, path),
        variant=_variant(report),
        clock=_clock(report),
        **_energy(report, path),
    )
    if run.median_ms <= 0:
        raise ReportError(f"{path}: steady_ms.median is {run.median_ms}, not a positive time")
    return run


def baselines(runs: Sequence[Run]) -> Tuple[Dict[tuple, Run], List[str]]:
    """The PyTorch eager run of each workload (the first, when there are several), and notes."""
    found: Dict[tuple, Run] = {}
    notes = []
    for r in runs:
        if r.framework != BASELINE:
            continue
        if r.workload in found:
            notes.append(
                f"{r.path}: another {BASELINE} run of {' '.join(r.workload)}; "
                f"speedups use {found[r.workload].path}"
            )
        else:
            found[r.workload] = r
    return found, notes


def speedup(run: Run, base: Optional[Run]) -> Optional[float]:
    """How many times faster than the baseline: baseline median lap / this median lap."""
    return None if base is None else base.median_ms / run.median_ms


def energy_saving(run: Run, base: Optional[Run]) -> Optional[float]:
    """How many times less energy a forward than the baseline: baseline joules / these joules."""
    if base is None or base.joules is None or run.joules is None or run.joules <= 0:
        return None
    return base.joules / run.joules


def ordered(runs: Sequence[Run]) -> List[Run]:
    """Grouped by workload in order of first appearance; the baseline leads its group."""
    first_seen: Dict[tuple, int] = {}
    for r in runs:
        first_seen.setdefault(r.workload, len(first_seen))
    return sorted(runs, key=lambda r: (first_seen[r.workload], r.framework != BASELINE))


def table(runs: Sequence[Run]) -> Tuple[List[List[str]], List[str]]:
    """The table's rows as strings, and the notes to print under it."""
    base, notes = baselines(runs)
    rows = []
    missing = set()
    for r in ordered(runs):
        b = base.get(r.workload)
        s = speedup(r, b)
        if b is None and r.workload not in missing:
            missing.add(r.workload)
            notes.append(f"no {BASELINE} run of {' '.join(r.workload)}: no speedup for it")
        if r.no_energy:
            notes.append(f"{r.path}: no energy figure ({r.no_energy})")
        e = energy_saving(r, b)
        if b is not None and b is not r and not math.isclose(r.flops, b.flops, rel_tol=1e-3):
            notes.append(
                f"{r.path} counts {r.flops / 1e9:.1f} GFLOP per forward, its baseline "
                f"{b.path} {b.flops / 1e9:.1f}: their TFLOP/s are not comparable"
            )
        rows.append(
            [
                r.framework,
                r.model,
                r.precision,
                r.mode,
                r.shape,
                f"{r.median_ms:.3f}",
                f"{r.p10_ms:.3f}-{r.p90_ms:.3f}",
                f"{r.items_per_s:,.0f} {r.item}/s",
                f"{r.tflops:.1f}",
                r.clock,
                "-" if r.joules is None else f"{r.joules:.3f}",
                "-" if r.mj_per_item is None else f"{r.mj_per_item:.4g}",
                "-" if r.watts is None else f"{r.watts:.0f}",
                r.at_cap,
                "-" if e is None else f"{e:.2f}x",
                "-" if s is None else f"{s:.2f}x",
                r.variant,
            ]
        )
    return rows, notes


def format_text(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER))]

    def line(cells):
        return "  ".join(
            c.rjust(w) if h in NUMERIC else c.ljust(w) for c, w, h in zip(cells, widths, HEADER)
        ).rstrip()

    return "\n".join([line(HEADER), line("-" * w for w in widths), *(line(r) for r in rows)])


def format_markdown(rows: Sequence[Sequence[str]]) -> str:
    def line(cells):
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    rule = ["--:" if h in NUMERIC else "---" for h in HEADER]
    return "\n".join([line(HEADER), "|" + "|".join(rule) + "|", *(line(r) for r in rows)])


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="compare.py",
        description="One table from laptime.bench/1 reports (laptime bench --json, "
        "bench/torch_baseline.py --json), with speedups over PyTorch eager.",
    )
    ap.add_argument("reports", nargs="+", metavar="REPORT.json")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table, for docs/PERF.md")
    args = ap.parse_args(argv)
    # `laptime bench --json R.json` writes its layer costs beside it as R.layers.json (schema
    # laptime.layers/1): a folder's *.json holds both, and only the reports are runs.
    reports = [p for p in args.reports if not p.endswith(".layers.json")]
    if not reports:
        print("compare.py: no bench reports among the files (only .layers.json sidecars).", file=sys.stderr)
        return 1
    try:
        runs = [load_run(p) for p in reports]
    except ReportError as e:
        print(f"compare.py: {e}.", file=sys.stderr)
        return 1
    rows, notes = table(runs)
    if args.markdown:
        print(format_markdown(rows))
        if notes:
            print("\n" + "\n".join(f"- {n}" for n in notes))
    else:
        print(format_text(rows))
        if notes:
            print("\n" + "\n".join(f"note: {n}" for n in notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
