"""The `laptime` Python package as `pip install .` installs it (python/laptime, pyproject.toml).

Run with the virtual environment's interpreter after the install (.ci/run does):
    VENV/bin/python -m pytest tests/pip
The numbers are checked against the generators' own answers committed beside the fixtures
(make_synthetic_trace.py, make_diff_fixtures.py), not only against the command's JSON.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import laptime

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SYNTHETIC = FIXTURES / "synthetic_trace.sqlite"
# The command pip put beside this interpreter: what a user types.
COMMAND = shutil.which("laptime", path=os.path.dirname(sys.executable))


def test_installed_not_imported_from_the_checkout():
    assert ROOT / "python" not in Path(laptime.__file__).resolve().parents, laptime.__file__
    assert Path(laptime.executable()).is_file()


def test_the_command_is_on_the_environments_path():
    assert COMMAND, "pip installed no laptime command beside " + sys.executable
    out = subprocess.run([COMMAND, "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for word in ("analyze", "diff", "bench"):
        assert word in out.stdout
    # Host-only: the GPU subcommands say so in one sentence.
    bench = subprocess.run([COMMAND, "bench", "gpt2"], capture_output=True, text=True)
    assert bench.returncode == 1
    assert "needs the CUDA build of laptime" in bench.stderr


def test_analyze_returns_the_report_with_the_generators_numbers():
    report = laptime.analyze(SYNTHETIC)
    assert report["schema"] == "laptime.analyze/1"
    expected = json.loads((FIXTURES / "synthetic_trace.expected.json").read_text())
    assert [it["busy_ns"] for it in report["iterations"]] == [it["busy_ns"] for it in expected["iterations"]]
    assert [it["steady"] for it in report["iterations"]] == [False, True, True]
    # The same dict as the command's own --json.
    out = subprocess.run([COMMAND, "analyze", str(SYNTHETIC), "--json", "-"], capture_output=True, text=True)
    assert out.returncode == 0
    assert report == json.loads(out.stdout)


def test_keyword_options_are_the_flags():
    report = laptime.analyze(str(SYNTHETIC), skip_warmup=2, gap_us=1.5, top=1)
    assert [it["steady"] for it in report["iterations"]] == [False, False, True]
    assert report["gap_threshold_us"] == 1.5


def test_diff_labels_as_the_generator_says():
    expected = json.loads((FIXTURES / "diff_fixtures.expected.json").read_text())["pairs"]["base_vs_attn_slower"]
    d = laptime.diff(FIXTURES / "diff_base.sqlite", FIXTURES / "diff_attn_slower.sqlite")
    assert d["schema"] == "laptime.diff/1"
    labels = {row["name"]: row["label"] for row in d["rows"]}
    assert {name: labels[name] for name in expected["labels"]} == expected["labels"]


def test_several_processes_each_on_its_own_and_pid_for_one():
    two = FIXTURES / "process_two_ranks.sqlite"
    expected = json.loads((FIXTURES / "process_traces.expected.json").read_text())["two_ranks"]["processes"]
    report = laptime.analyze(two)
    assert [p["pid"] for p in report["processes"]] == [4100, 4200]
    assert "time_ms" not in report
    for p in report["processes"]:
        assert p["time_ms"]["lap"] == pytest.approx(expected[str(p["pid"])]["lap_ms"], rel=1e-9)
    assert laptime.analyze(two, pid=4200) == report["processes"][1]
    with pytest.raises(laptime.LaptimeError, match=r"holds 2 processes with iterations \(4100 \(python\), 4200"):
        laptime.diff(two, two)
    d = laptime.diff(two, two, pid_before=4100, pid_after=4200)  # rank 1's kernels are 1.3x rank 0's
    assert d["rows"][0]["label"] == "SLOWER"


def test_a_tripped_gate_still_returns_the_diff():
    d = laptime.diff(FIXTURES / "diff_base.sqlite", FIXTURES / "diff_attn_slower.sqlite", fail_if_slower=1)
    assert d["gate"]["failed"] is True


def test_errors_are_laptimes_sentence():
    with pytest.raises(laptime.LaptimeError) as e:
        laptime.analyze("/nonexistent/run.sqlite")
    assert str(e.value) == "cannot open /nonexistent/run.sqlite: no such file, or it is not readable."
    assert e.value.returncode == 1
    with pytest.raises(laptime.LaptimeError, match=r"^--gap-us must be a positive number, got 'nan'\."):
        laptime.analyze(SYNTHETIC, gap_us="nan")
    with pytest.raises(TypeError):
        laptime.analyze(SYNTHETIC, json="x.json")


def test_an_nsys_report_without_nsys_names_the_command(tmp_path, monkeypatch):
    report = tmp_path / "run.nsys-rep"
    shutil.copy(FIXTURES / "graph" / "graph_cases.nsys-rep", report)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(laptime.LaptimeError, match=r"nsys is not on PATH to export it: run `nsys export --type sqlite"):
        laptime.analyze(report)


def test_an_nsys_report_with_nsys_is_exported_once(tmp_path, monkeypatch):
    report = tmp_path / "run.nsys-rep"
    shutil.copy(FIXTURES / "graph" / "graph_cases.nsys-rep", report)
    monkeypatch.setenv("PATH", str(ROOT / "tests" / "support" / "fake-nsys") + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("FAKE_NSYS_SQLITE", str(SYNTHETIC))
    monkeypatch.setenv("FAKE_NSYS_LOG", str(tmp_path / "nsys.log"))
    first = laptime.analyze(report)
    assert first == laptime.analyze(report) == laptime.analyze(SYNTHETIC)
    assert len((tmp_path / "nsys.log").read_text().splitlines()) == 1
    assert (tmp_path / "run.sqlite").read_bytes() == SYNTHETIC.read_bytes()
