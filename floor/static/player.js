/* A player's page: each visit (across seats and tables) with its rating slips, one a table, and the player's
 * buy-ins, from /api/player/<ref> (floor/slips.py: the same slips as `shoe-floor slips --player REF --open`).
 * Money and times are written by /static/notation.js (docs/notation.md). A slip or buy-in that is not of its
 * shape is skipped and counted ("n items skipped"). */
"use strict";

(function () {
  const N = window.notation;
  const items = window.pitItems;
  const money = N.moneyText;
  const $ = (id) => document.querySelector('[data-testid="' + id + '"]');
  const ref = decodeURIComponent(location.pathname.slice("/player/".length));
  const page = { loads: 0, skipped: 0 };
  window.playerPage = page;
  const isInt = (x) => Number.isInteger(x);
  const isText = (x) => typeof x === "string";
  const slipOk = (s) => items.isObj(s) && isText(s.table) && isInt(s.seat) && Array.isArray(s.seats) &&
    s.seats.every(isInt) && isText(s.start) && isText(s.end) && isInt(s.coups) && isInt(s.handle_cents) &&
    isInt(s.avg_bet_cents) && Number.isFinite(s.theo_cents) && Number.isFinite(s.estimated_theo_cents) &&
    isInt(s.win_cents) && isInt(s.buy_in_cents) && Number.isFinite(s.rated_seconds) &&
    Number.isFinite(s.paused_seconds) && typeof s.open === "boolean";
  const buyInOk = (b) => items.isObj(b) && isText(b.table) && isText(b.at) && isInt(b.seat) && isInt(b.cents) &&
    isText(b.tender);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function row(cells, head) {
    const tr = el("tr");
    for (const c of cells) tr.appendChild(el(head ? "th" : "td", null, c));
    return tr;
  }
  const minutes = (s) => Math.round(s / 60) + " min";
  const signed = (cents) => (cents > 0 ? "+" : "") + money(cents);

  function draw(data) {
    let skipped = 0;
    $("player-ref").textContent = "Player " + ref;
    const visits = $("visits");
    visits.replaceChildren();
    let slips = 0;
    for (const v of Array.isArray(data.visits) ? data.visits : []) {
      if (!items.isObj(v) || !isText(v.start) || !Array.isArray(v.slips)) { skipped += 1; continue; }
      const kept = items.keep(v.slips, slipOk);
      skipped += kept.skipped;
      const box = el("div", "visit");
      box.dataset.testid = "visit";
      const open = kept.good.some((s) => s.open);
      box.appendChild(el("h2", null, "Visit from " + N.localTime(v.start) + (open ? " (still seated)" : "")));
      const t = el("table", "coups slips");
      t.appendChild(row(["table", "seats", "start", "end", "rated", "paused", "coups", "decisions/h", "handle",
        "avg bet", "theo", "estimate", "player's win", "buy-ins"], true));
      for (const s of kept.good) {
        const tr = row([s.table, s.seats.join(", "), N.localTime(s.start), s.open ? "seated" : N.localTime(s.end),
          minutes(s.rated_seconds), minutes(s.paused_seconds), s.coups,
          s.decisions_per_hour === null ? "-" : String(Math.round(s.decisions_per_hour)), money(s.handle_cents),
          money(s.avg_bet_cents), money(Math.round(s.theo_cents)), money(Math.round(s.estimated_theo_cents)),
          signed(s.win_cents), money(s.buy_in_cents)]);
        tr.dataset.testid = "slip";
        tr.dataset.table = s.table;
        tr.title = "estimate: avg bet x " + (s.estimate && s.estimate.decisions_per_hour) +
          " decisions/hour x rated hours x house edge " + (s.estimate && s.estimate.house_edge);
        t.appendChild(tr);
        slips += 1;
      }
      box.appendChild(t);
      visits.appendChild(box);
    }
    if (!visits.children.length) visits.appendChild(el("p", "dim", "no rating slips for this player"));
    const buys = items.keep(Array.isArray(data.buy_ins) ? data.buy_ins : [], buyInOk);
    skipped += buys.skipped;
    const bt = $("buy-ins");
    bt.replaceChildren(row(["time", "table", "seat", "amount", "tender"], true));
    for (const b of buys.good) {
      const tr = row([N.localTime(b.at), b.table, b.seat, money(b.cents), b.tender]);
      tr.dataset.testid = "buy-in";
      bt.appendChild(tr);
    }
    const total = buys.good.reduce((sum, b) => sum + b.cents, 0);
    $("player-summary").textContent = slips + " slip" + (slips === 1 ? "" : "s") + ", " + buys.good.length +
      " buy-in" + (buys.good.length === 1 ? "" : "s") + " (" + money(total) + ")";
    const sk = $("skipped");
    sk.hidden = skipped === 0;
    sk.textContent = skipped + " items skipped";
    page.skipped = skipped;
    page.loads += 1;
  }

  fetch("/api/player/" + encodeURIComponent(ref), { credentials: "same-origin" })
    .then((r) => r.json())
    .then(draw)
    .catch((e) => { $("player-summary").textContent = "cannot load the player: " + e; });
})();
