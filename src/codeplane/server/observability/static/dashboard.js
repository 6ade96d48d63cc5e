// CodePlane dashboard: polls /dashboard/api/live and /dashboard/api/operations; no libraries, no CDN.
// Every value from the server is inserted as text (tool names, paths and ids come from agents).
"use strict";

const POLL_MS = 2000;
const SVG_NS = "http://www.w3.org/2000/svg";
const state = { selectedTrace: null, lastLive: null, busy: false };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "style") node.setAttribute("style", value);
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else if (key === "title") node.title = value;
    else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

function facts(target, pairs) {
  target.replaceChildren(...pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v === null || v === undefined ? "–" : v)]));
}

const fmtMs = (ms) => (ms === null || ms === undefined ? "–" : ms < 10 ? ms.toFixed(2) + " ms" : ms < 1000 ? ms.toFixed(1) + " ms" : (ms / 1000).toFixed(2) + " s");
const fmtBytes = (b) => (b === null || b === undefined ? "–" : b > 1 << 30 ? (b / (1 << 30)).toFixed(2) + " GiB" : b > 1 << 20 ? (b / (1 << 20)).toFixed(1) + " MiB" : b > 1024 ? (b / 1024).toFixed(1) + " KiB" : b + " B");
const fmtTime = (ms) => new Date(ms).toLocaleTimeString([], { hour12: false }) + "." + String(ms % 1000).padStart(3, "0");
const shortId = (id) => (id ? (id.length > 14 ? id.slice(0, 14) + "…" : id) : "–");

async function getJson(url) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(url + ": HTTP " + response.status);
  return response.json();
}

function renderHealth(live) {
  const s = live.server, idx = live.index;
  const badge = document.getElementById("health");
  let text = "healthy", cls = "badge ok";
  if (!s.ready) { text = "starting: " + s.ready_reason; cls = "badge warn"; }
  if (idx.error || idx.state === "error") { text = "index error"; cls = "badge err"; }
  else if (idx.watcher === "failed") { text = "watcher failed"; cls = "badge warn"; }
  else if (s.last_error) { text = "last error"; cls = "badge warn"; }
  badge.textContent = text; badge.className = cls; badge.title = s.last_error || idx.error || "";
  document.getElementById("repo").textContent = s.repo;
  document.getElementById("server-meta").textContent =
    `pid ${s.pid} · v${s.version} · up ${Math.round(s.uptime_ms / 1000)} s` + (s.otlp_failing ? " · OTLP export failing: " + s.otlp_failing : s.otlp_export ? " · OTLP export on" : "") +
    (s.observability ? "" : " · observability off");
  document.getElementById("updated").textContent = "updated " + fmtTime(live.now_ms);
  facts(document.getElementById("index-facts"), [
    ["state", idx.state], ["epoch", idx.epoch],
    ["last reconcile", idx.last_reconcile_age_s === null ? "never" : `${idx.last_reconcile_age_s} s ago (${idx.last_reconcile_duration_ms} ms)`],
    ["pending changes", idx.pending_changes], ["watcher", idx.watcher],
    ["HEAD", idx.head ? idx.head.slice(0, 12) + (idx.head_drift ? " (index behind)" : " (indexed)") : "unborn"],
    ["files", `${idx.files ?? 0} (${idx.indexed_files ?? 0} text)`],
  ]);
  const all = live.calls.all;
  document.getElementById("window-label").textContent = Math.round(live.calls.window_s / 60) + " min";
  facts(document.getElementById("call-facts"), [
    ["calls", all.calls], ["per minute", all.per_min], ["errors", all.errors],
    ["p50 / p95 / p99", `${fmtMs(all.p50_ms)} / ${fmtMs(all.p95_ms)} / ${fmtMs(all.p99_ms)}`],
    ["traces kept", live.traces_kept],
  ]);
  const p = live.process;
  facts(document.getElementById("process-facts"), [
    ["memory (RSS)", fmtBytes(p.rss_bytes)], ["CPU", p.cpu_seconds + " s"], ["open files", p.open_fds],
  ]);
}

