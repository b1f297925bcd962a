// The replay of one tossup (/replay?match=ID&tossup=N&code=CODE, CODE the match's join code):
// its text with every buzz of the room, each model player's confidence against its threshold
// (trajectory.js), the rulings. Read-only, from the record through GET /api/replay
// (docs/protocol.md), which refuses a wrong code and a tossup not over.
// All text from the server goes through textContent (the answer line: appendMarkup).
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const { appendMarkup, plainText } = window.GraceArena;
  const OUTCOMES = {
    correct_answer: "answered correctly", all_locked_out: "every team locked out",
    no_rebuzz: "dead: no rebuzz after a wrong answer",
    time_up: "dead: time ran out with no right answer",
  };

  function fail(text) {
    $("message").textContent = text;
    $("message").hidden = false;
    $("content").hidden = true;
  }

  function signed(points) {
    return points > 0 ? "+" + points : points < 0 ? "−" + Math.abs(points) : "0";
  }

  const code = new URLSearchParams(location.search).get("code") || "";

  function link(match, tossup) {
    return "/replay?match=" + match + "&tossup=" + tossup + "&code=" + encodeURIComponent(code);
  }

  function render(view) {
    document.title = view.title + " — tossup " + view.tossup;
    $("title").textContent = view.title;
    $("info").textContent = "Tossup " + view.tossup + " of " + view.tossups_played + " played" +
      (view.category ? " · " + view.category : "");
    $("nav").hidden = view.tossups_played < 2;
    $("prev").hidden = view.tossup <= 1;
    $("prev").href = link(view.match_id, view.tossup - 1);
    $("next").hidden = view.tossup >= view.tossups_played;
    $("next").href = link(view.match_id, view.tossup + 1);

    const names = new Map();
    for (const b of view.buzzes) names.set(b.team, b.team_name);
    for (const c of view.curves.curves) names.set(c.team, c.name);
    const teamName = (id) => names.get(id) || id;

    // the text, every buzz marked at its word, the words never read dimmed
    const text = $("text");
    text.textContent = "";
    const at = new Map();
    for (const b of view.buzzes) {
      if (!at.has(b.word)) at.set(b.word, []);
      at.get(b.word).push(b);
    }
    view.words.forEach((word, i) => {
      const span = document.createElement("span");
      span.className = "w" + (i > view.curves.position ? " unread" : "") +
        (view.power_index != null && i < view.power_index ? " power" : "");
      span.textContent = word;
      text.append(span, " ");
      for (const b of at.get(i) || []) {
        const mark = document.createElement("span");
        mark.className = "mark " + b.kind + (b.ruling ? " " + b.ruling : "");
        mark.setAttribute("data-word", String(i));
        mark.textContent = (b.kind === "model" ? "◆ " : "● ") + b.team_name;
        text.append(mark, " ");
      }
    });
    $("legend").hidden = view.power_index == null; // (what the bold words are)
    $("answer").textContent = "ANSWER: ";
    appendMarkup($("answer"), view.answer);

    $("message").hidden = true;
    $("content").hidden = false; // laid out first: the chart is drawn at its size on the page
    window.GraceArena.trajectory.draw($("curves"), view.curves, { teamName });
    if ($("curves").hidden) {
      $("curves").hidden = false;
      $("curves").textContent = "No model player in this match.";
    }

    const list = $("rulings");
    list.textContent = "";
    for (const b of view.buzzes) {
      const li = document.createElement("li");
      if (b.ruling) li.className = b.ruling;
      li.textContent = "word " + (b.word + 1) + " · " + b.team_name +
        (b.kind === "model" ? " (model " + b.player_name + ")" : " — " + b.player_name) +
        (b.answer != null ? " · “" + plainText(b.answer) + "”" : "") + " · " +
        (b.ruling ? b.ruling + (b.points != null ? " " + signed(b.points) : "") : "not ruled");
      list.appendChild(li);
    }
    if (!view.buzzes.length) {
      const li = document.createElement("li");
      li.textContent = "Nobody buzzed.";
      list.appendChild(li);
    }
    $("outcome").textContent = "The tossup ended: " + (OUTCOMES[view.outcome] || view.outcome) + ".";
    $("message").hidden = true;
    $("content").hidden = false;
  }

  async function load() {
    const params = new URLSearchParams(location.search);
    const match = params.get("match");
    const tossup = params.get("tossup");
    if (!/^\d+$/.test(match || "") || !/^\d+$/.test(tossup || "") || !code) {
      fail("Give a match and a tossup by their numbers, and the match's join code: " +
           "/replay?match=ID&tossup=N&code=CODE.");
      return;
    }
    try {
      const reply = await fetch("/api" + link(match, tossup), { cache: "no-store" });
      const body = await reply.json().catch(() => null);
      if (!reply.ok) {
        const detail = body && typeof body.detail === "string" ? body.detail :
          "the server answered " + reply.status;
        fail("No replay: " + detail + ".");
        return;
      }
      render(body);
    } catch (e) {
      fail("Cannot reach the server.");
    }
  }

  load();
})();
