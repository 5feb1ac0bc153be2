"""Every JSON document laptime writes validates against its schema under docs/schema/.

The trace commands' reports (laptime.analyze/1, .diff/1, .job/1, .kernels/1, .kernels.diff/1) are
written here, by the built executable ($LAPTIME_BINARY, set by CTest), on every committed fixture;
the GPU commands' reports (laptime.bench/1, .lab/1, .lab.list/1, and the sidecars .layers/1 and .peak/1)
cannot be made without a GPU, so the committed ones are read: every such file under results/ and
tests/fixtures/. The schemas are strict (no member a schema does not name), so a field added to a
writer and not to its schema fails here; the last tests check that strictness itself.

    LAPTIME_BINARY=build-host/bench/laptime python3 -m pytest -q tests/schema
"""

import concurrent.futures
import copy
import gzip
import json
import os
import random
import subprocess
import tempfile
from pathlib import Path

import pytest

try:
    import jsonschema
    from referencing import Registry, Resource
except ImportError:  # scripts/setup.sh installs it; fail, not skip, so CI cannot pass without it
    raise ImportError("tests/schema needs jsonschema >= 4.18 (scripts/setup.sh installs it)") from None

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schema"
FIXTURES = ROOT / "tests" / "fixtures"
# The kinds only a GPU run writes: validated in the committed files, not made here.
COMMITTED_KINDS = {"laptime.bench/1", "laptime.lab/1", "laptime.lab.list/1", "laptime.layers/1", "laptime.peak/1"}


def schema_file(kind):
    """laptime.analyze/1 -> docs/schema/analyze-1.schema.json"""
    name, version = kind[len("laptime."):].split("/")
    return SCHEMAS / ("%s-%s.schema.json" % (name, version))


def load_schemas():
    schemas = {}
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        with open(path, encoding="utf-8") as f:
            schemas[path.name] = json.load(f)
    return schemas


SCHEMA_DOCS = load_schemas()
REGISTRY = Registry().with_resources(
    (s["$id"], Resource.from_contents(s)) for s in SCHEMA_DOCS.values())


def validator(kind):
    return jsonschema.Draft202012Validator(SCHEMA_DOCS[schema_file(kind).name], registry=REGISTRY)


def errors(doc):
    v = validator(doc["schema"])
    return ["%s: %s" % ("/".join(map(str, e.absolute_path)) or "(top)", e.message)
            for e in sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))][:10]


# --- The documents ----------------------------------------------------------------------------

