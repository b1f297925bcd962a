// The reader's voice on the room display: a match read by the voice (docs/protocol.md, "voice").
//
// The server speaks each tossup (espeak-ng) and cues the displays: "play this audio from
// from_ms in delay seconds". It reveals word i when the audio reaches onsets_ms[i], on its own
// clock, so the words shown and the words heard are the same. The voice stops at once when the
// state says the reading is not running (a buzz, a pause); the next cue resumes it where it
// stopped. A browser plays sound only after someone touched the page: until then a button
// asks for it. display.js hands every message here first (GraceArenaReader.handle).
//
// GraceArenaReader.spoken lists, for each word said, when it was heard (epoch milliseconds,
// from the audio clock's output timestamp), and stops the moments the voice was stopped: what
// the browser tests measure the reveals against.
"use strict";

(function () {
  const reader = {
    ctx: null,
    buffers: new Map(), // url -> Promise<AudioBuffer>
    playing: null, // {source, cue, startEpoch, startMs}
    spoken: [], // {word, at} for each word said
    stops: [], // {at, word, why}: the voice stopped, word being said then
    cues: [], // {first_word, from_ms, at}: each cue as it came
    note: null,
  };

  function context() {
    if (!reader.ctx) {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return null;
      reader.ctx = new Ctx();
      reader.ctx.onstatechange = showButton;
    }
    return reader.ctx;
  }

  // -- "turn the voice on": a browser's sound waits for a touch or a key ------------------

  let button = null;
  function showButton() {
    const ctx = reader.ctx;
    const needed = ctx && ctx.state === "suspended";
    if (!needed) {
      if (button) button.hidden = true;
      return;
    }
    if (!button) {
      button = document.createElement("button");
      button.id = "voice-on";
      button.className = "voice-on";
      button.type = "button";
      button.textContent = "Turn the reader's voice on";
      button.addEventListener("click", () => {
        reader.ctx.resume().then(showButton);
      });
      document.body.appendChild(button);
    }
    button.hidden = false;
  }

  function showNote(text) {
    if (text === reader.note) return;
    reader.note = text;
    let el = document.getElementById("voice-note");
    if (!el) {
      el = document.createElement("p");
      el.id = "voice-note";
      el.className = "voice-note";
      el.setAttribute("role", "status");
      document.body.appendChild(el);
    }
    el.textContent = text || "";
    el.hidden = !text;
  }

  // -- playing -------------------------------------------------------------------------------

  function load(url) {
    if (!reader.buffers.has(url)) {
      const ctx = context();
      const p = fetch(url)
        .then((r) => {
          if (!r.ok) throw new Error("the voice's audio could not be fetched (" + r.status + ")");
          return r.arrayBuffer();
        })
        .then((data) => ctx.decodeAudioData(data));
      p.catch(() => reader.buffers.delete(url)); // fetched again by the next cue
      reader.buffers.set(url, p);
    }
    return reader.buffers.get(url);
  }

  // The epoch time (ms) at which the audio context's time ``t`` is heard.
  function epochOf(ctx, t) {
    const stamp = ctx.getOutputTimestamp ? ctx.getOutputTimestamp() : null;
    if (stamp && stamp.performanceTime) {
      return performance.timeOrigin + stamp.performanceTime + (t - stamp.contextTime) * 1000;
    }
    return Date.now() + (t - ctx.currentTime) * 1000;
  }

  function play(cue) {
    const received = performance.now();
    const ctx = context();
    if (!ctx) {
      showNote("This browser cannot play the reader's voice.");
      return;
    }
    showButton();
    stop("cue");
    const token = {};
    reader.pending = token;
    reader.pendingCue = cue;
    load(cue.url).then((buffer) => {
      if (reader.pending !== token) return; // another cue (or a stop) came meanwhile
      reader.pending = null;
      reader.pendingCue = null;
      // late (the audio took longer to fetch than the cue's delay): start further in, so
      // that the voice stays on the words the server shows
      const late = Math.max(0, (performance.now() - received) / 1000 - cue.delay);
      const wait = Math.max(0, cue.delay - (performance.now() - received) / 1000);
      const fromMs = cue.from_ms + late * 1000;
      const source = ctx.createBufferSource();
      source.buffer = buffer;
      source.connect(ctx.destination);
      // heard at the cue's moment: started that much before it, the output's latency
      const latency = (ctx.outputLatency || 0) + (ctx.baseLatency || 0);
      const when = ctx.currentTime + Math.max(0, wait - latency);
      const until = cue.until_ms == null ? undefined : Math.max(0, cue.until_ms - fromMs) / 1000;
      source.start(when, fromMs / 1000, until);
      const startEpoch = epochOf(ctx, when);
      reader.playing = { source, cue, startEpoch, startMs: fromMs };
      source.onended = () => {
        if (reader.playing && reader.playing.source === source) finish(Infinity, null);
      };
    }).catch((err) => showNote(String(err.message || err)));
  }

  // The words of the cue playing that were heard before ``atEpoch`` go to ``spoken``.
  function finish(atEpoch, why) {
    const p = reader.playing;
    reader.playing = null;
    if (!p) return;
    let current = null;
    if (p.cue.bonus_part != null) return; // (the words said are a tossup's)
    p.cue.onsets_ms.forEach((onset, word) => {
      if (word < p.cue.first_word || onset < p.startMs - 1) return;
      const at = p.startEpoch + (onset - p.startMs);
      if (at <= atEpoch) {
        reader.spoken.push({ word, at });
        current = word;
      }
    });
    if (why) reader.stops.push({ at: atEpoch, word: current, why });
  }

  function stop(why) {
    reader.pending = null;
    reader.pendingCue = null;
    const p = reader.playing;
    if (!p) return;
    try { p.source.stop(); } catch (e) { /* already ended */ }
    finish(Date.now(), why);
  }

  function handle(msg) {
    if (msg.type === "voice") {
      reader.cues.push({ first_word: msg.first_word, from_ms: msg.from_ms, at: Date.now() });
      play(msg);
    } else if (msg.type === "state") {
      const reading = msg.reading || {};
      showNote(reading.voice_note || null);
      if (reading.voice) context() && showButton();
      const p = reader.playing ? reader.playing.cue : reader.pendingCue;
      if (p && p.bonus_part != null) {
        // a bonus part's voice goes on until that part is no longer up
        const bonus = msg.bonus;
        const up = msg.match && msg.match.phase === "bonus" && !msg.match.paused && bonus &&
          bonus.part === p.bonus_part && !bonus.bounceback;
        if (!up) stop("bonus");
      } else if (!reading.running) {
        stop(msg.match ? msg.match.phase : "stopped");
      }
    } else if (msg.type === "next_match") {
      stop("next_match");
    }
  }

  window.GraceArenaReader = {
    handle,
    spoken: reader.spoken,
    stops: reader.stops,
    cues: reader.cues,
    reader,
  };
})();
