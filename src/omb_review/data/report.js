"use strict";
// omb-review report: findings table (filter, sort), a finding's charts, comparison views.
// Data: the JSON in #report-data (built by omb_review.report); charts: Plotly, drawn lazily.
const D = JSON.parse(document.getElementById("report-data").textContent);
const FILTERS = ["system", "partition", "lineage", "benchmark", "placement"];
const CHARTS = new Map(D.charts.map(c => [c.id, c]));
const state = {filters: {}, text: "", all: false, sort: {col: "rank", dir: 1}, selected: null};
const $ = (sel, el = document) => el.querySelector(sel);
const fmt = (v, d = 4) => v == null ? "" : Number(v).toPrecision(d).replace(/\.?0+(e|$)/, "$1");
// Plotly reads Date objects in the browser's zone: give it UTC strings, as the hover says
const utc = t => new Date(t * 1000).toISOString().slice(0, 19).replace("T", " ");
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`);
const median = a => { const s = a.filter(x => x != null).sort((x, y) => x - y), n = s.length;
  return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : null; };
const epoch = iso => iso ? Date.parse(iso) / 1000 : null;
const LAYOUT = {margin: {l: 60, r: 40, t: 10, b: 50}, hovermode: "closest",
  legend: {orientation: "h", x: 0, y: -0.22, yanchor: "top"}};
const CONFIG = {responsive: true, displaylogo: false};

function matches(keys) {
  return FILTERS.every(f => !state.filters[f] || String(keys[f]) === state.filters[f]);
}

// ---- findings table --------------------------------------------------------------------
function rows() {
  const out = D.findings.map((f, i) => ({...f, rank: i, id: `f${i}`}));
  if (state.all) {
    const shown = new Set(out.flatMap(f => f.charts));
    for (const c of D.charts) if (!shown.has(c.id))
      out.push({id: `c${c.id}`, rank: 1e6 + c.id, status: "no finding", keys: c.keys,
                curve: c.title, charts: [c.id], sizes_text: "", value_change: "", what_changed: []});
  }
  return out;
}
const COLUMNS = [
  ["status", "status", r => r.status], ["system", "system", r => r.keys.system],
  ["partition", "partition", r => r.keys.partition], ["lineage", "environment", r => r.keys.lineage],
  ["benchmark", "benchmark", r => r.keys.benchmark], ["placement", "placement", r => r.keys.placement],
  ["curve", "curve", r => r.curve], ["sizes", "sizes", r => r.sizes_text],
  ["change", "change", r => r.value_change, r => r.change_max ?? -1e9],
  ["confidence", "confidence", r => r.confidence == null ? "" : fmt(r.confidence, 3)],
  ["first_bad", "first bad run", r => r.first_bad_run ?
    `${r.first_bad_run.time.slice(0, 16).replace("T", " ")} job ${r.first_bad_run.jobid}` : "",
    r => r.first_bad_run ? r.first_bad_run.time : ""],
  ["changed", "what changed", r => r.what_changed.map(c => c.field).join(", ")],
];

function buildFilters() {
  const all = rows().concat(D.charts.map(c => ({keys: c.keys})));
  const box = $("#filters");
  for (const f of FILTERS) {
    const values = [...new Set(all.map(r => r.keys[f]).filter(v => v != null))].sort();
    const sel = document.createElement("select");
    sel.id = `filter-${f}`;
    sel.innerHTML = `<option value="">all</option>` +
      values.map(v => `<option>${esc(v)}</option>`).join("");
    sel.onchange = () => { state.filters[f] = sel.value; refresh(); };
    const label = document.createElement("label");
    label.append(`${f} `, sel);
    box.append(label);
  }
  $("#filter-text").oninput = e => { state.text = e.target.value.toLowerCase(); refresh(); };
  $("#filter-all").onchange = e => { state.all = e.target.checked; refresh(); };
}

function renderTable() {
  const col = COLUMNS.find(c => c[0] === state.sort.col);
  const key = col ? (col[3] || col[2]) : (r => r.rank);
  const list = rows().filter(r => matches(r.keys) &&
    (!state.text || r.curve.toLowerCase().includes(state.text)));
  list.sort((a, b) => { const x = key(a), y = key(b);
    return (x < y ? -1 : x > y ? 1 : a.rank - b.rank) * state.sort.dir; });
  const head = COLUMNS.map(c => `<th data-col="${c[0]}" class="${state.sort.col === c[0] ?
    "sorted" + state.sort.dir : ""}">${c[1]}</th>`).join("");
  const body = list.map(r => `<tr id="row-${r.id}" class="${esc(r.status)}${state.selected ===
    r.id ? " selected" : ""}" data-id="${r.id}">` + COLUMNS.map(c =>
    `<td class="${c[0]}">${c[0] === "curve" ? `<a href="#${r.id}">${esc(c[2](r))}</a>` :
      esc(c[2](r))}</td>`).join("") + "</tr>").join("");
  const none = `<tr><td colspan="${COLUMNS.length}">${D.findings.length ? "No finding matches " +
    "the filters." : "No regression or improvement found."} Tick "curves without a finding" ` +
    "to browse every curve.</td></tr>";
  $("#findings-table").innerHTML = `<thead><tr>${head}</tr></thead><tbody>${body || none}` +
    "</tbody>";
  $("#findings-count").textContent = `${list.length} shown (${D.findings.length} findings, ` +
    `${D.charts.length} curves)`;
  document.body.dataset.rowsShown = list.length;
}

