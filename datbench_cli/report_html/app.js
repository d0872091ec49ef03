"use strict";
(function () {
  var D = JSON.parse(document.getElementById("datbench-data").textContent);
  var PAGE = 50;
  var B = D.browser;
  var state = { filters: {}, q: "", sort: "", dir: "desc", page: 0 };
  var haystacks = null;

  // Untrusted text as shown_text.plain shows it on the terminal: control, bidirectional and
  // invisible characters (and lone surrogates) as escapes ("\u202e"), so an override cannot
  // reverse what follows it; tab, newline and carriage return stay. The data keeps the text.
  var CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ud800-\udfff\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;
  function hex(code, digits) { return ("0000000" + code.toString(16)).slice(-digits); }
  function shown(text) {
    return String(text).replace(CONTROL, function (c) {
      var code = c.codePointAt(0);
      return code < 0x100 ? "\\x" + hex(code, 2) : code < 0x10000 ? "\\u" + hex(code, 4) : "\\U" + hex(code, 8);
    });
  }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = shown(text);
    return node;
  }
  function pct(v) { return v === null || v === undefined ? "-" : (v * 100).toFixed(2) + "%"; }
  function num(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(4);
    return String(v);
  }
  function cell(value) {
    var td = el("td");
    if (value !== null && typeof value === "object" && value.facet) {
      var b = el("button", "link", value.t);
      b.type = "button";
      b.addEventListener("click", function () { filterTo(value.facet, value.value); });
      td.appendChild(b);
    } else if (value !== null && typeof value === "object" && "t" in value) {
      td.textContent = shown(value.t);
    } else if (value !== null && typeof value === "object" && "p" in value) {
      td.textContent = (value.s && value.p > 0 ? "+" : "") + pct(value.p);
      td.dataset.value = String(value.p);
    } else {
      td.textContent = shown(num(value));
    }
    return td;
  }
  // A cell holding a word too long for any column (a 5,000-character dataset name) may break
  // it anywhere, else the table grows as wide as the word; other cells keep their words (and
  // numbers) whole.
  function fit(td) {
    if (/\S{60}/.test(td.textContent)) td.classList.add("long");
    return td;
  }
  function table(cols, rows, defectCol) {
    var t = el("table");
    var head = el("tr");
    cols.forEach(function (c) { head.appendChild(el("th", null, c)); });
    var thead = el("thead"); thead.appendChild(head); t.appendChild(thead);
    var body = el("tbody");
    rows.forEach(function (r) {
      var tr = el("tr");
      r.forEach(function (v, i) {
        var td = cell(v);
        if (i === defectCol && td.textContent) td.className = "defect";
        tr.appendChild(fit(td));
      });
      body.appendChild(tr);
    });
    t.appendChild(body);
    return t;
  }

  function summary() {
    document.getElementById("title").textContent = shown(D.title);
    document.getElementById("subtitle").textContent = shown(D.subtitle || "");
    var cards = document.getElementById("headline");
    (D.headline || []).forEach(function (h) {
      var c = el("div", "card");
      c.dataset.key = h.key;
      c.appendChild(el("div", "label", h.label));
      var v = el("div", "value", pct(h.value));
      v.dataset.value = h.value === null ? "null" : String(h.value);
      c.appendChild(v);
      if (h.ci) c.appendChild(el("div", "ci", "95% interval [" + pct(h.ci[0]) + ", " + pct(h.ci[1]) + "]"));
      if (h.n !== null && h.n !== undefined) c.appendChild(el("div", "n", "n = " + h.n));
      if (h.coverage) c.appendChild(el("div", "cov", "coverage: " + h.coverage));
      cards.appendChild(c);
    });
    var charts = document.getElementById("charts");
    (D.charts || []).forEach(function (ch) { charts.appendChild(chart(ch)); });
    var tables = document.getElementById("tables");
    (D.tables || []).forEach(function (t) {
      tables.appendChild(el("h2", null, t.title));
      tables.appendChild(table(t.cols, t.rows, t.defect_col));
    });
    var acc = document.querySelector("#accounting tbody");
    if (!D.accounting || !D.accounting.length) document.getElementById("accounting-wrap").hidden = true;
    (D.accounting || []).forEach(function (a) {
      var tr = el("tr");
      tr.dataset.key = a.key;
      var td = el("td");
      if (a.facet && a.value && hasValue(a.facet, a.match)) {
        var b = el("button", "link", num(a.value));
        b.type = "button";
        b.addEventListener("click", function () { clearFilters(); filterTo(a.facet, a.match); });
        td.appendChild(b);
        // What the link selects, said beside a number that counts something else (turns or
        // rubrics of tasks, samples of a combined status): no number reads as what it shows.
        var shows = carrying(a.facet, a.match);
        td.dataset.shows = String(shows);
        if (shows !== a.value) {
          td.appendChild(el("span", "muted", " (shows " + shows + " " + (B.unit || "sample") + (shows === 1 ? "" : "s") + ": " + a.match + ")"));
        }
      } else { td.textContent = shown(num(a.value)); }
      tr.appendChild(td);
      tr.appendChild(el("td", null, a.label));
      tr.appendChild(el("td", "muted", a.key));
      acc.appendChild(tr);
    });
    var notes = document.getElementById("notes");
    (D.notes || []).forEach(function (n) { notes.appendChild(el("p", "muted", n)); });
    var prov = document.querySelector("#provenance tbody");
    if (!D.provenance || !D.provenance.length) {
      document.getElementById("provenance-wrap").appendChild(el("p", "muted", "This report has no provenance block."));
    }
    (D.provenance || []).forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("th", null, r[0]));
      tr.appendChild(fit(el("td", null, r[1])));
      prov.appendChild(tr);
    });
  }

  var SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    var n = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { n.setAttribute(k, String(attrs[k])); });
    return n;
  }
  function chart(ch) {
    var wrap = el("div", "chart");
    wrap.appendChild(el("h2", null, ch.title));
    var rowH = 22, left = 160, width = 720, plot = width - left - 220;
    var s = svg("svg", { width: width, height: ch.bars.length * rowH + 24, role: "img" });
    s.setAttribute("aria-label", ch.title);
    ch.bars.forEach(function (b, i) {
      var y = i * rowH + 4;
      var name = svg("text", { x: left - 6, y: y + 13, "text-anchor": "end" });
      name.textContent = shown(b.name);
      s.appendChild(name);
      var v = b.value === null ? 0 : Math.max(0, Math.min(1, b.value));
      var rect = svg("rect", { x: left, y: y + 2, width: Math.max(1, v * plot), height: rowH - 8, "class": "bar" });
      rect.dataset.name = b.name;
      rect.dataset.value = b.value === null ? "null" : String(b.value);
      var tip = document.createElementNS(SVG, "title");
      tip.textContent = shown(b.name) + ": " + pct(b.value) + (b.n !== undefined && b.n !== null ? " (n = " + b.n + ")" : "");
      rect.appendChild(tip);
      rect.addEventListener("click", function () { filterTo(ch.facet, b.name); });
      s.appendChild(rect);
      if (b.ci) {
        var lo = left + Math.max(0, Math.min(1, b.ci[0])) * plot, hi = left + Math.max(0, Math.min(1, b.ci[1])) * plot, my = y + rowH / 2 - 2;
        s.appendChild(svg("line", { x1: lo, x2: hi, y1: my, y2: my, "class": "err" }));
        s.appendChild(svg("line", { x1: lo, x2: lo, y1: my - 4, y2: my + 4, "class": "err" }));
        s.appendChild(svg("line", { x1: hi, x2: hi, y1: my - 4, y2: my + 4, "class": "err" }));
      }
      var label = svg("text", { x: left + plot + 6, y: y + 13 });
      label.textContent = pct(b.value) + (b.n !== undefined && b.n !== null ? "  n=" + b.n : "") + (b.extra ? "  " + shown(b.extra) : "");
      s.appendChild(label);
    });
    wrap.appendChild(s);
    if (ch.bars.some(function (b) { return b.ci; })) wrap.appendChild(el("div", "muted", "error bars: the report's 95% intervals"));
    return wrap;
  }

  function facetIndex(key) {
    for (var i = 0; i < B.facets.length; i++) if (B.facets[i].key === key) return i;
    return -1;
  }
  // A count links to its samples only when some sample has the value (a filter to a value no
  // sample has would select nothing and show everything).
  function hasValue(facet, value) {
    var fi = facetIndex(facet);
    return fi >= 0 && B.facets[fi].values.indexOf(value) >= 0;
  }
  // How many records carry a facet's value (what a filter to it selects).
  function carrying(facet, value) {
    var fi = facetIndex(facet), want = B.facets[fi].values.indexOf(value), count = 0;
    B.records.forEach(function (r) {
      var v = r.f[fi];
      if (Array.isArray(v) ? v.indexOf(want) >= 0 : v === want) count += 1;
    });
    return count;
  }
  function filters() {
    var box = document.getElementById("filters");
    document.getElementById("browser-title").textContent = D.kind === "compare" ? "Samples of both runs" : (B.unit === "task" ? "Tasks" : "Samples");
    B.facets.forEach(function (f, fi) {
      var label = el("label", null, f.label);
      var sel = el("select");
      sel.id = "filter-" + f.key;
      sel.dataset.facet = f.key;
      var all = el("option", null, "(all)"); all.value = ""; sel.appendChild(all);
      var order = f.values.map(function (v, i) { return i; });
      order.sort(function (a, b) { return f.values[a] < f.values[b] ? -1 : f.values[a] > f.values[b] ? 1 : 0; });
      order.forEach(function (i) { var o = el("option", null, f.values[i]); o.value = f.values[i]; sel.appendChild(o); });
      sel.addEventListener("change", function () {
        state.filters[fi] = sel.value === "" ? -1 : f.values.indexOf(sel.value); state.page = 0; render();
      });
      label.appendChild(sel);
      box.appendChild(label);
    });
    var sl = el("label", null, "Search id, question, output");
    var input = el("input"); input.id = "search"; input.type = "search";
    input.addEventListener("input", function () { state.q = input.value.toLowerCase(); state.page = 0; render(); });
    sl.appendChild(input); box.appendChild(sl);
    var so = el("label", null, "Sort by");
    var sort = el("select"); sort.id = "sort";
    var none = el("option", null, "(report order)"); none.value = ""; sort.appendChild(none);
    B.sorts.forEach(function (s) { var o = el("option", null, s.label); o.value = s.key; sort.appendChild(o); });
    sort.addEventListener("change", function () { state.sort = sort.value; state.page = 0; render(); });
    so.appendChild(sort); box.appendChild(so);
    var dl = el("label", null, "Order");
    var dir = el("select"); dir.id = "sort-dir";
    [["desc", "high first"], ["asc", "low first"]].forEach(function (d) { var o = el("option", null, d[1]); o.value = d[0]; dir.appendChild(o); });
    dir.addEventListener("change", function () { state.dir = dir.value; render(); });
    dl.appendChild(dir); box.appendChild(dl);
    var fail = B.failure, ffi = fail ? facetIndex(fail.facet) : -1;
    if (ffi >= 0 && B.facets[ffi].values.indexOf(fail.value) >= 0) {
      var wanted = B.facets[ffi].values.indexOf(fail.value), count = 0;
      B.records.forEach(function (r) { if (r.f[ffi] === wanted) count += 1; });
      var button = el("button", null, "Failures only (" + count + ")");
      button.type = "button"; button.id = "failures";
      button.addEventListener("click", function () { filterTo(fail.facet, fail.value); });
      box.appendChild(button);
    }
  }
  // An accounting number's link shows its samples alone: no earlier filter narrows them.
  function clearFilters() {
    B.facets.forEach(function (f) { document.getElementById("filter-" + f.key).value = ""; });
    document.getElementById("search").value = "";
    state.filters = {};
    state.q = "";
  }
  function filterTo(facet, value) {
    var sel = document.getElementById("filter-" + facet);
    var fi = facetIndex(facet);
    if (!sel || fi < 0) return;
    sel.value = value;
    state.filters[fi] = sel.value === "" ? -1 : B.facets[fi].values.indexOf(sel.value);
    state.page = 0;
    render();
    document.getElementById("browser").scrollIntoView();
  }

  function collect(blocks, out) {
    (blocks || []).forEach(function (b) { if (b.s && b.t) out.push(b.t); if (b.sub) collect(b.sub, out); });
  }
  function haystack(i) {
    if (!haystacks) haystacks = new Array(B.records.length);
    if (haystacks[i] === undefined) {
      var r = B.records[i], parts = [r.id];
      collect(r.v, parts); collect(r.va, parts); collect(r.vb, parts);
      haystacks[i] = parts.join("\n").toLowerCase();
    }
    return haystacks[i];
  }
  function matches(r, i) {
    for (var k in state.filters) {
      var want = state.filters[k];
      if (want < 0) continue;
      var v = r.f[k];
      if (Array.isArray(v) ? v.indexOf(want) < 0 : v !== want) return false;
    }
    return !state.q || haystack(i).indexOf(state.q) >= 0;
  }
  function sortIndex(key) {
    for (var i = 0; i < B.sorts.length; i++) if (B.sorts[i].key === key) return i;
    return -1;
  }
  function selected() {
    var idx = [];
    B.records.forEach(function (r, i) { if (matches(r, i)) idx.push(i); });
    if (state.sort) {
      var key = sortIndex(state.sort), sign = state.dir === "asc" ? 1 : -1;
      idx.sort(function (x, y) {
        var a = B.records[x].n[key], b = B.records[y].n[key];
        if (a === null || a === undefined) return (b === null || b === undefined) ? x - y : 1;
        if (b === null || b === undefined) return -1;
        return a === b ? x - y : (a < b ? -sign : sign);
      });
    }
    return idx;
  }

  function blocks(list, parent) {
    (list || []).forEach(function (b) {
      var box = el("div", "blk");
      box.appendChild(el("div", "h", B.headings[b.h]));
      if (b.t !== undefined) box.appendChild(el("pre", null, b.t));
      if (b.img) b.img.forEach(function (src) {
        var im = el("img", "thumb"); im.alt = "image of " + B.headings[b.h]; im.loading = "lazy"; im.src = src; box.appendChild(im);
      });
      if (b.kv) box.appendChild(table(["key", "value"], b.kv));
      if (b.tbl) box.appendChild(table(b.tbl.c, b.tbl.r));
      if (b.sub) { var sub = el("div", "sub"); blocks(b.sub, sub); box.appendChild(sub); }
      parent.appendChild(box);
    });
  }
  function detail(r) {
    var d = el("div", "detail");
    if (r.v) blocks(r.v, d);
    else {
      var sides = el("div", "sides");
      [["A", r.va], ["B", r.vb]].forEach(function (p) {
        var col = el("div"); col.className = "side-" + p[0].toLowerCase();
        col.appendChild(el("div", "side", "Run " + p[0]));
        blocks(p[1], col);
        sides.appendChild(col);
      });
      d.appendChild(sides);
    }
    return d;
  }
  // The collapsed row's line: question, output and expected answer, each the first block
  // under one of the headings B.line names (A's question and answer, both outputs on a compare).
  var LINE_HEADINGS = {};
  if (B.line) Object.keys(B.line).forEach(function (k) {
    LINE_HEADINGS[k] = B.line[k].map(function (h) { return B.headings.indexOf(h); }).filter(function (i) { return i >= 0; });
  });
  function firstText(list, wanted) {
    for (var i = 0; list && i < list.length; i++) {
      var b = list[i];
      if (b.t !== undefined && wanted.indexOf(b.h) >= 0) return b.t;
      if (b.sub) { var t = firstText(b.sub, wanted); if (t !== null) return t; }
    }
    return null;
  }
  function oneLine(t) { return t.replace(/\s+/g, " ").trim(); }
  function line(r) {
    if (!B.line) return null;
    var box = el("div", "line");
    var main = r.v || r.va;
    var parts = [["q", "question", main], ["o", r.v ? "output" : "output A", r.v || r.va], ["o", "output B", r.vb], ["e", "expected", main]];
    parts.forEach(function (p) {
      if (!p[2]) return;
      var key = p[1].split(" ")[0];
      var t = firstText(p[2], LINE_HEADINGS[key] || []);
      if (t === null) return;
      var span = el("span", p[0]);
      span.appendChild(el("span", "k", p[1]));
      span.appendChild(document.createTextNode(oneLine(shown(t))));
      span.title = shown(t);
      box.appendChild(span);
    });
    return box.childNodes.length ? box : null;
  }
  function item(r) {
    var li = el("li", "rec");
    li.dataset.id = r.id;
    var head = el("div", "head");
    head.appendChild(el("span", "rid", r.id));
    B.facets.forEach(function (f, fi) {
      var raw = r.f[fi];
      var v = Array.isArray(raw) ? raw.map(function (i) { return f.values[i]; }) : f.values[raw];
      if (v === undefined || v === "" || (Array.isArray(v) && !v.length)) return;
      if (v === "(not recorded)" || v === "(direct)") return;
      var text = Array.isArray(v) ? v.join(", ") : v;
      var tone = Array.isArray(v) ? "" : " v-" + String(v).replace(/[^a-z]+/gi, "-");
      head.appendChild(el("span", "badge" + tone, f.label + ": " + text));
    });
    B.sorts.forEach(function (s, si) {
      var v = r.n[si];
      if (v !== null && v !== undefined) head.appendChild(el("span", "badge", s.label + " " + (s.percent ? pct(v) : num(v))));
    });
    var open = null;
    function toggle() {
      if (open) { li.removeChild(open); open = null; } else { open = detail(r); li.appendChild(open); }
    }
    head.addEventListener("click", toggle);
    li.appendChild(head);
    var summary = line(r);
    if (summary) { summary.addEventListener("click", toggle); li.appendChild(summary); }
    return li;
  }
  function pager(id, total) {
    var box = document.getElementById(id);
    box.textContent = "";
    var pages = Math.max(1, Math.ceil(total / PAGE));
    if (pages === 1) return;
    var prev = el("button", null, "previous"); prev.type = "button"; prev.disabled = state.page === 0;
    prev.addEventListener("click", function () { state.page -= 1; render(); });
    var next = el("button", null, "next"); next.type = "button"; next.disabled = state.page >= pages - 1;
    next.addEventListener("click", function () { state.page += 1; render(); });
    box.appendChild(prev); box.appendChild(next);
    box.appendChild(el("span", "muted", "page " + (state.page + 1) + " of " + pages));
  }
  function render() {
    var idx = selected();
    var count = document.getElementById("count");
    count.dataset.count = String(idx.length);
    count.textContent = idx.length + " of " + B.records.length + " " + (B.unit || "sample") + "s match";
    var list = document.getElementById("list");
    list.textContent = "";
    var start = state.page * PAGE;
    idx.slice(start, start + PAGE).forEach(function (i) { list.appendChild(item(B.records[i])); });
    pager("pager-top", idx.length);
    pager("pager-bottom", idx.length);
  }

  summary();
  filters();
  render();
  document.body.dataset.ready = "1";
})();
