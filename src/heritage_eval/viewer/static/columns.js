/* heritage-eval viewer: helpers over the index columns (see viewer/pages.py), with no
   state of their own: shard file names, appending a shard's column, and the sort.
   Plain ES2017; site.py puts it before app.js in the site's app.js.

   Sorting: each value of the sort column gets its rank among the column's distinct
   values (HE_COLUMNS.rank: a sort of the distinct values, once per column and number of
   loaded samples), then a stable counting sort by rank orders the shown samples in O(n)
   (HE_COLUMNS.countingSort); ids compare as JavaScript strings (UTF-16 code units),
   scores as numbers, a sample without the score (null, or NaN) last; ties keep the
   order they come in (file order). */
(function () {
  "use strict";
  /* "data/<kind>-NNNN.js", shard k (at least 4 digits, as index_columns.shard_name) */
  function shardFile(kind, k) { var d = String(k); while (d.length < 4) d = "0" + d; return "data/" + kind + "-" + d + ".js"; }
  /* push the items of `from` to `to`; no `from` (a shard without that column): `n`
     times `dflt` */
  function append(to, from, n, dflt) {
    if (!from) { for (var j = 0; j < n; j++) to.push(dflt); return; }
    for (var i = 0; i < from.length; i++) to.push(from[i]);
  }
  /* {rank: Int32Array(n), k}: the rank of col[i] among the k distinct values of
     col[0..n) (strings: `strings` true), -1 for null / NaN */
  function rank(col, n, strings) {
    var seen = new Map(), vals = [], i, v;
    for (i = 0; i < n; i++) {
      v = col[i];
      if (v === null || v !== v || seen.has(v)) continue;
      seen.set(v, 0); vals.push(v);
    }
    if (strings) vals.sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
    else vals = Float64Array.from(vals).sort();
    for (i = 0; i < vals.length; i++) seen.set(vals[i], i);
    var r = new Int32Array(n);
    for (i = 0; i < n; i++) { v = col[i]; r[i] = v === null || v !== v ? -1 : seen.get(v); }
    return {rank: r, k: vals.length};
  }
  /* `out` (sample indexes) ordered by rank[i] in [0, k) (-1 last; `desc`: highest
     first), stable */
  function countingSort(out, rank, k, desc) {
    var counts = new Int32Array(k + 2), res = new Array(out.length), j, r;
    for (j = 0; j < out.length; j++) { r = rank[out[j]]; counts[(r < 0 ? k : desc ? k - 1 - r : r) + 1]++; }
    for (j = 1; j < k + 2; j++) counts[j] += counts[j - 1];
    for (j = 0; j < out.length; j++) { r = rank[out[j]]; res[counts[r < 0 ? k : desc ? k - 1 - r : r]++] = out[j]; }
    return res;
  }
  window.HE_COLUMNS = {shardFile: shardFile, append: append, rank: rank, countingSort: countingSort};
})();