function renderRateChart(calls) {
  const chart = document.getElementById("rate-chart");
  const series = calls.all.series, errors = calls.all.error_series;
  const peak = Math.max(1, ...series);
  const width = 600 / series.length;
  const nodes = [];
  series.forEach((count, i) => {
    const h = (count / peak) * 110, e = (errors[i] / peak) * 110;
    if (count) nodes.push(svg("rect", { x: i * width + 1, y: 115 - h, width: width - 2, height: h - e, fill: "#3b5bdb" }));
    if (errors[i]) nodes.push(svg("rect", { x: i * width + 1, y: 115 - e, width: width - 2, height: e, fill: "#e03131" }));
  });
  const label = svg("text", { x: 4, y: 12, "font-size": 10, fill: "#6b7385" });
  label.textContent = `peak ${peak}`;
  nodes.push(label);
  chart.replaceChildren(...nodes);
  document.getElementById("bucket-label").textContent = calls.bucket_s + " s";
}

function renderLatencyChart(calls) {
  const chart = document.getElementById("latency-chart");
  const tools = Object.entries(calls.tools);
  const nodes = [];
  if (!tools.length) { chart.replaceChildren(); return; }
  const maxMs = Math.max(1, ...tools.map(([, s]) => s.p99_ms));
  const scale = (ms) => 110 * Math.log10(1 + ms) / Math.log10(1 + maxMs);
  const width = 600 / tools.length;
  tools.forEach(([tool, s], i) => {
    const x = i * width;
    [["p99_ms", "#ffc9c9"], ["p95_ms", "#ffd8a8"], ["p50_ms", "#3b5bdb"]].forEach(([key, color], j) => {
      const h = scale(s[key]);
      nodes.push(svg("rect", { x: x + 2 + j * 2, y: 112 - h, width: Math.max(2, width - 4 - j * 4), height: h, fill: color }));
    });
    const label = svg("text", { x: x + 3, y: 10, "font-size": 9, fill: "#1d2433" });
    label.textContent = tool.slice(0, Math.max(3, Math.floor(width / 6)));
    nodes.push(label);
  });
  chart.replaceChildren(...nodes);
}

function sparkline(series) {
  const peak = Math.max(1, ...series);
  const line = svg("svg", { class: "spark", viewBox: `0 0 ${series.length} 10`, preserveAspectRatio: "none" });
  const points = series.map((v, i) => `${i},${10 - (v / peak) * 9}`).join(" ");
  line.append(svg("polyline", { points, fill: "none", stroke: "#3b5bdb", "stroke-width": 0.6 }));
  return line;
}

function renderTools(calls) {
  const rows = Object.entries(calls.tools).sort((a, b) => b[1].calls - a[1].calls).map(([tool, s]) =>
    el("tr", { "data-tool": tool },
      el("td", {}, tool), el("td", { class: "num" }, s.calls), el("td", { class: "num" }, s.per_min),
      el("td", { class: "num" + (s.errors ? " outcome-error" : "") }, s.errors),
      el("td", { class: "num" }, fmtMs(s.p50_ms)), el("td", { class: "num" }, fmtMs(s.p95_ms)),
      el("td", { class: "num" }, fmtMs(s.p99_ms)), el("td", { class: "num" }, fmtMs(s.max_ms)),
      el("td", {}, sparkline(s.series))));
  document.querySelector("#tools-table tbody").replaceChildren(
    ...(rows.length ? rows : [el("tr", {}, el("td", { colSpan: 9, class: "muted" }, "no calls in the window"))]));
}

function budgetRow(name, used, limit) {
  const pct = limit ? Math.min(100, (100 * used) / limit) : 0;
  const cls = pct >= 100 ? "full" : pct >= 80 ? "hot" : "";
  const shown = name === "read_bytes" ? `${fmtBytes(used)} / ${fmtBytes(limit)}` : `${used} / ${limit}`;
  return [el("span", {}, name), el("div", { class: "bar" }, el("span", { class: cls, style: `width:${pct}%` })),
    el("span", { class: "num", "data-budget": name }, shown + ` (${pct.toFixed(0)}%)`)];
}

