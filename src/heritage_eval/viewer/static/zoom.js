/* heritage-eval viewer: the zoom view, a CSS transform pan/zoom over the zoom copy of an
   image (or the original). HE_ZOOM.open(figure) shows a ".zoomable" figure (its
   data-full image) in #zoom; HE_ZOOM.init() wires the wheel, drag, double-click and
   close button once. Plain ES2017; site.py puts it before app.js in the site's app.js. */
(function () {
  "use strict";
  /* ---- zoom: CSS transform pan/zoom over the zoom copy (or the original) ---- */
  var Z = {s: 1, x: 0, y: 0, drag: null};
  function applyZ() { var w = document.getElementById("z-stage").firstChild; if (w) w.style.transform = "translate(" + Z.x + "px," + Z.y + "px) scale(" + Z.s + ")"; }
  function openZoom(wrap) {
    var stage = document.getElementById("z-stage"), clone = wrap.cloneNode(true), img = clone.querySelector("img");
    stage.textContent = "";
    clone.classList.remove("zoomable"); clone.classList.add("zoomed");
    clone.removeAttribute("style");
    if (img) { img.removeAttribute("loading"); img.src = wrap.getAttribute("data-full"); }
    stage.appendChild(clone);
    Z = {s: 1, x: 0, y: 0, drag: null}; applyZ();
    var center = function () {
      var r = document.getElementById("zoom").getBoundingClientRect();
      Z.x = Math.max(0, (r.width - clone.offsetWidth) / 2); Z.y = Math.max(0, (r.height - clone.offsetHeight) / 2); applyZ();
    };
    if (img && !img.complete) img.onload = center;
    document.getElementById("zoom").hidden = false;
    center();
  }
  function initZoom() {
    var z = document.getElementById("zoom");
    z.addEventListener("wheel", function (e) {
      e.preventDefault();
      var f = e.deltaY < 0 ? 1.2 : 1 / 1.2, r = z.getBoundingClientRect();
      var cx = e.clientX - r.left, cy = e.clientY - r.top;
      Z.x = cx - (cx - Z.x) * f; Z.y = cy - (cy - Z.y) * f; Z.s *= f; applyZ();
    }, {passive: false});
    z.addEventListener("mousedown", function (e) { if (e.target.id === "z-close") return; e.preventDefault(); Z.drag = [e.clientX - Z.x, e.clientY - Z.y]; });
    window.addEventListener("mousemove", function (e) { if (Z.drag) { Z.x = e.clientX - Z.drag[0]; Z.y = e.clientY - Z.drag[1]; applyZ(); } });
    window.addEventListener("mouseup", function () { Z.drag = null; });
    document.getElementById("z-close").onclick = function () { z.hidden = true; };
    z.addEventListener("dblclick", function () { Z = {s: 1, x: 0, y: 0, drag: null}; applyZ(); });
  }
  window.HE_ZOOM = {open: openZoom, init: initZoom};
})();
