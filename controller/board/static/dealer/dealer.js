// The dealer screen's script: takes each snapshot from /events (the board's words and amounts, already
// written) and draws the seats; then sizes the type so that every seat fits its cell. Each seat of the table has
// its box in a fixed place (the columns depend on the number of seats and the screen only): a seat that empties
// keeps its box, empty, and no other box moves.
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
    const card = el("section", "seat" + (seat.urgent ? ` urgent-${seat.urgent}` : "") + (seat.empty ? " empty" : ""));
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
      if (s.alarm) row.classList.add("flagged");  // a mispay: the row stays what to do now, the alarm with it
      if (s.text || s.alarm) {
        const words = el("div", `words ${s.tone === "alarm" || s.alarm ? "alarm" : "warn"}`);
        if (s.alarm) {
          const flag = el("span", "flag", s.alarm);
          flag.dataset.testid = `flag-${seat.seat}-${s.spot}`;
          words.append(flag);
        }
        const said = el("span", "said", s.text);
        said.dataset.testid = `text-${seat.seat}-${s.spot}`;
        words.append(said);
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

  // The columns: fixed by the number of seats and the screen alone (never by what the seats hold, so that no box
  // moves when a seat fills or empties): those whose cells come closest to a box twice as wide as tall.
  function columns(n, w, h) {
    let best = 1, off = Infinity;
    for (let cols = 1; cols <= Math.max(n, 1); cols++) {
      const rows = Math.ceil(n / cols);
      const d = Math.abs(Math.log((w / cols) / (h / rows) / 2));
      if (d < off - 1e-9) { off = d; best = cols; }
    }
    return best;
  }

  // The type scale: the largest at which every seat fits its cell (a binary search). Searched again only when the
  // shape changes (seats, rows per seat) or the last fit no longer fits: a change of an amount costs one layout.
  let fitted = null;  // {shape, cols, scale}
  function search(seats) {
    const root = document.body;
    let lo = 0.3, hi = 2.2;
    for (let i = 0; i < 12; i++) {
      const mid = (lo + hi) / 2;
      root.style.setProperty("--scale", mid.toFixed(3));
      if (fits(seats)) lo = mid; else hi = mid;
    }
    return lo;
  }

  function layout(seats, snap) {
    const shape = `${window.innerWidth}x${window.innerHeight}:` + snap.seats.map(
      (s) => `${s.spots.length + s.alarms.length + s.spots.filter((p) => p.text || p.alarm).length}`).join(",");
    const root = document.body;
    const cols = columns(snap.seats.length, seats.clientWidth, seats.clientHeight);
    seats.style.setProperty("--cols", String(cols));
    if (fitted && fitted.shape === shape) {
      root.style.setProperty("--scale", fitted.scale.toFixed(3));
      if (fits(seats)) return;
    }
    window.dealer.searches += 1;
    const scale = search(seats);
    root.style.setProperty("--scale", scale.toFixed(3));
    fitted = { shape, cols, scale };
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
    $("coup").textContent = snap.coup_text || "";
    $("result").textContent = snap.result_text || "";
    $("result").dataset.winner = snap.winner || "";
    $("reader-down").hidden = snap.state !== "money" || snap.reader_up;
    $("connection").hidden = snap.state !== "offline";
    const seats = $("seats");
    seats.replaceChildren(...snap.seats.map(seatCard));
    const notice = $("notice");
    const text = snap.state === "money" ? (snap.seats.length ? "" : "NO WAGERS") : NOTICE[snap.state] || "";
    notice.textContent = text;
    notice.hidden = !text || (snap.state === "offline" && snap.seats.length > 0);
    if (snap.seats.length) layout(seats, snap);
    drawApproval(snap.state === "money" ? snap.approval : null);
    tellRefusal(snap.state === "money" ? snap.refusal : null);
    const keyable = snap.state === "money" && Boolean(snap.keyable);
    $("open-key").hidden = !keyable;
    if (!keyable) keyBox.hidden = true;
    document.body.dataset.version = String(snap.version);
    window.dealer.draws += 1;
    window.dealer.lastDrawMs = performance.now() - t0;
  }

  // The buy-in dialog: the seat, the tender and the amount (whole dollars, at most $1,000,000), then one confirm
  // that says what will be recorded. POST /api/buy-in sends the money socket's own buy_in line; the answer (sent,
  // or why not) stays under the header. The table adds the seat's carded player.
  const MAX_DOLLARS = 1000000;
  const entry = { seat: null, tender: "cash", dollars: "" };
  const dialog = $("buy-in");
  function entryCents() { return entry.dollars ? Number(entry.dollars) * 100 : 0; }
  function drawEntry() {
    const cents = entryCents();
    $("buy-in-amount").textContent = window.notation.moneyText(cents);
    for (const b of $("buy-in-seats").children) b.classList.toggle("on", Number(b.dataset.seat) === entry.seat);
    for (const b of $("buy-in-tenders").children) b.classList.toggle("on", b.dataset.tender === entry.tender);
    const confirm = $("buy-in-confirm");
    confirm.disabled = entry.seat === null || cents <= 0;
    confirm.textContent = entry.seat === null ? "CHOOSE THE SEAT" : cents <= 0 ? "TYPE THE AMOUNT"
      : `RECORD ${window.notation.moneyText(cents)} ${entry.tender.toUpperCase()} AT SEAT ${entry.seat}`;
  }
  function openEntry() {
    const n = Math.max(1, (last && (last.seat_count || last.seats.length)) || 0);
    const seats = $("buy-in-seats");
    seats.replaceChildren();
    for (let i = 1; i <= n; i++) {
      const b = el("button", "", String(i));
      b.type = "button"; b.dataset.seat = String(i); b.dataset.testid = `buy-in-seat-${i}`;
      b.addEventListener("click", () => { entry.seat = i; drawEntry(); });
      seats.append(b);
    }
    Object.assign(entry, { seat: null, tender: "cash", dollars: "" });
    $("buy-in-problem").textContent = "";
    dialog.hidden = false;
    drawEntry();
  }
  // What the table refused of this screen's (a rating, a card keyed, a PIN it did not check): said once, when the
  // table's count of refusals moves (not the one it had when the page opened), over the approval panel if it shows.
  let refusalsSeen = null;
  function tellRefusal(r) {
    const n = r ? r.n : 0;
    if (refusalsSeen !== null && n > refusalsSeen && r) {
      if (!approvalBox.hidden) $("approval-problem").textContent = r.text;
      else say(r.text, true);
    }
    refusalsSeen = n;
  }
  let saidTimer = null;
  function say(text, refused) {
    const said = $("buy-in-said");
    said.textContent = text;
    said.classList.toggle("refused", refused);
    said.hidden = false;
    clearTimeout(saidTimer);
    saidTimer = setTimeout(() => { said.hidden = true; }, refused ? 15000 : 8000);
  }
  async function confirmEntry() {
    const line = { t: "buy_in", seat: entry.seat, cents: entryCents(), tender: entry.tender, player_ref: null };
    $("buy-in-confirm").disabled = true;
    let answer = null;
    try {
      const r = await fetch("/api/buy-in", { method: "POST", headers: { "Content-Type": "application/json" },
                                             body: JSON.stringify(line) });
      answer = await r.json();
    } catch (e) {
      answer = { error: "buy-in NOT sent: the dealer screen's server is not answering; enter it again" };
    }
    if (answer.ok) {
      dialog.hidden = true;
      say(answer.ok.toUpperCase(), false);
    } else {
      $("buy-in-problem").textContent = String(answer.error || "buy-in NOT sent").toUpperCase();
      drawEntry();
    }
  }
  $("open-buy-in").addEventListener("click", openEntry);
  $("buy-in-cancel").addEventListener("click", () => { dialog.hidden = true; });
  $("buy-in-confirm").addEventListener("click", confirmEntry);
  for (const b of $("buy-in-tenders").children) {
    b.addEventListener("click", () => { entry.tender = b.dataset.tender; drawEntry(); });
  }
  for (const b of $("buy-in-keypad").children) {
    b.addEventListener("click", () => {
      const key = b.dataset.key;
      const next = key === "back" ? entry.dollars.slice(0, -1) : (entry.dollars + key).replace(/^0+/, "");
      if (Number(next || "0") <= MAX_DOLLARS) entry.dollars = next;
      $("buy-in-problem").textContent = "";
      drawEntry();
    });
  }
  window.dealer.entry = entry;

  // The RATE dialog: the seat of an uncarded player to rate as an anonymous player of the seat. POST /api/rate sends
  // the money socket's own rate line; the table asks a supervisor (the approval panel follows), or refuses it.
  const rating = { seat: null };
  const rateBox = $("rate");
  function drawRate() {
    for (const b of $("rate-seats").children) b.classList.toggle("on", Number(b.dataset.seat) === rating.seat);
    const confirm = $("rate-confirm");
    confirm.disabled = rating.seat === null;
    confirm.textContent = rating.seat === null ? "CHOOSE THE SEAT" : `RATE SEAT ${rating.seat}: ASK A SUPERVISOR`;
  }
  function openRate() {
    const n = Math.max(1, (last && (last.seat_count || last.seats.length)) || 0);
    const seats = $("rate-seats");
    seats.replaceChildren();
    for (let i = 1; i <= n; i++) {
      const b = el("button", "", String(i));
      b.type = "button"; b.dataset.seat = String(i); b.dataset.testid = `rate-seat-${i}`;
      b.addEventListener("click", () => { rating.seat = i; drawRate(); });
      seats.append(b);
    }
    rating.seat = null;
    $("rate-problem").textContent = "";
    rateBox.hidden = false;
    drawRate();
  }
  async function confirmRate() {
    $("rate-confirm").disabled = true;
    let answer = null;
    try {
      const r = await fetch("/api/rate", { method: "POST", headers: { "Content-Type": "application/json" },
                                           body: JSON.stringify({ t: "rate", seat: rating.seat }) });
      answer = await r.json();
    } catch (e) {
      answer = { error: "rating NOT sent: the dealer screen's server is not answering; again" };
    }
    if (answer.ok) {
      rateBox.hidden = true;
      say(answer.ok.toUpperCase(), false);
    } else {
      $("rate-problem").textContent = String(answer.error || "rating NOT sent").toUpperCase();
      drawRate();
    }
  }
  $("open-rate").addEventListener("click", openRate);
  $("rate-cancel").addEventListener("click", () => { rateBox.hidden = true; });
  $("rate-confirm").addEventListener("click", confirmRate);

  // KEY CARD: offered while the coup is halted by an unreadable card the table can take keyed (snap.keyable). The
  // dealer picks the card lying face up; POST /api/key sends the money socket's own key line, and the table asks a
  // supervisor (the approval panel follows) or refuses it.
  const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
  const SUITS = [["S", "\u2660"], ["H", "\u2665"], ["D", "\u2666"], ["C", "\u2663"]];
  const keying = { rank: null, suit: null };
  const keyBox = $("key");
  function keyedText() {
    const symbol = SUITS.find((s) => s[0] === keying.suit);
    return (keying.rank === "T" ? "10" : keying.rank) + (symbol ? symbol[1] : "");
  }
  function drawKey() {
    for (const b of $("key-ranks").children) b.classList.toggle("on", b.dataset.rank === keying.rank);
    for (const b of $("key-suits").children) b.classList.toggle("on", b.dataset.suit === keying.suit);
    const confirm = $("key-confirm");
    confirm.disabled = keying.rank === null || keying.suit === null;
    confirm.textContent = confirm.disabled ? "CHOOSE THE CARD" : `KEY ${keyedText()}: ASK A SUPERVISOR`;
  }
  function choices(box, items, name, pick) {
    box.replaceChildren();
    for (const [value, label] of items) {
      const b = el("button", "", label);
      b.type = "button"; b.dataset[name] = value; b.dataset.testid = `key-${name}-${value}`;
      b.addEventListener("click", () => { keying[name] = value; pick(); });
      box.append(b);
    }
  }
  choices($("key-ranks"), RANKS.map((r) => [r, r === "T" ? "10" : r]), "rank", drawKey);
  choices($("key-suits"), SUITS, "suit", drawKey);
  function openKey() {
    Object.assign(keying, { rank: null, suit: null });
    $("key-problem").textContent = "";
    keyBox.hidden = false;
    drawKey();
  }
  async function confirmKey() {
    $("key-confirm").disabled = true;
    let answer = null;
    try {
      const r = await fetch("/api/key", { method: "POST", headers: { "Content-Type": "application/json" },
                                          body: JSON.stringify({ t: "key", card: keying.rank + keying.suit }) });
      answer = await r.json();
    } catch (e) {
      answer = { error: "card NOT sent: the dealer screen's server is not answering; again" };
    }
    if (answer.ok) {
      keyBox.hidden = true;
      say(answer.ok.toUpperCase(), false);
    } else {
      $("key-problem").textContent = String(answer.error || "card NOT sent").toUpperCase();
      drawKey();
    }
  }
  $("open-key").addEventListener("click", openKey);
  $("key-cancel").addEventListener("click", () => { keyBox.hidden = true; });
  $("key-confirm").addEventListener("click", confirmKey);

  // The supervisor's approval: while the table holds a void (or another action) for a supervisor, the snapshot
  // carries it and this panel covers the seats: CALL SUPERVISOR until the badge is read at the dealer's reader,
  // then the PIN pad. The PIN (shown as dots, never kept after it is sent) goes as the money socket's own
  // "approve" line to POST /api/approve; the table checks it, and the next snapshot says what came of it.
  const approvalBox = $("approval");
  // How the dealer takes each request back (the table's rule: asking again withdraws it).
  const APPROVAL_FOOT = {
    void: "HOLD VOID AGAIN TO WITHDRAW",
    new_shoe: "PRESS NEW SHOE AGAIN TO WITHDRAW",
    rate_uncarded: "RATE THE SEAT AGAIN TO WITHDRAW",
    key_card: "KEY ANOTHER CARD TO CHANGE IT; HOLD VOID TO VOID THE COUP INSTEAD",
  };
  const pin = { digits: "", key: "", said: "" };
  function drawPin() {
    $("approval-pin").textContent = pin.digits ? "\u25cf".repeat(pin.digits.length) : "\u00a0";
    const confirm = $("approval-confirm");
    confirm.disabled = pin.digits.length < 4;
    confirm.textContent = pin.digits.length < 4 ? "TYPE THE PIN" : "APPROVE";
  }
  function drawApproval(a) {
    approvalBox.hidden = !a;
    if (!a) { pin.digits = ""; pin.key = ""; return; }
    const key = `${a.action}:${a.shoe}:${a.coup}:${a.approver || ""}`;
    if (key !== pin.key) { pin.digits = ""; pin.key = key; $("approval-problem").textContent = ""; }
    if ((a.said || "") !== pin.said) { pin.said = a.said || ""; $("approval-problem").textContent = ""; }
    $("approval-title").textContent = a.text;
    $("approval-coup").textContent = `SHOE ${a.shoe} COUP ${a.coup}` + (a.dealer ? ` \u00b7 ASKED BY ${a.dealer}` : "");
    $("approval-step").textContent = a.approver
      ? `SUPERVISOR ${a.approver}: ENTER YOUR PIN`
      : "CALL A SUPERVISOR: BADGE AT THE DEALER'S READER";
    $("approval-said").textContent = a.said || "";
    $("approval-pin-entry").hidden = !a.approver;
    $("approval-foot").textContent = APPROVAL_FOOT[a.action] || "";
    drawPin();
  }
  async function sendPin() {
    const line = { t: "approve", pin: pin.digits };
    pin.digits = "";
    drawPin();
    $("approval-confirm").disabled = true;
    let answer = null;
    try {
      const r = await fetch("/api/approve", { method: "POST", headers: { "Content-Type": "application/json" },
                                              body: JSON.stringify(line) });
      answer = await r.json();
    } catch (e) {
      answer = { error: "PIN NOT sent: the dealer screen's server is not answering; again" };
    }
    const problem = $("approval-problem");
    problem.textContent = String(answer.ok || answer.error || "").toUpperCase();
    problem.classList.toggle("checking", Boolean(answer.ok));
  }
  $("approval-confirm").addEventListener("click", sendPin);
  for (const b of $("approval-keypad").children) {
    b.addEventListener("click", () => {
      const key = b.dataset.key;
      if (key === "back") pin.digits = pin.digits.slice(0, -1);
      else if (key === "clear") pin.digits = "";
      else if (pin.digits.length < 12) pin.digits += key;
      $("approval-problem").textContent = "";
      drawPin();
    });
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
