/* A table page: roads, coups of the current and previous shoes with their cards, game recall, the alarm
 * log and the edge chart, from /api/table/<id>; redrawn when the table's tile changes on /events. Every coup,
 * road cell, alarm and alert is checked first (items.js): one that is not of its shape is skipped and counted
 * ("n items skipped"), and the rest are drawn. */
"use strict";

(function () {
  const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const LETTER = { banker: "B", player: "P", tie: "T" };
  const ROADS = ["bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"];
  const COLOURS = ["#ffb020", "#3f8cff", "#e2453c", "#2fb463", "#c77dff", "#00c2c7", "#ff7aa2", "#b5b5b5"];
  const $ = (id) => document.querySelector('[data-testid="' + id + '"]');
  const table = decodeURIComponent(location.pathname.slice("/table/".length));
  const api = "/api/table/" + encodeURIComponent(table);
  const items = window.pitItems;
  const page = { loads: 0, skipped: 0 };
  let skipped = 0;  // in the data drawn last
  // The items of a list that pass a check (the others counted in skipped).
  function keep(list, check) {
    const k = items.keep(list, check);
    skipped += k.skipped;
    return k.good;
  }
  const isShoe = (x) => items.isObj(x) && Number.isInteger(x.shoe);
  window.tablePage = page;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function card(token) {
    const suit = token.slice(-1), rank = token.slice(0, -1);
    const c = el("span", "card" + (suit === "H" || suit === "D" ? " red" : ""), (rank === "T" ? "10" : rank) + (SUITS[suit] || suit));
    c.dataset.card = token;
    return c;
  }
  function hand(label, tokens, testid) {
    const h = el("span", "hand");
    h.dataset.testid = testid;
    h.appendChild(el("span", null, label));
    for (const t of keep(tokens, items.checks.card)) h.appendChild(card(t));
    return h;
  }
  function outcome(c) {
    if (c.void) return c.set_aside ? "set aside" : "VOID";
    return (c.winner || "-").toUpperCase() + " " + (c.player_total ?? "") + "-" + (c.banker_total ?? "");
  }

  function coups(id, shoe) {
    const box = $(id);
    box.replaceChildren();
    if (!shoe) { box.appendChild(el("caption", null, "none archived")); return; }
    const head = el("tr");
    for (const h of ["Coup", "Result", "Player", "Banker", "Flags", "Time (UTC)"]) head.appendChild(el("th", null, h));
    box.appendChild(head);
    for (const c of keep(shoe.coups, items.checks.coup).reverse()) {
      const tr = el("tr");
      tr.dataset.coup = c.coup === null ? "" : String(c.coup);
      tr.dataset.void = String(!!c.void);
      tr.appendChild(el("td", null, c.coup ?? "-"));
      tr.appendChild(el("td", null, outcome(c)));
      const p = el("td"), b = el("td");
      p.dataset.side = "player";
      b.dataset.side = "banker";
      for (const t of c.player || []) p.appendChild(card(t));  // cards checked with the coup
      for (const t of c.banker || []) b.appendChild(card(t));
      tr.appendChild(p);
      tr.appendChild(b);
      const flags = [];
      if (c.natural) flags.push("natural");
      if (c.player_pair) flags.push("P pair");
      if (c.banker_pair) flags.push("B pair");
      if (c.misdraw) flags.push("misdraw");
      tr.appendChild(el("td", null, flags.join(", ")));
      tr.appendChild(el("td", null, String(c.ts || "").slice(0, 19).replace("T", " ")));
      box.appendChild(tr);
    }
  }

  function roads(shoe) {
    const box = $("roads");
    box.replaceChildren();
    if (!shoe) return;
    const lay = items.isObj(shoe.roads) && items.isObj(shoe.roads.layout) ? shoe.roads.layout : {};
    for (const name of ROADS) {
      box.appendChild(el("div", "road-name", name.replace(/_/g, " ")));
      const road = el("div", "road");
      road.dataset.testid = "road-" + name;
      for (const item of keep(lay[name], items.checks.cell)) {
        const c = el("span", "c");
        c.style.left = "calc(var(--cell) * " + item[0] + ")";
        c.style.top = "calc(var(--cell) * " + item[1] + ")";
        if (name === "bead_plate") { c.dataset.winner = item[2]; c.textContent = LETTER[item[2]]; }
        else if (name === "big_road") { c.dataset.winner = item[2]; if (item[3]) c.textContent = String(item[3]); }
        else c.dataset.colour = item[2];
        road.appendChild(c);
      }
      box.appendChild(road);
    }
  }

  function edges(shoe) {
    const box = $("edges");
    box.replaceChildren();
    let e = shoe && shoe.edges;
    if (e && !items.checks.edges(e)) { skipped += 1; e = null; }
    if (!e) { box.appendChild(el("p", "dim", "No edges for this shoe yet (none of its coups is archived, or its start record names no ruleset).")); return; }
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    const W = 1000, H = 220, pad = 30;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("preserveAspectRatio", "none");
    const all = Object.values(e.ev).flat().concat([0]);
    const lo = Math.min(...all), hi = Math.max(...all);
    const n = Math.max(1, e.coups.length - 1);
    const x = (i) => pad + (W - 2 * pad) * i / n;
    const y = (v) => H - pad - (H - 2 * pad) * (v - lo) / ((hi - lo) || 1);
    const zero = document.createElementNS(NS, "line");
    for (const [k, v] of [["x1", pad], ["x2", W - pad], ["y1", y(0)], ["y2", y(0)]]) zero.setAttribute(k, v);
    zero.setAttribute("stroke", "#666");
    svg.appendChild(zero);
    const legend = el("div", "legend");
    Object.keys(e.ev).forEach((bet, i) => {
      const line = document.createElementNS(NS, "polyline");
      line.setAttribute("points", e.ev[bet].map((v, j) => x(j) + "," + y(v)).join(" "));
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", COLOURS[i % COLOURS.length]);
      line.setAttribute("stroke-width", "2");
      line.dataset.bet = bet;
      svg.appendChild(line);
      const lastEv = e.ev[bet][e.ev[bet].length - 1];
      const l = el("span", null, bet + " " + (100 * lastEv).toFixed(2) + "%");
      l.style.color = COLOURS[i % COLOURS.length];
      legend.appendChild(l);
    });
    box.appendChild(svg);
    box.appendChild(legend);
  }

  function alarms(data) {
    const box = $("alarm-log");
    const lines = [];
    for (const shoe of [data.current, data.previous]) {
      if (!shoe) continue;
      for (const a of keep(shoe.alarms, items.checks.alarm)) lines.push("shoe " + shoe.shoe + ": " + (a.alarm || a.name || "") + " " + (a.detail || ""));
    }
    for (const f of keep(data.alerts, items.checks.alert)) lines.push("floor " + f.kind.replace(/_/g, " ") + (f.at ? " " + f.at.slice(0, 19) : "") + ": " + (f.detail || ""));
    box.replaceChildren(...lines.map((t) => el("li", null, t)));
    if (!lines.length) box.appendChild(el("li", "dim", "no alarms"));
  }

  async function load() {
    const resp = await fetch(api, { cache: "no-store" });
    if (!resp.ok) { $("table-summary").textContent = "not in the archive"; return; }
    let data;
    try { data = await resp.json(); } catch (e) { data = null; }
    if (!items.isObj(data)) { items.note($("skipped"), 1); $("table-summary").textContent = "unreadable answer"; return; }
    skipped = Number.isInteger(data.skipped) ? data.skipped : 0;  // what the server left out
    for (const key of ["current", "previous"]) {
      if (data[key] !== null && data[key] !== undefined && !isShoe(data[key])) { skipped += 1; data[key] = null; }
    }
    $("current-shoe").textContent = data.current ? String(data.current.shoe) : "";
    $("previous-shoe").textContent = data.previous ? String(data.previous.shoe) : "";
    $("roads-shoe").textContent = data.current ? "(shoe " + data.current.shoe + ")" : "";
    coups("coups-current", data.current);
    coups("coups-previous", data.previous);
    roads(data.current);
    edges(data.current);
    alarms(data);
    items.note($("skipped"), skipped);
    page.skipped = skipped;
    page.loads += 1;
    document.body.dataset.loads = String(page.loads);
  }

  async function recall(ev) {
    ev.preventDefault();
    const form = ev.target;
    const box = $("recall");
    const q = "?shoe=" + encodeURIComponent(form.shoe.value) + "&coup=" + encodeURIComponent(form.coup.value);
    const resp = await fetch(api + "/coup" + q, { cache: "no-store" });
    let data;
    try { data = await resp.json(); } catch (e) { data = null; }
    box.replaceChildren();
    if (!resp.ok || !items.checks.coup(data)) {
      const why = !resp.ok ? (items.isObj(data) && typeof data.error === "string" ? data.error : "no such coup")
        : "this coup is archived but not of a coup's shape (shoe-floor history --json shows it as stored)";
      box.appendChild(el("span", "error", why));
      box.dataset.found = "0";
      return;
    }
    box.appendChild(el("div", null, "Shoe " + data.shoe + ", coup " + data.coup + ": " + outcome(data) +
      (data.voids ? " (voided " + data.voids + " time(s) before)" : "") + " at " + String(data.ts).slice(0, 19).replace("T", " ")));
    box.appendChild(hand("Player ", data.player, "recall-player"));
    box.appendChild(hand("Banker ", data.banker, "recall-banker"));
    box.dataset.found = "1";
  }

  let tileKey = null;
  function follow() {
    const source = new EventSource("/events");
    source.onmessage = (ev) => {
      let s;
      try { s = JSON.parse(ev.data); } catch (e) { return; }
      if (!items.isObj(s)) return;
      const t = items.keep(s.tables, items.checks.tile).good.find((x) => x.table === table);
      if (!t) return;
      $("table-status").textContent = t.link;
      $("table-summary").textContent = "shoe " + (t.shoe ?? "-") + ", coup " + (t.coup ?? "-");
      const key = t.shoe + "|" + (t.last ? t.last.coup : "") + "|" + t.alarms.length + "|" + t.advantage.length;
      if (key !== tileKey) { tileKey = key; load(); }
    };
  }

  $("table-name").textContent = table;
  document.title = table + " \u2013 pit";
  $("recall-form").addEventListener("submit", recall);
  load();
  follow();
})();
