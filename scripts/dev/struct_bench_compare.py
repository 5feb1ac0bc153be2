#!/usr/bin/env python3
"""Compares one bench row run by two laptime binaries (scripts/dev/struct-bench-check.sh).

    struct_bench_compare.py ROWDIR [--tuned-conv] [--json-stdout] [--peak]

ROWDIR holds old/ and new/, each with stdout, stderr, rc and the files the run wrote (r.json,
t.sqlite, their .layers.json sidecars). What must be equal is compared after masking what
measures time, and only that:

  text (stdout)  every lap, the statistics line, throughput, TFLOP/s, the enqueue line, the
                 "device in use" figure, the lap time, and the milliseconds a timed GEMM build
                 took ("GEMM algorithms timed at build (5 shapes, <ms> ms)"). With --tuned-conv
                 (ResNet-50 with its convolutions chosen by timing) also each plan line after the
                 convolution's name, the build line and the workspace: the engine a timing
                 picks is itself a measurement. Nothing else: the header, the variant, the
                 files written, the GFLOP count, the weights and activations stay exact.
  JSON           the same fields: iterations[].lap_ms, steady_ms, throughput.items_per_s,
                 tflops, enqueue_ms, memory_bytes.device_in_use, config.variant's build
                 milliseconds; with --tuned-conv config.plans (after each name) and
                 memory_bytes.workspace.
  sidecars       every *.layers.json byte for byte, unmasked.
  trace          t.sqlite: the NVTX range names with their counts and the kernel names with
                 their counts (no times), when the row is not --tuned-conv.
  stderr         seconds and candidate counts masked; a difference is a note, not a failure,
                 unless --json-stdout (then stderr carries the text report and is compared
                 like stdout).
  exit status    equal.

--peak: the row is `laptime peak --cache p.json`: its text and p.json with every number (and
the "measured" date line) masked, so that what is compared is the format, not the ceilings.

Prints one line (OK, or FAIL and what differs) and writes ROWDIR/diff.txt; exits 1 when a check fails.
"""
import collections
import difflib
import json
import re
import sqlite3
import sys
from pathlib import Path

M = "<masked>"


def mask_text(text, tuned):
    out = []
    for line in text.splitlines():
        line = re.sub(r"^(  [ \d]{5} (?:warmup|      ) )\s*[\d.]+$", r"\1" + M, line)
        line = re.sub(r"^(  steady state over \d+ iterations \(ms\):).*$", r"\1 " + M, line)
        line = re.sub(r"^(  throughput  )\d+( \w+/s)$", r"\1" + M + r"\2", line)
        line = re.sub(r"^(  compute     [\d.]+ GFLOP per forward, )[\d.]+( TFLOP/s achieved)$", r"\1" + M + r"\2", line)
        line = re.sub(r"^  host        .*$", "  host        " + M, line)
        line = re.sub(r"(device in use )[\d.]+( MiB)", r"\1" + M + r"\2", line)
        line = re.sub(r"^(lap time: )[\d.]+( ms .*)$", r"\1" + M + r"\2", line)
        line = re.sub(r"(GEMM algorithms timed at build \(\d+ shapes, )\d+( ms\))", r"\1" + M + r"\2", line)
        if line.startswith(("  plans       ", "              ")):
            line = mask_plan(line[:14], line[14:], tuned)
        if tuned:
            line = re.sub(r"(workspace )[\d.]+( MiB)", r"\1" + M + r"\2", line)
        out.append(line)
    return "\n".join(out) + "\n"


def mask_plan(prefix, plan, tuned):
    if plan.startswith("build: "):  # "build: N distinct ... timed, S s": seconds always, the rest when timed
        return prefix + ("build: " + M if tuned else re.sub(r", [\d.]+ s$", ", " + M + " s", plan))
    if not tuned:
        return prefix + plan
    name = re.match(r"[^: ]+", plan)
    return prefix + (name.group(0) if name else "") + " " + M


def mask_stderr(text):
    text = re.sub(r"\d+\.\d+ s\b", M + " s", text)
    return re.sub(r"\d+ candidates timed", M + " candidates timed", text)


def mask_json(j, tuned):
    for it in j.get("iterations", []):
        it["lap_ms"] = M
    for key in ("steady_ms", "tflops", "enqueue_ms"):
        if key in j:
            j[key] = M
    if "throughput" in j:
        j["throughput"]["items_per_s"] = M
    mem = j.get("memory_bytes", {})
    if "device_in_use" in mem:
        mem["device_in_use"] = M
    if tuned and "workspace" in mem:
        mem["workspace"] = M
    cfg = j.get("config", {})
    if "variant" in cfg:
        cfg["variant"] = re.sub(r"(GEMM algorithms timed at build \(\d+ shapes, )\d+( ms\))", r"\1" + M + r"\2",
                                cfg["variant"])
    if "plans" in cfg:
        cfg["plans"] = [mask_plan("", p, tuned) for p in cfg["plans"]]
    return j