def fixture_cases():
    """(case name, arguments) of every run whose JSON is checked; --json is added."""
    fx = FIXTURES
    cases = []
    for trace in sorted(fx.rglob("*.sqlite")):
        rel = trace.relative_to(fx).as_posix()
        cases.append(("analyze " + rel, ["analyze", str(trace)]))
        if trace.with_suffix(".layers.json").exists():
            cases.append(("analyze --peak " + rel, ["analyze", str(trace), "--peak", str(fx / "peak_example.json")]))
    # The PyTorch profiler's traces, each with the range its reference names (tests/fixtures/kineto).
    with open(fx / "kineto" / "reference.expected.json", encoding="utf-8") as f:
        for name, ref in sorted(json.load(f).items()):
            rng = ["--range", ref["range"]] if ref["range"] else []
            cases.append(("analyze kineto/" + name, ["analyze", str(fx / "kineto" / name), *rng]))
    cases += [
        ("analyze --pid", ["analyze", str(fx / "process_two_programs.sqlite"), "--pid", "5100"]),
        ("analyze report", ["analyze", str(fx / "graph" / "graph_cases.nsys-rep")]),
        ("analyze --top", ["analyze", str(fx / "nsys" / "gpt2_bf16.sqlite"), "--top", "3", "--skip-warmup", "2"]),
        # The calls' lists cut (their _omitted members), inside the steady iterations and outside.
        ("analyze --top syncs", ["analyze", str(fx / "lesson" / "gpt2_max.sqlite"), "--top", "2"]),
        ("job", ["analyze", str(fx / "job")]),
        ("job h200", ["analyze", str(fx / "job_h200")]),
        ("job --job", ["analyze", str(fx / "process_two_ranks.sqlite"), "--job"]),
        ("job gate", ["analyze", str(fx / "job"), str(fx / "synthetic_trace.sqlite"), "--fail-if-spread", "5"]),
        ("job inputs", ["analyze", str(fx / "job"), str(fx / "job" / "rank_0.sqlite"), "--list-reports"]),
        ("diff bench", ["diff", str(fx / "diff_bench_base.json"), str(fx / "diff_bench_slower.json")]),
        # Energy on both sides, a real change under the line (its same_within).
        ("diff bench energy", ["diff", str(fx / "diff_bench_energy_base.json"), str(fx / "diff_bench_energy_less.json")]),
        ("diff roofline", ["diff", str(fx / "nsys" / "gpt2_bf16.sqlite"), str(fx / "nsys" / "gpt2_bf16.sqlite"),
                           "--peak", str(fx / "peak_example.json"), "--fail-if-slower", "5"]),
        ("diff graph", ["diff", str(fx / "graph" / "laptime_gpt2_b1_eager.sqlite"),
                        str(fx / "graph" / "laptime_gpt2_b1_graph_node.sqlite")]),
        ("diff pids", ["diff", str(fx / "process_two_ranks.sqlite"), str(fx / "process_two_ranks.sqlite"),
                       "--pid-before", "4100", "--pid-after", "4200"]),
    ]
    for after in ("attn_slower", "gelu_fused", "graph", "noise", "slow_start"):
        cases.append(("diff base " + after, ["diff", str(fx / "diff_base.sqlite"), str(fx / ("diff_%s.sqlite" % after)),
                                             "--by", "block"]))
    cases.append(("diff fine", ["diff", str(fx / "diff_fine.sqlite"), str(fx / "diff_fine_fused.sqlite")]))
    for report in sorted((fx / "ncu").glob("*.csv")):
        cases.append(("kernels " + report.name, ["kernels", str(report)]))
        cases.append(("kernels --peak " + report.name, ["kernels", str(report), "--peak", str(fx / "ncu" / "peak_h200.json")]))
    ncu = fx / "ncu"
    cases += [
        ("kernels two", ["kernels", str(ncu / "laptime_gpt2_attn_cudnn.csv"), str(ncu / "laptime_gpt2_attn_flash.csv")]),
        ("kernels two --peak", ["kernels", str(ncu / "laptime_resnet50_stem_cudnn.csv"),
                                str(ncu / "laptime_resnet50_stem_fused.csv"), "--peak", str(ncu / "peak_h200.json")]),
        ("kernels domains", ["kernels", str(ncu / "domains_base.csv"), str(ncu / "domains.csv"), "--by", "block"]),
    ]
    return cases


def run_case(binary, folder, case):
    name, args = case
    out = Path(folder) / (str(abs(hash(name))) + ".json")
    env = dict(os.environ, LAPTIME_CACHE_DIR=str(Path(folder) / "cache"), PATH=str(FIXTURES.parent / "support") + ":" + os.environ.get("PATH", ""))
    proc = subprocess.run([binary, *args, "--json", str(out)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, cwd=folder)
    if not out.exists():
        return name, None, "exit %d: %s" % (proc.returncode, proc.stderr.decode(errors="replace").strip()[-300:])
    with open(out, encoding="utf-8") as f:
        return name, json.load(f), None


@pytest.fixture(scope="session")
def written():
    """{case: (document or None, why none)}: every fixture case run once, a few at a time."""
    binary = os.environ.get("LAPTIME_BINARY")
    if not binary:
        pytest.fail("set LAPTIME_BINARY to the laptime executable (CTest does)")
    binary = os.path.abspath(binary)
    with tempfile.TemporaryDirectory(prefix="laptime-schema-") as folder:
        (Path(folder) / "cache").mkdir()
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda c: run_case(binary, folder, c), fixture_cases()))
    return {name: (doc, why) for name, doc, why in results}


def committed_documents():
    """(path, document) of every committed JSON file laptime's GPU commands wrote."""
    docs = []
    for top in (ROOT / "results", FIXTURES):
        for path in sorted(top.rglob("*.json")) + sorted(top.rglob("*.json.gz")):
            opener = gzip.open if path.suffix == ".gz" else open
            try:
                with opener(path, "rt", encoding="utf-8") as f:
                    doc = json.load(f)
            except (OSError, ValueError):
                continue  # a log or a capture, not a report
            if isinstance(doc, dict) and doc.get("schema") in COMMITTED_KINDS:
                docs.append((path.relative_to(ROOT).as_posix(), doc))
    return docs


COMMITTED = committed_documents()


# --- The tests --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCHEMA_DOCS))
def test_each_schema_is_a_valid_draft_2020_12_schema(name):
    s = SCHEMA_DOCS[name]
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(s)
    kind = s["title"]
    assert schema_file(kind).name == name, "the file is named after the kind it holds"
    assert s["$id"] == "urn:laptime:schema:" + kind[len("laptime."):], "the $id is the kind's"


