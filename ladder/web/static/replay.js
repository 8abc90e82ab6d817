/* Card Arena replay viewer: steps through the frames the server built for a finished match. */
"use strict";
var ArenaReplay = (function () {
  var el = Arena.el;
  var visible = Arena.visible;
  var SYMBOLS = {
    goodge: { S: "♠", D: "♦", R: "★", H: "♥", C: "♣" },
    golden10: { R: "", Y: "", B: "", G: "" },
    goof: { S: "♠", H: "♥", D: "♦", C: "♣" },
  };
  var SUIT_NAMES = {
    goodge: { S: "Spades", D: "Diamonds", R: "Stars", H: "Hearts", C: "Clubs" },
    golden10: { R: "red", Y: "yellow", B: "black", G: "green" },
    goof: { S: "Spades", H: "Hearts", D: "Diamonds", C: "Clubs" },
  };
  /* What the cards are worth, in the words of docs/rules/ (default options). */
  var POINTS = {
    goodge: ["every 1 = 20", "every 5 = 15", "every 10 = 10", "the Crown = 25", "other cards 0 (250 a round)",
             "1 ranks highest, then 10 down to 2; the Crown takes every trick"],
    golden10: ["each red card = 1", "red 5 = 5", "red 10 = 10 (27 a round)",
               "yellow 10 = −10 (a round's score stays at 0 or more)", "14 ranks highest; the lowest total wins"],
    goof: ["+1 for each of your cards on the piles", "−2 for each card left in your goof pile",
           "@2 under a card: seat 2 owns it"],
  };

  /* One card as text with its suit colour; data-card keeps the exact notation. */
  function card(game, text, extra, hideOwner) {
    var parts = text.split("@");
    var name = parts[0];
    var owner = parts.length > 1 ? parts[1] : null;
    var node;
    if (game === "goodge" && name === "CR") {
      node = el("span", { class: "card k-crown", title: "the Crown" }, ["♛"]);
    } else {
      var suit = name.slice(-1);
      var rank = name.slice(0, -1);
      var symbol = (SYMBOLS[game] || {})[suit] || "";
      var names = SUIT_NAMES[game] || {};
      node = el("span", { class: "card k-" + game + "-" + suit, title: rank + " of " + (names[suit] || suit) },
        [rank, symbol ? el("b", { text: symbol }) : ""]);
    }
    if (owner !== null && !hideOwner) node.appendChild(el("sub", { text: owner }));
    node.setAttribute("data-card", text);
    if (extra) node.className += " " + extra;
    return node;
  }

  /* The legend: one sample card per suit or colour, named, then the card points. */
  function legend(game) {
    var names = SUIT_NAMES[game] || {};
    var suits = Object.keys(names).map(function (suit) {
      var sample = el("span", { class: "card mini k-" + game + "-" + suit },
        [suit, SYMBOLS[game][suit] ? el("b", { text: SYMBOLS[game][suit] }) : ""]);
      return el("span", { class: "legend-suit", "data-suit": suit }, [sample, " " + names[suit]]);
    });
    if (game === "goodge") {
      suits.push(el("span", { class: "legend-suit", "data-suit": "CR" }, [card(game, "CR", "mini"), " the Crown (CR)"]));
    }
    return [
      el("div", { class: "legend-row" }, [el("span", { class: "legend-head", text: game === "golden10" ? "Colours" : "Suits" })].concat(suits)),
      el("div", { class: "legend-row legend-points" }, [el("span", { class: "legend-head", text: "Points" }),
        el("span", { text: (POINTS[game] || []).join(" · ") })]),
    ];
  }

  /* Zones of a seat hold that seat's own cards: the owner mark is shown only on the table. */
  function zoneView(game, zone, compact, ownSeat) {
    var cards = zone.cards.map(function (c) { return card(game, c, compact ? "mini" : "", ownSeat); });
    var hidden = zone.count - zone.cards.length;
    var body = el("div", { class: "cards" }, cards);
    if (hidden > 0) {
      body.appendChild(el("span", { class: "facedown", text: (cards.length ? "+" : "") + hidden + (cards.length ? " below" : " cards") }));
    } else if (!zone.count) {
      body.appendChild(el("span", { class: "muted empty", text: "empty" }));
    }
    return el("div", { class: "zone z-" + zone.name.split(":")[0], "data-zone": zone.name }, [
      el("span", { class: "zone-label", text: zone.label + (zone.count ? " (" + zone.count + ")" : "") }),
      body,
    ]);
  }

  /* Bids, passes and trump calls in words (`bid:55` -> `bid 55`, `trump:H` -> `trump ♥`). */
  function actionText(action) {
    var bid = /^bid:(\d+)$/.exec(action);
    if (bid) return "bid " + bid[1];
    var trump = /^trump:([A-Z])$/.exec(action);
    if (trump) return "trump " + (SYMBOLS.goodge[trump[1]] || trump[1]);
    return action;
  }

  function start(root) {
    if (!root) return;
    var matchId = root.getAttribute("data-match");
    var game = root.getAttribute("data-game");
    var data = null, index = 0, timer = null;
    var $ = function (id) { return document.getElementById(id); };
    var slider = $("slider");
    var legendBox = $("legend");
    legendBox.replaceChildren.apply(legendBox, legend(game));

    function seatName(seat) {
      return data.seats[seat] ? data.seats[seat].name : "seat " + seat;
    }

    function render() {
      var frame = data.frames[index];
      slider.value = index;
      $("counter").textContent = "frame " + (index + 1) + " of " + data.frames.length +
        (data.sampled ? " (some ticks left out)" : "");
      $("frame-title").textContent = visible(frame.title);
      $("frame-text").textContent = visible(frame.text);
      root.setAttribute("data-frame", String(index));
      root.setAttribute("data-kind", frame.kind);

      var plays = frame.plays.map(function (play) {
        var isCard = /^(\d+[A-Z]|CR)$/.test(play.action);
        var body;
        if (game === "goof") {
          var m = /^(.+?)>(p\d+|new)$/.exec(play.action);
          body = m ? el("span", {}, [card(game, m[1]), el("span", { class: "arrow", text: m[2] === "new" ? " → new pile" : " → pile " + m[2].slice(1) })])
                   : el("span", { class: "act", text: actionText(play.action) });
        } else {
          body = isCard ? card(game, play.action) : el("span", { class: "act", text: actionText(play.action) });
        }
        var cls = "play" + (frame.winner === play.seat ? " winner" : "") + (play.took === false ? " failed" : "");
        return el("div", { class: cls, "data-seat": String(play.seat), "data-action": play.action }, [
          body,
          el("span", { class: "who", text: seatName(play.seat) + (frame.winner === play.seat ? " ✓ takes it" : "") + (play.took === false ? " ✗ too late" : "") }),
        ]);
      });
      var playsBox = $("plays");
      playsBox.replaceChildren.apply(playsBox, plays.length ? plays : [el("span", { class: "muted", text: "—" })]);

      var zones = $("table-zones");
      zones.replaceChildren.apply(zones, frame.table.map(function (z) { return zoneView(game, z, false); }));

      var info = $("info");
      var items = [];
      Object.keys(frame.info).forEach(function (key) {
        items.push(el("dt", { text: key }), el("dd", { text: frame.info[key] }));
      });
      info.replaceChildren.apply(info, items);

      var seats = frame.seats.map(function (seat) {
        var cls = "seat" + (frame.actor === seat.seat ? " actor" : "") + (frame.winner === seat.seat ? " winner" : "");
        return el("div", { class: cls, "data-seat": String(seat.seat) }, [
          el("div", { class: "seat-head" }, [
            el("span", { class: "seat-no", text: "seat " + seat.seat }),
            el("a", { class: "seat-bot", href: "/bots/" + seat.bot_id, text: seat.bot }),
            el("span", { class: "seat-score", text: String(seat.score) }),
          ]),
          el("div", { class: "seat-note muted", text: seat.note }),
        ].concat(seat.zones.map(function (z) { return zoneView(game, z, z.name === "won", true); })));
      });
      var seatsBox = $("seats");
      seatsBox.replaceChildren.apply(seatsBox, seats);
      $("prev").disabled = index === 0;
      $("first").disabled = index === 0;
      $("next").disabled = index === data.frames.length - 1;
      $("last").disabled = index === data.frames.length - 1;
    }

    function go(to) {
      if (!data) return;
      index = Math.max(0, Math.min(data.frames.length - 1, to));
      render();
    }

    function stop() {
      if (timer) { clearInterval(timer); timer = null; $("play").textContent = "▶ play"; }
    }

    function load(gameIndex) {
      stop();
      $("counter").textContent = "loading…";
      fetch("/api/matches/" + encodeURIComponent(matchId) + "/frames?game=" + gameIndex)
        .then(function (response) {
          return response.json().then(function (body) {
            if (!response.ok) throw new Error(body.detail || response.statusText);
            return body;
          });
        })
        .then(function (body) {
          data = body;
          slider.max = data.frames.length - 1;
          index = 0;
          render();
          root.setAttribute("data-ready", "1");
        })
        .catch(function (error) {
          $("counter").textContent = visible("cannot load the replay: " + error.message);
        });
    }

    $("first").addEventListener("click", function () { stop(); go(0); });
    $("prev").addEventListener("click", function () { stop(); go(index - 1); });
    $("next").addEventListener("click", function () { stop(); go(index + 1); });
    $("last").addEventListener("click", function () { stop(); go(data ? data.frames.length - 1 : 0); });
    slider.addEventListener("input", function () { stop(); go(parseInt(slider.value, 10)); });
    $("play").addEventListener("click", function () {
      if (timer) { stop(); return; }
      $("play").textContent = "❚❚ pause";
      timer = setInterval(function () {
        if (!data || index >= data.frames.length - 1) { stop(); return; }
        go(index + 1);
      }, 700);
    });
    var select = $("game-select");
    if (select) select.addEventListener("change", function () { load(parseInt(select.value, 10)); });
    document.addEventListener("keydown", function (event) {
      if (event.target && (event.target.tagName === "INPUT" || event.target.tagName === "SELECT")) return;
      if (event.key === "ArrowRight") { stop(); go(index + 1); }
      else if (event.key === "ArrowLeft") { stop(); go(index - 1); }
      else if (event.key === "Home") { stop(); go(0); }
      else if (event.key === "End") { stop(); go(data ? data.frames.length - 1 : 0); }
      else if (event.key === " ") { event.preventDefault(); $("play").click(); }
    });
    load(0);
  }

  start(document.getElementById("viewer"));  // on match pages with a replay (see match.html)

  return { start: start, card: card, legend: legend, actionText: actionText };
})();
