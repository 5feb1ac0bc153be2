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
    # Hovering a span shows its name, as text.
    first = page.evaluate("(() => { const e = document.querySelector('#%ssec-timeline svg.timeline .ev');"
                          " e.dispatchEvent(new PointerEvent('pointermove', {bubbles: true, clientX: 300, clientY: 300}));"
                          " return [+e.getAttribute('data-ev'), document.querySelector('.tip b').textContent]; })()" % P)
    check(first[1] == tl["names"][tl["events"][first[0]]["name"]], "the tooltip names %r, the JSON %r" % (first[1], tl["names"][tl["events"][first[0]]["name"]]))
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
        for row, (v, t) in zip(rows, rungs):
            check(row[0].rstrip("*") == v["id"], "version %r" % row[0])
            close(row[1], t["median_us"], 2, "median of " + v["id"])
        bars = page.evaluate("document.querySelectorAll('#shape-%d rect.lbar').length" % si)
        check(bars == len(rungs), "a bar per rung")
        if l["roofs"]:
            check(page.evaluate("document.querySelectorAll('#shape-%d line.rooftime').length" % si) >= 1, "the DRAM roof drawn")


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


# --- the pages ----------------------------------------------------------------------------------------


def make_pages(args):
    """(name, html, json, checker) of every page the suite opens."""
    w = args.work
    L = args.laptime
    pages = []

    def cmd(name, argv, checker, json_path=None):
        html = os.path.join(w, name + ".html")
        js = json_path or os.path.join(w, name + ".json")
        run([L] + argv + ["--json", js, "--html", html])
        pages.append((name, html, js, checker))

    cmd("analyze", ["analyze", os.path.join(F, "nsys", "gpt2_bf16.sqlite"), "--peak", os.path.join(F, "peak_example.json")], check_analyze)
    cmd("analyze-lesson", ["analyze", os.path.join(F, "lesson", "gpt2_clean.sqlite")], check_analyze)
    cmd("analyze-synthetic", ["analyze", os.path.join(F, "synthetic_trace.sqlite")], check_analyze)
    cmd("analyze-processes", ["analyze", os.path.join(F, "process_two_ranks.sqlite")], check_processes)
    cmd("job", ["analyze"] + [os.path.join(F, "job", "rank_%d.sqlite" % i) for i in range(4)], check_job)
    cmd("diff", ["diff", os.path.join(F, "diff_base.sqlite"), os.path.join(F, "diff_attn_slower.sqlite")], check_diff)
    cmd("kernels", ["kernels", os.path.join(F, "ncu", "laptime_gpt2.csv")], check_kernels)
    cmd("kernels-diff", ["kernels", os.path.join(F, "ncu", "laptime_gpt2_attn_cudnn.csv"), os.path.join(F, "ncu", "laptime_gpt2_attn_flash.csv")], check_kernels_diff)
    lab_html = os.path.join(w, "lab.html")
    subprocess.run([args.write_page, LAB, "laptime lab attention bf16", lab_html], check=True, cwd=ROOT)
    pages.append(("lab", lab_html, LAB, check_lab))
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
    "lab": [("report-lab.png", False)],
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
                print("  ok    %-18s %8.1f kB, opened in %.2f s (load event), drawn in %s ms" % (
                    name, os.path.getsize(html) / 1e3, page.load_seconds, rendered))
                passed += 1
                if args.screenshots and name in SHOTS:
                    for shot, dark in SHOTS[name]:
                        p = b.open("file://" + html, width=1400, height=900, dark=dark)
                        p.screenshot(os.path.join(args.screenshots, shot))
                        p.close()
                page.close()
            except (Failure, BrowserError) as e:
                print("  FAIL  %-18s %s" % (name, e))
                failed += 1
        # Every committed trace that analyze reports on: its page opens and draws without an error.
        swept, broken = 0, []
        for trace in sorted(glob.glob(os.path.join(ROOT, F, "**", "*.sqlite"), recursive=True)):
            html = os.path.join(args.work, "sweep.html")
            if subprocess.run([args.laptime, "analyze", trace, "--html", html], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, cwd=ROOT).returncode != 0:
                continue  # refused with its sentence (docs/ERRORS.md)
            page = b.open("file://" + html)
            errors = page.errors()
            if errors or page.dialogs or page.evaluate("document.documentElement.getAttribute('data-rendered-ms')") is None:
                broken.append("%s: %r %r" % (os.path.relpath(trace, ROOT), errors[:2], page.dialogs))
            page.close()
            swept += 1
        if broken:
            print("  FAIL  every trace      %d of %d pages: %s" % (len(broken), swept, "; ".join(broken)))
            failed += 1
        else:
            print("  ok    every trace      the pages of %d committed traces open and draw without an error" % swept)
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
