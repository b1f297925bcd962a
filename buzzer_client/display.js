// The projector display: the question as revealed, buzz banners, guesses once ruled, scores.
//
// Connects as role "display" (docs/protocol.md): the server hides answers and model guesses
// from this role until they are ruled on. All text from players goes through textContent.
// An event's room is followed from round to round (next_match). At the end of a match the
// display shows the result and the final score, and keeps it up, when the room moves on, until
// the moderator starts the next match's first tossup. /display?event=NAME is the event's
// projector view instead (standings.js).
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const FINISHED = new Set(["answered", "dead", "thrown_out"]);
  const HAS_FLOOR = new Set(["buzzed", "prompted"]);
  const LIVE = new Set(["reading", "awaiting", "buzzed", "prompted"]);
  const { appendMarkup, normaliseCode, createLink, recordNotice, officiatingLine, announce } =
    window.GraceArena;

  const app = {
    code: null,
    joinUrl: null, // the server's join URL for this code (GET /api/join/{code})
    joinUrlFor: null,
    state: null,
    tossupId: null,
    buzzes: new Map(), // buzz_id -> {team, player, word_index, ruling, points, answer}
    lastRuling: null,
    lostRaces: [], // buzz_refused (lost_race) events of this tossup
    final: null, // the state of the room's match that ended, kept up until the next one starts
  };

  // High contrast and large type (?contrast=high, or the H key; kept on this screen):
  // black and white, larger text, heavier marks.
  const contrastParam = new URLSearchParams(location.search).get("contrast");
  function rememberContrast(on) {
    try {
      if (on) window.localStorage.setItem("grace-arena:contrast", "high");
      else window.localStorage.removeItem("grace-arena:contrast");
    } catch (e) { /* storage off: for this page only */ }
  }
  function storedContrast() {
    try { return window.localStorage.getItem("grace-arena:contrast") === "high"; } catch (e) { return false; }
  }
  if (contrastParam) rememberContrast(contrastParam === "high");
  function setContrast(on) {
    document.documentElement.classList.toggle("high-contrast", on);
    window.dispatchEvent(new Event("resize")); // (the text and the tables are fitted again)
  }
  setContrast(contrastParam ? contrastParam === "high" : storedContrast());
  document.addEventListener("keydown", (e) => {
    if (e.key !== "h" && e.key !== "H") return;
    if (e.ctrlKey || e.metaKey || e.altKey || (e.target && e.target.tagName === "INPUT")) return;
    const on = !document.documentElement.classList.contains("high-contrast");
    rememberContrast(on);
    setContrast(on);
  });

  // -- connection (common.js: reconnects by itself, answers pings) -------------------------

  // The projector's grant (?token=, printed by serve with the room's moderator token): while
  // another room of the event has yet to read what this room reads, the server opens the
  // room's display only with it.
  const grant = new URLSearchParams(location.search).get("token");

  function displayHello() {
    const hello = { type: "hello", role: "display", join_code: app.code };
    if (grant) hello.token = grant;
    return hello;
  }

  const link = createLink({
    hello: displayHello,
    onMessage: handle,
    onStatus: setConn,
  });

  function setConn(text) {
    $("conn").textContent = text || "";
    $("conn").hidden = !text;
  }

  // -- messages ------------------------------------------------------------------------------

  function handle(msg) {
    // the reader's voice (reader.js) hears every message first: a buzz stops it at once
    if (window.GraceArenaReader) window.GraceArenaReader.handle(msg);
    switch (msg.type) {
      case "state":
        // a change's events come inside the state that follows from them
        (msg.events || []).forEach(onEvent);
        // (the curves first: the text is fitted to the room they leave it)
        drawCurves(msg);
        app.receivedAt = Date.now() / 1000;
        onState(msg);
        announceEvents(msg.events || []);
        setConn(recordNotice(msg));
        return;
      case "next_match":
        // the room moved on: hello again on this connection, into its next match; the
        // result of the one that ended stays up
        app.code = normaliseCode(msg.join_code);
        if (app.state && app.state.match.phase === "ended") app.final = app.state;
        app.state = null;
        resetTossup(null);
        if (!app.final) {
          setBanner("", "On to the next match", "");
          $("tossup-info").textContent = "";
        }
        link.send(displayHello());
        return;
      case "error":
        if (msg.in_reply_to === "hello" && msg.code === "unauthorized") {
          // another room has yet to read this room's words: the projector's link (with its
          // grant) opens it, a code alone does not
          link.stop();
          $("screen").hidden = true;
          $("code-form").hidden = false;
          $("code-error").textContent = msg.message;
          $("code-error").hidden = false;
        } else if (msg.in_reply_to === "hello" && msg.code === "not_found") {
          link.stop();
          $("screen").hidden = true;
          $("code-form").hidden = false;
          $("code-error").textContent = "No live match with the code " + app.code + ".";
          $("code-error").hidden = false;
        }
        return;
      default:
        return;
    }
  }

  function resetTossup(id) {
    app.tossupId = id;
    app.buzzes = new Map();
    app.lastRuling = null;
    app.lostRaces = [];
  }

  function onEvent(ev) {
    switch (ev.type) {
      case "player_joined":
        names.set(ev.player, ev.name);
        break;
      case "tossup_started":
        resetTossup(ev.tossup_id);
        break;
      case "buzz_accepted":
        app.buzzes.set(ev.buzz_id, {
          team: ev.team, player: ev.player, word_index: ev.word_index,
          ruling: null, points: null, answer: null,
        });
        app.lastRuling = null;
        break;
      case "buzz_refused":
        if (ev.reason === "lost_race") app.lostRaces.push(ev);
        break;
      case "ruled": {
        const buzz = app.buzzes.get(ev.buzz_id) ||
          { team: ev.team, player: ev.player, word_index: null };
        // (an undo gives the buzz back the ruling it had before: a prompt, or none)
        (buzz.earlier = buzz.earlier || []).push({ ruling: buzz.ruling, points: buzz.points });
        buzz.ruling = ev.ruling;
        buzz.points = ev.points;
        if (ev.answer != null) buzz.answer = ev.answer; // revealed to displays with the ruling
        app.buzzes.set(ev.buzz_id, buzz);
        app.lastRuling = Object.assign({ buzz_id: ev.buzz_id }, buzz);
        break;
      }
      case "ruling_undone": {
        const buzz = app.buzzes.get(ev.buzz_id);
        if (buzz) {
          const before = (buzz.earlier && buzz.earlier.pop()) || { ruling: null, points: null };
          buzz.ruling = before.ruling;
          buzz.points = before.points;
        }
        app.lastRuling = null;
        break;
      }
      default:
        break;
    }
  }

  function onState(state) {
    app.state = state;
    // the moderator moved on: the next match's first tossup (the end screen stays till then)
    if (app.final && (state.match.id === app.final.match.id || state.match.phase !== "idle" ||
                      state.match.tossups_played > 0)) {
      app.final = state.match.id === app.final.match.id ? state : null;
    }
    link.entered();
    learnNames(state);
    const id = state.tossup ? state.tossup.id : null;
    if (id !== app.tossupId) resetTossup(id);
    // A display that connects mid-buzz learns of the floor from the state alone.
    if (state.floor && !app.buzzes.has(state.floor.buzz_id)) {
      app.buzzes.set(state.floor.buzz_id, {
        team: state.floor.team, player: state.floor.player, word_index: state.floor.word_index,
        ruling: null, points: null, answer: null,
      });
    }
    render();
  }

  // -- what a screen reader is told (#announce, a live region) -------------------------------

  function announceEvents(events) {
    const said = events.map(eventWords).filter(Boolean);
    if (said.length) announce(said.join(". "));
  }

  function eventWords(ev) {
    const who = (teamId, player) => {
      const t = team(teamId);
      return t && t.kind === "model" ? teamName(teamId) : teamName(teamId) + ", " + playerName(teamId, player);
    };
    const pts = (p) => (p > 0 ? " plus " + p : p < 0 ? " minus " + Math.abs(p) : "");
    switch (ev.type) {
      case "buzz_accepted":
        return who(ev.team, ev.player) + " buzzed";
      case "ruled":
        return who(ev.team, ev.player) + ": " + (ev.ruling === "prompt" ? "prompt" : ev.ruling) +
          pts(ev.points) + (ev.power ? " power" : "");
      case "bonus_started":
        return "Bonus for " + teamName(ev.team);
      case "bonus_part_ruled":
        return "Bonus part " + (ev.part + 1) + ", " + teamName(ev.team) + ": " +
          (ev.choice === "abstain" ? "abstained" : ev.ruling) + pts(ev.points);
      case "tossup_ended":
        return ev.outcome === "time_up" ? "Dead tossup" : null;
      case "match_ended":
        return "Match over";
      default:
        return null;
    }
  }

  // -- rendering -----------------------------------------------------------------------------

  function team(id) {
    return (app.state && app.state.teams.find((t) => t.id === id)) || null;
  }
  function teamName(id) {
    const t = team(id);
    return t ? t.name : id;
  }
  // Players' names reach non-moderators with the floor (player_name) and with player_joined
  // events; remember them for the rulings, which carry only ids.
  const names = new Map();
  function learnNames(state) {
    for (const t of state.teams) {
      for (const [id, name] of Object.entries(t.players || {})) names.set(id, name);
    }
    if (state.floor) names.set(state.floor.player, state.floor.player_name);
  }

  function playerName(teamId, playerId) {
    if (names.has(playerId)) return names.get(playerId);
    const t = team(teamId);
    return (t && t.players && t.players[playerId]) || playerId;
  }
  function signed(points) {
    return points > 0 ? "+" + points : points < 0 ? "−" + Math.abs(points) : "0";
  }

  function setBanner(kind, title, sub) {
    const banner = $("banner");
    banner.hidden = !title;
    banner.className = "banner" + (kind ? " " + kind : "");
    banner.textContent = title || "";
    if (sub) {
      const line = document.createElement("span");
      line.className = "sub";
      line.textContent = sub;
      banner.appendChild(line);
    }
  }

  // The join URL as the server gives it (its public address: the page itself may have been
  // opened on the server's own machine, by 127.0.0.1), shown as text beside the QR code.
  function loadJoinUrl(code) {
    if (app.joinUrlFor === code) return;
    app.joinUrlFor = code;
    fetch("/api/join/" + encodeURIComponent(code), { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .then((info) => {
        if (!info || app.joinUrlFor !== code) return;
        app.joinUrl = info.join_url || null;
        render();
      })
      .catch(() => { app.joinUrlFor = null; }); // tried again with the next state
  }

  function shortUrl(url) {
    return String(url).replace(/^http:\/\//, "");
  }

  function roomLabel(name) {
    return /^\d+$/.test(String(name)) ? "Room " + name : String(name);
  }

  // a bonus as it is read, with its running total: the lead-in, the parts up so far with the
  // answers of those over, and whose turn it is
  function renderBonus(b) {
    const text = $("text");
    text.textContent = "";
    text.style.fontSize = "";
    const lead = document.createElement("span");
    lead.className = "bonus-leadin";
    lead.textContent = b.leadin + " ";
    text.appendChild(lead);
    for (const p of b.parts) {
      if (p.text == null) continue;
      const line = document.createElement("span");
      line.className = "bonus-part" + (p.number === b.part + 1 && !b.done ? " current" : "");
      line.textContent = "[" + p.value + (p.difficulty || "") + "] " + p.text;
      if (p.answer) {
        const ans = document.createElement("span");
        ans.className = "answer-line";
        const got = p.points ? teamName(b.team) + " +" + p.points :
          p.bounceback_points ? teamName(p.bounceback_team) + " +" + p.bounceback_points : "no points";
        ans.textContent = "ANSWER: ";
        appendMarkup(ans, p.answer);
        const how = p.choice === "consult" ? " (after consulting the model)" :
          p.choice === "abstain" ? " (abstained)" : "";
        ans.append(" — " + got + how);
        line.appendChild(ans);
      }
      text.appendChild(line);
    }
    // all of it in its box if the type can shrink that far; else the part up at the box's
    // top (a part starts a line: no line is cut in half under the banner)
    fitText(text);
    const current = text.querySelector(".bonus-part.current") ||
      text.querySelector(".bonus-part:last-of-type");
    if (text.scrollHeight > text.clientHeight + 1 && current) {
      text.scrollTop = current.offsetTop - text.offsetTop;
    } else {
      text.scrollTop = 0;
    }
    if (b.done) {
      const others = Object.entries(b.points).filter(([t, p]) => t !== b.team && p)
        .map(([t, p]) => teamName(t) + " took " + p + " on bouncebacks").join(" · ");
      setBanner("correct", teamName(b.team) + " scored " + (b.points[b.team] || 0) + " on the bonus", others);
    } else if (b.turn) {
      const who = b.bounceback ? "Bounceback: " + teamName(b.turn) : teamName(b.turn) + "'s bonus";
      const c = b.consulted;
      const seen = c ? " · the model (" + c.model + ") says " + (c.guess ? "“" + c.guess + "”" : "nothing") +
        (c.confidence == null ? "" : ", confidence " + Math.round(c.confidence * 100) + "%") : "";
      const stakes = b.consult && !b.bounceback && !c && !b.answer && b.consult_points ?
        " · alone " + b.consult_points[0] + ", after consulting " + b.consult_points[1] +
          ", a right abstention " + b.consult_points[2] : "";
      setBanner("", who, (b.prompted ? "prompted: saying more" :
        b.answer ? "answered “" + b.answer + "”" : "part " + (b.part + 1) + " of " + b.parts.length) +
        seen + stakes);
    }
    $("answer").hidden = true;
    renderScores();
  }

  // the officiating line (a timeout, the conferral clock, halftime, overtime), ticking
  function showOfficiating() {
    const s = app.state;
    const offset = s ? s.server_time - app.receivedAt : 0;
    const clock = window.GraceArena.gameClockLine(s, offset);  // timed halves
    const line = [clock, officiatingLine(s, offset)].filter(Boolean).join(" · ");
    const box = $("officiating");
    box.hidden = !line;
    if (box.textContent !== (line || "")) box.textContent = line || "";
  }
  setInterval(showOfficiating, 250);

  function render() {
    const s = app.state;
    if (!s) return;
    $("title").textContent = s.event ?
      s.event.title + " · Round " + s.event.round + " of " + s.event.rounds + " · " +
        roomLabel(s.event.room) :
      s.match.title;
    $("join-code").textContent = s.match.join_code;
    const qrSrc = "/api/join/" + encodeURIComponent(s.match.join_code) + "/qr.svg";
    if ($("qr").getAttribute("src") !== qrSrc) $("qr").setAttribute("src", qrSrc);
    loadJoinUrl(s.match.join_code);
    const url = app.joinUrlFor === s.match.join_code && app.joinUrl ? shortUrl(app.joinUrl) :
      location.host + "/?code=" + s.match.join_code;
    $("join-url").textContent = url;

    const phase = s.match.phase;
    if (phase === "ended" || app.final) {
      renderEnd(app.final || s, app.final ? s : null);
      return;
    }
    const tossup = s.tossup;
    let info = "";
    if (tossup) {
      info = window.GraceArena.tossupLabel(s);
      if (tossup.category) info += " · " + tossup.category;
      if (s.match.paused) info += " · paused";
    } else if (phase === "idle") {
      info = tossupsCount(s.match) + " · waiting for the first tossup";
    }
    if (s.event && (phase === "idle" || !tossup)) {
      info = s.teams.map((t) => t.name).join(" vs ") + (info ? " · " + info : "");
    }
    const bonus = s.bonus && (phase === "bonus" || (s.bonus.done && phase === "answered")) ? s.bonus : null;
    if (bonus) {
      info = "Bonus " + bonus.number + " · " + teamName(bonus.team) +
        (bonus.category ? " · " + bonus.category : "") + " · " + (bonus.points[bonus.team] || 0) +
        " so far";
    }
    $("tossup-info").textContent = info;
    showOfficiating();
    renderLog();
    if (bonus) {
      renderBonus(bonus);
      return;
    }

    // the question text, with buzz positions marked
    const text = $("text");
    text.textContent = "";
    const words = (tossup && tossup.words) || [];
    const marks = new Map();
    for (const b of app.buzzes.values()) {
      if (b.word_index != null) {
        marks.set(b.word_index, b.ruling === "incorrect" ? "neg" : b.ruling === "correct" ? "correct" : "");
      }
    }
    const reading = LIVE.has(phase) && phase !== "awaiting";
    words.forEach((word, i) => {
      const span = document.createElement("span");
      span.className = "w" + (reading && i === words.length - 1 ? " latest" : "");
      if (marks.has(i)) span.className += " buzzed" + (marks.get(i) ? " " + marks.get(i) : "");
      span.textContent = word;
      text.append(span, " ");
    });

    // the banner: who has the floor, or the latest ruling with the guess
    if (HAS_FLOOR.has(phase) && s.floor) {
      const f = s.floor;
      const word = words[f.word_index];
      setBanner(
        "",
        (f.kind === "model" ? teamName(f.team) : teamName(f.team) + " — " + f.player_name) +
          (phase === "prompted" ? " (prompt)" : " buzzed"),
        "on word " + (f.word_index + 1) + (word ? ": " + word : ""),
      );
    } else if (app.lastRuling) {
      const r = app.lastRuling;
      const isModel = Boolean(team(r.team) && team(r.team).kind === "model");
      const who = isModel ? teamName(r.team) : teamName(r.team) + " — " + playerName(r.team, r.player);
      const said = r.answer ? (isModel ? "guessed" : "answered") +
        " “" + r.answer + "” · " : "";
      setBanner(r.ruling, who, said + r.ruling + (r.points ? " " + signed(r.points) : ""));
    } else if (phase === "thrown_out") {
      setBanner("", "Tossup thrown out", "");
    } else if (phase === "dead") {
      setBanner("", "Dead tossup", "");
    } else {
      setBanner("", "", "");
    }

    // the answer line once the tossup is over (the server sends it only then)
    const answer = $("answer");
    if (tossup && tossup.answer && FINISHED.has(phase)) {
      answer.hidden = false;
      answer.textContent = "ANSWER: ";
      appendMarkup(answer, tossup.answer);
    } else {
      answer.hidden = true;
    }

    fitText(text);
    text.scrollTop = text.scrollHeight; // the newest words, if even the smallest type overflows
    renderScores();
  }

  // this tossup's buzzes, in order, each with its ruling in force (a prompt ruled correct
  // then reads "correct"), kept up through the bonus the tossup earned
  function renderLog() {
    const log = $("log");
    log.textContent = "";
    for (const b of app.buzzes.values()) {
      const li = document.createElement("li");
      if (b.ruling) li.className = b.ruling;
      const t = team(b.team);
      let line = teamName(b.team) +
        (t && t.kind === "model" ? "" : " · " + playerName(b.team, b.player));
      if (b.word_index != null) line += " @" + (b.word_index + 1);
      if (b.answer) line += " “" + b.answer + "”";
      if (b.ruling) line += " " + b.ruling + (b.points ? " " + signed(b.points) : "");
      // (a mark as well as a colour: ✓ right, ✗ wrong, ? a prompt)
      li.textContent = ({ correct: "✓ ", incorrect: "✗ ", prompt: "? " }[b.ruling] || "") + line;
      log.appendChild(li);
    }
    for (const ev of app.lostRaces.slice(-3)) {
      const li = document.createElement("li");
      const margin = ev.margin != null ? " by " + Math.round(ev.margin * 1000) + " ms" : "";
      li.textContent = teamName(ev.team) + " · " + playerName(ev.team, ev.player) +
        " lost the race" + margin;
      log.appendChild(li);
    }

    const section = $("log-section");
    section.hidden = log.childElementCount === 0;
    // the latest buzzes that fit, and how many earlier ones are left out (no line cut)
    const over = () => section.scrollHeight > section.clientHeight + 1;
    let left = 0;
    let earlier = null;
    while (over() && log.childElementCount > (earlier ? 2 : 1)) {
      if (!earlier) {
        earlier = document.createElement("li");
        earlier.className = "earlier";
        log.prepend(earlier);
      }
      earlier.nextElementSibling.remove();
      left += 1;
      earlier.textContent = "… " + left + " earlier";
    }
  }

  // The text as revealed, all of it in its box: the type shrinks (down to MIN_TEXT_PX) when
  // the words outgrow the box, as when the buzz banner takes its place above the text; scrolled
  // to its end instead, the first lines would be hidden under the banner.
  // At the smallest type, the model players' chart below the text gives up its room (down to
  // its least height, where its axis labels are still legible, and is drawn again at its new
  // size) before a word is hidden; only if the words still do not fit does it go below that,
  // to a short chart (CHART_LEAST_PX, its 0 and 100% labels still on it), rather than hide the
  // first lines.
  const MIN_TEXT_PX = 18;
  const CHART_LEAST_PX = 56;
  function fitText(box) {
    box.style.fontSize = "";
    let size = parseFloat(getComputedStyle(box).fontSize);
    const over = () => box.scrollHeight > box.clientHeight + 1;
    while (over() && size > MIN_TEXT_PX) {
      size = Math.max(MIN_TEXT_PX, size * 0.95);
      box.style.fontSize = size + "px";
    }
    const curves = $("curves");
    if (!over() || !curves || curves.hidden) return;
    const least = parseFloat(getComputedStyle(curves).minHeight) || 0;
    let height = curves.getBoundingClientRect().height;
    while (over() && height > least) {
      height = Math.max(least, height - 8);
      curves.style.flexBasis = height + "px";
    }
    const caption = curves.querySelector(".trajectory-caption");
    const floor = CHART_LEAST_PX + (caption ? caption.getBoundingClientRect().height + 4 : 0);
    while (over() && height > floor) {
      height = Math.max(floor, height - 8);
      curves.style.minHeight = height + "px";
      curves.style.flexBasis = height + "px";
    }
    window.GraceArena.trajectory.showOnDisplay(app.state);
  }

  // The model players' chart at the room its stylesheet gives it (fitText may take some back).
  function drawCurves(state) {
    if (!window.GraceArena.trajectory) return;
    const curves = $("curves");
    if (curves) {
      curves.style.flexBasis = "";
      curves.style.minHeight = "";
    }
    window.GraceArena.trajectory.showOnDisplay(state);
  }

  // The end of a match: who won and the final score, in place of the text, until the
  // moderator starts the room's next match (``next``: its lobby, when the room moved on).
  // How many tossups the match has (its packet's, or those read once it is over): the count
  // every screen says, so that a packet that lost a question is never counted as whole.
  function tossupsCount(match, over) {
    const n = over ? match.tossups_played : match.tossups_total;
    return n + (n === 1 ? " tossup" : " tossups") + (over ? " read" : "");
  }

  function renderEnd(final, next) {
    const r = final.match.result;
    const teams = final.teams.map((t) => t.name).join(" vs ");
    const what = final.event ? "Round " + final.event.round + " · " + teams : teams;
    setBanner("final", r ? r.text : "Match over",
              what + " · final score · " + tossupsCount(final.match, true));
    const text = $("text");
    text.textContent = "";
    text.style.fontSize = "";
    const list = document.createElement("ol");
    list.className = "final-scores";
    const ranked = final.teams.slice().sort((a, b) => b.score - a.score);
    for (const t of ranked) {
      const li = document.createElement("li");
      if (r && r.winner === t.id) li.className = "winner";
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = t.name;
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = signedScore(t.score);
      li.append(name, score);
      list.appendChild(li);
    }
    text.appendChild(list);
    fitFinal(text, list);
    let info = "Match over";
    if (next) {
      const nextTeams = next.teams.map((t) => t.name).join(" vs ");
      info = "Next here: " + nextTeams + " — when the moderator starts it";
    } else if (final.event && final.event.waiting) {
      info = "Match over · " + final.event.waiting;
    }
    $("tossup-info").textContent = info;
    $("answer").hidden = true;
    $("log-section").hidden = true;
    renderScores(final);
  }

  // The final scores all in sight, however many teams and however short the screen: the rows'
  // type shrinks (down to MIN_TEXT_PX) until the list fits the text's box.
  function fitFinal(box, list) {
    list.style.fontSize = "";
    let size = parseFloat(getComputedStyle(list.firstElementChild || list).fontSize);
    while (box.scrollHeight > box.clientHeight + 1 && size > MIN_TEXT_PX) {
      size = Math.max(MIN_TEXT_PX, size * 0.92);
      list.style.fontSize = size + "px";
    }
  }

  function signedScore(points) {
    return points < 0 ? "−" + Math.abs(points) : String(points);
  }

  function renderScores(shown) {
    const s = shown || app.state;
    const phase = s.match.phase;
    const list = $("scores");
    list.textContent = "";
    for (const t of s.teams) {
      const li = document.createElement("li");
      if (t.locked_out && LIVE.has(phase)) li.className = "locked";
      const name = document.createElement("span");
      name.textContent = t.name;
      const kind = document.createElement("span");
      kind.className = "kind";
      const n = typeof t.size === "number" ? t.size : Object.keys(t.players || {}).length;
      kind.textContent = t.kind === "model" ? "model" : n + (n === 1 ? " player" : " players");
      // a hybrid team's AI players (QANTA 2026): name, weight class, mode
      const short = { lightweight: "LW", midweight: "MW", heavyweight: "HW" };
      if (t.ais && t.ais.length) {
        kind.textContent += " + " + t.ais.map((a) => a.name + " (" + (short[a.weight_class] || "") +
          ", " + (a.mode === "autonomous" ? "auto K=" + a.k : a.mode) + ")").join(", ");
      }
      name.appendChild(kind);
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = String(t.score);
      li.append(name, score);
      list.appendChild(li);
    }
  }

  // a new screen size: the text is fitted to it again
  window.addEventListener("resize", () => {
    if (!app.state) return;
    drawCurves(app.state);
    render();
  });

  // -- start ---------------------------------------------------------------------------------

  function start(code) {
    app.code = code;
    $("code-form").hidden = true;
    $("code-error").hidden = true;
    $("screen").hidden = false;
    $("join-code").textContent = code;
    const url = new URL(location.href);
    url.searchParams.set("code", code);
    history.replaceState(null, "", url.toString());
    link.start();
  }

  $("code-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const code = normaliseCode($("code-input").value);
    if (code) start(code);
  });

  const params = new URLSearchParams(location.search);
  const fromUrl = normaliseCode(params.get("code"));
  if (fromUrl) start(fromUrl);
  else if (!params.get("event")) $("code-form").hidden = false; // ?event=: standings.js
})();
