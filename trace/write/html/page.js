// laptime's report page (trace/write/html_page.h). It draws the JSON document embedded beside it
// (what `--json` writes for the same command line) and computes nothing from the trace: every
// figure is a field of that document, at most divided or formatted. Names from traces are data:
// every element is made with createElement and its text set with textContent or a text node;
// nothing from the document is ever parsed as markup. No network, no library.
"use strict";

function laptimePage(dataElement, title) {
  const SVGNS = "http://www.w3.org/2000/svg";
  const main = document.getElementById("laptime-page");

  // --- building elements ----------------------------------------------------------------------
  // h("td", {class: "num", text: "3.5"}, child, "text", [more]): attributes through setAttribute,
  // `text` as textContent, `on*` functions as listeners; strings become text nodes.
  function build(node, attrs, kids) {
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        const v = attrs[k];
        if (v === undefined || v === null || v === false) continue;
        if (k === "text") node.textContent = String(v);
        else if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
        else node.setAttribute(k, String(v));
      }
    }
    const add = (kid) => {
      if (kid === undefined || kid === null || kid === false) return;
      if (Array.isArray(kid)) kid.forEach(add);
      else if (kid instanceof Node) node.appendChild(kid);
      else node.appendChild(document.createTextNode(String(kid)));
    };
    kids.forEach(add);
    return node;
  }
  const h = (tag, attrs, ...kids) => build(document.createElement(tag), attrs, kids);
  const s = (tag, attrs, ...kids) => build(document.createElementNS(SVGNS, tag), attrs, kids);

  // --- numbers ----------------------------------------------------------------------------------
  const isNum = (v) => typeof v === "number" && isFinite(v);
  const fixed = (v, d) => (isNum(v) ? v.toFixed(d) : "-");
  const ms = (ns) => (isNum(ns) ? (ns / 1e6).toFixed(3) : "-");
  const us = (ns) => (isNum(ns) ? (ns / 1e3).toFixed(1) : "-");
  const pct = (v, d = 1) => (isNum(v) ? v.toFixed(d) + "%" : "-");
  function duration(ns) {
    if (!isNum(ns)) return "-";
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(1) + " us";
    return ns.toFixed(0) + " ns";
  }
  const signed = (v, d) => (isNum(v) ? (v > 0 ? "+" : "") + v.toFixed(d) : "-");
  function bytes(b) {
    if (!isNum(b)) return "-";
    if (b >= 1e9) return (b / 1e9).toFixed(2) + " GB";
    if (b >= 1e6) return (b / 1e6).toFixed(2) + " MB";
    if (b >= 1e3) return (b / 1e3).toFixed(1) + " kB";
    return b.toFixed(0) + " B";
  }
  // 1, 2 or 5 times a power of ten: about `n` ticks across `span`.
  function tickStep(span, n) {
    const raw = span / n;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  // Every chart spans the page's content width, measured once (a measure forces a layout of the
  // whole page: per chart, at 10^4 rows of tables, it cost more than drawing) and again on resize.
  let contentWidth = null;
  window.addEventListener("resize", () => (contentWidth = null));
  // An empty chart of W x H pixels, drawn again from nothing.
  function sizeChart(svg, W, H) {
    svg.setAttribute("width", W);
    svg.setAttribute("height", H);
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.textContent = "";
  }
  function width(el, fallback) {
    if (contentWidth === null) {
      const style = getComputedStyle(main);
      contentWidth = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    }
    return contentWidth > 100 ? Math.floor(contentWidth) : fallback;
  }

  // --- the tooltip ----------------------------------------------------------------------------
  const tip = h("div", {class: "tip", role: "tooltip"});
  document.body.appendChild(tip);
  function showTip(ev, lines) {
    tip.textContent = "";
    lines.forEach((line, i) => {
      if (i) tip.appendChild(document.createTextNode("\n"));
      if (i === 0) tip.appendChild(h("b", {text: line}));
      else tip.appendChild(document.createTextNode(line));
    });
    tip.style.display = "block";
    const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    const y = ev.clientY + 16 + tip.offsetHeight > window.innerHeight ? ev.clientY - tip.offsetHeight - 10 : ev.clientY + 16;
    tip.style.left = Math.max(4, x) + "px";
    tip.style.top = Math.max(4, y) + "px";
  }
  const hideTip = () => (tip.style.display = "none");

  // --- evidence links -----------------------------------------------------------------------------
  // A number on the first screen links to the row it comes from: the link scrolls to the row,
  // flashes it and does what a click on the row does (its spans on the timeline).
  const rowActions = new Map();  // row id -> {reveal, activate}
  function evidence(text, rowId) {
    return h("a", {href: "#" + rowId, text, "data-evidence": rowId, onclick: (ev) => {
      ev.preventDefault();
      goToRow(rowId);
    }});
  }
  function goToRow(rowId) {
    const act = rowActions.get(rowId);
    if (act && act.reveal) act.reveal();
    const row = document.getElementById(rowId);
    if (!row) return;
    row.scrollIntoView({block: "center"});
    row.classList.remove("flash");
    void row.offsetWidth;  // restart the animation
    row.classList.add("flash");
    if (act && act.activate) act.activate();
  }

  // --- sortable tables ----------------------------------------------------------------------------
  // columns: {key, label, num, value(row) -> sortable, show(row) -> text or Node, cls}
  // opts: {id, sortKey, desc, limit, onRow(row, tr), rowClass(row)}
  function table(columns, rows, opts) {
    const o = Object.assign({limit: 300, desc: true}, opts);
    const wrap = h("div", {class: "tablewrap"});
    const tbl = h("table", {class: "data", id: o.id});
    const thead = h("thead");
    const tbody = h("tbody");
    tbl.appendChild(thead);
    tbl.appendChild(tbody);
    wrap.appendChild(tbl);
    const more = h("div", {class: "more"});
    wrap.appendChild(more);
    const items = rows.map((row, i) => ({row, i}));
    let sortKey = o.sortKey, desc = o.desc, shown = o.limit, active = null;
    const col = (k) => columns.find((c) => c.key === k);
    const value = (c, row) => (c.value ? c.value(row) : row[c.key]);
    const headRow = h("tr");
    for (const c of columns) {
      const th = h("th", {class: c.num ? "num" : null, title: c.title || null, text: c.label, "data-key": c.key});
      th.addEventListener("click", () => {
        if (sortKey === c.key) desc = !desc;
        else {
          sortKey = c.key;
          desc = !!c.num;
        }
        render();
      });
      headRow.appendChild(th);
    }
    thead.appendChild(headRow);
    function sorted() {
      const c = col(sortKey);
      if (!c) return items.slice();
      const out = items.slice();
      out.sort((a, b) => {
        const x = value(c, a.row), y = value(c, b.row);
        let r;
        if (x === y) r = 0;
        else if (x === null || x === undefined) r = 1;
        else if (y === null || y === undefined) r = -1;
        else if (typeof x === "number" && typeof y === "number") r = desc ? y - x : x - y;
        else r = desc ? String(y).localeCompare(String(x)) : String(x).localeCompare(String(y));
        return r || a.i - b.i;
      });
      return out;
    }
    function render() {
      for (const th of headRow.children) {
        th.classList.toggle("sorted", th.getAttribute("data-key") === sortKey);
        th.classList.toggle("asc", th.getAttribute("data-key") === sortKey && !desc);
      }
      tbody.textContent = "";
      const list = sorted();
      for (const {row, i} of list.slice(0, shown)) {
        const tr = h("tr", {id: o.id + "-r" + i, class: o.rowClass ? o.rowClass(row) : null});
        if (active === i) tr.classList.add("active");
        for (const c of columns) {
          const v = c.show ? c.show(row) : value(c, row);
          tr.appendChild(h("td", {class: [c.num ? "num" : "", c.cls || ""].join(" ").trim() || null}, v === undefined || v === null ? "-" : v));
        }
        if (o.onRow) {
          tr.addEventListener("click", () => {
            active = active === i ? null : i;
            for (const r of tbody.children) r.classList.toggle("active", r.id === tr.id && active !== null);
            o.onRow(active === null ? null : row, tr);
          });
        }
        tbody.appendChild(tr);
      }
      more.textContent = "";
      if (list.length > shown)
        more.appendChild(h("button", {text: "show all " + list.length + " rows (" + (list.length - shown) + " more)", onclick: () => {
          shown = Infinity;
          render();
        }}));
    }
    render();
    rows.forEach((row, i) => {
      rowActions.set(o.id + "-r" + i, {
        reveal: () => {
          if (!document.getElementById(o.id + "-r" + i)) {
            shown = Infinity;
            render();
          }
        },
        activate: () => {
          const tr = document.getElementById(o.id + "-r" + i);
          if (tr && active !== i) tr.click();
        },
      });
    });
    if (!rows.length) wrap.appendChild(h("p", {class: "empty", text: "none"}));
    return wrap;
  }

  function section(id, heading, ...kids) {
    return h("section", {id}, h("h2", {text: heading}), kids);
  }
  // A section holding one chart, appended to `into`: [the section, its empty SVG].
  function chartSection(into, id, heading, label) {
    const svg = s("svg", {class: "chart", role: "img", "aria-label": label});
    into.appendChild(section(id, heading, svg));
    return [svg.parentNode, svg];
  }
  function notesList(notes) {
    if (!notes || !notes.length) return document.createDocumentFragment();
    return h("details", {open: notes.length <= 3 ? "" : null}, h("summary", {text: notes.length + (notes.length === 1 ? " note" : " notes")}),
      h("ul", {class: "notes"}, notes.map((n) => h("li", {text: n}))));
  }
  // What a bounded list of the report left out, under its table.
  function omittedNote(what) {
    return h("p", {class: "hint omitted", text: what + " not in this report (--top 0 keeps every row)"});
  }
  function legendItem(label, attrs) {
    return h("span", null, h("span", Object.assign({class: "sw"}, attrs)), label);
  }

  // --- the timeline -------------------------------------------------------------------------------
  // One iteration's events (laptime.analyze/1's `timeline`), zoomable with the wheel and the
  // buttons, pannable by dragging; a table row highlights its spans (select()).
  function Timeline(tl, report) {
    const ROW = 18, GAP = 6, LABEL = 190, AXIS = 22, PAD_RIGHT = 10;
    const root = h("div", {class: "tlwrap"});
    const tools = h("div", {class: "tl-tools"});
    const svg = s("svg", {class: "chart timeline", role: "img", "aria-label": "timeline of one iteration"});
    root.appendChild(tools);
    root.appendChild(svg);
    const names = tl.names;
    const lanes = tl.lanes.map((l, i) => Object.assign({i}, l));
    let y = AXIS + 4;
    for (let i = 0; i < lanes.length; ++i) {
      const l = lanes[i];
      if (i && (l.kind !== lanes[i - 1].kind || l.kind === "ranges")) y += GAP;
      l.y = y;
      l.h = (l.rows || 1) * ROW;
      y += l.h;
    }
    const gpuLanes = lanes.filter((l) => l.kind === "gpu");
    const gpuTop = gpuLanes.length ? gpuLanes[0].y : y;
    const gpuBottom = gpuLanes.length ? gpuLanes[gpuLanes.length - 1].y + ROW : y;
    const height = y + 30;
    const full = {lo: tl.start_ns, hi: Math.max(tl.end_ns, tl.start_ns + 1)};
    const padNs = (full.hi - full.lo) * 0.01;
    let view = {lo: full.lo - padNs, hi: full.hi + padNs};
    let match = null;  // {events: fn(e), gaps: fn(g), syncs: fn(s)}
    let W = 1200;
    const X = (t) => LABEL + ((t - view.lo) / (view.hi - view.lo)) * (W - LABEL - PAD_RIGHT);
    const T = (x) => view.lo + ((x - LABEL) / (W - LABEL - PAD_RIGHT)) * (view.hi - view.lo);

    // A blocking call's record (where it sat, what it cost), or null. Only a steady iteration's is
    // the loop's cost and drawn in the blocking colour; the others (the synchronize after the loop,
    // often as long as the window) hollow, in the call colour, named with where they sat.
    const syncOf = (e) => (e.blocking && isNum(e.sync) ? tl.syncs[e.sync] : null);
    const loopSync = (e) => { const q = syncOf(e); return !!(q && q.steady); };
    const outsideWords = (e) => { const q = syncOf(e); return q ? q.where : "outside the steady iterations"; };
    function eventName(e) {
      return names[e.name] + (e.blocking && !loopSync(e) ? " (" + outsideWords(e) + ")" : "");
    }
    function eventLines(e) {
      const lines = [eventName(e), duration(e.duration_ns) + " " + (e.kind === "call" ? "CUDA API call" : e.kind) +
        (e.category ? " [" + e.category + "]" : "") + (!e.blocking ? "" : loopSync(e) ? ", blocking, inside a steady iteration" :
          ", blocking, outside the steady iterations (" + outsideWords(e) + "): not the loop's cost")];
      lines.push("starts at " + ms(e.start_ns - tl.start_ns) + " ms of the window" + (e.in_iteration ? "" : " (another iteration's)"));
      if (e.layer !== null && e.kind !== "range") lines.push("layer: " + names[e.layer]);
      return lines;
    }
    function render() {
      W = width(root, 1200);
      sizeChart(svg, W, height);
      svg.classList.toggle("dimmed", !!match);
      const plotR = W - PAD_RIGHT;
      const clip = s("clipPath", {id: "tlclip"}, s("rect", {x: LABEL, y: 0, width: plotR - LABEL, height}));
      svg.appendChild(s("defs", null, clip));
      // Axis: ms from the window's start.
      const spanMs = (view.hi - view.lo) / 1e6;
      const step = tickStep(spanMs, Math.max(4, Math.floor((W - LABEL) / 110)));
      const first = Math.ceil((view.lo - tl.start_ns) / 1e6 / step) * step;
      const axis = s("g");
      for (let v = first; v <= (view.hi - tl.start_ns) / 1e6 + 1e-12; v += step) {
        const x = X(tl.start_ns + v * 1e6);
        axis.appendChild(s("line", {class: "grid", x1: x, x2: x, y1: AXIS - 4, y2: height - 24}));
        const digits = step >= 1 ? 0 : Math.min(6, Math.ceil(-Math.log10(step)));
        axis.appendChild(s("text", {x: x + 2, y: AXIS - 8, class: "muted", text: v.toFixed(digits)}));
      }
      axis.appendChild(s("text", {x: 4, y: AXIS - 8, class: "muted", text: "ms from the window's start"}));
      svg.appendChild(axis);
      for (const l of lanes) {
        svg.appendChild(s("rect", {class: "lanebg", x: LABEL, y: l.y, width: plotR - LABEL, height: l.h - 1}));
        svg.appendChild(s("text", {x: 4, y: l.y + 13, text: l.label.length > 30 ? l.label.slice(0, 29) + "~" : l.label}, s("title", {text: l.label})));
      }
      const plot = s("g", {"clip-path": "url(#tlclip)"});
      svg.appendChild(plot);
      // Gaps behind the GPU lanes.
      tl.gaps.forEach((g, gi) => {
        if (g.start_ns + g.duration_ns < view.lo || g.start_ns > view.hi) return;
        const x = X(g.start_ns), w = Math.max(X(g.start_ns + g.duration_ns) - x, 1);
        const hl = match && match.gaps && match.gaps(g);
        plot.appendChild(s("rect", {class: "gapbox" + (hl ? " hl" : ""), x, y: gpuTop - 2, width: w, height: gpuBottom - gpuTop + 4, "data-gap": gi}));
        const label = duration(g.duration_ns);
        if (w > label.length * 6.2) plot.appendChild(s("text", {class: "gaplabel", x: x + 1, y: gpuBottom + 12, text: label}));
      });
      // Events.
      tl.events.forEach((e, ei) => {
        const end = e.start_ns + e.duration_ns;
        if (end < view.lo || e.start_ns > view.hi) return;
        const l = lanes[e.lane];
        const x0 = X(Math.max(e.start_ns, view.lo - (view.hi - view.lo))), x1 = X(Math.min(end, view.hi + (view.hi - view.lo)));
        const w = Math.max(x1 - x0, 0.6);
        const row = e.kind === "range" ? e.depth : 0;
        let cls = "ev " + e.kind + (e.kind === "range" && row % 2 ? " odd" : "") + (!e.blocking ? "" : loopSync(e) ? " blocking" : " outside") + (e.in_iteration ? "" : " nb");
        if (match && match.events && match.events(e)) cls += " hl";
        const r = s("rect", {class: cls, x: x0, y: l.y + row * ROW, width: w, height: ROW - 2, "data-ev": ei});
        if (e.category) r.setAttribute("data-cat", e.category);
        plot.appendChild(r);
        const vis0 = Math.max(x0, LABEL), vis1 = Math.min(x0 + w, plotR);
        const fits = Math.floor((vis1 - vis0 - 4) / 6.2);
        if (fits >= 3) {
          const name = eventName(e);
          plot.appendChild(s("text", {class: "evlabel" + (e.category ? " ongpu" : ""), x: vis0 + 2, y: l.y + row * ROW + 12, "data-label-of": ei, text: name.length <= fits ? name : name.slice(0, fits - 1) + "~"}));
        }
      });
      // Synchronizations: a mark over the call, with what it cost the host.
      tl.syncs.forEach((q, qi) => {
        if (q.start_ns + q.duration_ns < view.lo || q.start_ns > view.hi) return;
        const l = q.lane === null ? lanes.find((x) => x.kind === "api") : lanes[q.lane];
        if (!l) return;
        const x = X(q.start_ns);
        const hl = match && match.syncs && match.syncs(q);
        // Only the steady iterations' calls are the loop's cost; the others (warm-up, after the
        // loop) are marked hollow and unlabelled, as the report leaves them out of its answer.
        plot.appendChild(s("path", {class: "sync" + (q.steady ? "" : " outside") + (hl ? " hl" : ""), d: "M" + x + " " + (l.y - 1) + " l5 -7 h-10 z", "data-sync": qi}));
        if (q.steady) plot.appendChild(s("text", {class: "synclabel", x: x + 7, y: l.y - 2, text: "sync " + duration(q.duration_ns) + " (" + q.effect + ")"}));
      });
      svg.appendChild(s("text", {x: LABEL, y: height - 8, class: "muted", text:
        "iteration " + tl.index + " (" + (tl.events.length === tl.events_in_window ? tl.events.length + " events" : tl.events.length + " of " + tl.events_in_window + " events: the longest kept") +
        "); wheel or +/- to zoom, drag to pan, double-click to reset"}));
    }
    function zoom(factor, at) {
      const c = at === undefined ? (view.lo + view.hi) / 2 : at;
      let lo = c - (c - view.lo) * factor, hi = c + (view.hi - c) * factor;
      if (hi - lo < 1000) return;  // 1 us across the plot is enough
      view = {lo, hi};
      render();
    }
    function fit(lo, hi) {
      const pad = Math.max((hi - lo) * 0.08, 500);
      view = {lo: lo - pad, hi: hi + pad};
      render();
    }
    tools.appendChild(h("button", {text: "+", title: "zoom in", onclick: () => zoom(0.5)}));
    tools.appendChild(h("button", {text: "\u2212", title: "zoom out", onclick: () => zoom(2)}));
    tools.appendChild(h("button", {text: "reset", title: "the whole window", onclick: () => fit(full.lo, full.hi)}));
    const fitSel = h("button", {text: "zoom to the selection", disabled: "", onclick: () => {
      const sel = tl.events.filter((e) => match && match.events && match.events(e));
      const gs = tl.gaps.filter((g) => match && match.gaps && match.gaps(g));
      const qs = tl.syncs.filter((q) => match && match.syncs && match.syncs(q));
      const all = sel.map((e) => [e.start_ns, e.start_ns + e.duration_ns]).concat(gs.map((g) => [g.start_ns, g.start_ns + g.duration_ns]), qs.map((q) => [q.start_ns, q.start_ns + q.duration_ns]));
      if (!all.length) return;
      fit(Math.min(...all.map((a) => a[0])), Math.max(...all.map((a) => a[1])));
    }});
    tools.appendChild(fitSel);
    const status = h("span", {class: "hint"});
    tools.appendChild(status);
    svg.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const rect = svg.getBoundingClientRect();
      const x = ((ev.clientX - rect.left) * W) / rect.width;
      zoom(Math.exp(ev.deltaY * 0.0015), x > LABEL ? T(x) : undefined);
    }, {passive: false});
    let drag = null;
    svg.addEventListener("pointerdown", (ev) => {
      drag = {x: ev.clientX, view: Object.assign({}, view)};
      svg.classList.add("dragging");
      svg.setPointerCapture(ev.pointerId);
    });
    svg.addEventListener("pointermove", (ev) => {
      if (drag) {
        const rect = svg.getBoundingClientRect();
        const dx = ((ev.clientX - drag.x) * W) / rect.width;
        const dt = (dx / (W - LABEL - PAD_RIGHT)) * (drag.view.hi - drag.view.lo);
        if (Math.abs(dx) > 2) {
          view = {lo: drag.view.lo - dt, hi: drag.view.hi - dt};
          render();
        }
        return;
      }
      const t = ev.target;
      if (t.hasAttribute && t.hasAttribute("data-ev")) showTip(ev, eventLines(tl.events[+t.getAttribute("data-ev")]));
      else if (t.hasAttribute && t.hasAttribute("data-gap")) {
        const g = tl.gaps[+t.getAttribute("data-gap")];
        showTip(ev, ["idle gap " + duration(g.duration_ns), "cause: " + g.cause + (g.cause === "host-wait" ? " (the next work's launch call had not returned)" : " (work was queued: dependency, synchronization, kernel-boundary latency)")]);
      } else if (t.hasAttribute && t.hasAttribute("data-sync")) {
        const q = tl.syncs[+t.getAttribute("data-sync")];
        showTip(ev, [q.api + ": " + duration(q.duration_ns) + " of host wait", "kind: " + q.kind + ", effect: " + q.effect,
          "compute-stream work pending when it began: " + duration(q.pending_ns), q.steady ? "inside a steady iteration" : "outside the steady iterations"]);
      } else hideTip();
    });
    const endDrag = () => {
      drag = null;
      svg.classList.remove("dragging");
    };
    svg.addEventListener("pointerup", endDrag);
    svg.addEventListener("pointercancel", endDrag);
    svg.addEventListener("pointerleave", hideTip);
    svg.addEventListener("dblclick", () => fit(full.lo, full.hi));
    window.addEventListener("resize", () => render());
    return {
      element: root,
      render,
      select(m, what) {
        match = m;
        const n = m ? tl.events.filter((e) => m.events && m.events(e)).length + tl.gaps.filter((g) => m.gaps && m.gaps(g)).length + tl.syncs.filter((q) => m.syncs && m.syncs(q)).length : 0;
        status.textContent = m ? what + ": " + n + (n === 1 ? " span" : " spans") + " in this window" : "";
        if (m) fitSel.removeAttribute("disabled");
        else fitSel.setAttribute("disabled", "");
        render();
      },
    };
  }

  // The iterations on one strip: warm-up, host ran ahead, steady; the one drawn below outlined;
  // where warm-up ends and where the GPU time per iteration shifts level (the report's
  // `settling`), marked on the strip and said in a line under it.
  function Overview(report, tl) {
    const its = report.iterations || [];
    // No iteration with GPU work: no GPU time to settle (the text has no Settling paragraph either).
    const st = its.some((it) => isNum(it.gpu_start_ns)) ? report.settling : null;
    const root = h("div");
    const svg = s("svg", {class: "chart", role: "img", "aria-label": "every iteration"});
    root.appendChild(svg);
    if (!its.length) return {element: root, legend: null, marks: [], render() {}};
    // The marks: [position in its, class, label, what it marks].
    const marks = [];
    if (st && st.warmup > 0 && st.warmup < its.length) marks.push([st.warmup, "settle-warmup", "warm-up ends", "warmup"]);
    if (st && st.settles && st.warmup_too_short && st.start < its.length) marks.push([st.start, "settle-transient", "transient ends", "transient"]);
    for (const x of (st && st.shifts) || []) marks.push([x.at, "settle-shift", ms(x.before_ns) + " \u2192 " + ms(x.after_ns) + " ms", "shift"]);
    const settleWords = (() => {
      if (!st) return null;
      const parts = [];
      if (!st.settles) parts.push("the GPU time per iteration never holds still in the first half of the run: no initial transient to drop");
      else parts.push(st.start ? "the GPU time per iteration's initial transient is the first " + st.start + " of " + its.length + " iterations" :
        "the GPU time per iteration has no initial transient in its " + its.length + " iterations");
      parts.push("warm-up dropped " + st.warmup + (st.settles ? (st.warmup_too_short ? ": too short" : ": enough") : " as marked"));
      for (const x of st.shifts || []) parts.push("the level shifts at iteration " + x.iteration + ", " + ms(x.before_ns) + " \u2192 " + ms(x.after_ns) + " ms");
      return parts.join("; ");
    })();
    let lo = Infinity, hi = -Infinity;
    for (const it of its) {
      lo = Math.min(lo, it.start_ns, isNum(it.gpu_start_ns) ? it.gpu_start_ns : Infinity);
      hi = Math.max(hi, it.start_ns + it.host_ns, isNum(it.gpu_start_ns) ? it.gpu_start_ns + it.gpu_ns : -Infinity);
    }
    function render() {
      const W = width(root, 1200), L = 190, R = 10;
      sizeChart(svg, W, marks.length ? 60 : 46);
      const X = (t) => L + ((t - lo) / Math.max(hi - lo, 1)) * (W - L - R);
      svg.appendChild(s("text", {x: 4, y: 14, text: "iterations (host)"}));
      svg.appendChild(s("text", {x: 4, y: 32, text: "on the GPU"}));
      its.forEach((it, i) => {
        const status = it.warmup ? "warmup" : it.host_ahead ? "ahead" : "steady";
        const shown = tl && tl.iteration === i;
        svg.appendChild(s("rect", {class: "it " + status + (shown ? " shown" : ""), x: X(it.start_ns), y: 4, width: Math.max(X(it.start_ns + it.host_ns) - X(it.start_ns) - 0.5, 0.8), height: 13, "data-it": i}));
        if (isNum(it.gpu_start_ns))
          svg.appendChild(s("rect", {class: "it " + status + (shown ? " shown" : ""), x: X(it.gpu_start_ns), y: 23, width: Math.max(X(it.gpu_start_ns + it.gpu_ns) - X(it.gpu_start_ns) - 0.5, 0.8), height: 13, "data-it": i}));
      });
      if (tl) svg.appendChild(s("rect", {class: "window", x: X(tl.start_ns) - 1, y: 1, width: X(tl.end_ns) - X(tl.start_ns) + 2, height: 38}));
      // Each mark at its iteration's start, on both rows (the GPU row's own start), labelled under.
      let lastLabel = -Infinity;
      for (const [at, cls, label, what] of marks) {
        const it = its[at];
        const xh = X(it.start_ns), xg = isNum(it.gpu_start_ns) ? X(it.gpu_start_ns) : xh;
        svg.appendChild(s("path", {class: "settle " + cls, d: "M" + xh + " 2 V18 M" + xg + " 21 V40", "data-mark": what, "data-iteration": it.index}));
        if (xg > lastLabel + 4) {
          const t = s("text", {class: "settlelabel " + cls, x: xg + 2, y: 54, text: label});
          svg.appendChild(t);
          lastLabel = xg + 2 + label.length * 6;
        }
      }
    }
    svg.addEventListener("mousemove", (ev) => {
      const i = ev.target.getAttribute && ev.target.getAttribute("data-it");
      if (i === null || i === undefined) return hideTip();
      const it = its[+i];
      const word = it.warmup ? "warm-up" : it.host_ahead ? "host ran ahead (not steady)" : "steady";
      showTip(ev, ["iteration " + it.index + ": " + word, "host " + ms(it.host_ns) + " ms" + (isNum(it.gpu_ns) ? ", GPU " + ms(it.gpu_ns) + " ms, fill " + pct(it.span_fill_pct) : "")]);
    });
    svg.addEventListener("mouseleave", hideTip);
    window.addEventListener("resize", render);
    const legend = settleWords ? h("p", {class: "settling", id: "settling"}, h("b", {text: "Settling: "}), settleWords) : null;
    return {element: root, legend, marks, render};
  }

  // --- laptime.analyze/1 --------------------------------------------------------------------------
  // The verdict's figures, as the verdict's own fields hold them (laptime.analyze/1 `verdict`): the
  // one place that reads them, so the first screen's busy is the verdict's, over the lap. A
  // single iteration's share of its own GPU span is its fill, shown only in the iterations table.
  function verdictFigures(r) {
    const steady = r.steady_iterations || 0;
    const sync = r.synchronization || {};
    const v = r.verdict || {};
    return {
      lap_ms: r.time_ms ? r.time_ms.lap : null,
      lap_source: r.time_ms ? r.time_ms.lap_source : "",
      busy_pct: v.busy_pct,
      // Busy means something only where the steady iterations ran GPU work (as the text's section 2).
      gpu_work: !!(r.utilization && r.utilization.span_fill_pct && r.utilization.span_fill_pct.n > 0),
      busy_words: "of the lap: GPU busy time over its start to next start, steady iterations together",
      syncs: (sync.calls || []).length + (sync.calls_omitted ? sync.calls_omitted.count : 0),
      sync_wait_ms_per_iteration: steady ? (sync.host_wait_ns || 0) / steady / 1e6 : null,
      lap_without_ms: v.lap_without_syncs_ms,
    };
  }

  function renderAnalyze(r, into, prefix) {
    const P = prefix || "";
    const tl = r.timeline;
    const kinds = ["kernel", "memcpy", "memset", "graph"];
    let timeline = null;
    const select = (m, what) => timeline && timeline.select(m, what);
    const layerOf = (e) => (e.layer === null ? null : tl.names[e.layer]);
    const patternOf = (e) => (e.layer_pattern === null ? null : tl.names[e.layer_pattern]);

    // The first screen: the verdict, then the four answers, each linked to its evidence.
    const f = verdictFigures(r);
    const mix = r.kernel_mix || {categories: [], kernels: [], ranges: [], range_patterns: [], gpu_time_ns: 0};
    const cats = mix.categories.filter((c) => c.time_ns > 0);
    const top = cats[0];
    // CUDA Graph replays traced whole hold kernels the trace does not name: when they outweigh
    // the top category, they are where the time goes (as the verdict says).
    const replays = mix.graphs && mix.graphs.replay_ns > (top ? top.time_ns : 0) ? mix.graphs.replay_ns : 0;
    const sync = r.synchronization || {calls: [], summary: []};
    const syncRows = sync.calls.map((c, i) => Object.assign({i}, c)).sort((a, b) => b.duration_ns - a.duration_ns || a.i - b.i);
    const firstSteady = (r.iterations || []).findIndex((it) => it.steady);
    const steadyN = Math.max(r.steady_iterations, 1);
    const answers = h("div", {class: "answers"},
      h("div", {class: "answer", id: P + "answer-lap"}, h("div", {class: "q", text: "1. time per steady iteration"}),
        h("div", {class: "v"}, evidence(fixed(f.lap_ms, 3) + " ms", P + "iterations-r" + Math.max(firstSteady, 0))),
        h("div", {class: "d", text: (f.lap_source || "") + "; " + r.steady_iterations + " steady of " + (r.iterations || []).length})),
      h("div", {class: "answer", id: P + "answer-busy"}, h("div", {class: "q", text: "2. GPU busy"}),
        h("div", {class: "v"}, f.gpu_work ? evidence(pct(f.busy_pct), P + "iterations-r" + (tl ? tl.iteration : Math.max(firstSteady, 0))) : "no GPU work"),
        h("div", {class: "d", text: f.busy_words + "; " + (r.utilization ? r.utilization.gap_count : 0) + " gaps > " + r.gap_threshold_us + " us"})),
      h("div", {class: "answer", id: P + "answer-mix"}, h("div", {class: "q", text: "3. where GPU time goes"}),
        h("div", {class: "v"}, replays ? evidence("CUDA Graph replays " + pct(mix.gpu_time_ns ? (100 * replays) / mix.gpu_time_ns : null, 0), P + "sec-kernels") :
          top ? evidence(top.category + " " + pct(mix.gpu_time_ns ? (100 * top.time_ns) / mix.gpu_time_ns : null, 0), P + "categories-r" + mix.categories.indexOf(top)) : "no GPU work"),
        h("div", {class: "d", text: replays ? ms(mix.gpu_time_ns / steadyN) + " ms of GPU work per iteration; the kernels inside the replays need nsys profile --cuda-graph-trace=node" :
          top ? ms(mix.gpu_time_ns / steadyN) + " ms of GPU work per iteration in " + fixed(mix.categories.reduce((n, c) => n + c.count, 0) / steadyN, 1) + " operations, " + (mix.kernels.length + (mix.kernels_omitted || 0)) + " distinct kernels" : ""})),
      h("div", {class: "answer", id: P + "answer-sync"}, h("div", {class: "q", text: "4. synchronization inside the loop"}),
        h("div", {class: "v"}, f.syncs ? evidence(f.syncs + (f.syncs === 1 ? " call" : " calls") + ", " + fixed(f.sync_wait_ms_per_iteration, 3) + " ms/it", P + "syncs-r" + syncRows[0].i) : evidence("none", P + "sec-syncs")),
        h("div", {class: "d", text: f.syncs ? "host wait per iteration; without it the lap would be about " + fixed(f.lap_without_ms, 3) + " ms" : "no synchronize, blocking copy or allocation in the steady iterations"})));
    const bound = r.verdict ? r.verdict.bound : "";
    into.appendChild(h("section", {class: "verdict", id: P + "verdict"},
      h("h2", null, "Verdict: ", h("span", {class: "bound " + bound, text: bound})),
      h("p", {text: r.verdict ? r.verdict.text : ""}), answers));
    into.appendChild(notesList(r.notes));

    // The timeline of the median steady iteration, the strip of all of them above it.
    const tlSection = section(P + "sec-timeline", tl ? "Iteration " + tl.index + " on the timeline (the median steady iteration)" : "Timeline");
    into.appendChild(tlSection);
    const overview = Overview(r, tl);
    tlSection.appendChild(overview.element);
    tlSection.appendChild(h("div", {class: "legend"}, legendItem("warm-up", {style: "background: var(--warmup)"}),
      legendItem("host ran ahead", {style: "background: var(--ahead)"}), legendItem("steady", {style: "background: var(--steady)"}),
      tl ? "dashed: the window below" : null,
      overview.marks.some((m) => m[3] === "warmup") ? legendItem("where warm-up ends", {class: "sw mark settle-warmup"}) : null,
      overview.marks.some((m) => m[3] === "transient") ? legendItem("where the GPU time's initial transient ends", {class: "sw mark settle-transient"}) : null,
      overview.marks.some((m) => m[3] === "shift") ? legendItem("a level shift of the GPU time per iteration (the levels before and after)", {class: "sw mark settle-shift"}) : null));
    if (overview.legend) {
      overview.legend.id = P + "settling";
      tlSection.appendChild(overview.legend);
    }
    if (tl) {
      timeline = Timeline(tl, r);
      const shownIt = (r.iterations || [])[tl.iteration];
      if (!tl.host_range_in_window && shownIt)
        tlSection.appendChild(h("p", {class: "hint", text: "The host enqueued iteration " + tl.index + " " + ms(shownIt.gpu_start_ns - shownIt.start_ns) +
          " ms before its GPU work began (the loop runs ahead of the GPU): the window is its GPU span, and the host lanes show what the host did meanwhile, faded where it worked on other iterations."}));
      tlSection.appendChild(timeline.element);
      const legend = h("div", {class: "legend"});
      for (const c of mix.categories) legend.appendChild(legendItem(c.category, {"data-cat": c.category}));
      legend.appendChild(legendItem("CUDA API call", {style: "background: var(--call)"}));
      legend.appendChild(legendItem("blocking call in a steady iteration", {style: "background: var(--block)"}));
      legend.appendChild(legendItem("hollow: a blocking call outside the steady iterations (before or after the loop, warm-up): not the loop's cost", {class: "sw hollow"}));
      legend.appendChild(legendItem("idle gap > " + r.gap_threshold_us + " us", {style: "background: var(--gap)"}));
      legend.appendChild(h("span", {text: "faded: other iterations' work"}));
      tlSection.appendChild(legend);
      if (tl.truncated)
        tlSection.appendChild(h("p", {class: "hint", text: "The window holds " + tl.events_in_window + " events; the " + tl.events.length + " longest are drawn (" +
          tl.omitted.map((o) => o.events + " on " + tl.lanes[o.lane].label + ", " + ms(o.time_ns) + " ms").join("; ") + " left out)."}));
    } else {
      tlSection.appendChild(h("p", {class: "empty", text: "No steady iteration with GPU work to draw."}));
    }

    // Iterations.
    const its = (r.iterations || []).map((it) => Object.assign({status: it.warmup ? "warm-up" : it.host_ahead ? "host ahead" : "steady"}, it));
    into.appendChild(section(P + "sec-iterations", "1. Iterations (" + r.range + ")",
      h("p", {class: "meta", text: [r.range_rule, r.warmup_rule, r.steady_rule].filter(Boolean).join(" ")}),
      table([
        {key: "index", label: "iteration", num: true},
        {key: "status", label: "status"},
        {key: "host_ns", label: "host ms", num: true, show: (x) => ms(x.host_ns)},
        {key: "gpu_ns", label: "GPU ms", num: true, show: (x) => ms(x.gpu_ns)},
        {key: "span_fill_pct", label: "fill", num: true, show: (x) => pct(x.span_fill_pct)},
        {key: "gaps", label: "gaps", num: true},
        {key: "kernels", label: "kernels", num: true},
      ], its, {id: P + "iterations", sortKey: "index", desc: false, limit: 200, rowClass: (x) => (tl && x.index === tl.index ? "shown" : null)})));

    // Gaps.
    const u = r.utilization || {largest_gaps: []};
    into.appendChild(section(P + "sec-gaps", "2. Idle gaps inside the steady iterations (" + u.gap_count + " longer than " + r.gap_threshold_us + " us, " + ms(u.gap_ns) + " ms)",
      table([
        {key: "duration_ns", label: "us", num: true, show: (x) => us(x.duration_ns)},
        {key: "iteration", label: "iteration", num: true},
        {key: "cause", label: "cause"},
        {key: "before", label: "after this work", cls: "name mono"},
        {key: "after", label: "before this work", cls: "name mono"},
        {key: "cpu_api", label: "the CPU was in", cls: "name mono", show: (x) => (x.cpu_in_cuda_ns * 2 >= x.duration_ns ? x.cpu_api : "host code") + (x.cpu_range ? " / " + x.cpu_range : "")},
      ], u.largest_gaps, {id: P + "gaps", sortKey: "duration_ns", onRow: (g) => select(g ? {gaps: (x) => x.start_ns === g.start_ns} : null, g && "gap of " + duration(g.duration_ns))})));

    // Kernel mix: categories, layers, kernels.
    // The columns the kernel-mix tables share: time and count per steady iteration, share of GPU time.
    const perIteration = {key: "time_ns", label: "ms/iter", num: true, show: (x) => ms(x.time_ns / steadyN)};
    const shareOfGpu = {key: "share", label: "share", num: true, value: (x) => (mix.gpu_time_ns ? x.time_ns / mix.gpu_time_ns : 0),
      show: (x) => pct(mix.gpu_time_ns ? (100 * x.time_ns) / mix.gpu_time_ns : null)};
    const countPerIteration = (label) => ({key: "count", label, num: true, show: (x) => fixed(x.count / steadyN, 1)});
    const rangeColumns = [{key: "range", label: "range", cls: "name mono"}, perIteration, shareOfGpu, countPerIteration("ops/iter")];
    const catSel = (c) => (c ? {events: (e) => kinds.includes(e.kind) && e.category === c.category} : null);
    into.appendChild(section(P + "sec-kernels", "3. Kernel mix (steady iterations: " + ms(mix.gpu_time_ns) + " ms of GPU time)",
      h("h3", {text: "By category"}),
      table([
        {key: "category", label: "category"},
        perIteration,
        shareOfGpu,
        countPerIteration("ops/iter"),
      ], mix.categories, {id: P + "categories", sortKey: "time_ns", onRow: (c) => select(catSel(c), c && c.category)}),
      h("h3", {text: "By layer (the innermost NVTX range around each launch)"}),
      layerTables(),
      h("h3", {text: "By kernel"}),
      table([
        {key: "name", label: "kernel", cls: "name mono"},
        {key: "category", label: "category"},
        perIteration,
        shareOfGpu,
        countPerIteration("calls/iter"),
        {key: "mean", label: "mean us", num: true, value: (x) => x.time_ns / Math.max(x.count, 1), show: (x) => us(x.time_ns / Math.max(x.count, 1))},
        {key: "min_ns", label: "min us", num: true, show: (x) => us(x.min_ns)},
        {key: "max_ns", label: "max us", num: true, show: (x) => us(x.max_ns)},
      ], mix.kernels, {id: P + "kernels", sortKey: "time_ns", onRow: (k) => select(k ? {events: (e) => kinds.includes(e.kind) && tl.names[e.name] === k.name} : null, k && k.name)})));
    function layerTables() {
      const wrap = h("div");
      const byRange = table(rangeColumns, mix.range_patterns, {id: P + "layers", sortKey: "time_ns", onRow: (x) => select(x ? {events: (e) => patternOf(e) === x.range} : null, x && x.range)});
      const byInstance = table(rangeColumns, mix.ranges, {id: P + "ranges", sortKey: "time_ns", onRow: (x) => select(x ? {events: (e) => layerOf(e) === x.range} : null, x && x.range)});
      wrap.appendChild(h("p", {class: "hint", text: "Block indices folded (h.*.attn); a row highlights its spans on the timeline."}));
      wrap.appendChild(byRange);
      const all = mix.ranges.length + (mix.ranges_omitted || 0);
      wrap.appendChild(h("details", null, h("summary", {text: "each range as it is (" + all + " rows)"}), byInstance,
        mix.ranges_omitted ? omittedNote(mix.ranges_omitted + " more ranges, the least GPU time") : null));
      return wrap;
    }

    // Synchronizations, by cost: the report holds the costliest (laptime.analyze/1 bounds the
    // calls' lists), and says under each table what it left out.
    const callsLeft = (o) => (o ? omittedNote(o.count + " more " + (o.count === 1 ? "call" : "calls") + ", " + duration(o.host_wait_ns) + " of host wait") : null);
    const outsideCount = (sync.outside_steady || []).length + (sync.outside_steady_omitted ? sync.outside_steady_omitted.count : 0);
    into.appendChild(section(P + "sec-syncs", "4. Synchronization inside the steady iterations (by host wait)",
      h("p", {class: "meta", text: "host wait " + ms(sync.host_wait_ns) + " ms in all, " + ms(sync.stall_ns) + " ms of it waiting for the compute stream; GPU floor " + fixed(sync.gpu_floor_ms, 3) + " ms, lap without them about " + fixed(sync.lap_without_ms, 3) + " ms"}),
      table([
        {key: "duration_ns", label: "wait ms", num: true, show: (x) => ms(x.duration_ns)},
        {key: "api", label: "call", cls: "mono"},
        {key: "kind", label: "kind"},
        {key: "effect", label: "effect"},
        {key: "pending_ns", label: "pending ms", num: true, show: (x) => ms(x.pending_ns)},
        {key: "iteration", label: "iteration", num: true},
        {key: "range", label: "range", cls: "name mono"},
        {key: "copy", label: "copy"},
      ], sync.calls, {id: P + "syncs", sortKey: "duration_ns", onRow: (q) => select(q ? {syncs: (x) => x.start_ns === q.start_ns, events: (e) => e.kind === "call" && e.start_ns === q.start_ns} : null, q && q.api)}),
      callsLeft(sync.calls_omitted),
      outsideCount ? h("details", null, h("summary", {text: outsideCount + " more outside the steady iterations (warm-up, before and after the loop): not the loop's cost"}),
        table([
          {key: "duration_ns", label: "wait ms", num: true, show: (x) => ms(x.duration_ns)},
          {key: "api", label: "call", cls: "mono"},
          {key: "where", label: "where"},
          {key: "iteration", label: "iteration", num: true},
          {key: "range", label: "range", cls: "name mono"},
        ], sync.outside_steady, {id: P + "syncs-outside", sortKey: "duration_ns"}), callsLeft(sync.outside_steady_omitted)) : null));

    if (r.roofline) into.appendChild(renderRoofline(r.roofline, P, (row) => select(row ? {events: (e) => patternOf(e) === row.name || layerOf(e) === row.name} : null, row && row.name)));
    overview.render();
    if (timeline) timeline.render();
  }

  // The roofline: each layer against the measured roofs, hover for its figures; isolate by
  // layer or precision.
  function renderRoofline(rf, P, onRow) {
    const sec = section(P + "sec-roofline", "Roofline per layer (" + [rf.model, rf.precision, rf.shape].filter(Boolean).join(" ") + ")");
    sec.appendChild(h("p", {class: "meta", text: (rf.ceilings ? rf.precision + " GEMM " + fixed(rf.peak_tflops, 1) + " TFLOP/s, device copy " + fixed(rf.peak_gbps, 0) + " GB/s, ridge " + fixed(rf.ridge_flop_per_byte, 1) + " FLOP/byte (" + (rf.ceilings.source || "laptime peak") + "); " : "no ceilings: achieved rates only; ") + rf.time}));
    sec.appendChild(notesList(rf.notes));
    const rows = rf.folded || [];
    const drawn = rows.filter((x) => x.flops > 0 && x.time_ns > 0);
    let only = {layer: "", precision: ""};
    const svg = s("svg", {class: "chart", role: "img", "aria-label": "roofline"});
    if (rf.ceilings && drawn.length) {
      const tools = h("div", {class: "tl-tools"});
      const layerSel = h("select", {"aria-label": "layer"}, h("option", {value: "", text: "every layer"}), drawn.map((x) => h("option", {value: x.name, text: x.name})));
      const precisions = [...new Set(drawn.map((x) => x.precision).filter(Boolean))];
      const precSel = h("select", {"aria-label": "precision"}, h("option", {value: "", text: "every precision"}), precisions.map((p) => h("option", {value: p, text: p})));
      layerSel.addEventListener("change", () => {
        only.layer = layerSel.value;
        draw();
      });
      precSel.addEventListener("change", () => {
        only.precision = precSel.value;
        draw();
      });
      tools.appendChild(h("span", {class: "hint", text: "isolate:"}));
      tools.appendChild(layerSel);
      if (precisions.length) tools.appendChild(precSel);
      sec.appendChild(tools);
      sec.appendChild(svg);
    }
    function draw() {
      const W = Math.min(width(sec, 900), 900), H = 420, L = 60, B = 40, T = 14, R = 20;
      sizeChart(svg, W, H);
      const xs = drawn.map((x) => x.intensity_flop_per_byte).concat([rf.ridge_flop_per_byte]);
      const ys = drawn.map((x) => x.tflops).concat([rf.peak_tflops]);
      const x0 = Math.pow(10, Math.floor(Math.log10(Math.min(...xs) / 2))), x1 = Math.pow(10, Math.ceil(Math.log10(Math.max(...xs) * 2)));
      const y0 = Math.pow(10, Math.floor(Math.log10(Math.max(Math.min(...ys) / 2, 1e-6)))), y1 = Math.pow(10, Math.ceil(Math.log10(Math.max(...ys) * 1.5)));
      const X = (v) => L + ((Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * (W - L - R);
      const Y = (v) => H - B - ((Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * (H - B - T);
      for (let e = Math.log10(x0); e <= Math.log10(x1) + 1e-9; ++e) {
        svg.appendChild(s("line", {class: "grid", x1: X(Math.pow(10, e)), x2: X(Math.pow(10, e)), y1: T, y2: H - B}));
        svg.appendChild(s("text", {class: "muted", x: X(Math.pow(10, e)) - 8, y: H - B + 14, text: String(Math.pow(10, e))}));
      }
      for (let e = Math.log10(y0); e <= Math.log10(y1) + 1e-9; ++e) {
        svg.appendChild(s("line", {class: "grid", x1: L, x2: W - R, y1: Y(Math.pow(10, e)), y2: Y(Math.pow(10, e))}));
        svg.appendChild(s("text", {class: "muted", x: 4, y: Y(Math.pow(10, e)) + 4, text: String(+Math.pow(10, e).toPrecision(3))}));
      }
      svg.appendChild(s("text", {class: "muted", x: (W + L) / 2 - 90, y: H - 6, text: "intensity (FLOP/byte)"}));
      svg.appendChild(s("text", {class: "muted", x: L + 4, y: T + 10, text: "TFLOP/s"}));
      // The roof: bandwidth up to the ridge, then the compute ceiling.
      const roof = (v) => Math.min(rf.peak_tflops, (rf.peak_gbps * v) / 1000);
      const pts = [x0, rf.ridge_flop_per_byte, x1].map((v) => X(v) + "," + Y(Math.max(roof(v), y0)));
      svg.appendChild(s("polyline", {class: "roof", points: pts.join(" ")}));
      svg.appendChild(s("text", {x: X(x1) - 150, y: Y(rf.peak_tflops) - 5, text: rf.precision + " " + fixed(rf.peak_tflops, 0) + " TFLOP/s"}));
      for (const x of drawn) {
        const on = (!only.layer || only.layer === x.name) && (!only.precision || only.precision === x.precision);
        const c = s("circle", {class: "roofpt " + (x.bound || "none") + (on ? "" : " off"), cx: X(x.intensity_flop_per_byte), cy: Y(Math.max(x.tflops, y0)), r: 5, "data-name": x.name});
        c.addEventListener("mousemove", (ev) => showTip(ev, [x.name + (x.instances > 1 ? " x" + x.instances : ""),
          (x.flops / 1e9).toFixed(3) + " GFLOP, " + bytes(x.bytes) + ", intensity " + fixed(x.intensity_flop_per_byte, 1) + " FLOP/byte",
          "achieved " + fixed(x.tflops, 2) + " TFLOP/s, " + fixed(x.gbps, 0) + " GB/s in " + us(x.time_ns) + " us",
          isNum(x.pct_of_bound) ? fixed(x.pct_of_bound, 1) + "% of the measured roof; limiter: " + x.bound + (x.bound === "compute" ? " (the " + x.precision + " ceiling)" : " (device copy bandwidth)") : "no ceiling for it",
          "precision " + (x.precision || "-")]));
        c.addEventListener("mouseleave", hideTip);
        svg.appendChild(c);
        if (on && (only.layer || drawn.length <= 30)) svg.appendChild(s("text", {x: X(x.intensity_flop_per_byte) + 7, y: Y(Math.max(x.tflops, y0)) + 4, text: x.name}));
      }
    }
    sec.appendChild(table([
      {key: "name", label: "layer", cls: "name mono"},
      {key: "instances", label: "x", num: true},
      {key: "flops", label: "GFLOP", num: true, show: (x) => (x.flops / 1e9).toFixed(3)},
      {key: "bytes", label: "MB", num: true, show: (x) => (x.bytes / 1e6).toFixed(2)},
      {key: "intensity_flop_per_byte", label: "FLOP/B", num: true, show: (x) => fixed(x.intensity_flop_per_byte, 1)},
      {key: "time_ns", label: "time us", num: true, show: (x) => us(x.time_ns)},
      {key: "tflops", label: "TFLOP/s", num: true, show: (x) => fixed(x.tflops, 1)},
      {key: "gbps", label: "GB/s", num: true, show: (x) => fixed(x.gbps, 0)},
      {key: "bound", label: "bound"},
      {key: "pct_of_bound", label: "% of roof", num: true, show: (x) => fixed(x.pct_of_bound, 1)},
    ], rows, {id: P + "roofline", sortKey: "time_ns", onRow}));
    if (rf.ceilings && drawn.length) draw();
    return sec;
  }

  // --- laptime.diff/1 ------------------------------------------------------------------------------
  // A row's label as the text report writes it: a SAME whose interval is clear of zero says the
  // bound it stays within ("SAME within ±3%"), a real change under the line.
  function labelWords(x) {
    const w = x.same_within;
    if (!w) return x.label;
    return x.label + " within ±" + (isNum(w.pct) ? w.pct + "%" : w.us + " us");
  }

  function intervalChart(rows, threshold, id) {
    // Each row's change in percent with its 95% interval; the SAME band shaded.
    const svg = s("svg", {class: "chart", role: "img", "aria-label": "changes with their intervals", id});
    const items = rows.filter((x) => isNum(x.change_pct));
    function draw() {
      // The right margin holds the longest label ("SAME within ±3%"), about 7 px a character.
      const R = Math.max(90, 12 + 7 * Math.max(0, ...items.map((x) => labelWords(x).length)));
      const W = Math.min(width(svg.parentNode || main, 1100), 1100), ROWH = 20, L = 260, T = 24;
      const H = T + items.length * ROWH + 10;
      sizeChart(svg, W, H);
      let lo = -threshold * 2, hi = threshold * 2;
      for (const x of items) {
        lo = Math.min(lo, x.change_pct, x.ci_pct ? x.ci_pct[0] : x.change_pct);
        hi = Math.max(hi, x.change_pct, x.ci_pct ? x.ci_pct[1] : x.change_pct);
      }
      const pad = (hi - lo) * 0.05;
      lo -= pad;
      hi += pad;
      const X = (v) => L + ((v - lo) / (hi - lo)) * (W - L - R);
      svg.appendChild(s("rect", {class: "band", x: X(-threshold), y: T - 6, width: X(threshold) - X(-threshold), height: H - T}));
      const step = tickStep(hi - lo, 8);
      for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) {
        svg.appendChild(s("line", {class: v === 0 ? "axis" : "grid", x1: X(v), x2: X(v), y1: T - 6, y2: H - 4}));
        svg.appendChild(s("text", {class: "muted", x: X(v) - 10, y: T - 10, text: signed(+v.toPrecision(6), Math.max(0, -Math.floor(Math.log10(step)))) + "%"}));
      }
      items.forEach((x, i) => {
        const yy = T + i * ROWH + ROWH / 2;
        const name = (x.whole_iteration ? "whole iteration" : x.name);
        svg.appendChild(s("text", {x: 4, y: yy + 4, text: name.length > 40 ? name.slice(0, 39) + "~" : name}, s("title", {text: name})));
        if (x.ci_pct) svg.appendChild(s("line", {class: "ci " + x.label, x1: X(x.ci_pct[0]), x2: X(x.ci_pct[1]), y1: yy, y2: yy}));
        const c = s("circle", {class: "pt " + x.label, cx: X(x.change_pct), cy: yy, r: 4});
        c.addEventListener("mousemove", (ev) => showTip(ev, [name + ": " + labelWords(x), signed(x.change_pct, 2) + "% (" + signed(x.change_ns / 1e3, 1) + " us)" + (x.ci_pct ? ", 95% interval [" + signed(x.ci_pct[0], 2) + "%, " + signed(x.ci_pct[1], 2) + "%]" : ""),
          ms(x.before_ns) + " -> " + ms(x.after_ns) + " ms"]));
        c.addEventListener("mouseleave", hideTip);
        svg.appendChild(c);
        svg.appendChild(s("text", {class: "label-" + x.label, x: W - R + 6, y: yy + 4, text: labelWords(x)}));
      });
    }
    return {element: svg, draw};
  }

  function renderDiff(d, into, P) {
    P = P || "";
    const whole = d.rows[0];
    into.appendChild(h("section", {class: "verdict", id: P + "verdict"},
      h("h2", null, "Lap: ", h("span", {class: "bound " + whole.label, text: labelWords(whole)})),
      h("div", {class: "answers"},
        h("div", {class: "answer"}, h("div", {class: "q", text: "before (" + d.before.measure + ")"}), h("div", {class: "v"}, evidence(ms(whole.before_ns) + " ms", P + "diffrows-r0")), h("div", {class: "d", text: d.before.file + ", " + d.before.steady_iterations + " steady"})),
        h("div", {class: "answer"}, h("div", {class: "q", text: "after (" + d.after.measure + ")"}), h("div", {class: "v"}, evidence(ms(whole.after_ns) + " ms", P + "diffrows-r0")), h("div", {class: "d", text: d.after.file + ", " + d.after.steady_iterations + " steady"})),
        h("div", {class: "answer"}, h("div", {class: "q", text: "change, 95% interval"}), h("div", {class: "v"}, evidence(signed(whole.change_pct, 2) + "%", P + "diffrows-r0")),
          h("div", {class: "d", text: whole.ci_pct ? "[" + signed(whole.ci_pct[0], 2) + "%, " + signed(whole.ci_pct[1], 2) + "%]; the SAME band ±" + d.method.threshold_pct + "%" : ""})),
        h("div", {class: "answer"}, h("div", {class: "q", text: "layers"}), h("div", {class: "v"}, evidence(d.rows.filter((x) => !x.whole_iteration && x.label === "SLOWER").length + " slower, " + d.rows.filter((x) => !x.whole_iteration && x.label === "FASTER").length + " faster", P + "sec-changes")),
          h("div", {class: "d", text: (d.rows.length - 1) + " layers compared" + (d.rows_omitted ? " (" + d.rows_omitted + " more not in the JSON)" : "")})),
        d.energy ? h("div", {class: "answer", id: P + "answer-energy"}, h("div", {class: "q", text: "energy per forward"}),
          h("div", {class: "v"}, signed(d.energy.change_pct, 1) + "% ", h("span", {class: "small label-" + d.energy.label, text: labelWords(d.energy)})),
          h("div", {class: "d", text: fixed(d.energy.before_j, 3) + " -> " + fixed(d.energy.after_j, 3) + " J" + (d.energy.ci_pct ? ", 95% interval [" + signed(d.energy.ci_pct[0], 1) + "%, " + signed(d.energy.ci_pct[1], 1) + "%]" : "")})) : null)));
    into.appendChild(notesList((d.notes || []).concat((d.differences || []).map((x) => x.what + ": " + x.before + " -> " + x.after))));
    if (d.gate) into.appendChild(h("p", {class: d.gate.failed ? "bad" : "good", text: "gate --fail-if-slower " + d.gate.fail_if_slower_pct + "%: " + (d.gate.failed ? "FAILED: " + d.gate.reasons.join("; ") : "passed")}));

    // Both laps: every steady iteration of each side.
    const [lapSec, lapSvg] = chartSection(into, P + "sec-laps", "Both laps (every steady iteration)", "both laps");
    function drawLaps() {
      const W = width(lapSec, 1100), L = 90, R = 20, H = 96;
      sizeChart(lapSvg, W, H);
      const all = d.before.iteration_ns.concat(d.after.iteration_ns);
      if (!all.length) return;
      let lo = Math.min(...all), hi = Math.max(...all);
      const pad = Math.max((hi - lo) * 0.05, 1);
      lo -= pad;
      hi += pad;
      const X = (v) => L + ((v - lo) / (hi - lo)) * (W - L - R);
      const step = tickStep((hi - lo) / 1e6, 8);
      for (let v = Math.ceil(lo / 1e6 / step) * step; v <= hi / 1e6; v += step) {
        lapSvg.appendChild(s("line", {class: "grid", x1: X(v * 1e6), x2: X(v * 1e6), y1: 10, y2: H - 18}));
        lapSvg.appendChild(s("text", {class: "muted", x: X(v * 1e6) - 12, y: H - 4, text: +v.toPrecision(6) + " ms"}));
      }
      [["before", d.before, 28, whole.before_ns], ["after", d.after, 62, whole.after_ns]].forEach(([label, side, yy, median]) => {
        lapSvg.appendChild(s("text", {x: 4, y: yy + 4, text: label}));
        for (const v of side.iteration_ns) lapSvg.appendChild(s("circle", {class: "pt", cx: X(v), cy: yy, r: 2.5, opacity: 0.6}));
        lapSvg.appendChild(s("line", {class: "ci " + (label === "after" ? whole.label : ""), x1: X(median), x2: X(median), y1: yy - 12, y2: yy + 12}));
      });
    }
    // Each layer's change with its interval.
    const chart = intervalChart(d.rows, d.method.threshold_pct, P + "diffchart");
    into.appendChild(section(P + "sec-changes", "Per layer: change and its 95% interval (shaded: the SAME band, ±" + d.method.threshold_pct + "%)", chart.element,
      table([
        {key: "name", label: "layer", cls: "name mono", show: (x) => (x.whole_iteration ? "whole iteration" : x.name)},
        {key: "label", label: "", show: (x) => h("span", {class: "label-" + x.label, text: labelWords(x)})},
        {key: "before_ns", label: "before ms", num: true, show: (x) => ms(x.before_ns)},
        {key: "after_ns", label: "after ms", num: true, show: (x) => ms(x.after_ns)},
        {key: "change_ns", label: "change us", num: true, show: (x) => signed(x.change_ns / 1e3, 1)},
        {key: "change_pct", label: "change", num: true, show: (x) => signed(x.change_pct, 2) + "%"},
        {key: "ci", label: "95% interval", num: true, value: (x) => (x.ci_pct ? x.ci_pct[0] : null), show: (x) => (x.ci_pct ? "[" + signed(x.ci_pct[0], 2) + "%, " + signed(x.ci_pct[1], 2) + "%]" : "-")},
        {key: "note", label: "kernels", show: (x) => x.kernel_note || ""},
      ], d.rows, {id: P + "diffrows", sortKey: null})));
    drawLaps();
    chart.draw();
    window.addEventListener("resize", () => {
      drawLaps();
      chart.draw();
    });
  }

  // --- laptime.job/1 --------------------------------------------------------------------------------
  function renderJob(j, into) {
    const sum = j.job;
    const rows = j.reports;
    const sp = sum.spread;
    into.appendChild(h("section", {class: "verdict", id: "verdict"},
      h("h2", {text: rows.length + " reports of one job"}),
      h("div", {class: "answers"},
        h("div", {class: "answer"}, h("div", {class: "q", text: "slowest over the median report"}), h("div", {class: "v"}, sp ? evidence(pct(sp.slowest_over_median_pct, 1), "reports-r" + sp.slowest.row) : "-"),
          h("div", {class: "d", text: sp ? sp.slowest.file + ": " + fixed(sp.slowest.lap_ms, 3) + " ms against " + fixed(sp.median.lap_ms, 3) : "fewer than two reports with a lap"})),
        h("div", {class: "answer"}, h("div", {class: "q", text: "slowest over the fastest"}), h("div", {class: "v"}, sp ? evidence(pct(sp.slowest_over_fastest_pct, 1), "reports-r" + sp.fastest.row) : "-"),
          h("div", {class: "d", text: sp ? sp.fastest.file + ": " + fixed(sp.fastest.lap_ms, 3) + " ms" : ""})),
        h("div", {class: "answer"}, h("div", {class: "q", text: "the straggler's layer"}), h("div", {class: "v"}, sum.straggler && sum.straggler.layer ? evidence(sum.straggler.layer, "sec-straggler") : "-"),
          h("div", {class: "d", text: sum.straggler ? sum.straggler.slowest.file + " against the median report, " + sum.straggler.median.file + " (below)" : ""}))),
      sum.gate ? h("p", {class: sum.gate.failed ? "bad" : "good", text: "gate --fail-if-spread " + sum.gate.fail_if_spread_pct + "%: " + (sum.gate.failed ? "FAILED: " + sum.gate.reason : "passed")}) : null));
    into.appendChild(notesList(sum.notes));
    // The spread: each report's lap on one axis.
    const [spreadSec, svg] = chartSection(into, "sec-spread", "The spread: each report's lap", "spread");
    function drawSpread() {
      const W = width(spreadSec, 1100), L = 30, R = 30, H = 78;
      sizeChart(svg, W, H);
      const laps = rows.map((x) => x.lap_ms).filter(isNum);
      if (!laps.length) return;
      let lo = Math.min(...laps), hi = Math.max(...laps);
      const pad = Math.max((hi - lo) * 0.08, lo * 0.005, 1e-6);
      lo -= pad;
      hi += pad;
      const X = (v) => L + ((v - lo) / (hi - lo)) * (W - L - R);
      const step = tickStep(hi - lo, 8);
      for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) {
        svg.appendChild(s("line", {class: "grid", x1: X(v), x2: X(v), y1: 20, y2: H - 18}));
        svg.appendChild(s("text", {class: "muted", x: X(v) - 14, y: H - 4, text: +v.toPrecision(6) + " ms"}));
      }
      if (sp) svg.appendChild(s("line", {class: "axis", x1: X(sp.median.lap_ms), x2: X(sp.median.lap_ms), y1: 20, y2: H - 30}));
      rows.forEach((x, i) => {
        if (!isNum(x.lap_ms)) return;
        const c = s("circle", {class: "pt" + (sp && i === sp.slowest.row ? " SLOWER" : sp && i === sp.fastest.row ? " FASTER" : ""), cx: X(x.lap_ms), cy: 32, r: 5});
        c.addEventListener("mousemove", (ev) => showTip(ev, [x.file + (isNum(x.pid) ? " pid " + x.pid : ""), fixed(x.lap_ms, 3) + " ms, fill " + pct(x.span_fill_pct) + ", " + x.bound]));
        c.addEventListener("mouseleave", hideTip);
        c.addEventListener("click", () => goToRow("reports-r" + i));
        svg.appendChild(c);
        const role = !sp ? "" : i === sp.slowest.row ? "slowest" : i === sp.fastest.row ? "fastest" : i === sp.median.row ? "median" : "";
        if (role) svg.appendChild(s("text", {class: "muted", x: X(x.lap_ms) - 14, y: 16 + (role === "median" ? 30 : 0), text: role}));
      });
    }
    into.appendChild(section("sec-reports", "Reports",
      table([
        {key: "file", label: "report", cls: "name mono"},
        {key: "pid", label: "pid", num: true},
        {key: "lap_ms", label: "lap ms", num: true, show: (x) => fixed(x.lap_ms, 3)},
        {key: "span_fill_pct", label: "fill", num: true, show: (x) => pct(x.span_fill_pct)},
        {key: "bound", label: "verdict"},
        {key: "steady_iterations", label: "steady", num: true},
        {key: "gpu", label: "GPU"},
      ], rows, {id: "reports", sortKey: "lap_ms"})));
    drawSpread();
    window.addEventListener("resize", drawSpread);
    if (sum.straggler) {
      const st = sum.straggler;
      const sec = section("sec-straggler", "The straggler's layers: " + st.slowest.file + " against the median report " + st.median.file);
      sec.appendChild(h("p", {text: st.sentence}));
      if (st.command) sec.appendChild(h("p", null, "to see it: ", h("code", {text: st.command})));
      into.appendChild(sec);
      const inner = h("div");
      sec.appendChild(inner);
      renderDiff(st.diff, inner, "straggler-");
    }
  }

  // --- laptime.kernels/1 and laptime.kernels.diff/1 -------------------------------------------------
  function solBar(v) {
    if (!isNum(v)) return "-";
    return h("span", {class: "sol"}, h("span", {class: "barbox"}, h("span", {class: "bar", style: "width:" + Math.max(0, Math.min(100, v)).toFixed(1) + "%"})), v.toFixed(1) + "%");
  }
  function renderKernels(k, into) {
    into.appendChild(h("section", {class: "verdict", id: "verdict"},
      h("h2", {text: "Nsight Compute, per layer: " + k.layers.length + " layers, " + k.kernels + " kernels, " + ms(k.time_ns) + " ms"}),
      h("p", {class: "meta", text: [k.source, k.gpu, k.time].filter(Boolean).join(" · ")})));
    into.appendChild(notesList(k.notes));
    const detail = h("div");
    into.appendChild(section("sec-layers", "Layers, with speed of light (% of each unit's peak)",
      table([
        {key: "name", label: "layer", cls: "name mono"},
        {key: "kernels", label: "kernels", num: true},
        {key: "time_ns", label: "us", num: true, show: (x) => us(x.time_ns)},
        {key: "share", label: "share", num: true, show: (x) => pct(100 * x.share)},
        {key: "dram_gbps", label: "DRAM GB/s", num: true, show: (x) => fixed(x.dram_gbps, 0)},
        {key: "sol_dram", label: "DRAM", value: (x) => x.speed_of_light.dram_pct, show: (x) => solBar(x.speed_of_light.dram_pct)},
        {key: "sol_mem", label: "memory", value: (x) => x.speed_of_light.memory_pct, show: (x) => solBar(x.speed_of_light.memory_pct)},
        {key: "sol_compute", label: "compute", value: (x) => x.speed_of_light.compute_pct, show: (x) => solBar(x.speed_of_light.compute_pct)},
        {key: "sol_tensor", label: "tensor", value: (x) => x.speed_of_light.tensor_pct, show: (x) => solBar(x.speed_of_light.tensor_pct)},
        {key: "occ", label: "occupancy", num: true, value: (x) => x.occupancy.achieved_pct, show: (x) => pct(x.occupancy.achieved_pct, 0)},
        {key: "diagnosis", label: "diagnosis", cls: "wide", value: (x) => x.diagnosis.rule, show: (x) => x.diagnosis.text},
      ], k.layers, {id: "layers", sortKey: "time_ns", onRow: (x) => {
        detail.textContent = "";
        if (!x) return;
        detail.appendChild(h("h3", {text: x.name + ": its kernels"}));
        detail.appendChild(table([
          {key: "name", label: "kernel", cls: "name mono", value: (q) => q.name || q.kernel},
          {key: "time_ns", label: "us", num: true, show: (q) => us(q.time_ns)},
        ], Array.isArray(x.kernel_list) ? x.kernel_list : [], {id: "layerkernels", sortKey: "time_ns"}));
      }}), detail));
  }
  function renderKernelsDiff(k, into) {
    const sideText = (x) => x.source + ": " + x.kernels + " kernels, " + us(x.time_ns) + " us";
    into.appendChild(h("section", {class: "verdict", id: "verdict"},
      h("h2", {text: "Nsight Compute, two reports per layer"}),
      h("p", {class: "meta", text: "A: " + sideText(k.a)}), h("p", {class: "meta", text: "B: " + sideText(k.b)}),
      h("div", {class: "answers"},
        h("div", {class: "answer"}, h("div", {class: "q", text: "B against A, all layers"}), h("div", {class: "v", text: signed(k.a.time_ns ? (100 * (k.b.time_ns - k.a.time_ns)) / k.a.time_ns : null, 1) + "%"}),
          h("div", {class: "d", text: us(k.a.time_ns) + " -> " + us(k.b.time_ns) + " us of kernel time"})))));
    into.appendChild(notesList(k.notes));
    const side = (x, f) => (x ? f(x) : null);
    const sol = (x, key) => side(x, (y) => y.speed_of_light[key]);
    into.appendChild(section("sec-layers", "Layers: A -> B",
      table([
        {key: "name", label: "layer", cls: "name mono"},
        {key: "a_us", label: "A us", num: true, value: (x) => side(x.a, (y) => y.time_ns), show: (x) => us(side(x.a, (y) => y.time_ns))},
        {key: "b_us", label: "B us", num: true, value: (x) => side(x.b, (y) => y.time_ns), show: (x) => us(side(x.b, (y) => y.time_ns))},
        {key: "change_pct", label: "change", num: true, value: (x) => (x.change ? x.change.time_pct : null), show: (x) => (x.change && isNum(x.change.time_pct) ? signed(x.change.time_pct, 1) + "%" : "-")},
        {key: "dram", label: "DRAM SOL A -> B", value: (x) => sol(x.b, "dram_pct"), show: (x) => pct(sol(x.a, "dram_pct")) + " -> " + pct(sol(x.b, "dram_pct"))},
        {key: "compute", label: "compute SOL A -> B", value: (x) => sol(x.b, "compute_pct"), show: (x) => pct(sol(x.a, "compute_pct")) + " -> " + pct(sol(x.b, "compute_pct"))},
        {key: "occ", label: "occupancy A -> B", value: (x) => side(x.b, (y) => y.occupancy.achieved_pct), show: (x) => pct(side(x.a, (y) => y.occupancy.achieved_pct), 0) + " -> " + pct(side(x.b, (y) => y.occupancy.achieved_pct), 0)},
        {key: "kernels", label: "kernels gone / new", value: (x) => (x.gone || []).length + (x.new || []).length, show: (x) => [(x.gone || []).map((n) => "- " + (n.name || n)).join(", "), (x.new || []).map((n) => "+ " + (n.name || n)).join(", ")].filter(Boolean).join("; ")},
      ], k.layers || [], {id: "layers", sortKey: null})));
  }

  // --- laptime.lab/1 ----------------------------------------------------------------------------
  function renderLab(l, into) {
    into.appendChild(h("section", {class: "verdict", id: "verdict"},
      h("h2", {text: l.kernel + ", " + l.precision + ", on " + l.gpu}),
      h("p", {text: l.summary}),
      h("p", {class: "meta", text: l.roofs ? "roofs: DRAM " + fixed(l.roofs.dram_gbps, 0) + " GB/s, " + l.precision + " compute " + fixed(l.roofs.compute_tflops, 1) + " TFLOP/s, from " + l.roofs.source : "roofs: " + l.roofs_note}),
      h("p", {class: "meta", text: l.once ? "one call a version (--once): not timed" : "timing: " + l.timing.method + "; " + l.timing.statistic + ", until within ±" + fixed(100 * l.timing.target_half_width, 1) + "%"}),
      l.once || !l.timing.stopping_rule ? null : h("p", {class: "meta", text: "stopping rule: " + l.timing.stopping_rule}),
      l.once || !l.timing.clock ? null : h("p", {class: "meta", text: "MHz: " + l.timing.clock})));
    l.shapes.forEach((shape, si) => {
      const sec = section("shape-" + si, shape.label + ": " + shape.dims);
      const moved = shape.bytes.read + shape.bytes.written;
      sec.appendChild(h("p", {class: "meta", text: "must move " + bytes(moved) + (shape.flops > 0 ? " and compute " + (shape.flops / 1e9).toFixed(2) + " GFLOP" : "")}));
      const rungs = [];
      l.versions.forEach((v) => {
        for (const t of v.timings) if (t.shape === si) rungs.push({v, t});
      });
      const roofs = [];
      if (l.roofs && l.roofs.dram_gbps > 0) roofs.push({label: "DRAM roof", us: moved / (l.roofs.dram_gbps * 1e3)});
      if (l.roofs && l.roofs.compute_tflops > 0 && shape.flops > 0) roofs.push({label: "compute roof", us: shape.flops / (l.roofs.compute_tflops * 1e6)});
      if (rungs.length) {
        const svg = s("svg", {class: "chart", role: "img", "aria-label": "ladder " + shape.label});
        sec.appendChild(svg);
        const draw = () => {
          // The label column fits the longest name (a learner's file name is longer than v6), to a limit.
          const longest = Math.max(...rungs.map(({v}) => v.id.length + (v.production ? 1 : 0)));
          const W = Math.min(width(sec, 1000), 1000), L = Math.min(Math.max(70, 7 * longest + 12), 240), R = 170, ROWH = 24, T = 14 + 14 * roofs.length;
          const H = T + rungs.length * ROWH + 22;
          sizeChart(svg, W, H);
          const values = rungs.map((x) => x.t.ci95_us[1]).concat(rungs.map((x) => x.t.ci95_us[0]), roofs.map((x) => x.us)).filter((v) => v > 0);
          const hi = Math.max(...values) * 1.05, lo = Math.min(...values) / 1.5;
          // A ladder spans decades (a plain version 500x production): a log axis keeps every rung visible.
          const log = hi / lo > 20;
          const X = log ? (v) => L + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (W - L - R)
                        : (v) => L + (v / hi) * (W - L - R);
          const ticks = [];
          if (log) for (let e = Math.ceil(Math.log10(lo)); e <= Math.log10(hi); ++e) ticks.push(Math.pow(10, e));
          else for (let v = 0, step = tickStep(hi, 8); v <= hi; v += step) ticks.push(v);
          for (const v of ticks) {
            svg.appendChild(s("line", {class: "grid", x1: X(v), x2: X(v), y1: T - 4, y2: H - 18}));
            svg.appendChild(s("text", {class: "muted", x: X(v) - 6, y: H - 4, text: String(+v.toPrecision(6))}));
          }
          svg.appendChild(s("text", {class: "muted", x: 4, y: H - 4, text: "us" + (log ? ", log" : "")}));
          const x0 = log ? L : X(0);
          rungs.forEach(({v, t}, i) => {
            const yy = T + i * ROWH;
            const name = v.id + (v.production ? "*" : ""), fits = Math.floor((L - 10) / 7);
            svg.appendChild(s("text", {x: 4, y: yy + 14, text: name.length <= fits ? name : name.slice(0, fits - 1) + "~"}, s("title", {text: name + ": " + v.title})));
            const bar = s("rect", {class: "lbar" + (v.production ? " prod" : ""), x: x0, y: yy + 3, width: Math.max(X(t.median_us) - x0, 1), height: ROWH - 8});
            bar.addEventListener("mousemove", (ev) => showTip(ev, [v.id + ": " + v.title, fixed(t.median_us, 2) + " us, 95% [" + fixed(t.ci95_us[0], 2) + ", " + fixed(t.ci95_us[1], 2) + "] over " + t.calls + " calls",
              fixed(t.gbps, 0) + " GB/s (" + pct(t.dram_pct) + " of DRAM)" + (shape.flops > 0 ? ", " + fixed(t.tflops, 1) + " TFLOP/s (" + pct(t.compute_pct) + " of compute)" : ""),
              (isNum(t.vs_previous) ? t.vs_previous.toFixed(2) + "x the version before" : "") + (isNum(t.vs_production) ? ", " + t.vs_production.toFixed(2) + "x production" : "")]));
            bar.addEventListener("mouseleave", hideTip);
            svg.appendChild(bar);
            svg.appendChild(s("line", {class: "ci", x1: X(t.ci95_us[0]), x2: X(t.ci95_us[1]), y1: yy + ROWH / 2 - 1, y2: yy + ROWH / 2 - 1}));
            svg.appendChild(s("text", {x: X(t.ci95_us[1]) + 6, y: yy + 14, text: fixed(t.median_us, 2) + " us" + (isNum(t.dram_pct) ? ", " + pct(t.dram_pct, 0) + " DRAM" : "") + (t.converged ? "" : " ~")}));
          });
          roofs.forEach((roof, k) => {
            svg.appendChild(s("line", {class: "rooftime", x1: X(roof.us), x2: X(roof.us), y1: 14 * k + 8, y2: H - 18}));
            svg.appendChild(s("text", {class: "synclabel", x: X(roof.us) + 3, y: 14 * k + 12, text: roof.label + " " + fixed(roof.us, 2) + " us"}));
          });
        };
        draw();
        window.addEventListener("resize", draw);
      } else sec.appendChild(h("p", {class: "empty", text: l.once ? "not timed (--once)" : "no version passed its checks here: nothing timed"}));
      sec.appendChild(table([
        {key: "id", label: "version", value: (x) => x.v.id, show: (x) => x.v.id + (x.v.production ? "*" : "")},
        {key: "median", label: "cold us", title: "median, the L2 cache flushed before each call", num: true, value: (x) => x.t.median_us, show: (x) => fixed(x.t.median_us, 2)},
        {key: "ci", label: "95% interval", num: true, value: (x) => x.t.ci95_us[0], show: (x) => "[" + fixed(x.t.ci95_us[0], 2) + ", " + fixed(x.t.ci95_us[1], 2) + "]"},
        {key: "calls", label: "calls", num: true, value: (x) => x.t.calls},
        {key: "hot", label: "hot us", title: "median, inputs just written (no flush)", num: true, value: (x) => (x.t.hot ? x.t.hot.median_us : null), show: (x) => (x.t.hot ? fixed(x.t.hot.median_us, 2) : "-")},
        {key: "gbps", label: "GB/s", num: true, value: (x) => x.t.gbps, show: (x) => fixed(x.t.gbps, 0)},
        {key: "dram", label: "DRAM", num: true, value: (x) => x.t.dram_pct, show: (x) => pct(x.t.dram_pct)},
        {key: "tflops", label: "TFLOP/s", num: true, value: (x) => x.t.tflops, show: (x) => (shape.flops > 0 ? fixed(x.t.tflops, 1) : "-")},
        {key: "compute", label: "compute", num: true, value: (x) => x.t.compute_pct, show: (x) => pct(x.t.compute_pct)},
        {key: "prev", label: "vs prev", num: true, value: (x) => x.t.vs_previous, show: (x) => (isNum(x.t.vs_previous) ? x.t.vs_previous.toFixed(2) + "x" : "-")},
        {key: "prod", label: "vs prod", num: true, value: (x) => x.t.vs_production, show: (x) => (isNum(x.t.vs_production) ? x.t.vs_production.toFixed(2) + "x" : "-")},
        {key: "best", label: "vs best", num: true, value: (x) => x.t.vs_best, show: (x) => (isNum(x.t.vs_best) ? x.t.vs_best.toFixed(2) + "x" : "-")},
        {key: "mhz", label: "MHz", title: "the SM clock (NVML) while it was timed, the median reading", num: true, value: (x) => (x.t.clock ? x.t.clock.sm_mhz_median : null),
         show: (x) => (x.t.clock ? String(x.t.clock.sm_mhz_median) + (x.t.clock.throttled_by ? " (" + x.t.clock.throttled_by + ")" : "") : "-")},
        {key: "title", label: "what it does", value: (x) => x.v.title, show: (x) => x.v.title + fileWords(x.v)},
      ], rungs, {id: "ladder-" + si, sortKey: null}));
      into.appendChild(sec);
    });
    into.appendChild(section("sec-checks", "Checks against the CPU reference", table([
      {key: "id", label: "version", show: (v) => v.id + (v.production ? "*" : "")},
      {key: "status", label: "status", show: (v) => h("span", {class: v.status === "FAILED" ? "bad" : v.status === "passed" ? "good" : "", text: v.status})},
      {key: "checks", label: "checks", num: true, value: (v) => v.checks.filter((c) => !c.skipped).length},
      {key: "worst", label: "worst error", num: true, value: worstError, show: (v) => cExp(worstError(v), 1)},
      {key: "title", label: "what it does", show: (v) => v.title + fileWords(v)},
      {key: "why", label: "why it failed, or n/a", value: failure},
    ], l.versions, {id: "checks", sortKey: null})));
  }

  // A learner's file (--try): its hash and how it was compiled, as the text report's second line.
  function fileWords(v) {
    return v.file ? " (sha256 " + v.file.sha256.slice(0, 16) + ", " + v.file.compiled + ")" : "";
  }
  // Why a version FAILED, as the text report says it: the first failing check's shape, inputs and
  // detail; or why it does not apply here (n/a).
  function failure(v) {
    if (v.status === "n/a") return v.refusal;
    if (v.status !== "FAILED") return "";
    const c = v.checks.find((x) => !x.passed && !x.skipped);
    if (!c) return "";
    const over = isNum(c.rel_error) && c.rel_error > c.bound ? "error " + cExp(c.rel_error, 1) + " > " + cExp(c.bound, 0) + "; " : "";
    return c.shape + ", " + c.inputs + " inputs: " + over + c.detail;
  }
  // The largest error of a version's checks that ran (0 when none has one), as the text's "worst".
  function worstError(v) {
    return Math.max(0, ...v.checks.filter((c) => !c.skipped && isNum(c.rel_error)).map((c) => c.rel_error));
  }
  // A number as C's %.Ne writes it (9.8e+00), as the text report does.
  function cExp(x, digits) {
    const [m, e] = x.toExponential(digits).split("e");
    const n = Math.abs(+e);
    return m + "e" + (+e < 0 ? "-" : "+") + (n < 10 ? "0" : "") + n;
  }

  // --- the page -----------------------------------------------------------------------------------
  function render() {
    const started = performance.now();
    const data = JSON.parse(dataElement.textContent);
    document.title = title;
    main.appendChild(h("header", null, h("h1", {text: title}),
      h("p", {class: "meta", text: [data.source, data.gpu, data.program].filter(Boolean).join(" · ")})));
    const schema = data.schema;
    if (schema === "laptime.analyze/1" && Array.isArray(data.processes)) {
      main.appendChild(notesList(data.notes));
      const pick = h("select", {"aria-label": "process"}, data.processes.map((p, i) => h("option", {value: i, text: "process " + p.pid + (p.process ? " (" + p.process + ")" : "") + ": " + (p.verdict ? p.verdict.bound : "")})));
      main.appendChild(h("p", null, data.processes.length + " processes, each with its own loop: ", pick));
      const holder = h("div");
      main.appendChild(holder);
      const show = () => {
        holder.textContent = "";
        rowActions.clear();
        renderAnalyze(data.processes[+pick.value], holder, "p" + pick.value + "-");
      };
      pick.addEventListener("change", show);
      show();
    } else if (schema === "laptime.analyze/1") renderAnalyze(data, main, "");
    else if (schema === "laptime.job/1") renderJob(data, main);
    else if (schema === "laptime.diff/1") renderDiff(data, main, "");
    else if (schema === "laptime.kernels/1") renderKernels(data, main);
    else if (schema === "laptime.kernels.diff/1") renderKernelsDiff(data, main);
    else if (schema === "laptime.lab/1") renderLab(data, main);
    else main.appendChild(h("p", {class: "empty", text: "This page does not know the schema " + String(schema) + "."}));
    main.appendChild(h("p", {class: "hint", text: "Drawn from the " + String(schema) + " document embedded in this file (what --json writes for the same command)."}));
    document.documentElement.setAttribute("data-rendered-ms", (performance.now() - started).toFixed(1));
  }
  render();
}
