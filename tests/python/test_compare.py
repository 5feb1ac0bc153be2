"""bench/compare.py on synthetic laptime.bench/1 reports written here."""

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

COMPARE_PY = Path(__file__).resolve().parents[2] / "bench" / "compare.py"
_spec = importlib.util.spec_from_file_location("compare", COMPARE_PY)
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)

GPT2_SHAPE = "B=8 T=1024 (8192 tokens)"


def report(
    framework,
    median,
    *,
    model="gpt2",
    precision="bf16",
    mode="eager",
    shape=GPT2_SHAPE,
    flops=2.333e12,
    items=8192,
    item="tokens",
):
    """A minimal report with the fields compare.py reads, the way the bench writes them."""
    return {
        "schema": "laptime.bench/1",
        "framework": framework,
        "device": {"name": "Test GPU"},
        "config": {"model": model, "precision": precision, "shape": shape, "mode": mode},
        "iterations": [],
        "steady_ms": {
            "mean": median,
            "median": median,
            "p10": median * 0.9,
            "p90": median * 1.1,
            "min": median * 0.8,
            "max": median * 1.2,
            "stddev": 0.01,
        },
        "throughput": {"items_per_s": items / (median * 1e-3), "item": item},
        "flops_per_forward": flops,
        "tflops": flops / (median * 1e-3) / 1e12,
        "enqueue_ms": 1.0,
        "memory_bytes": {},
    }


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def run(capsys, *args):
    """compare.py's exit code, stdout and stderr."""
    try:
        code = compare.main([str(a) for a in args])
    except SystemExit as e:  # argparse usage errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def data_rows(out):
    """The table's rows (after the header and the rule) as lists of cells split on 2+ spaces."""
    lines = out.split("\n\n")[0].splitlines()[2:]
    return [[c.strip() for c in line.split("  ") if c.strip()] for line in lines]


def test_speedup_is_baseline_median_over_run_median(tmp_path, capsys):
    files = [
        write(tmp_path, "laptime.json", report("laptime", 4.0)),
        write(tmp_path, "graph.json", report("laptime", 2.0, mode="graph")),
        write(tmp_path, "eager.json", report("pytorch-eager", 10.0)),
        write(tmp_path, "compile.json", report("pytorch-compile", 8.0, mode="compile")),
    ]
    code, out, err = run(capsys, *files)
    assert code == 0, err
    rows = data_rows(out)
    # The baseline leads its group; the others keep the order they were given in.
    assert [(r[0], r[3]) for r in rows] == [
        ("pytorch-eager", "eager"),
        ("laptime", "eager"),
        ("laptime", "graph"),
        ("pytorch-compile", "compile"),
    ]
    assert [r[-2] for r in rows] == ["1.00x", "2.50x", "5.00x", "1.25x"]
    assert rows[1][5] == "4.000" and rows[1][6] == "3.600-4.400"
    assert rows[1][7] == "2,048,000 tokens/s"  # 8192 tokens / 4 ms
    assert rows[1][8] == f"{2.333e12 / 4e-3 / 1e12:.1f}"
    assert "note" not in out


def test_speedup_function():
    base = compare.Run(
        "a",
        "pytorch-eager",
        "gpt2",
        "bf16",
        "eager",
        GPT2_SHAPE,
        12.0,
        11.0,
        13.0,
        1.0,
        "tokens",
        1.0,
        1.0,
    )
    fast = compare.Run(
        "b", "laptime", "gpt2", "bf16", "graph", GPT2_SHAPE, 3.0, 2.9, 3.1, 1.0, "tokens", 1.0, 1.0
    )
    assert compare.speedup(fast, base) == pytest.approx(4.0)
    assert compare.speedup(fast, None) is None