// ---- one finding: time series, size curve before vs after, detail ----------------------
function seriesOptions(row, chart) {
  const worst = (row.detail || []).slice().sort((a, b) => b.change - a.change)[0];
  const sel = $("#detail-size");
  sel.innerHTML = chart.series.map((s, i) => `<option value="${i}">${esc(s.var)}` +
    `${s.status && s.status !== "ok" ? " (" + esc(s.status) + ")" : ""}</option>`).join("");
  const i = worst ? chart.series.findIndex(s => s.var === worst.perf_var) : 0;
  sel.value = String(Math.max(i, 0));
}

function showDetail(id) {
  const row = rows().find(r => r.id === id);
  if (!row) return;
  state.selected = id;
  const chart = CHARTS.get(row.charts[0]);
  if (!chart) return;
  const box = $("#detail");
  box.hidden = false;
  $("#detail-title").textContent = `${row.status}: ${row.curve}`;
  const bad = row.first_bad_run, win = row.baseline_window;
  $("#detail-summary").innerHTML = row.status === "no finding" ? "No finding on this curve." :
    `${esc(row.sizes_text)}, ${esc(row.value_change)}, confidence &ge; ${fmt(row.confidence, 3)}` +
    (bad ? `; first bad run ${esc(bad.time)}, job ${esc(bad.jobid)}` +
      (bad.session_tag ? `, tag ${esc(bad.session_tag)}` : "") : "") +
    (win ? `; baseline ${esc(win.start.slice(0, 10))} .. ${esc(win.end.slice(0, 10))} ` +
      `(${win.runs} runs)` : "");
  $("#detail-changed").innerHTML = row.what_changed.length ? "<tr><th>what changed</th>" +
    "<th>baseline runs</th><th>first bad run</th></tr>" + row.what_changed.map(c =>
    `<tr class="changed"><td>${esc(c.field)}</td><td>${c.baseline.map(esc).join("<br>")}` +
    `${c.baseline_distinct > c.baseline.length ? ` (${c.baseline_distinct} values)` : ""}</td>` +
    `<td>${esc(c.first_bad)}</td></tr>`).join("") : "";
  $("#detail-sizes").innerHTML = (row.detail || []).length ? "<tr><th>variable</th>" +
    "<th>change (+ = worse)</th><th>confidence</th><th>baseline median</th>" +
    "<th>latest median</th></tr>" + row.detail.map(d => `<tr><td>${esc(d.perf_var)}</td>` +
    `<td>${(100 * d.change).toFixed(1)}%</td><td>${fmt(d.confidence, 3)}</td>` +
    `<td>${fmt(d.baseline_median)}</td><td>${fmt(d.latest_median)}</td></tr>`).join("") : "";
  seriesOptions(row, chart);
  $("#detail-size").onchange = () => drawTimeSeries(row, chart);
  renderTable();
  box.scrollIntoView();
  whenPlotly(() => { drawTimeSeries(row, chart); drawBeforeAfter(row, chart); });
}

