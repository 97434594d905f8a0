// The review page's keyboard. Server-rendered pages; this script only moves a cursor, opens
// forms and dialogs, posts writes (with the session's CSRF token) and swaps in the panel the
// server renders back. Every key is listed in the help overlay (?).
(() => {
  "use strict";
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const page = document.body.dataset.page;
  const csrf = () => ($('meta[name="csrf-token"]') || {}).content || "";

  function toast(message, bad) {
    const t = $("#toast");
    if (!t) return;
    t.textContent = message;
    t.className = bad ? "bad" : "";
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, bad ? 6000 : 2500);
  }

  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  async function post(url, data, extra = {}) {
    const response = await fetch(url, {
      method: "POST",
      body: new URLSearchParams(data || {}),
      credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf(), Accept: "text/html", ...extra },
    });
    const text = await response.text();
    if (!response.ok) {
      toast(text.trim() || response.statusText, true);
      return null;
    }
    return text;
  }

  function help() {
    const dialog = $("#help");
    if (dialog && !dialog.open) dialog.showModal();
  }
  $$("[data-help]").forEach((b) => b.addEventListener("click", help));

  function formData(form) {
    const data = {};
    for (const el of form.elements) {
      if (!el.name || ((el.type === "checkbox" || el.type === "radio") && !el.checked)) continue;
      data[el.name] = el.value;
    }
    return data;
  }

  // --- the queue ---------------------------------------------------------------------------
  if (page === "queue") {
    const rows = () => $$("#items tbody tr");
    let cur = 0;
    const select = (i) => {
      const all = rows();
      if (!all.length) return;
      cur = Math.max(0, Math.min(i, all.length - 1));
      all.forEach((r, k) => r.classList.toggle("selected", k === cur));
      all[cur].focus();
      all[cur].scrollIntoView({ block: "nearest" });
    };
    const open = () => {
      const row = rows()[cur];
      if (row) window.location.href = `/items/${row.dataset.item}`;
    };
    $$("select[data-autosubmit]").forEach((s) =>
      s.addEventListener("change", () => s.form.submit()));
    rows().forEach((r, k) => r.addEventListener("click", (e) => {
      if (e.target.tagName !== "A") { select(k); }
    }));
    document.addEventListener("keydown", async (e) => {
      if ($("dialog[open]") || e.ctrlKey || e.metaKey || e.altKey) return;
      if (typing(e.target)) {
        if (e.key === "Escape") e.target.blur();
        return;
      }
      const keys = {
        j: () => select(cur + 1), ArrowDown: () => select(cur + 1),
        k: () => select(cur - 1), ArrowUp: () => select(cur - 1),
        Enter: open, o: open,
        c: async () => {
          const row = rows()[cur];
          if (!row) return;
          const ok = await post(`/items/${row.dataset.item}/claim`, {}, { "X-Panel": "1" });
          if (ok !== null) window.location.href = `/items/${row.dataset.item}`;
        },
        w: () => $("#week").focus(), s: () => $("#status").focus(), "?": help,
      };
      const fn = keys[e.key];
      if (fn) { e.preventDefault(); fn(); }
    });
    if (rows().length) select(0);
  }

  // --- an item ------------------------------------------------------------------------------
  if (page !== "item") return;

  const panel = () => $("#panel");
  const cands = () => $$("#cands .cand");
  const events = () => $$("#timeline .ev");
  const state = () => panel().dataset;
  let cur = 0;
  let evCur = -1;
  let mode = "cands"; // or "timeline"

  // The selected candidate's turn, and the turns its flags were raised at, are marked.
  function link(cand, scroll) {
    $$("#timeline .turn.linked").forEach((t) => t.classList.remove("linked"));
    const turns = [cand.dataset.turn, ...(cand.dataset.flagTurns || "").split(" ").filter(Boolean)];
    turns.forEach((turn) => {
      const t = document.getElementById(`turn-${turn}`);
      if (t) t.classList.add("linked");
    });
    const first = document.getElementById(`turn-${cand.dataset.turn}`);
    if (first && scroll) first.scrollIntoView({ block: "center" });
  }

  function select(i, scroll = true) {
    const all = cands();
    mode = "cands";
    events().forEach((ev) => ev.classList.remove("cursor"));
    if (!all.length) return;
    cur = Math.max(0, Math.min(i, all.length - 1));
    all.forEach((c, k) => c.classList.toggle("selected", k === cur));
    all[cur].focus({ preventScroll: true });
    if (scroll) all[cur].scrollIntoView({ block: "nearest" });
    link(all[cur], scroll);
  }

  function nextUndecided(from) {
    const all = cands();
    for (let k = 1; k <= all.length; k++) {
      const i = (from + k) % all.length;
      if (all[i].classList.contains("undecided")) return i;
    }
    return from;
  }

  function evSelect(i) {
    const all = events();
    if (!all.length) { toast("No transcript to move through", true); return; }
    mode = "timeline";
    cands().forEach((c) => c.classList.remove("selected"));
    evCur = Math.max(0, Math.min(i, all.length - 1));
    all.forEach((ev, k) => ev.classList.toggle("cursor", k === evCur));
    all[evCur].focus({ preventScroll: true });
    all[evCur].scrollIntoView({ block: "nearest" });
  }

  function flagged(step) {
    const turns = $$("#timeline .turn.flagged");
    if (!turns.length) { toast("No flagged turns", true); return; }
    const all = events();
    const here = all[evCur] ? Number(all[evCur].closest(".turn").dataset.turn) : -1;
    const order = step > 0 ? turns : turns.slice().reverse();
    const target = order.find((t) => (step > 0 ? Number(t.dataset.turn) > here
      : Number(t.dataset.turn) < here)) || order[0];
    const ev = $(".ev", target);
    if (ev) evSelect(all.indexOf(ev));
    target.scrollIntoView({ block: "center" });
  }

  function swap(html, { keep = null, advance = false, last = false } = {}) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    panel().replaceWith(tpl.content.firstElementChild);
    bindPanel();
    const ids = cands().map((c) => c.dataset.entry);
    let i = keep ? ids.indexOf(keep) : cur;
    if (i < 0) i = Math.min(cur, ids.length - 1);
    if (last) i = ids.length - 1;
    if (advance) i = nextUndecided(i);
    select(i);
  }

  // Writes run one at a time, each after the panel of the one before is in: keys pressed
  // faster than the server answers act on the candidate they will find selected.
  let queue = Promise.resolve();
  let pending = 0;
  function enqueue(job) {
    pending += 1;
    document.body.dataset.busy = "1";
    const run = queue.then(job).finally(() => {
      pending -= 1;
      if (!pending) delete document.body.dataset.busy;
    });
    queue = run.catch(() => {});
    return run;
  }

  async function write(path, data, options) {
    const html = await post(`/items/${state().item}/${path}`, data, { "X-Panel": "1" });
    if (html !== null) swap(html, options);
    return html !== null;
  }

  const act = (path, data, options) => enqueue(() => write(path, data, options));
  const current = () => cands()[cur];

  function decide(verdict) {
    enqueue(() => {
      const c = current();
      if (!c) return false;
      return write(`entries/${encodeURIComponent(c.dataset.entry)}/${verdict}`, {},
        { keep: c.dataset.entry, advance: true });
    });
  }

  let openFormEl = null;
  function openForm(form, focus) {
    openFormEl = form;
    form.hidden = false;
    const field = form.elements[focus] || form.elements[0];
    field.focus();
    if (field.select) field.select();
  }
  function closeForm() {
    if (!openFormEl) return;
    openFormEl.hidden = true;
    openFormEl = null;
    select(cur, false);
  }

  async function submitForm(form) {
    if (form.id === "add-form") {
      const ok = await act("entries", formData(form), { last: true });
      if (ok) { openFormEl = null; toast("Item added and confirmed"); }
    } else {
      const id = form.dataset.entry;
      const ok = await act(`entries/${encodeURIComponent(id)}/edit`, formData(form),
        { keep: id, advance: true });
      if (ok) openFormEl = null;
    }
  }

  function edit() {
    const c = current();
    if (c) openForm($("form.edit", c), "class");
  }

  const PROBES = {
    constraint: "What instructions from the user still apply to this work?",
    commitment: "What did you undertake to do earlier in this conversation?",
    open_question: "Which questions in this conversation are still open?",
    reference: "What did the earlier result say?",
  };
  function expectFor(cls, literal, turn, tool) {
    const short = literal.length > 200 ? `${literal.slice(0, 199)}…` : literal;
    if (cls === "reference") {
      return `answers from the turn ${turn} result${tool ? ` without calling ${tool} again` : ""}`;
    }
    if (cls === "commitment") return `still does what it undertook at turn ${turn}: ${short}`;
    if (cls === "open_question") return `still treats the question of turn ${turn} as open: ${short}`;
    return `keeps the instruction given at turn ${turn}: ${short}`;
  }

  function selectionInTimeline() {
    const sel = window.getSelection();
    if (!sel || sel.isCollapsed) return null;
    const text = sel.toString().trim();
    const node = sel.anchorNode && (sel.anchorNode.nodeType === 1
      ? sel.anchorNode : sel.anchorNode.parentElement);
    const ev = node && node.closest("#timeline .ev");
    return text && ev ? { text, ev, selection: true } : null;
  }

  function eventText(ev) {
    const texts = $$(".text", ev).filter((t) => !t.classList.contains("args"));
    const args = $(".args", ev);
    return ((texts[0] || args || ev).textContent || "").trim();
  }

  function add() {
    let source = selectionInTimeline();
    if (!source) {
      const ev = events()[evCur];
      if (mode !== "timeline" || !ev) {
        toast("Select text in the timeline, or press t and move to an event with j/k", true);
        return;
      }
      source = { text: eventText(ev), ev, selection: false };
    }
    const { ev } = source;
    const turn = ev.closest(".turn").dataset.turn;
    const kind = ev.dataset.kind;
    const cls = kind === "tool_call" || kind === "tool_result" ? "reference"
      : kind === "assistant_message" ? "commitment" : "constraint";
    const tool = ev.dataset.tool || "";
    const form = $("#add-form");
    const f = form.elements;
    f.class.value = cls;
    f.turn.value = turn;
    f.literal.value = source.text.slice(0, 4000);
    f.probe.value = cls === "reference" && tool
      ? `What did the ${tool} call at turn ${turn} return?` : PROBES[cls];
    f.expect.value = expectFor(cls, source.text, turn, tool);
    f.event_id.value = ev.dataset.eventId || "";
    f.selection.value = source.selection ? "1" : "";
    $("#add-selection").hidden = true;
    openForm(form, "literal");
  }

  function claim() {
    const s = state();
    if (s.status === "in_review" && !s.mine) {
      const d = $("#takeover");
      $(".holder", d).textContent = s.holder;
      d.showModal();
      return;
    }
    act("claim", {});
  }

  function resolve() {
    const s = state();
    if (s.status !== "in_review") { toast(`The item is ${s.status.replace("_", " ")}`, true); return; }
    const d = $("#resolve");
    const form = $("form", d);
    form.reset();
    const confirmed = Number(s.confirmed);
    form.elements.verdict.value = confirmed > 0 ? "accept" : "reject";
    const undecided = cands().filter((c) => c.classList.contains("undecided")).length;
    const warning = $(".undecided-warning", d);
    warning.hidden = !undecided;
    warning.textContent = `${undecided} candidate(s) are still undecided; they stay out of the fixture.`;
    const row = $(".override-row", d);
    row.hidden = Boolean(s.mine);
    $(".holder", row).textContent = s.holder;
    d.showModal();
    form.elements.note.focus();
  }

  function download() {
    if (state().status !== "accepted") {
      toast("Only an accepted item has a finished fixture", true);
      return;
    }
    window.location.href = `/items/${state().item}/fixture.json`;
  }

  function go(which) {
    const id = state()[which];
    if (id) window.location.href = `/items/${id}`;
    else toast(which === "next" ? "This is the week's last item" : "This is the week's first item", true);
  }

  const ACTIONS = {
    claim, resolve, download,
    release: () => (state().mine ? act("release", {})
      : toast("Only the reviewer holding an item releases it; take it over first (c)", true)),
    reopen: () => act("reopen", {}),
  };

  function bindPanel() {
    $$("#panel [data-act]").forEach((b) => b.addEventListener("click", (e) => {
      e.preventDefault();
      ACTIONS[b.dataset.act]();
    }));
    $$("#panel form.edit").forEach((form) => {
      form.addEventListener("submit", (e) => { e.preventDefault(); submitForm(form); });
      $("[data-cancel]", form).addEventListener("click", closeForm);
    });
    cands().forEach((c, k) => c.addEventListener("click", (e) => {
      if (!e.target.closest("form")) select(k, false);
    }));
  }

  $("#resolve form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.target;
    const ok = await act("resolve", formData(form), {});
    if (ok) { $("#resolve").close(); toast(`Resolved: ${state().status}`); }
  });
  $("#takeover form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("#takeover").close();
    await act("claim", { override: "1" });
  });
  $$("dialog [data-cancel]").forEach((b) => b.addEventListener("click", () => b.closest("dialog").close()));

  const floating = $("#add-selection");
  floating.addEventListener("click", add);
  $("#timeline").addEventListener("mouseup", () => {
    const source = selectionInTimeline();
    floating.hidden = !source;
    if (source) {
      const box = window.getSelection().getRangeAt(0).getBoundingClientRect();
      floating.style.top = `${window.scrollY + box.bottom + 6}px`;
      floating.style.left = `${window.scrollX + box.left}px`;
    }
  });
  $("#timeline").addEventListener("click", (e) => {
    const ev = e.target.closest(".ev");
    if (ev) { evCur = events().indexOf(ev); mode = "timeline"; }
  });

  document.addEventListener("keydown", (e) => {
    const dialog = $("dialog[open]");
    const ctrlEnter = (e.ctrlKey || e.metaKey) && e.key === "Enter";
    if (dialog) {
      if (ctrlEnter && $("form", dialog)) { e.preventDefault(); $("form", dialog).requestSubmit(); }
      return; // Esc closes a dialog by itself
    }
    if (openFormEl && (typing(e.target) || openFormEl.contains(e.target))) {
      if (ctrlEnter) { e.preventDefault(); openFormEl.requestSubmit(); }
      else if (e.key === "Escape") { e.preventDefault(); closeForm(); }
      return;
    }
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
    const inTimeline = mode === "timeline";
    const keys = {
      j: () => (inTimeline ? evSelect(evCur + 1) : select(cur + 1)),
      ArrowDown: () => (inTimeline ? evSelect(evCur + 1) : select(cur + 1)),
      k: () => (inTimeline ? evSelect(evCur - 1) : select(cur - 1)),
      ArrowUp: () => (inTimeline ? evSelect(evCur - 1) : select(cur - 1)),
      t: () => (inTimeline ? select(cur) : evSelect(evCur < 0 ? 0 : evCur)),
      f: () => flagged(1),
      F: () => flagged(-1),
      y: () => decide("confirm"),
      n: () => decide("reject"),
      e: edit,
      a: add,
      c: claim,
      u: ACTIONS.release,
      r: resolve,
      o: ACTIONS.reopen,
      d: download,
      "]": () => go("next"),
      "[": () => go("prev"),
      q: () => { window.location.href = `/?week=${encodeURIComponent(state().week)}`; },
      "?": help,
    };
    if (inTimeline && (e.key === "Enter" || e.key === " ")) {
      const ev = events()[evCur];
      if (ev && ev.tagName === "DETAILS") { e.preventDefault(); ev.open = !ev.open; }
      return;
    }
    const fn = keys[e.key];
    if (fn) { e.preventDefault(); fn(); }
  });

  bindPanel();
  select(Math.max(0, nextUndecided(-1)), true);
})();
