// assay view: the judgments table without reloads, live refresh of a running run, and
// the label form. Vanilla JS, no dependency. Every value from the server is written
// with textContent (never innerHTML), so item text and judge outputs stay text.
"use strict";

(function () {
  const main = document.querySelector("main");
  const runId = main && main.dataset.run;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function seg(value) { return encodeURIComponent(String(value)); }
  function count(n) { return n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"); }
  function money(n) {
    return n === null || n === undefined ? "—"
      : "$" + Number(n).toLocaleString("en-US", { minimumFractionDigits: 4, maximumFractionDigits: 4 });
  }
  function verdict(r) {
    if (r.label !== null) return r.label;
    if (r.preference !== null) return r.preference;
    if (r.score !== null) return Number(r.score).toFixed(3);
    return "—";
  }

  // One table row, the same cells as items.html.j2's.
  function row(r) {
    const tr = el("tr");
    tr.dataset.item = r.item_id; tr.dataset.dataset = r.dataset; tr.dataset.judge = r.judge_id;
    tr.dataset.outcome = r.outcome;
    const item = el("td", "item");
    const link = el("a", null, r.item_id);
    link.href = "/runs/" + seg(runId) + "/items/" + seg(r.dataset) + "/" + seg(r.item_id);
    const sub = el("div", "sub muted", r.dataset + (r.unit !== "item" ? " · " + r.unit : ""));
    if (r.answer_id) {
      const answer = el("a", "answer", "answer");
      answer.href = "/runs/" + seg(runId) + "/answers/" + seg(r.answer_id) + "?dataset=" + seg(r.dataset);
      sub.append(" · ", answer);
    }
    item.append(link, sub);
    const judge = el("td", "mono", r.judge_id);
    let who = r.model || "";
    if (r.prompt_id) who += " · " + r.prompt_id + (r.prompt_version !== null ? "@" + r.prompt_version : "");
    judge.append(el("div", "sub muted", who));
    const status = el("td"); status.append(el("span", "st st-" + r.status, r.status));
    const gold = el("td", null, r.gold === null ? "—" : r.gold);
    if (r.gold_source === "adjudicated") { gold.append(" ", el("span", "badge ok", "adjudicated")); }
    const outcome = el("td"); outcome.append(el("span", "outcome o-" + r.outcome, r.outcome.replace("_", " ")));
    tr.append(item, judge, el("td", null, r.variant === null ? "—" : r.variant), status,
      el("td", "verdict", verdict(r)), gold, outcome, el("td", null, r.cache_hit ? "hit" : ""),
      el("td", "num", r.attempts), el("td", "num", Number(r.latency_s).toFixed(2) + " s"),
      el("td", "num", count(r.tokens)), el("td", "num", money(r.cost_usd)), el("td", "error", r.error || ""));
    return tr;
  }

  function withParams(params, changes) {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) next.set(k, v);
    return "?" + next.toString();
  }

  function navLink(id, text, href) {
    const a = el("a", "js-nav", text); a.id = id; a.href = href; return a;
  }

  function render(data, params) {
    const body = document.getElementById("rows");
    body.replaceChildren(...data.rows.map(row));
    if (!data.rows.length) {
      const tr = el("tr", "empty"), td = el("td", "muted", "No judgment matches these filters.");
      td.colSpan = 13; tr.append(td); body.append(tr);
    }
    document.getElementById("total").textContent = count(data.total);
    document.getElementById("total-s").textContent = data.total === 1 ? "" : "s";
    const pages = Math.max(1, Math.ceil(data.total / data.page_size));
    const pager = document.getElementById("pager");
    pager.dataset.page = data.page; pager.dataset.pages = pages;
    const parts = [];
    if (data.page > 1) parts.push(navLink("prev", "← previous", withParams(params, { page: data.page - 1 })));
    const of = el("span", null, "page " + count(data.page) + " of " + count(pages));
    of.id = "page-of";
    parts.push(of);
    if (data.page < pages) parts.push(navLink("next", "next →", withParams(params, { page: data.page + 1 })));
    pager.replaceChildren(...parts);
    for (const th of document.querySelectorAll("#judgments th[data-sort]")) {
      const col = th.dataset.sort, on = data.sort === col, a = th.querySelector("a");
      th.classList.toggle("sorted", on);
      a.href = withParams(params, { sort: col, desc: on && !data.desc ? "1" : "0", page: 1 });
      a.textContent = a.textContent.replace(/ [▲▼]$/, "") + (on ? (data.desc ? " ▼" : " ▲") : "");
    }
    main.dataset.version = data.version;
  }

  async function load(params, push) {
    const error = document.getElementById("error");
    let response, data;
    try {
      response = await fetch("/api/runs/" + seg(runId) + "/judgments?" + params.toString(),
        { credentials: "same-origin", headers: { Accept: "application/json" } });
      data = await response.json();
    } catch (err) {
      error.textContent = "the viewer did not answer: is `assay view` still running?";
      return;
    }
    if (!response.ok) { error.textContent = data.error || response.statusText; return; }
    error.textContent = "";
    render(data, params);
    const url = location.pathname + (params.toString() ? "?" + params.toString() : "");
    if (push) history.pushState(null, "", url); else history.replaceState(null, "", url);
  }

  function formParams(form) {
    const params = new URLSearchParams();
    for (const [k, v] of new FormData(form)) {
      if (v !== "" && !(k === "desc" && v === "0") && !(k === "sort" && v === "item_id")) params.append(k, v);
    }
    return params;
  }

  function tableSetup() {
    const form = document.getElementById("filters");
    if (!form || !runId) return;
    form.addEventListener("submit", (ev) => { ev.preventDefault(); load(formParams(form), true); });
    form.addEventListener("change", () => load(formParams(form), true));
    document.addEventListener("click", (ev) => {
      const a = ev.target.closest && ev.target.closest("a.js-nav");
      if (!a) return;
      ev.preventDefault();
      const params = new URL(a.href).searchParams;
      document.getElementById("f-sort").value = params.get("sort") || "item_id";
      document.getElementById("f-desc").value = params.get("desc") || "0";
      load(params, true);
    });
    window.addEventListener("popstate", () => load(new URLSearchParams(location.search), false));
    if (main.dataset.status === "running") follow();
  }

  // A running run: poll its version every 2 s; new records re-render the current page.
  function follow() {
    const timer = setInterval(async () => {
      let data;
      try {
        const response = await fetch("/api/runs/" + seg(runId) + "/version", { credentials: "same-origin" });
        if (!response.ok) return;
        data = await response.json();
      } catch (err) {
        return; // the server stopped or the network blinked: try again in 2 s
      }
      if (String(data.version) !== main.dataset.version) await load(new URLSearchParams(location.search), false);
      if (data.status !== "running") {
        clearInterval(timer);
        const live = document.getElementById("live");
        if (live) live.textContent = "the run stopped (" + data.status + ")";
      }
    }, 2000);
  }

  // The label form posts JSON, then reloads the item page to show the new history.
  function labelSetup() {
    const form = document.getElementById("label-form");
    if (!form) return;
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = {};
      for (const [k, v] of new FormData(form)) if (v !== "") body[k] = v;
      const status = document.getElementById("label-status");
      const response = await fetch(form.action, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      const data = await response.json();
      if (!response.ok) { status.textContent = data.error || response.statusText; status.className = "bad"; return; }
      status.textContent = "saved"; status.className = "";
      location.reload();
    });
  }

  tableSetup();
  labelSetup();
})();