function drawTimeSeries(row, chart) {
  const s = chart.series[Number($("#detail-size").value)];
  const unit = chart.keys.unit, x = chart.t.map(utc);
  const ok = s.v.map((v, i) => v != null ? i : -1).filter(i => i >= 0);
  const vals = ok.map(i => s.v[i]);
  const lo = vals.length ? Math.min(...vals) : 0, hi = vals.length ? Math.max(...vals) : 1;
  const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 1;
  const traces = [];
  if (s.lo) traces.push(
    {x, y: s.lo.map((v, i) => v ?? s.hi[i]), mode: "lines", line: {width: 0}, hoverinfo: "skip",
     showlegend: false, connectgaps: true},
    {x, y: s.hi.map((v, i) => v ?? s.lo[i]), mode: "lines", line: {width: 0}, fill: "tonexty",
     fillcolor: "rgba(44,160,44,0.15)", name: "reference band", hoverinfo: "skip",
     connectgaps: true});
  traces.push({x: ok.map(i => x[i]), y: vals, mode: "markers", type: "scatter", name: s.var,
    marker: {size: 5, color: "#1f77b4"}, customdata: ok.map(i => [chart.job[i], D.infos[chart.info[i]]]),
    hovertemplate: `%{y:.4g} ${unit}<br>%{x|%Y-%m-%d %H:%M} UTC<br>job %{customdata[0]}` +
      "<br>%{customdata[1]}<extra></extra>"});
  const failed = s.v.map((v, i) => v == null ? i : -1).filter(i => i >= 0);
  if (failed.length) traces.push({x: failed.map(i => x[i]), y: failed.map(() => lo - pad / 2),
    mode: "markers", name: "failed run", marker: {symbol: "x", color: "#d62728", size: 7},
    customdata: failed.map(i => chart.job[i]), hovertemplate: "failed: job %{customdata}<extra></extra>"});
  const line = (t, color, dash) => ({type: "line", xref: "x", yref: "paper", x0: t, x1: t, y0: 0,
    y1: 1, line: {color, dash, width: 1.5}});
  const shapes = (s.cp || []).map(t => line(utc(epoch(t)), "#ff7f0e", "dash"));
  if (row.first_bad_run) shapes.push(line(utc(epoch(row.first_bad_run.time)), "#d62728", "dot"));
  if (row.baseline_window) shapes.push({type: "rect", xref: "x", yref: "paper", y0: 0, y1: 1,
    x0: utc(epoch(row.baseline_window.start)), x1: utc(epoch(row.baseline_window.end)),
    fillcolor: "rgba(120,120,120,0.10)", line: {width: 0}, layer: "below"});
  Plotly.react("detail-ts", traces, {...LAYOUT, shapes, yaxis: {title: {text: unit},
    range: [lo - pad, hi + pad]}, xaxis: {type: "date"}}, CONFIG);
  drawn();
}

