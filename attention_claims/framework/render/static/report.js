// attention-claims report: typeset formulas, filter/sort claims, switch views by URL hash. No network.
(function () {
  "use strict";
  var $ = function (s, r) { return (r || document).querySelector(s); };
  var $$ = function (s, r) { return Array.prototype.slice.call((r || document).querySelectorAll(s)); };

  // the LaTeX documents' own macros (\newcommand, \def, \DeclareMathOperator), for KaTeX's macros option
  var macrosEl = document.getElementById("katex-macros");
  var MACROS = {};
  try { MACROS = macrosEl ? JSON.parse(macrosEl.textContent) : {}; } catch (e) { MACROS = {}; }

  function typeset(root) {
    if (!window.katex) return;
    $$(".tex", root).forEach(function (el) {
      if (el.dataset.done) return;
      var tex = el.textContent;
      try {
        katex.render(tex, el, {displayMode: el.classList.contains("tex-d"), throwOnError: false, strict: "ignore",
                               output: "htmlAndMathml", macros: Object.assign({}, MACROS)});
        el.dataset.done = "1";
        el.setAttribute("data-tex", tex);
      } catch (e) { el.classList.add("tex-failed"); }
    });
  }

  var list = $("#claims-list");
  var claims = $$("#claims-list > details.claim");
  var controls = {q: $("#q"), verdict: $("#f-verdict"), doc: $("#f-doc"), topic: $("#f-topic"), kind: $("#f-kind")};

  function applyFilters() {
    var q = (controls.q.value || "").trim().toLowerCase().split(/\s+/).filter(Boolean);
    var v = controls.verdict.value, d = controls.doc.value, t = controls.topic.value, k = controls.kind.value;
    var n = 0;
    claims.forEach(function (c) {
      var ok = (!v || c.dataset.status === v) &&
        (!d || c.dataset.docs.split(" ").indexOf(d) >= 0) &&
        (!t || c.dataset.topics.split("|").indexOf(t) >= 0) &&
        (!k || c.dataset.kinds.split("|").indexOf(k) >= 0) &&
        q.every(function (w) { return c.dataset.search.indexOf(w) >= 0 || c.id.indexOf(w) >= 0; });
      c.hidden = !ok;
      if (ok) n++;
    });
    $("#shown").textContent = "showing " + n + " of " + claims.length;
    $("#none").hidden = n > 0;
    $$(".pill").forEach(function (p) { p.classList.toggle("active", p.dataset.filterVerdict === v); });
  }

  function sortBy(key) {
    var keyf = {
      verdict: function (c) { return [+c.dataset.severity, +c.dataset.order]; },
      document: function (c) { return [+c.dataset.order]; },
      id: function (c) { return [c.id]; },
      topic: function (c) { return [c.dataset.topics.split("|")[0], +c.dataset.severity, +c.dataset.order]; }
    }[key];
    claims.sort(function (a, b) {
      var x = keyf(a), y = keyf(b);
      for (var i = 0; i < x.length; i++) { if (x[i] < y[i]) return -1; if (x[i] > y[i]) return 1; }
      return 0;
    });
    claims.forEach(function (c) { list.appendChild(c); });
  }

  // Views and sentences are found by getElementById, never by a CSS selector built from the URL: an id is
  // a document's slug (model.document_slug), and a fragment is whatever the reader typed.
  function show(view) {
    $$(".view").forEach(function (s) { s.hidden = s.id !== "view-" + view; });
    $$(".tab").forEach(function (a) { a.classList.toggle("active", a.dataset.view === view); });
    var el = document.getElementById("view-" + view);
    if (el) typeset(el);
  }

  // how far the sticky header and filters reach down the window (they wrap to more rows in a narrow one): a
  // claim's scroll-margin-top (report.css) is that, so the browser's own scroll to #c-<id> on opening the
  // page, and scrollIntoView below, leave its title in sight
  function measureSticky() {
    var bar = $(".controls"), header = $("header.top");
    if (!bar || !bar.offsetHeight) return;
    var reach = getComputedStyle(bar).position === "sticky"  // a narrow window: only the header is sticky
      ? (parseFloat(getComputedStyle(bar).top) || 0) + bar.offsetHeight : (header ? header.offsetHeight : 0);
    document.documentElement.style.setProperty("--sticky", Math.ceil(reach) + "px");
  }

  function route() {
    var h;
    try { h = decodeURIComponent(location.hash.slice(1)); } catch (e) { h = location.hash.slice(1); }
    var target = h ? document.getElementById(h) : null;
    var docview = target && target.classList.contains("s") && target.closest(".docview");
    if (docview && docview.id.indexOf("view-") === 0) {  // a sentence of an annotated document
      show(docview.id.slice(5));
      for (var fold = target.closest("details.fold"); fold; fold = fold.parentElement.closest("details.fold")) {
        fold.open = true;  // a sentence under a fold (page furniture) is opened to, not hidden
      }
      target.scrollIntoView({block: "center"}); target.classList.add("flash");
      return;
    }
    var view = h && document.getElementById("view-" + h);
    if (/^doc-/.test(h) && view && view.classList.contains("docview")) { show(h); window.scrollTo(0, 0); return; }
    show("claims");
    measureSticky();
    if (/^c-/.test(h)) {
      var c = document.getElementById(h);
      if (c) {
        if (c.hidden) { Object.keys(controls).forEach(function (k) { controls[k].value = ""; }); applyFilters(); }
        c.open = true; typeset(c); c.scrollIntoView({block: "start"});  // below the sticky bars: measureSticky
      }
    }
  }

  Object.keys(controls).forEach(function (k) {
    controls[k].addEventListener(k === "q" ? "input" : "change", applyFilters);
  });
  $$(".pill").forEach(function (p) {
    p.addEventListener("click", function () {
      controls.verdict.value = controls.verdict.value === p.dataset.filterVerdict ? "" : p.dataset.filterVerdict;
      applyFilters();
    });
  });
  $("#sort").addEventListener("change", function (e) { sortBy(e.target.value); });
  $("#expand").addEventListener("click", function () {
    claims.forEach(function (c) { if (!c.hidden) c.open = true; });
  });
  $("#collapse").addEventListener("click", function () { claims.forEach(function (c) { c.open = false; }); });
  claims.forEach(function (c) { c.addEventListener("toggle", function () { if (c.open) typeset(c); }); });
  window.addEventListener("hashchange", route);
  window.addEventListener("resize", measureSticky);
  typeset($("#view-claims .answer"));
  claims.forEach(function (c) { typeset(c.querySelector("summary")); });
  applyFilters();
  route();
  document.documentElement.dataset.ready = "1";
})();
