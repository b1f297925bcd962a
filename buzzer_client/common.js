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

  // One websocket to /ws that comes back by itself (docs/protocol.md, "Reconnection"):
  // exponential backoff with jitter, so a room full of phones does not reconnect in step; at
  // once when the browser comes back online or the page becomes visible; and after SILENCE_MS
  // without a message once in a room (a Wi-Fi drop often closes nothing). Pings are answered
  // here, at once: the server estimates the clock offset from the round trip.
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
    };

    link.isOpen = () => Boolean(link.ws && link.ws.readyState === WebSocket.OPEN);

    link.send = (message) => {
      if (!link.isOpen()) return false;
      link.ws.send(JSON.stringify(message));
      return true;
    };

    function connect() {
      clearTimeout(link.retryTimer);
      link.retryTimer = null;
      if (link.stopped) return;
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      let ws;
      try {
        ws = new WebSocket(scheme + "//" + location.host + "/ws");
      } catch (e) {
        scheduleReconnect();
        return;
      }
      link.ws = ws;
      link.inRoom = false;
      if (onConnect) onConnect();
      ws.onopen = () => {
        if (ws !== link.ws) return;
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
        onMessage(msg);
      };
      ws.onclose = () => {
        if (ws !== link.ws) return;
        link.ws = null;
        scheduleReconnect();
      };
    }

    function scheduleReconnect() {
      if (link.stopped || link.retryTimer) return;
      const base = Math.min(MAX_BACKOFF_MS, 500 * Math.pow(2, link.attempt));
      link.attempt += 1;
      onStatus(reconnectingText || "Reconnecting…");
      link.retryTimer = setTimeout(connect, base * (0.75 + Math.random() * 0.5));
    }

    function close() {
      clearTimeout(link.retryTimer);
      link.retryTimer = null;
      const ws = link.ws;
      link.ws = null;
      if (ws) { try { ws.close(); } catch (e) { /* already closing */ } }
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
      link.inRoom = true;
      link.attempt = 0;
      onStatus(null);
    };

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

  return { appendMarkup, plainText, normaliseCode, createLink };
})();