function drawBeforeAfter(row, chart) {
  const bad = epoch(row.first_bad_run?.time), win = row.baseline_window;
  const before = win ? (t => t >= epoch(win.start) && t <= epoch(win.end)) :
    (t => t < (bad ?? D.meta.split));
  const after = t => t >= (bad ?? D.meta.split);
  const curve = (pick, name, dash) => {
    const pts = chart.series.filter(s => s.size != null).map(s =>
      [s.size, median(s.v.filter((v, i) => pick(chart.t[i])))]).filter(p => p[1] != null);
    return {x: pts.map(p => Math.max(p[0], 0.5)), y: pts.map(p => p[1]), name,
      mode: "lines+markers", line: {dash}, customdata: pts.map(p => p[0]),
      hovertemplate: `%{customdata} B: %{y:.4g} ${chart.keys.unit}<extra>${name}</extra>`};
  };
  const split = bad ? `first bad run ${row.first_bad_run.time.slice(0, 10)}` : D.meta.split_caption;
  const b = curve(before, "before", "solid"), a = curve(after, `after (${split})`, "dash");
  const ratio = {x: [], y: [], name: "after / before (right axis)", yaxis: "y2", mode: "lines",
    line: {color: "#9467bd", width: 1}, hovertemplate: "%{y:.3f} x<extra></extra>"};
  b.x.forEach((x, i) => { const j = a.x.indexOf(x);
    if (j >= 0) { ratio.x.push(x); ratio.y.push(a.y[j] / b.y[i]); } });
  const both = ratio.x.length > 0;  // no ratio axis where one side has no run
  Plotly.react("detail-curve", both ? [b, a, ratio] : [b, a], {...LAYOUT,
    margin: {...LAYOUT.margin, r: 60},
    xaxis: {type: "log", title: {text: "message size (bytes; 0 B drawn at 0.5)"}},
    yaxis: {type: "log", title: {text: chart.keys.unit}},
    yaxis2: {overlaying: "y", side: "right", visible: both, title: {text: "after / before"}, showgrid: false,
      tickformat: ".2f", range: [Math.min(1, ...ratio.y) - 0.02, Math.max(1, ...ratio.y) + 0.02]}},
    CONFIG);
  drawn();
}

// ---- comparison views --------------------------------------------------------------------
const LOGLOG = unit => ({...LAYOUT, xaxis: {type: "log", title: {text: "message size (bytes)"}},
  yaxis: {type: "log", title: {text: unit}}});
const VIEWS = {
  libraries: g => [g.lines.map(l => ({...l, mode: "lines+markers",
    x: l.x.map(v => Math.max(v, 0.5))})), LOGLOG(g.unit)],
  placements: g => VIEWS.libraries(g),
  scaling: g => [g.lines.map((l, i) => ({...l, mode: "lines+markers",
    visible: i % Math.ceil(g.lines.length / 4) === 0 ? true : "legendonly"})),
    {...LAYOUT, xaxis: {type: "category", title: {text: "scale"}}, yaxis: {type: "log", title: {text: g.unit}}}],
  algorithms: (g, size) => {
    const k = size ?? Math.floor(g.sizes.length / 2), z = g.z[k];
    const ref = g.scales.map((_, j) => g.default ? z[g.algs.indexOf(g.default)][j] :
      Math.min(...z.map(r => r[j]).filter(v => v != null)));
    const rel = z.map(r => r.map((v, j) => v == null || !ref[j] ? null : v / ref[j]));
    const top = Math.max(1, ...rel.flat().filter(v => v).map(v => Math.abs(Math.log2(v))));
    const ticks = [-3, -2, -1, 0, 1, 2, 3].filter(t => Math.abs(t) <= Math.ceil(top));
    return [[{type: "heatmap", z: rel.map(r => r.map(v => v && Math.log2(v))), x: g.scales.map(String),
      y: g.algs, zmin: -top, zmax: top, colorscale: "RdBu", customdata: z,
      text: rel.map(r => r.map(v => v == null ? "" : v.toFixed(2))), texttemplate: "%{text}",
      colorbar: {title: {text: g.default ? "x default" : "x fastest"}, tickvals: ticks,
        ticktext: ticks.map(t => String(2 ** t))},
      hovertemplate: `%{y} at %{x} processes: %{customdata:.4g} ${g.unit} (%{text} x)` +
        "<extra></extra>"}],
      {...LAYOUT, xaxis: {type: "category", title: {text: "processes"}},
       yaxis: {automargin: true, autorange: "reversed"}, margin: {...LAYOUT.margin, l: 150}}];
  },
  hockney: g => [[{x: g.sizes.map(v => Math.max(v, 0.5)), y: g.times, mode: "markers",
    name: "median per size"}, {x: g.sizes.map(v => Math.max(v, 0.5)), y: g.sizes.map(n =>
    g.alpha + (g.beta ? n / g.beta : 0)), mode: "lines", name: "T = L + M/B"}],
    LOGLOG("us per message")],
};

