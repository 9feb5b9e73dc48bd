// sdckit ui: draw the Plotly figures the server put in data-figure attributes, and open a
// lattice node's release when its point is clicked. Plotly (4.8 MB) loads asynchronously: the
// page is usable before it arrives, and whichever of the two comes last draws the figures.
window.sdckitDraw = function sdckitDraw(root) {
  if (typeof Plotly === "undefined") return;
  (root || document).querySelectorAll("[data-figure]").forEach(function (el) {
    if (el.dataset.drawn) return;
    var fig = JSON.parse(el.dataset.figure);
    Plotly.newPlot(el, fig.data, fig.layout, {responsive: true, displaylogo: false});
    el.dataset.drawn = "1";
    if (el.dataset.clickUrl) {
      el.on("plotly_click", function (ev) {
        var p = ev.points && ev.points[0];
        if (p && p.customdata !== undefined) {
          htmx.ajax("GET", el.dataset.clickUrl + encodeURIComponent(p.customdata),
                    {target: el.dataset.clickTarget, swap: "innerHTML"});
        }
      });
    }
  });
};
document.addEventListener("DOMContentLoaded", function () {
  sdckitDraw(document);
  document.body.addEventListener("htmx:afterSettle", function (e) { sdckitDraw(e.detail.elt); });
});
