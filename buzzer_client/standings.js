// The event's projector view (/display?event=NAME): the standings, each room's current match
// with its join code, join URL and QR code, and the schedule (this round's matches by room,
// and who is next; the rows that do not fit counted in a last "… and N more" line), readable
// from the back of the room; it fits 1280x720 and 1920x1080. Once every match is played, the
// final standings and who leads them, in place of the rooms. An unknown event: its error only.
//
// Each team's W–L (W–L–T once a match ended level), points, PPG, tossups heard, points per
// tossup heard and, once bonuses are played, PPB; ranked as grace_arena.core.stats ranks.
//
// /display?event=NAME&phase=PHASE[&pool=POOL] shows one phase's standings (its games and those
// carried over into it), of a pool, or of every pool one after the other under its name.
//
// Asks GET /api/events/{name}/standings?after=VERSION&wait=2 (docs/protocol.md, "Events"),
// which answers as soon as newer standings are published (a long poll: a ruling reaches the
// screen when it is computed, and no request computes), or after 2 s with the rooms as they
// are, and redraws only when the answer changed; after an error it asks again after POLL_MS.
// Team names go through textContent, never innerHTML.
"use strict";

(function () {
  const POLL_MS = 2000;
  const ROOMS_WAIT_S = 2;
  const $ = (id) => document.getElementById(id);
  const name = new URLSearchParams(location.search).get("event");
  if (!name || new URLSearchParams(location.search).get("code")) return; // a room's display
  // one phase (and pool) of the event's standings, when the page's address names one
  const scope = new URLSearchParams();
  for (const key of ["phase", "pool"]) {
    const value = new URLSearchParams(location.search).get(key);
    if (value) scope.set(key, value);
  }

  let shown = null; // the last answer drawn, as text
  let version = null; // the version of the standings drawn (the record's)
  let timer = null;

  function setConn(text) {
    $("event-conn").textContent = text || "";
    $("event-conn").hidden = !text;
  }

  function roomLabel(room) {
    return /^\d+$/.test(String(room)) ? "Room " + room : String(room);
  }

  function cell(row, text, className) {
    const td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }

  const PHASES = {
    // (idle before the first tossup: see phaseText)
    idle: "between tossups", reading: "reading", awaiting: "buzz window", buzzed: "buzz",
    prompted: "prompt", answered: "answered", dead: "dead tossup", thrown_out: "thrown out",
    ended: "match over",
  };

  function phaseText(room) {
    if (room.phase === "idle" && room.tossups_played === 0) return "before the first tossup";
    return PHASES[room.phase] || room.phase;
  }

  const STATUS = { played: "played", playing: "playing now", next: "next up", later: "later" };

  // this round's matches by room, and the next round's: what is played now, who is next
  function renderSchedule(view) {
    const list = $("schedule");
    const games = Array.isArray(view.schedule) ? view.schedule : [];
    $("schedule-section").hidden = games.length === 0;
    list.textContent = "";
    const rows = [];
    for (const g of games) {
      const li = document.createElement("li");
      li.className = "scheduled " + g.status;
      const where = document.createElement("span");
      where.className = "where";
      where.textContent = "Round " + g.round + " · " + roomLabel(g.room);
      const teams = document.createElement("span");
      teams.className = "teams";
      teams.textContent = g.teams.join(" vs ");
      const status = document.createElement("span");
      status.className = "status";
      status.textContent = STATUS[g.status] || g.status;
      li.append(where, teams, status);
      list.appendChild(li);
      rows.push(li);
    }
    return rows;
  }

  // The schedule in the room the standings leave it: while it overflows, the matches played
  // go first, then the latest ones, and a last line says how many more there are.
  function fitSchedule(rows) {
    const section = $("schedule-section");
    if (section.hidden) return;
    const over = () => section.scrollHeight > section.clientHeight + 1;
    if (!over()) return;
    const more = document.createElement("li");
    more.id = "schedule-more";
    more.className = "scheduled more";
    $("schedule").appendChild(more);
    const order = rows.filter((li) => li.classList.contains("played"))
      .concat(rows.filter((li) => !li.classList.contains("played")).reverse());
    let hidden = 0;
    for (const li of order) {
      if (!over()) break;
      li.remove();
      hidden += 1;
      more.textContent = hidden === rows.length ? rows.length + " matches in the schedule" :
        "… and " + hidden + " more";
    }
    section.hidden = over(); // (not even its title fits: no schedule rather than half of one)
  }

  // The schedule under the standings, or under the rooms when they leave it more room.
  function placeSchedule() {
    const section = $("schedule-section");
    const left = document.querySelector(".standings");
    const right = document.querySelector(".rooms");
    const free = (box, last) => box.getBoundingClientRect().bottom -
      (last ? last.getBoundingClientRect().bottom : box.getBoundingClientRect().top);
    const leftFree = free(left, $("standings"));
    const shown = [...right.children].filter((e) => e !== section && e.checkVisibility());
    const rightFree = free(right, shown[shown.length - 1]);
    const target = rightFree > leftFree ? right : left;
    if (section.parentElement !== target) target.appendChild(section);
  }

  function render(view) {
    $("event-title").textContent = view.title;
    document.title = view.title + " — standings";
    const rounds = view.rooms.map((r) => r.round).filter((r) => r != null);
    $("event-info").textContent = rounds.length ?
      "Round " + Math.min(...rounds) + (Math.max(...rounds) !== Math.min(...rounds) ?
        "–" + Math.max(...rounds) : "") + " of " + view.rounds + " · standings after every ruling" :
      "Every match played · final standings";
    // the phase and pool shown, when one was asked for
    $("standings-scope").textContent = view.phase ?
      "· " + view.phase + (view.pool ? ", " + view.pool : "") : "";
    // "● playing now" only while a match is under way
    $("live-legend").hidden = !view.rows.some((r) => r.live);
    const scheduled = renderSchedule(view);

    // W–L, or W–L–T once a match ended level
    const ties = view.rows.some((r) => r.tied);
    $("record-head").textContent = ties ? "W–L–T" : "W–L";
    // points per bonus, once bonuses are played
    const bonuses = view.rows.some((r) => r.bonuses_heard);
    $("ppb-head").hidden = !bonuses;
    const body = $("standings").tBodies[0];
    body.textContent = "";
    let pool = null;
    for (const row of view.rows) {
      if (row.pool && row.pool !== pool && !view.pool) { // a phase's pools, one after another
        pool = row.pool;
        const head = document.createElement("tr");
        head.className = "pool-head";
        const th = document.createElement("th");
        th.colSpan = 8;
        th.scope = "colgroup";
        th.textContent = pool;
        head.appendChild(th);
        body.appendChild(head);
      }
      const tr = document.createElement("tr");
      if (row.live) tr.className = "live";
      cell(tr, String(row.rank), "rank");
      const team = cell(tr, row.name, "team");
      if (row.live) {
        const dot = document.createElement("span");
        dot.className = "live-dot";
        dot.textContent = " ●";
        dot.title = "playing now";
        team.appendChild(dot);
      }
      if (row.kind === "model") {
        const tag = document.createElement("span");
        tag.className = "kind";
        tag.textContent = "model";
        team.appendChild(tag);
      }
      cell(tr, row.won + "–" + row.lost + (ties ? "–" + row.tied : ""), "num");
      cell(tr, String(row.points), "num pts");
      // PPG and P/20TUH as grace_arena.core.stats defines them (a match under way is a game)
      cell(tr, row.points_per_game == null ? "—" : row.points_per_game.toFixed(1), "num ppg");
      cell(tr, String(row.tossups_heard), "num tuh");
      cell(tr, row.points_per_20_tuh == null ? "—" : row.points_per_20_tuh.toFixed(1), "num p20");
      if (bonuses) cell(tr, row.points_per_bonus == null ? "—" : row.points_per_bonus.toFixed(2), "num ppb");
      body.appendChild(tr);
    }

    const list = $("rooms");
    list.textContent = "";
    // a QR code per room while there is room for one (a few rooms); the codes always
    const many = view.rooms.length > 4;
    list.classList.toggle("many", many);
    // many rooms: one address for all of them in the title, each card its code
    const host = view.rooms.map((r) => r.join_url).find(Boolean);
    $("rooms-title").textContent = many && host ?
      "Rooms — join at " + String(host).replace(/^https?:\/\//, "").replace(/\/\?.*$/, "") + " with the code" :
      "Rooms — join with the code";
    for (const room of view.rooms) {
      const li = document.createElement("li");
      li.className = "room" + (room.round == null ? " done" : "");
      const text = document.createElement("div");
      text.className = "room-text";
      const head = document.createElement("p");
      head.className = "room-name";
      head.textContent = roomLabel(room.room) +
        (room.round != null ? " · Round " + room.round : "");
      const match = document.createElement("p");
      match.className = "room-match";
      if (room.round == null) {
        match.textContent = "Every match played";
      } else if (Object.keys(room.scores || {}).length) {
        const score = (t) => String(room.scores[t] ?? 0);
        const [a, b] = room.teams;
        match.textContent = room.teams.length === 2 ?
          a + " " + score(a) + "\u00a0–\u00a0" + score(b) + " " + b : // (the score on one line)
          room.teams.map((t) => t + " " + score(t)).join(" · ");
      } else {
        match.textContent = room.teams.join(" vs ");
      }
      li.appendChild(text);
      text.append(head, match);
      if (room.round != null) {
        if (room.waiting || room.phase) {
          const phase = document.createElement("p");
          phase.className = "room-phase";
          // (many rooms: the wait in a few words, the schedule says the rest)
          phase.textContent = room.waiting ? (many ? "waiting for an earlier round" : "Waiting: " + room.waiting) :
            phaseText(room);
          if (room.waiting) phase.title = room.waiting;
          text.appendChild(phase);
        }
        const code = document.createElement("p");
        code.className = "room-code";
        code.textContent = "Code ";
        const strong = document.createElement("strong");
        strong.textContent = room.join_code;
        code.appendChild(strong);
        const url = document.createElement("p");
        url.className = "room-url";
        url.textContent = String(room.join_url || location.host + "/?code=" + room.join_code)
          .replace(/^http:\/\//, "");
        text.appendChild(code);
        const qr = document.createElement("img");
        qr.className = "room-qr";
        qr.alt = "QR code of " + roomLabel(room.room) + "'s join link";
        qr.src = "/api/join/" + encodeURIComponent(room.join_code) + "/qr.svg";
        li.append(qr, url);
      }
      list.appendChild(li);
      if (window.GraceArena.trajectory) window.GraceArena.trajectory.roomCard(li, room);
    }
    // every match played: no codes to join with, but who leads the final standings
    const over = !view.rooms.some((r) => r.round != null);
    $("rooms-title").hidden = over;
    list.hidden = over;
    const leader = $("leader");
    leader.hidden = !over || !view.rows.length;
    if (over && view.rows.length) {
      const first = view.rows.filter((r) => r.rank === view.rows[0].rank);
      const names = first.map((r) => r.name);
      const who = names.length === 1 ? names[0] :
        names.slice(0, -1).join(", ") + " and " + names[names.length - 1];
      leader.textContent = leaderText(view.rows, first, who);
    }
    fitStage();
    if (!$("schedule-section").hidden) placeSchedule();
    fitSchedule(scheduled);
  }

  // The standings and the rooms all in sight: the type (the page's root size, which every
  // size here follows) shrinks until they fit, down to MIN_ROOT_PX; below COMPACT_ROOT_PX the
  // standings first give up PPG and TUH (P/20TUH and PPB stay). The schedule takes what room
  // is left (fitSchedule).
  const MIN_ROOT_PX = 12;
  const COMPACT_ROOT_PX = 16;
  function fitStage() {
    const root = document.documentElement;
    const table = $("standings");
    root.style.fontSize = "";
    table.classList.remove("compact");
    if (matchMedia("(max-width: 800px)").matches) return; // a phone: the page scrolls down
    const boxes = [document.querySelector(".standings"), document.querySelector(".rooms")];
    const over = () => boxes.some((el) => el.scrollHeight > el.clientHeight + 1 ||
      el.scrollWidth > el.clientWidth + 1);
    let size = parseFloat(getComputedStyle(root).fontSize);
    while (over() && size > MIN_ROOT_PX) {
      size = Math.max(MIN_ROOT_PX, size * 0.95);
      if (size < COMPACT_ROOT_PX) table.classList.add("compact");
      root.style.fontSize = size + "px";
    }
  }

  // Who leads and why, said so when a team with more points is ranked below: the standings
  // go by record, then PPB, then P/20TUH (grace_arena.core.standings.rank_key), not points.
  function leaderText(rows, first, who) {
    const lead = first[0];
    const verb = first.length === 1 ? " leads" : " share the lead of";
    // (a record is not broken across lines: a word joiner after each dash)
    const record = (r) => r.won + "–\u2060" + r.lost + (r.tied ? "–\u2060" + r.tied : "");
    const points = (r) => r.points + "\u00a0points";
    const most = rows.reduce((a, r) => (r.points > a.points ? r : a), lead);
    const plain = who + verb + " the final standings: " + record(lead) + ", " + points(lead);
    if (first.some((r) => r === most) || most.points <= lead.points) return plain;
    const pct = (r) => (r.won + r.tied / 2) / Math.max(1, r.won + r.lost + r.tied);
    const num = (x) => (x == null ? "0.00" : x.toFixed(2));
    let why;
    if (pct(lead) !== pct(most)) {
      why = "ranked on record first";
    } else if ((lead.points_per_bonus || 0) !== (most.points_per_bonus || 0)) {
      why = "the tie-break on " + record(lead) + " is PPB: " + num(lead.points_per_bonus) +
        " to " + num(most.points_per_bonus) + " for " + most.name;
    } else {
      why = "the tie-break on " + record(lead) + " is P/20TUH: " + num(lead.points_per_20_tuh) +
        " to " + num(most.points_per_20_tuh) + " for " + most.name;
    }
    return plain + " (" + most.name + " scored " + most.points + "; " + why + ")";
  }

  async function poll() {
    clearTimeout(timer);
    let again = POLL_MS;
    try {
      // (at most ROOMS_WAIT_S: the room cards' phases and scores change between standings)
      const query = new URLSearchParams(scope);
      if (version != null) {
        query.set("after", version);
        query.set("wait", ROOMS_WAIT_S);
      }
      const asked = query.toString() ? "?" + query.toString() : "";
      const reply = await fetch("/api/events/" + encodeURIComponent(name) + "/standings" + asked,
                                { cache: "no-store" });
      if (reply.status === 404) {
        $("event-stage").hidden = true; // only the error: no standings of an event not here
        const detail = scope.toString() ? ((await reply.json().catch(() => ({}))).detail || "") : "";
        setConn(/phase|pool/.test(detail) ? "Not shown: " + detail + "." :
          "No event called “" + name + "” on this server.");
      } else if (!reply.ok) {
        setConn("The server answered " + reply.status + " — retrying…");
      } else {
        const text = await reply.text();
        const view = JSON.parse(text);
        if (typeof view.version === "number") {
          // the server waited (for newer standings, or ROOMS_WAIT_S): ask again at once
          again = 0;
          version = view.version;
        }
        setConn(null);
        $("event-stage").hidden = false;
        if (text !== shown) { // redraw only what changed: no flicker every two seconds
          shown = text;
          render(view);
        }
      }
    } catch (e) {
      setConn("Cannot reach the server — retrying…");
    }
    timer = setTimeout(poll, again);
  }

  // a new screen size: drawn again to fit it (the schedule's rows, the room cards' curves)
  window.addEventListener("resize", () => { if (shown) render(JSON.parse(shown)); });

  $("code-form").hidden = true;
  $("event-screen").hidden = false;
  document.documentElement.classList.add("projector");
  $("event-title").textContent = name;
  poll();
})();
