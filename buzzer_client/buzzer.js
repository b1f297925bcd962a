// The buzzer page: join a match, pick a team and a name, buzz. In an event's room the page
// follows the room from round to round (next_match), and waits while the team has no match.
// After each ruling on its team's buzz it shows the points ("+15 power", "−5"); at the end of
// a match the result and, in an event, the team's place in the standings (kept up in the next
// match's lobby); sent to another room, it says which before it goes.
//
// Plain script, no build step, no network access beyond this server. The messages are the ones
// in docs/protocol.md (grace_arena/protocol.py on the server). Everything shown that came from
// other people (names, answers) goes through textContent, never innerHTML.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const LIVE = new Set(["reading", "awaiting", "buzzed", "prompted"]);
  const HAS_FLOOR = new Set(["buzzed", "prompted"]);
  const FINISHED = new Set(["answered", "dead", "thrown_out"]);
  const {
    appendMarkup, plainText, normaliseCode, createLink, recordNotice, announce,
  } = window.GraceArena;
  // One buzz in flight at a time: a second press (or the click that follows a pointerdown)
  // before the server's answer is dropped. The wait gives up after this long.
  const PENDING_BUZZ_MS = 3000;
  // How long "Your next match is in room 2" is up before the page goes there.
  const MOVE_MS = 3000;
  const STANDING_MS = 5000;

  // localStorage can throw (Safari private mode, storage disabled): then nothing persists.
  const store = {
    get(key) {
      try { return window.localStorage.getItem("grace-arena:" + key); } catch (e) { return null; }
    },
    set(key, value) {
      try { window.localStorage.setItem("grace-arena:" + key, value); } catch (e) { /* ignore */ }
    },
    remove(key) {
      try { window.localStorage.removeItem("grace-arena:" + key); } catch (e) { /* ignore */ }
    },
  };
  const tokenKey = (code) => "token:" + code;

  const app = {
    code: null,
    helloToken: null,
    me: null, // {player, team, name}
    teams: [], // from welcome: the human teams one may join (with their roster's names)
    walkIns: true, // from welcome: whether a name not on the roster may join
    chosenTeam: null,
    state: null,
    serverOffset: 0, // server clock - local clock, from state.server_time (display only)
    tossupId: null,
    lastResult: null, // our latest buzz_result, with the floor it lost to
    lastRuling: null, // the latest `ruled` event of this tossup
    answerSent: null,
    bonusSent: null, // what this phone sent for the current bonus part (until it is ruled)
    preAnswerSent: null, // [part key, text]: this player's own answer before the model's
    pendingBuzzAt: null, // when our unanswered buzz was sent (performance.now())
    notice: null, // {text, until}
    waiting: null, // the server's message while the team has no match here yet
    arrived: null, // the room this phone was moved to for its next match, until it starts
    room: null, // the event room this page is in (its name), from welcome and state
    mine: null, // the latest ruling on this team's buzz in this tossup (its points)
    final: null, // {text, standing}: how the team's last match ended, until the next starts
    moving: null, // "Your next match is in Room 2": up while the page goes there
  };

  // -- connection (common.js: reconnects by itself, answers pings) -------------------------

  const link = createLink({
    hello: helloMessage,
    onMessage: handle,
    onStatus: (text) => {
      setConn(text);
      if (text) render();
    },
    onConnect: () => { app.pendingBuzzAt = null; },
    reconnectingText: "Connection lost — reconnecting…",
  });
  const send = link.send;

  function helloMessage() {
    const token = store.get(tokenKey(app.code));
    app.helloToken = token;
    const hello = { type: "hello", role: "player", join_code: app.code };
    if (token) hello.token = token;
    return hello;
  }

  // -- messages ------------------------------------------------------------------------------

  function handle(msg) {
    switch (msg.type) {
      case "welcome":
        app.teams = Array.isArray(msg.teams) ? msg.teams : [];
        app.walkIns = msg.walk_ins !== false;
        if (msg.event) app.room = msg.event.room;
        showWhere(msg);
        if (msg.needs_join) {
          app.me = null;
          showView("join");
          renderTeams();
        }
        return;
      case "joined":
        app.me = { player: msg.player, team: msg.team, name: msg.name };
        store.set(tokenKey(app.code), msg.token);
        store.set("name", msg.name);
        if (!app.waiting) showView("play");
        return;
      case "next_match":
        onNextMatch(msg);
        return;
      case "waiting":
        onWaiting(msg);
        return;
      case "state":
        // a change's events come inside the state that follows from them
        (msg.events || []).forEach(onEvent);
        onState(msg);
        announceEvents(msg.events || []);
        return;
      case "buzz_result":
        app.pendingBuzzAt = null;
        app.lastResult = {
          outcome: msg.outcome,
          margin: msg.margin,
          floorBuzzId: app.state && app.state.floor ? app.state.floor.buzz_id : null,
        };
        if (msg.outcome === "not_live") notify("No tossup is live right now.");
        if (msg.outcome === "lost_race") announce("Lost the race");
        if (msg.outcome === "locked_out") announce("Locked out: your team answered on this tossup");
        render();
        return;
      case "error":
        onError(msg);
        return;
      default:
        return; // pong and anything newer: nothing to do
    }
  }

  // The room moved on (or the team's match opened in another room): hello again on this same
  // connection, with the same token. A player's token is valid in every room and round of
  // the event, so it is kept under the new code too (a reload then comes back there).
  function onNextMatch(msg) {
    const code = normaliseCode(msg.join_code);
    const token = store.get(tokenKey(app.code));
    if (token) store.set(tokenKey(code), token);
    const last = app.state;
    if (last && last.match.phase === "ended") keepResult(last);
    // another room: say so, with the room, before going there
    const elsewhere = app.room != null && msg.room != null && String(msg.room) !== String(app.room);
    if (elsewhere) {
      app.moving = "Your next match is in " + roomLabel(msg.room) + " — moving you there";
      app.state = null;
      if (app.waiting) $("wait-message").textContent = app.moving;
      render();
      setTimeout(() => goTo(code, msg), MOVE_MS);
      return;
    }
    goTo(code, msg);
  }

  function goTo(code, msg) {
    app.moving = null;
    const elsewhere = app.room != null && msg.room != null && String(msg.room) !== String(app.room);
    if (elsewhere) app.arrived = msg.room;
    app.room = msg.room;
    app.state = null;
    app.waiting = null;
    app.tossupId = null;
    app.lastResult = null;
    app.lastRuling = null;
    app.mine = null;
    app.answerSent = null;
    app.pendingBuzzAt = null;
    setCode(code);
    $("status-title").textContent = "Moving to " + roomLabel(msg.room) + "…";
    $("status-detail").textContent = "";
    send(helloMessage());
  }

  function onWaiting(msg) {
    app.waiting = msg.message || "Your team has no match here yet.";
    // the team has played all its matches: thanked, not asked to keep the page open
    $("wait-hint").hidden = Boolean(msg.done);
    app.state = null;
    link.entered();
    showView("wait");
    render();
  }

  function onState(state) {
    app.state = state;
    app.waiting = null;
    if (state.event) app.room = state.event.room;
    if (state.match.phase === "ended") keepResult(state);
    else if (state.match.phase !== "idle" || state.match.tossups_played > 0) {
      app.final = null;
      app.arrived = null;
    }
    link.entered();
    learnNames(state);
    app.serverOffset = state.server_time - Date.now() / 1000;
    const tossupId = state.tossup ? state.tossup.id : null;
    if (tossupId !== app.tossupId || state.match.phase === "idle") {
      app.tossupId = tossupId;
      app.lastResult = null;
      app.lastRuling = null;
      app.answerSent = null;
    }
    if (!state.floor || !app.me || state.floor.player !== app.me.player) app.answerSent = null;
    if (app.me) showView("play");
    setConn(recordNotice(state));
    render();
  }

  function onEvent(ev) {
    if (ev.type === "player_joined") names.set(ev.player, ev.name);
    if (ev.type === "protest_filed" && app.me && ev.player === app.me.player &&
        ev.team === app.me.team) {
      $("protest-said").textContent = "Protest filed: the TD resolves it after the game.";
      $("protest-answer").value = "";
      $("protest-reason").value = "";
    }
    if (ev.type === "bonus_part_ruled" || ev.type === "bonus_started") app.bonusSent = null;
    if (ev.type === "ruled") {
      app.lastRuling = ev;
      app.answerSent = null;
      if (app.me && ev.team === app.me.team && ev.ruling !== "prompt") app.mine = ev;
    } else if (ev.type === "ruling_undone") {
      if (app.mine && app.mine.buzz_id === ev.buzz_id) app.mine = null;
    } else if (ev.type === "tossup_started") {
      app.lastResult = null;
      app.lastRuling = null;
      app.mine = null;
    }
  }

  function onError(msg) {
    app.pendingBuzzAt = null;
    if (msg.in_reply_to === "hello") {
      if (msg.code === "unauthorized" && app.helloToken) {
        // The server no longer knows this token (a new match, another server): join afresh.
        store.remove(tokenKey(app.code));
        app.me = null;
        send(helloMessage());
        return;
      }
      if (msg.code === "not_found") {
        link.stop();
        showView("code");
        showError("code-error", "No live match with the code " + app.code + ". Check the code.");
        return;
      }
    }
    if (msg.in_reply_to === "join") {
      showError("join-error", msg.message);
      return;
    }
    if (msg.in_reply_to === "protest") {
      $("protest-said").textContent = "Not filed: " + (msg.message || "the server refused it.");
      return;
    }
    notify(msg.message || "The server refused that.");
    render();
  }

  // -- what a screen reader is told (#announce, a live region) -------------------------------
  // Said once each: a tossup or bonus starts, a buzz takes the floor, a ruling (with its
  // points), a bonus part ruled, the end of the match. The status box is not a live region:
  // its countdown changes every second.

  function announceEvents(events) {
    const said = events.map(eventWords).filter(Boolean);
    if (said.length) announce(said.join(". "));
  }

  function eventWords(ev) {
    const me = app.me;
    const mine = (ev.player && me && ev.player === me.player);
    const who = (team, player) => mine ? "You" : isModel(team) ? teamName(team) :
      teamName(team) + ", " + playerName(team, player);
    switch (ev.type) {
      case "tossup_started":
        return "Tossup " + (app.state && app.state.tossup ? app.state.tossup.number : "") +
          " is being read: buzz when you know it";
      case "buzz_accepted":
        return who(ev.team, ev.player) + (mine ? " have the floor" : " buzzed");
      case "ruled": {
        const pts = ev.points ? " " + signedWords(ev.points) + (ev.power ? " power" : "") : "";
        return who(ev.team, ev.player) + ": " + rulingWords(ev.ruling) + pts;
      }
      case "ruling_undone":
        return "The ruling was undone";
      case "bonus_started":
        return "Bonus for " + teamName(ev.team);
      case "bonus_part_ruled":
        return "Bonus part " + (ev.part + 1) + (ev.bounceback ? " bounceback, " : ", ") +
          teamName(ev.team) + ": " + (ev.choice === "abstain" ? "abstained" : rulingWords(ev.ruling)) +
          (ev.points ? " " + signedWords(ev.points) : "");
      case "match_ended":
        return "Match over" + (app.state && app.state.match.result ? ": " + app.state.match.result.text : "");
      default:
        return null;
    }
  }

  function rulingWords(ruling) {
    return { correct: "correct", incorrect: "incorrect", prompt: "prompt: say more" }[ruling] || ruling;
  }

  function signedWords(points) {
    return points > 0 ? "plus " + points : "minus " + Math.abs(points);
  }

  // -- actions -------------------------------------------------------------------------------

  function buzz() {
    const pressedAt = Date.now() / 1000; // first thing: the press time on our clock
    if (buzzPending() || !canBuzz()) return;
    if (!send({ type: "buzz", client_time: pressedAt })) return;
    app.pendingBuzzAt = performance.now();
    const button = $("buzz");
    button.classList.add("pressed");
    setTimeout(() => button.classList.remove("pressed"), 150);
    if (navigator.vibrate) { try { navigator.vibrate(40); } catch (e) { /* ignore */ } }
    render();
  }

  function buzzPending() {
    if (app.pendingBuzzAt === null) return false;
    // while the match is held (the record unavailable), a buzz waits in the server's queue:
    // it is still pending, however long the hold
    if (app.state && app.state.record && link.isOpen()) return true;
    return performance.now() - app.pendingBuzzAt < PENDING_BUZZ_MS;
  }

  function canBuzz() {
    const s = app.state;
    const me = app.me;
    if (!s || !me || !link.isOpen()) return false;
    if (!LIVE.has(s.match.phase)) return false;
    // someone has the floor: nobody can take it until the ruling (a press would be refused)
    if (HAS_FLOOR.has(s.match.phase) && s.floor) return false;
    const team = s.teams.find((t) => t.id === me.team);
    if (team && team.locked_out) return false;
    return true;
  }

  const buzzButton = $("buzz");
  // pointerdown, not click: a touch screen's click comes late. Keyboard activation of the
  // focused button (Enter) arrives as a click with detail 0.
  buzzButton.addEventListener("pointerdown", (e) => {
    if (e.button !== undefined && e.button !== 0) return;
    buzz();
  });
  buzzButton.addEventListener("click", (e) => {
    if (e.detail === 0) buzz();
  });
  buzzButton.addEventListener("contextmenu", (e) => e.preventDefault());

  const isTyping = (el) =>
    el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
           el.isContentEditable);
  const isSpace = (e) => e.code === "Space" || e.key === " " || e.key === "Spacebar";

  // One-switch mode (the checkbox under the button, or ?switch=1; kept on this phone): a
  // switch sends one key, or one press, so any key but Tab (kept for moving to the checkbox)
  // and a lone modifier, and a press anywhere on the page but on a control, buzzes. Only the
  // space bar buzzes otherwise (Enter, on the focused button, too).
  const switchBox = $("switch-mode");
  const switchFromUrl = new URLSearchParams(location.search).get("switch");
  if (switchFromUrl === "1" || switchFromUrl === "on") store.set("switch", "1");
  if (switchFromUrl === "0" || switchFromUrl === "off") store.remove("switch");
  function setSwitchMode(on) {
    switchBox.checked = on;
    document.body.classList.toggle("switch-mode-on", on);
    $("buzz-hint").textContent = on ? "or press any key" : "or press the space bar";
    buzzButton.setAttribute("aria-keyshortcuts", on ? "Space Enter" : "Space");
  }
  setSwitchMode(store.get("switch") === "1");
  switchBox.addEventListener("change", () => {
    if (switchBox.checked) store.set("switch", "1");
    else store.remove("switch");
    setSwitchMode(switchBox.checked);
  });
  const switchOn = () => switchBox.checked;
  const MODIFIERS = new Set(["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock", "Tab"]);
  const isControl = (el) => el && el.closest && el.closest("input, button, select, textarea, a, label");

  document.addEventListener("keydown", (e) => {
    if (isTyping(e.target) || $("play-view").hidden) return;
    const anyKey = switchOn() && !MODIFIERS.has(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey;
    if (!isSpace(e) && !anyKey) return;
    if (e.key === "Enter" && e.target === buzzButton) return; // (its click buzzes)
    e.preventDefault(); // no page scroll, no click on a focused button
    if (!e.repeat) buzz();
  });
  document.addEventListener("pointerdown", (e) => {
    if (!switchOn() || $("play-view").hidden || isControl(e.target)) return;
    if (e.button !== undefined && e.button !== 0) return;
    buzz();
  });
  document.addEventListener("keyup", (e) => {
    if (isSpace(e) && !isTyping(e.target) && !$("play-view").hidden) e.preventDefault();
  });

  $("answer-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("answer-input");
    const text = input.value.trim();
    if (!text) return;
    const s = app.state;
    const bonus = s && s.match.phase === "bonus" && s.bonus;
    // an answer says what it answers: a part no longer up is refused, not taken for the next
    if (bonus && bonus.pre_answer) {
      // consult rules: this player's own answer, written before the model's is revealed
      if (send({ type: "pre_answer", text: text.slice(0, 300), part: bonus.part + 1 })) {
        app.preAnswerSent = [partKey(bonus), text];
        input.value = "";
        render();
      }
      return;
    }
    const message = bonus ?
      { type: "answer", text: text.slice(0, 300), part: bonus.part + 1, bounceback: bonus.bounceback } :
      { type: "answer", text: text.slice(0, 300) };
    if (send(message)) {
      // in a bonus the answer is the team's (the first one sent stands)
      if (bonus) app.bonusSent = text;
      else app.answerSent = text;
      input.value = "";
      render();
    }
  });

  // consult rules: look at the model's answer to the part up (with what was typed so far), or
  // abstain
  $("consult").addEventListener("click", () => {
    const b = app.state && app.state.bonus;
    if (!b || !myBonusTurn()) return;
    const draft = $("answer-input").value.trim().slice(0, 300);
    send({ type: "consult", part: b.part + 1, draft: draft || null });
  });
  $("abstain").addEventListener("click", () => {
    const b = app.state && app.state.bonus;
    if (!b || !myBonusTurn()) return;
    if (send({ type: "abstain", part: b.part + 1 })) {
      app.bonusSent = "(abstained)";
      render();
    }
  });

  // a protest from the phone (where the match takes them): the tossup (its number as played)
  // or a part of its bonus, the answer given and the reason
  $("protest-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const tossup = $("protest-tossup").value;
    if (!tossup) return;
    const part = $("protest-part").value;
    const sent = send({
      type: "protest", tossup: tossup, part: part ? Number(part) : null,
      answer: $("protest-answer").value.trim().slice(0, 500),
      reason: $("protest-reason").value.trim().slice(0, 500),
    });
    $("protest-said").textContent = sent ? "Sending the protest…" : "Not connected: try again.";
  });

  function renderProtest(s) {
    const box = $("protest-box");
    const played = s && s.match.phase !== "idle" ? s.match.tossups_played : 0;
    box.hidden = !(s && s.match.phone_protests && app.me && played > 0);
    const select = $("protest-tossup");
    if (box.hidden || select.options.length === played) return;
    const chosen = select.value;
    select.textContent = "";
    for (let n = played; n >= 1; n--) {  // the latest first: the one usually protested
      const option = document.createElement("option");
      option.value = String(n);
      option.textContent = "Tossup " + n;
      select.appendChild(option);
    }
    if (chosen) select.value = chosen;
  }

  // a hybrid team's AI players (QANTA 2026): "Buzz for NAME" presses a semi AI's key (it
  // answers with its own guess); "Mute NAME" mutes one for the rest of the match
  function renderAis() {
    const row = $("ai-row");
    const s = app.state;
    const team = s && app.me && s.teams.find((t) => t.id === app.me.team);
    const ais = team && team.ais ? team.ais.filter((a) => a.mode !== "muted") : [];
    row.hidden = ais.length === 0 || s.match.phase === "ended";
    const key = JSON.stringify(ais.map((a) => [a.id, a.mode]));
    if (row.dataset.key !== key) {
      row.dataset.key = key;
      row.textContent = "";
      for (const a of ais) {
        if (a.mode === "semi") {
          const press = document.createElement("button");
          press.type = "button";
          press.className = "press-ai";
          press.textContent = "Buzz for " + a.name;
          press.addEventListener("click", () => send({ type: "press_ai", ai: a.id }));
          row.append(press);
        }
        const mute = document.createElement("button");
        mute.type = "button";
        mute.textContent = "Mute " + a.name;
        mute.addEventListener("click", () => {
          if (window.confirm("Mute " + a.name + " for the rest of the match? This cannot be undone.")) {
            send({ type: "mute_ai", ai: a.id });
          }
        });
        row.append(mute);
      }
    }
    for (const press of row.querySelectorAll(".press-ai")) press.disabled = !canBuzz();
  }

  function consultedText(c) {
    const conf = c.confidence == null ? "" : " · confidence " + Math.round(c.confidence * 100) + "%";
    return "The model (" + c.model + ") says " + (c.guess ? "“" + c.guess + "”" : "nothing") + conf;
  }

  // -- bonuses ---------------------------------------------------------------------------------

  function partKey(b) {
    return [b.id, b.part].join(":");
  }

  // this player's own answer to the part up, written before the model's was revealed
  function preAnswered(b) {
    return app.preAnswerSent && app.preAnswerSent[0] === partKey(b) ? app.preAnswerSent[1] : null;
  }

  function myBonusTurn() {
    const s = app.state;
    return Boolean(s && app.me && s.match.phase === "bonus" && s.bonus && s.bonus.turn === app.me.team);
  }

  function describeBonus(b) {
    const me = app.me;
    const part = b.parts[b.part];
    const where = "Part " + part.number + " of " + b.parts.length + " [" + part.value +
      (part.difficulty || "") + "]";
    const left = secondsLeft(app.state.deadline);
    const clock = left != null ? " (" + left + " s)" : "";
    if (b.turn === me.team) {
      const title = b.prompted ? "Prompt — your team says more" :
        b.bounceback ? "Bounceback — your team's turn" : "Bonus — your team's turn";
      let detail;
      if (b.answer) detail = "Your team answered “" + b.answer + "”" +
        (b.answered_by ? " (" + b.answered_by + ")" : "") + " — waiting for the ruling";
      else if (app.bonusSent) detail = "Sent “" + app.bonusSent + "” — waiting for the ruling";
      else if (b.prompted) detail = where + " · the moderator asks for more: type it" + clock;
      else if (b.pre_answer) detail = where + (preAnswered(b) ?
        " · you wrote “" + preAnswered(b) + "”: the model's answer is revealed" + clock :
        " · write your own answer before the model's is revealed" + clock);
      else if (b.consult && !b.bounceback && !b.consult_points) {
        // QANTA 2026: the team's AI players; a consult scores less their weight classes'
        detail = where + (b.consulted ?
          " · you saw your AIs' answers: answer, or abstain (if nobody has it)" :
          " · answer alone, consult your AI players (fewer points), or abstain (if nobody " +
            "has it)") + clock;
      }
      else if (b.consult && !b.bounceback) {
        const [own, after, abstain] = b.consult_points || [];
        detail = where + (b.consulted ?
          " · you consulted the model: answer (" + after + " if right), or abstain (" + abstain +
            " if the model is wrong)" :
          " · answer alone (" + own + " if right), consult the model (then " + after +
            "), or abstain (" + abstain + " if the model is wrong)") + clock;
      }
      else detail = where + " · type your team's answer (the first one sent stands)" + clock;
      return { state: "floor", title: title, detail: detail };
    }
    const owner = teamName(b.team) + "'s bonus";
    const doing = b.answer ? "answered “" + b.answer + "”" :
      (b.bounceback ? "bounceback to " + teamName(b.turn) : "answering");
    return { state: "waiting", title: owner, detail: where + " · " + doing };
  }

  function bonusSummary(b) {
    const marks = b.parts.map((p) => scoreText(p.points)).join("/");
    let text = teamName(b.team) + " scored " + (b.points[b.team] || 0) + " on the bonus (" + marks + ")";
    for (const [team, points] of Object.entries(b.points)) {
      if (team !== b.team && points) text += " · " + teamName(team) + " took " + scoreText(points) + " on bouncebacks";
    }
    return text;
  }

  // the bonus as read so far: its lead-in, each part up, and the answers of those over
  function renderBonusText(box, b) {
    const key = JSON.stringify([b.id, b.part, b.bounceback, b.done, b.parts.map((p) => [p.answer, p.points])]);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.textContent = "";
    const lead = document.createElement("p");
    lead.className = "bonus-leadin";
    lead.textContent = b.leadin;
    box.appendChild(lead);
    for (const p of b.parts) {
      if (p.text == null) continue;
      const line = document.createElement("p");
      line.className = "bonus-part" + (p.number === b.part + 1 && !b.done ? " current" : "");
      line.textContent = "[" + p.value + (p.difficulty || "") + "] " + p.text;
      if (p.answer) {
        const ans = document.createElement("span");
        ans.className = "answer-line";
        // an abstention is no answer: not a ✓ even when it scored (the model was wrong)
        const mark = p.choice === "abstain" ? "— abstained (+" + p.points + ") · " :
          (p.ruling === "correct" || p.bounceback_points ? "✓ " : "✗ ");
        ans.textContent = mark + "Answer: ";
        appendMarkup(ans, p.answer);
        line.appendChild(ans);
      }
      box.appendChild(line);
    }
    // the part up at the box's top when it all does not fit (a part starts a line: no line
    // is cut in half at the top)
    const current = box.querySelector(".bonus-part.current") || box.querySelector(".bonus-part:last-of-type");
    box.scrollTop = current && box.scrollHeight > box.clientHeight + 1 ?
      current.offsetTop - box.offsetTop - parseFloat(getComputedStyle(box).paddingTop) : 0;
  }

  $("code-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const code = normaliseCode($("code-input").value);
    if (!code) return;
    start(code);
  });

  $("name-input").addEventListener("input", renderClaim);

  $("join-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = $("name-input").value.trim();
    if (!app.chosenTeam) { showError("join-error", "Pick a team."); return; }
    if (!name) {
      showError("join-error", app.walkIns ? "Type your name." : "Pick your name.");
      return;
    }
    const claim = onRoster(name) ? $("claim-input").value.trim() : "";
    if (onRoster(name) && !claim) { showError("join-error", "Type your claim code."); return; }
    showError("join-error", null);
    const join = { type: "join", team: app.chosenTeam, name: name.slice(0, 40) };
    if (claim) join.code = claim.slice(0, 32);
    if (!send(join)) {
      showError("join-error", "Not connected yet — try again in a moment.");
    }
  });

  // -- views ---------------------------------------------------------------------------------

  function showView(name) {
    for (const view of ["code", "join", "play", "wait"]) $(view + "-view").hidden = view !== name;
  }

  function showError(id, text) {
    const el = $(id);
    el.textContent = text || "";
    el.hidden = !text;
  }

  function setConn(text) {
    const el = $("conn");
    el.textContent = text || "";
    el.hidden = !text;
  }

  function notify(text, ms) {
    app.notice = { text: text, until: Date.now() + (ms || 4000) };
  }

  // An event's room as said aloud: "1" -> "Room 1"; a named room keeps its name.
  function roomLabel(name) {
    return /^\d+$/.test(String(name)) ? "Room " + name : String(name || "the next room");
  }

  function renderTeams() {
    const box = $("team-choices");
    box.textContent = "";
    if (!app.teams.some((t) => t.id === app.chosenTeam)) {
      app.chosenTeam = app.teams.length === 1 ? app.teams[0].id : null;
    }
    for (const team of app.teams) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = team.name;
      button.dataset.team = team.id;
      button.setAttribute("aria-pressed", String(team.id === app.chosenTeam));
      button.addEventListener("click", () => {
        app.chosenTeam = team.id;
        for (const b of box.querySelectorAll("button")) {
          b.setAttribute("aria-pressed", String(b.dataset.team === team.id));
        }
        renderRoster();
      });
      box.appendChild(button);
    }
    const nameInput = $("name-input");
    if (!nameInput.value && app.walkIns) nameInput.value = store.get("name") || "";
    $("name-box").hidden = !app.walkIns;
    renderRoster();
  }

  // The chosen team's registered players, to pick from; a name of the roster needs its code.
  function rosterOf(teamId) {
    const team = app.teams.find((t) => t.id === teamId);
    return (team && Array.isArray(team.roster)) ? team.roster : [];
  }

  function onRoster(name) {
    const key = String(name).trim().toLowerCase();
    return rosterOf(app.chosenTeam).some((n) => n.toLowerCase() === key);
  }

  function renderRoster() {
    const names = rosterOf(app.chosenTeam);
    const box = $("roster-choices");
    box.textContent = "";
    $("roster-box").hidden = names.length === 0;
    for (const name of names) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = name;
      button.dataset.name = name;
      button.setAttribute("aria-pressed", String($("name-input").value === name));
      button.addEventListener("click", () => {
        $("name-input").value = name;
        for (const b of box.querySelectorAll("button")) {
          b.setAttribute("aria-pressed", String(b.dataset.name === name));
        }
        renderClaim();
      });
      box.appendChild(button);
    }
    renderClaim();
  }

  function renderClaim() {
    $("claim-box").hidden = !onRoster($("name-input").value);
  }

  function teamName(id) {
    const s = app.state;
    const team = (s && s.teams.find((t) => t.id === id)) || app.teams.find((t) => t.id === id);
    return team ? team.name : id;
  }

  function isModel(id) {
    const s = app.state;
    const team = s && s.teams.find((t) => t.id === id);
    return Boolean(team && team.kind === "model");
  }

  // "Red (Ann)" for a person; a model player's team alone ("Model (tfidf)"), whose player
  // is the model itself.
  function whoOf(teamId, playerId, sep) {
    if (isModel(teamId)) return teamName(teamId);
    return teamName(teamId) + sep + playerName(teamId, playerId);
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
    const s = app.state;
    const team = s && s.teams.find((t) => t.id === teamId);
    return (team && team.players && team.players[playerId]) || playerId;
  }

  function formatMs(seconds) {
    const ms = Math.round(seconds * 1000);
    if (ms < 1) return "under 1 ms"; // two presses within the same millisecond
    return ms.toLocaleString("en-US") + " ms";
  }

  function showOfficiating() {
    const line = window.GraceArena.officiatingLine(app.state, app.serverOffset);
    const box = $("officiating");
    box.hidden = !line;
    if (box.textContent !== (line || "")) box.textContent = line || "";
  }

  function secondsLeft(deadline) {
    // paused: the clock stands still with what it had left
    if (deadline == null) return app.state && app.state.held != null ? Math.ceil(app.state.held) : null;
    return Math.max(0, Math.ceil(deadline - (Date.now() / 1000 + app.serverOffset)));
  }

  // What to tell this player now: {state, title, detail}. `state` picks the colours.
  function describe() {
    const s = app.state;
    const me = app.me;
    if (app.moving) return { state: "waiting", title: app.moving, detail: "" };
    if (!s || !me) return { state: "waiting", title: "Connecting…", detail: "" };
    const phase = s.match.phase;
    if (!link.isOpen() && phase !== "ended") {
      // nothing shown of the match can be acted on until the server answers again
      return { state: "waiting", title: "Waiting for the server", detail: "Reconnecting…" };
    }
    const floor = s.floor;
    const myTeam = s.teams.find((t) => t.id === me.team);
    const answer = s.tossup && s.tossup.answer;
    const ruling = app.lastRuling;

    if (phase === "ended") {
      const next = s.event && s.event.waiting;
      const r = s.match.result;
      const won = r && r.winner === me.team;
      const read = s.match.tossups_played + (s.match.tossups_played === 1 ? " tossup" : " tossups");
      return { state: won ? "ready" : "waiting", title: r ? r.text : "Match over",
               detail: "Match over · " + read + " read · " + (next || "thanks for playing!") };
    }
    if (phase === "idle") {
      // a phone moved here from another room says so until the match starts
      const moved = app.arrived && s.event && String(s.event.room) === String(app.arrived);
      const count = s.match.tossups_total + (s.match.tossups_total === 1 ? " tossup" : " tossups");
      return { state: "waiting", title: "Waiting for the first tossup",
               detail: moved ? "Your match is in " + roomLabel(s.event.room) + " now · get ready to buzz." :
                 count + " · get ready to buzz." };
    }
    if (phase === "bonus" && s.bonus) return describeBonus(s.bonus);
    if (phase === "answered" && s.bonus && s.bonus.done) {
      return { state: s.bonus.team === me.team ? "ready" : "dead", title: "Bonus over",
               detail: bonusSummary(s.bonus) + " · waiting for the next tossup" };
    }
    if (FINISHED.has(phase)) {
      // the answer line is shown with the text (every role gets it once the tossup is over)
      const next = "Waiting for the next tossup";
      if (phase === "thrown_out") return { state: "dead", title: "Tossup thrown out", detail: next };
      if (phase === "answered" && ruling && ruling.ruling === "correct") {
        const who = ruling.player === me.player ? "You got it!" :
          isModel(ruling.team) ? teamName(ruling.team) + " got it" :
          teamName(ruling.team) + " got it (" + playerName(ruling.team, ruling.player) + ")";
        const answered = ruling.answer ? "“" + ruling.answer + "” · " : "";
        const noBonus = s.match.no_bonus ? "No bonus: " + s.match.no_bonus + " · " : "";
        return { state: ruling.team === me.team ? "ready" : "dead", title: who,
                 detail: answered + noBonus + next };
      }
      const detail = !(s.tossup && s.tossup.words && s.tossup.words.length) && answer ?
        "Answer: " + plainText(answer) : next;
      return { state: "dead", title: phase === "dead" ? "Dead tossup" : "Tossup over", detail };
    }
    if (HAS_FLOOR.has(phase) && floor) {
      if (floor.player === me.player) {
        const left = secondsLeft(s.deadline);
        const clock = left != null ? " (" + left + " s)" : "";
        let detail;
        if (s.reading.mode === "screen") {
          detail = app.answerSent ? "Sent “" + app.answerSent + "” — waiting for the ruling" :
            "Type your answer below" + clock;
        } else {
          detail = "Answer out loud" + clock;
        }
        return { state: "floor",
                 title: phase === "prompted" ? "Prompt — say more" : "You have the floor!",
                 detail: detail };
      }
      const who = (isModel(floor.team) ? teamName(floor.team) :
        teamName(floor.team) + ": " + floor.player_name) + " buzzed";
      const res = app.lastResult;
      if (res && res.outcome === "lost_race" && res.floorBuzzId === floor.buzz_id) {
        const margin = res.margin != null ? "by " + formatMs(res.margin) + " " : "";
        return { state: "lost", title: "Lost the race", detail: margin + "— " + who };
      }
      if (myTeam && myTeam.locked_out) return { state: "locked", title: "Locked out", detail: who };
      if (floor.team === me.team) {
        return { state: "waiting", title: "Your teammate has the floor", detail: who };
      }
      return { state: "waiting", title: who, detail: "Wait for the ruling" };
    }
    // reading or awaiting: the floor is open
    if (myTeam && myTeam.locked_out) {
      return { state: "locked", title: "Locked out",
               detail: "Your team answered incorrectly on this tossup" };
    }
    if (buzzPending()) {
      return { state: "ready", title: "Buzzing…", detail: s.record ? "held: waiting for the record" : "" };
    }
    let detail = "Buzz when you know it";
    if (ruling && ruling.ruling === "incorrect" && ruling.team !== me.team) {
      detail = teamName(ruling.team) + " missed — your turn";
    }
    if (phase === "awaiting") {
      const left = secondsLeft(s.deadline);
      detail = (s.match.paused ? "Paused — you may still buzz" : "Last chance to buzz") +
        (left != null ? " (" + left + " s" + (s.match.paused ? " left" : "") + ")" : "");
    } else if (s.match.paused) {
      detail = "Reading paused — you may still buzz";
    }
    return { state: "ready", title: "Ready", detail: detail };
  }

  function render() {
    const s = app.state;
    const me = app.me;
    renderProtest(s);

    const meEl = $("me");
    if (me) {
      meEl.hidden = false;
      meEl.textContent = me.name + " · " + teamName(me.team);
    } else {
      meEl.hidden = true;
    }
    if (app.waiting) {
      $("wait-message").textContent = app.moving || app.waiting;
      renderResult();
      return;
    }
    if ($("play-view").hidden) return;

    // an event's match: which round, which room (the join code stays the room's)
    const where = $("event-info");
    const ev = s && s.event;
    where.hidden = !ev;
    where.textContent = ev ? "Round " + ev.round + " of " + ev.rounds + " · " + roomLabel(ev.room) : "";

    const info = $("tossup-info");
    if (s && s.bonus && (s.match.phase === "bonus" || s.bonus.done)) {
      info.textContent = "Bonus " + s.bonus.number + (s.bonus.category ? " · " + s.bonus.category : "");
    } else if (s && s.tossup && s.match.phase !== "ended") {
      let text = window.GraceArena.tossupLabel(s);
      if (s.tossup.category) text += " · " + s.tossup.category;
      info.textContent = text;
    } else {
      info.textContent = s ? s.match.title : "";
    }

    showOfficiating();

    const said = describe();
    if (app.notice && app.notice.until > Date.now()) said.detail = app.notice.text;
    const status = $("status");
    status.dataset.state = said.state;
    if ($("status-title").textContent !== said.title) $("status-title").textContent = said.title;
    if ($("status-detail").textContent !== said.detail) $("status-detail").textContent = said.detail;

    // the revealed text (screen mode, and everyone once the tossup is over)
    const textBox = $("text");
    const words = s && s.tossup && s.tossup.words;
    const bonusShown = Boolean(s && s.bonus && (s.match.phase === "bonus" || (s.bonus.done && s.match.phase === "answered")));
    textBox.classList.toggle("bonus", bonusShown);
    if (bonusShown) {
      textBox.hidden = false;
      renderBonusText(textBox, s.bonus);
    } else if (words && words.length) {
      textBox.hidden = false;
      const joined = words.join(" ");
      const answer = FINISHED.has(s.match.phase) ? s.tossup.answer : null;
      const key = joined + "\u0000" + (answer || "");
      if (textBox.dataset.key !== key) {
        textBox.dataset.key = key;
        textBox.textContent = joined;
        if (answer) {
          const line = document.createElement("span");
          line.className = "answer-line";
          line.textContent = "Answer: ";
          appendMarkup(line, answer);
          textBox.appendChild(line);
        }
        textBox.scrollTop = textBox.scrollHeight;
      }
    } else {
      textBox.hidden = true;
      textBox.dataset.key = "";
    }

    // the answer box: screen mode, this player has the floor
    const form = $("answer-form");
    const mine = s && me && s.floor && s.floor.player === me.player && HAS_FLOOR.has(s.match.phase);
    const bonusBox = myBonusTurn() && !s.bonus.answer && !app.bonusSent &&
      !(s.bonus.pre_answer && preAnswered(s.bonus));
    const showAnswer = Boolean((mine && s.reading.mode === "screen" && !app.answerSent) || bonusBox);
    // what the box answers: a new one (the tossup's buzz, a part, a turn) starts empty
    const target = bonusBox ? ["part", s.bonus.id, s.bonus.part, s.bonus.bounceback, s.bonus.prompted,
      Boolean(s.bonus.pre_answer)].join(":") :
      (mine ? "buzz:" + s.floor.buzz_id : "");
    if (showAnswer && form.dataset.target !== target) {
      form.dataset.target = target;
      $("answer-input").value = "";
      if (!form.hidden) $("answer-input").focus();
    }
    if (showAnswer && form.hidden) {
      form.hidden = false;
      $("answer-input").value = "";
      $("answer-input").focus();
    } else if (!showAnswer && !form.hidden) {
      form.hidden = true;
    }

    const label = bonusBox && s.bonus.pre_answer ? "Your own answer, before the model's" : "Your answer";
    const labelBox = form.querySelector("label");
    if (labelBox.textContent !== label) labelBox.textContent = label;

    // consult rules: the team whose turn it is may look at the model's answer, or abstain
    const consultRow = $("consult-row");
    const canConsult = bonusBox && s.bonus.consult && !s.bonus.bounceback && !s.bonus.prompted &&
      !s.bonus.pre_answer;
    consultRow.hidden = !canConsult;
    $("consult").hidden = !canConsult || Boolean(s.bonus.consulted);
    const seen = $("consulted");
    const consulted = s && s.bonus && s.match.phase === "bonus" && s.bonus.consulted;
    seen.hidden = !consulted;
    if (consulted && seen.textContent !== consultedText(consulted)) {
      seen.textContent = consultedText(consulted);
    }

    buzzButton.disabled = !canBuzz();
    renderAis();
    renderPoints();
    renderResult();

    const list = $("scores");
    list.textContent = "";
    for (const team of s ? s.teams : []) {
      const li = document.createElement("li");
      if (me && team.id === me.team) li.className = "mine";
      const name = document.createElement("span");
      name.className = "team-name";
      name.textContent = team.name;
      if (team.locked_out && s && LIVE.has(s.match.phase)) {
        const flag = document.createElement("span");
        flag.className = "flag";
        flag.textContent = "locked out";
        name.appendChild(flag);
      }
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = scoreText(team.score);
      li.append(name, score);
      list.appendChild(li);
    }
  }

  // -- points and results ------------------------------------------------------------------

  // every score and points on the phone: a minus sign (U+2212), as the display and the
  // moderator's screen write it
  function scoreText(points) {
    return points < 0 ? "−" + Math.abs(points) : String(points);
  }

  function signed(points) {
    return points > 0 ? "+" + points : scoreText(points);
  }

  // the points of the latest ruling on this team's buzz in this tossup: "+15 power — you"
  function renderPoints() {
    const el = $("points");
    const s = app.state;
    const ev = app.mine;
    // (kept up through the bonus the tossup earned)
    const show = Boolean(ev && s && app.me && (LIVE.has(s.match.phase) || FINISHED.has(s.match.phase) ||
      s.match.phase === "bonus"));
    el.hidden = !show;
    if (!show) return;
    const value = ev.points === 0 ? "no points" : signed(ev.points) + (ev.power ? " power" : "");
    const who = ev.player === app.me.player ? "you" :
      playerName(ev.team, ev.player) + ", for " + teamName(ev.team);
    const text = value + " — " + who;
    el.dataset.sign = ev.points > 0 ? "plus" : ev.points < 0 ? "minus" : "zero";
    if (el.textContent !== text) el.textContent = text;
  }

  // How the team's last match ended (its standing in the event once known): shown at the end
  // and in the next match's lobby, or while the team waits.
  function keepResult(state) {
    const r = state.match.result;
    const round = state.event ? "Round " + state.event.round : "";
    const result = r ? r.text : state.teams.map((t) => t.name + " " + scoreText(t.score)).join(" · ");
    const text = (round ? round + ": " : "") + result;
    if (app.final && app.final.match === state.match.id) {
      app.final.text = text;
      return;
    }
    app.final = { match: state.match.id, round: round, text: text, standing: null,
                  event: state.event && app.me ? state.event.name : null, team: app.me && app.me.team };
    if (app.final.event) loadStanding(app.final);
  }

  // the team's place, kept up while it is shown: other rooms' rulings and results move it.
  // Asked with the version shown (?after=), the server answers when newer standings are
  // published (as the event's projector asks); asked again every STANDING_MS after an error.
  function loadStanding(final) {
    if (final.asking) return;
    final.asking = true;
    const after = final.version == null ? "" : "?after=" + encodeURIComponent(final.version);
    fetch("/api/events/" + encodeURIComponent(final.event) + "/standings" + after,
          { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .then((view) => {
        final.asking = false;
        if (!view || !Array.isArray(view.rows) || app.final !== final) return;
        const newer = typeof view.version === "number" && view.version !== final.version;
        final.version = view.version;
        if (newer && resultShown()) setTimeout(() => loadStanding(final), 0);
        const row = view.rows.find((x) => x.team === final.team);
        if (!row) return;
        const record = row.won + "–" + row.lost + (row.tied ? "–" + row.tied : "");
        const tied = view.rows.some((x) => x !== row && x.rank === row.rank) ? "tied " : "";
        final.standing = row.name + ": " + tied + ordinal(row.rank) + " of " + view.rows.length +
          " in the standings (" + record + ", " + scoreText(row.points) + " pts)";
        render();
      })
      .catch(() => { final.asking = false; /* the result stands without it */ });
  }

  function ordinal(n) {
    const tens = n % 100;
    const suffix = tens >= 11 && tens <= 13 ? "th" : ["th", "st", "nd", "rd"][n % 10] || "th";
    return n + suffix;
  }

  // the last match's result is shown at its end, while the team waits and in the next
  // match's lobby
  function resultShown() {
    const s = app.state;
    return Boolean(app.final && !app.moving && (app.waiting || (s && (s.match.phase === "ended" ||
      (s.match.phase === "idle" && s.match.tossups_played === 0)))));
  }

  setInterval(() => { if (resultShown() && app.final.event) loadStanding(app.final); }, STANDING_MS);

  function renderResult() {
    const el = $("result");
    const f = app.final;
    const s = app.state;
    const show = resultShown();
    el.hidden = !show;
    if (!show) return;
    // at the end of the match, its result is the status's title already: said once
    const atEnd = !app.waiting && s && s.match.phase === "ended" && s.match.id === f.match;
    const text = [atEnd ? f.round : f.text, f.standing].filter(Boolean).join(" · ");
    el.hidden = !text;
    if (el.textContent !== text) el.textContent = text;
  }

  // the join page: what the code opened (an event's room and round, or the match's title)
  function showWhere(welcome) {
    const el = $("join-where");
    const ev = welcome.event;
    const text = ev ? ev.title + " · " + roomLabel(ev.room) + " · round " + ev.round + " of " + ev.rounds :
      welcome.title || "";
    el.textContent = text;
    el.hidden = !text;
  }

  // countdowns and notices expire without a message from the server
  setInterval(() => { if (app.state) render(); }, 500);

  // -- start ---------------------------------------------------------------------------------

  function setCode(code) {
    app.code = code;
    const url = new URL(location.href);
    if (url.searchParams.get("code") !== code) {
      url.searchParams.set("code", code);
      history.replaceState(null, "", url.toString());
    }
  }

  function start(code) {
    app.me = null;
    app.state = null;
    app.waiting = null;
    showError("code-error", null);
    setCode(code);
    showView(store.get(tokenKey(code)) ? "play" : "join");
    $("status-title").textContent = "Connecting…";
    link.start();
  }

  const fromUrl = normaliseCode(new URLSearchParams(location.search).get("code"));
  if (fromUrl) {
    start(fromUrl);
  } else {
    showView("code");
    $("code-input").focus();
  }
})();
