/* heritage-eval viewer: sample browser over window.HE_INDEX (see viewer/pages.py).
   Plain ES2017, no dependencies, works from file:// (data files are <script>s). */
(function () {
  "use strict";
  var IX = window.HE_INDEX, C = IX.cols, N = IX.n;
  var PAGES = {}, WAIT = {}, LOADING = {};
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
    s.onerror = function () { showError("could not load " + src); };
    document.body.appendChild(s);
  }
  window.HE_PAGE = function (name, items) { PAGES[name] = items; };
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
  function filter() {
    var q = S.q.trim().toLowerCase(), sp = spec(S.metric), sc = S.metric ? C.s[S.metric] : null;
    var lo = S.min === "" ? null : parseFloat(S.min), hi = S.max === "" ? null : parseFloat(S.max);
    var scale = sp && sp.scale ? sp.scale : 1, out = [];
    var gkeys = Object.keys(S.groups).filter(function (k) { return S.groups[k] >= 0; });
    if (q && !window.HE_SEARCH) { loadScript("data/search.js", update); }
    for (var i = 0; i < N; i++) {
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
        var t = window.HE_SEARCH ? window.HE_SEARCH[i]
          : (C.id[i] + " " + C.a[i] + " " + (C.ref ? C.ref[i] : "")).toLowerCase();
        if (t.indexOf(q) < 0) continue;
      }
      out.push(i);
    }
    if (S.sort === "id") out.sort(function (a, b) { return C.id[a] < C.id[b] ? -1 : C.id[a] > C.id[b] ? 1 : a - b; });
    else if (S.sort === "state") out.sort(function (a, b) { return C.st[a] - C.st[b] || a - b; });
    else if (S.sort === "asc" || S.sort === "desc") {
      var sign = S.sort === "asc" ? 1 : -1;
      out.sort(function (a, b) {
        var x = sc ? sc[a] : null, y = sc ? sc[b] : null;
        if (x === null && y === null) return a - b;
        if (x === null) return 1;
        if (y === null) return -1;
        return sign * (x - y) || a - b;
      });
    }
    return out;
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
      var n = 0; for (var i = 0; i < N; i++) if (C.st[i] === k) n++;
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
    $("count").textContent = view.length + " of " + N + " samples shown";
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
    var parts = IX.site_dir.split("/"), up = rel.split("/");
    while (up[0] === "..") { up.shift(); parts.pop(); }
    return "/_fs" + parts.concat(up).join("/");
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

  /* ---- zoom: CSS transform pan/zoom over the zoom copy (or the original) ---- */
  var Z = {s: 1, x: 0, y: 0, drag: null};
  function applyZ() { var w = $("z-stage").firstChild; if (w) w.style.transform = "translate(" + Z.x + "px," + Z.y + "px) scale(" + Z.s + ")"; }
  function openZoom(wrap) {
    var stage = $("z-stage"), clone = wrap.cloneNode(true), img = clone.querySelector("img");
    stage.textContent = "";
    clone.classList.remove("zoomable"); clone.classList.add("zoomed");
    clone.removeAttribute("style");
    if (img) { img.removeAttribute("loading"); img.src = wrap.getAttribute("data-full"); }
    stage.appendChild(clone);
    Z = {s: 1, x: 0, y: 0, drag: null}; applyZ();
    var center = function () {
      var r = $("zoom").getBoundingClientRect();
      Z.x = Math.max(0, (r.width - clone.offsetWidth) / 2); Z.y = Math.max(0, (r.height - clone.offsetHeight) / 2); applyZ();
    };
    if (img && !img.complete) img.onload = center;
    $("zoom").hidden = false;
    center();
  }
  function initZoom() {
    var z = $("zoom");
    z.addEventListener("wheel", function (e) {
      e.preventDefault();
      var f = e.deltaY < 0 ? 1.2 : 1 / 1.2, r = z.getBoundingClientRect();
      var cx = e.clientX - r.left, cy = e.clientY - r.top;
      Z.x = cx - (cx - Z.x) * f; Z.y = cy - (cy - Z.y) * f; Z.s *= f; applyZ();
    }, {passive: false});
    z.addEventListener("mousedown", function (e) { if (e.target.id === "z-close") return; e.preventDefault(); Z.drag = [e.clientX - Z.x, e.clientY - Z.y]; });
    window.addEventListener("mousemove", function (e) { if (Z.drag) { Z.x = e.clientX - Z.drag[0]; Z.y = e.clientY - Z.drag[1]; applyZ(); } });
    window.addEventListener("mouseup", function () { Z.drag = null; });
    $("z-close").onclick = function () { z.hidden = true; };
    z.addEventListener("dblclick", function () { Z = {s: 1, x: 0, y: 0, drag: null}; applyZ(); });
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
    update();
    window.HE_FIRST_RENDER_MS = performance.now();
    document.body.setAttribute("data-ready", "1");
    $("d-close").onclick = closeDetail;
    $("d-prev").onclick = function () { step(-1); };
    $("d-next").onclick = function () { step(1); };
    document.addEventListener("click", function (e) {
      var w = e.target.closest ? e.target.closest(".zoomable") : null;
      if (w && !e.target.closest("a")) openZoom(w);
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { if (!$("zoom").hidden) $("zoom").hidden = true; else if (current >= 0) closeDetail(); }
      else if (current >= 0 && $("zoom").hidden && e.target.tagName !== "INPUT") {
        if (e.key === "ArrowLeft") step(-1); else if (e.key === "ArrowRight") step(1);
      }
    });
    initZoom();
    var fromHash = function () {
      var m = /^#s=(\d+)$/.exec(location.hash);
      if (m && +m[1] < N && +m[1] !== current) openDetail(+m[1]);
    };
    window.addEventListener("hashchange", fromHash);
    fromHash();
    if (window.requestIdleCallback) requestIdleCallback(function () { loadScript("data/search.js", function () { if (S.q) update(); }); });
  }
  init();
})();
