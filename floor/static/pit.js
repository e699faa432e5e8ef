/* The pit page: one tile per table and the floor's alert feed, redrawn from each snapshot on /events.
 * Plain JS, text through textContent only. A tile is rebuilt only when its own data changed. Every tile and
 * alert is checked first (items.js): one that is not of its shape is skipped and counted in the header
 * ("n items skipped"), and the rest are drawn. Who is signed in comes from /api/session: a viewer's page has no
 * feed; a pit manager's has an Acknowledge button on each open alert (POST /api/feed/ack with the session's CSRF
 * token; the acknowledgement comes back to every open page on the stream); Sign out ends the session. */
"use strict";

(function () {
  const items = window.pitItems;
  const stats = { version: 0, renders: 0, skipped: 0, tileLatencies: [], paints: [] };
  window.pit = stats;
  const $ = (id) => document.querySelector('[data-testid="' + id + '"]');
  const tilesBox = $("tiles");
  const tiles = new Map();  // table -> {el, key, data}
  let latest = null;
  // Who is signed in (GET /api/session): {user, role, csrf, actions}; all null when the pit has no users.
  let session = { user: null, role: null, csrf: null, actions: [] };
  const ROLE_WORDS = { pit_manager: "pit manager", surveillance: "surveillance", viewer: "viewer" };
  const canAck = () => Array.isArray(session.actions) && session.actions.includes("/api/feed/ack");

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function age(since) {
    if (!since) return "";
    const s = Math.max(0, Math.round((Date.now() - since) / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    return Math.floor(s / 3600) + "h" + String(Math.floor((s % 3600) / 60)).padStart(2, "0");
  }
  const N = window.notation;
  function field(label, value, cls) {
    const f = el("span", "f" + (cls ? " " + cls : ""));
    f.appendChild(el("span", "k", label));
    f.appendChild(el("span", "v", value === null || value === undefined ? "\u2013" : value));
    return f;
  }
  function hand(label, tokens) {
    const h = el("span", "hand");
    h.appendChild(el("span", "k", label));
    for (const t of tokens || []) {
      const c = el("span", "card" + (N.cardRed(t) ? " red" : ""), N.cardText(t));
      c.dataset.card = t;
      h.appendChild(c);
    }
    return h;
  }
  const GAMES = { commission: "Commission", no_commission: "No commission", ez: "EZ Baccarat", super6: "Super 6" };
  function gameText(g) {
    if (!g) return "";
    const name = g.name ? (GAMES[g.name] || g.name.replace(/_/g, " ")) : "";
    return [name, g.decks ? g.decks + (g.decks === 1 ? " deck" : " decks") : ""].filter(Boolean).join(" \u00b7 ");
  }

  function build(t) {
    const a = el("a", "tile");
    a.href = "/table/" + encodeURIComponent(t.table);
    a.dataset.table = t.table;
    a.dataset.link = t.link;
    a.dataset.phase = t.phase || "";
    a.dataset.alarms = t.alarms.length ? "1" : "0";
    const raised = t.advantage.filter((f) => f.state !== "cleared").sort((x, y) => y.ev - x.ev);  // best edge first
    a.dataset.advantage = raised.length ? "1" : "0";
    a.dataset.shoe = t.shoe === null || t.shoe === undefined ? "" : String(t.shoe);
    a.dataset.coup = t.coup === null || t.coup === undefined ? "" : String(t.coup);
    const top = el("div", "line head");
    top.appendChild(el("span", "name", t.table));
    const alarms = t.alarms.filter((x) => x.name !== "link_down" || t.phase !== "link down");
    if (alarms.length) {
      const al = el("span", "alarms");
      al.dataset.names = alarms.map((x) => x.name).join(" ");
      al.dataset.since = alarms.map((x) => x.since || "").join(" ");
      al.textContent = alarmText(al);
      top.appendChild(al);
    }
    for (const f of raised.slice(0, 2)) {
      const s = el("span", "flag", items.betWord(f.bet) + " " + (f.ev >= 0 ? "+" : "") + (100 * f.ev).toFixed(2) + "%");
      s.dataset.bet = f.bet;
      s.dataset.state = "raised";
      s.title = "raised at coup " + f.coup + (f.raised > 1 ? ", " + f.raised + " times this shoe" : "");
      top.appendChild(s);
    }
    // at most two raised flags on the head line, the rest counted ("+2"); the tile's amber frame says it too
    if (raised.length > 2) {
      const more = el("span", "flag more", "+" + (raised.length - 2));
      more.title = raised.slice(2).map((f) => items.betWord(f.bet)).join(", ");
      top.appendChild(more);
    }
    if (t.limits) {
      const short = tilesBox.classList.contains("compact");
      const lim = el("span", "limits", items.money(t.limits.minimum, short) + "\u2013" +
        items.money(t.limits.maximum, short).slice(1));
      lim.title = "limits " + items.money(t.limits.minimum) + "\u2013" + items.money(t.limits.maximum) +
        ", side wagers " + items.money(t.limits.side_minimum) + "\u2013" + items.money(t.limits.side_maximum);
      lim.dataset.testid = "limits";
      top.appendChild(lim);
    }
    const game = el("span", "game", gameText(t.game));
    if (t.game && t.game.description) game.title = t.game.description;
    top.appendChild(game);
    top.appendChild(field("Shoe", t.shoe, "shoe"));  // on the head line when the tile is compact
    const st = el("span", "state", t.phase || t.link);
    st.dataset.testid = "link";
    top.appendChild(st);
    a.appendChild(top);
    const where = el("div", "line fields");
    where.appendChild(field("Shoe", t.shoe, "shoe"));
    where.appendChild(field("Coup", t.coup, "coup"));
    where.appendChild(field("Left", t.cards_remaining, "left"));
    if (t.dealer) where.appendChild(field("Dealer", t.dealer, "dealer"));  // the staff id on duty (dealer_in)
    const n = t.counts || {};
    const counts = el("span", "counts");
    for (const [w, letter] of [["banker", "B"], ["player", "P"], ["tie", "T"]]) {
      const c = field(letter, n[w] ?? null, "count " + w);
      c.dataset.winner = w;
      counts.appendChild(c);
    }
    where.appendChild(counts);
    a.appendChild(where);
    // The last result and its cards (when the tile has room), and the flags cleared this shoe (dimmed: a wager
    // whose edge went up and down shows once, not as a flicker).
    const info = el("div", "line info");
    const last = t.last;
    const res = el("span", "result");
    res.dataset.winner = last ? last.winner || "" : "";
    res.textContent = last ? N.resultText(last.winner, last.player_total, last.banker_total) : "no result yet";
    info.appendChild(res);
    if (last) {
      info.appendChild(hand("P", last.player));
      info.appendChild(hand("B", last.banker));
    }
    const cleared = t.advantage.filter((x) => x.state === "cleared");
    if (cleared.length) {
      const s = el("span", "cleared", "cleared: " + cleared.map((f) => items.betWord(f.bet)).join(", "));
      s.dataset.bets = cleared.map((f) => f.bet).join(" ");
      s.title = cleared.map((f) => items.betWord(f.bet) + " raised up to " +
        (100 * (Number.isFinite(f.peak) ? f.peak : f.ev)).toFixed(2) + "%, cleared at coup " + f.coup).join("; ");
      info.appendChild(s);
    }
    a.appendChild(info);
    a.appendChild(road(t.big_road));
    const m = t.money;
    const money = el("div", "line money");
    money.dataset.testid = "money";
    if (m) {
      const short = tilesBox.classList.contains("compact");
      money.appendChild(field("Handle", items.money(m.handle, short), "handle"));
      const w = field("Win", items.money(m.win, short), "win");
      w.dataset.sign = m.win < 0 ? "-" : "+";
      money.appendChild(w);
      money.appendChild(field("Hold", m.handle ? (100 * m.win / m.handle).toFixed(1) + "%" : null, "hold"));
      money.dataset.handle = String(m.handle);
      money.dataset.win = String(m.win);
      money.title = "shift " + m.shift + ": handle " + items.money(m.handle) + ", win " + items.money(m.win) +
        ", commission collected " + items.money(m.commission_collected);
    } else money.appendChild(el("span", "k", "no wagers this shift"));
    a.appendChild(money);
    return a;
  }

  // The big road of the whole shoe: rings in the winner's colour, a tie a green slash on the cell before it
  // (its count written from the second tie), the newest outlined. The cells are as big as the tile allows; when
  // a legible cell cannot hold every column the road scrolls inside itself with the newest in view.
  function road(cells) {
    const box = el("div", "mini");
    const inner = el("div", "grid");
    let cols = 0, newest = null;
    for (const [col, row, winner, ties, playerPair, bankerPair] of cells) {
      const c = el("span", "c");
      c.style.left = "calc(var(--cell) * " + col + ")";
      c.style.top = "calc(var(--cell) * " + row + ")";
      c.dataset.winner = winner;
      c.dataset.ties = String(ties);
      if (ties) c.appendChild(el("i", "tie"));
      if (ties > 1) c.appendChild(el("b", "n", ties));
      if (playerPair) c.appendChild(el("i", "pair player"));  // the pairs of its win and its ties
      if (bankerPair) c.appendChild(el("i", "pair banker"));
      inner.appendChild(c);
      cols = Math.max(cols, col + 1);
      newest = c;
    }
    if (newest) newest.classList.add("newest");
    inner.style.width = "calc(var(--cell) * " + cols + ")";
    box.dataset.columns = String(cols);
    box.appendChild(inner);
    return box;
  }
  function keepNewest(tile) {
    const m = tile.querySelector(".mini");
    if (m) m.scrollLeft = m.scrollWidth;
  }

  // A tile's open alarms in one line, each with how long it has stood ("misdraw 2m · foreign card 10s").
  function alarmText(node) {
    const since = node.dataset.since.split(" ");
    return node.dataset.names.split(" ").map((n, i) => n.replace(/_/g, " ") + (since[i] ? " " + age(Number(since[i])) : ""))
      .join(" \u00b7 ");
  }
  function ages() {
    for (const s of document.querySelectorAll(".tile .alarms")) {
      const text = alarmText(s);
      if (s.textContent !== text) s.textContent = text;
    }
  }

  // As many tiles as there are tables, as large as the room allows: choose the columns that give the biggest
  // big-road cell (a shoe is up to ~50 columns; under MIN_CELL the road scrolls, newest in view). On a screen
  // under 1100 px wide the page scrolls down instead and each tile is as tall as its content needs.
  const MIN_CELL = 9, SHOE_COLUMNS = 48;
  // The floor's money this shift in the header: the tiles of the newest shift any tile is in, summed (each tile
  // holds its table's figures, as `shoe-floor report` gives them); hidden while no tile has money.
  function shiftTotal(tables) {
    const node = $("shift-total");
    const money = tables.map((t) => t.money).filter((m) => m && isFinite(Date.parse(m.start)));
    const start = money.reduce((latest, m) => (m.start > latest ? m.start : latest), "");
    const these = money.filter((m) => m.start === start);
    node.hidden = these.length === 0;
    if (node.hidden) return;
    const handle = these.reduce((sum, m) => sum + m.handle, 0);
    const win = these.reduce((sum, m) => sum + m.win, 0);
    node.replaceChildren(el("span", "k long", "Floor, shift " + these[0].shift + ":"), el("span", "k short", "Floor:"),
      field("Handle", items.money(handle), "floor-handle"),
      field("Win", items.money(win), "floor-win"),
      field("Hold", handle ? (100 * win / handle).toFixed(1) + "%" : "\u2013", "floor-hold"));
    node.dataset.handle = String(handle);
    node.dataset.win = String(win);
    node.dataset.tables = String(these.length);
    node.dataset.sign = win < 0 ? "-" : win > 0 ? "+" : "";
  }

  // A tile's text: 3 lines when compact (name and state, shoe/coup/cards left and B/P/T, the shift's money),
  // 4 when there is room (the last result with its cards); the road takes the rest.
  function textHeight(font, lines) { return lines * (Math.ceil(font * 1.2) + 1) + 8; }
  function sizes(w, h) {
    const top = Math.max(11, Math.min(18, Math.floor(Math.min(h / 8, w / 21))));
    const want = Math.min(14, Math.max(MIN_CELL, (w - 12) / SHOE_COLUMNS));
    // the fourth line (the last result and its cards) when a font not under 12 px leaves the road its cells
    let font = top, lines = 3;
    for (let f = top; f >= Math.min(top, 12); f--) {
      if ((h - textHeight(f, 4)) / 6 >= want) { font = f; lines = 4; break; }
    }
    const cell = Math.floor(Math.min((h - textHeight(font, lines)) / 6, Math.max((w - 12) / SHOE_COLUMNS, MIN_CELL), 40));
    return { font: font, cell: cell, lines: lines };
  }
  function layout(n) {
    const count = Math.max(1, n);
    const W = tilesBox.clientWidth - 8;
    let best = null;
    if (window.innerWidth <= 1100) {
      const cols = Math.max(1, Math.floor(W / 520));
      const w = (W - 4 * (cols - 1)) / cols;
      const font = 12, cell = Math.max(MIN_CELL, Math.min(18, Math.floor((w - 12) / SHOE_COLUMNS)));
      best = { cols: cols, h: textHeight(font, 4) + 6 * cell + 2, font: font, cell: cell, lines: 4 };
    } else {
      const H = tilesBox.clientHeight - 8;
      for (let cols = 1; cols <= count; cols++) {
        const rows = Math.ceil(count / cols);
        const w = (W - 4 * (cols - 1)) / cols, h = Math.floor((H - 4 * (rows - 1)) / rows);
        const s = sizes(w, h);
        // the biggest legible road cell first, then the bigger text, then the roomier tile
        const score = Math.min(s.cell, 40) * 1e6 + s.font * 1e3 + Math.min(w, 2 * h) / 10;
        if (!best || score > best.score) best = { cols: cols, h: h, font: s.font, cell: s.cell, lines: s.lines, score: score };
      }
    }
    tilesBox.style.setProperty("--cols", String(best.cols));
    tilesBox.style.setProperty("--row-h", best.h + "px");
    tilesBox.style.setProperty("--tile-font", best.font + "px");
    tilesBox.style.setProperty("--cell", Math.max(4, best.cell) + "px");
    tilesBox.classList.toggle("compact", best.lines < 4);
    stats.cell = best.cell;
  }

  function renderTiles(list) {
    const now = Date.now();
    const seen = new Set();
    let skipped = 0;
    list.forEach((t, i) => {
      if (seen.has(t.table)) { skipped += 1; return; }
      seen.add(t.table);
      const key = JSON.stringify(t);
      let entry = tiles.get(t.table);
      if (entry && entry.key === key) return;
      let node;
      try { node = build(t); } catch (e) { skipped += 1; return; }
      if (entry) entry.el.replaceWith(node);
      else tilesBox.insertBefore(node, tilesBox.children[i] || null);
      keepNewest(node);
      tiles.set(t.table, { el: node, key: key, updated: t.updated });
      // A new state (not a record or an alert on the same state): how long it took from the table to here.
      if (entry && t.updated && t.updated !== entry.updated) stats.tileLatencies.push(now - t.updated);
    });
    for (const [name, entry] of tiles) if (!seen.has(name)) { entry.el.remove(); tiles.delete(name); }
    if (stats.tileLatencies.length > 5000) stats.tileLatencies.splice(0, 1000);
    return skipped;
  }

  // The feed's filter (on the page alone): by table and by kind, each a list of those in the feed now (a table
  // or kind chosen stays chosen while the feed has none of it, so a choice never changes by itself).
  function options(select, values, word) {
    const chosen = select.value;
    const all = [...new Set(values.concat(chosen ? [chosen] : []))].sort((a, b) => word(a).localeCompare(word(b)));
    const first = select.options[0];
    select.replaceChildren(first, ...all.map((v) => { const o = el("option", null, word(v)); o.value = v; return o; }));
    select.value = chosen;
  }
  function filterFeed() {
    const box = $("feed");
    const table = $("feed-table").value, kind = $("feed-kind").value, ack = $("feed-ack").value;
    let shown = 0, all = 0, open = 0;
    for (const li of box.children) {
      const acked = li.dataset.acked === "1";
      const show = (!table || li.dataset.table === table) && (!kind || li.dataset.kind === kind) &&
        (!ack || (ack === "acked") === acked);
      li.hidden = !show;
      shown += show ? 1 : 0;
      open += acked ? 0 : 1;
      all += 1;
    }
    box.dataset.shown = String(shown);
    $("feed-count").textContent = !all ? "" : (shown === all ? "(" + all + ")" : "(" + shown + " of " + all + ")") +
      (open && open < all ? " \u00b7 " + open + " unacknowledged" : "");
  }
  $("feed-table").addEventListener("change", filterFeed);
  $("feed-kind").addEventListener("change", filterFeed);
  $("feed-ack").addEventListener("change", filterFeed);

  function renderFeed(feed) {
    const box = $("feed");
    // Redrawn when an alert comes, goes or is acknowledged, or the user's rights became known.
    const key = (canAck() ? "m" : "r") + feed.map((f) => (f.id ?? "") + "|" + f.table + "|" + f.kind + "|" +
      (f.acked_by ?? "")).join(",");
    if (box.dataset.key === key) return Number(box.dataset.skipped || 0);
    box.dataset.key = key;
    let skipped = 0;
    const drawn = [];
    const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.parentElement.dataset.id));
    for (const f of feed) {
      try {
        const li = alertItem(f);
        li.dataset.id = f.id === null || f.id === undefined ? "" : String(f.id);
        if (li.dataset.id && open.has(li.dataset.id) && li.querySelector("details")) li.querySelector("details").open = true;
        drawn.push(li);
      } catch (e) { skipped += 1; }
    }
    box.replaceChildren(...drawn);
    box.dataset.skipped = String(skipped);
    $("feed-filter").hidden = !drawn.length && !$("feed-table").value && !$("feed-kind").value && !$("feed-ack").value;
    options($("feed-table"), drawn.map((li) => li.dataset.table), (t) => t);
    options($("feed-kind"), drawn.map((li) => li.dataset.kind), items.kindWord);
    filterFeed();
    return skipped;
  }

  // An alert in words first: its kind as a word, its table and local time, what happened; the record behind
  // it only on demand (a details element). One that raises something (an advantage) and one that clears it are
  // told apart by a word ("raised", "cleared") and a style (amber and bold; green and dimmed).
  const STATUS_WORDS = { raised: "\u25b2 raised", cleared: "\u2713 cleared" };
  function alertItem(f) {
    const li = el("li");
    li.dataset.kind = f.kind;
    li.dataset.table = f.table;
    const status = items.alertStatus(f.kind);
    li.dataset.status = status;
    const head = el("div", "head");
    head.appendChild(el("span", "kind", items.kindWord(f.kind)));
    if (status) head.appendChild(el("span", "status", STATUS_WORDS[status]));
    head.appendChild(el("span", "table", f.table));
    // today's alerts by their time alone (the date in the tooltip), older ones with their date
    const local = f.at ? N.localTime(f.at) : "";
    const when = el("span", "when", local.startsWith(N.localTime(new Date().toISOString()).slice(0, 11)) ? local.slice(11) : local);
    if (f.at) when.title = local + " (" + f.at + ")";
    head.appendChild(when);
    li.appendChild(head);
    li.appendChild(el("div", "detail", f.detail || ""));
    li.dataset.acked = f.acked_by ? "1" : "0";
    if (f.acked_by) li.appendChild(ackedLine(f.acked_by, f.acked_at));
    else if (canAck() && Number.isInteger(f.id)) li.appendChild(ackButton(li, f.id));
    if (f.record || f.seq !== null && f.seq !== undefined) {
      const d = el("details", "record");
      const r = f.record;
      d.appendChild(el("summary", null, "record" + (f.seq !== null && f.seq !== undefined ? " #" + f.seq : "") +
        (r ? " (" + r.kind + ")" : "")));
      if (r) d.appendChild(el("pre", null, JSON.stringify(r.body !== undefined ? r.body : r, null, 1)));
      li.appendChild(d);
    }
    return li;
  }

  // "✓ Acknowledged by pam 14:02" (today's by their time alone, older ones with their date; the full time in the
  // tooltip).
  function ackedLine(by, at) {
    const local = at ? N.localTime(at) : "";
    const today = local.startsWith(N.localTime(new Date().toISOString()).slice(0, 11));
    const line = el("div", "acked", "\u2713 Acknowledged by " + by + (local ? " " + (today ? local.slice(11) : local) : ""));
    line.dataset.testid = "acked";
    if (at) line.title = local + " (" + at + ")";
    return line;
  }
  function ackButton(li, id) {
    const row = el("div", "ack-row");
    const button = el("button", "ack", "Acknowledge");
    button.type = "button";
    button.dataset.testid = "ack";
    const said = el("span", "ack-error");
    row.append(button, said);
    button.addEventListener("click", () => {
      button.disabled = true;
      button.textContent = "Acknowledging\u2026";
      said.textContent = "";
      fetch("/api/feed/ack", { method: "POST", cache: "no-store", headers: { "Content-Type": "application/json",
        "X-CSRF-Token": session.csrf || "" }, body: JSON.stringify({ id: id }) })
        .then((r) => r.json().catch(() => ({})).then((body) => ({ r: r, body: body })))
        .then(({ r, body }) => {
          if (r.status === 401) { items.signedOut(); return; }
          if (!r.ok) throw new Error(typeof body.error === "string" ? body.error.slice(0, 200) : "refused (" + r.status + ")");
          // Shown at once; the stream brings the same to this page and every other open one.
          li.dataset.acked = "1";
          row.replaceWith(ackedLine(String(body.acked_by), typeof body.acked_at === "string" ? body.acked_at : ""));
          filterFeed();
        })
        .catch((e) => {
          button.disabled = false;
          button.textContent = "Acknowledge";
          said.textContent = String(e.message || e);
        });
    });
    return row;
  }

  // Who is signed in: a viewer has no feed (the server sends it none); a signed-in user has Sign out.
  function signedIn(s) {
    session = { user: items.isObj(s) && typeof s.user === "string" ? s.user : null,
                role: items.isObj(s) && typeof s.role === "string" ? s.role : null,
                csrf: items.isObj(s) && typeof s.csrf === "string" ? s.csrf : null,
                actions: items.isObj(s) && Array.isArray(s.actions) ? s.actions.filter((a) => typeof a === "string") : [] };
    document.body.dataset.role = session.role || "";
    $("feed-panel").hidden = session.role === "viewer";
    $("who").textContent = session.user ? session.user + " \u00b7 " + (ROLE_WORDS[session.role] || session.role) : "";
    $("who").hidden = !session.user;
    $("signout").hidden = !session.user || !session.csrf;
    if (latest) {
      $("feed").dataset.key = "";
      renderFeed(latest.feed);
      layout(latest.tables.length);  // a viewer's tiles have the feed's width too
      for (const t of tilesBox.children) keepNewest(t);
    }
  }
  $("signout").addEventListener("click", () => {
    $("signout").disabled = true;
    fetch("/signout", { method: "POST", cache: "no-store", redirect: "manual",
      body: new URLSearchParams({ csrf: session.csrf || "" }) })
      .catch(() => {})
      .then(() => location.assign("/signin"));
  });
  fetch("/api/session", { cache: "no-store" })
    .then((r) => { if (r.status === 401) { items.signedOut(); return null; } return r.ok ? r.json() : null; })
    .then((s) => { if (s) signedIn(s); })
    .catch(() => {});

  function render(snapshot) {
    const tables = items.keep(snapshot.tables, items.checks.tile);
    const feed = items.keep(snapshot.feed, items.checks.alert);
    const s = { version: snapshot.version, ignored: snapshot.ignored, refused: snapshot.refused,
                tables: tables.good, feed: feed.good };
    latest = s;
    layout(s.tables.length);
    let skipped = tables.skipped + feed.skipped;
    skipped += renderTiles(s.tables);
    skipped += renderFeed(s.feed);
    ages();
    const online = s.tables.filter((t) => t.link === "online").length;
    $("summary").textContent = s.tables.length + " tables, " + online + " online" +
      (Number.isInteger(s.ignored) && s.ignored ? ", " + s.ignored + " ignored (too many)" : "") +
      (Number.isInteger(s.refused) && s.refused ? ", " + s.refused + (s.refused === 1 ? " message" : " messages") + " refused" : "");
    shiftTotal(s.tables);
    // The server's own word on its broker: "cannot reach the broker ...; retrying" until it does.
    const broker = typeof snapshot.broker === "string" ? snapshot.broker.slice(0, 300) : "";
    $("broker").textContent = broker;
    $("broker").hidden = !broker;
    items.note($("skipped"), skipped);
    stats.skipped = skipped;
    document.body.dataset.version = String(s.version);
    stats.version = s.version;
    stats.renders += 1;
    const t0 = Date.now();
    requestAnimationFrame(() => stats.paints.push(Date.now() - t0));
    if (stats.paints.length > 5000) stats.paints.splice(0, 1000);
  }

  function connect() {
    const source = new EventSource("/events");
    source.onmessage = (ev) => {
      $("connection").hidden = true;
      let s;
      try { s = JSON.parse(ev.data); } catch (e) { items.note($("skipped"), ++stats.skipped); return; }
      if (!items.isObj(s)) { items.note($("skipped"), ++stats.skipped); return; }
      if (s.version === stats.version && stats.renders) return;
      render(s);
    };
    source.onerror = () => { $("connection").hidden = false; items.signedOut(); };
  }

  window.addEventListener("resize", () => {
    if (!latest) return;
    layout(latest.tables.length);
    for (const t of tilesBox.children) keepNewest(t);
  });
  setInterval(ages, 1000);
  connect();
})();