function renderTasks(tasks) {
  const box = document.getElementById("tasks");
  if (!tasks.length) { box.replaceChildren(el("p", { class: "muted" }, "no open tasks")); return; }
  box.replaceChildren(...tasks.map((t) => {
    const flags = [];
    if (t.no_op) flags.push(el("span", { class: "flag" }, `no-op ×${t.no_op}`));
    if (t.non_progress) flags.push(el("span", { class: "flag bad" }, `non-progress ×${t.non_progress}`));
    for (const [fp, n] of Object.entries(t.repeated_failures))
      flags.push(el("span", { class: "flag bad", title: fp }, `failure ${fp.slice(0, 10)} ×${n}`));
    return el("div", { class: "task", "data-task": t.task_id },
      el("h3", {}, t.task_id, " ", el("span", { class: "muted" }, t.implicit ? "(implicit)" : ""),
        " ", el("a", { href: "#", onclick: (ev) => { ev.preventDefault(); filterTask(t.task_id); } }, "operations")),
      el("div", { class: "muted" }, `session ${t.session_id} · ${t.operations} operations · ${t.per_min}/min` +
        (t.idle_s === null ? "" : ` · last ${t.idle_s} s ago`) + ` · max budget use ${t.max_use_pct}%`),
      el("div", { class: "budget" }, ...Object.entries(t.use).map(([name, [used, limit]]) => budgetRow(name, used, limit))),
      el("div", { class: "flags" }, flags.length ? flags : el("span", { class: "muted" }, "no convergence flags")));
  }));
}

function renderRuns(runs) {
  const rows = runs.map((r) => el("tr", { "data-run": r.run_id },
    el("td", {}, r.run_id), el("td", { class: r.state === "passed" ? "outcome-ok" : r.state === "running" || r.state === "queued" ? "" : "outcome-error" }, r.state),
    el("td", { class: "num" }, r.targets), el("td", { class: "num" }, r.passed), el("td", { class: "num" }, r.failed + r.error),
    el("td", { class: "num" }, r.duration_ms === null ? `${Math.round(r.progress)}%` : fmtMs(r.duration_ms))));
  document.querySelector("#runs-table tbody").replaceChildren(
    ...(rows.length ? rows : [el("tr", {}, el("td", { colSpan: 6, class: "muted" }, "no test runs yet"))]));
}

function setOptions(select, values, label) {
  const current = select.value;
  const wanted = ["", ...values];
  if (current && !wanted.includes(current)) wanted.push(current);
  const existing = [...select.options].map((o) => o.value);
  if (existing.join("\n") === wanted.join("\n")) return;
  select.replaceChildren(...wanted.map((v) => el("option", { value: v }, v === "" ? "any" : label(v))));
  select.value = current;
}

function filterTask(taskId) {
  const select = document.getElementById("f-task");
  if (![...select.options].some((o) => o.value === taskId)) select.append(el("option", { value: taskId }, taskId));
  select.value = taskId;
  refreshOperations();
}

async function refreshOperations() {
  const params = new URLSearchParams({ limit: "100" });
  const task = document.getElementById("f-task").value, tool = document.getElementById("f-tool").value;
  const outcome = document.getElementById("f-outcome").value, time = document.getElementById("f-time").value;
  if (task) params.set("task", task);
  if (tool) params.set("tool", tool);
  if (outcome) params.set("outcome", outcome);
  if (time) params.set("since_ms", String(Date.now() - Number(time) * 1000));
  const data = await getJson("/dashboard/api/operations?" + params);
  setOptions(document.getElementById("f-task"), data.tasks, (v) => v);
  setOptions(document.getElementById("f-tool"), data.tools, (v) => v);
  document.getElementById("ops-count").textContent = `${data.operations.length} shown of ${data.total} matching (${data.kept} kept)`;
  const rows = data.operations.map((op) => {
    const flags = [];
    if (op.no_op) flags.push(el("span", { class: "flag" }, "no-op"));
    if (op.non_progress) flags.push(el("span", { class: "flag bad" }, "non-progress"));
    if (op.failure_fingerprint) flags.push(el("span", { class: "flag bad", title: op.failure_fingerprint }, "failure " + op.failure_fingerprint.slice(0, 8)));
    const row = el("tr", { "data-trace": op.trace_id, "data-tool": op.tool, "data-outcome": op.outcome, class: op.trace_id === state.selectedTrace ? "selected" : "" },
      el("td", {}, fmtTime(op.started_ms)), el("td", {}, op.tool), el("td", { title: op.task_id || "" }, shortId(op.task_id)),
      el("td", { class: "outcome-" + op.outcome }, op.outcome + (op.error_code ? ` ${op.error_code} ${op.error_name || ""}` : "")),
      el("td", { class: "num" }, fmtMs(op.duration_ms)),
      el("td", { title: op.files.join("\n") }, op.files_total ? `${op.files_total}: ${op.files.slice(0, 2).join(", ")}${op.files_total > 2 ? "…" : ""}` : ""),
      el("td", {}, flags));
    row.addEventListener("click", () => showTrace(op.trace_id));
    return row;
  });
  document.querySelector("#ops-table tbody").replaceChildren(
    ...(rows.length ? rows : [el("tr", {}, el("td", { colSpan: 7, class: "muted" }, "no operations match"))]));
}

