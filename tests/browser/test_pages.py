#!/usr/bin/env python3
"""Every kind of report page opened from file:// in headless Chromium (tests/browser/cdp.py: the
DevTools protocol over a pipe, no WebDriver), as a reader opens it:

  - analyze (one report, several processes, the job view), diff, kernels (one report and two), and
    lab (drawn from a committed laptime.lab/1 report: the lab runs on a GPU);
  - each page: no console error, no exception, no dialog; its figures read back from the DOM equal
    its JSON's (the --json document of the same command) at the precision shown;
  - analyze: a click on a layer row highlights exactly that layer's spans on the timeline, a second
    click clears them; each first-screen number links to a row that exists;
  - a trace whose kernels, layer range and thread are named with markup and script (and a report
    file named so): no dialog, no element added, every name shown as its characters;
  - the page of every committed trace analyze reports on opens and draws without an error.

  test_pages.py --laptime BIN --write-page BIN --work DIR [--screenshots DIR] [--time TRACE...]

Prints the size of each page and the time Chromium took to open it (navigation to the load event,
and the page's own drawing time). --screenshots writes the pictures docs/img/ holds; --time adds
pages of the given traces to the timings only (a 10^6-kernel one: tests/fixtures/grow_trace.py
tests/fixtures/lesson/gpt2_max.sqlite big.sqlite --kernels 1000000; docs/PERF.md has the numbers).
Exits 77 (CTest: skipped) with the reason when no Chromium is installed.
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "html"))
from cdp import Browser, BrowserError  # noqa: E402
import make_hostile_names  # noqa: E402

SKIP = 77
# Relative to the checkout (the commands run there), so a page's title reads as a user's would.
F = os.path.join("tests", "fixtures")
LAB = os.path.join("results", "2026-12-01-lab", "lab", "attention_bf16.json")
# A learner's files beside the ladder (--try), with hot timings and clocks; and three wrong ones.
LAB_TRY = os.path.join("results", "2026-12-06-device", "lab", "layernorm_v1_v2.json")
LAB_WRONG = os.path.join("results", "2026-12-06-device", "lab", "layernorm_wrong.json")


class Failure(AssertionError):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def close(text, value, digits, what):
    """A figure as the page shows it (`text`, a number at `digits` decimals, maybe with a unit)
    against the JSON's value."""
    token = text.strip().replace("%", "").replace("ms", "").replace("us", "").replace("+", "").split()[0]
    shown = float(token)
    check(abs(shown - value) <= 0.5 * 10 ** -digits + 1e-9 * max(1.0, abs(value)),
          "%s: the page shows %r, the JSON has %r" % (what, text, value))


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    if r.returncode not in (0, 3):
        raise Failure("%s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stdout[-2000:]))
    return r.stdout


def table_rows(page, table_id):
    return page.evaluate(
        "Array.from(document.querySelectorAll('#%s tbody tr')).map(tr => Array.from(tr.children).map(td => td.textContent))"
        % table_id)


# --- the checks of each kind ---------------------------------------------------------------------------


def check_analyze(page, r, prefix=""):
    P = prefix
    steady = max(r["steady_iterations"], 1)
    v = page.evaluate("document.querySelector('#%sanswer-lap .v').textContent" % P)
    close(v, r["time_ms"]["lap"], 3, "the lap")
    # One busy on the first screen: the verdict's, over the lap (the answer and the verdict's text
    # say the same figure; an iteration's share of its own span is its fill, in the table).
    close(page.evaluate("document.querySelector('#%sanswer-busy .v').textContent" % P),
          r["verdict"]["busy_pct"], 1, "GPU busy")
    first = page.evaluate("document.querySelector('#%sverdict').textContent" % P)
    shown = set(re.findall(r"busy (\d+(?:\.\d+)?)%", first) + re.findall(r"GPU busy(\d+(?:\.\d+)?)%", first))
    check(len(shown) <= 1, "two busy figures on the first screen: %r" % sorted(shown))
    for b in shown:
        close(b, r["verdict"]["busy_pct"], 1, "busy in the verdict's text")
    bound = page.evaluate("document.querySelector('#%sverdict .bound').textContent" % P)
    check(bound == r["verdict"]["bound"], "the verdict's heading %r, the JSON's %r" % (bound, r["verdict"]["bound"]))
    text = page.evaluate("document.querySelector('#%sverdict p').textContent" % P)
    check(text == r["verdict"]["text"], "the verdict's text differs from the JSON's")
    # Every first-screen number links to a row (or section) that exists.
    targets = page.evaluate("Array.from(document.querySelectorAll('#%sverdict a[data-evidence]')).map(a => a.getAttribute('data-evidence'))" % P)
    check(len(targets) == 4, "four answers, each a link: %r" % targets)
    for t in targets:
        page.evaluate("document.querySelector('a[data-evidence=\"%s\"]').click()" % t)
        check(page.evaluate("!!document.getElementById('%s')" % t), "the link to %s leads nowhere" % t)
    mix = r["kernel_mix"]
    rows = table_rows(page, P + "kernels")
    check(len(rows) == min(len(mix["kernels"]), 300), "%d kernel rows for %d kernels" % (len(rows), len(mix["kernels"])))
    for row, k in zip(rows, mix["kernels"]):
        check(row[0] == k["name"], "kernel row %r, the JSON's %r" % (row[0], k["name"]))
        close(row[2], k["time_ns"] / steady / 1e6, 3, "ms/iter of " + k["name"])
    rows = table_rows(page, P + "iterations")
    check(len(rows) == min(len(r["iterations"]), 200), "iteration rows")
    for row, it in zip(rows, r["iterations"]):
        check(int(row[0]) == it["index"], "iteration %s, the JSON's %s" % (row[0], it["index"]))
        close(row[2], it["host_ns"] / 1e6, 3, "host ms of iteration %d" % it["index"])
        if "gpu_ns" in it:
            close(row[3], it["gpu_ns"] / 1e6, 3, "GPU ms of iteration %d" % it["index"])
            close(row[4], it["span_fill_pct"], 1, "fill of iteration %d" % it["index"])
    tl = r["timeline"]
    if not tl:
        return
    check_blocking_calls(page, tl, P, not r["synchronization"]["calls"])
    n = page.evaluate("document.querySelectorAll('#%ssec-timeline svg.timeline .ev').length" % P)
    check(n == len(tl["events"]), "%d events drawn, %d in the JSON" % (n, len(tl["events"])))
    g = page.evaluate("document.querySelectorAll('#%ssec-timeline .gapbox').length" % P)
    check(g == len(tl["gaps"]), "%d gaps drawn, %d in the JSON" % (g, len(tl["gaps"])))
    # A layer row highlights its spans: the events whose layer pattern is the row's.
    layers = mix["range_patterns"]
    if layers:
        row = max(range(len(layers)), key=lambda i: (layers[i]["time_ns"], -i))
        want = sum(1 for e in tl["events"] if e["layer_pattern"] is not None and tl["names"][e["layer_pattern"]] == layers[row]["range"])
        page.evaluate("document.getElementById('%slayers-r%d').click()" % (P, row))
        got = page.evaluate("document.querySelectorAll('#%ssec-timeline svg.timeline .ev.hl').length" % P)
        check(got == want, "layer %r: %d spans highlighted, %d in the JSON" % (layers[row]["range"], got, want))
        check(want > 0 or not any(e["kind"] == "kernel" for e in tl["events"]), "the heaviest layer has spans")
        page.evaluate("document.getElementById('%slayers-r%d').click()" % (P, row))
        check(page.evaluate("document.querySelectorAll('#%ssec-timeline .hl').length" % P) == 0, "a second click clears them")
    # Hovering a span shows its name, as text (a blocking call outside the steady iterations with
    # where it sat).
    first = page.evaluate("(() => { const e = document.querySelector('#%ssec-timeline svg.timeline .ev');"
                          " e.dispatchEvent(new PointerEvent('pointermove', {bubbles: true, clientX: 300, clientY: 300}));"
                          " return [+e.getAttribute('data-ev'), document.querySelector('.tip b').textContent]; })()" % P)
    e = tl["events"][first[0]]
    q = tl["syncs"][e["sync"]] if e.get("blocking") and e.get("sync") is not None else None
    want = tl["names"][e["name"]] + (" (%s)" % q["where"] if q and not q["steady"] else "")
    check(first[1] == want, "the tooltip names %r, the JSON %r" % (first[1], want))
    # The roofline: a point per layer with FLOPs and time, one layer isolated from the menu.
    rf = r.get("roofline")
    if rf and rf.get("ceilings"):
        drawn = [x for x in rf["folded"] if x["flops"] > 0 and x["time_ns"] > 0]
        n = page.evaluate("document.querySelectorAll('#%ssec-roofline circle.roofpt').length" % P)
        check(n == len(drawn), "%d roofline points for %d layers with FLOPs" % (n, len(drawn)))
        page.evaluate("(() => { const s = document.querySelector('#%ssec-roofline select'); s.value = s.options[1].value;"
                      " s.dispatchEvent(new Event('change')); })()" % P)
        on = page.evaluate("Array.from(document.querySelectorAll('#%ssec-roofline circle.roofpt:not(.off)')).map(c => c.getAttribute('data-name'))" % P)
        check(on == [drawn[0]["name"]], "one layer isolated: %r" % on)
        rows = table_rows(page, P + "roofline")
        for row, x in zip(rows, sorted(rf["folded"], key=lambda x: -x["time_ns"])):
            check(row[0] == x["name"], "roofline row %r, the JSON's %r" % (row[0], x["name"]))
            if x.get("pct_of_bound") is not None:
                close(row[9], x["pct_of_bound"], 1, "% of the roof of " + x["name"])
    # Sorting: a click on a header orders the rows by it, a second the other way.
    for order in ("<= 0", ">= 0"):
        page.evaluate("document.querySelector('#%skernels th[data-key=\"name\"]').click()" % P)
        check(page.evaluate("(() => { const n = Array.from(document.querySelectorAll('#%skernels tbody tr td:first-child')).map(x => x.textContent);"
                            " return n.every((x, i) => i === 0 || n[i - 1].localeCompare(x) %s); })()" % (P, order)),
              "the kernels sorted by name (%s)" % order)


# Every CUDA API call the timeline draws, as the reader sees it: in the blocking colour or not
# (its computed fill against the page's --block), hollow (class outside), and its label.
DRAWN_CALLS = """(() => {
  const probe = document.createElement('span');
  probe.style.color = 'var(--block)';
  document.body.appendChild(probe);
  const block = getComputedStyle(probe).color;
  probe.remove();
  const svg = document.querySelector('#%ssec-timeline svg.timeline');
  const calls = Array.from(svg.querySelectorAll('rect.ev.call')).map(r => {
    const label = svg.querySelector('text[data-label-of="' + r.getAttribute('data-ev') + '"]');
    return {ev: +r.getAttribute('data-ev'), red: getComputedStyle(r).fill === block,
            outside: r.classList.contains('outside'), label: label ? label.textContent : null};
  });
  const marks = Array.from(svg.querySelectorAll('path.sync')).map(m => ({sync: +m.getAttribute('data-sync'),
    red: getComputedStyle(m).fill === block}));
  return {calls, marks};
})()"""


def check_blocking_calls(page, tl, P, none_in_loop):
    """The timeline never contradicts the report: only a synchronization of the steady iterations
    is drawn in the blocking colour; a blocking call outside them is hollow and its label says where
    it sat ("cudaStreamSynchronize (after the loop)"). `none_in_loop`: the report says no call
    synchronizes inside the steady iterations, so nothing on the timeline is red."""
    drawn = page.evaluate(DRAWN_CALLS % P)
    for d in drawn["calls"]:
        e = tl["events"][d["ev"]]
        name = tl["names"][e["name"]]
        q = tl["syncs"][e["sync"]] if e.get("blocking") and e.get("sync") is not None else None
        steady = bool(q and q["steady"])
        check(d["red"] == steady, "%s at %d: drawn %s, but it is %s" % (
            name, e["start_ns"], "in the blocking colour" if d["red"] else "plain",
            "a steady iteration's synchronization" if steady else "not the loop's"))
        if e.get("blocking") and not steady:
            check(d["outside"], "%s outside the steady iterations is not drawn hollow" % name)
            want = "%s (%s)" % (name, q["where"] if q else "outside the steady iterations")
            check(d["label"] is None or d["label"] == want or (d["label"].endswith("~") and want.startswith(d["label"][:-1])),
                  "the label %r, not %r" % (d["label"], want))
    for m in drawn["marks"]:
        check(m["red"] == tl["syncs"][m["sync"]]["steady"], "a sync mark in the wrong colour: %r" % tl["syncs"][m["sync"]])
    if none_in_loop:
        red = [tl["names"][tl["events"][d["ev"]]["name"]] for d in drawn["calls"] if d["red"]] + [m for m in drawn["marks"] if m["red"]]
        check(not red, "the report says no synchronization inside the loop, the timeline draws %r in the blocking colour" % red)


def check_omitted(page, r):
    """What a bounded list left out, said under its table as the JSON counts it."""
    sync = r["synchronization"]
    notes = page.evaluate("Array.from(document.querySelectorAll('#sec-syncs .omitted')).map(p => p.textContent)")
    want = [sync[k] for k in ("calls_omitted", "outside_steady_omitted") if k in sync]
    check(want and len(notes) == len(want), "%d notes of calls left out, the JSON has %d" % (len(notes), len(want)))
    for note, o in zip(notes, want):
        m = re.match(r"^(\d+) more calls?, (\d+\.\d+) (ms|s|us) of host wait", note)
        check(m and int(m.group(1)) == o["count"], "the note %r, the JSON %r" % (note, o))
        close(m.group(2), o["host_wait_ns"] / {"s": 1e9, "ms": 1e6, "us": 1e3}[m.group(3)], 3 if m.group(3) != "us" else 1, "the wait left out")


def check_processes(page, r):
    check(len(r["processes"]) > 1, "several processes")
    for i, p in enumerate(r["processes"]):
        page.evaluate("(() => { const s = document.querySelector('main select'); s.value = '%d'; s.dispatchEvent(new Event('change')); })()" % i)
        check_analyze(page, p, "p%d-" % i)


def label_words(x):
    """A diff row's label as the text report writes it: SAME within ±3% where the interval is clear of zero."""
    w = x.get("same_within")
    if not w:
        return x["label"]
    return "%s within ±%s" % (x["label"], "%g%%" % w["pct"] if "pct" in w else "%g us" % w["us"])


def check_diff(page, d, prefix=""):
    whole = d["rows"][0]
    heading = page.evaluate("document.querySelector('#%sverdict h2 .bound').textContent" % prefix)
    check(heading == label_words(whole), "the lap's label %r, the JSON's %r" % (heading, label_words(whole)))
    vals = page.evaluate("Array.from(document.querySelectorAll('#%sverdict .answer .v')).map(x => x.textContent)" % prefix)
    close(vals[0], whole["before_ns"] / 1e6, 3, "the lap before")
    close(vals[1], whole["after_ns"] / 1e6, 3, "the lap after")
    close(vals[2], whole["change_pct"], 2, "the change")
    rows = table_rows(page, prefix + "diffrows")
    check(len(rows) == len(d["rows"]), "%d diff rows for %d" % (len(rows), len(d["rows"])))
    for row, x in zip(rows, d["rows"]):
        check(row[0] == ("whole iteration" if x["whole_iteration"] else x["name"]), "row %r" % row[0])
        check(row[1] == label_words(x), "%s: %r, the JSON's %r" % (x["name"], row[1], label_words(x)))
        close(row[5], x["change_pct"], 2, "change of " + x["name"])
    cis = page.evaluate("document.querySelectorAll('#%sdiffchart line.ci').length" % prefix)
    check(cis == sum(1 for x in d["rows"] if "ci_pct" in x), "an interval drawn for every row that has one")


def check_energy(page, d, text):
    """diff of two bench reports with energy: the energy's label on the page as the text's line says it."""
    e = d["energy"]
    m = re.search(r"^  energy      per forward .*\): (.*)$", text, re.M)
    check(m and m.group(1) == label_words(e), "the text's energy line %r, the JSON's label %r" % (m and m.group(1), label_words(e)))
    shown = page.evaluate("document.querySelector('#answer-energy .v span').textContent")
    check(shown == m.group(1), "the energy's label on the page %r, the text's %r" % (shown, m.group(1)))
    close(page.evaluate("document.querySelector('#answer-energy .v').textContent"), e["change_pct"], 1, "the energy's change")


def write_bench_reports(folder):
    """Two laptime.bench/1 reports with energy (fresh random blocks), the second's energy per
    forward 0.5-2% off the first's with quiet blocks: a real change under the SAME line."""
    rng = random.Random(os.urandom(8))
    j = rng.uniform(0.5, 12)
    change = rng.uniform(0.005, 0.02) * rng.choice((-1, 1))
    paths = []
    for name, per in (("bench_before.json", j), ("bench_after.json", j * (1 + change))):
        blocks, t = [], 0.0
        for _ in range(20):
            laps = rng.uniform(10, 30)
            blocks.append({"start_ms": t, "end_ms": t + 100, "joules": laps * per * (1 + rng.uniform(-5e-4, 5e-4)), "laps": laps})
            t += 100
        report = {"schema": "laptime.bench/1", "framework": "laptime", "device": {"name": "Test GPU"},
                  "config": {"model": "gpt2", "precision": "bf16", "shape": "B=8 T=1024 (8192 tokens)", "mode": "eager"},
                  "iterations": [{"index": i, "warmup": i < 5, "lap_ms": 3.8 * (1 + 1e-3 * (i % 3))} for i in range(25)],
                  "energy": {"available": True, "joules_per_forward": sum(b["joules"] for b in blocks) / sum(b["laps"] for b in blocks),
                             "blocks": blocks}}
        paths.append(os.path.join(folder, name))
        with open(paths[-1], "w") as f:
            json.dump(report, f)
    return paths


def check_job(page, j):
    rows = table_rows(page, "reports")
    check(len(rows) == len(j["reports"]), "a row per report")
    by_file = {(x["file"], x.get("pid")): x for x in j["reports"]}
    for row in rows:
        pid = None if row[1] == "-" else int(row[1])
        x = by_file[(row[0], pid)]
        close(row[2], x["lap_ms"], 3, "the lap of " + row[0])
        close(row[3], x["span_fill_pct"], 1, "the fill of " + row[0])
    sp = j["job"]["spread"]
    if sp:
        close(page.evaluate("document.querySelector('#verdict .answer .v').textContent"), sp["slowest_over_median_pct"], 1, "the spread")
    if j["job"]["straggler"]:
        check_diff(page, j["job"]["straggler"]["diff"], "straggler-")


def check_kernels(page, k):
    rows = table_rows(page, "layers")
    check(len(rows) == len(k["layers"]), "a row per layer")
    for row, x in zip(rows, sorted(k["layers"], key=lambda x: -x["time_ns"])):
        check(row[0] == x["name"], "layer %r, the JSON's %r" % (row[0], x["name"]))
        close(row[2], x["time_ns"] / 1e3, 1, "us of " + x["name"])
        close(row[3], 100 * x["share"], 1, "share of " + x["name"])


def check_kernels_diff(page, k):
    rows = table_rows(page, "layers")
    check(len(rows) == len(k["layers"]), "a row per layer")
    for row, x in zip(rows, k["layers"]):
        check(row[0] == x["name"], "layer %r" % row[0])
        if x.get("a"):
            close(row[1], x["a"]["time_ns"] / 1e3, 1, "A us of " + x["name"])


def check_lab(page, l):
    for si, shape in enumerate(l["shapes"]):
        rungs = [(v, t) for v in l["versions"] for t in v["timings"] if t["shape"] == si]
        rows = table_rows(page, "ladder-%d" % si)
        check(len(rows) == len(rungs), "a rung per timed version")
        labels = page.evaluate("Array.from(document.querySelectorAll('#shape-%d svg > text')).map(t => t.firstChild.textContent)" % si)
        # Every bar's label ends before the bars begin (a long file name once ran under them).
        overlap = page.evaluate(
            "(() => { const svg = document.querySelector('#shape-%d svg'); const bar = svg.querySelector('rect.lbar');"
            " const ends = Array.from(svg.querySelectorAll(':scope > text')).filter(t => Math.abs(t.getBBox().x - 4) < 1)"
            ".map(t => t.getBBox().x + t.getBBox().width); return Math.max(...ends) - bar.x.baseVal.value; })()" % si)
        check(overlap <= 0, "a bar's label runs %.1f px under the bars" % overlap)
        for row, (v, t) in zip(rows, rungs):
            check(row[0].rstrip("*") == v["id"], "version %r" % row[0])
            close(row[1], t["median_us"], 2, "median of " + v["id"])
            if "hot" in t:
                close(row[4], t["hot"]["median_us"], 2, "hot median of " + v["id"])
            if "file" in v:
                check(v["file"]["sha256"][:16] in row[-1], "the file's hash in its row: %r" % row[-1])
            # The bar's label is the whole name where it is short enough to fit (a file's name too).
            name = v["id"] + ("*" if v["production"] else "")
            if len(name) <= 32:
                check(name in labels, "the label %r drawn whole (labels %r)" % (name, labels))
        bars = page.evaluate("document.querySelectorAll('#shape-%d rect.lbar').length" % si)
        check(bars == len(rungs), "a bar per rung")
        if l["roofs"]:
            check(page.evaluate("document.querySelectorAll('#shape-%d line.rooftime').length" % si) >= 1, "the DRAM roof drawn")
    # Why each FAILED version failed, as the text report words it: its first failing check's detail.
    checks = table_rows(page, "checks")
    check(len(checks) == len(l["versions"]), "a row per version in the checks")
    for row, v in zip(checks, l["versions"]):
        check(row[1] == v["status"], "%s: status %r" % (v["id"], row[1]))
        # The worst error as the text report prints it (C's %.1e: 1.8e-03, not JavaScript's 1.8e-3).
        errors = [c["rel_error"] for c in v["checks"] if not c["skipped"] and isinstance(c.get("rel_error"), (int, float))]
        worst = "%.1e" % max([0] + errors)
        check(row[3] == worst, "%s: worst error %r, the text's %r" % (v["id"], row[3], worst))
        if v["status"] == "FAILED":
            c = next(c for c in v["checks"] if not c["passed"] and not c["skipped"])
            check(c["detail"] in row[-1] and c["shape"] in row[-1], "%s: why it failed, %r" % (v["id"], row[-1]))


def check_hostile(page, names):
    check(not page.dialogs, "a dialog opened: %r" % page.dialogs)
    counts = page.evaluate("({img: document.querySelectorAll('img').length, script: document.querySelectorAll('script').length,"
                           " svgs: document.querySelectorAll('svg svg').length, b: document.querySelectorAll('b[onmouseover]').length,"
                           " style: document.querySelectorAll('style').length, onload: document.querySelectorAll('[onload],[onerror]').length})")
    check(counts == {"img": 0, "script": 2, "svgs": 0, "b": 0, "style": 1, "onload": 0}, "elements added: %r" % counts)
    check(page.evaluate("getComputedStyle(document.querySelector('main')).display") != "none", "a style from a name applied")
    text = page.evaluate("document.body.textContent")
    for name in names:
        check(name in text, "%r is not shown as text" % name)


# --- the page against the text report -----------------------------------------------------------------
# The first screen's four answers and the settling, read from the page, against what `laptime
# analyze TRACE` prints for the same trace (not against the JSON: the page must not contradict the
# words a reader compares it with).


def text_parts(stdout):
    """Each process's part of the text report: the whole report, or one per `=== process` heading."""
    parts = re.split(r"\n=== process [^\n]* ===\n", stdout)
    return parts[1:] if len(parts) > 1 else parts


def between(text, start, ends):
    i = text.find(start)
    if i < 0:
        return ""
    j = min([k for k in (text.find(e, i + len(start)) for e in ends) if k >= 0] or [len(text)])
    return text[i:j]


def text_answers(part):
    """lap and busy as printed, the top of the kernel mix, the syncs, the settling of one report."""
    a = {}
    m = re.search(r"^  lap\s+(\d+\.\d+) ms", part, re.M)
    a["lap"] = m.group(1) if m else None
    m = re.search(r"^  busy\s+(\d+\.\d+)% of the lap", part, re.M)
    a["busy"] = m.group(1) if m else None
    mix = between(part, "\n3. Kernel mix", ["\n4. "])
    m = re.search(r"^  category\s+ms/iter\s+share\s+ops/iter\n  (\S+)\s+\d+\.\d+\s+(\d+\.\d+)%", mix, re.M)
    a["top"] = (m.group(1), float(m.group(2))) if m else None
    m = re.search(r"CUDA Graphs: \S+ replays? per iteration \([^)]*\), \d+\.\d+ ms per iteration, (\d+\.\d+)% of GPU time",
                  " ".join(mix.split()))
    a["replays"] = float(m.group(1)) if m else None
    syncs = between(part, "\n4. Synchronization", ["\nVerdict"])
    if not syncs or re.search(r"^  none: ", syncs, re.M):
        a["syncs"] = None
    else:
        lines = syncs.split("\n")
        head = next(i for i, l in enumerate(lines) if "host wait (us)" in l)
        count = 0
        for line in lines[head + 1:]:
            if not line.startswith("    "):
                break
            more = re.match(r"^    \.\.\. (\d+) more rows", line)
            count += int(more.group(1)) if more else 1
        wait = re.search(r"^  host wait\s+(\d+\.\d+) ms per iteration", syncs, re.M).group(1)
        a["syncs"] = (count, wait)
    settling = " ".join(between(part, "\nSettling\n", ["\n\n", "\nRoofline"]).split())
    a["settling"] = None
    if settling:
        t = {"warmup": int(re.search(r"warm-up dropped (\d+)", settling).group(1))}
        m = re.search(r"initial transient of the per-iteration GPU time is the first (\d+) of (\d+) iterations", settling)
        t["transient"] = (int(m.group(1)), int(m.group(2))) if m else None
        t["settles"] = "never holds still" not in settling
        t["shifts"] = re.findall(r"the level shifts at iteration (\d+), (\d+\.\d+) -> (\d+\.\d+) ms", settling)
        a["settling"] = t
    return a


PAGE_ANSWERS = """(() => {
  const text = (sel) => { const e = document.querySelector(sel); return e ? e.textContent : null; };
  const P = %r;
  return {lap: text('#' + P + 'answer-lap .v'), busy: text('#' + P + 'answer-busy .v'), mix: text('#' + P + 'answer-mix .v'),
          sync: text('#' + P + 'answer-sync .v'), settling: text('#' + P + 'settling'),
          marks: Array.from(document.querySelectorAll('#' + P + 'sec-timeline path.settle')).map(m => [m.getAttribute('data-mark'), +m.getAttribute('data-iteration')]),
          iterations: Array.from(document.querySelectorAll('#' + P + 'iterations tbody tr')).map(tr => [+tr.children[0].textContent, tr.children[1].textContent])};
})()"""


def check_against_text(page, part, P=""):
    """One report's first screen and settling on the page against its text."""
    a = text_answers(part)
    p = page.evaluate(PAGE_ANSWERS % P)
    check(a["lap"] is not None and p["lap"] == a["lap"] + " ms", "the lap: the page %r, the text %r" % (p["lap"], a["lap"]))
    if a["busy"] is None:
        check("no GPU work was launched inside the steady iterations" in part and p["busy"] == "no GPU work",
              "GPU busy: the page %r, the text has no GPU work" % p["busy"])
    else:
        check(p["busy"] == a["busy"] + "%", "GPU busy: the page %r, the text %r" % (p["busy"], a["busy"]))
    top, replays = a["top"], a["replays"]
    if replays is not None and (top is None or replays > top[1]):
        m = re.match(r"^CUDA Graph replays (\d+)%$", p["mix"])
        check(m and abs(int(m.group(1)) - replays) <= 0.55, "where GPU time goes: the page %r, the text CUDA Graph replays %s%%" % (p["mix"], replays))
    elif top is not None:
        m = re.match(r"^(\S+) (\d+)%$", p["mix"])
        check(m and m.group(1) == top[0] and abs(int(m.group(2)) - top[1]) <= 0.55,
              "where GPU time goes: the page %r, the text %s %s%%" % (p["mix"], top[0], top[1]))
    else:
        check(p["mix"] == "no GPU work", "where GPU time goes: the page %r, the text has no kernel mix" % p["mix"])
    if a["syncs"] is None:
        check(p["sync"] == "none", "synchronization in the loop: the page %r, the text none" % p["sync"])
    else:
        n, wait = a["syncs"]
        want = "%d %s, %s ms/it" % (n, "call" if n == 1 else "calls", wait)
        check(p["sync"] == want, "synchronization in the loop: the page %r, the text %r" % (p["sync"], want))
    t = a["settling"]
    if t is None:
        check(p["settling"] is None and not p["marks"], "the page says settling %r, the text has none" % p["settling"])
        return
    check(p["settling"] is not None, "the text's Settling paragraph is not on the page")
    got = p["settling"]
    check(("warm-up dropped %d" % t["warmup"]) in got, "warm-up: the page %r, the text %d dropped" % (got, t["warmup"]))
    if t["transient"]:
        check(("transient is the first %d of %d iterations" % t["transient"]) in got, "the transient: the page %r, the text %r" % (got, t["transient"]))
    elif t["settles"]:
        check("no initial transient" in got, "the transient: the page %r, the text none" % got)
    else:
        check("never holds still" in got, "the page %r, the text: never holds still" % got)
    shifts = re.findall(r"the level shifts at iteration (\d+), (\d+\.\d+) \u2192 (\d+\.\d+) ms", got)
    check(shifts == t["shifts"], "level shifts: the page %r, the text %r" % (shifts, t["shifts"]))
    marked = [it for what, it in p["marks"] if what == "shift"]
    check(marked == [int(x[0]) for x in t["shifts"]], "shifts marked on the strip at %r, the text's at %r" % (marked, t["shifts"]))
    # Warm-up on the strip: the first `warmup` rows are warm-up, the mark at the next one.
    its = p["iterations"]
    lead = next((i for i, (_, status) in enumerate(its) if status != "warm-up"), len(its))
    check(lead == t["warmup"], "the page's iterations table leads with %d warm-up, the text dropped %d" % (lead, t["warmup"]))
    warm = [it for what, it in p["marks"] if what == "warmup"]
    want = [its[t["warmup"]][0]] if 0 < t["warmup"] < len(its) else []
    check(warm == want, "warm-up's end marked at %r, the text's at %r" % (warm, want))
    # A warm-up too short (--skip-warmup): where the transient ends is marked too.
    ends = [it for what, it in p["marks"] if what == "transient"]
    want = [its[t["transient"][0]][0]] if t["transient"] and t["transient"][0] > t["warmup"] else []
    check(ends == want, "the transient's end marked at %r, the text's at %r" % (ends, want))


def check_text_and_page(page, stdout):
    parts = text_parts(stdout)
    if len(parts) == 1:
        return check_against_text(page, parts[0])
    n = page.evaluate("document.querySelectorAll('main select option').length")
    check(n == len(parts), "%d processes on the page, %d in the text" % (n, len(parts)))
    for i, part in enumerate(parts):
        page.evaluate("(() => { const s = document.querySelector('main select'); s.value = '%d'; s.dispatchEvent(new Event('change')); })()" % i)
        check_against_text(page, part, "p%d-" % i)


def committed_traces():
    """(path, --range or None) of every committed trace: the nsys exports, and the PyTorch profiler's
    traces with the range their reference names."""
    out = [(t, None) for t in sorted(glob.glob(os.path.join(ROOT, F, "**", "*.sqlite"), recursive=True))]
    with open(os.path.join(ROOT, F, "kineto", "reference.expected.json")) as f:
        for name, spec in sorted(json.load(f).items()):
            out.append((os.path.join(ROOT, F, "kineto", name), spec.get("range") if isinstance(spec, dict) else None))
    return out


# --- the pages ----------------------------------------------------------------------------------------


def make_pages(args):
    """(name, html, json, checker) of every page the suite opens."""
    w = args.work
    L = args.laptime
    pages = []
    texts = {}  # page -> the text report of the same command

    def cmd(name, argv, checker, json_path=None):
        html = os.path.join(w, name + ".html")
        js = json_path or os.path.join(w, name + ".json")
        texts[name] = run([L] + argv + ["--json", js, "--html", html])
        pages.append((name, html, js, checker))

    cmd("analyze", ["analyze", os.path.join(F, "nsys", "gpt2_bf16.sqlite"), "--peak", os.path.join(F, "peak_example.json")], check_analyze)
    cmd("analyze-lesson", ["analyze", os.path.join(F, "lesson", "gpt2_clean.sqlite")], check_analyze)
    cmd("analyze-synthetic", ["analyze", os.path.join(F, "synthetic_trace.sqlite")], check_analyze)
    # The calls' lists cut by --top: the answer counts every call, a line under each table the rest.
    cmd("analyze-top", ["analyze", os.path.join(F, "lesson", "gpt2_max.sqlite"), "--top", "2"],
        lambda page, r: (check_analyze(page, r), check_text_and_page(page, texts["analyze-top"]), check_omitted(page, r)))
    # Warm-up shorter than the transient: the settling marks where each ends, as the text says.
    cmd("analyze-short-warmup", ["analyze", os.path.join(F, "lesson", "gpt2_clean.sqlite"), "--skip-warmup", "0"],
        lambda page, r: (check_analyze(page, r), check_text_and_page(page, texts["analyze-short-warmup"])))
    cmd("analyze-processes", ["analyze", os.path.join(F, "process_two_ranks.sqlite")], check_processes)
    cmd("job", ["analyze"] + [os.path.join(F, "job", "rank_%d.sqlite" % i) for i in range(4)], check_job)
    cmd("diff", ["diff", os.path.join(F, "diff_base.sqlite"), os.path.join(F, "diff_attn_slower.sqlite")], check_diff)
    cmd("diff-energy", ["diff"] + write_bench_reports(w),
        lambda page, d: (check_diff(page, d), check_energy(page, d, texts["diff-energy"])))
    cmd("kernels", ["kernels", os.path.join(F, "ncu", "laptime_gpt2.csv")], check_kernels)
    cmd("kernels-diff", ["kernels", os.path.join(F, "ncu", "laptime_gpt2_attn_cudnn.csv"), os.path.join(F, "ncu", "laptime_gpt2_attn_flash.csv")], check_kernels_diff)
    lab_html = os.path.join(w, "lab.html")
    subprocess.run([args.write_page, LAB, "laptime lab attention bf16", lab_html], check=True, cwd=ROOT)
    pages.append(("lab", lab_html, LAB, check_lab))
    for name, report, command in (
            ("lab-try", LAB_TRY, "laptime lab layernorm -p bf16 --try layernorm_v1.cu --try layernorm_v2.cu"),
            ("lab-wrong", LAB_WRONG, "laptime lab layernorm -p bf16 --versions v1 --try wrong/layernorm_*.cu")):
        out = os.path.join(w, name + ".html")
        subprocess.run([args.write_page, report, command, out], check=True, cwd=ROOT)
        pages.append((name, out, report, check_lab))
    # Hostile names, in the trace and in the report's own file name.
    hostile = os.path.join(w, "<img src=x onerror=alert(1)>.sqlite")
    subprocess.run([sys.executable, make_hostile_names.__file__, hostile], check=True)
    names = sorted(set(make_hostile_names.NAMES.values())) + [os.path.basename(hostile)]
    cmd("hostile", ["analyze", hostile], lambda page, r: (check_hostile(page, names), check_analyze(page, r)))
    cmd("hostile-diff", ["diff", hostile, os.path.join(F, "synthetic_trace.sqlite")],
        lambda page, d: (check_hostile(page, [n.replace("h.0.", "h.*.") for n in names if "svg" in n or ".sqlite" in n]),
                         check_diff(page, d)))  # diff folds block indices: h.*.attn
    return pages


SHOTS = {  # page -> docs/img/ file, light, and one dark
    "analyze": [("report-analyze.png", False), ("report-analyze-dark.png", True)],
    "diff": [("report-diff.png", False)],
    "job": [("report-job.png", False)],
    "kernels": [("report-kernels.png", False)],
    "lab-try": [("report-lab.png", False)],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--laptime", required=True)
    ap.add_argument("--write-page", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--screenshots", help="write the pictures of docs/img/ into this folder")
    ap.add_argument("--time", nargs="*", default=[], help="traces whose pages are timed too")
    args = ap.parse_args()
    args.laptime, args.write_page, args.work = (os.path.abspath(p) for p in (args.laptime, args.write_page, args.work))
    if args.screenshots:
        args.screenshots = os.path.abspath(args.screenshots)
    if not Browser.find():
        print("html.browser: skipped: no Chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)")
        return SKIP
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    started = time.time()
    pages = make_pages(args)
    passed, failed = 0, 0
    with Browser() as b:
        for name, html, js, checker in pages:
            with open(os.path.join(ROOT, js)) as f:
                doc = json.load(f)
            try:
                page = b.open("file://" + html)
                errors = page.errors()
                check(not errors, "console errors: %r" % errors)
                check(not page.dialogs, "dialogs: %r" % page.dialogs)
                rendered = page.evaluate("document.documentElement.getAttribute('data-rendered-ms')")
                check(rendered is not None, "the page did not finish drawing")
                checker(page, doc)
                errors = page.errors()
                check(not errors, "console errors after the clicks: %r" % errors)
                check(not page.dialogs, "dialogs after the clicks: %r" % page.dialogs)
                print("  ok    %-20s %8.1f kB, opened in %.2f s (load event), drawn in %s ms" % (
                    name, os.path.getsize(html) / 1e3, page.load_seconds, rendered))
                passed += 1
                if args.screenshots and name in SHOTS:
                    for shot, dark in SHOTS[name]:
                        p = b.open("file://" + html, width=1400, height=900, dark=dark)
                        p.screenshot(os.path.join(args.screenshots, shot))
                        p.close()
                page.close()
            except (Failure, BrowserError) as e:
                print("  FAIL  %-20s %s" % (name, e))
                failed += 1
        # Every committed trace that analyze reports on: its page opens and draws without an error,
        # and says what the text says (the four answers, the settling, no sync drawn as the loop's
        # that the text does not count).
        swept, broken = 0, []
        for trace, range_ in committed_traces():
            html = os.path.join(args.work, "sweep.html")
            r = subprocess.run([args.laptime, "analyze", trace, "--html", html, "--quiet"] + (["--range", range_] if range_ else []),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
            if r.returncode != 0:
                continue  # refused with its sentence (docs/ERRORS.md)
            page = b.open("file://" + html)
            name = os.path.relpath(trace, ROOT)
            errors = page.errors()
            if errors or page.dialogs or page.evaluate("document.documentElement.getAttribute('data-rendered-ms')") is None:
                broken.append("%s: %r %r" % (name, errors[:2], page.dialogs))
            else:
                try:
                    check_text_and_page(page, r.stdout)
                    doc = page.evaluate("JSON.parse(document.getElementById('laptime-data').textContent)")
                    for i, rep in enumerate(doc.get("processes") or [doc]):
                        P = "p%d-" % i if "processes" in doc else ""
                        if "processes" in doc:
                            page.evaluate("(() => { const s = document.querySelector('main select'); s.value = '%d'; s.dispatchEvent(new Event('change')); })()" % i)
                        if rep.get("timeline"):
                            check_blocking_calls(page, rep["timeline"], P, not rep["synchronization"]["calls"])
                except (Failure, BrowserError) as e:
                    broken.append("%s: %s" % (name, e))
            page.close()
            swept += 1
        if broken:
            print("  FAIL  every trace      %d of %d pages:\n    %s" % (len(broken), swept, "\n    ".join(broken)))
            failed += 1
        else:
            print("  ok    every trace      the pages of %d committed traces open, draw without an error and say what their text says" % swept)
            passed += 1
        for trace in args.time:
            html = os.path.join(args.work, "timed.html")
            t = time.time()
            run([args.laptime, "analyze", trace, "--html", html])
            made = time.time() - t
            page = b.open("file://" + html)
            rendered = page.evaluate("document.documentElement.getAttribute('data-rendered-ms')")
            errors = page.errors()
            print("  time  %s: page %.2f MB (laptime %.1f s), opened in %.2f s (load event), drawn in %s ms%s" % (
                trace, os.path.getsize(html) / 1e6, made, page.load_seconds, rendered,
                "" if not errors else ", errors: %r" % errors))
            page.close()
    print("html.browser: %.0f s" % (time.time() - started))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
