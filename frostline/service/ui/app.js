// frostline web UI: a small single-page app over the HTTP API. No build step.
"use strict";

const view = document.getElementById("view");
const TOKEN_KEY = "frostline.token";
const OUTCOMES = ["replayed", "executed", "diverged", "orphan", "semantic_repeat", "failed", "denied", "unresolved", "waiting"];

function token() { return sessionStorage.getItem(TOKEN_KEY); }

async function api(path, options = {}) {
  const headers = Object.assign({ "Authorization": "Bearer " + token() }, options.headers || {});
  const res = await fetch(path, Object.assign({}, options, { headers }));
  if (res.status === 401) { sessionStorage.removeItem(TOKEN_KEY); location.hash = "#/login"; throw new Error("unauthorized"); }
  if (!res.ok) {
    let msg = res.statusText;
    try { const body = await res.json(); msg = (body.error && body.error.message) || msg; } catch (e) { /* not JSON */ }
    throw new Error(msg);
  }
  return res;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "onclick") node.addEventListener("click", v);
    // through the CSSOM: the Content-Security-Policy refuses style attributes
    else if (k === "style") node.style.cssText = v;
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function chip(status) { return el("span", { class: "chip " + status }, status.replace("_", " ")); }
function clip(text, n) { return text.length > n ? text.slice(0, n - 1) + "…" : text; }
function usd(x) { return "$" + Number(x || 0).toFixed(3); }
function when(ts) { return ts ? new Date(ts * 1000).toLocaleString() : ""; }

function showLogin() {
  view.replaceChildren(document.getElementById("login-tpl").content.cloneNode(true));
  document.getElementById("logout").hidden = true;
  document.getElementById("who").textContent = "";
  document.getElementById("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const value = document.getElementById("token").value.trim();
    const res = await fetch("/v1/runs", { headers: { "Authorization": "Bearer " + value } });
    if (res.ok) {
      sessionStorage.setItem(TOKEN_KEY, value);
      location.hash = "#/runs";
      route();
    } else {
      document.getElementById("login-error").textContent = "That token was not accepted.";
    }
  });
}

async function showRuns() {
  const data = await (await api("/v1/runs")).json();
  const rows = data.runs.map((r) => {
    const tr = el("tr", { class: "link", "data-run": r.run_id, onclick: () => { location.hash = "#/runs/" + encodeURIComponent(r.run_id); } },
      el("td", { class: "mono" }, r.run_id), el("td", { class: "muted" }, r.kind || "script"), el("td", {}, chip(r.status)), el("td", {}, r.attempts),
      el("td", {}, usd(r.spend_usd)), el("td", { class: "muted" }, when(r.created_at)));
    return tr;
  });
  const waiting = data.runs.filter((r) => r.status === "waiting");
  const asks = waiting.length ? el("section", { class: "card waits", id: "waiting-runs" },
    el("h2", {}, waiting.length + " run" + (waiting.length > 1 ? "s" : "") + " waiting"),
    el("ul", {}, waiting.map((r) => el("li", {}, el("a", { href: "#/runs/" + encodeURIComponent(r.run_id), "data-waiting": r.run_id, class: "mono" }, r.run_id))))) : "";
  view.replaceChildren(asks, el("section", { class: "card" },
    el("h1", {}, "Runs"),
    rows.length ? el("table", { id: "runs" }, el("thead", {}, el("tr", {}, ["Run", "Kind", "Status", "Attempts", "Spend", "Created"].map((h) => el("th", {}, h)))), el("tbody", {}, rows))
      : el("p", { class: "muted" }, "No runs yet. Start one with `frostline demo` or POST /v1/runs.")));
}

function stat(k, v, extra) { return el("div", { class: "stat" }, el("div", { class: "v" }, v), el("div", { class: "k" }, k), extra || ""); }

