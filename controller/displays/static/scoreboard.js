/* The scoreboard page: draws each snapshot the daemon pushes on /events. Plain JS, no framework.
 * Everything shown comes from the snapshot; in a squeeze game the daemon itself withholds the coup in
 * progress, so this script has nothing to hide. Text goes in with textContent only (never innerHTML). */
"use strict";

(function () {
  const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const DUE = {
    deal: "Deal", player_third: "Player third card", banker_third: "Banker third card",
    declare: "Declare the result", void: "Coup halted: void", burn: "Burning", new_shoe: "Shoe ended",
  };
  const WINNER = { banker: "BANKER WINS", player: "PLAYER WINS", tie: "TIE" };
  const LETTER = { banker: "B", player: "P", tie: "T" };
  const ROADS = ["bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"];
  const ROWS = 6;
  let latest = null;
  const stats = { version: 0, latencies: [], paints: [], renders: 0 };
  window.scoreboard = stats;

  const $ = (id) => document.querySelector('[data-testid="' + id + '"]');
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function setText(id, text) {
    const e = $(id);
    const t = text === undefined || text === null ? "" : String(text);
    if (e.textContent !== t) e.textContent = t;
  }

  function card(token) {
    const rank = token.slice(0, -1), suit = token.slice(-1);
    const c = el("span", "card" + (suit === "H" || suit === "D" ? " red" : ""));
    c.dataset.card = token;
    c.appendChild(el("span", "r", rank === "T" ? "10" : rank));
    c.appendChild(el("span", "s", SUITS[suit] || suit));
    return c;
  }
  function cards(id, tokens) {
    const box = $(id);
    const key = (tokens || []).join(" ");
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.replaceChildren(...(tokens || []).map(card));
  }

  function header(s) {
    const t = s.table;
    setText("table-name", t.name);
    setText("game", t.description || t.ruleset);
    setText("limits", "Min " + t.limits.minimum + "  \u00b7  Max " + t.limits.maximum);
    document.title = t.name + " \u2013 scoreboard";
    const shoe = s.shoe;
    setText("shoe-number", shoe.number === null ? "-" : shoe.number);
    setText("coup-number", shoe.coup === null ? "-" : shoe.coup);
    setText("cards-remaining", shoe.cards_remaining === null ? "-" : shoe.cards_remaining);
    $("cut-card").hidden = !shoe.cut_card_out;
    $("last-coup").hidden = !shoe.last_coup;
  }

  function alarms(list) {
    const box = $("alarms");
    box.hidden = list.length === 0;
    box.replaceChildren(...list.map((a) => {
      const e = el("span", "alarm", a.text);
      e.dataset.alarm = a.name;
      return e;
    }));
  }

  function coup(c) {
    const box = $("coup");
    box.dataset.state = c.state;
    setText("coup-title", c.number === null ? "Coup" : "Coup " + c.number);
    const hidden = c.state === "in_play";
    $("in-play").hidden = !hidden;
    setText("in-play", hidden ? "Coup " + c.number + " in play" : "");
    $("hands").hidden = hidden;
    cards("player-cards", c.player);
    cards("banker-cards", c.banker);
    setText("player-total", c.player_total);
    setText("banker-total", c.banker_total);
    let due = "";
    if (c.state === "burn") due = DUE.burn;
    else if (c.state === "shoe_closed") due = DUE.new_shoe;
    else if (c.state === "waiting") due = "Place your bets";
    else if (c.state === "complete" && c.result) due = WINNER[c.result];
    else if (c.due) due = DUE[c.due] || c.due;
    setText("due", due);
    $("due").dataset.due = c.due || "";
  }

  function last(l, guide) {
    const box = $("last");
    box.dataset.winner = l ? l.winner : "";
    setText("last-coup-number", l ? "(coup " + l.coup + ")" : "");
    setText("result", l ? WINNER[l.winner] : "\u2014");
    cards("last-player-cards", l ? l.player : []);
    cards("last-banker-cards", l ? l.banker : []);
    setText("last-player-total", l ? l.player_total : "");
    setText("last-banker-total", l ? l.banker_total : "");
    const flags = [];
    if (l && l.natural) flags.push("Natural (" + l.natural + ")");
    if (l && l.banker_pair) flags.push("Banker pair");
    if (l && l.player_pair) flags.push("Player pair");
    setText("last-flags", flags.join("  \u00b7  "));
    const outcome = {};
    if (l) for (const p of l.payouts) outcome[p.bet] = p;
    const body = $("payouts").tBodies[0];
    body.replaceChildren(...guide.map((g) => {
      const tr = el("tr");
      tr.dataset.bet = g.bet;
      const o = outcome[g.bet];
      tr.dataset.outcome = o ? o.outcome : "";
      tr.appendChild(el("td", "bet", g.label));
      tr.appendChild(el("td", "pays", o && o.outcome === "win" ? o.pays : g.pays));
      tr.appendChild(el("td", "res", o ? o.outcome.toUpperCase() : ""));
      const ladder = g.bet.startsWith("dragon_bonus_");
      tr.appendChild(el("td", "note", ladder ? "see below" : g.note));
      return tr;
    }));
    const bonus = guide.find((g) => g.bet.startsWith("dragon_bonus_"));
    setText("ladder", bonus ? "Dragon Bonus: " + bonus.note : "");
  }

  function counters(c) {
    for (const k of Object.keys(c)) {
      const e = $("counter-" + k);
      if (e) setText("counter-" + k, c[k]);
    }
  }

  function roadCell(name, item, size) {
    const [col, row, value] = item;
    const cell = el("div", "cell");
    cell.style.left = col * size + "px";
    cell.style.top = row * size + "px";
    if (name === "bead_plate") {
      cell.dataset.winner = value;
      cell.textContent = LETTER[value] || "?";
      if (item[4]) cell.appendChild(el("span", "bp"));
      if (item[3]) cell.appendChild(el("span", "pp"));
    } else if (name === "big_road") {
      cell.dataset.winner = value;
      cell.dataset.ties = item[3];
      if (item[3] > 0) {
        cell.appendChild(el("span", "tie-slash"));
        if (item[3] > 1) cell.appendChild(el("span", "tie-count", item[3]));
      }
    } else {
      cell.dataset.colour = value;
    }
    return cell;
  }

  // A road's cells are squares sized from the height the page gives it (six rows), never under the
  // road's minimum; the newest columns (and one free) stay on screen, older ones scroll off to the left.
  function roads(r) {
    // The ask marks first: their column's width is part of the layout the road cells are sized in.
    for (const side of ["banker", "player"]) {
      const row = $("ask-" + side);
      const marks = r.ask[side];
      const nodes = [el("span", "who", side === "banker" ? "B" : "P")];
      for (const name of ["big_eye_boy", "small_road", "cockroach_pig"]) {
        const m = el("span", "mark " + name);
        m.dataset.road = name;
        m.dataset.colour = marks[name] || "none";
        nodes.push(m);
      }
      row.replaceChildren(...nodes);
    }
    for (const name of ROADS) {
      const box = $("road-" + name);
      const size = Math.max(Number(box.dataset.minCell), Math.floor(box.clientHeight / ROWS));
      const items = r.layout[name];
      const key = size + "|" + box.clientWidth + "|" + JSON.stringify(items);
      if (box.dataset.key === key) continue;
      box.dataset.key = key;
      box.style.setProperty("--cell", size + "px");
      const grid = box.querySelector(".grid");
      grid.replaceChildren(...items.map((it) => roadCell(name, it, size)));
      let maxCol = -1;
      for (const it of items) if (it[0] > maxCol) maxCol = it[0];
      const visible = Math.floor(box.clientWidth / size) || 1;
      const shift = Math.max(0, maxCol + 2 - visible);  // keep the newest column and one free on screen
      grid.style.transform = "translateX(" + -shift * size + "px)";
      box.dataset.count = String(items.length);
      box.dataset.cellPx = String(size);
      box.dataset.columns = String(visible);
    }
  }

  function render(s) {
    latest = s;
    header(s);
    alarms(s.alarms);
    coup(s.coup);
    last(s.last, s.table.guide);
    counters(s.counters);
    roads(s.roads);
    document.body.dataset.version = String(s.version);
    document.body.dataset.reveal = s.reveal;
    stats.version = s.version;
    stats.renders += 1;
    const now = Date.now();
    stats.latencies.push(now - s.ts_ms);
    requestAnimationFrame(() => stats.paints.push(Date.now() - s.ts_ms));
    if (stats.latencies.length > 2000) { stats.latencies.shift(); stats.paints.shift(); }
  }

  function connect() {
    const source = new EventSource("/events");
    source.onmessage = (ev) => {
      $("connection").hidden = true;
      let snapshot;
      try { snapshot = JSON.parse(ev.data); } catch (e) { return; }
      if (snapshot.version === stats.version && stats.renders) return;
      render(snapshot);
    };
    source.onerror = () => { $("connection").hidden = false; };  // EventSource reconnects by itself
  }

  // A new screen size, a rotated trend board, an alarm bar that came or went: redraw the roads for the
  // room they now have (roads() skips a road whose size and content did not change).
  const resized = new ResizeObserver(() => { if (latest) roads(latest.roads); });
  for (const name of ROADS) resized.observe($("road-" + name));

  connect();
})();