// which curve is best at how many sizes (lower times, higher rates)
function best(g) {
  const lower = !/\/s$|%$/.test(g.unit), wins = new Map();
  const sizes = [...new Set(g.lines.flatMap(l => l.x))];
  for (const s of sizes) {
    let pick = null, val = null;
    for (const l of g.lines) { const v = l.y[l.x.indexOf(s)];
      if (v != null && (val == null || (lower ? v < val : v > val))) { pick = l.name; val = v; } }
    if (pick) wins.set(pick, (wins.get(pick) || 0) + 1);
  }
  return [...wins].sort((a, b) => b[1] - a[1]).map(([n, k]) =>
    `${n} best at ${k} of ${sizes.length} sizes`).join("; ");
}

function viewCard(kind, g, i) {
  const card = document.createElement("div");
  card.className = "card";
  card.dataset.keys = JSON.stringify(g.keys);
  const note = kind === "algorithms" ? `relative to ${g.default ? "the default algorithm" :
    "the fastest algorithm of each scale (no default run)"}; size <select>${g.sizes.map((s, k) =>
    `<option value="${k}">${s} B</option>`).join("")}</select>` :
    esc(g.note || (kind === "libraries" || kind === "placements" ? best(g) : ""));
  card.innerHTML = `<h3>${esc(g.title)}</h3><div class="muted">${note}</div>` +
    `<div class="plot" id="${kind}-${i}" data-kind="${kind}" data-i="${i}"></div>`;
  const sel = $("select", card);
  if (sel) { sel.value = String(Math.floor(g.sizes.length / 2));
    sel.onchange = () => draw(card.lastChild, Number(sel.value)); }
  return card;
}

function draw(el, size) {
  const g = D.views[el.dataset.kind][Number(el.dataset.i)];
  const [traces, layout] = VIEWS[el.dataset.kind](g, size);
  Plotly.react(el, traces, layout, CONFIG);
  el.dataset.drawn = "1";
  drawn();
}

const observer = new IntersectionObserver(entries => entries.forEach(e => {
  if (e.isIntersecting && !e.target.dataset.drawn) whenPlotly(() => draw(e.target));
}), {rootMargin: "300px"});

function buildViews() {
  for (const [kind, groups] of Object.entries(D.views)) {
    const box = document.getElementById(`view-${kind}`);
    if (!box) continue;
    if (!groups.length) { box.innerHTML = `<p class="muted">${esc(D.empty[kind])}</p>`; continue; }
    groups.forEach((g, i) => { const c = viewCard(kind, g, i); box.append(c);
      observer.observe(c.lastChild); });
  }
}

function filterViews() {
  document.querySelectorAll(".card").forEach(c => { c.hidden = !matches(JSON.parse(c.dataset.keys)); });
}

// ---- glue ----------------------------------------------------------------------------------
let plotlyReady = false;
const pending = [];
function whenPlotly(fn) { plotlyReady ? fn() : pending.push(fn); }
function drawn() {
  document.body.dataset.plotsDrawn = document.querySelectorAll(".js-plotly-plot").length;
}
function refresh() { renderTable(); filterViews(); }
function route() { const id = location.hash.slice(1); if (/^[fc]\d+$/.test(id)) showDetail(id); }

buildFilters();
renderTable();
buildViews();
$("#findings-table").addEventListener("click", e => {
  const th = e.target.closest("th");
  if (th) { const col = th.dataset.col;
    state.sort = {col, dir: state.sort.col === col ? -state.sort.dir : 1}; renderTable(); return; }
  const tr = e.target.closest("tr[data-id]");
  if (tr && !e.target.closest("a")) location.hash = tr.dataset.id;
});
window.addEventListener("hashchange", route);
window.addEventListener("load", () => {
  plotlyReady = true;
  pending.splice(0).forEach(fn => fn());
  document.body.dataset.ready = "1";
  route();
});