function timelineTable(run) {
  const tl = run.timeline;
  const head = el("tr", {}, el("th", {}, "Identity"), el("th", {}, "Capability"), tl.attempts.map((n) => el("th", {}, "Attempt " + n)));
  const body = tl.rows.map((row) => el("tr", {},
    el("td", { class: "mono" }, row.identity), el("td", {}, row.capability || ""),
    tl.attempts.map((n) => {
      const o = row.attempts[String(n)];
      const moved = (row.moved_from || {})[String(n)];
      const label = o ? o.replace("_", " ") + (moved ? " (moved from " + moved + ")" : "") : "";
      return el("td", {}, o ? el("span", { class: "cell " + o, "data-outcome": o, title: label }, label) : el("span", { class: "cell none" }, "·"));
    })));
  const legend = el("p", { class: "legend muted" }, OUTCOMES.map((o) => el("span", {}, el("span", { class: "cell " + o }, o.replace("_", " ")))));
  return el("section", { class: "card" }, el("h2", {}, "Identity timeline"),
    el("table", { id: "timeline" }, el("thead", {}, head), el("tbody", {}, body)), legend);
}

function scriptView(run) {
  const frozenLines = new Map(run.frozen_sites.map((f) => [f.line, f]));
  const pins = new Map();
  const gate = run.gate;
  if (gate && !gate.accepted) {
    for (const c of gate.counterexamples || []) {
      const line = c.nearest && c.nearest.line ? c.nearest.line : null;
      const note = c.kind + ": frozen site " + c.site + " (" + (c.source_line || "").trim() + ")";
      if (line) pins.set(line, (pins.get(line) || []).concat([note]));
      else pins.set(0, (pins.get(0) || []).concat([note]));
    }
  }
  const lines = (run.script || "").split("\n").map((text, i) => {
    const no = i + 1;
    const cls = ["ln"];
    if (frozenLines.has(no) && !(gate && !gate.accepted)) cls.push("frozen");
    if (pins.has(no)) cls.push("stopped");
    const frozen = frozenLines.get(no);
    return el("div", { class: cls.join(" "), title: frozen ? "frozen site " + frozen.site : "" },
      el("span", { class: "no" }, no), text, pins.has(no) ? el("span", { class: "pin" }, "← " + pins.get(no).join("; ")) : "");
  });
  const unpinned = pins.get(0) || [];
  return el("section", { class: "card" }, el("h2", {}, "Script of the latest attempt"),
    gate && !gate.accepted ? el("p", { class: "error" }, "Stopped by the gate before spending: " + (gate.counterexamples || []).map((c) => c.kind + " " + c.site).join(", ")) : "",
    unpinned.length ? el("p", { class: "error" }, unpinned.join("; ")) : "",
    el("div", { class: "code", id: "script" }, lines),
    el("p", { class: "muted" }, "Highlighted lines hold frozen sites: committed calls a repair must keep as they are."));
}

async function artifactsView(run) {
  const figs = [];
  for (const a of run.artifacts.filter((x) => (x.mime || "").startsWith("image/"))) {
    const img = el("img", { alt: a.identity });
    figs.push(el("figure", {}, img, el("figcaption", {}, a.identity)));
    api("/v1/runs/" + encodeURIComponent(run.run_id) + "/artifacts/" + encodeURIComponent(a.ref))
      .then((r) => r.blob()).then((b) => { img.src = URL.createObjectURL(b); }).catch(() => {});
  }
  return el("section", { class: "card" }, el("h2", {}, "Artifacts"),
    figs.length ? el("div", { class: "thumbs", id: "artifacts" }, figs) : el("p", { class: "muted" }, "No image artifacts."));
}

// An attempt's figures, and its error (if any) on a row of its own across the whole table, so
// a long message wraps in lines of words inside the card instead of a column of letters.
function attemptRows(a) {
  const stats = a.stats || {};
  const row = el("tr", {}, el("td", {}, a.attempt), el("td", {}, chip(a.status)),
    el("td", {}, stats.executed ?? ""), el("td", {}, stats.replayed ?? ""), el("td", {}, a.orphans.length));
  if (!a.error) return [row];
  const message = a.error.message || "";
  return [row, el("tr", { class: "err-row" },
    el("td", { class: "muted err", colspan: "5", title: message }, clip(message, 600)))];
}

