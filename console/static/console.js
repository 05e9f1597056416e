// warden console — our own script, no library. The pages are rendered by
// the server and work without it for reading; this adds sign-in and
// sign-out, deciding approvals (JSON POSTs to the API), and live updates
// (Server-Sent Events). It never puts data into innerHTML.
"use strict";

(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const canApprove = document.body.dataset.approve === "true";
  // originals: the viewer may see the originals of an approval's redacted
  // texts (the approvals API reveals them, recording the unseal).
  const originals = document.body.dataset.originals === "true";
  const MARK = "[REDACTED:";
  const MAX_ROWS = 50;

  // postJSON posts body as JSON to the same origin and returns {status, data}.
  async function postJSON(path, body) {
    const res = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON */ }
    return { status: res.status, data: data };
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function fmtTime(s) {
    if (!s || s.startsWith("0001-")) return "—";
    const d = new Date(s);
    if (isNaN(d)) return s;
    return d.toISOString().replace("T", " ").replace(/(\.\d{3})\d*Z$/, "$1Z");
  }

  function fmtMicros(us) {
    if (!us || us <= 0) return "0";
    if (us < 1000) return us + "µs";
    if (us < 1e6) return (us / 1000).toFixed(1) + "ms";
    return (us / 1e6).toFixed(1) + "s";
  }

  function cut(s, n) {
    s = s || "";
    return s.length > n ? s.slice(0, n) + "…" : s;
  }

  function badge(text) {
    const known = ["allow", "modify", "ask", "defer", "deny", "approved", "denied", "expired", "pending", "error"];
    return el("span", "badge " + (known.includes(text) ? "d-" + text : "d-other"), text);
  }

  // --- sign-in and sign-out -------------------------------------------------

  const login = $("#login");
  if (login) {
    login.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const msg = $("#login-msg");
      msg.hidden = true;
      const token = $("#token").value.trim();
      try {
        const r = await postJSON("/api/session", { token: token });
        if (r.status === 200) {
          let next = login.dataset.next || "/";
          if (next === "/" && r.data && r.data.home) next = r.data.home;
          location.assign(next.startsWith("/") && !next.startsWith("//") ? next : "/");
          return;
        }
        msg.textContent = (r.data && r.data.error) || "sign-in failed (" + r.status + ")";
      } catch (err) {
        msg.textContent = "sign-in failed: " + err;
      }
      msg.hidden = false;
    });
  }

  const signout = $("#signout");
  if (signout) {
    signout.addEventListener("click", async () => {
      try { await postJSON("/api/session/logout", {}); } finally { location.assign("/login"); }
    });
  }

  // --- deciding approvals ---------------------------------------------------

  function wireDecide(form) {
    if (form.dataset.wired) return;
    form.dataset.wired = "1";
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const decision = (ev.submitter && ev.submitter.value) || "approve";
      const id = form.dataset.id;
      const msg = $(".msg", form);
      const buttons = $$("button", form);
      buttons.forEach((b) => (b.disabled = true));
      msg.textContent = "…";
      try {
        const r = await postJSON("/api/approvals/" + encodeURIComponent(id), {
          decision: decision,
          reason: $("input[name=reason]", form).value,
        });
        if (r.status === 200) {
          msg.textContent = r.data.state;
          approvalChanged(r.data);
          return;
        }
        msg.textContent = (r.data && r.data.error) || "failed (" + r.status + ")";
        if (r.status === 409 && r.data && r.data.approval) approvalChanged(r.data.approval);
      } catch (err) {
        msg.textContent = "failed: " + err;
      }
      buttons.forEach((b) => (b.disabled = false));
    });
  }
  $$("form.decide").forEach(wireDecide);

  // --- live updates ---------------------------------------------------------

  function setLive(state) {
    const live = $("#live");
    if (!live) return;
    live.hidden = false;
    live.classList.toggle("off", state === "off");
    live.classList.toggle("paused", state === "paused");
    const s = $("#live-state");
    if (s) s.textContent = state === "on" ? "live" : state === "paused" ? "paused" : "not live (reload to retry)";
  }

  // follow opens an EventSource on url calling onEvent(data) for each of
  // the named events; the browser reconnects on its own after a drop.
  function follow(url, names, onEvent) {
    if (!window.EventSource) return null;
    const es = new EventSource(url);
    const handle = (e) => {
      let data;
      try { data = JSON.parse(e.data); } catch (_) { return; }
      onEvent(data, e.type);
    };
    names.forEach((n) => es.addEventListener(n, handle));
    es.onopen = () => setLive("on");
    es.onerror = () => { if (es.readyState === EventSource.CLOSED) setLive("off"); };
    return es;
  }

  // Approvals: the pending queue and the decided table follow the stream.
  const pendingList = $("#pending");

  function updateCount() {
    const n = $$("li.pending", pendingList).length;
    const c = $("#pending-count");
    if (c) c.textContent = String(n);
    const empty = $("#pending-empty");
    if (empty) empty.hidden = n > 0;
  }

  function fillPending(li, a) {
    li.dataset.id = a.id;
    const link = $("a.id", li);
    link.href = "/approvals/" + encodeURIComponent(a.id);
    link.textContent = a.tool || a.event;
    $(".summary", li).textContent = a.summary || "";
    $(".f-reason", li).textContent = a.reason || "";
    $(".f-policy", li).textContent = a.policy_id || "";
    const s = $(".f-session", li);
    s.textContent = a.session_id || "";
    if (a.session_id) s.href = "/sessions/" + encodeURIComponent(a.session_id); else s.removeAttribute("href");
    $(".f-surface", li).textContent = a.surface + (a.hold ? " (held)" : "");
    const ex = $(".f-expires", li);
    ex.textContent = fmtTime(a.expires);
    ex.setAttribute("datetime", a.expires);
    const form = $("form.decide", li);
    if (form) {
      form.dataset.id = a.id;
      wireDecide(form);
    }
    revealPending(li, a);
  }

  // revealPending replaces a live approval's redacted texts with their
  // originals from the approvals API (GET /api/approvals/{id}, which shows
  // them to a caller that may decide it and records the unseal), for a
  // viewer who may see them; the stream carries them redacted.
  async function revealPending(li, a) {
    if (!originals || ![a.summary, a.reason, a.tool, a.event].some((s) => (s || "").includes(MARK))) return;
    let b;
    try {
      const res = await fetch("/api/approvals/" + encodeURIComponent(a.id), { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!res.ok) return;
      b = await res.json();
    } catch (_) {
      return; // it stays redacted
    }
    if (!b || li.dataset.id !== a.id || b.summary === a.summary && b.reason === a.reason && b.tool === a.tool) return;
    $("a.id", li).textContent = b.tool || b.event;
    $(".summary", li).textContent = b.summary || "";
    $(".f-reason", li).textContent = b.reason || "";
    const note = $("#originals-live");
    if (note) note.hidden = false;
  }

  function decidedRow(a) {
    const tpl = $("#decided-item");
    const tr = tpl.content.firstElementChild.cloneNode(true);
    tr.dataset.id = a.id;
    const at = $(".f-at", tr);
    at.href = "/approvals/" + encodeURIComponent(a.id);
    at.textContent = fmtTime(a.decided_at);
    const st = $(".f-state", tr);
    st.textContent = "";
    st.appendChild(badge(a.state));
    $(".f-tool", tr).textContent = a.tool || a.event;
    const s = $(".f-session", tr);
    s.textContent = cut(a.session_id, 16);
    if (a.session_id) s.href = "/sessions/" + encodeURIComponent(a.session_id); else s.removeAttribute("href");
    $(".f-policy", tr).textContent = a.policy_id || "";
    $(".f-by", tr).textContent = a.decided_by || "";
    $(".f-why", tr).textContent = a.decided_reason || "";
    return tr;
  }

  function approvalChanged(a) {
    if (pendingList) {
      const sel = 'li.pending[data-id="' + CSS.escape(a.id) + '"]';
      const have = $(sel, pendingList);
      if (a.state === "pending") {
        if (!have) {
          const li = $("#pending-item").content.firstElementChild.cloneNode(true);
          fillPending(li, a);
          pendingList.insertBefore(li, $("#pending-empty"));
        }
      } else {
        if (have) have.remove();
        const body = $("#decided tbody");
        if (body && !$('tr[data-id="' + CSS.escape(a.id) + '"]', body)) {
          const empty = $("tr.empty", body);
          if (empty) empty.remove();
          const tr = decidedRow(a);
          tr.classList.add("fresh");
          body.insertBefore(tr, body.firstChild);
          while (body.rows.length > MAX_ROWS) body.deleteRow(-1);
        }
      }
      updateCount();
    }
    const one = $("#approval");
    if (one && one.dataset.id === a.id && a.state !== "pending") {
      location.reload(); // the page shows who decided, when and why
    }
  }

  const live = document.body.dataset.live;
  if (live === "approvals" || live === "approval") {
    follow("/api/approvals/stream", ["approval"], approvalChanged);
  }

  // Decisions: the newest page follows the trace's stream with its filters.
  if (live === "decisions") {
    const liveEl = $("#live");
    const body = $("#runs tbody");
    const toggle = $("#live-toggle");
    let paused = false;
    let held = [];
    const seen = new Set($$("tr[data-id]", body).map((tr) => tr.dataset.id));

    const add = (rec) => {
      if (!rec || !rec.id || seen.has(rec.id)) return;
      seen.add(rec.id);
      if (paused) {
        held.push(rec);
        toggle.textContent = "resume (" + held.length + " new)";
        return;
      }
      const empty = $("tr.empty", body);
      if (empty) empty.remove();
      const tr = runRow(rec);
      tr.classList.add("fresh");
      body.insertBefore(tr, body.firstChild);
      while (body.rows.length > MAX_ROWS) body.deleteRow(-1);
    };
    if (toggle) {
      toggle.hidden = false;
      toggle.addEventListener("click", () => {
        paused = !paused;
        setLive(paused ? "paused" : "on");
        toggle.textContent = paused ? "resume" : "pause";
        if (!paused) {
          const h = held;
          held = [];
          h.forEach(add);
        }
      });
    }
    const url = liveEl ? liveEl.dataset.stream : "";
    if (url && url.startsWith("/")) follow(url, ["record", "run", "message"], add);
  }

  // runRow renders a record as the decisions table's server-side row does.
  function runRow(r) {
    const tr = el("tr");
    tr.dataset.id = r.id;
    const td = (child, cls) => {
      const c = el("td", cls);
      if (child instanceof Node) c.appendChild(child);
      else if (child !== undefined && child !== null) c.textContent = String(child);
      tr.appendChild(c);
      return c;
    };
    const a = el("a", null, fmtTime(r.time));
    a.href = "/decisions/" + encodeURIComponent(r.id);
    a.title = r.time;
    td(a, "time");
    td(r.surface);
    td(r.direction);
    const mt = el("span");
    let method = r.event;
    if ((r.surface === "mcp" || r.surface === "a2a") && r.input && typeof r.input === "object") {
      if (r.input.method) method = r.input.method;
      else if (r.input.error) method = "error";
      else if ("result" in r.input) method = "result";
    }
    mt.appendChild(el("span", "method", method));
    const tool = (typeof r.tool === "string" && r.tool) || (r.views && r.views.tool && r.views.tool.name) || "";
    const server = r.views && r.views.tool && r.views.tool.server;
    if (tool) {
      mt.appendChild(document.createTextNode(" "));
      mt.appendChild(el("span", "tool", (server ? server + "/" : "") + tool));
    }
    td(mt);
    const dec = td(badge(r.decision));
    const sh = (r.results || []).filter((x) => x.mode === "shadow" && x.kind === "shadow_set").pop();
    if (sh && sh.decision && sh.decision !== r.decision) {
      const tag = el("span", "tag shadow", "shadow: " + sh.decision);
      tag.title = "the shadow set would have decided " + sh.decision;
      dec.appendChild(document.createTextNode(" "));
      dec.appendChild(tag);
    }
    td(r.policy_id ? el("code", null, r.policy_id) : "");
    const reason = td(cut(r.reason, 90), "reason");
    reason.title = r.reason || "";
    if (r.session_id) {
      const s = el("a", null, cut(r.session_id, 16));
      s.href = "/sessions/" + encodeURIComponent(r.session_id);
      td(s);
    } else td("");
    td(fmtMicros(r.latency_us), "num");
    return tr;
  }
})();
