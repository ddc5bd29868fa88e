// charts.js: the console's live charts. An element .chart with
// hx-ext="sse" sse-connect="/live?..." sse-swap="history,point"
// hx-swap="none" gets a uPlot chart; the stream's "history" event
// replaces its data (the hour the server holds), "point" appends the
// samples taken since. Event data: {"t": [unix seconds], "v": [[line
// values, null where none]], "seq": n}. The chart's data stays on the
// element as el.chartData (the tests read it).
(function () {
  "use strict";
  var HOUR = 3600;
  var colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

  function plotFor(el) {
    if (el.plot) return el.plot;
    var names = (el.dataset.lines || "value").split(",");
    var series = [{}];
    names.forEach(function (n, i) {
      series.push({ label: n, stroke: colors[i % colors.length], width: 2, spanGaps: false });
    });
    el.chartData = [[]].concat(names.map(function () { return []; }));
    el.plot = new uPlot({ width: Math.max(el.clientWidth, 400), height: 240, series: series,
      axes: [{}, { size: 70 }], scales: { y: { range: function (u, min, max) { return [0, Math.max(max, 1)]; } } } },
      el.chartData, el);
    return el.plot;
  }

  function onMessage(evt) {
    var el = evt.target;
    if (!el.classList || !el.classList.contains("chart")) return;
    var msg = evt.detail, d;
    try { d = JSON.parse(msg.data); } catch (e) { return; }
    var plot = plotFor(el);
    var data = el.chartData;
    if (msg.type === "history") {
      data = [d.t].concat(d.v);
    } else {
      data[0] = data[0].concat(d.t);
      for (var i = 0; i < d.v.length; i++) data[i + 1] = (data[i + 1] || []).concat(d.v[i]);
      // Only the last hour.
      var from = d.t.length ? d.t[d.t.length - 1] - HOUR : 0, cut = 0;
      while (cut < data[0].length && data[0][cut] < from) cut++;
      if (cut > 0) data = data.map(function (a) { return a.slice(cut); });
    }
    el.chartData = data;
    el.dataset.seq = d.seq;
    plot.setData(data);
  }

  document.addEventListener("htmx:sseMessage", onMessage);
  window.addEventListener("resize", function () {
    document.querySelectorAll(".chart").forEach(function (el) {
      if (el.plot) el.plot.setSize({ width: Math.max(el.clientWidth, 400), height: 240 });
    });
  });
})();