async function answer(run, path, body) {
  await api("/v1/runs/" + encodeURIComponent(run.run_id) + "/" + path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

function waitItem(run, w) {
  const done = w.answer !== null;
  const what = w.kind === "approval" ? (w.capability === "human.approve" ? "approval" : "approval of a " + w.capability + " call")
    : w.kind === "event" ? "event " + w.name : "timer due " + (w.due_at || "");
  const item = el("div", { class: "wait" + (done ? " answered" : ""), "data-wait": w.identity },
    el("div", {}, el("span", { class: "mono" }, w.identity), " · ", what),
    el("pre", { class: "payload" }, JSON.stringify(w.payload, null, 2)));
  const problem = el("p", { class: "error" });
  if (done) {
    const v = w.answer.value;
    item.append(el("p", { class: "muted answer" }, w.kind === "approval"
      ? (v.approved ? "approved" : "rejected") + " by " + v.by + (v.reason ? ": " + v.reason : "")
      : "answered by " + w.answer.by + ": " + clip(JSON.stringify(v), 200)));
  } else if (w.kind === "approval") {
    const reason = el("input", { class: "reason", placeholder: "reason (optional)", maxlength: "2000" });
    const send = (approved) => async () => {
      try {
        await answer(run, "approvals/" + encodeURIComponent(w.identity), { approved, reason: reason.value || null });
        await showRun(run.run_id);
      } catch (e) { problem.textContent = e.message; }
    };
    item.append(reason, el("div", { class: "actions" },
      el("button", { class: "approve", onclick: send(true) }, "Approve"),
      el("button", { class: "reject", onclick: send(false) }, "Reject")), problem);
  } else if (w.kind === "event") {
    const data = el("input", { class: "event-data", placeholder: "event body (JSON)", value: "{}" });
    const send = async () => {
      let body;
      try { body = JSON.parse(data.value); } catch (e) { problem.textContent = "the event body is not JSON"; return; }
      try { await answer(run, "signals/" + encodeURIComponent(w.name), { data: body }); await showRun(run.run_id); } catch (e) { problem.textContent = e.message; }
    };
    item.append(data, el("div", { class: "actions" }, el("button", { class: "signal", onclick: send }, "Send event")), problem);
  }
  return item;
}

function waitsView(run) {
  const waits = run.waits || [];
  if (!waits.length) return "";
  const open = waits.filter((w) => w.answer === null);
  return el("section", { class: "card waits", id: "waits" },
    el("h2", {}, open.length ? "Waiting for " + open.length + " answer" + (open.length > 1 ? "s" : "") : "Waits"),
    el("p", { class: "muted" }, "An answer is taken once; the run goes on with it in its next attempt."),
    waits.map((w) => waitItem(run, w)));
}

function ledgerSummary(e) {
  const d = e.data || {};
  if (e.kind === "state_entered") return d.state + " (visit " + d.visit + ")";
  if (e.kind === "edge") return d.from + " → " + d.to + " [" + d.kind + "]" + (d.reason ? " " + d.reason : "");
  if (e.kind === "artifact") return d.artifact + " v" + d.version + (d.changed === false ? " (unchanged)" : "");
  if (e.kind === "invalidation") return d.changed + " made stale: " + (d.stale || []).join(", ");
  if (e.kind === "tool_call") return (d.tool || "") + " " + (d.identity || "");
  if (e.kind === "terminal") return d.state + " " + d.status + (d.reason ? " (" + d.reason + ")" : "");
  return clip(JSON.stringify(d), 160);
}

async function graphView(run) {
  const base = "/v1/runs/" + encodeURIComponent(run.run_id);
  const g = await (await api(base + "/graph")).json();
  const img = el("img", { id: "graph-svg", alt: "graph " + g.graph + " with the path the run took" });
  api(base + "/graph.svg").then((r) => r.blob()).then((b) => { img.src = URL.createObjectURL(b); }).catch(() => {});
  const term = g.terminal ? g.terminal.state + " " + (g.terminal.reason || "") : "not reached";
  const path = el("p", { class: "mono path", id: "graph-path" }, g.path.join(" → "));
  const visits = el("table", { id: "graph-visits" }, el("thead", {}, el("tr", {}, el("th", {}, "State"), el("th", {}, "Visits"))),
    el("tbody", {}, g.states.filter((s) => g.visits[s]).map((s) => el("tr", {}, el("td", { class: "mono" }, s), el("td", {}, g.visits[s])))));
  const artifacts = el("table", { id: "graph-artifacts" },
    el("thead", {}, el("tr", {}, ["Artifact", "Version", "Freshness", "Produced by", "Digest"].map((h) => el("th", {}, h)))),
    el("tbody", {}, g.artifacts.map((a) => el("tr", {}, el("td", { class: "mono" }, a.artifact), el("td", {}, a.version),
      el("td", {}, chip(a.freshness === "VALID" ? "valid" : "stale")), el("td", { class: "mono" }, a.produced_by || ""),
      el("td", { class: "mono muted" }, (a.digest || "").slice(0, 12))))));
  const ledger = el("table", { id: "graph-ledger" }, el("thead", {}, el("tr", {}, ["#", "Event", "What"].map((h) => el("th", {}, h)))),
    el("tbody", {}, g.ledger.map((e) => el("tr", {}, el("td", {}, e.seq), el("td", { class: "mono" }, e.kind), el("td", { class: "err" }, ledgerSummary(e))))));
  return [
    el("div", { class: "grid" }, stat("Graph", g.graph), stat("Steps", g.path.length), stat("Terminal", term),
      stat("Illegal actions", g.illegal_actions)),
    el("section", { class: "card" }, el("h2", {}, "Path taken"), path, el("div", { class: "graph" }, img),
      el("p", { class: "muted" }, "Visited states carry their visit count; edges the run took are drawn heavier.")),
    el("div", { class: "two" },
      el("section", { class: "card" }, el("h2", {}, "Artifacts"), artifacts),
      el("section", { class: "card" }, el("h2", {}, "Visits per state"), visits)),
    el("section", { class: "card" }, el("h2", {}, "Ledger (attempt " + g.attempt + ")"), el("div", { class: "scroll" }, ledger)),
  ];
}

const INSTRUMENTS = ["resolve_rate", "tokens", "wall_s", "llm_calls", "illegal_actions", "redundant_actions", "repeated_work", "regressions", "stale_context"];

function fmt(v) { return typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : (v ?? ""); }

function decisionRows(decisions) {
  const items = Array.isArray(decisions) ? decisions
    : Object.entries(decisions || {}).map(([k, v]) => Object.assign({ name: k }, typeof v === "object" && v ? v : { verdict: v }));
  return items.map((d) => el("tr", {}, el("td", { class: "mono" }, d.name || d.arm || d.mechanism || ""),
    el("td", {}, chip(String(d.verdict || d.decision || (d.kept === true ? "kept" : d.kept === false ? "removed" : "")))),
    el("td", { class: "err" }, d.evidence || d.reason || clip(JSON.stringify(d), 200))));
}

async function reportView(run) {
  const base = "/v1/runs/" + encodeURIComponent(run.run_id);
  const data = await (await api(base + "/report")).json();
  const arms = data.report.arms || {};
  const head = el("tr", {}, el("th", {}, "Arm"), el("th", {}, "Tasks"), INSTRUMENTS.map((k) => el("th", {}, k.replace("_", " "))));
  const rows = Object.entries(arms).map(([name, a]) => el("tr", { "data-arm": name }, el("td", { class: "mono" }, name), el("td", {}, a.tasks ?? ""),
    a.not_run ? el("td", { class: "muted", colspan: String(INSTRUMENTS.length) }, "not run: " + a.not_run)
      : INSTRUMENTS.map((k) => el("td", {}, fmt(a[k])))));
  const figs = [];
  for (const f of (data.files || []).filter((x) => (x.mime || "").startsWith("image/"))) {
    const img = el("img", { alt: f.name });
    figs.push(el("figure", {}, img, el("figcaption", {}, f.name)));
    api(base + "/artifacts/" + encodeURIComponent(f.artifact)).then((r) => r.blob()).then((b) => { img.src = URL.createObjectURL(b); }).catch(() => {});
  }
  return [
    el("section", { class: "card" }, el("h2", {}, "Arms and ablations"), el("div", { class: "scroll" }, el("table", { id: "ab-arms" }, el("thead", {}, head), el("tbody", {}, rows)))),
    el("section", { class: "card" }, el("h2", {}, "Decisions"), el("table", { id: "ab-decisions" }, el("tbody", {}, decisionRows(data.report.decisions)))),
    el("section", { class: "card" }, el("h2", {}, "Figures"), figs.length ? el("div", { class: "figures", id: "ab-figures" }, figs) : el("p", { class: "muted" }, "No figures.")),
  ];
}

async function showRun(runId) {
  const run = await (await api("/v1/runs/" + encodeURIComponent(runId))).json();
  const budget = (run.envelope.budget || {}).usd || 0;
  const pct = budget ? Math.min(100, 100 * run.spend_usd / budget) : 0;
  const cert = run.certificate || {};
  const consistent = cert.consistent !== false;
  const attempts = el("table", { id: "attempts" }, el("thead", {}, el("tr", {}, ["#", "Status", "Executed", "Replayed", "Orphans"].map((h) => el("th", {}, h)))),
    el("tbody", {}, run.attempts.flatMap((a) => attemptRows(a))));
  const title = el("h1", {}, run.kind === "graph" ? "Graph run " : "Run ", el("span", { class: "mono", id: "run-id" }, run.run_id), " ", chip(run.status));
  if (run.kind === "ab") {
    view.replaceChildren(el("h1", {}, "A/B report ", el("span", { class: "mono", id: "run-id" }, run.run_id)), ...(await reportView(run)));
    return;
  }
  if (run.kind === "graph") {
    view.replaceChildren(title, ...(await graphView(run)), el("section", { class: "card" }, el("h2", {}, "Attempts"), attempts));
    return;
  }
  view.replaceChildren(
    title,
    el("div", { class: "grid" },
      stat("Spend", usd(run.spend_usd) + " / " + usd(budget), el("div", { class: "bar" }, el("span", { style: "width:" + pct + "%" }))),
      stat("Attempts", run.attempts.length),
      stat("Frozen sites", run.frozen_sites.length),
      stat("Certificate", chip(consistent ? "consistent" : "inconsistent"), el("div", { class: "k mono" }, (cert.chain_digest || "").slice(0, 16)))),
    waitsView(run),
    timelineTable(run),
    el("div", { class: "two" }, scriptView(run), el("div", {}, await artifactsView(run), el("section", { class: "card" }, el("h2", {}, "Attempts"), attempts))));
}

async function route() {
  const hash = location.hash || "#/runs";
  if (!token()) { showLogin(); return; }
  document.getElementById("logout").hidden = false;
  try {
    if (hash.startsWith("#/runs/")) await showRun(decodeURIComponent(hash.slice(7)));
    else if (hash === "#/login") showLogin();
    else await showRuns();
  } catch (e) {
    if (e.message !== "unauthorized") view.replaceChildren(el("section", { class: "card" }, el("p", { class: "error" }, e.message)));
  }
}

document.getElementById("logout").addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); location.hash = "#/login"; route(); });
window.addEventListener("hashchange", route);
route();
