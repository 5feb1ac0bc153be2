"""The `laptime` Python package as `pip install .` installs it (python/laptime, pyproject.toml).

Run with the virtual environment's interpreter after the install (.ci/run does, with the dask and
pandas extras):
    VENV/bin/python -m pytest tests/pip
Elsewhere (`python3 -m pytest` at the repository root) the module is not installed and these tests
skip, saying so. The numbers are checked against the generators' own answers committed beside the
fixtures (make_synthetic_trace.py, make_diff_fixtures.py, make_job_traces.py), not only against the
command's JSON.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

laptime = pytest.importorskip(
    "laptime", reason="the laptime module is what `pip install .` installs: run these with that environment's python")

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


def test_paths_are_paths_and_help_is_refused(tmp_path, monkeypatch):
    # A trace named like a flag is a trace (the paths go after `--`).
    with pytest.raises(laptime.LaptimeError, match=r"^cannot open -h: no such file"):
        laptime.analyze("-h")
    with pytest.raises(laptime.LaptimeError, match=r"^cannot open -h: no such file"):
        laptime.diff("-h", SYNTHETIC)
    with pytest.raises(laptime.LaptimeError, match=r"^cannot read --version \(No such file"):
        laptime.kernels("--version")
    monkeypatch.chdir(tmp_path)
    shutil.copy(SYNTHETIC, tmp_path / "-h")
    assert laptime.analyze("-h")["time_ms"] == laptime.analyze(SYNTHETIC)["time_ms"]
    for refused in ({"help": True}, {"h": True}):
        with pytest.raises(laptime.LaptimeError, match=r"is not an option here: help is the command's own"):
            laptime.analyze(SYNTHETIC, **refused)
    # A value that looks like a flag stays the flag's value.
    with pytest.raises(laptime.LaptimeError, match=r"no NVTX range matching `--help`"):
        laptime.analyze(SYNTHETIC, range="--help")


def test_every_failure_is_a_laptime_error(monkeypatch, tmp_path):
    monkeypatch.setenv("LAPTIME_EXECUTABLE", str(tmp_path / "no-such-laptime"))
    with pytest.raises(laptime.LaptimeError, match=r"^cannot run .*no-such-laptime"):
        laptime.analyze(SYNTHETIC)
    # A program that exits 0 and writes no report.
    fake = tmp_path / "fake-laptime"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("LAPTIME_EXECUTABLE", str(fake))
    with pytest.raises(laptime.LaptimeError, match=r"wrote no readable report"):
        laptime.analyze(SYNTHETIC)


def test_kernels_reads_an_ncu_report_in_the_users_terms():
    k = laptime.kernels(FIXTURES / "ncu" / "torch_resnet50_layers.csv")
    assert k["schema"] == "laptime.kernels/1"
    assert k["program"] == "PyTorch"
    assert sum(layer["kernels"] for layer in k["layers"]) == 85  # the CSV's rows (85 profiled kernels)
    two = laptime.kernels(FIXTURES / "ncu" / "laptime_resnet50_stem_cudnn.csv",
                          FIXTURES / "ncu" / "laptime_resnet50_stem_fused.csv")
    assert two["schema"] == "laptime.kernels.diff/1"


JOB = FIXTURES / "job"


def _job_expected():
    return json.loads((JOB / "job.expected.json").read_text())


def test_analyze_many_names_the_straggler_the_generator_made():
    expected = _job_expected()
    job = laptime.analyze_many(JOB)
    assert job["schema"] == "laptime.job/1"
    names = [os.path.basename(r["file"]) for r in job["reports"]]
    assert names == sorted(expected["ranks"])
    for r, name in zip(job["reports"], names):
        assert r["lap_ms"] == pytest.approx(expected["ranks"][name]["lap_ms"], rel=1e-12)
        # Each row is the single-file analysis, exactly.
        assert r["lap_ms"] == laptime.analyze(r["file"])["time_ms"]["lap"]
    summary = job["job"]
    assert os.path.basename(summary["spread"]["slowest"]["file"]) == expected["slowest"]
    assert os.path.basename(summary["spread"]["median"]["file"]) == expected["median"]
    assert summary["straggler"]["layer"] == expected["layer"]
    # A glob laptime expands itself, and the files one by one, give the same job.
    assert laptime.analyze_many(str(JOB / "rank_*.sqlite"))["job"]["straggler"]["layer"] == expected["layer"]
    pct = summary["spread"]["slowest_over_median_pct"]
    assert laptime.analyze_many(JOB, fail_if_spread=pct * 0.99)["job"]["gate"]["failed"] is True
    assert laptime.analyze_many(JOB, fail_if_spread=pct * 1.01)["job"]["gate"]["failed"] is False


def _job_folder(tmp_path):
    """A job as a user has it: four ranks' .nsys-rep reports, each exported beside it, the fastest
    also under a link, and a spelling of the same file."""
    for rank in range(4):
        report = tmp_path / ("rank_%d.nsys-rep" % rank)
        report.write_text("x")
        os.utime(report, (1, 1))  # older than its export: the export is read, nsys never runs
        shutil.copy(JOB / ("rank_%d.sqlite" % rank), tmp_path / ("rank_%d.sqlite" % rank))
    fastest = _job_expected()["fastest"]
    (tmp_path / "latest.sqlite").symlink_to(tmp_path / fastest)
    return [tmp_path, tmp_path / "latest.sqlite", str(tmp_path / ".") + "/" + fastest]


def test_analyze_many_reads_a_job_of_reports_once_each(tmp_path):
    expected = _job_expected()
    job = laptime.analyze_many(_job_folder(tmp_path), fail_if_spread=expected_spread(expected) * 1.01)
    assert [os.path.basename(r["file"]) for r in job["reports"]] == ["rank_%d.nsys-rep" % r for r in range(4)]
    assert job["job"]["straggler"]["layer"] == expected["layer"]
    assert job["job"]["gate"]["failed"] is False  # the fastest counted once: the median stays
    assert any("read once" in note for note in job["job"]["notes"])


def expected_spread(expected):
    slow, med = expected["ranks"][expected["slowest"]], expected["ranks"][expected["median"]]
    return 100 * (slow["lap_ms"] / med["lap_ms"] - 1)


def test_a_pytorch_profiler_trace_is_read_like_any_other(tmp_path):
    kineto = FIXTURES / "kineto"
    want = json.loads((kineto / "reference.expected.json").read_text())["synthetic_item_loop.json.gz"]
    report = laptime.analyze(kineto / "synthetic_item_loop.json.gz")
    assert report["source"].startswith("PyTorch profiler")
    assert [(it["index"], it["kernels"], it["host_ns"]) for it in report["iterations"]] == [
        (it["index"], it["kernels"], it["host_ns"]) for it in want["iterations"]]
    # A job of gzipped traces: a glob laptime expands, and a folder (tensorboard_trace_handler's names).
    for rank in (0, 1):
        shutil.copy(kineto / "synthetic_item_loop.json.gz", tmp_path / ("rank%d.pt.trace.json.gz" % rank))
    assert len(laptime.analyze_many(str(tmp_path / "*.json.gz"))["reports"]) == 2
    assert len(laptime.analyze_many(tmp_path)["reports"]) == 2


def test_analyze_many_on_a_two_worker_local_cluster_gives_the_same_job(tmp_path):
    distributed = pytest.importorskip("distributed", reason="pip install .[dask] for the cluster test")
    files = [JOB / "rank_0.sqlite", str(JOB / "rank_[123].sqlite"), FIXTURES / "process_two_ranks.sqlite"]
    reports = _job_folder(tmp_path)
    local = laptime.analyze_many(files, fail_if_spread=5)
    local_reports = laptime.analyze_many(reports, top=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            on_cluster = laptime.analyze_many(files, client=client, fail_if_spread=5)
            on_cluster_reports = laptime.analyze_many(reports, client=client, top=3)
            with pytest.raises(laptime.LaptimeError, match=r"cannot open /nonexistent/r.sqlite"):
                laptime.analyze_many([JOB / "rank_0.sqlite", "/nonexistent/r.sqlite"], client=client)
            # workers= is checked with a client too, by the command's own sentence.
            with pytest.raises(laptime.LaptimeError, match=r"^--workers must be a positive integer, got '0'"):
                laptime.analyze_many(JOB, client=client, workers=0)
    assert on_cluster == local
    assert len(local["reports"]) == 6 and local["job"]["gate"]["failed"] is True
    # .nsys-rep reports, a link and another spelling: the same dict both ways.
    assert on_cluster_reports == local_reports
    assert len(local_reports["reports"]) == 4


def test_analyze_many_takes_a_dask_client_and_says_so_otherwise():
    with pytest.raises(laptime.LaptimeError, match=r"^--workers must be a positive integer, got '0'"):
        laptime.analyze_many(JOB, workers=0)
    for wrong in ("tcp://127.0.0.1:8786", object(), 4):
        with pytest.raises(TypeError, match=r"^client= takes a dask.distributed.Client"):
            laptime.analyze_many(JOB, client=wrong)


def test_to_pandas_views():
    pandas = pytest.importorskip("pandas", reason="pip install .[pandas] for the tables")
    report = laptime.analyze(SYNTHETIC)
    iterations = report.to_pandas("iterations")
    assert list(iterations["busy_ns"]) == [it["busy_ns"] for it in report["iterations"]]
    assert set(report.tables()) == {"iterations", "layers", "ranges", "kernels", "gaps", "syncs"}
    two = laptime.analyze(FIXTURES / "process_two_ranks.sqlite").to_pandas("iterations")
    assert sorted(set(two["pid"])) == [4100, 4200]
    job = laptime.analyze_many(JOB)
    reports = job.to_pandas("reports")
    assert isinstance(reports, pandas.DataFrame)
    assert list(reports["lap_ms"]) == [r["lap_ms"] for r in job["reports"]]
    layers = job.to_pandas("layers")
    assert set(layers["file"]) == {r["file"] for r in job["reports"]}
    assert (job.to_pandas("straggler")["name"] == job["job"]["straggler"]["layer"]).any()
    with pytest.raises(laptime.LaptimeError, match=r"has no table 'laps': choose one of"):
        report.to_pandas("laps")
    # Flat: one plain value a cell, in every table of every kind.
    for r in (report, job, laptime.diff(FIXTURES / "diff_base.sqlite", FIXTURES / "diff_gelu_fused.sqlite"),
              laptime.kernels(FIXTURES / "ncu" / "laptime_gpt2.csv")):
        for table in r.tables():
            frame = r.to_pandas(table)
            for column in frame.columns:
                assert isinstance(column, str)
                assert not frame[column].map(lambda v: isinstance(v, (list, dict))).any(), (table, column)


def test_python_dash_m_laptime_is_the_command():
    """`python -m laptime ARGS` runs the installed executable with ARGS: the same output, errors and status."""
    for args in (["--help"], ["analyze", str(SYNTHETIC)], ["diff", str(SYNTHETIC)], ["bench", "gpt2"]):
        module = subprocess.run([sys.executable, "-m", "laptime", *args], capture_output=True, text=True)
        command = subprocess.run([laptime.executable(), *args], capture_output=True, text=True)
        assert (module.returncode, module.stdout, module.stderr) == (command.returncode, command.stdout,
                                                                       command.stderr), args
    assert subprocess.run([sys.executable, "-m", "laptime", "diff"], capture_output=True).returncode == 1


def test_the_modules_reports_validate_against_the_published_schemas():
    jsonschema = pytest.importorskip("jsonschema", reason=".ci/run installs jsonschema into the venv")
    from referencing import Registry, Resource

    schemas = [json.loads(p.read_text()) for p in (ROOT / "docs" / "schema").glob("*.schema.json")]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    by_kind = {s["title"]: s for s in schemas}
    for report in (laptime.analyze(SYNTHETIC), laptime.analyze_many(JOB),
                   laptime.diff(FIXTURES / "diff_base.sqlite", FIXTURES / "diff_noise.sqlite"),
                   laptime.kernels(FIXTURES / "ncu" / "laptime_gpt2.csv")):
        jsonschema.Draft202012Validator(by_kind[report["schema"]], registry=registry).validate(dict(report))


def test_the_installed_command_carries_sqlite_and_re2_inside():
    ldd = shutil.which("ldd")
    if not ldd:
        pytest.skip("no ldd on this machine")
    for exe in (COMMAND, laptime.executable()):
        out = subprocess.run([ldd, exe], capture_output=True, text=True).stdout
        assert "libsqlite3" not in out and "libre2" not in out, out


def test_version_and_help_describe_the_analyzer():
    out = subprocess.run([COMMAND, "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("laptime " + laptime.__version__)
    assert "trace" in subprocess.run([COMMAND, "--help"], capture_output=True, text=True).stdout.splitlines()[0]


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
