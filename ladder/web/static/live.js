/* Card Arena: keep pages current by polling the JSON API (no libraries).

   The pages have no inline script (their Content-Security-Policy forbids it): this
   file starts what a page asks for in data-* attributes, once the page is parsed:
   - #ladders[data-api]: the standings, re-rendered in place;
   - #tournament[data-api]: one tournament's progress and table; the page reloads
     when a planned match changes (#t-matches[data-signature]);
   - body[data-reload]: reload once signatures[data-reload-kind] of that API answer
     differs from data-rendered (what the page was rendered with). */
"use strict";
var Arena = (function () {
  var pollMs = parseInt(document.body.getAttribute("data-poll-ms"), 10) || 5000;

  /* Text as shown: characters that draw nothing but reorder or hide text (controls,
     bidi overrides and isolates, zero-width marks, line and paragraph separators)
     become escapes like \u202e; the same rule as visible() in ladder/web/security.py. */
  var HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
  function visible(text) {
    return String(text).replace(HIDDEN, function (char) {
      var hex = char.codePointAt(0).toString(16);
      return hex.length <= 4 ? "\\u" + ("000" + hex).slice(-4) : "\\U" + ("0000000" + hex).slice(-8);
    });
  }

  /* An element; its text (attrs.text and string children) is made visible. */
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = visible(attrs[key]);
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(visible(child)) : child);
    });
    return node;
  }

  /* Fetch url every pollMs; onData(data, first) gets each answer that differs from the
     last. A 429 (too many requests) waits as long as its Retry-After asks. */
  function poll(url, onData) {
    var last = null;
    function tick() {
      var delay = pollMs;
      fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" })
        .then(function (response) {
          if (response.status === 429) {
            delay = Math.max(pollMs, 1000 * (parseInt(response.headers.get("Retry-After"), 10) || 1));
          }
          return response.ok ? response.text() : null;
        })
        .then(function (text) {
          if (text !== null && text !== last) {
            var first = last === null;
            last = text;
            onData(JSON.parse(text), first);
          }
        })
        .catch(function () { /* the server may be restarting: try again later */ })
        .then(function () { setTimeout(tick, delay); });
    }
    setTimeout(tick, pollMs);
  }

  /* The same marks as templates/marks.html draws. */
  function presence(online) {
    return el("span", { class: "presence " + (online ? "on" : "off"), text: online ? "online" : "offline" });
  }

  function provisional(se, threshold) {
    return el("span", { class: "badge prov", title: se === null ? "not in the ladder's fit yet" :
      "uncertain by " + se.toFixed(0) + " Elo: provisional while above " + threshold.toFixed(0),
      text: "provisional" });
  }

  function rating(value, se) {
    return [value.toFixed(0)].concat(se === null ? [] : [" ", el("span", { class: "se", text: "\u00b1 " + se.toFixed(0) })]);
  }

  function standingRow(line, threshold) {
    return el("tr", { "data-bot": line.bot_id }, [
      el("td", { class: "num", text: String(line.rank) }),
      el("td", {}, [el("a", { href: "/bots/" + line.bot_id, text: line.bot })]),
      el("td", { text: line.version }),
      el("td", { class: "num rating" }, rating(line.rating, line.se)),
      el("td", { class: "num elo", text: line.elo.toFixed(1) }),
      el("td", { class: "num", text: String(line.games) }),
      el("td", {}, [presence(line.online)]),
      el("td", {}, line.provisional ? [provisional(line.se, threshold)] : []),
    ]);
  }

  /* Standings: re-render each ladder's rows; reload if the set of ladders changed. */
  function pollStandings(root) {
    if (!root) return;
    var known = root.getAttribute("data-ladders");
    poll(root.getAttribute("data-api"), function (data) {
      var ids = data.ladders.map(function (l) { return l.id; }).join(",");
      if (ids !== known) { window.location.reload(); return; }
      data.ladders.forEach(function (ladder) {
        var table = root.querySelector('table[data-ladder="' + ladder.id + '"]');
        if (!table) return;
        var signature = ladder.standings.map(function (line) {
          return line.bot_id + ":" + line.rating.toFixed(0) + ":" + (line.se === null ? "-" : line.se.toFixed(0)) +
            ":" + line.elo.toFixed(1) + ":" + line.games + ":" + line.online + ";";
        }).join("");
        if (signature === table.getAttribute("data-signature")) return;  // nothing new
        table.setAttribute("data-signature", signature);
        var body = table.querySelector("tbody");
        body.replaceChildren.apply(body, ladder.standings.map(function (line) {
          return standingRow(line, data.provisional_se);
        }));
      });
    });
  }

  function bar(line, lo, hi) {
    var width = 220, height = 18, mid = height / 2, span = (hi - lo) || 1;
    function x(v) { return 4 + (width - 8) * (v - lo) / span; }
    var ns = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "ci");
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    function add(tag, attrs) {
      var node = document.createElementNS(ns, tag);
      Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
      svg.appendChild(node);
    }
    add("line", { class: "ci-axis", x1: 4, x2: width - 4, y1: mid, y2: mid });
    add("rect", { class: "ci-bar", x: x(line.ci_low), y: mid - 4, width: Math.max(1, x(line.ci_high) - x(line.ci_low)), height: 8, rx: 3 });
    add("circle", { class: "ci-dot", cx: x(line.rating), cy: mid, r: 4 });
    return svg;
  }

  /* One tournament: progress, status and table with interval bars. */
  function pollTournament(root) {
    if (!root) return;
    var plan = document.getElementById("t-matches");
    poll(root.getAttribute("data-api"), function (t) {
      var signature = t.matches.map(function (m) {
        return m.match_id + ":" + m.status + ":" + (m.match_status || "") + ";";
      }).join("");
      if (plan && signature !== plan.getAttribute("data-signature")) { window.location.reload(); return; }
      document.getElementById("t-status").textContent = visible(t.status);
      document.getElementById("t-status").className = "status s-" + t.status;
      var progress = document.getElementById("t-progress");
      progress.max = t.matches_in_all || 1;
      progress.value = t.matches_finished;
      document.getElementById("t-progress-text").textContent =
        t.matches_finished + " of " + t.matches_in_all + " matches recorded";
      var failed = document.getElementById("t-failed");
      failed.textContent = t.matches_failed + " failed";
      failed.hidden = !t.matches_failed;
      if (!t.table.length) return;
      /* Only measured lines have an interval to draw (see TableLineOut). */
      var measured = t.table.filter(function (l) { return l.measured; });
      var lo = Math.min.apply(null, measured.map(function (l) { return l.ci_low; }));
      var hi = Math.max.apply(null, measured.map(function (l) { return l.ci_high; }));
      if (!measured.length) { lo = 0; hi = 1; }
      var margin = (hi - lo) * 0.05 || 10;
      lo -= margin; hi += margin;
      var rows = t.table.map(function (line, i) {
        return el("tr", { "data-bot": line.bot_id }, [
          el("td", { class: "num", text: String(i + 1) }),
          el("td", {}, [el("a", { href: "/bots/" + line.bot_id, text: line.bot })]),
          el("td", { class: "num rating", text: line.rating_text }),
          el("td", { class: "num muted", text: line.interval_text }),
          el("td", { class: "ci-col" }, line.measured ? [bar(line, lo, hi)] : []),
          el("td", { class: "num", text: String(line.games) }),
        ]);
      });
      var body = document.querySelector("#t-table tbody");
      body.replaceChildren.apply(body, rows);
      var scale = document.querySelector("#t-table .scale");
      if (scale) scale.replaceChildren(el("span", { text: lo.toFixed(0) }), el("span", { text: hi.toFixed(0) }));
    });
  }

  /* Reload the page once signature(data) differs from what the page was rendered with. */
  function reloadWhenChanged(url, rendered, signature) {
    poll(url, function (data) { if (signature(data) !== rendered) window.location.reload(); });
  }

  var signatures = {
    match: function (m) { return m.status; },
    bot: function (b) { return b.history.length + ":" + b.matches.length + ":" + b.bot.online; },
    author: function (a) { return a.matches.length ? a.matches[0].match_id : ""; },
    tournaments: function (d) {
      return d.tournaments.map(function (t) {
        return t.id + ":" + t.status + ":" + t.matches_finished + "/" + t.matches_in_all;
      }).join(",");
    },
  };

  pollStandings(document.getElementById("ladders"));
  pollTournament(document.getElementById("tournament"));
  var body = document.body;
  if (body.hasAttribute("data-reload")) {
    reloadWhenChanged(body.getAttribute("data-reload"), body.getAttribute("data-rendered"),
                      signatures[body.getAttribute("data-reload-kind")]);
  }

  return { el: el, visible: visible };
})();