def test_baseline_must_match_model_precision_and_shape(tmp_path, capsys):
    files = [
        write(tmp_path, "eager_bf16.json", report("pytorch-eager", 10.0)),
        write(tmp_path, "laptime_fp32.json", report("laptime", 20.0, precision="fp32")),
        write(
            tmp_path,
            "laptime_small.json",
            report("laptime", 1.0, shape="B=1 T=1024 (1024 tokens)", flops=2.9e11),
        ),
        write(tmp_path, "laptime_bf16.json", report("laptime", 5.0)),
    ]
    code, out, _ = run(capsys, *files)
    assert code == 0
    speedups = {(r[2], r[4]): r[-2] for r in data_rows(out) if r[0] == "laptime"}
    assert speedups == {
        ("bf16", GPT2_SHAPE): "2.00x",
        ("fp32", GPT2_SHAPE): "-",
        ("bf16", "B=1 T=1024 (1024 tokens)"): "-",
    }
    assert "note: no pytorch-eager run of gpt2 fp32 B=8 T=1024 (8192 tokens)" in out
    assert "note: no pytorch-eager run of gpt2 bf16 B=1 T=1024 (1024 tokens)" in out


def test_no_baseline_at_all(tmp_path, capsys):
    files = [
        write(tmp_path, "a.json", report("laptime", 4.0)),
        write(tmp_path, "b.json", report("laptime", 3.0, mode="graph")),
    ]
    code, out, _ = run(capsys, *files)
    assert code == 0
    assert [r[-2] for r in data_rows(out)] == ["-", "-"]
    assert out.count("no pytorch-eager run") == 1  # one note per workload, not per row


def test_duplicate_baseline_uses_the_first(tmp_path, capsys):
    files = [
        write(tmp_path, "eager1.json", report("pytorch-eager", 10.0)),
        write(tmp_path, "eager2.json", report("pytorch-eager", 20.0)),
        write(tmp_path, "laptime.json", report("laptime", 5.0)),
    ]
    code, out, _ = run(capsys, *files)
    assert code == 0
    assert [r[-2] for r in data_rows(out)] == ["1.00x", "0.50x", "2.00x"]
    assert "speedups use " + files[0] in out


def test_different_flop_counts_are_flagged(tmp_path, capsys):
    files = [
        write(tmp_path, "eager.json", report("pytorch-eager", 10.0, flops=2.333e12)),
        write(tmp_path, "laptime.json", report("laptime", 5.0, flops=2.0e12)),
    ]
    code, out, _ = run(capsys, *files)
    assert code == 0
    assert "TFLOP/s are not comparable" in out


def test_markdown(tmp_path, capsys):
    files = [
        write(tmp_path, "eager.json", report("pytorch-eager", 10.0)),
        write(tmp_path, "laptime.json", report("laptime", 4.0, mode="graph")),
    ]
    code, out, _ = run(capsys, "--markdown", *files)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].startswith("| framework | model | precision | mode | shape | lap ms |")
    # The clock column left-aligned, the energy columns right-aligned.
    assert lines[1] == "|---|---|---|---|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|---|"
    assert lines[3].startswith("| laptime | gpt2 | bf16 | graph | " + GPT2_SHAPE + " | 4.000 |")
    assert lines[3].endswith("| - | 2.50x | - |")
    assert all(line.count("|") == 18 for line in lines)


def test_clock_column_reads_the_laps_clock(tmp_path, capsys):
    """The steady laps' median SM clock and the throttled count; "-" without readings."""
    lap = report("laptime", 4.0)
    lap["iterations"] = [
        {"index": 0, "warmup": True, "lap_ms": 9.0, "sm_mhz": 1980, "throttled": False},
        {"index": 1, "warmup": False, "lap_ms": 4.0, "sm_mhz": 1980, "throttled": False},
        {"index": 2, "warmup": False, "lap_ms": 4.1, "sm_mhz": 1845, "throttled": True},
        {"index": 3, "warmup": False, "lap_ms": 4.1, "sm_mhz": 1830, "throttled": True},
    ]
    steady = report("laptime", 3.0, mode="graph")
    steady["iterations"] = [
        {"index": 0, "warmup": False, "lap_ms": 3.0, "sm_mhz": 1980, "throttled": False},
        {"index": 1, "warmup": False, "lap_ms": 3.0, "sm_mhz": 1965, "throttled": False},
    ]
    files = [
        write(tmp_path, "eager.json", report("pytorch-eager", 10.0)),
        write(tmp_path, "laptime.json", lap),
        write(tmp_path, "graph.json", steady),
    ]
    code, out, _ = run(capsys, *files)
    assert code == 0
    rows = data_rows(out)
    assert "SM MHz" in out.splitlines()[0]
    assert [r[9] for r in rows] == ["-", "1845 (2/3 throttled)", "1972"]  # 1972.5 rounds to even
    assert [r[-2] for r in rows] == ["1.00x", "2.50x", "3.33x"]