async function showTrace(traceId) {
  state.selectedTrace = traceId;
  document.querySelectorAll("#ops-table tbody tr").forEach((r) => r.classList.toggle("selected", r.dataset.trace === traceId));
  const panel = document.getElementById("trace-panel");
  let op;
  try { op = await getJson("/dashboard/api/traces/" + encodeURIComponent(traceId)); }
  catch (err) { panel.hidden = false; document.getElementById("trace-view").replaceChildren(el("p", { class: "muted" }, String(err))); return; }
  panel.hidden = false;
  document.getElementById("trace-title").textContent = `${op.tool} · ${op.trace_id}`;
  facts(document.getElementById("trace-facts"), [
    ["request", op.request_id], ["task", op.task_id], ["session", op.session_id],
    ["outcome", op.outcome + (op.error_code ? ` (${op.error_code} ${op.error_name})` : "")],
    ["duration", fmtMs(op.duration_ms)], ["files", op.files_total ? op.files.join(", ") : "none"],
    ["detail", op.detail || "–"],
  ]);
  const total = Math.max(0.001, ...op.spans.map((s) => s.offset_ms + s.duration_ms));
  const rows = op.spans.map((s) => {
    const attrs = Object.entries(s.attrs).filter(([k]) => !["tool", "request_id", "session_id"].includes(k) || s.depth > 0)
      .map(([k, v]) => `${k}=${v}`).join("  ");
    return el("div", { class: "span-row", "data-span": s.name },
      el("span", { class: "span-name", style: `padding-left:${s.depth * 14}px`, title: s.name }, s.name),
      el("div", { class: "lane" }, el("span", { class: s.error ? "err" : "", style: `left:${(100 * s.offset_ms) / total}%;width:${(100 * s.duration_ms) / total}%` })),
      el("span", { class: "num" }, fmtMs(s.duration_ms)),
      el("span", { class: "attrs", title: attrs }, (s.error ? `error=${s.error}  ` : "") + attrs));
  });
  if (op.dropped_spans) rows.push(el("p", { class: "muted" }, `${op.dropped_spans} more spans were not kept`));
  document.getElementById("trace-view").replaceChildren(...rows);
}

async function refresh() {
  if (state.busy) return;
  state.busy = true;
  try {
    const live = await getJson("/dashboard/api/live");
    state.lastLive = live;
    renderHealth(live);
    renderRateChart(live.calls);
    renderLatencyChart(live.calls);
    renderTools(live.calls);
    renderTasks(live.tasks);
    renderRuns(live.test_runs);
    await refreshOperations();
  } catch (err) {
    const badge = document.getElementById("health");
    badge.textContent = "unreachable"; badge.className = "badge err"; badge.title = String(err);
  } finally {
    state.busy = false;
  }
}

for (const id of ["f-task", "f-tool", "f-outcome", "f-time"]) document.getElementById(id).addEventListener("change", () => refreshOperations());
document.getElementById("trace-close").addEventListener("click", () => {
  document.getElementById("trace-panel").hidden = true; state.selectedTrace = null;
});
refresh();
setInterval(refresh, POLL_MS);
