// npgx report: sortable, filterable, paged tables. Rows come from the JSON in each table's
// JSON script element of class "rows"; cells are set with textContent (no HTML).
(function () {
  "use strict";
  function cmp(a, b) {
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b));
  }
  function show(c) {
    if (c === null) return "—";
    if (typeof c === "number" && !Number.isInteger(c)) return c.toPrecision(6);
    return String(c);
  }
  document.querySelectorAll(".datatable").forEach(function (box) {
    var rows = JSON.parse(box.querySelector("script.rows").textContent);
    var table = box.querySelector("table");
    var tbody = table.tBodies[0];
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var input = box.querySelector("input");
    var info = box.querySelector(".info");
    var size = 100, page = 0, col = -1, asc = true, view = rows.slice();
    function draw() {
      var pages = Math.max(1, Math.ceil(view.length / size));
      if (page >= pages) page = pages - 1;
      var frag = document.createDocumentFragment();
      view.slice(page * size, (page + 1) * size).forEach(function (r) {
        var tr = document.createElement("tr");
        r.forEach(function (c) {
          var td = document.createElement("td");
          td.textContent = show(c);
          if (typeof c === "number") td.className = "num";
          tr.appendChild(td);
        });
        frag.appendChild(tr);
      });
      tbody.replaceChildren(frag);
      info.textContent = view.length + " rows · page " + (page + 1) + " of " + pages;
    }
    function sort() {
      if (col < 0) return;
      var k = col, s = asc ? 1 : -1;
      view.sort(function (a, b) { return s * cmp(a[k], b[k]); });
    }
    function filter() {
      var q = input.value.toLowerCase();
      view = q ? rows.filter(function (r) {
        return r.some(function (c) { return c !== null && String(c).toLowerCase().indexOf(q) >= 0; });
      }) : rows.slice();
      sort();
      page = 0;
      draw();
    }
    heads.forEach(function (th, i) {
      th.addEventListener("click", function () {
        if (col === i) { asc = !asc; } else { col = i; asc = true; }
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        sort();
        page = 0;
        draw();
      });
    });
    input.addEventListener("input", filter);
    box.querySelector(".prev").addEventListener("click", function () { if (page > 0) { page--; draw(); } });
    box.querySelector(".next").addEventListener("click", function () { page++; draw(); });
    draw();
  });
})();
