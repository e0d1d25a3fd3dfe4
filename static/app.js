// The playground's own behaviour, loaded with <script src> (the CSP forbids
// inline script). Everything uses event delegation on the document, so it
// keeps working for the parts htmx swaps in. Without JavaScript the pages
// still work: forms post normally and render the full page.
(function () {
  "use strict";
  // With JavaScript the page updates as you type: on phones the Encode button
  // (needed without JavaScript) gives its room to the tokens.
  document.documentElement.classList.add("js");

  // --- token details: a popover next to the token (hover, focus, tap) ---------
  function placePopover(panel, tok, area) {
    // Under the token, kept inside the token area; above it when there is no
    // room below in the window. Style properties set from script are allowed
    // by the CSP (only inline style attributes in markup are not).
    var a = area.getBoundingClientRect();
    var t = tok.getBoundingClientRect();
    var width = panel.offsetWidth;
    var left = Math.max(0, Math.min(t.left - a.left, a.width - width));
    var top = t.bottom - a.top + 6;
    if (t.bottom + panel.offsetHeight + 12 > window.innerHeight && t.top - a.top - panel.offsetHeight - 6 > 0) {
      top = t.top - a.top - panel.offsetHeight - 6;
    }
    panel.style.left = left + "px";
    panel.style.top = top + "px";
  }

  function showDetails(tok, reveal) {
    var area = tok.closest(".token-area");
    var panel = area ? area.querySelector(".details") : null;
    if (!panel) { return; }
    var body = panel.querySelector(".details-body");
    var empty = panel.querySelector(".details-empty");
    var values = {
      id: tok.hasAttribute("data-token-id") ? tok.getAttribute("data-token-id") : "not in the vocab",
      text: tok.getAttribute("data-text") || "",
      hex: tok.getAttribute("data-hex") || "",
      pos: tok.getAttribute("data-pos") || "",
      tree: tok.getAttribute("data-tree") || ""
    };
    // textContent only: token text is data, never markup.
    Object.keys(values).forEach(function (key) {
      var slot = body.querySelector('[data-field="' + key + '"]');
      if (slot) { slot.textContent = values[key]; }
    });
    body.hidden = false;
    if (empty) { empty.hidden = true; }
    // The token's card on the Vocabulary page (a preset or opened file: the area names the page).
    var card = panel.querySelector("[data-vocab-link]");
    if (card) {
      var vocab = area.getAttribute("data-vocab");
      card.hidden = !(vocab && tok.hasAttribute("data-token-id"));
      if (!card.hidden) { card.querySelector("a").href = vocab + "&token=" + encodeURIComponent(tok.getAttribute("data-token-id")) + "#card"; }
    }
    var previous = area.querySelector(".tok.is-active");
    if (previous && previous !== tok) { previous.classList.remove("is-active"); }
    tok.classList.add("is-active");
    tok.setAttribute("aria-describedby", panel.id);
    panel.classList.add("is-open");
    // other scripts add their part before it is placed (static/prompt.js: where the prompt ends)
    tok.dispatchEvent(new CustomEvent("bpe:details", { bubbles: true, detail: { panel: panel } }));
    placePopover(panel, tok, area);
    if (reveal && panel.scrollIntoView) { panel.scrollIntoView({ block: "nearest" }); }
  }

  function hideDetails(panel) {
    if (!panel) { return; }
    panel.classList.remove("is-open");
    var area = panel.closest(".token-area");
    var active = area && area.querySelector(".tok.is-active");
    if (active) { active.classList.remove("is-active"); }
  }

  // What another script learnt about the tokens (static/prompt.js) reaches the open popover.
  document.addEventListener("bpe:tokens-marked", function () {
    var open = document.querySelector(".details.is-open");
    var tok = open && open.closest(".token-area").querySelector(".tok.is-active");
    if (tok) { showDetails(tok); }
  });

  document.addEventListener("mouseover", function (event) {
    var tok = event.target.closest && event.target.closest(".tok");
    if (tok && !tok.closest(".is-stale")) { showDetails(tok); }
  });
  document.addEventListener("focusin", function (event) {
    var tok = event.target.closest && event.target.closest(".tok");
    if (tok) { showDetails(tok); }
  });
  document.addEventListener("click", function (event) {
    if (!event.target.closest) { return; }
    var tok = event.target.closest(".tok");
    if (tok) { showDetails(tok, true); return; }  // a tap on a phone: keep the details in view
    var close = event.target.closest(".details-close");
    if (close) { hideDetails(close.closest(".details")); return; }
    if (!event.target.closest(".details")) {
      var open = document.querySelector(".details.is-open");
      if (open) { hideDetails(open); }
    }
  });

  // Arrow keys move between tokens (one tab stop for the whole token list);
  // Escape closes the details.
  document.addEventListener("keydown", function (event) {
    var inPanel = event.key === "Escape" && event.target.closest && event.target.closest(".details.is-open");
    if (inPanel) {
      // Escape on the × (or anywhere in the details): close, and give focus back to the token
      var back = inPanel.closest(".token-area").querySelector(".tok.is-active");
      if (back) { back.focus(); }  // focusing shows the details again: hide them after
      hideDetails(inPanel);
      return;
    }
    var tok = event.target.closest && event.target.closest(".tok");
    if (!tok) { return; }
    if (event.key === "Escape") {
      hideDetails(tok.closest(".token-area").querySelector(".details"));
      return;
    }
    var step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, Home: -Infinity, End: Infinity }[event.key];
    if (step === undefined) { return; }
    var all = Array.prototype.slice.call(tok.closest(".tokens").querySelectorAll(".tok"));
    var index = all.indexOf(tok);
    var next = step === -Infinity ? 0 : step === Infinity ? all.length - 1 : index + step;
    if (next < 0 || next >= all.length) { return; }
    event.preventDefault();
    tok.tabIndex = -1;
    all[next].tabIndex = 0;
    all[next].focus();
  });

  // "Skip to the tokens": straight to the first token (one Tab from the top).
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("[data-skip-tokens]");
    if (!link) { return; }
    var first = document.querySelector('#tokens .tok[tabindex="0"]') || document.querySelector("#tokens .tok");
    if (!first) { return; }
    event.preventDefault();
    first.focus();
  });

  // --- rows that scroll sideways (nav, examples, presets on a phone) show a cue ---
  // A fade on the side where more is hidden (app.css, [data-scroll-cue]).
  function updateCue(row) {
    var more = row.scrollWidth - row.clientWidth > 2;
    row.classList.toggle("more-right", more && row.scrollLeft + row.clientWidth < row.scrollWidth - 2);
    row.classList.toggle("more-left", more && row.scrollLeft > 2);
  }
  function updateCues() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-scroll-cue]"), updateCue);
  }
  document.addEventListener("DOMContentLoaded", updateCues);
  window.addEventListener("resize", updateCues);
  document.addEventListener("htmx:afterSettle", updateCues);
  document.addEventListener("scroll", function (event) {
    if (event.target.hasAttribute && event.target.hasAttribute("data-scroll-cue")) { updateCue(event.target); }
  }, true);

  // --- copy buttons ------------------------------------------------------------
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy-from]");
    if (!button) { return; }
    var field = document.getElementById(button.getAttribute("data-copy-from"));
    if (!field) { return; }
    var note = button.parentNode.querySelector(".copied");
    var done = function () {
      if (!note) { return; }
      note.hidden = false;
      window.setTimeout(function () { note.hidden = true; }, 1500);
    };
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand("copy"); done(); });
    } else {
      document.execCommand("copy");
      done();
    }
  });

  // --- "Download all" ids: htmx would turn the form submit into a live update,
  // so with JavaScript on, fetch the file ourselves. ------------------------------
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-download]");
    if (!button || !window.fetch) { return; }
    var form = button.form;
    if (!form) { return; }
    event.preventDefault();
    event.stopPropagation();
    fetch(button.getAttribute("formaction"), {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      credentials: "same-origin"
    }).then(function (response) {
      return response.blob().then(function (blob) {
        var link = document.createElement("a");
        link.href = URL.createObjectURL(blob);
        // The server names the file (Content-Disposition); errors come back as text.
        var named = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
        link.download = named ? named[1] : "error.txt";
        document.body.appendChild(link);
        link.click();
        window.setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
      });
    });
  }, true);

  // --- an input error keeps the last good result, dimmed and labelled stale ----
  // The server answers an error with an empty slot ([data-stale-slot]); the
  // result that was showing moves into it, inert, instead of vanishing.
  var lastGood = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "results") { return; }
    lastGood = target.querySelector(".result");
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "results") { return; }
    var slot = target.querySelector("[data-stale-slot]");
    if (!slot || !lastGood) { lastGood = null; return; }
    lastGood.classList.add("is-stale");
    lastGood.setAttribute("inert", "");
    lastGood.setAttribute("aria-hidden", "true");
    // its view radios must not be sent with the form twice
    // and must leave the live radio group alone (no name, no form): they only show which view is kept
    Array.prototype.forEach.call(lastGood.querySelectorAll("input, button, textarea, select"), function (el) {
      el.disabled = true; el.removeAttribute("name"); el.removeAttribute("form");
    });
    lastGood.removeAttribute("id");
    Array.prototype.forEach.call(lastGood.querySelectorAll("[id]"), function (el) { el.setAttribute("data-stale-id", el.id); el.removeAttribute("id"); });
    slot.appendChild(lastGood);
    var extra = slot.querySelector(".stale-extra");
    if (extra) { extra.hidden = false; }
    lastGood = null;
  });

  // --- secondary panels (details) keep their open / closed state --------------
  function panelKey() { return "bpe-panels:" + document.body.className; }
  function readPanels() {
    try { return JSON.parse(window.localStorage.getItem(panelKey()) || "{}"); } catch (e) { return {}; }
  }
  function openPanelsWithErrors() {
    Array.prototype.forEach.call(document.querySelectorAll("details[data-panel]"), function (panel) {
      var errors = panel.querySelectorAll(".field-error");
      for (var i = 0; i < errors.length; i++) {
        if (errors[i].textContent.trim()) { panel.open = true; return; }
      }
    });
  }
  function restorePanels() {
    var saved = readPanels();
    Array.prototype.forEach.call(document.querySelectorAll("details[data-panel]"), function (panel) {
      if (Object.prototype.hasOwnProperty.call(saved, panel.id)) { panel.open = saved[panel.id]; }
    });
    openPanelsWithErrors();
  }
  document.addEventListener("toggle", function (event) {
    var panel = event.target;
    if (!panel.matches || !panel.matches("details[data-panel]")) { return; }
    var saved = readPanels();
    saved[panel.id] = panel.open;
    try { window.localStorage.setItem(panelKey(), JSON.stringify(saved)); } catch (e) { /* private mode */ }
  }, true);

  // --- inactive inputs: a preset or file is open, the typed fields are unused --
  function syncInactive() {
    var form = document.getElementById("tool-form");
    if (!form) { return; }
    var inactive = !!form.querySelector('input[name="tokenizer"]');
    Array.prototype.forEach.call(form.querySelectorAll(".can-be-inactive textarea"), function (box) {
      box.readOnly = inactive;
      if (inactive) { box.setAttribute("aria-describedby", box.getAttribute("aria-describedby").replace(/ ?inactive-\S+/g, "") + " inactive-" + box.name); }
    });
  }

  // --- reload and Back keep what was typed ------------------------------------
  // Small states go into the URL (the server renders them: reload works even
  // before this script runs); large ones into a localStorage draft that the
  // URL points at with ?draft=1. Share links stay the way to send a state.
  var URL_MAX = 1800;
  function stateOf(form) {
    var names = (form.getAttribute("data-state-fields") || "").split(" ");
    var data = new FormData(form);
    var out = [];
    names.forEach(function (name) {
      if (!name) { return; }
      var value = data.get(name);
      if (name === "chat" && data.has("chat_rows")) {  // the Chat editor's rows are the messages
        var contents = data.getAll("chat_content");
        var extras = data.getAll("chat_extra");  // a row's tool calls, carried along as JSON
        value = JSON.stringify(data.getAll("chat_role").map(function (role, i) {
          var message = { role: role, content: String(contents[i] || "").replace(/\r\n/g, "\n") };
          var extra = null;
          try { extra = extras[i] ? JSON.parse(extras[i]) : null; } catch (e) { extra = null; }
          if (extra && typeof extra === "object") {
            ["tool_calls", "tool_call_id"].forEach(function (key) { if (key in extra) { message[key] = extra[key]; } });
          }
          return message;
        }));
      }
      if (typeof value === "string") { out.push([name, value]); }
    });
    return out;
  }
  // The page's state as a link with some fields replaced ({text: ...}), as reload and Back keep
  // it (the same fields, the same query); null when it would be longer than a server accepts
  // (LIMIT_URL_BYTES). static/prompt.js links to the text with a witness typed after it.
  var LINK_MAX = 8000;
  window.bpeStateLink = function (form, replace) {
    var pairs = stateOf(form).map(function (pair) {
      return Object.prototype.hasOwnProperty.call(replace, pair[0]) ? [pair[0], replace[pair[0]]] : pair;
    });
    var link = form.getAttribute("action") + "?" + new URLSearchParams(pairs).toString();
    return link.length <= LINK_MAX ? link : null;
  };
  function draftKey(form) { return "bpe-draft:" + form.getAttribute("action"); }
  function saveState() {
    var form = document.getElementById("tool-form");
    if (!form || !form.hasAttribute("data-state-fields") || !window.history.replaceState) { return; }
    var pairs = stateOf(form);
    var query = new URLSearchParams(pairs).toString();
    var path = form.getAttribute("action");
    try {
      if (query.length <= URL_MAX) {
        window.localStorage.removeItem(draftKey(form));
        window.history.replaceState(null, "", path + "?" + query);
      } else {
        window.localStorage.setItem(draftKey(form), JSON.stringify(pairs));
        window.history.replaceState(null, "", path + "?draft=1");
      }
    } catch (e) { /* storage full or off: the page still works, only reload forgets */ }
  }
  function restoreDraft() {
    var form = document.getElementById("tool-form");
    if (!form || new URLSearchParams(window.location.search).get("draft") !== "1") { return; }
    var pairs;
    try { pairs = JSON.parse(window.localStorage.getItem(draftKey(form)) || "null"); } catch (e) { pairs = null; }
    if (!pairs) { return; }
    pairs.forEach(function (pair) {
      var field = form.elements.namedItem(pair[0]);
      if (!field) { return; }
      if (field.length !== undefined && field.tagName !== "SELECT") {  // radio group
        Array.prototype.forEach.call(field, function (radio) { radio.checked = radio.value === pair[1]; });
      } else if (field.type !== "file") {
        field.value = pair[1];
        var folded = pair[1] && field.closest && field.closest("details.chat-tools");
        if (folded) { folded.open = true; }  // the server drew the Tools box folded: it was empty then
      }
    });
    askOnceReady(form, "input");
  }
  // Text typed (or a view tab picked) before the scripts ran (a slow phone, a test
  // that types at once) fired its event before htmx listened: the shown result is
  // of the server's text and view. Ask for the typed or picked one.
  function catchEarlyInput() {
    var form = document.getElementById("tool-form");
    if (!form) { return; }
    var typed = Array.prototype.some.call(form.elements, function (field) {
      return (field.tagName === "TEXTAREA" || field.type === "text") && field.value !== field.defaultValue;
    });
    // (the typed text's answer is drawn in the view then chosen: its radio travels with the form)
    if (typed) { askOnceReady(form, "input"); return; }
    // A view tab picked in that gap: the Trace and the Chat are drawn by the server when asked
    // (a click there showed "computed when this view is chosen" for good).
    var picked = document.querySelector('input.tab-radio[name="view"]:checked');
    if (picked && !picked.defaultChecked) { askOnceReady(picked, "change"); }
  }
  // Send `type` from `target` once htmx has set the form up (it starts on the same
  // DOMContentLoaded): again until a request has gone out.
  function askOnceReady(target, type) {
    var sent = false;
    document.addEventListener("htmx:beforeRequest", function () { sent = true; }, { once: true });
    var tries = 0;
    (function poke() {
      if (sent || tries++ > 10) { return; }
      target.dispatchEvent(new Event(type, { bubbles: true }));
      window.setTimeout(poke, 400);
    })();
  }
  var saveTimer = null;
  document.addEventListener("input", function (event) {
    if (!event.target.form || event.target.form.id !== "tool-form") { return; }
    window.clearTimeout(saveTimer);
    saveTimer = window.setTimeout(saveState, 150);
  });
  // The view tab a person picked wins over the one an answer already in flight
  // was rendered with (it was sent before the click), so a swap never undoes it.
  var chosenView = null;
  document.addEventListener("change", function (event) {
    if (event.target.name === "view") { chosenView = event.target.value; saveState(); }
  });
  // Tabs over a result whose chosen view is already on the page (Tokens; Ids when sent) need no
  // answer: asking anyway swapped the whole result under a person already reading it (an open
  // popover lost its focus). The Trace and Chat views always ask: the server draws a boundary's
  // story and the chat's count.
  document.addEventListener("htmx:confirm", function (event) {
    var tabs = event.detail.elt;
    if (!tabs.classList || !tabs.classList.contains("tabs")) { return; }
    var chosen = tabs.querySelector("input.tab-radio:checked");
    var views = tabs.closest(".views");
    if (!chosen || (chosen.value !== "tokens" && chosen.value !== "ids") || !views) { return; }
    var view = views.querySelector(".view-" + chosen.value);
    if (view && !view.querySelector(".ids-pending, .trace-pending")) { event.preventDefault(); }
  });
  // The radio is set at once (no flicker back to Tokens); asking for the view waits until htmx has
  // processed the new tabs (its htmx:load, in the settle of that same swap): a change dispatched in
  // afterSwap, or at an earlier swap's settle, reached tabs with no listener yet, and the Trace
  // stayed "computed when this view is chosen" for good.
  var askAgain = null;
  document.addEventListener("htmx:afterSwap", function (event) {
    if (!chosenView) { return; }
    var radio = document.querySelector('input.tab-radio[name="view"][value="' + chosenView + '"]');
    if (!radio || radio.checked) { return; }
    radio.checked = true;
    // a result rendered without the chosen view (the trace, a long ids list): ask for it as a click would
    var tabs = radio.closest(".tabs");
    if (!tabs || !tabs.hasAttribute("hx-post")) { return; }
    var swapped = event.target;
    if (swapped && swapped.contains && swapped.contains(radio)) { askAgain = radio; }
    else { radio.dispatchEvent(new Event("change", { bubbles: true })); }  // (tabs htmx wired long ago)
  });
  document.addEventListener("htmx:load", function (event) {
    var radio = askAgain;
    if (!radio || !event.target.contains || !event.target.contains(radio)) { return; }
    askAgain = null;
    if (radio.checked) { radio.dispatchEvent(new Event("change", { bubbles: true })); }
  });
  document.addEventListener("htmx:afterSettle", function () {
    syncInactive();
    openPanelsWithErrors();
  });
  // the state a live update sends is the state to keep (saved before the answer
  // arrives, so a reload right after the update shows the same page)
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt && event.detail.elt.id === "tool-form") {
      // right after the request has gone out (a long text's draft costs milliseconds
      // to store: not on the keystroke's way to the server), still before the answer
      window.clearTimeout(saveTimer);
      saveTimer = window.setTimeout(saveState, 0);
    }
  });
  document.addEventListener("htmx:afterSwap", function () {
    window.clearTimeout(saveTimer);
    saveState();
  });
  // a reload or a link followed right after typing: save what is there now
  window.addEventListener("pagehide", saveState);
  // "Decode these ids" fills the decode panel: show it.
  document.addEventListener("htmx:oobAfterSwap", function (event) {
    var target = event.detail.target;
    if (target && target.id === "field-ids") {
      var panel = document.getElementById("panel-decode");
      if (panel) { panel.open = true; }
    }
  });

  function start() {
    restorePanels();
    syncInactive();
    if (new URLSearchParams(window.location.search).get("draft") === "1") { restoreDraft(); } else { catchEarlyInput(); }
  }
  // Not at once when this script runs: a deferred script runs while the document is already
  // "interactive", before DOMContentLoaded, when htmx has not yet set the form up (it does so
  // in a DOMContentLoaded listener added before this one, its script coming first). Text
  // typed (or a view tab picked) in that gap fired an event no one sent; catchEarlyInput looks after it.
  if (document.readyState === "complete") { start(); } else { document.addEventListener("DOMContentLoaded", start); }

  // Ctrl/Cmd+Enter in a text box submits its form right away.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) { return; }
    var form = event.target.form;
    if (form && form.requestSubmit) { event.preventDefault(); form.requestSubmit(); }
  });
})();
