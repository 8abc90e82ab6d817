/* Card Arena live view: draws a running match's public table from its event stream.

   The stream (/api/matches/{id}/live, server-sent events) carries only what every
   seat sees: bids, trump, the tricks and who took each, scores; Goof's face-up
   table. Bot-provided text goes through Arena.visible (via Arena.el). When the
   match ends the page reloads, into the replay; a board marked data-keep (a person's
   seat, templates/board.html) stays as it is. */
"use strict";
(function () {
  var root = document.getElementById("live");
  if (!root) return;
  var el = Arena.el;
  var game = root.getAttribute("data-game");
  var labels = {};
  document.querySelectorAll("#live-bots li").forEach(function (item) {
    labels[item.getAttribute("data-bot")] = item.textContent;
  });
  var seats = [];
  var state = document.getElementById("live-state");

  function say(text) { state.textContent = Arena.visible(text); }
  function who(seat) { return "seat " + seat + " · " + (labels[seats[seat]] || seats[seat] || "?"); }
  function card(text) { return el("span", { class: "card", "data-card": text, text: text }); }
  function plays(list) {
    return list.map(function (entry) {
      return el("span", { class: "play" }, [el("span", { class: "muted", text: "seat " + entry[0] + " " }), card(entry[1])]);
    });
  }
  function info(pairs) {
    var nodes = [];
    pairs.forEach(function (pair) {
      if (pair[1] === null || pair[1] === undefined || pair[1] === "") return;
      nodes.push(el("dt", { text: pair[0] }), el("dd", { text: String(pair[1]) }));
    });
    document.getElementById("live-info").replaceChildren.apply(document.getElementById("live-info"), nodes);
  }
  function seatBox(seat, view, lines) {
    var head = el("div", { class: "seat-head" }, [
      el("span", { class: "seat-bot", text: who(seat) }),
      el("span", { class: "seat-score", text: String(view.scores[seat]) }),
    ]);
    var box = el("div", { class: "seat" + (view.to_act === seat ? " actor" : ""), "data-seat": String(seat) },
      [head].concat(lines.map(function (line) { return el("div", { class: "seat-note", text: line }); })));
    return box;
  }

  function drawTricks(view) {
    var tricks = view.tricks.map(function (trick, i) {
      return el("div", { class: "trick", "data-winner": String(trick.winner) },
        [el("span", { class: "muted", text: "trick " + (i + 1) + ": " })].concat(plays(trick.cards))
          .concat([el("span", { text: " → taken by " + who(trick.winner) })]));
    });
    var current = el("div", { class: "trick current" }, [el("span", { class: "muted", text: "on the table: " })].concat(plays(view.trick)));
    document.getElementById("live-plays").replaceChildren.apply(document.getElementById("live-plays"), [current].concat(tricks.reverse()));
  }

  function drawTrickGame(view) {
    drawTricks(view);
    var boxes = [];
    for (var seat = 0; seat < view.players; seat++) {
      var lines = [view.hand_sizes[seat] + " cards in hand"];
      if (game === "goodge") {
        var bid = view.bids.filter(function (b) { return b[0] === seat; }).map(function (b) { return b[1]; });
        if (bid.length) lines.push("bids: " + bid.join(", "));
        lines.push("tricks won: " + view.tricks_won[seat] + " · points taken: " + view.taken[seat]);
      } else {
        lines.push("red points taken: " + view.red_points_taken[seat]);
      }
      boxes.push(seatBox(seat, view, lines));
    }
    document.getElementById("live-seats").replaceChildren.apply(document.getElementById("live-seats"), boxes);
    if (game === "goodge") {
      info([["round", view.round], ["phase", view.phase], ["Goodge", view.goodge === null ? null : who(view.goodge)],
            ["bid", view.bid], ["trump", view.trump], ["Stash", view.stash_size + " cards, face down"]]);
    } else {
      info([["round", view.round + " of " + view.rounds], ["led colour", view.led_colour],
            ["yellow 10 taken by", view.yellow10_taken_by === null ? null : who(view.yellow10_taken_by)]]);
    }
  }

  function drawGoof(view) {
    var piles = view.piles.map(function (pile) {
      return el("span", { class: "play", "data-pile": String(pile.id) }, [el("span", { class: "muted", text: "pile " + pile.id + " " }), card(pile.top), el("span", { class: "muted", text: " ×" + pile.size })]);
    });
    document.getElementById("live-plays").replaceChildren.apply(document.getElementById("live-plays"), piles);
    var boxes = view.tableau.map(function (row) {
      var box = seatBox(row.seat, view, [
        "goof pile " + row.goof_pile + " · stock " + row.stock + " · waste " + row.waste + " · on the piles " + row.area_cards,
      ]);
      box.appendChild(el("div", { class: "cards" }, row.line.map(card).concat(row.waste_top ? [el("span", { class: "muted", text: " waste: " }), card(row.waste_top)] : [])));
      return box;
    });
    document.getElementById("live-seats").replaceChildren.apply(document.getElementById("live-seats"), boxes);
    info([["round", view.round], ["tick", view.tick], ["one-unders", view.one_unders]]);
  }

  function onEvent(event) {
    var title = document.getElementById("live-title");
    if (event.type === "game_start") {
      seats = event.seats;
      title.textContent = "Game " + (event.game_index + 1);
    } else if (event.type === "view") {
      say("live · move " + event.step);
      if (game === "goof") drawGoof(event.view); else drawTrickGame(event.view);
    } else if (event.type === "strike") {
      say(who(event.seat) + ": a late or illegal answer (strike " + event.strikes + ")");
    } else if (event.type === "forfeit") {
      say(who(event.seat) + " forfeited: a stand-in plays on");
    } else if (event.type === "game_end") {
      title.textContent = "Game " + (event.game_index + 1) + " is over: " + event.scores.join(" · ");
    } else if (event.type === "match_end" || event.type === "match_aborted" || event.type === "match_finished") {
      ended = true;
      source.close();
      if (root.hasAttribute("data-keep")) { say("the match has ended"); return; }  // a seat's page
      say("the match has ended: loading its replay…");
      window.location.reload();
    } else if (event.type === "live_lost") {
      say("the referee's stream was lost: " + event.reason);
    }
  }

  var ended = false;
  var source = new EventSource(root.getAttribute("data-api"));
  source.onmessage = function (message) { onEvent(JSON.parse(message.data)); };
  source.onerror = function () {
    // The stream ends after the match's end (then the page reloads) or cannot open at all.
    if (ended) return;
    say("cannot reach the referee for the live view; this page reloads into the replay once the match has finished");
    source.close();
  };
})();
