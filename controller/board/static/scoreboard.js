/* The scoreboard page: draws each snapshot the daemon pushes on /events. Plain JS, no framework.
 * Everything shown comes from the snapshot; in a squeeze game the daemon itself withholds the coup in
 * progress, so this script has nothing to hide. Text goes in with textContent only (never innerHTML).
 * Cards, scores and results are written by /static/notation.js (docs/notation.md), the one notation of
 * every page. Players are never shown a technical state: the snapshot's "notice" ("Table closed",
 * "Shoe change") is all they read of it. */
"use strict";

(function () {
  const N = window.notation;
  const DUE = {
    deal: "Deal", player_third: "Player third card", banker_third: "Banker third card",
    declare: "Declare the result", void: "Coup halted: void", burn: "Burning", new_shoe: "Shoe ended",
  };
  const ROADS = ["bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"];
  const DERIVED = ["big_eye_boy", "small_road", "cockroach_pig"];
  //: Columns a derived road's cells are sized to hold: a whole 8-deck shoe (its derived roads take 33-36
  //: columns on average, 44-47 in the longest of 300 simulated shoes; those rare ones show the sign).
  const SHOE_COLUMNS = 42;
  //: Columns the big road's cells are sized to hold: a whole 8-deck shoe (37 on average, 48 at most in 300
  //: simulated shoes: the longest show the sign).
  const BIG_ROAD_COLUMNS = 40;
  //: Columns the bead plate is drawn wide: a whole 8-deck shoe (at most 14 columns of six) and one free.
  const BEAD_COLUMNS = 15;
  const ROWS = 6;
  //: How long the page waits, its event stream lost, before it tells the players the table is closed.
  const LOST_MS = 5000;
  let bilingual = false;
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

  // "Banker", or "莊 Banker" on a bilingual board.
  function word(winner) {
    const w = N.WORDS[winner] || "";
    return bilingual && N.WORDS_ZH[winner] ? N.WORDS_ZH[winner] + " " + w : w;
  }
  function resultWords(winner) { return winner === "tie" ? word("tie") : word(winner) + " wins"; }

  function card(token) {
    const text = N.cardText(token);
    const c = el("span", "card" + (N.cardRed(token) ? " red" : ""));
    c.dataset.card = token;
    c.appendChild(el("span", "r", text.slice(0, -1)));
    c.appendChild(el("span", "s", text.slice(-1)));
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
    limits(t.limits.rows);
    if (bilingual !== Boolean(t.bilingual)) {
      bilingual = Boolean(t.bilingual);
      document.body.dataset.bilingual = String(bilingual);
    }
    for (const side of ["banker", "player", "tie"]) setText("label-counter-" + side, word(side));
    setText("label-player", word("player"));
    setText("label-banker", word("banker"));
    document.title = t.name + " \u2013 scoreboard";
    const shoe = s.shoe;
    setText("shoe-number", shoe.number === null ? "-" : shoe.number);
    setText("coup-number", shoe.coup === null ? "-" : shoe.coup);
    setText("cards-remaining", shoe.cards_remaining === null ? "-" : shoe.cards_remaining);
    $("cut-card").hidden = !shoe.cut_card_out;
    $("last-coup").hidden = !shoe.last_coup;
  }

  // The limits of each wager the table offers, labelled: Banker and Player first, then Tie, pairs ...
  function limits(rows) {
    const box = $("limits");
    const key = JSON.stringify(rows);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.replaceChildren(...rows.map((r) => {
      const e = el("div", "lim " + r.key);
      e.dataset.testid = "limit-" + r.key;
      e.appendChild(el("span", "k", r.label));
      e.appendChild(el("b", null, r.minimum + "\u2013" + r.maximum));
      return e;
    }));
  }

  // What the players read of the table's state: "Table closed", "Shoe change", or nothing.
  let lost = false;
  function notice(n) {
    const shown = lost ? { kind: "table_closed", text: "Table closed" } : n;
    const box = $("notice");
    box.hidden = !shown;
    box.dataset.kind = shown ? shown.kind : "";
    setText("notice", shown ? shown.text : "");
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
    else if (c.state === "complete" && c.result) due = resultWords(c.result);
    else if (c.due) due = DUE[c.due] || c.due;
    setText("due", due);
    $("due").dataset.due = c.due || "";
  }

  function last(l, guide, ladderRows) {
    const box = $("last");
    box.dataset.winner = l ? l.winner : "";
    setText("last-coup-number", l ? "(coup " + l.coup + ")" : "");
    setText("result", l ? resultWords(l.winner) : "\u2014");
    setText("last-score", l ? N.scoreText(l.player_total, l.banker_total) : "");
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
      tr.appendChild(el("td", "bet", g.bet in N.WORDS ? word(g.bet) : g.label));
      tr.appendChild(el("td", "pays", o && o.outcome === "win" ? o.pays : g.pays));
      tr.appendChild(el("td", "res", o ? o.outcome.toUpperCase() : ""));
      tr.appendChild(el("td", "note", g.note));
      return tr;
    }));
    ladder(ladderRows);
  }

  // The Dragon Bonus pay table: each way to win above what it pays, one box a pair, so a pair is never split
  // when the row wraps.
  function ladder(rows) {
    const box = $("ladder");
    const key = JSON.stringify(rows);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.hidden = rows.length === 0;
    const step = (cls, win, pays) => {
      const e = el("div", cls);
      e.appendChild(el("span", "w", win));
      e.appendChild(el(cls === "step head" ? "span" : "b", "p", pays));
      return e;
    };
    // "Win by 9" reads as "9" under a leading "Win by"; the natural win and the natural tie keep their words.
    $("ladder-steps").replaceChildren(step("step head", "Win by", "Pays"),
      ...rows.map((r) => step("step", r.win.replace(/^Win by /, ""), r.pays)));
  }

  function counters(c, st) {
    for (const k of Object.keys(c)) {
      const e = $("counter-" + k);
      if (e) setText("counter-" + k, c[k]);
    }
    for (const k of ["banker", "player", "tie"]) setText("percent-" + k, st.percent[k] + "%");
    const streak = st.streak;
    setText("streak", streak ? word(streak.winner) + " \u00d7" + streak.count : "\u2013");
    $("streak").dataset.winner = streak ? streak.winner : "";
  }

  function roadCell(name, item, size) {
    const [col, row, value] = item;
    const cell = el("div", "cell");
    cell.style.left = col * size + "px";
    cell.style.top = row * size + "px";
    if (name === "bead_plate") {
      cell.dataset.winner = value;
      cell.textContent = (bilingual ? N.WORDS_ZH[value] : N.LETTERS[value]) || "?";
      if (item[4]) cell.appendChild(el("span", "bp"));
      if (item[3]) cell.appendChild(el("span", "pp"));
    } else if (name === "big_road") {
      cell.dataset.winner = value;
      cell.dataset.ties = item[3];
      if (item[3] > 0) {
        cell.appendChild(el("span", "tie-slash"));
        if (item[3] > 1) cell.appendChild(el("span", "tie-count", item[3]));
      }
      // the pairs of the coups the cell stands for, as on the bead plate
      if (item[5]) cell.appendChild(el("span", "bp"));
      if (item[4]) cell.appendChild(el("span", "pp"));
    } else {
      cell.dataset.colour = value;
    }
    return cell;
  }

  // A road's cells are squares sized from the height the page gives it (six rows), never under the
  // road's minimum; a derived road's cells are also sized so that a whole shoe's columns fit its width. The
  // newest columns (and one free) stay on screen; older ones that do not fit scroll off to the left under a
  // "◀ N earlier columns" sign. The newest cell of every road is outlined.
  function roads(r, ended) {
    // The ask marks first: their column's width is part of the layout the road cells are sized in. Once the
    // shoe has ended there is no next coup to ask about: no marks.
    $("ask").dataset.ended = String(ended);
    for (const side of ["banker", "player"]) {
      const row = $("ask-" + side);
      const marks = r.ask[side];
      const nodes = [el("span", "who", N.LETTERS[side])];
      for (const name of DERIVED) {
        const m = el("span", "mark " + name);
        m.dataset.road = name;
        m.dataset.colour = (!ended && marks[name]) || "none";
        nodes.push(m);
      }
      row.replaceChildren(...nodes);
    }
    // One cell size for the three derived roads: the largest whose six rows fit each one's height and whose
    // whole shoe of columns fits each one's width.
    let derived = Infinity;
    for (const name of DERIVED) {
      const box = $("road-" + name);
      let maxCol = -1;
      for (const it of r.layout[name]) if (it[0] > maxCol) maxCol = it[0];
      const fit = Math.min(Math.floor(box.clientHeight / ROWS), Math.floor(box.clientWidth / Math.max(SHOE_COLUMNS, maxCol + 2)));
      derived = Math.min(derived, fit);
    }
    for (const name of ROADS) {
      const box = $("road-" + name);
      const items = r.layout[name];
      let maxCol = -1;
      for (const it of items) if (it[0] > maxCol) maxCol = it[0];
      let fit = DERIVED.includes(name) ? derived : Math.floor(box.clientHeight / ROWS);
      if (name === "big_road") fit = Math.min(fit, Math.floor(box.clientWidth / BIG_ROAD_COLUMNS));
      if (name === "bead_plate") {  // as wide as a whole shoe, at most half the row: the counters are beside it
        fit = Math.min(fit, Math.floor(box.closest(".first").clientWidth / 2 / BEAD_COLUMNS));
      }
      const size = Math.max(Number(box.dataset.minCell), fit);
      if (name === "bead_plate" && box.style.width !== BEAD_COLUMNS * size + "px") box.style.width = BEAD_COLUMNS * size + "px";
      const key = size + "|" + box.clientWidth + "|" + bilingual + "|" + JSON.stringify(items);
      if (box.dataset.key === key) continue;
      box.dataset.key = key;
      box.style.setProperty("--cell", size + "px");
      const grid = box.querySelector(".grid");
      const cells = items.map((it) => roadCell(name, it, size));
      if (cells.length) {
        cells[cells.length - 1].classList.add("newest");
        cells[cells.length - 1].dataset.newest = "true";
      }
      grid.replaceChildren(...cells);
      const visible = Math.floor(box.clientWidth / size) || 1;
      const shift = Math.max(0, maxCol + 2 - visible);  // keep the newest column and one free on screen
      grid.style.transform = "translateX(" + -shift * size + "px)";
      const earlier = box.parentElement.querySelector(".earlier");
      earlier.hidden = shift === 0;
      earlier.replaceChildren(...(shift === 0 ? [] : [el("span", "n", "\u25c0 " + shift),
        el("span", "w", shift === 1 ? " earlier column" : " earlier columns")]));
      box.dataset.count = String(items.length);
      box.dataset.cellPx = String(size);
      box.dataset.columns = String(visible);
      box.dataset.hidden = String(shift);
    }
  }

  function shoeEnded(s) { return s.coup.state === "shoe_closed"; }

  // The payout guide never runs off the bottom of its panel (a header with the cut card's badges is taller):
  // its notes give way first, then its size, and only then the guide itself.
  const FIT = ["tight", "tighter", "no-guide"];
  function fitGuide() {
    const left = document.querySelector(".left");
    if (!left) return;
    left.classList.remove(...FIT);
    for (const level of FIT) {
      if (left.scrollHeight <= left.clientHeight + 1) return;
      left.classList.add(level);
    }
  }

  function render(s) {
    latest = s;
    header(s);
    notice(s.notice);
    coup(s.coup);
    last(s.last, s.table.guide, s.table.ladder);
    counters(s.counters, s.stats);
    roads(s.roads, shoeEnded(s));
    fitGuide();
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
    let timer = null;
    source.onmessage = (ev) => {
      if (timer !== null) { clearTimeout(timer); timer = null; }
      if (lost) { lost = false; if (latest) notice(latest.notice); }
      let snapshot;
      try { snapshot = JSON.parse(ev.data); } catch (e) { return; }
      if (snapshot.version === stats.version && stats.renders) return;
      render(snapshot);
    };
    source.onerror = () => {  // EventSource reconnects by itself; a long silence is a closed table to players
      if (timer === null && !lost) timer = setTimeout(() => { timer = null; lost = true; notice(null); }, LOST_MS);
    };
  }

  // Where the Dragon Bonus pays and the counters go. Landscape: the counters beside the bead plate, the
  // Dragon Bonus pays under the ask (the left column is full). Portrait: the counters under the coup, in the
  // room beside the last result's payout guide, and the Dragon Bonus pays beside the bead plate.
  const portrait = window.matchMedia("(orientation: portrait)");
  function place() {
    const first = document.querySelector(".first");
    const homes = portrait.matches
      ? [["counters", document.querySelector("section.left")], ["ladder", first]]
      : [["counters", first], ["ladder", $("side")]];
    for (const [id, home] of homes) if ($(id).parentElement !== home) home.appendChild($(id));
  }
  place();
  portrait.addEventListener("change", place);

  // A new screen size, a rotated trend board, an alarm bar that came or went: redraw the roads for the
  // room they now have (roads() skips a road whose size and content did not change).
  const resized = new ResizeObserver(() => { if (latest) roads(latest.roads, shoeEnded(latest)); });
  for (const name of ROADS) resized.observe($("road-" + name));

  connect();
})();