def test_variant_names_what_ran(tmp_path, capsys):
    """laptime's config.variant and torch.compile's mode tell rows of one workload apart."""
    lap = report("laptime", 4.0)
    lap["config"]["variant"] = "attention cudnn, GEMM algorithms timed at build"
    tuned = report("pytorch-compile", 6.0, mode="compile")
    tuned["config"]["compile_mode"] = "max-autotune-no-cudagraphs"
    files = [
        write(tmp_path, "eager.json", report("pytorch-eager", 10.0)),
        write(tmp_path, "laptime.json", lap),
        write(tmp_path, "compile.json", tuned),
    ]
    code, out, _ = run(capsys, *files)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[2].rstrip().endswith("1.00x  -")
    assert lines[3].rstrip().endswith("2.50x  attention cudnn, GEMM algorithms timed at build")
    assert lines[4].rstrip().endswith("1.67x  mode=max-autotune-no-cudagraphs")


def test_switches_follow_the_variant(tmp_path, capsys):
    """Two runs of one command under different LAPTIME_* switches: each row names its switches."""
    on = report("laptime", 2.85)
    on["config"]["variant"] = "attention cudnn"
    on["config"]["switches"] = {"LAPTIME_RESNET_SHORTCUT": "folded", "LAPTIME_CUTLASS_PDL": "on"}
    off = report("laptime", 2.95)
    off["config"]["switches"] = {"LAPTIME_CUTLASS_PDL": "off"}
    files = [write(tmp_path, "on.json", on), write(tmp_path, "off.json", off)]
    code, out, _ = run(capsys, *files)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[2].rstrip().endswith("attention cudnn [LAPTIME_CUTLASS_PDL=on, LAPTIME_RESNET_SHORTCUT=folded]")
    assert lines[3].rstrip().endswith("  [LAPTIME_CUTLASS_PDL=off]")


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"schema": "laptime.bench/1", ', "not valid JSON"),
        ("[1, 2]", "a JSON list, not a bench report"),
        ('{"schema": "other/2"}', "schema is 'other/2', expected 'laptime.bench/1'"),
        ("missing-median", "missing steady_ms.median"),
        ("text-median", "steady_ms.median is 'fast', not a finite number"),
        ("zero-median", "not a positive time"),
        ("missing-config", "missing config.model"),
    ],
)
def test_malformed_report_is_named_and_exits_1(tmp_path, capsys, content, message):
    good = report("laptime", 4.0)
    bad = copy.deepcopy(good)
    if content == "missing-median":
        del bad["steady_ms"]["median"]
    elif content == "text-median":
        bad["steady_ms"]["median"] = "fast"
    elif content == "zero-median":
        bad["steady_ms"]["median"] = 0
    elif content == "missing-config":
        del bad["config"]
    else:
        bad = content
    files = [write(tmp_path, "good.json", good), write(tmp_path, "bad.json", bad)]
    code, out, err = run(capsys, *files)
    assert code == 1
    assert out == ""
    assert err.startswith(f"compare.py: {files[1]}: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_missing_file(tmp_path, capsys):
    code, _, err = run(capsys, tmp_path / "nope.json")
    assert code == 1
    assert "nope.json: cannot read it" in err


def test_command_line_exit_codes(tmp_path):
    bad = write(tmp_path, "bad.json", "not json")
    result = subprocess.run([sys.executable, str(COMPARE_PY), bad], capture_output=True, text=True)
    assert result.returncode == 1
    assert "bad.json: not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr
    usage = subprocess.run([sys.executable, str(COMPARE_PY)], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage:" in usage.stderr


def test_layer_cost_sidecars_beside_the_reports_are_left_out(tmp_path, capsys):
    # `compare.py results/<run>/*.json` sees the bench's R.layers.json beside each R.json.
    sidecar = {"schema": "laptime.layers/1", "layers": []}
    files = [
        write(tmp_path, "laptime.json", report("laptime", 4.0)),
        write(tmp_path, "laptime.layers.json", sidecar),
        write(tmp_path, "eager.json", report("pytorch-eager", 10.0)),
    ]
    code, out, err = run(capsys, *files)
    assert code == 0, err
    assert [r[-2] for r in data_rows(out)] == ["1.00x", "2.50x"]
    code, out, err = run(capsys, files[1])
    assert code == 1 and "only .layers.json sidecars" in err


def energy(joules, items=8192, watts=700.0, at_cap=20, laps=20):
    return {
        "available": True,
        "joules_per_forward": joules,
        "mj_per_item": joules * 1000 / items,
        "item": "tokens",
        "mean_watts": watts,
        "power_limit_watts": 700,
        "laps_at_cap": at_cap,
        "laps": laps,
    }


def test_energy_columns_and_the_energy_saved_against_eager(tmp_path, capsys):
    """Joules per forward, mJ per token, mean watts, laps at the cap; the baseline's joules over
    each row's; "-" and a note with the report's reason where a report has none, "-" alone for
    a report from before the bench measured energy."""
    eager = report("pytorch-eager", 14.5)
    eager["energy"] = energy(8.41, watts=580.0, at_cap=0)
    lap = report("laptime", 3.86)
    lap["energy"] = energy(2.702)
    short = report("laptime", 2.68, precision="fp8")
    short["energy"] = {"available": False, "reason": "NVML's energy counter stepped 0 times"}
    old = report("pytorch-eager", 16.9, precision="fp8")
    files = [write(tmp_path, n, r) for n, r in
             (("eager.json", eager), ("laptime.json", lap), ("short.json", short), ("old.json", old))]
    code, out, err = run(capsys, *files)
    assert code == 0, err
    header = out.splitlines()[0].split()
    assert header[header.index("J/forward"):header.index("J/forward") + 6] == [
        "J/forward", "mJ/item", "W", "at", "cap", "J"]
    rows = {(r[0], r[2]): r for r in data_rows(out)}
    base, ours = rows[("pytorch-eager", "bf16")], rows[("laptime", "bf16")]
    assert base[10:15] == ["8.410", f"{8410 / 8192:.4g}", "580", "0/20", "1.00x"]
    assert ours[10:15] == ["2.702", f"{2702 / 8192:.4g}", "700", "20/20", f"{8.41 / 2.702:.2f}x"]
    assert ours[15] == f"{14.5 / 3.86:.2f}x"
    assert rows[("laptime", "fp8")][10:15] == ["-", "-", "-", "-", "-"]
    assert rows[("pytorch-eager", "fp8")][10:15] == ["-", "-", "-", "-", "-"]
    assert f"note: {files[2]}: no energy figure (NVML's energy counter stepped 0 times)" in out
    assert out.count("no energy figure") == 1


def test_a_malformed_energy_figure_is_named(tmp_path, capsys):
    bad = report("laptime", 4.0)
    bad["energy"] = energy(2.7)
    bad["energy"]["joules_per_forward"] = "lots"
    code, out, err = run(capsys, write(tmp_path, "bad.json", bad))
    assert code == 1 and out == ""
    assert "energy.joules_per_forward is 'lots', not a finite number" in err
