// What the buzzer page and the display share: the link to the server and answer-line markup.
//
// Plain script, no build step: it defines window.GraceArena before the page's own script runs.
"use strict";

window.GraceArena = (function () {
  const MAX_BACKOFF_MS = 10000;
  const SILENCE_MS = 9000; // the server pings every 2 s; this much silence means a dead link

  // Answer lines carry a little markup (<b>, <u>, <i>) for the required part. Rebuild only
  // those tags from parsed nodes; everything else becomes plain text. Nothing runs: DOMParser
  // documents are inert.
  const KEEP_TAGS = new Set(["B", "STRONG", "U", "I", "EM"]);

  function plainText(html) {
    return new DOMParser().parseFromString(String(html), "text/html").body.textContent || "";
  }

  function appendMarkup(parent, html) {
    const doc = new DOMParser().parseFromString("<body>" + String(html) + "</body>", "text/html");
    (function copy(from, to) {
      for (const node of from.childNodes) {
        if (node.nodeType === Node.TEXT_NODE) {
          to.appendChild(document.createTextNode(node.nodeValue));
        } else if (node.nodeType === Node.ELEMENT_NODE) {
          if (KEEP_TAGS.has(node.tagName)) {
            copy(node, to.appendChild(document.createElement(node.tagName.toLowerCase())));
          } else {
            copy(node, to);
          }
        }
      }
    })(doc.body, parent);
  }

  function normaliseCode(text) {
    return String(text || "").trim().toUpperCase().replace(/[^A-Z0-9]/g, "").slice(0, 12);
  }

  // The state after a `reveal` (docs/protocol.md): the words revealed since `state`, its
  // clocks and server time; null when it does not follow `state` (another tossup or position).
  // `state` itself is left as it was.
  function applyReveal(state, reveal) {
    const tossup = state && state.tossup;
    if (!tossup || tossup.id !== reveal.tossup || tossup.position !== reveal.after) return null;
    const more = Array.isArray(reveal.words) ? reveal.words : null;
    const words = Array.isArray(tossup.words) && more ? tossup.words.concat(more) : tossup.words;
    return Object.assign({}, state, {
      tossup: Object.assign({}, tossup, { position: reveal.position, words: words }),
      game_clock: reveal.game_clock === undefined ? null : reveal.game_clock,
      timeout: reveal.timeout === undefined ? null : reveal.timeout,
      events: [],
      server_time: reveal.server_time,
    });
  }

  // One websocket to /ws that comes back by itself (docs/protocol.md, "Reconnection"):
  // exponential backoff with jitter, so a room full of phones does not reconnect in step; at
  // once when the browser comes back online or the page becomes visible; and after SILENCE_MS
  // without a message once in a room (a Wi-Fi drop often closes nothing). Pings are answered
  // here, at once: the server estimates the clock offset from the round trip.
  //
  // It follows the match from server process to server process (docs/protocol.md, "Several
  // server processes"): told `elsewhere` with a URL, it says hello there at once; unable to
  // reach its server twice running, it tries the other servers the last one named
  // (`servers`), one of which takes the match over. No reload, nobody reads a URL.
  //
  //   hello()       the hello message to send on every (re)connection
  //   onMessage(m)  every other message
  //   onStatus(t)   a line to show while reconnecting, or null
  //   onConnect()   called as a new connection starts (optional)
  function createLink({ hello, onMessage, onStatus, onConnect, reconnectingText }) {
    const link = {
      ws: null,
      attempt: 0,
      retryTimer: null,
      lastMessageAt: 0,
      stopped: true,
      inRoom: false, // set by entered(); the server pings only from then on
      base: null, // the server's address (http://host:port): null for this page's own
      servers: [], // other servers of the same record that may serve the match
      failures: 0, // connections in a row that never got in (refused, dropped at once)
      failedAt: new Map(), // server address -> when it last could not be reached
      note: null, // what the server said when it went away (stopping), until back in a room
    };
    const RECENT_MS = 15000;

    link.isOpen = () => Boolean(link.ws && link.ws.readyState === WebSocket.OPEN);

    // Every hello says the link takes words revealed as `reveal` messages (the change to the
    // state it has), which it turns into the whole state for onMessage.
    link.send = (message) => {
      if (!link.isOpen()) return false;
      if (message && message.type === "hello") message = Object.assign({}, message, { reveals: true });
      link.ws.send(JSON.stringify(message));
      return true;
    };

    function here() {
      return link.base || location.protocol + "//" + location.host;
    }

    // The room's join code rides in the URL too (/ws?code=CODE): a proxy in front of several
    // server processes routes the socket by it to the process that serves the room.
    function wsUrl(base, code) {
      const url = new URL(base);
      const scheme = url.protocol === "https:" ? "wss:" : "ws:";
      const query = code ? "?code=" + encodeURIComponent(code) : "";
      return scheme + "//" + url.host + "/ws" + query;
    }

    function codeOf(message) {
      return message && typeof message.join_code === "string" ? message.join_code : "";
    }

    function connect() {
      clearTimeout(link.retryTimer);
      link.retryTimer = null;
      if (link.stopped) return;
      let ws;
      try {
        ws = new WebSocket(wsUrl(here(), codeOf(hello())));
      } catch (e) {
        scheduleReconnect();
        return;
      }
      link.ws = ws;
      link.inRoom = false;
      link.state = null; // the last state (a reveal follows it)
      let opened = false;
      if (onConnect) onConnect();
      ws.onopen = () => {
        if (ws !== link.ws) return;
        opened = true;
        link.lastMessageAt = Date.now();
        link.send(hello());
      };
      ws.onmessage = (ev) => {
        if (ws !== link.ws) return;
        link.lastMessageAt = Date.now();
        let msg;
        try { msg = JSON.parse(ev.data); } catch (e) { return; }
        if (!msg || typeof msg.type !== "string") return;
        if (msg.type === "ping") {
          link.send({ type: "pong", sent: msg.sent, time: Date.now() / 1000 });
          return;
        }
        if (msg.type === "servers") {
          link.servers = (Array.isArray(msg.urls) ? msg.urls : []).filter((u) => u !== here());
          return;
        }
        if (msg.type === "error" && msg.code === "elsewhere" && msg.url) {
          moveTo(String(msg.url));
          return;
        }
        if (msg.type === "error" && msg.code === "stopping") {
          // said until the link is back in a room (a close that follows keeps saying it)
          link.note = "The server stopped — reconnecting when it (or another) answers…";
          onStatus(link.note);
          return;
        }
        if (msg.type === "state") link.state = msg;
        if (msg.type === "reveal") {
          const state = applyReveal(link.state, msg);
          if (!state) {
            // (never sent so: the server follows what each link has) afresh, on a new link
            close();
            scheduleReconnect();
            return;
          }
          link.state = msg = state;
        }
        onMessage(msg);
      };
      ws.onclose = () => {
        if (ws !== link.ws) return;
        link.ws = null;
        if (!link.inRoom) {
          link.failures += 1;
          if (!opened || link.failures >= 2) link.failedAt.set(here(), Date.now());
          if (link.failures >= 2) tryAnotherServer();
        }
        scheduleReconnect();
      };
    }

    // Say hello to the server at `url` (it serves the match now), unless it could not be
    // reached a moment ago: then the server that sent us there will take the match over once
    // that one's lease lapses, so keep asking it.
    function moveTo(url) {
      if (url === here()) {
        // sent back to this very address: a proxy in front of the processes, which routes
        // the room to its process once it has caught up with the move; ask again shortly
        close();
        onStatus("Moving to the server that serves this match now…");
        scheduleReconnect();
        return;
      }
      const failed = link.failedAt.get(url);
      if (failed && Date.now() - failed < RECENT_MS) return;
      const from = here();
      if (!link.servers.includes(from) && from !== url) link.servers.push(from);
      link.servers = link.servers.filter((u) => u !== url);
      link.base = url;
      link.failures = 0;
      link.attempt = 0;
      close();
      onStatus("Moving to the server that serves this match now…");
      link.retryTimer = setTimeout(connect, 50);
    }

    // This server cannot be reached: the next one known, not failed a moment ago.
    function tryAnotherServer() {
      const now = Date.now();
      const next = link.servers.find((u) => {
        const failed = link.failedAt.get(u);
        return u !== here() && !(failed && now - failed < RECENT_MS);
      });
      if (!next) return;
      const from = here();
      link.servers = link.servers.filter((u) => u !== next);
      link.servers.push(from);
      link.base = next;
      link.failures = 0;
    }

    function scheduleReconnect() {
      if (link.stopped || link.retryTimer) return;
      const base = Math.min(MAX_BACKOFF_MS, 500 * Math.pow(2, link.attempt));
      link.attempt += 1;
      onStatus(link.note || reconnectingText || "Reconnecting…");
      link.retryTimer = setTimeout(connect, base * (0.75 + Math.random() * 0.5));
    }

    function close() {
      clearTimeout(link.retryTimer);
      link.retryTimer = null;
      const ws = link.ws;
      link.ws = null;
      // 1000: this page closed it (the server frees a full event's place at once; a
      // connection that ends with no code is taken for a dropped network)
      if (ws) { try { ws.close(1000); } catch (e) { /* already closing */ } }
    }

    function reconnectNow() {
      if (link.stopped) return;
      if (link.ws && link.ws.readyState <= WebSocket.OPEN) return;
      link.attempt = 0;
      connect();
    }

    // Start (or restart) the link.
    link.start = () => {
      close();
      link.stopped = false;
      link.attempt = 0;
      connect();
    };

    // Close for good (until start()).
    link.stop = () => {
      link.stopped = true;
      close();
      onStatus(null);
    };

    // The first state arrived: we are in the room and the link is sound.
    link.entered = () => {
      link.note = null;
      link.inRoom = true;
      link.attempt = 0;
      link.failures = 0;
      onStatus(null);
    };

    // The server this page talks to now (null: the page's own).
    link.server = () => link.base;

    window.addEventListener("online", reconnectNow);
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") reconnectNow();
    });
    setInterval(() => {
      if (link.isOpen() && link.inRoom && Date.now() - link.lastMessageAt > SILENCE_MS) {
        close();
        scheduleReconnect();
      }
    }, 1000);

    return link;
  }

  // What a state says of the record while it is not taking the room's changes (the match is
  // held where it is and goes on by itself), or null.
  function recordNotice(state) {
    return state && state.record ? "Match held — " + state.record.message : null;
  }

  // What the match's officiating says now, for phones and the projector (null: nothing): a
  // timeout on and its seconds left, a bonus part's conferral clock ("Confer: 4 s", then
  // "Answer now"), where the match stands by its format (halftime, overtime, sudden death).
  // ``offset``: the server's clock less this one's, in seconds.
  function officiatingLine(state, offset) {
    if (!state || state.match.phase === "ended") return null;
    const now = Date.now() / 1000 + (offset || 0);
    const name = (id) => (state.teams.find((t) => t.id === id) || { name: id }).name;
    if (state.timeout && state.timeout.ends > now) {
      return "Timeout: " + name(state.timeout.team) + " · " +
        Math.ceil(state.timeout.ends - now) + " s";
    }
    const left = state.conferral != null ? state.conferral - now : state.conferral_held;
    if (left != null) return left > 1 ? "Confer: " + Math.ceil(left) + " s" : "Answer now";
    const stage = state.match.stage;
    const between = ["idle", "answered", "dead", "thrown_out"].includes(state.match.phase);
    if (stage === "halftime" || stage === "tied" || stage === "overtime" ||
        stage === "sudden_death" || (stage === "decided" && between)) {
      return stage === "decided" ? "The match is decided" : state.match.stage_text;
    }
    return null;
  }

  // A timed half's game clock: "Half 1 · 8:42" counting down while it runs ("stopped" while it
  // stands still, "time is up" once it has run out: the cycle in play is finished); null when
  // the halves are not timed.
  function gameClockLine(state, offset) {
    const clock = state && state.game_clock;
    if (!clock || state.match.phase === "ended") return null;
    if (clock.expired) return "Half " + clock.half + " · time is up";
    const now = Date.now() / 1000 + (offset || 0);
    const left = clock.ends != null ? Math.max(0, clock.ends - now) : clock.left;
    const whole = Math.ceil(left);
    const shown = "Half " + clock.half + " · " + Math.floor(whole / 60) + ":" +
      String(whole % 60).padStart(2, "0");
    return clock.ends != null ? shown : shown + " (stopped)";
  }

  // "Tossup 5 of 20" as regulation counts the tossups heard (a thrown-out tossup's replacement
  // takes its number), "Overtime · tossup 1" past it; without a regulation, the match's.
  function tossupLabel(state) {
    const m = state.match;
    const reg = m.regulation_tossups;
    if (!reg) return "Tossup " + state.tossup.number + " of " + m.tossups_total;
    const heard = Math.max(m.tossups_heard, 1);
    return heard > reg ? "Overtime · tossup " + (heard - reg) : "Tossup " + heard + " of " + reg;
  }

  // What a screen reader is told: the page's #announce live region says `text` (emptied
  // first, so the same words twice in a row are said twice).
  function announce(text) {
    const el = document.getElementById("announce");
    if (!el) return;
    el.textContent = "";
    setTimeout(() => { el.textContent = text; }, 50);
  }

  return {
    appendMarkup, plainText, normaliseCode, createLink, recordNotice, officiatingLine,
    tossupLabel, announce, gameClockLine, applyReveal,
  };
})();
