// The dealer screen's script: takes each snapshot from /events (the board's words and amounts, already
// written) and draws the seats; then sizes the grid and the type so that every seat fits its cell.
"use strict";
(() => {
  const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
  const NOTICE = {
    no_reader: "NO BET-SPOT READER",
    offline: "TABLE OFFLINE",
    starting: "STARTING",
  };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function seatCard(seat) {
    const card = el("section", "seat" + (seat.urgent ? ` urgent-${seat.urgent}` : ""));
    card.dataset.testid = `seat-${seat.seat}`;
    card.dataset.seat = String(seat.seat);
    const head = el("div", "seat-head");
    head.append(el("span", "seat-no", `SEAT ${seat.seat}`));
    if (seat.box) {
      const box = el("span", "box", `BOX ${seat.box}`);
      box.dataset.testid = `box-${seat.seat}`;
      head.append(box);
    }
    card.append(head);
    for (const s of seat.spots) {
      const row = el("div", `spot ${s.tone}`);
      row.dataset.testid = `spot-${seat.seat}-${s.spot}`;
      row.dataset.state = s.state;
      row.append(el("span", "label", s.label), el("span", "amount", s.amount));
      if (s.action) {
        const action = el("span", "action", s.action);
        action.dataset.testid = `action-${seat.seat}-${s.spot}`;
        row.append(action);
      }
      card.append(row);
      if (s.text) {
        const words = el("div", `words ${s.tone === "alarm" ? "alarm" : "warn"}`, s.text);
        words.dataset.testid = `text-${seat.seat}-${s.spot}`;
        card.append(words);
      }
    }
    for (const text of seat.alarms) {
      const a = el("div", "words alarm", text);
      a.dataset.testid = `alarm-${seat.seat}`;
      card.append(a);
    }
    return card;
  }

  function fits(seats) {
    for (const card of seats.children) {
      if (card.scrollHeight > card.clientHeight + 1 || card.scrollWidth > card.clientWidth + 1) return false;
    }
    return true;
  }

  // Columns and type scale: the largest scale at which every seat fits its cell, over 1-5 columns (a binary
  // search each). Searched again only when the shape changes (seats, rows per seat) or the last fit no longer
  // fits: a change of an amount costs one layout, not thirty.
  let fitted = null;  // {shape, cols, scale}
  function search(seats, n) {
    const root = document.body;
    const wide = window.innerWidth >= window.innerHeight;
    let best = null;
    for (let cols = Math.min(n, wide ? 3 : 2); cols <= Math.max(n, 1); cols++) {
      seats.style.setProperty("--cols", String(cols));
      let lo = 0.3, hi = 2.2;
      for (let i = 0; i < 12; i++) {
        const mid = (lo + hi) / 2;
        root.style.setProperty("--scale", mid.toFixed(3));
        if (fits(seats)) lo = mid; else hi = mid;
      }
      if (best === null || lo > best.scale + 0.02) best = { cols, scale: lo };
      if (cols >= 5) break;
    }
    return best;
  }

  function layout(seats, snap) {
    const shape = `${window.innerWidth}x${window.innerHeight}:` + snap.seats.map(
      (s) => `${s.spots.length + s.alarms.length + s.spots.filter((p) => p.text).length}`).join(",");
    const root = document.body;
    if (fitted && fitted.shape === shape) {
      seats.style.setProperty("--cols", String(fitted.cols));
      root.style.setProperty("--scale", fitted.scale.toFixed(3));
      if (fits(seats)) return;
    }
    window.dealer.searches += 1;
    const best = search(seats, snap.seats.length);
    seats.style.setProperty("--cols", String(best.cols));
    root.style.setProperty("--scale", best.scale.toFixed(3));
    fitted = { shape, cols: best.cols, scale: best.scale };
  }

  // For tools and benchmarks: draws done, and the time the last one took (ms).
  window.dealer = { draws: 0, lastDrawMs: 0, searches: 0 };

  let last = null;
  function draw(snap) {
    const t0 = performance.now();
    last = snap;
    document.body.dataset.state = snap.state;
    document.body.dataset.phase = snap.phase || "";
    $("table-name").textContent = snap.table || "";
    $("phase").textContent = snap.phase_text || "\u00a0";
    $("reader-down").hidden = snap.state !== "money" || snap.reader_up;
    $("connection").hidden = snap.state !== "offline";
    const seats = $("seats");
    seats.replaceChildren(...snap.seats.map(seatCard));
    const notice = $("notice");
    const text = snap.state === "money" ? (snap.seats.length ? "" : "NO WAGERS") : NOTICE[snap.state] || "";
    notice.textContent = text;
    notice.hidden = !text || (snap.state === "offline" && snap.seats.length > 0);
    if (snap.seats.length) layout(seats, snap);
    document.body.dataset.version = String(snap.version);
    window.dealer.draws += 1;
    window.dealer.lastDrawMs = performance.now() - t0;
  }

  window.addEventListener("resize", () => { fitted = null; if (last) draw(last); });
  const source = new EventSource("/events");
  source.onmessage = (ev) => {
    let snap;
    try { snap = JSON.parse(ev.data); } catch (e) { return; }
    if (snap && Array.isArray(snap.seats)) draw(snap);
  };
  source.onerror = () => { $("connection").hidden = false; };
})();
