/* The one notation people read (docs/notation.md), for every page: the scoreboard, the dealer screen, the pit
 * and its table page. It says what controller/game/notation.py says; tests/game/test_notation.py runs both on
 * the same cases. The wire keeps its tokens ("TS"); this is only what a person reads. Plain JS, no framework. */
"use strict";

(function () {
  const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const LETTERS = { player: "P", banker: "B", tie: "T" };
  const WORDS = { player: "Player", banker: "Banker", tie: "Tie" };
  const WORDS_ZH = { player: "\u9592", banker: "\u838a", tie: "\u548c" };
  /** Each wager in words, by its name (controller/game/notation.py WAGER_WORDS; tests/browser/test_notation_js.py). */
  const WAGER_WORDS = { banker: "Banker", player: "Player", tie: "Tie", player_pair: "Player Pair",
    banker_pair: "Banker Pair", dragon_bonus_player: "Dragon Bonus Player", dragon_bonus_banker: "Dragon Bonus Banker",
    dragon_7: "Dragon 7", panda_8: "Panda 8" };

  /** A wager's name in words ("dragon_7" -> "Dragon 7"); a name it does not know, with spaces for "_". */
  function wagerWord(bet) { return WAGER_WORDS[bet] || String(bet).replace(/_/g, " "); }
  /** Integer cents as the casino writes money (controller/game/notation.py money_text): 2500 -> "$25",
   * 500000 -> "$5,000", 1250 -> "$12.50", -5000 -> "-$50"; not a number -> "–". */
  function moneyText(cents) {
    if (!Number.isFinite(cents)) return "\u2013";
    const c = Math.round(Math.abs(cents));
    const whole = Math.floor(c / 100), part = c % 100;
    const text = String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return (cents < 0 ? "-$" : "$") + text + (part ? "." + String(part).padStart(2, "0") : "");
  }

  /** "TS" -> "10♠" (a token that is no card comes back as it was). */
  function cardText(token) {
    const t = String(token || "").toUpperCase();
    const rank = t.slice(0, -1), suit = t.slice(-1);
    if (!(suit in SUITS) || !/^(A|[2-9]|T|10|J|Q|K)$/.test(rank)) return String(token || "");
    return (rank === "T" ? "10" : rank) + SUITS[suit];
  }
  /** Is the card red (hearts, diamonds)? */
  function cardRed(token) { const s = String(token || "").slice(-1).toUpperCase(); return s === "H" || s === "D"; }
  function handText(tokens) { return (tokens || []).map(cardText).join(" "); }
  function total(n) { return n === null || n === undefined ? "\u2013" : String(n); }
  /** "P 5 – B 7": Player first. */
  function scoreText(player, banker) { return "P " + total(player) + " \u2013 B " + total(banker); }
  /** "Banker wins · P 5 – B 7", "Tie · P 6 – B 6". */
  function resultText(winner, player, banker) {
    const score = scoreText(player, banker);
    if (!winner) return score;
    if (winner === "tie") return "Tie \u00b7 " + score;
    return WORDS[winner] + " wins \u00b7 " + score;
  }
  function coupText(c) {
    return [resultText(c.winner, c.player_total, c.banker_total), "P " + handText(c.player), "B " + handText(c.banker)]
      .join(" \u00b7 ");
  }
  /** An ISO time (UTC, as the records carry it) as local time with its zone: "2026-12-01 18:04:05 CET". */
  function localTime(iso) {
    const d = new Date(iso);
    if (isNaN(d.getTime())) return String(iso || "");
    const p = (n) => String(n).padStart(2, "0");
    const zone = (new Intl.DateTimeFormat("en-GB", { timeZoneName: "short" }).formatToParts(d)
      .find((x) => x.type === "timeZoneName") || { value: "" }).value;
    return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + " " + p(d.getHours()) + ":" +
      p(d.getMinutes()) + ":" + p(d.getSeconds()) + (zone ? " " + zone : "");
  }
  window.notation = { SUITS, LETTERS, WORDS, WORDS_ZH, WAGER_WORDS, wagerWord, moneyText, cardText, cardRed, handText, scoreText, resultText, coupText, localTime };
})();
