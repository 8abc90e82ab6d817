/* Card Arena Play: a person's seat against the bots (no libraries, no inline script).

   /play (#play-form): choose a game, players, rounds, opponents and a name; the form is
   sent as JSON to /api/play, and the browser goes to the new game's page, whose
   address holds the secret play id.

   /play/{play_id} (#seat): the seat's own stream (server-sent events, keyed by the play
   id) draws the seat's private view (its hand face up), its legal moves as buttons and
   the clock; a click sends the move. The public table below is watch.js's, from the
   match's public stream. Every text a bot or person chose goes through Arena.visible
   (via Arena.el). */
"use strict";
(function () {
  var el = Arena.el;
  var $ = function (id) { return document.getElementById(id); };

  function postJson(url, body) {
    return fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
      cache: "no-store",
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) throw new Error(data.detail || response.statusText);
        return data;
      });
    });
  }

  /* The form ------------------------------------------------------------------------ */

  function startForm(form) {
    var game = $("p-game"), players = $("p-players"), error = $("p-error");
    var boxes = Array.prototype.slice.call(form.querySelectorAll(".opponent"));

    function wanted() { return parseInt(players.value, 10) - 1; }
    function picked() {
      return boxes.filter(function (box) { return !box.hidden && box.querySelector("input").checked; })
        .map(function (box) { return box.querySelector("input").value; });
    }
    function refresh() {
      var choice = game.options[game.selectedIndex];
      var low = parseInt(choice.getAttribute("data-min"), 10), high = parseInt(choice.getAttribute("data-max"), 10);
      var shown = 0;
      boxes.forEach(function (box) {
        box.hidden = box.getAttribute("data-games").split(" ").indexOf(game.value) < 0;
        if (box.hidden) box.querySelector("input").checked = false; else shown += 1;
      });
      var before = parseInt(players.value, 10);
      var counts = [];
      for (var n = low; n <= high; n++) counts.push(el("option", { value: String(n), text: String(n) }));
      players.replaceChildren.apply(players, counts);
      // Keep the count chosen if this game allows it, else as many as the bots online fill.
      players.value = String(before >= low && before <= high ? before : Math.max(low, Math.min(high, shown + 1)));
      $("p-none").hidden = shown > 0;
      count();
    }
    function count() {
      var need = wanted(), have = picked().length;
      $("p-pick").textContent = "· pick " + need + " (" + have + " picked)";
      $("p-start").disabled = have !== need;
    }
    game.addEventListener("change", refresh);
    players.addEventListener("change", count);
    boxes.forEach(function (box) { box.querySelector("input").addEventListener("change", count); });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      error.hidden = true;
      $("p-start").disabled = true;
      postJson(form.getAttribute("data-api"), {
        game: game.value,
        players: parseInt(players.value, 10),
        opponents: picked(),
        rounds: parseInt($("p-rounds").value, 10) || 1,
        name: $("p-name").value,
      }).then(function (started) {
        window.location.assign(started.url);
      }).catch(function (failed) {
        error.textContent = Arena.visible(failed.message);
        error.hidden = false;
        count();
      });
    });
    refresh();
  }

  /* The seat ------------------------------------------------------------------------- */

  function startSeat(root) {
    var game = root.getAttribute("data-game");
    var myBot = root.getAttribute("data-bot");
    // The seat's own cards: Goof's owner mark (@seat) is left out, as the replay does.
    var card = function (text) { return ArenaReplay.card(game, text, "", true); };
    var labels = {};
    document.querySelectorAll("#live-bots li").forEach(function (item) {
      labels[item.getAttribute("data-bot")] = item.textContent;
    });
    var open = null;        // the act waiting for the person's move
    var clock = null;       // its timer
    var ended = false;
    var legendBox = $("legend");
    legendBox.replaceChildren.apply(legendBox, ArenaReplay.legend(game));

    function say(text) { $("s-state").textContent = Arena.visible(text); }

    /* A move on a button: a card as the cards are drawn, Goof's "card > pile" with its
       pile, anything else in words (bid 55, trump ♥, pass, turn, wait). */
    function moveBody(action) {
      var onto = /^(.+?)>(p\d+|new)$/.exec(action);
      if (onto) return [card(onto[1]), el("span", { class: "arrow", text: onto[2] === "new" ? " → new pile" : " → pile " + onto[2].slice(1) })];
      if (/^(\d+[A-Z]|CR)$/.test(action)) return [card(action)];
      return [el("span", { class: "act", text: ArenaReplay.actionText(action) })];
    }

    function zone(label, cards, note) {
      return el("div", { class: "zone", "data-zone": label }, [
        el("span", { class: "zone-label", text: label }),
        el("div", { class: "cards" }, cards.map(card).concat(note ? [el("span", { class: "muted", text: " " + note })] : [])),
      ]);
    }

    /* The seat's own view: the hand (and the Stash once it is the seat's), or in Goof the
       seat's goof line, waste and piles. */
    function drawView(view, seat) {
      var parts = [];
      if (game === "goof") {
        var row = view.tableau.filter(function (r) { return r.seat === seat; })[0];
        parts.push(zone("goof line", row.line));
        parts.push(zone("waste", row.waste_top ? [row.waste_top] : [], row.waste + " cards"));
        if (row.back_three) parts.push(zone("back three", [row.back_three], "under the waste top"));
        parts.push(zone("goof pile", [], row.goof_pile + " cards face down · stock " + row.stock));
      } else {
        parts.push(zone("your hand", view.hand, ""));
        if (view.stash) parts.push(zone("the Stash", view.stash, ""));
      }
      var box = $("s-view");
      box.replaceChildren.apply(box, parts);
    }

    function drawMoves(legal) {
      var buttons = legal.map(function (action) {
        var button = el("button", { type: "button", class: "move", "data-action": action }, moveBody(action));
        button.addEventListener("click", function () { move(action); });
        return button;
      });
      var box = $("s-actions");
      box.replaceChildren.apply(box, buttons);
    }

    function close() {
      open = null;
      if (clock) { clearInterval(clock); clock = null; }
      $("s-clock").hidden = true;
      $("s-actions").replaceChildren();
    }

    /* The clock: the move's own time, then the match's time bank, as the referee counts. */
    function startClock(deadlineMs, bankMs) {
      var began = Date.now();
      var face = $("s-clock");
      function tick() {
        var spent = Date.now() - began;
        var left = deadlineMs - spent;
        if (left > 0) {
          face.textContent = (left / 1000).toFixed(1) + " s" + (bankMs > 0 ? " + " + (bankMs / 1000).toFixed(1) + " s bank" : "");
          face.className = "clock" + (left < 5000 ? " short" : "");
        } else {
          var bank = Math.max(0, bankMs + left);
          face.textContent = "time bank " + (bank / 1000).toFixed(1) + " s";
          face.className = "clock short";
        }
      }
      if (clock) clearInterval(clock);
      face.hidden = false;
      tick();
      clock = setInterval(tick, 100);
    }

    function move(action) {
      if (!open) return;
      var request = open.request_id;
      $("s-actions").querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      postJson(root.getAttribute("data-answer"), { request_id: request, action: action })
        .catch(function (failed) {
          say("the move was not taken: " + failed.message);
          if (open && open.request_id === request) {
            $("s-actions").querySelectorAll("button").forEach(function (b) { b.disabled = false; });
          }
        });
    }

    function showResult(result) {
      var rows = result.bots.map(function (bot, entry) {
        return { bot: bot, rank: result.ranks[entry], score: result.scores[entry],
                 strikes: (result.strikes || {})[bot] || 0, forfeit: result.forfeits.indexOf(bot) >= 0 };
      }).sort(function (a, b) { return a.rank - b.rank; });
      var body = $("s-result-rows");
      body.replaceChildren.apply(body, rows.map(function (row) {
        var marks = [];
        if (row.forfeit) marks.push(el("span", { class: "badge bad", text: "forfeit" }));
        if (row.strikes) marks.push(el("span", { class: "badge warn", text: row.strikes + " strikes" }));
        return el("tr", { class: row.bot === myBot ? "me" : "", "data-bot": row.bot }, [
          el("td", { class: "num", text: "#" + row.rank }),
          el("td", { text: labels[row.bot] || row.bot }),
          el("td", { class: "num", text: String(row.score) }),
          el("td", {}, marks),
        ]);
      }));
      var mine = rows.filter(function (row) { return row.bot === myBot; })[0];
      $("s-view").hidden = true;  // the game is over: no hand, no moves
      $("s-moves").hidden = true;
      $("s-place").textContent = mine ? "You placed #" + mine.rank + " of " + rows.length + " with " + mine.score : "The result";
      $("s-result").hidden = false;
    }

    function onEvent(event) {
      if (event.type === "seat_start") {
        $("s-seat").textContent = "· seat " + event.seat + (event.game_index ? " in game " + (event.game_index + 1) : "");
        say("the cards are dealt: waiting for your turn…");
      } else if (event.type === "act") {
        open = event;
        drawView(event.view, event.seat);
        drawMoves(event.legal);
        startClock(event.deadline_ms, event.time_bank_ms);
        say(game === "goof" ? "tick " + event.view.tick + ": your move (or the clock waits for you)" : "your move");
      } else if (event.type === "answered") {
        if (open && open.request_id === event.request_id) close();
        // The card played leaves the hand drawn until the next view comes.
        var played = $("s-view").querySelector('[data-zone="your hand"] [data-card="' + event.action + '"]');
        if (played) played.remove();
        say(event.by === "clock" ? "the tick's time ran out: you waited" : "you played " + ArenaReplay.actionText(event.action) + ": waiting for the others…");
      } else if (event.type === "seat_strike") {
        close();
        $("s-strikes").textContent = Arena.visible("strike " + event.strikes + " of " + event.max_strikes + ": " + event.reason);
        say("a stand-in moved for you");
      } else if (event.type === "seat_forfeit") {
        close();
        say("your seat is forfeited (" + event.reason + "): a stand-in plays it to the end");
      } else if (event.type === "game_end") {
        close();
        say("game " + (event.game_index + 1) + " is over: scores " + event.scores.join(" · "));
      } else if (event.type === "match_end") {
        ended = true;
        close();
        say("the match is over");
        showResult(event.result);
        source.close();
      } else if (event.type === "match_aborted" || event.type === "seat_lost") {
        ended = true;
        close();
        say("the match was stopped: " + event.reason);
        source.close();
      }
    }

    var source = new EventSource(root.getAttribute("data-events"));
    source.onmessage = function (message) { onEvent(JSON.parse(message.data)); };
    source.onerror = function () {
      if (ended) return;
      // The browser opens the stream again by itself, unless the game is gone.
      if (source.readyState === EventSource.CLOSED) say("this game is not on this server any more");
      else say("the connection to the server was lost: reconnecting…");
    };
  }

  var form = $("play-form");
  if (form) startForm(form);
  var seat = $("seat");
  if (seat) startSeat(seat);
})();
