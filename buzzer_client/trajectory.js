// The model players' view of a tossup (GRACE's figure 3): each model's confidence over the
// words read, against its buzz threshold, with the room's buzzes on the same axis of words.
//
// Drawn as inline SVG (a few lines, dots and ticks: no charting library needed, and it scales
// with the page, from a projector to a room card). The data is the state's `curves`
// (docs/protocol.md, CurvesView): the server sends a display the points read so far only in
// an exhibition, and every point once the tossup is over; a model's guess only once its buzz
// is ruled or the tossup is over. Text from the server goes through textContent.
//
//   GraceArena.trajectory.draw(container, curves, options)  a chart and its caption
//   GraceArena.trajectory.showOnDisplay(state)             the room display's chart (/display)
//   GraceArena.trajectory.roomCard(li, room)               a room card's chart (event projector,
//                                                          without the models' guesses)
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const COLORS = ["#7cc4ff", "#ffb454", "#c792ea", "#8ce99a"];
  const RULING_COLORS = { correct: "#2ecc71", incorrect: "#ff6b5b", prompt: "#7cc4ff" };

  function svg(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (parent) parent.appendChild(node);
    return node;
  }

  function html(name, className, text, parent) {
    const node = document.createElement(name);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function percent(value) {
    return value == null ? "—" : Math.round(value * 100) + "%";
  }

  // The confidence a model's threshold applies to, at a point.
  function chosen(curve, point) {
    return curve.confidence === "verbal" ? point.verbal : point.logit;
  }

  // The chart, drawn into `root` (an <svg>) at its size on the page, W×H pixels (text and
  // dots keep their shapes whatever the page's size): x the words (0 .. n_words-1), y the
  // confidence (0 .. 1).
  //   options.compact   a small chart without axis labels (a room card)
  //   options.teamName  team id -> its name (the buzz marks' labels)
  function chart(root, view, options, W, H) {
    // (a short chart, as on a crowded room display, keeps its 0 and 100% labels but not the
    // 50% one nor the words' numbers under it; below 48 px it has no labels at all)
    const compact = Boolean(options.compact) || H < 48;
    const short = !compact && H < 100;
    const left = compact ? 6 : 44;
    const right = compact ? 6 : 12;
    const top = compact ? 6 : 12;
    const bottom = compact ? 6 : short ? 8 : 28;
    const last = Math.max(1, view.n_words - 1);
    const x = (word) => left + (Math.min(Math.max(word, 0), last) / last) * (W - left - right);
    const y = (value) => top + (1 - Math.min(Math.max(value, 0), 1)) * (H - top - bottom);
    root.setAttribute("viewBox", "0 0 " + W + " " + H);
    const title = svg("title", {}, root);
    title.textContent = "Model confidence over the words read, against the buzz threshold";
    // the frame and the 0 / 50% / 100% lines
    for (const value of [0, 0.5, 1]) {
      svg("line", { x1: left, x2: W - right, y1: y(value), y2: y(value), class: "grid" }, root);
      if (!compact && !(short && value === 0.5)) {
        const label = svg("text", { x: left - 6, y: y(value) + 5, class: "axis", "text-anchor": "end" }, root);
        label.textContent = Math.round(value * 100) + "%";
      }
    }
    if (!compact && !short) {
      const label = svg("text", { x: W - right, y: H - 6, class: "axis", "text-anchor": "end" }, root);
      label.textContent = "word " + view.n_words;
      const first = svg("text", { x: left, y: H - 6, class: "axis" }, root);
      first.textContent = "word 1";
    }
    // how far the reading has gone (during it) or where it stopped
    if (view.position >= 0 && view.position < last) {
      const width = Math.max(0, W - right - x(view.position));
      svg("rect", {
        x: x(view.position), y: top, width, height: H - top - bottom, class: "unread",
      }, root);
      // once the tossup is over, the words after it are what the room did not hear: said
      if (view.over && !compact && width > 150) {
        const label = svg("text", {
          x: W - right - 4, y: H - bottom - 6, class: "unread-label", "text-anchor": "end",
        }, root);
        label.textContent = "not read to the room";
      }
    }
    // the room's buzzes, on the same axis
    for (const buzz of view.buzzes || []) {
      const mark = svg("line", {
        x1: x(buzz.word), x2: x(buzz.word), y1: top, y2: H - bottom,
        class: "buzz " + buzz.kind + (buzz.ruling ? " " + buzz.ruling : ""),
        stroke: RULING_COLORS[buzz.ruling] || "#ffd23f",
      }, root);
      mark.setAttribute("data-word", String(buzz.word));
      if (!compact) {
        const name = options.teamName ? options.teamName(buzz.team) : buzz.team;
        const text = (buzz.kind === "model" ? "◆ " : "") + name;
        // right of its line, or left of it when it would run off the chart's right edge (clear
        // of the dot on the line); at the top, or at the bottom where the curves' dots under it
        // would cross it at the top and not there
        const wide = text.length * 8 + 6;
        const gap = 9;
        const leftOf = x(buzz.word) + gap + wide > W;
        const x0 = leftOf ? x(buzz.word) - gap - wide : x(buzz.word) + gap;
        const ys = [];
        for (const c of view.curves) {
          for (const q of c.points) {
            if (chosen(c, q) != null && x(q.word) >= x0 - 6 && x(q.word) <= x0 + wide + 6) ys.push(y(chosen(c, q)));
          }
        }
        const clear = (from, to) => ys.every((v) => v < from - 6 || v > to + 6);
        const high = !clear(top, top + 14) && clear(H - bottom - 18, H - bottom - 2);
        const label = svg("text", {
          x: leftOf ? x(buzz.word) - gap : x(buzz.word) + gap, y: high ? H - bottom - 6 : top + 12,
          class: "buzz-label", fill: RULING_COLORS[buzz.ruling] || "#ffd23f",
          "text-anchor": leftOf ? "end" : "start",
        }, root);
        label.textContent = text;
      }
    }
    view.curves.forEach((curve, i) => {
      const color = COLORS[i % COLORS.length];
      // the threshold it buzzes at
      svg("line", {
        x1: left, x2: W - right, y1: y(curve.threshold), y2: y(curve.threshold),
        class: "threshold", stroke: color,
      }, root).setAttribute("data-team", curve.team);
      // the other kind of confidence, thin; the one the threshold applies to, thick
      for (const kind of curve.confidence === "verbal" ? ["logit", "verbal"] : ["verbal", "logit"]) {
        const points = curve.points.filter((p) => p[kind] != null);
        if (!points.length) continue;
        const main = kind === curve.confidence;
        const line = svg("polyline", {
          points: points.map((p) => x(p.word) + "," + y(p[kind])).join(" "),
          class: "curve " + kind + (main ? " main" : ""), stroke: color,
        }, root);
        line.setAttribute("data-team", curve.team);
        if (!main) continue;
        for (const p of points) {
          const dot = svg("circle", {
            cx: x(p.word), cy: y(p[kind]), r: compact ? 3 : 5,
            class: "point" + (p.correct === true ? " right" : p.correct === false ? " wrong" : ""),
            fill: color,
          }, root);
          dot.setAttribute("data-team", curve.team);
        }
      }
    });
    return root;
  }

  // One line per model: where its confidence stands against its threshold, and its guess
  // once the server gives it (with whether it was right).
  function caption(view, options) {
    const box = html("div", "trajectory-caption");
    let line = null;
    view.curves.forEach((curve, i) => {
      line = html("p", "trajectory-line", null, box);
      line.setAttribute("data-team", curve.team);
      const key = html("span", "key", "■ ", line);
      key.style.color = COLORS[i % COLORS.length];
      html("strong", null, curve.name, line);
      const latest = curve.points.filter((p) => chosen(curve, p) != null && p.word <= view.position).pop();
      // (stopped before the model had read a whole clue: it had no guess, so no confidence, at
      // that word; the curve beyond it is what it would have read, shaded as unread)
      const before = !latest && view.position >= 0 && curve.points.some((p) => chosen(curve, p) != null);
      let text = " · " + curve.confidence + " " +
        (latest ? percent(chosen(curve, latest)) :
          before ? "unknown at word " + (view.position + 1) + ": no guess before its first clue" : "—") +
        " / threshold " + percent(curve.threshold);
      if (curve.buzz_word != null) text += " · buzzed at word " + (curve.buzz_word + 1);
      else if (view.over) text += " · did not buzz";
      line.append(text);
      if (curve.guess != null) {
        line.append(" · ");
        html("span", "guess", "“" + curve.guess + "”", line);
        if (curve.guess_confidence != null) line.append(" " + percent(curve.guess_confidence));
        if (curve.correct != null) {
          html("span", curve.correct ? "verdict right" : "verdict wrong",
               curve.correct ? " ✓" : " ✗", line).title = curve.correct ? "right" : "wrong";
        }
      }
    });
    if (options.replay && line) { // at the end of the last line: the chart keeps the room
      const a = html("a", null, "Replay", html("span", "trajectory-replay", null, line));
      a.title = "Replay of this tossup";
      a.href = options.replay;
    }
    return box;
  }

  function draw(container, view, options) {
    options = options || {};
    container.textContent = "";
    if (!view || !view.curves || !view.curves.length) {
      container.hidden = true;
      return;
    }
    container.hidden = false;
    // the chart takes the room the page gives it (the room display: what the text leaves)
    const root = svg("svg", {
      class: "trajectory-chart" + (options.compact ? " compact" : ""), role: "img",
    }, container);
    container.appendChild(options.compact ? compactCaption(view) : caption(view, options));
    const box = root.getBoundingClientRect();
    const width = Math.max(Math.round(box.width), 120);
    const height = Math.max(Math.round(box.height), 40);
    chart(root, view, options, width, height);
  }

  // (a room card's line names no guess: the event's projector is seen from other rooms, which
  // may read the same tossup later, and a model's right guess is its answer; whether it was
  // right is said)
  function compactCaption(view) {
    const box = html("p", "trajectory-compact-line");
    box.textContent = view.curves.map((c) => {
      const latest = c.points.filter((p) => chosen(c, p) != null && p.word <= view.position).pop();
      return c.name + " " + (latest ? percent(chosen(c, latest)) : "—") + " / " + percent(c.threshold) +
        (c.correct === true ? " ✓" : c.correct === false ? " ✗" : "");
    }).join(" · ");
    return box;
  }

  // -- the room display ---------------------------------------------------------------------

  function teamNamer(state) {
    return (id) => {
      const t = state.teams.find((team) => team.id === id);
      return t ? t.name : id;
    };
  }

  function showOnDisplay(state) {
    let box = document.getElementById("curves");
    if (!box) {
      const question = document.querySelector(".question");
      if (!question) return;
      box = html("section", "curves", null, question);
      box.id = "curves";
      box.setAttribute("aria-label", "The model players' confidence");
    }
    const view = state.curves;
    // (during a bonus the text has the room: the tossup's curves come back with the next one;
    // at the match's end, the final score has it)
    if (!view || state.match.phase === "bonus" || state.match.phase === "ended") {
      box.classList.remove("over");
      draw(box, null);
      return;
    }
    box.classList.toggle("over", Boolean(view.over)); // (trajectory.css gives it more room)
    const replay = view.over && state.tossup ?
      "/replay?match=" + state.match.id + "&tossup=" + state.tossup.number +
      "&code=" + encodeURIComponent(state.match.join_code) : null;
    draw(box, view, { teamName: teamNamer(state), replay });
    // the chart took room from the text: its newest words back in sight, as display.js keeps them
    const text = document.getElementById("text");
    if (text) text.scrollTop = text.scrollHeight;
  }

  // -- the event's projector: each room's curves, from a display link to the room ------------

  const cards = new Map(); // join code -> {box, link}

  // a room's display link carries the event projector's grant (?token=, printed by serve)
  function roomHello(code) {
    const hello = { type: "hello", role: "display", join_code: code };
    const grant = new URLSearchParams(location.search).get("token");
    if (grant) hello.token = grant;
    return hello;
  }

  function roomCard(li, room) {
    if (room.round == null || !room.join_code || !window.GraceArena.createLink) return;
    let card = cards.get(room.join_code);
    if (!card) {
      const box = html("div", "room-curves");
      box.hidden = true;
      card = { box, code: room.join_code, view: null };
      card.link = window.GraceArena.createLink({
        hello: () => roomHello(card.code),
        onMessage: (msg) => {
          if (msg.type === "state") {
            card.link.entered();
            card.view = msg.curves && msg.match.phase !== "bonus" ? msg.curves : null;
            draw(box, card.view, { compact: true });
          } else if (msg.type === "next_match") {
            card.code = msg.join_code;
            card.view = null;
            draw(box, null);
            card.link.send(roomHello(card.code));
          } else if (msg.type === "error" && msg.code === "unauthorized") {
            card.link.stop(); // no grant: the room's curves are not this projector's to show
          }
        },
        onStatus: () => {},
      });
      card.link.start();
      cards.set(room.join_code, card);
    }
    li.appendChild(card.box);
    draw(card.box, card.view, { compact: true }); // at the size of its new card
  }

  window.GraceArena.trajectory = { draw, showOnDisplay, roomCard };
})();