def _objects(node, path="#"):
    if isinstance(node, dict):
        types = node.get("type")
        if types == "object" or (isinstance(types, list) and "object" in types):
            yield path, node
        for key, value in node.items():
            yield from _objects(value, path + "/" + key)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _objects(value, "%s/%d" % (path, i))


@pytest.mark.parametrize("name", sorted(SCHEMA_DOCS))
def test_every_object_says_which_members_it_allows(name):
    """Strict: each object either names its members (additionalProperties false) or is a map whose
    values have a schema (names from the trace: a table, a category); never open by default."""
    for path, node in _objects(SCHEMA_DOCS[name]):
        assert "additionalProperties" in node, "%s: an object with no additionalProperties" % path
        if node["additionalProperties"] is not False:
            assert isinstance(node["additionalProperties"], dict) and "properties" not in node, path


# The fixtures laptime refuses, each with one sentence and no report: made to be refused.
REFUSED = {"analyze foreign.sqlite", "analyze hostile_bad_nvtx.sqlite", "analyze hostile_overflow.sqlite",
           "analyze nsys/gpt2_nvtx_none.sqlite", "analyze pattern_none.sqlite", "analyze pattern_tie.sqlite",
           "analyze process_many.sqlite", "analyze synthetic_no_nvtx.sqlite", "kernels domains_imported.csv",
           "kernels --peak domains_imported.csv"}


def test_the_fixture_runs_wrote_every_trace_kind(written):
    kinds = {doc["schema"] for doc, _ in written.values() if doc}
    assert kinds == {"laptime.analyze/1", "laptime.diff/1", "laptime.job/1", "laptime.job.inputs/1",
                     "laptime.kernels/1", "laptime.kernels.diff/1"}
    failed = {name: why for name, (doc, why) in written.items() if doc is None}
    assert set(failed) == REFUSED, failed


def test_every_fixtures_report_validates(written):
    bad = {}
    for name, (doc, _) in sorted(written.items()):
        if doc is not None:
            problems = errors(doc)
            if problems:
                bad[name] = problems
    assert not bad, json.dumps(bad, indent=1)[:4000]


@pytest.mark.parametrize("path,doc", COMMITTED, ids=[p for p, _ in COMMITTED])
def test_every_committed_gpu_report_validates(path, doc):
    assert not errors(doc), errors(doc)


def test_a_bench_report_with_kernel_files_validates():
    """--kernel NAME=FILE.cu's config member, in the shape tests/test_bench_report.cpp
    (KernelFilesAreNamed) holds the writer to; a file without its hash fails."""
    bench = min((doc for _, doc in COMMITTED if doc["schema"] == "laptime.bench/1" and doc.get("framework") == "laptime"),
                key=lambda d: len(json.dumps(d)))
    doc = copy.deepcopy(bench)
    doc["config"]["kernel_files"] = [{"kernel": "layernorm", "path": "my \"ln\".cu", "sha256": "%064x" % random.getrandbits(256)}]
    assert not errors(doc), errors(doc)
    del doc["config"]["kernel_files"][0]["sha256"]
    assert errors(doc)


def test_committed_reports_cover_the_gpu_kinds():
    assert {doc["schema"] for _, doc in COMMITTED} == COMMITTED_KINDS


def test_every_schema_is_used():
    kinds = {doc["schema"] for _, doc in COMMITTED} | {"laptime.analyze/1", "laptime.diff/1", "laptime.job/1",
                                                        "laptime.job.inputs/1", "laptime.kernels/1",
                                                        "laptime.kernels.diff/1"}
    assert {schema_file(k).name for k in kinds} == set(SCHEMA_DOCS)


# --- Strictness: a drifted document fails ------------------------------------------------------

