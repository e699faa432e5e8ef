/* The pit's pages check every item before they draw it (the server checks them too: floor/pit_intake.py; these
 * are the last line). Each check says whether an item has the shape its page reads; an item that has not is
 * skipped and counted, and the rest are drawn. Shared by pit.js and table.js as window.pitItems. */
"use strict";

(function () {
  const CARD = /^[A2-9TJQK][SHDC]$/;
  const isObj = (x) => typeof x === "object" && x !== null && !Array.isArray(x);
  const isStr = (x) => typeof x === "string";
  const isNum = (x) => typeof x === "number" && Number.isFinite(x);
  const isInt = (x) => Number.isInteger(x);
  const isBool = (x) => typeof x === "boolean";
  const opt = (x, ok) => x === null || x === undefined || ok(x);
  const list = (x, ok) => Array.isArray(x) && x.every(ok);
  const cards = (x) => opt(x, (v) => list(v, (c) => isStr(c) && CARD.test(c)) && v.length <= 6);

  const hand = (x) => isObj(x) && opt(x.winner, isStr) && opt(x.player_total, isInt) && opt(x.banker_total, isInt) &&
    cards(x.player) && cards(x.banker) && opt(x.coup, isInt) && opt(x.shoe, isInt);
  const record = (r) => isObj(r) && isStr(r.kind) && opt(r.seq, isInt);

  const checks = {
    card: (c) => isStr(c) && CARD.test(c),
    /** A pit tile (floor/pit.py _Tile.encode). */
    tile: (t) => isObj(t) && isStr(t.table) && isStr(t.link) && opt(t.status, isStr) &&
      opt(t.shoe, isInt) && opt(t.coup, isInt) && opt(t.cards_remaining, isInt) && opt(t.updated, isNum) &&
      opt(t.last, hand) &&
      list(t.big_road, (c) => Array.isArray(c) && isInt(c[0]) && isInt(c[1]) && isStr(c[2]) && isInt(c[3]) &&
        isBool(c[4]) && isBool(c[5])) &&
      list(t.alarms, (a) => isObj(a) && isStr(a.name) && opt(a.since, isNum)) &&
      list(t.advantage, (f) => isObj(f) && isStr(f.bet) && isNum(f.ev) && opt(f.state, isStr)) &&
      opt(t.counts, isObj) && opt(t.game, isObj) && opt(t.phase, isStr) && opt(t.dealer, isStr) &&
      opt(t.limits, (l) => isObj(l) && isInt(l.minimum) && isInt(l.maximum)) &&
      opt(t.money, (m) => isObj(m) && isInt(m.handle) && isInt(m.win) && opt(m.shift, isStr)),
    /** An alert of the feed (floor.archive.FeedItem). */
    alert: (f) => isObj(f) && isStr(f.kind) && isStr(f.table) && opt(f.id, isInt) && opt(f.seq, isInt) &&
      opt(f.at, isStr) && opt(f.detail, isStr) && opt(f.record, record) && opt(f.acked_by, isStr) &&
      opt(f.acked_at, isStr),
    /** A coup as the archive lists it (history --json). */
    coup: (c) => hand(c) && opt(c.void, isBool) && opt(c.set_aside, isBool) && opt(c.ts, isStr),
    /** An alarm record's body. */
    alarm: (a) => isObj(a) && opt(a.alarm, isStr) && opt(a.name, isStr) && opt(a.detail, isStr),
    /** One cell of a road's layout: [column, row, what, ...]. */
    cell: (c) => Array.isArray(c) && isInt(c[0]) && isInt(c[1]) && isStr(c[2]),
    /** A shoe's edges: the coups and, per wager, a finite number per coup. */
    edges: (e) => isObj(e) && list(e.coups, isInt) && isObj(e.ev) &&
      Object.values(e.ev).every((v) => list(v, isNum)),
  };

  /** The items of ``items`` that pass ``check``, and how many did not (a non-list counts as one). */
  function keep(items, check) {
    if (!Array.isArray(items)) return { good: [], skipped: items === undefined || items === null ? 0 : 1 };
    const good = [];
    let skipped = 0;
    for (const item of items) {
      let ok = false;
      try { ok = check(item); } catch (e) { ok = false; }
      if (ok) good.push(item); else skipped += 1;
    }
    return { good: good, skipped: skipped };
  }

  /** Show ``n`` skipped items on ``node`` ("3 items skipped"), or hide it. */
  function note(node, n) {
    if (!node) return;
    node.hidden = !n;
    node.textContent = n ? n + (n === 1 ? " item" : " items") + " skipped (not of their shape)" : "";
  }

  /** A wager's name in words: notation.js's (controller/game/notation.py WAGER_WORDS). */
  function betWord(bet) { return window.notation.wagerWord(bet); }
  /** An alert's kind as a word ("past_post" -> "Past-post"); every AlertKind has one (tests/pit/test_alert_words.py). */
  const KINDS = { advantage: "Advantage", advantage_cleared: "Advantage cleared", repeated_shoe: "Repeated shoe",
    broken_link: "Broken chain", gap: "Missing records", conflict: "Conflicting record", forged: "Forged record",
    dealer_errors: "Dealer errors", past_post: "Past-post", pulled_bet: "Pulled bet", mispay: "Mispay",
    foreign_chip: "Foreign chip", stolen_chip: "STOLEN CHIP", money_faults: "Money faults this shift", tray_variance: "Tray short or over",
    cash_approaching_ctr: "Cash in nearing a CTR", ctr_due: "CTR due (cash in)",
    betting_with_the_count: "Betting with the count", hold_outside_interval: "Win outside its 95 % interval",
    clock_unsynchronised: "Clock not synchronised", supervisor_locked_out: "Supervisor locked out (wrong PIN)", key_enrolled: "Key enrolled", key_rotated: "Key rotated",
    key_revoked: "Key revoked", key_replaced: "Key replaced", refused: "Refused message",
    archive_lost: "Archive lost" };
  /** Whether an alert raises something or clears it: a kind that has a clearing kind (an advantage and its
   * advantage_cleared) is "raised", the clearing kind "cleared", any other kind neither (""). The feed draws
   * the two apart, in words and style (tests/browser/test_pit_feed.py). */
  const CLEARS = { advantage_cleared: "advantage" };
  function alertStatus(kind) {
    const k = String(kind);
    if (Object.prototype.hasOwnProperty.call(CLEARS, k)) return "cleared";
    return Object.values(CLEARS).includes(k) ? "raised" : "";
  }
  function kindWord(kind) {
    const k = String(kind);
    if (KINDS[k]) return KINDS[k];
    const t = k.replace(/_/g, " ");
    return t.charAt(0).toUpperCase() + t.slice(1);
  }
  /** Cents as the casino writes money: notation.js's moneyText (controller/game/notation.py money_text), every
   * amount to the cent. ``short`` (a compact tile's handle, win and limits only, with the whole amount in its
   * title) writes an amount from $10,000 in thousands or millions: "$12.3k", "$1.25M". */
  function money(cents, short) {
    const v = Math.abs(cents) / 100;
    const sign = cents < 0 ? "-$" : "$";
    if (short && Number.isFinite(cents) && v >= 1e6) return sign + (v / 1e6).toFixed(2) + "M";
    if (short && Number.isFinite(cents) && v >= 1e4) return sign + (v / 1e3).toFixed(1) + "k";
    return window.notation.moneyText(cents);
  }

  window.pitItems = { checks: checks, keep: keep, note: note, isObj: isObj, betWord: betWord, kindWord: kindWord,
    alertStatus: alertStatus, money: money };

  /** The event stream broke: when it is because this page's session ended (the pit has users, floor/pit_auth.py),
   * go to the sign-in page, and back here after it. */
  window.pitItems.signedOut = function () {
    fetch("/api/pit", { cache: "no-store" }).then((r) => {
      if (r.status === 401) location.assign("/signin?next=" + encodeURIComponent(location.pathname));
    }).catch(() => {});
  };
})();
