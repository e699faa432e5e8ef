/* The pit page: one tile per table and the floor's alert feed, redrawn from each snapshot on /events.
 * Plain JS, text through textContent only. A tile is rebuilt only when its own data changed. Every tile and
 * alert is checked first (items.js): one that is not of its shape is skipped and counted in the header
 * ("n items skipped"), and the rest are drawn. */
"use strict";

(function () {
  const WORD = { banker: "Banker", player: "Player", tie: "Tie" };
  const items = window.pitItems;
  const stats = { version: 0, renders: 0, skipped: 0, tileLatencies: [], paints: [] };
  window.pit = stats;
  const $ = (id) => document.querySelector('[data-testid="' + id + '"]');
  const tilesBox = $("tiles");
  const tiles = new Map();  // table -> {el, key, data}
  let latest = null;

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
  function cardText(tokens) { return (tokens || []).map((t) => t.replace("T", "10")).join(" "); }

  function build(t) {
    const a = el("a", "tile");
    a.href = "/table/" + encodeURIComponent(t.table);
    a.dataset.table = t.table;
    a.dataset.link = t.link;
    a.dataset.alarms = t.alarms.length ? "1" : "0";
    a.dataset.advantage = t.advantage.length ? "1" : "0";
    a.dataset.shoe = t.shoe === null || t.shoe === undefined ? "" : String(t.shoe);
    a.dataset.coup = t.coup === null || t.coup === undefined ? "" : String(t.coup);
    const top = el("div", "line");
    top.appendChild(el("span", "name", t.table));
    const st = el("span", "state", t.link);
    st.dataset.testid = "link";
    top.appendChild(st);
    a.appendChild(top);
    const where = el("div", "line where");
    where.appendChild(el("span", null, "Shoe " + (t.shoe ?? "-")));
    where.appendChild(el("span", null, "Coup " + (t.coup ?? "-")));
    if (t.cards_remaining !== null && t.cards_remaining !== undefined) where.appendChild(el("span", "dim", t.cards_remaining + " left"));
    a.appendChild(where);
    const res = el("div", "line result");
    const last = t.last;
    res.dataset.winner = last ? last.winner || "" : "";
    res.textContent = last
      ? (WORD[last.winner] || "-") + " " + (last.player_total ?? "") + "-" + (last.banker_total ?? "") +
        "  P " + cardText(last.player) + " / B " + cardText(last.banker)
      : "no result yet";
    a.appendChild(res);
    const mini = el("div", "mini");
    for (const [col, row, winner, ties] of t.big_road) {
      const c = el("span", "c");
      c.style.left = "calc(var(--cell) * " + col + ")";
      c.style.top = "calc(var(--cell) * " + row + ")";
      c.dataset.winner = winner;
      c.dataset.ties = String(ties);
      mini.appendChild(c);
    }
    a.appendChild(mini);
    if (t.alarms.length) {
      const al = el("div", "line alarms");
      for (const x of t.alarms) {
        const s = el("span", "alarm", x.name.replace(/_/g, " "));
        s.dataset.since = x.since || "";
        s.dataset.name = x.name;
        al.appendChild(s);
      }
      a.appendChild(al);
    }
    if (t.advantage.length) {
      const fl = el("div", "line flags");
      for (const f of t.advantage) {
        const s = el("span", "flag", f.bet + " " + (f.ev >= 0 ? "+" : "") + (100 * f.ev).toFixed(2) + "%");
        s.dataset.bet = f.bet;
        fl.appendChild(s);
      }
      a.appendChild(fl);
    }
    return a;
  }

  function ages() {
    for (const s of document.querySelectorAll(".tile .alarm")) {
      const base = s.dataset.name.replace(/_/g, " ");
      const text = s.dataset.since ? base + " " + age(Number(s.dataset.since)) : base;
      if (s.textContent !== text) s.textContent = text;
    }
  }

  // As many tiles as there are tables, as large as the room allows: choose the columns that give the
  // biggest tile of a pit-tile's shape. Under 1100 px wide the CSS takes over (one scrolling column).
  function layout(n) {
    if (window.innerWidth <= 1100) {
      tilesBox.style.removeProperty("--cols");
      tilesBox.style.removeProperty("--row-h");
      return;
    }
    const W = tilesBox.clientWidth - 8, H = tilesBox.clientHeight - 8;
    let best = 1, score = 0;
    for (let cols = 1; cols <= Math.max(1, n); cols++) {
      const rows = Math.ceil(Math.max(1, n) / cols);
      const w = (W - 4 * (cols - 1)) / cols, h = (H - 4 * (rows - 1)) / rows;
      const s = Math.min(w / 1.6, h);  // tiles about 1.6 times as wide as high
      if (s > score) { score = s; best = cols; }
    }
    const rows = Math.ceil(Math.max(1, n) / best);
    const h = Math.floor((H - 4 * (rows - 1)) / rows);
    tilesBox.style.setProperty("--cols", String(best));
    tilesBox.style.setProperty("--row-h", h + "px");
    tilesBox.style.setProperty("--tile-font", Math.max(11, Math.min(20, Math.floor(h / 9))) + "px");
    tilesBox.style.setProperty("--cell", Math.max(4, Math.min(14, Math.floor(h / 16))) + "px");
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
      tiles.set(t.table, { el: node, key: key, updated: t.updated });
      // A new state (not a record or an alert on the same state): how long it took from the table to here.
      if (entry && t.updated && t.updated !== entry.updated) stats.tileLatencies.push(now - t.updated);
    });
    for (const [name, entry] of tiles) if (!seen.has(name)) { entry.el.remove(); tiles.delete(name); }
    if (stats.tileLatencies.length > 5000) stats.tileLatencies.splice(0, 1000);
    return skipped;
  }

  function renderFeed(feed) {
    const box = $("feed");
    const key = feed.length ? (feed[0].id ?? "") + "|" + feed[0].table + "|" + feed[0].kind + "|" + feed.length : "";
    if (box.dataset.key === key) return Number(box.dataset.skipped || 0);
    box.dataset.key = key;
    $("feed-count").textContent = feed.length ? "(" + feed.length + ")" : "";
    let skipped = 0;
    const drawn = [];
    for (const f of feed) {
      try { drawn.push(alertItem(f)); } catch (e) { skipped += 1; }
    }
    box.replaceChildren(...drawn);
    box.dataset.skipped = String(skipped);
    return skipped;
  }

  function alertItem(f) {
    const li = el("li");
    li.dataset.kind = f.kind;
    li.dataset.table = f.table;
    const head = el("div", "head");
    head.appendChild(el("span", "kind", f.kind.replace(/_/g, " ")));
    head.appendChild(el("span", "table", f.table + (f.seq !== null && f.seq !== undefined ? " #" + f.seq : "")));
    head.appendChild(el("span", "when", f.at ? f.at.slice(11, 19) : ""));
    li.appendChild(head);
    li.appendChild(el("div", "detail", f.detail));
    if (f.record) {
      const r = f.record;
      li.appendChild(el("div", "record", r.kind + (r.seq ? " #" + r.seq : "") + " " + JSON.stringify(r.body)));
    }
    return li;
  }

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
    source.onerror = () => { $("connection").hidden = false; };
  }

  window.addEventListener("resize", () => { if (latest) layout(latest.tables.length); });
  setInterval(ages, 1000);
  connect();
})();