def _members(doc, path=()):
    """Every (path, object) of doc."""
    if isinstance(doc, dict):
        yield path, doc
        for k, v in doc.items():
            yield from _members(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _members(v, path + (i,))


def _one_of_each_kind(written):
    """The smallest document of each kind (each drift below validates it again)."""
    seen = {}
    docs = [doc for doc, _ in written.values() if doc is not None] + [doc for _, doc in COMMITTED]
    for doc in sorted(docs, key=lambda d: len(json.dumps(d))):
        seen.setdefault(doc["schema"], doc)
    return seen


def test_an_unknown_member_anywhere_fails(written):
    rng = random.Random()
    for kind, doc in _one_of_each_kind(written).items():
        objects = [(p, o) for p, o in _members(doc)]
        for path, _ in rng.sample(objects, min(len(objects), 25)):
            drifted = copy.deepcopy(doc)
            target = drifted
            for k in path:
                target = target[k]
            name = "added_%08x" % rng.getrandbits(32)
            target[name] = 1
            if not errors(drifted):
                # A map keyed by names from the trace (a table, a category) takes any name; its
                # values still need their schema.
                target[name] = {"not": "a value of this map"}
                assert errors(drifted), "%s: %s took an unknown member" % (kind, "/".join(map(str, path)))


def _variant(kind, doc):
    """The schema node `doc` is an instance of: the schema itself, or the one of its oneOf that fits."""
    top = SCHEMA_DOCS[schema_file(kind).name]
    for option in top.get("oneOf", []):
        name = option["$ref"].split("/")[-1]
        in_place = jsonschema.Draft202012Validator({"$ref": top["$id"] + "#/$defs/" + name}, registry=REGISTRY)
        if in_place.is_valid(doc):
            return top["$defs"][name]
    return top


def test_a_missing_or_retyped_top_level_member_fails(written):
    for kind, doc in _one_of_each_kind(written).items():
        node = _variant(kind, doc)
        assert "schema" in node["required"]
        for key in node["required"]:
            if key != "schema":
                assert errors({k: v for k, v in doc.items() if k != key}), "%s: %s may be left out" % (kind, key)
        for key, value in doc.items():
            if key != "schema":
                drifted = dict(doc, **{key: [] if not isinstance(value, list) else "not a list"})
                assert errors(drifted), "%s: %s took a value of another type" % (kind, key)


# --- Report.to_pandas(): flat tables of the same reports ---------------------------------------

def _tables_module():
    import importlib
    import sys
    sys.path.insert(0, str(ROOT / "python"))
    try:
        return importlib.import_module("laptime._tables")
    finally:
        sys.path.pop(0)


def test_every_table_of_every_report_is_flat(written):
    """One plain value a cell (no list, no object), every column named, on every fixture's report:
    what to_pandas() hands to pandas.DataFrame."""
    tables = _tables_module()
    seen = set()
    for name, (doc, _) in sorted(written.items()):
        if doc is None:
            continue
        for table in tables.table_names(doc):
            seen.add((doc["schema"], table))
            for row in tables.rows(doc, table):
                for column, value in row.items():
                    assert isinstance(column, str) and column, (name, table, column)
                    assert value is None or isinstance(value, (str, int, float, bool)), (name, table, column, value)
    assert {kind for kind, _ in seen} == {"laptime.analyze/1", "laptime.diff/1", "laptime.job/1",
                                           "laptime.kernels/1", "laptime.kernels.diff/1"}


def test_a_tables_rows_are_the_reports_rows(written):
    tables = _tables_module()
    doc = written["analyze nsys/gpt2_bf16.sqlite"][0]
    iterations = tables.rows(doc, "iterations")
    assert [r["busy_ns"] for r in iterations] == [it["busy_ns"] for it in doc["iterations"]]
    assert [r.get("span_fill_pct") for r in iterations] == [it.get("span_fill_pct") for it in doc["iterations"]]
    layers = tables.rows(doc, "layers")
    for row, source in zip(layers, doc["kernel_mix"]["range_patterns"]):
        for category, ns in source["by_category_ns"].items():
            assert row[category + "_ns"] == ns
    diff = written["diff base attn_slower"][0]
    first = tables.rows(diff, "layers")[0]
    assert (first["ci_ns_low"], first["ci_ns_high"]) == tuple(diff["rows"][0]["ci_ns"])
    assert first["kernels_before"] == diff["rows"][0]["kernels"]["before"]
    # SAME with an interval clear of zero: the bound it stays within, one column per unit.
    for row, source in zip(tables.rows(diff, "layers"), diff["rows"]):
        assert row.get("interval_excludes_zero") == source.get("interval_excludes_zero")
        assert row.get("same_within_pct") == source.get("same_within", {}).get("pct")
    assert any("same_within_pct" in row for row in tables.rows(diff, "layers"))
    kernels = written["kernels --peak laptime_gpt2.csv"][0]
    rows = tables.rows(kernels, "kernels")
    assert len(rows) == sum(len(layer["kernel_list"]) for layer in kernels["layers"])
    layer = tables.rows(kernels, "layers")[0]
    assert layer["occupancy_achieved_pct"] == kernels["layers"][0]["occupancy"]["achieved_pct"]
    assert layer["ranges"] == ", ".join(kernels["layers"][0]["ranges"])
