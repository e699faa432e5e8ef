/* A table page: roads, coups of the current and previous shoes with their cards, game recall, the open rating
 * sessions, the alarm log and the edge chart, from /api/table/<id>; redrawn when the table's tile changes on
 * /events. Cards, scores, results and times are written by /static/notation.js (docs/notation.md). Every coup,
 * road cell, alarm, rating and alert is checked first (items.js): one that is not of its shape is skipped and
 * counted ("n items skipped"), and the rest are drawn. */
"use strict";

(function () {
  const N = window.notation;
  const ROADS = [["bead_plate", "Bead plate"], ["big_road", "Big road"], ["big_eye_boy", "Big eye boy"],
    ["small_road", "Small road"], ["cockroach_pig", "Cockroach pig"]];
  // Each wager's line in the chart: Banker red, Player blue, Tie green (as everywhere), the side bets their own.
  const BET_COLOURS = { banker: "#e2453c", player: "#3f8cff", tie: "#2fb463", player_pair: "#8fc1ff",
    banker_pair: "#ff9a93", dragon_bonus_player: "#00c2c7", dragon_bonus_banker: "#ff7aa2", dragon_7: "#ffb020",
    panda_8: "#c77dff" };
  const COLOURS = ["#b5b5b5", "#e0e070", "#ffffff"];
  const OUTCOMES = { win: "won", lose: "lost", push: "push" };
  const $ = (id) => document.querySelector('[data-testid="' + id + '"]');
  const table = decodeURIComponent(location.pathname.slice("/table/".length));
  const api = "/api/table/" + encodeURIComponent(table);
  const items = window.pitItems;
  const money = N.moneyText;
  const page = { loads: 0, skipped: 0 };
  let skipped = 0;  // in the data drawn last
  // The items of a list that pass a check (the others counted in skipped).
  function keep(list, check) {
    const k = items.keep(list, check);
    skipped += k.skipped;
    return k.good;
  }
  const isShoe = (x) => items.isObj(x) && Number.isInteger(x.shoe);
  const isInt = (x) => Number.isInteger(x);
  const rating = (r) => items.isObj(r) && isInt(r.seat) && typeof r.start === "string" && isInt(r.coups) &&
    isInt(r.average_bet) && Number.isFinite(r.exact_theo_cents) && isInt(r.win);
  window.tablePage = page;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function card(token) {
    const c = el("span", "card" + (N.cardRed(token) ? " red" : ""), N.cardText(token));
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
    if (c.void) return c.set_aside ? "cards set aside" : "void";
    return N.resultText(c.winner, c.player_total, c.banker_total);
  }
  function flags(c) {
    const f = [];
    if (c.natural) f.push(c.natural_hand ? "natural (" + c.natural_hand + ")" : "natural");
    if (c.player_pair) f.push("Player pair");
    if (c.banker_pair) f.push("Banker pair");
    if (c.misdraw) f.push("misdraw");
    return f;
  }
  function row(cells, tag) {
    const tr = el("tr");
    for (const c of cells) tr.appendChild(c instanceof Node ? c : el(tag || "td", null, c));
    return tr;
  }

  function coups(id, shoe) {
    const box = $(id);
    box.replaceChildren();
    if (!shoe) { box.appendChild(el("caption", null, "none archived")); return; }
    box.appendChild(row(["Coup", "Result", "Player", "Banker", "Flags", "Time"], "th"));
    for (const c of keep(shoe.coups, items.checks.coup).reverse()) {
      const tr = el("tr");
      tr.dataset.coup = c.coup === null ? "" : String(c.coup);
      tr.dataset.void = String(!!c.void);
      tr.dataset.winner = c.void ? "" : c.winner || "";
      tr.appendChild(el("td", null, c.coup ?? "\u2013"));
      const res = el("td", "result", outcome(c));
      res.dataset.winner = tr.dataset.winner;
      tr.appendChild(res);
      const p = el("td"), b = el("td");
      p.dataset.side = "player";
      b.dataset.side = "banker";
      for (const t of c.player || []) p.appendChild(card(t));  // cards checked with the coup
      for (const t of c.banker || []) b.appendChild(card(t));
      tr.appendChild(p);
      tr.appendChild(b);
      tr.appendChild(el("td", null, flags(c).join(", ")));
      tr.appendChild(el("td", "when", c.ts ? N.localTime(c.ts) : ""));
      box.appendChild(tr);
    }
  }

  // The roads in the standard marks: bead plate beads with their letter, big road rings with a tie's green slash
  // (its count from the second tie), pairs as dots (Banker red top left, Player blue bottom right), big eye boy
  // hollow rings, small road filled dots, cockroach pig slashes; the newest mark of each road outlined.
  function roads(shoe) {
    const box = $("roads");
    box.replaceChildren();
    if (!shoe) return;
    const lay = items.isObj(shoe.roads) && items.isObj(shoe.roads.layout) ? shoe.roads.layout : {};
    for (const [name, words] of ROADS) {
      box.appendChild(el("div", "road-name", words));
      const road = el("div", "road " + name);
      road.dataset.testid = "road-" + name;
      const grid = el("div", "grid");
      let cols = 0, newest = null;
      for (const item of keep(lay[name], items.checks.cell)) {
        const c = el("span", "c");
        c.style.left = "calc(var(--cell) * " + item[0] + ")";
        c.style.top = "calc(var(--cell) * " + item[1] + ")";
        c.dataset.row = String(item[1]);
        if (name === "bead_plate") {
          c.dataset.winner = item[2];
          c.appendChild(el("b", null, N.LETTERS[item[2]] || "?"));
          if (item[3]) c.appendChild(el("i", "pair player"));
          if (item[4]) c.appendChild(el("i", "pair banker"));
        } else if (name === "big_road") {
          c.dataset.winner = item[2];
          if (item[3]) c.appendChild(el("i", "tie"));
          if (item[3] > 1) c.appendChild(el("b", "n", item[3]));
          if (item[4]) c.appendChild(el("i", "pair player"));  // the pairs of its win and its ties
          if (item[5]) c.appendChild(el("i", "pair banker"));
        } else c.dataset.colour = item[2];
        grid.appendChild(c);
        cols = Math.max(cols, item[0] + 1);
        newest = c;
      }
      if (newest) newest.classList.add("newest");
      grid.style.width = "calc(var(--cell) * " + Math.max(cols, 1) + ")";
      road.appendChild(grid);
      box.appendChild(road);
      road.scrollLeft = road.scrollWidth;
    }
  }

  // Each wager's player EV per unit over the shoe: axes (coup, EV in %), a zero line (above it the player has
  // the edge), each wager in its own colour and named in words.
  function edges(shoe) {
    const box = $("edges");
    box.replaceChildren();
    let e = shoe && shoe.edges;
    if (e && !items.checks.edges(e)) { skipped += 1; e = null; }
    if (!e) { box.appendChild(el("p", "dim", "No edges for this shoe yet (none of its coups is archived, or its start record names no ruleset).")); return; }
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    // drawn in the box's own pixels, so that the ticks and labels are the page's text size
    const W = Math.max(320, Math.floor(box.clientWidth || 600)), H = 260, L = 56, R = 10, T = 10, B = 34;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("width", String(W));
    svg.setAttribute("height", String(H));
    const all = Object.values(e.ev).flat().concat([0]);
    let lo = Math.min(...all), hi = Math.max(...all);
    if (hi - lo < 1e-9) { hi += 0.01; lo -= 0.01; }
    const n = Math.max(1, e.coups.length - 1);
    const x = (i) => L + (W - L - R) * i / n;
    const y = (v) => H - B - (H - T - B) * (v - lo) / (hi - lo);
    function line(x1, y1, x2, y2, cls) {
      const l = document.createElementNS(NS, "line");
      for (const [k, v] of [["x1", x1], ["x2", x2], ["y1", y1], ["y2", y2]]) l.setAttribute(k, String(v));
      l.setAttribute("class", cls);
      svg.appendChild(l);
      return l;
    }
    function text(tx, ty, t, anchor, cls) {
      const s = document.createElementNS(NS, "text");
      s.setAttribute("x", String(tx));
      s.setAttribute("y", String(ty));
      s.setAttribute("text-anchor", anchor);
      s.setAttribute("class", cls || "tick");
      s.textContent = t;
      svg.appendChild(s);
    }
    // y axis: about six round steps of EV
    const span = hi - lo, raw = span / 6, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
    for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + 1e-12; k++) {
      const v = Math.abs(k) < 1e-9 ? 0 : k * step;
      line(L, y(v), W - R, y(v), "grid");
      text(L - 6, y(v) + 4, (v > 0 ? "+" : "") + (100 * v).toFixed(step * 100 < 1 ? 1 : 0) + "%", "end");
    }
    // x axis: coups
    const every = Math.max(1, Math.ceil(e.coups.length / Math.max(2, Math.floor((W - L - R) / 50))));
    const lastTick = e.coups.length - 1;
    e.coups.forEach((c, i) => {
      if (i % every === 0 ? lastTick - i >= every / 2 || i === lastTick : i === lastTick) text(x(i), H - B + 16, String(c), "middle");
    });
    text((L + W - R) / 2, H - 4, "coup", "middle", "axis-label");
    line(L, T, L, H - B, "axis");
    line(L, H - B, W - R, H - B, "axis");
    const zero = line(L, y(0), W - R, y(0), "zero");
    zero.dataset.testid = "edge-zero";
    text(L + 6, y(0) - 5, "even (0): above it the player has the edge", "start", "axis-label");
    const legend = el("div", "legend");
    Object.keys(e.ev).forEach((bet, i) => {
      const colour = BET_COLOURS[bet] || COLOURS[i % COLOURS.length];
      const p = document.createElementNS(NS, "polyline");
      p.setAttribute("points", e.ev[bet].map((v, j) => x(j) + "," + y(v)).join(" "));
      p.setAttribute("fill", "none");
      p.setAttribute("stroke", colour);
      p.setAttribute("stroke-width", "2");
      p.setAttribute("vector-effect", "non-scaling-stroke");
      p.dataset.bet = bet;
      svg.appendChild(p);
      const lastEv = e.ev[bet][e.ev[bet].length - 1];
      const l = el("span", null, items.betWord(bet) + " " + (lastEv >= 0 ? "+" : "") + (100 * lastEv).toFixed(2) + "%");
      l.style.color = colour;
      l.dataset.bet = bet;
      legend.appendChild(l);
    });
    box.appendChild(svg);
    box.appendChild(legend);
  }

  // The table's alarms, then the floor's alerts about it; an alert that raises something and the one that clears
  // it told apart as in the pit's feed (a word and a style: items.alertStatus).
  const STATUS_WORDS = { raised: "\u25b2 raised", cleared: "\u2713 cleared" };
  function alarms(data) {
    const box = $("alarm-log");
    const lines = [];
    for (const shoe of [data.current, data.previous]) {
      if (!shoe) continue;
      for (const a of keep(shoe.alarms, items.checks.alarm)) lines.push(el("li", null, "Shoe " + shoe.shoe + ": " + (a.alarm || a.name || "").toLowerCase().replace(/_/g, " ") + (a.detail ? " \u2013 " + a.detail : "")));
    }
    for (const f of keep(data.alerts, items.checks.alert)) {
      const status = items.alertStatus(f.kind);
      const li = el("li", null, items.kindWord(f.kind) + (status ? " (" + STATUS_WORDS[status] + ")" : "") +
        (f.at ? " at " + N.localTime(f.at) : "") + ": " + (f.detail || "") +
        (f.acked_by ? " \u2013 \u2713 acknowledged by " + f.acked_by + (f.acked_at ? " at " + N.localTime(f.acked_at) : "") : ""));
      li.dataset.kind = f.kind;
      li.dataset.acked = f.acked_by ? "1" : "0";
      li.dataset.status = status;
      lines.push(li);
    }
    box.replaceChildren(...lines);
    if (!lines.length) box.appendChild(el("li", "dim", "no alarms"));
  }

  // The open rating sessions at the table (floor.accounting.ratings, open ones): seat, since, coups, average bet,
  // the exact theoretical win and the actual win (the house's).
  function sessions(data) {
    const box = $("ratings");
    box.replaceChildren();
    const list = keep(data.ratings, rating);
    if (!list.length) { box.appendChild(el("caption", null, "no open sessions")); return; }
    box.appendChild(row(["Seat", "Since", "Coups", "Average bet", "Theo (exact)", "Win (house)"], "th"));
    for (const r of list) {
      const tr = row([String(r.seat), N.localTime(r.start), String(r.coups), money(r.average_bet),
        money(Math.round(r.exact_theo_cents)), money(r.win)]);
      tr.dataset.seat = String(r.seat);
      box.appendChild(tr);
    }
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
    sessions(data);
    items.note($("skipped"), skipped);
    page.skipped = skipped;
    page.loads += 1;
    document.body.dataset.loads = String(page.loads);
  }

  // A coup recalled for a dispute: the result and the time (local, with its zone), the cards in order, the
  // natural and pair flags, the record's seq and hash, and per seat its wagers and what each was paid.
  function recallMoney(box, data) {
    const recs = Array.isArray(data.money) ? data.money.filter((m) => items.isObj(m) && items.isObj(m.body)) : [];
    const settled = new Map();
    for (const m of recs) if (m.kind === "settlement") settled.set(m.body.seat + "|" + m.body.bet, m);
    const wagers = recs.filter((m) => m.kind === "wager");
    const t = el("table", "coups money");
    t.dataset.testid = "recall-wagers";
    if (!wagers.length && !settled.size) {
      box.appendChild(el("p", "dim", "No wagers recorded for this coup."));
      return;
    }
    t.appendChild(row(["Seat", "Wager", "Stake", "Outcome", "Paid", "Commission", "Net (player)", "Record"], "th"));
    const seen = new Set();
    const lines = wagers.map((w) => [w, settled.get(w.body.seat + "|" + w.body.bet)]);
    for (const [key, s] of settled) if (!wagers.some((w) => w.body.seat + "|" + w.body.bet === key)) lines.push([null, s]);
    lines.sort((a, b) => ((a[0] || a[1]).body.seat - (b[0] || b[1]).body.seat));
    for (const [w, s] of lines) {
      const b = (s || w).body;
      seen.add(b.seat + "|" + b.bet);
      const tr = row([String(b.seat), items.betWord(b.bet), money(b.stake),
        s ? OUTCOMES[s.body.outcome] || String(s.body.outcome) : "not settled",
        s ? money(s.body.win) : "\u2013", s ? money(s.body.commission) : "\u2013",
        s ? money(s.body.net) : "\u2013", (s || w) ? "#" + (s || w).seq : ""]);
      tr.dataset.seat = String(b.seat);
      tr.dataset.bet = String(b.bet);
      if (s) tr.dataset.net = String(s.body.net);
      t.appendChild(tr);
    }
    box.appendChild(t);
    const notes = el("ul", "recall-notes");
    for (const m of recs) {
      const b = m.body;
      let text = null;
      if (m.kind === "mispay") text = "Mispay, seat " + b.seat + " " + items.betWord(b.bet) + ": " + String(b.kind).replace(/_/g, " ") + ", due " + money(b.expected_cents) + ", seen " + money(b.seen_cents);
      else if (m.kind === "past_post") text = "Past-post, seat " + b.seat + " " + items.betWord(b.bet) + ": locked " + money(b.locked_cents) + ", seen " + money(b.seen_cents);
      else if (m.kind === "pulled_bet") text = "Pulled bet, seat " + b.seat + " " + items.betWord(b.bet) + ": locked " + money(b.locked_cents) + ", seen " + money(b.seen_cents);
      else if (m.kind === "wager_refused") text = "Bet refused, seat " + b.seat + " " + items.betWord(b.bet) + ": " + (b.text || "");
      else if (m.kind === "commission") text = "Commission box, seat " + b.seat + ": owed " + money(b.owed) + ", collected " + money(b.collected) + (b.uncollected ? ", uncollected " + money(b.uncollected) : "");
      if (text) {
        const li = el("li", null, text + " (record #" + m.seq + ")");
        li.dataset.kind = m.kind;
        notes.appendChild(li);
      }
    }
    if (notes.children.length) box.appendChild(notes);
  }

  // Previous and next: the coups the archive holds either side of the one shown (across a shoe's end), as the
  // recall's answer names them; each button fills the form and shows that coup.
  const near = { prev: null, next: null };
  const isNear = (x) => items.isObj(x) && isInt(x.shoe) && isInt(x.coup);
  function nav(data) {
    near.prev = data && isNear(data.previous) ? data.previous : null;
    near.next = data && isNear(data.next) ? data.next : null;
    for (const [which, id, words] of [["prev", "recall-prev", "the coup before"], ["next", "recall-next", "the coup after"]]) {
      const b = $(id);
      const to = near[which];
      b.disabled = !to;
      b.title = to ? words + ": shoe " + to.shoe + ", coup " + to.coup : "no coup " + words.slice(9) + " in the archive";
    }
  }
  function go(which) {
    const to = near[which];
    if (!to) return;
    const form = $("recall-form");
    form.shoe.value = String(to.shoe);
    form.coup.value = String(to.coup);
    show(to.shoe, to.coup);
  }
  $("recall-prev").addEventListener("click", () => go("prev"));
  $("recall-next").addEventListener("click", () => go("next"));
  document.addEventListener("keydown", (ev) => {
    if (!ev.altKey || (ev.key !== "ArrowLeft" && ev.key !== "ArrowRight")) return;
    ev.preventDefault();
    go(ev.key === "ArrowLeft" ? "prev" : "next");
  });

  function recall(ev) {
    ev.preventDefault();
    const form = ev.target;
    return show(form.shoe.value, form.coup.value);
  }

  async function show(shoe, coup) {
    const box = $("recall");
    const q = "?shoe=" + encodeURIComponent(shoe) + "&coup=" + encodeURIComponent(coup);
    const resp = await fetch(api + "/coup" + q, { cache: "no-store" });
    let data;
    try { data = await resp.json(); } catch (e) { data = null; }
    box.replaceChildren();
    nav(resp.ok && items.checks.coup(data) ? data : null);
    if (!resp.ok || !items.checks.coup(data)) {
      const why = !resp.ok ? (items.isObj(data) && typeof data.error === "string" ? data.error : "no such coup")
        : "this coup is archived but not of a coup's shape (shoe-floor history --json shows it as stored)";
      box.appendChild(el("span", "error", why));
      box.dataset.found = "0";
      return;
    }
    const head = el("div", "recall-head");
    const res = el("span", "result", outcome(data));
    res.dataset.winner = data.void ? "" : data.winner || "";
    head.appendChild(el("span", null, "Shoe " + data.shoe + ", coup " + data.coup));
    head.appendChild(res);
    const when = el("span", "when", data.ts ? N.localTime(data.ts) : "");
    when.dataset.testid = "recall-time";
    head.appendChild(when);
    box.appendChild(head);
    box.appendChild(hand("Player", data.player, "recall-player"));
    box.appendChild(hand("Banker", data.banker, "recall-banker"));
    const f = flags(data);
    if (data.voids) f.push("voided " + data.voids + (data.voids === 1 ? " time" : " times") + " before");
    const fl = el("div", "recall-flags", f.length ? f.join(" \u00b7 ") : "no natural, no pair");
    fl.dataset.testid = "recall-flags";
    box.appendChild(fl);
    const rec = el("div", "recall-record");
    rec.dataset.testid = "recall-record";
    rec.appendChild(el("span", null, "record #" + data.record));
    rec.appendChild(el("code", null, "hash " + (typeof data.hash === "string" ? data.hash : "\u2013")));
    box.appendChild(rec);
    recallMoney(box, data);
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
      $("table-status").textContent = t.phase || t.link;
      $("table-summary").textContent = "Shoe " + (t.shoe ?? "\u2013") + " \u00b7 coup " + (t.coup ?? "\u2013") +
        (t.money ? " \u00b7 this shift: handle " + money(t.money.handle) + ", win " + money(t.money.win) : "");
      const key = t.shoe + "|" + (t.last ? t.last.coup : "") + "|" + t.alarms.length + "|" + t.advantage.length;
      if (key !== tileKey) { tileKey = key; load(); }
    };
    source.onerror = () => items.signedOut();
  }

  $("table-name").textContent = table;
  document.title = table + " \u2013 pit";
  $("recall-form").addEventListener("submit", recall);
  load();
  follow();
})();
