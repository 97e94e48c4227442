/* heritage-eval viewer: sample browser over window.HE_INDEX (see viewer/pages.py).
   Plain ES2017, no dependencies, works from file:// (data files are <script>s).

   The index comes in shards (data/index-NNNN.js, IX.shards[k] samples each): the list
   renders from the first one, then the others load one after another; their samples
   join the list and the filters' results as they arrive (in file order they are
   appended; a sort re-sorts). Until every shard is in, filters answer over the samples
   loaded so far and the count line says how many of the total that is. The search
   texts (data/search-NNNN.js) load once the index is in, or at the first search; until
   a shard's texts are in, its samples are searched by id, answer and reference. */
(function () {
  "use strict";
  var IX = window.HE_INDEX, SH = IX.shards || [], TOTAL = IX.n, N = 0;
  var C = IX.cols = {r: [], id: [], st: [], m: [], a: [], ref: [], th: [], g: {}, s: {}, dis: []};
  Object.keys(IX.groups).forEach(function (k) { C.g[k] = []; });
  IX.metrics.forEach(function (m) { C.s[m.name] = []; });
  var SHARDS = {}, SEARCH_SHARDS = {}, SEARCH = [], nSearch = 0, searching = false;
  var PAGES = {}, LOADING = {}, pendingHash = -1, loadError = "";
  var S = {run: -1, states: {}, groups: {}, metric: IX.metrics.length ? IX.metrics[0].name : "",
           min: "", max: "", q: "", dis: false, sort: "order", page: 0, per: 50};
  var view = [], current = -1, altsByKey = null;
  var FILE = location.protocol === "file:";
  IX.states.forEach(function (s) { S.states[s] = true; });

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function $(id) { return document.getElementById(id); }
  function spec(name) { return IX.metrics.filter(function (m) { return m.name === name; })[0]; }
  function fmt(v, sp) {
    if (v === null || v === undefined) return "—";
    var d = sp && sp.decimals !== null && sp.decimals !== undefined ? sp.decimals : 3;
    return (v * (sp && sp.scale ? sp.scale : 1)).toFixed(d);
  }

  /* ---- script loading (fetch() of local files is blocked under file://) ---- */
  function loadScript(src, done) {
    if (LOADING[src] === true) { done(); return; }
    if (LOADING[src]) { LOADING[src].push(done); return; }
    LOADING[src] = [done];
    var s = el("script", {src: src});
    s.onload = function () { var cbs = LOADING[src]; LOADING[src] = true; cbs.forEach(function (f) { f(); }); };
    s.onerror = function () { if (/index-\d+\.js$/.test(src)) loadError = src; showError("could not load " + src); };
    document.body.appendChild(s);
  }
  window.HE_PAGE = function (name, items) { PAGES[name] = items; };
  window.HE_SHARD = function (k, cols) { SHARDS[k] = cols; };
  window.HE_SEARCH_SHARD = function (k, items) { SEARCH_SHARDS[k] = items; };
  var shardFile = HE_COLUMNS.shardFile, append = HE_COLUMNS.append;
  /* add shard k's columns to C (a column the shard lacks reads as absent) */
  function addShard(k) {
    var sc = SHARDS[k], n = sc.r.length;
    delete SHARDS[k];
    ["r", "id", "st", "m", "a", "ref", "th", "dis"].forEach(function (c) { append(C[c], sc[c], n, c === "dis" ? 0 : ""); });
    Object.keys(sc.g).forEach(function (g) { if (!C.g[g]) { C.g[g] = []; append(C.g[g], null, N, -1); } });
    Object.keys(C.g).forEach(function (g) { append(C.g[g], sc.g[g], n, -1); });
    Object.keys(sc.s).forEach(function (m) { if (!C.s[m]) { C.s[m] = []; append(C.s[m], null, N, null); } });
    Object.keys(C.s).forEach(function (m) { append(C.s[m], sc.s[m], n, null); });
    N += n; altsByKey = null;
  }
  /* load the index shards from `k` on, one after another; `first` after shard 0 */
  function loadIndex(k, first) {
    if (k >= SH.length) {
      if (k === 0) first();
      window.HE_LOADED = true;
      window.HE_LOADED_MS = performance.now();
      document.body.setAttribute("data-loaded", "1");
      if (window.requestIdleCallback) requestIdleCallback(loadSearch); else setTimeout(loadSearch, 0);
      return;
    }
    loadScript(shardFile("index", k), function () {
      if (!SHARDS[k]) { showError("index shard " + k + " is empty"); return; }
      var from = N;
      addShard(k);
      if (k === 0) first(); else more(from);
      setTimeout(function () { loadIndex(k + 1, first); }, 0);
    });
  }
  /* load every search shard, one after another (started once) */
  function loadSearch() {
    if (searching) return;
    searching = true;
    var next = function () {
      if (nSearch >= SH.length) { window.HE_SEARCH = SEARCH; if (S.q) update(); return; }
      loadScript(shardFile("search", nSearch), function () {
        append(SEARCH, SEARCH_SHARDS[nSearch], SH[nSearch], "");
        delete SEARCH_SHARDS[nSearch];
        nSearch++;
        if (S.q) update();
        setTimeout(next, 0);
      });
    };
    next();
  }
  function pageOf(i) {
    var r = IX.runs[C.r[i]], off = i - r.start;
    return {name: "r" + C.r[i] + "-p" + (Math.floor(off / IX.page_size) + 1), pos: off % IX.page_size};
  }
  function withRecord(i, cb) {
    var p = pageOf(i);
    if (PAGES[p.name]) { cb(PAGES[p.name][p.pos]); return; }
    loadScript("data/" + p.name + ".js", function () { cb(PAGES[p.name] ? PAGES[p.name][p.pos] : null); });
  }
  function showError(msg) { var b = $("count"); if (b) b.textContent = "error: " + msg; }

  /* ---- filtering and sorting ---- */
  /* the samples in [from, to) the filter state S shows, in file order, added to `out` */
  function filterRange(from, to, out) {
    var q = S.q.trim().toLowerCase(), sp = spec(S.metric), sc = S.metric ? C.s[S.metric] : null;
    var lo = S.min === "" ? null : parseFloat(S.min), hi = S.max === "" ? null : parseFloat(S.max);
    var scale = sp && sp.scale ? sp.scale : 1, ns = SEARCH.length;
    var gkeys = Object.keys(S.groups).filter(function (k) { return S.groups[k] >= 0; });
    if (q && !window.HE_SEARCH) loadSearch();
    for (var i = from; i < to; i++) {
      if (S.run >= 0 && C.r[i] !== S.run) continue;
      if (!S.states[IX.states[C.st[i]]]) continue;
      var ok = true;
      for (var g = 0; g < gkeys.length; g++) if (C.g[gkeys[g]][i] !== S.groups[gkeys[g]]) { ok = false; break; }
      if (!ok) continue;
      if (sc && (lo !== null || hi !== null)) {
        var v = sc[i];
        if (v === null || (lo !== null && v * scale < lo) || (hi !== null && v * scale > hi)) continue;
      }
      if (S.dis && !C.dis[i]) continue;
      if (q) {
        var t = i < ns ? SEARCH[i] : (C.id[i] + " " + C.a[i] + " " + C.ref[i]).toLowerCase();
        if (t.indexOf(q) < 0) continue;
      }
      out.push(i);
    }
    return out;
  }
  /* the ranks of the sort column `key` ("id" or "s:" + metric; HE_COLUMNS.rank), kept
     while the number of loaded samples stays the same */
  var RANKS = {}, countingSort = HE_COLUMNS.countingSort;
  function ranks(key) {
    var c = RANKS[key];
    if (c && c.n === N) return c;
    c = HE_COLUMNS.rank(key === "id" ? C.id : C.s[key.slice(2)], N, key === "id");
    c.n = N; RANKS[key] = c;
    return c;
  }
  /* `out` sorted by S.sort (ties and "order": file order; `out` in file order within
     equal sort keys, as filterRange gives and as an earlier sort leaves it) */
  function sortView(out) {
    if (S.sort === "id") { var ri = ranks("id"); return countingSort(out, ri.rank, ri.k, false); }
    if (S.sort === "state") return countingSort(out, C.st, IX.states.length, false);
    if ((S.sort === "asc" || S.sort === "desc") && S.metric && C.s[S.metric]) {
      var rs = ranks("s:" + S.metric);
      return countingSort(out, rs.rank, rs.k, S.sort === "desc");
    }
    return out;
  }
  function filter() { return sortView(filterRange(0, N, [])); }
  /* samples [from, N) arrived: add those the filters show, redraw */
  function more(from) {
    var add = filterRange(from, N, []);
    if (add.length) {
      for (var j = 0; j < add.length; j++) view.push(add[j]);
      if (S.sort !== "order") view = sortView(view);
    }
    renderList();
    if (pendingHash >= 0 && pendingHash < N) { var h = pendingHash; pendingHash = -1; openDetail(h); }
  }

  /* ---- controls ---- */
  function control(label, input) {
    var w = el("label", {"class": "ctl"}); w.appendChild(el("span", null, label)); w.appendChild(input); return w;
  }
  function select(options, value, onchange, id) {
    var s = el("select", id ? {id: id} : null);
    options.forEach(function (o) { var op = el("option", {value: o[0]}, o[1]); if (String(o[0]) === String(value)) op.selected = true; s.appendChild(op); });
    s.onchange = function () { onchange(s.value); S.page = 0; update(); };
    return s;
  }
  function buildControls() {
    var box = $("controls");
    if (IX.runs.length > 1) {
      box.appendChild(control("run", select([[-1, "all runs"]].concat(IX.runs.map(function (r, i) {
        return [i, r.name + " (" + (r.benchmark || "?") + ")"]; })), -1, function (v) { S.run = +v; }, "f-run")));
    }
    var st = el("div", {"class": "ctl states-f", id: "f-states"});
    IX.states.forEach(function (s, k) {
      var n = IX.counts ? IX.counts[k] : 0;
      var lab = el("label", {"class": "chk"}), cb = el("input", {type: "checkbox", value: s});
      cb.checked = true;
      cb.onchange = function () { S.states[s] = cb.checked; S.page = 0; update(); };
      lab.appendChild(cb); lab.appendChild(el("span", {"class": "badge st-" + s}, s + " " + n));
      st.appendChild(lab);
    });
    box.appendChild(st);
    Object.keys(IX.groups).forEach(function (k) {
      S.groups[k] = -1;
      var opts = [[-1, "all"]].concat(IX.groups[k].map(function (v, i) { return [i, v]; }));
      box.appendChild(control(k, select(opts, -1, function (v) { S.groups[k] = +v; }, "f-g-" + k)));
    });
    if (IX.metrics.length) {
      box.appendChild(control("score", select(IX.metrics.map(function (m) { return [m.name, m.label || m.name]; }),
        S.metric, function (v) { S.metric = v; }, "f-metric")));
      ["min", "max"].forEach(function (b) {
        var inp = el("input", {type: "number", step: "any", id: "f-" + b, placeholder: b, "class": "num"});
        inp.oninput = function () { S[b] = inp.value; S.page = 0; update(); };
        box.appendChild(control(b, inp));
      });
    }
    var q = el("input", {type: "search", id: "f-q", placeholder: "id, answer, reference…"});
    q.oninput = function () { S.q = q.value; S.page = 0; update(); };
    box.appendChild(control("search", q));
    if (IX.compare) {
      var lab = el("label", {"class": "ctl chk"}), cb = el("input", {type: "checkbox", id: "f-dis"});
      cb.onchange = function () { S.dis = cb.checked; S.page = 0; update(); };
      lab.appendChild(cb); lab.appendChild(el("span", null, "where models disagree"));
      box.appendChild(lab);
    }
    box.appendChild(control("sort", select([["order", "file order"], ["id", "id"], ["state", "state"],
      ["asc", "score ↑"], ["desc", "score ↓"]], "order", function (v) { S.sort = v; }, "f-sort")));
  }

  /* ---- list ---- */
  function thumb(i) {
    var k = C.th[i];
    if (k === "!") return el("div", {"class": "th-missing", title: "image missing"}, "missing");
    if (!k) return el("div", {"class": "th-none"});
    return el("img", {src: "thumbs/" + k + ".jpg", loading: "lazy", alt: ""});
  }
  function renderList() {
    var list = $("list"), pager = $("pager");
    list.textContent = ""; pager.textContent = "";
    var pages = Math.max(1, Math.ceil(view.length / S.per));
    if (S.page >= pages) S.page = pages - 1;
    $("count").textContent = view.length + " of " + N + " samples shown" + (N >= TOTAL ? ""
      : loadError ? " (error: could not load " + loadError + "; the index stopped at " + N + " of " + TOTAL + " samples)"
      : " (loading the index: " + N + " of " + TOTAL + " samples so far; filters cover those)");
    var t = el("table", {"class": "samples"}), head = el("tr");
    ["", "id", "model", "state", "groups", "scores", "answer", "reference"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    t.appendChild(head);
    view.slice(S.page * S.per, (S.page + 1) * S.per).forEach(function (i) {
      var tr = el("tr", {"class": "row", "data-i": i}), td = el("td", {"class": "th"});
      td.appendChild(thumb(i)); tr.appendChild(td);
      tr.appendChild(el("td", {"class": "sid"}, C.id[i]));
      tr.appendChild(el("td", {"class": "small"}, IX.models[C.m[i]] + (IX.runs.length > 1 ? " · " + IX.runs[C.r[i]].name : "")));
      var s = el("td"); s.appendChild(el("span", {"class": "badge st-" + IX.states[C.st[i]]}, IX.states[C.st[i]])); tr.appendChild(s);
      tr.appendChild(el("td", {"class": "small"}, Object.keys(C.g).map(function (k) {
        return C.g[k][i] >= 0 ? IX.groups[k][C.g[k][i]] : null; }).filter(function (x) { return x !== null; }).join(" · ")));
      tr.appendChild(el("td", {"class": "small num"}, IX.metrics.filter(function (m) { return C.s[m.name][i] !== null; })
        .map(function (m) { return (m.label || m.name) + " " + fmt(C.s[m.name][i], m); }).join("  ")));
      tr.appendChild(el("td", {"class": "ans", title: C.a[i]}, C.a[i]));
      var ref = C.ref ? C.ref[i] : "";  /* older index files have no "ref" column */
      tr.appendChild(el("td", {"class": "ans ref", title: ref}, ref));
      if (C.dis[i]) tr.classList.add("dis");
      tr.onclick = function () { openDetail(i); };
      t.appendChild(tr);
    });
    list.appendChild(t);
    if (pages > 1) {
      var prev = el("button", {id: "p-prev"}, "‹ prev"), next = el("button", {id: "p-next"}, "next ›");
      prev.disabled = S.page === 0; next.disabled = S.page >= pages - 1;
      prev.onclick = function () { S.page--; renderList(); };
      next.onclick = function () { S.page++; renderList(); };
      pager.appendChild(prev); pager.appendChild(el("span", null, " page " + (S.page + 1) + " / " + pages + " "));
      pager.appendChild(next);
    }
  }
  function update() { view = filter(); renderList(); }
  /* for tests and the benchmark: merge `patch` into the filter state (`states` and
     `groups` key by key: {states: {scored: false}}, {groups: {medium: 2}}; else
     run, metric, min, max, q, dis, sort), redraw from the first page and return the
     indexes of the samples shown on every page. The controls are not updated. */
  window.HE_APPLY = function (patch) {
    Object.keys(patch).forEach(function (k) {
      if (k === "states" || k === "groups") Object.keys(patch[k]).forEach(function (g) { S[k][g] = patch[k][g]; });
      else S[k] = patch[k];
    });
    S.page = 0; update();
    return view;
  };

  /* ---- detail ---- */
  function alts(i) {
    if (!altsByKey) {
      altsByKey = {};
      for (var j = 0; j < N; j++) {
        var key = IX.runs[C.r[j]].benchmark + "\u0000" + C.id[j];
        (altsByKey[key] = altsByKey[key] || []).push(j);
      }
    }
    return altsByKey[IX.runs[C.r[i]].benchmark + "\u0000" + C.id[i]];
  }
  function origUrl(rel) {
    if (FILE || rel.indexOf("../") !== 0) return rel;
    /* served (--serve): "/_up/<number of leading ..>/<rest>", resolved by the server
       against the site folder (the site holds no absolute path) */
    var up = rel.split("/"), n = 0;
    while (up[0] === "..") { up.shift(); n++; }
    return "/_up/" + n + "/" + up.join("/");
  }
  function fixLinks(root) {
    if (FILE) return;
    root.querySelectorAll("a.orig").forEach(function (a) { a.setAttribute("href", origUrl(a.getAttribute("href"))); });
    root.querySelectorAll("[data-full]").forEach(function (d) { d.setAttribute("data-full", origUrl(d.getAttribute("data-full"))); });
  }
  function openDetail(i) {
    current = i;
    var group = alts(i) || [i], body = $("d-body");
    $("detail").hidden = false;
    document.body.classList.add("noscroll");
    $("d-title").textContent = C.id[i] + (group.length > 1 ? "  —  " + group.length + " models side by side" : "");
    body.textContent = "loading…";
    if (location.hash !== "#s=" + i) history.replaceState(null, "", "#s=" + i);
    var htmls = new Array(group.length), left = group.length;
    group.forEach(function (j, k) {
      withRecord(j, function (h) {
        htmls[k] = h; left--;
        if (left === 0 && current === i) showDetail(group, htmls);
      });
    });
  }
  function showDetail(group, htmls) {
    var body = $("d-body");
    body.textContent = "";
    var wrap = el("div", {"class": group.length > 1 ? "side" : "single"});
    group.forEach(function (j, k) {
      var col = el("div", {"class": "col" + (j === current ? " focus" : "")});
      if (group.length > 1) col.appendChild(el("div", {"class": "col-h"}, IX.models[C.m[j]] + " · " + IX.runs[C.r[j]].name));
      var frag = el("div");
      frag.innerHTML = htmls[k] || "<p class='problem'>record not found in the page data</p>";
      fixLinks(frag);
      col.appendChild(frag);
      wrap.appendChild(col);
    });
    body.appendChild(wrap);
    body.scrollTop = 0;
    document.body.setAttribute("data-detail", String(current));
  }
  function closeDetail() {
    $("detail").hidden = true; current = -1; document.body.classList.remove("noscroll");
    history.replaceState(null, "", location.pathname + location.search);
  }
  function step(d) {
    var k = view.indexOf(current);
    if (k < 0) return;
    var n = view[k + d];
    if (n !== undefined) openDetail(n);
  }

  /* ---- missing CJK font: two different Han characters drawn pixel-identical (or both
     blank) in the page's font means the browser shows boxes ("tofu") ---- */
  function cjkTofu() {
    try {
      var c = document.createElement("canvas"); c.width = 40; c.height = 40;
      var g = c.getContext("2d");
      if (!g) return null;
      g.font = "32px " + getComputedStyle(document.body).fontFamily;
      g.textBaseline = "top";
      var pix = function (ch) { g.clearRect(0, 0, 40, 40); g.fillText(ch, 2, 2); return g.getImageData(0, 0, 40, 40).data.join(","); };
      return pix("\u6f22") === pix("\u5b57");  /* 漢 vs 字 */
    } catch (e) { return null; }
  }
  function fontNotice() {
    window.HE_TOFU = IX.cjk ? cjkTofu() : false;
    if (!window.HE_TOFU || $("font-notice")) return;
    var p = el("p", {"class": "font-notice", id: "font-notice", "data-source": "browser"},
      "This browser has no font for the Chinese/Japanese/Korean text of this site, so it shows as empty boxes: " +
      "install a CJK font, e.g. `sudo apt install fonts-noto-cjk` (Debian/Ubuntu), google-noto-sans-cjk-fonts " +
      "(Fedora) or any Noto Sans CJK / Source Han Sans font, then reload the page.");
    var main = document.querySelector("main");
    main.parentNode.insertBefore(p, main);
  }

  function init() {
    fontNotice();
    buildControls();
    $("count").textContent = "loading the index…";
    loadIndex(0, function () {
      update();
      window.HE_FIRST_RENDER_MS = performance.now();
      document.body.setAttribute("data-ready", "1");
      fromHash();
    });
    $("d-close").onclick = closeDetail;
    $("d-prev").onclick = function () { step(-1); };
    $("d-next").onclick = function () { step(1); };
    document.addEventListener("click", function (e) {
      var w = e.target.closest ? e.target.closest(".zoomable") : null;
      if (w && !e.target.closest("a")) HE_ZOOM.open(w);
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { if (!$("zoom").hidden) $("zoom").hidden = true; else if (current >= 0) closeDetail(); }
      else if (current >= 0 && $("zoom").hidden && e.target.tagName !== "INPUT") {
        if (e.key === "ArrowLeft") step(-1); else if (e.key === "ArrowRight") step(1);
      }
    });
    HE_ZOOM.init();
    window.addEventListener("hashchange", fromHash);
  }
  function fromHash() {
    var m = /^#s=(\d+)$/.exec(location.hash);
    if (!m || +m[1] === current || +m[1] >= TOTAL) return;
    if (+m[1] < N) openDetail(+m[1]); else pendingHash = +m[1];
  }
  init();
})();
