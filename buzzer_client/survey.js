// The per-clue survey page: plain JS, no build step, nothing fetched but this server's API
// (docs/survey.md). The participant's token is kept in localStorage, so a reload, a closed
// tab or another day resumes as the same participant at the next unanswered clue.
(function () {
  "use strict";

  var $ = function (id) { return document.getElementById(id); };
  var views = ["code-view", "join-view", "clue-view", "pause-view", "done-view"];
  var code = null;
  var me = null; // {token, participant_id, name}
  var current = null; // the clue being answered (SurveyState.clue)
  var shownAt = 0; // performance.now() when the current clue appeared
  var busy = false;

  // localStorage can throw (private mode, storage disabled): then nothing persists.
  var store = {
    key: function () { return "grace-arena:survey:" + code; },
    load: function () {
      try { return JSON.parse(window.localStorage.getItem(store.key()) || "null"); }
      catch (e) { return null; }
    },
    save: function (value) {
      try { window.localStorage.setItem(store.key(), JSON.stringify(value)); } catch (e) { /* */ }
    },
    forget: function () {
      try { window.localStorage.removeItem(store.key()); } catch (e) { /* ignore */ }
    }
  };

  function show(view) {
    views.forEach(function (v) { $(v).hidden = v !== view; });
    $("forget-button").hidden = !me || view === "code-view" || view === "join-view";
    $("progress").hidden = !me;
    $("me").hidden = !me;
    if (me) { $("me").textContent = me.name; }
  }

  function showError(text) {
    $("error").textContent = text || "";
    $("error").hidden = !text;
  }

  // FastAPI's errors: {"detail": "text"} or {"detail": [{"loc": [...], "msg": "..."}]}
  function explain(status, body) {
    var detail = body && body.detail;
    if (typeof detail === "string") { return detail; }
    if (Array.isArray(detail) && detail.length) {
      var where = (detail[0].loc || []).filter(function (p) { return p !== "body"; }).join(".");
      return (where ? where + ": " : "") + detail[0].msg;
    }
    return "the server answered " + status;
  }

  function api(method, path, body) {
    var headers = { "Accept": "application/json" };
    if (body !== undefined) { headers["Content-Type"] = "application/json"; }
    if (me && me.token) { headers["Authorization"] = "Bearer " + me.token; }
    return fetch("/api/survey/" + encodeURIComponent(code) + path, {
      method: method,
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store"
    }).then(function (reply) {
      return reply.json().catch(function () { return null; }).then(function (data) {
        if (!reply.ok) {
          var err = new Error(explain(reply.status, data));
          err.status = reply.status;
          throw err;
        }
        return data;
      });
    }, function () {
      throw new Error("cannot reach the server; check the connection and try again");
    });
  }

  // -- the survey -------------------------------------------------------------------------

  function openSurvey(value) {
    code = value.trim().toUpperCase();
    showError("");
    return api("GET", "").then(function (info) {
      code = info.code;
      if (new URLSearchParams(location.search).get("code") !== code) {
        history.replaceState(null, "", "/survey?code=" + encodeURIComponent(code));
      }
      $("survey-title").textContent = info.title;
      $("survey-size").textContent = info.n_tossups + " questions, " + info.n_steps +
        " clues in all.";
      me = store.load();
      if (me) { return loadState(); }
      show("join-view");
      $("name-input").focus();
    }).catch(function (err) {
      code = null;
      show("code-view");
      showError(err.message);
    });
  }

  function loadState() {
    return api("GET", "/state").then(render).catch(function (err) {
      if (err.status === 401 || err.status === 403) {
        // the record no longer knows this token: start again as a new participant
        store.forget();
        me = null;
        show("join-view");
      }
      showError(err.message);
    });
  }

  function render(state) {
    me.name = state.name;
    var fraction = state.total ? state.answered / state.total : 1;
    $("progress-fill").style.width = (100 * fraction).toFixed(1) + "%";
    var bar = document.querySelector(".progress-track");
    bar.setAttribute("aria-valuenow", fraction.toFixed(3));
    $("progress-text").textContent = state.answered + " / " + state.total;
    if (state.done) {
      current = null;
      $("done-text").textContent = "You answered all " + state.total + " clues. " +
        "Your answers are saved.";
      show("done-view");
      return;
    }
    var clue = state.clue;
    var fresh = !current || current.tossup_id !== clue.tossup_id || current.step !== clue.step;
    current = clue;
    $("clue-info").textContent = "Question " + clue.number + " of " + clue.n_tossups + " · " +
      clue.category + " · clue " + (clue.step + 1) + " of " + clue.n_clues;
    var list = $("clues");
    list.textContent = "";
    clue.clues.forEach(function (text, i) {
      var li = document.createElement("li");
      li.textContent = text;
      if (i === clue.step) { li.className = "new"; }
      list.appendChild(li);
    });
    list.scrollTop = list.scrollHeight;
    var given = $("given");
    given.textContent = "";
    clue.given.slice().reverse().forEach(function (g) {
      var li = document.createElement("li");
      var what = document.createElement("span");
      what.textContent = "Clue " + (g.step + 1) + ": " + (g.guess || "—");
      li.appendChild(what);
      if (g.would_buzz) {
        var tag = document.createElement("span");
        tag.className = "tag";
        tag.textContent = "buzz";
        li.appendChild(tag);
      }
      given.appendChild(li);
    });
    $("next-button").textContent = clue.step + 1 < clue.n_clues ? "Next clue" :
      (clue.number < clue.n_tossups ? "Next question" : "Finish");
    if (fresh) {
      $("guess-input").value = "";
      $("buzz-input").checked = false;
      shownAt = performance.now();
    }
    show("clue-view");
    if (fresh) { $("guess-input").focus(); }
  }

  function submitAnswer(event) {
    event.preventDefault();
    if (busy || !current) { return; }
    var guess = $("guess-input").value.trim();
    var wouldBuzz = $("buzz-input").checked;
    if (wouldBuzz && !guess) {
      showError("To buzz, type a guess.");
      $("guess-input").focus();
      return;
    }
    busy = true;
    $("next-button").disabled = true;
    showError("");
    api("PUT", "/answer", {
      tossup_id: current.tossup_id,
      step: current.step,
      guess: guess,
      would_buzz: wouldBuzz,
      client_latency_s: Math.max(0, (performance.now() - shownAt) / 1000)
    }).then(render).catch(function (err) {
      showError(err.message);
      if (err.status === 409) { return loadState(); } // out of step: ask where we are
    }).then(function () {
      busy = false;
      $("next-button").disabled = false;
    });
  }

  function join(event) {
    event.preventDefault();
    if (busy) { return; }
    busy = true;
    showError("");
    api("POST", "/participants", { name: $("name-input").value.trim() }).then(function (joined) {
      me = { token: joined.token, participant_id: joined.participant_id, name: joined.name };
      store.save(me);
      return loadState();
    }).catch(function (err) {
      showError(err.message);
    }).then(function () { busy = false; });
  }

  $("code-form").addEventListener("submit", function (event) {
    event.preventDefault();
    openSurvey($("code-input").value);
  });
  $("join-form").addEventListener("submit", join);
  $("answer-form").addEventListener("submit", submitAnswer);
  $("stop-button").addEventListener("click", function () { showError(""); show("pause-view"); });
  $("resume-button").addEventListener("click", function () { loadState(); });
  $("forget-button").addEventListener("click", function () {
    store.forget();
    me = null;
    current = null;
    showError("");
    show("join-view");
    $("name-input").value = "";
    $("name-input").focus();
  });

  var fromUrl = new URLSearchParams(location.search).get("code");
  if (fromUrl) {
    openSurvey(fromUrl);
  } else {
    show("code-view");
  }
})();