def mask_numbers(text):
    text = re.sub(r"^(  measured     ).*$", r"\1" + M, text, flags=re.M)
    return re.sub(r" *\d+(?:\.\d+)?", " " + M, text)  # the spaces too: %8.1f pads by the value


def mask_peak_json(j):
    if isinstance(j, dict):
        return {k: (M if k == "measured" else mask_peak_json(v)) for k, v in j.items()}
    if isinstance(j, list):
        return [mask_peak_json(v) for v in j]
    return M if isinstance(j, (int, float)) and not isinstance(j, bool) else j


def trace_counts(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ranges = collections.Counter(
        row[0] for row in db.execute(
            'SELECT COALESCE(e.text, s.value) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON e.textId = s.id '
            'WHERE e."end" IS NOT NULL'))
    kernels = collections.Counter(
        row[0] for row in db.execute(
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON k.shortName = s.id"))
    return ranges, kernels


def unified(a, b, what):
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), f"old/{what}", f"new/{what}", n=1))


def main():
    row = Path(sys.argv[1])
    tuned = "--tuned-conv" in sys.argv
    json_stdout = "--json-stdout" in sys.argv
    peak = "--peak" in sys.argv
    old, new = row / "old", row / "new"
    failed, notes, diffs = [], [], []

    def read(side, name):
        p = side / name
        return p.read_text(errors="replace") if p.exists() else None

    rc_old, rc_new = read(old, "rc"), read(new, "rc")
    if rc_old != rc_new:
        failed.append(f"exit {str(rc_old).strip()} vs {str(rc_new).strip()}")
    elif (rc_new or "").strip() != "0":
        failed.append(f"both exit {str(rc_new).strip()}")

    text_name = "stderr" if json_stdout else "stdout"  # with --json -, the text report is on stderr
    mask = mask_numbers if peak else lambda t: mask_text(t, tuned)
    a, b = mask(read(old, text_name) or ""), mask(read(new, text_name) or "")
    if a != b:
        failed.append("text")
        diffs.append(unified(a, b, text_name))
    if not json_stdout:
        a, b = mask_stderr(read(old, "stderr") or ""), mask_stderr(read(new, "stderr") or "")
        if a != b:
            notes.append("stderr")
            diffs.append(unified(a, b, "stderr"))

    json_name = "stdout" if json_stdout else "p.json" if peak else "r.json"
    ja, jb = read(old, json_name), read(new, json_name)
    mask_j = mask_peak_json if peak else lambda j: mask_json(j, tuned)
    try:
        a = json.dumps(mask_j(json.loads(ja)), indent=1, sort_keys=True)
        b = json.dumps(mask_j(json.loads(jb)), indent=1, sort_keys=True)
        if a != b:
            failed.append("json")
            diffs.append(unified(a, b, json_name))
    except (TypeError, ValueError):  # absent (None) or not JSON: the run did not get that far
        failed.append(f"no JSON report in {json_name}")

    sidecars = sorted(p.name for p in old.glob("*.layers.json"))
    if sidecars != sorted(p.name for p in new.glob("*.layers.json")):
        failed.append("sidecar names")
    for name in sidecars:
        if (new / name).exists() and (old / name).read_bytes() != (new / name).read_bytes():
            failed.append(name)
            diffs.append(unified((old / name).read_text(), (new / name).read_text(), name))

    if (old / "t.sqlite").exists() or (new / "t.sqlite").exists():
        if not ((old / "t.sqlite").exists() and (new / "t.sqlite").exists()):
            failed.append("trace missing")
        elif not tuned:
            (ra, ka), (rb, kb) = trace_counts(old / "t.sqlite"), trace_counts(new / "t.sqlite")
            if ra != rb:
                failed.append("trace ranges")
                diffs.append(unified(json.dumps(ra, indent=1, sort_keys=True), json.dumps(rb, indent=1, sort_keys=True),
                                     "NVTX ranges"))
            if ka != kb:
                failed.append("trace kernels")
                diffs.append(unified(json.dumps(ka, indent=1, sort_keys=True), json.dumps(kb, indent=1, sort_keys=True),
                                     "kernels"))

    (row / "diff.txt").write_text("".join(diffs))
    checked = f"text, json, {len(sidecars)} sidecar(s)" + (", trace" if (old / "t.sqlite").exists() and not tuned else "")
    status = "OK" if not failed else "FAIL: " + ", ".join(failed)
    print(f"{row.name}: {status} ({checked})" + (f"; note: {', '.join(notes)} differ, see diff.txt" if notes else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
