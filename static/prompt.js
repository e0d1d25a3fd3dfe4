// Where the prompt ends, on the Bytes page (docs/explain.md, "On the Bytes page"): the tokens that
// text typed after the prompt could still change are marked on their spans (dashed: a witness
// changes them; dotted: undecided), a changeable token's popover names its witness with a link to
// the page with the witness typed, and a note under the tokens says whether the prompt ends on a
// final boundary and how many tokens a healed generation may choose from.
// Asked for once per rendered result (POST /fragments/prompt with the page's form, as
// static/explain.js asks for its explanation), a short pause after the result arrives: typing
// cancels a question not yet answered, so a long text is worked out only when typing stops.
// Without JavaScript none of this is shown; the same answer is POST /api/tokenizers/<id>/prompt.
(function () {
  "use strict";
  // The pause after a result before asking: keystrokes arrive faster than this while typing. A
  // long text's answer costs the server more (each witness is an encode of the whole text), so
  // it waits for a longer pause.
  var PAUSE_MS = 120;
  var LONG_PAUSE_MS = 400;
  var LONG_CHARS = 5000;
  // Whitespace and control marks, as the token spans show them (webapp/web/common/viewmodels.py).
  var MARKS = { " ": "·", "\t": "→", "\n": "↵", "\r": "␍", "\u00a0": "⍽" };
  var timer = null;
  var asking = null;  // the AbortController of the question in flight
  var kept = null;    // the note of the result being replaced, moved into the next one

  function form() { return document.getElementById("tool-form"); }
  function tokensBox() { return document.getElementById("tokens"); }

  function cancel() {
    window.clearTimeout(timer);
    timer = null;
    if (asking) { asking.abort(); asking = null; }
  }

  // The form as the page encodes it, without the files chosen to open (never sent per keystroke).
  function formData() {
    var out = new URLSearchParams();
    new FormData(form()).forEach(function (value, name) {
      if (typeof value === "string") { out.append(name, value); }
    });
    return out;
  }

  function schedule() {
    cancel();
    var box = tokensBox();
    var note = placeNote(box);
    if (!note) { return; }
    note.classList.add("is-pending");
    var field = form().elements.namedItem("text");
    var text = field ? field.value : "";
    if (!text) { note.hidden = true; return; }  // no tokens, no end to speak of
    var over = overLimit(text);
    if (over) { unmark(box); failed(note, over); return; }  // said without asking (a 400 is a console error)
    timer = window.setTimeout(function () { ask(box, note, text); }, text.length > LONG_CHARS ? LONG_PAUSE_MS : PAUSE_MS);
  }

  // The server's size limit (LIMIT_EXPLAIN_BYTES, on the form), checked here first: a text over it
  // would only get a 400 back.
  function overLimit(text) {
    var limit = parseInt(form().getAttribute("data-prompt-bytes"), 10);
    if (!limit || text.length * 3 <= limit) { return null; }
    var size = window.TextEncoder ? new TextEncoder().encode(text).length : text.length;
    if (size <= limit) { return null; }
    return "the text is " + size.toLocaleString("en") + " bytes of UTF-8, over the " + limit.toLocaleString("en") +
           " it is worked out for (LIMIT_EXPLAIN_BYTES).";
  }

  // `text`: the text field's value (newlines as typed) for the witness link; the form posts it too.
  function ask(box, note, text) {
    var field = form().elements.namedItem("text");
    if (!field || field.value !== text) {
      // The text changed since this result was shown, with no new result on its way (a script set
      // it): its tokens are not the text's, so nothing is said of them, and nothing is sent.
      unmark(box);
      note.hidden = true;
      note.classList.remove("is-pending");
      return;
    }
    var data = formData();
    var controller = window.AbortController ? new AbortController() : null;
    asking = controller;
    fetch("/fragments/prompt", { method: "POST", body: data, credentials: "same-origin",
                                 signal: controller ? controller.signal : undefined })
      .then(function (r) {
        // an error is JSON naming the field; anything else (a proxy's page) is said in general
        return r.json().catch(function () { return null; }).then(function (body) {
          if (!r.ok || !body) { throw body || {}; }
          return body;
        });
      })
      .then(function (body) {
        if (box !== tokensBox()) { return; }  // another result is shown by now
        if (asking === controller) { asking = null; }
        show(box, note, body, text);
      }, function (err) {
        if (err && err.name === "AbortError") { return; }
        if (box !== tokensBox()) { return; }
        if (asking === controller) { asking = null; }
        unmark(box);
        failed(note, (err && err.error && err.error.message) || "the answer could not be read.");
      });
  }

  // --- the note ----------------------------------------------------------------

  // The note's place under the tokens of the result shown (the previous result's note moved
  // there, so the layout stays still while typing); none when no tokens are shown.
  function placeNote(box) {
    var area = box && box.closest(".token-area");
    if (!area) { kept = null; return null; }
    var note = document.getElementById("prompt-end") || kept;
    kept = null;
    if (!note) {
      note = document.createElement("div");
      note.id = "prompt-end";
      note.className = "prompt-end";
      note.hidden = true;
    }
    if (note.previousElementSibling !== area) { area.after(note); }
    return note;
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }  // data, never markup
    return node;
  }

  // A character nobody sees on its own: a format character, or a combining mark with no letter before it.
  var INVISIBLE = /^[\p{Cf}\p{Co}\p{Cn}\p{Cs}]$/u;
  var COMBINING = /^\p{M}$/u;

  // Text with whitespace and control characters made visible (the spans' marks; U+XXXX for the rest).
  function visible(text, into) {
    var run = "";
    var previous = "";
    function flush() { if (run) { into.appendChild(document.createTextNode(run)); run = ""; } }
    Array.from(text).forEach(function (ch) {
      var code = ch.codePointAt(0);
      var mark = MARKS[ch] || (code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? "␡" : null);
      if (!mark && /^\s$/.test(ch)) { mark = "␣"; }
      if (!mark && (INVISIBLE.test(ch) || (COMBINING.test(ch) && (!previous || previous === "mark")))) {
        mark = "U+" + code.toString(16).toUpperCase().padStart(4, "0");
      }
      if (!mark) { run += ch; previous = "text"; return; }
      flush();
      into.appendChild(el("span", "mark", mark));
      previous = "mark";
    });
    flush();
    return into;
  }

  // A token as a chip in the token spans' colours: a span's own contents, or a vocabulary token's text.
  function chipOfSpan(tok) {
    var chip = el("span", "chip " + (/\bhue-\S+/.exec(tok.className) || ["hue-none"])[0]);
    Array.prototype.forEach.call(tok.childNodes, function (node) { chip.appendChild(node.cloneNode(true)); });
    return chip;
  }
  function chipOfToken(id, text) {
    var chip = visible(text, el("span", "chip hue-" + ((id * 7) % 12)));  // viewmodels.hue_class
    chip.title = "id " + id;
    return chip;
  }

  function count(n, one, many) { return n.toLocaleString("en") + " " + (n === 1 ? one : many); }

  function show(box, note, body, text) {
    note.classList.remove("is-pending");
    note.textContent = "";
    var spans = Array.prototype.slice.call(box.querySelectorAll(".tok"));
    if (!body.ids.length) { unmark(box); note.hidden = true; return; }
    if (!sameTokens(box, spans, body.ids)) {
      unmark(box);
      // special tokens are text to the prompt end, as to the explanations: recognized, they give other tokens
      var special = form().querySelector('input[name="special"]:checked');
      failed(note, special ? "it reads special tokens as plain text, and here that gives other tokens than the ones shown."
                           : "its tokens are not the ones shown.");
      return;
    }
    mark(box, spans, body, text);
    var last = lastToken(spans, body);
    note.appendChild(endLine(body, last));
    note.appendChild(healingLine(body, last));
    if (body.stable < body.ids.length) { note.appendChild(legend(body.unstable.length > 0, body.undecided.length > 0)); }
    note.setAttribute("data-end", body.end);
    note.hidden = false;
  }

  function failed(note, message) {
    note.classList.remove("is-pending");
    note.textContent = "";
    note.removeAttribute("data-end");
    note.appendChild(el("p", "prompt-end-error", "Prompt end not shown: " + message));
    note.hidden = false;
  }

  // The answer is for the tokens shown: the same count, and each span's id where it has one.
  function sameTokens(box, spans, ids) {
    if (parseInt(box.getAttribute("data-count"), 10) !== ids.length) { return false; }
    return spans.every(function (tok) {
      var i = parseInt(tok.getAttribute("data-index"), 10);
      return !tok.hasAttribute("data-token-id") || String(ids[i]) === tok.getAttribute("data-token-id");
    });
  }

  // The last token as a chip-maker: its span when this page of spans shows it, else the healing
  // example with its id (its bytes start with its own), else its number.
  function lastToken(spans, body) {
    var n = body.ids.length;
    var span = spans.length ? spans[spans.length - 1] : null;
    if (span && parseInt(span.getAttribute("data-index"), 10) === n - 1) { return function () { return chipOfSpan(span); }; }
    var own = body.healing.examples.filter(function (ex) { return ex.id === body.ids[n - 1]; })[0];
    if (own) { return function () { return chipOfToken(own.id, own.text); }; }
    return function () { return document.createTextNode("token " + n.toLocaleString("en")); };
  }

  // "Prompt ends on a final boundary" / "mid-token: the last token ` la` may still change" / undecided.
  function endLine(body, last) {
    var n = body.ids.length;
    var open = n - body.stable;
    var p = el("p", "prompt-end-head");
    if (body.end === "final") {
      p.appendChild(el("strong", null, "Prompt ends on a final boundary:"));
      p.appendChild(document.createTextNode(" no text typed after it changes " +
        (n === 1 ? "its token." : "any of its " + count(n, "token", "tokens") + ".")));
      return p;
    }
    p.appendChild(el("strong", null, body.end === "changeable" ? "Prompt ends mid-token:" : "Prompt end undecided:"));
    p.appendChild(document.createTextNode(open === 1 ? " the last token " : " the last " + count(open, "token", "tokens") + ", up to "));
    p.appendChild(last());
    var verb = body.end === "changeable" ? "may still change" : (open === 1 ? "is" : "are") + " neither proven final nor shown to change";
    p.appendChild(document.createTextNode((open === 1 ? " " : ", ") + verb));
    var undecided = body.undecided.length;
    if (body.end === "changeable" && undecided) { p.appendChild(document.createTextNode(" (" + count(undecided, "is", "are") + " undecided)")); }
    p.appendChild(document.createTextNode("."));
    return p;
  }

  // "A healed generation may choose among 169 tokens that start with ` la` (` la`, ` last`, …)."
  function healingLine(body, last) {
    var healing = body.healing;
    var p = el("p", "prompt-end-healing");
    p.appendChild(document.createTextNode(body.end === "final" ? "Token healing is not needed here; it would choose among "
                                                               : "A healed generation may choose among "));
    var total = el("strong", "prompt-end-candidates", healing.candidates.toLocaleString("en"));
    total.setAttribute("data-candidates", String(healing.candidates));
    p.appendChild(total);
    p.appendChild(document.createTextNode(" " + (healing.candidates === 1 ? "token that starts" : "tokens that start") + " with "));
    p.appendChild(last());
    if (healing.examples.length) {
      p.appendChild(document.createTextNode(": "));
      var list = el("span", "prompt-end-examples");
      healing.examples.forEach(function (ex) { list.appendChild(chipOfToken(ex.id, ex.text)); });
      if (healing.candidates > healing.examples.length) { list.appendChild(el("span", "muted", "…")); }
      p.appendChild(list);
    } else {
      p.appendChild(document.createTextNode("."));
    }
    return p;
  }

  // What the marks mean, for the marks shown.
  function legend(changeable, undecided) {
    var p = el("p", "prompt-end-legend");
    if (changeable) {
      p.appendChild(el("span", "legend-changeable", "Dashed"));
      p.appendChild(document.createTextNode(": text typed after the prompt could still change these tokens (hover or tap one for an example)."));
    }
    if (undecided) {
      if (changeable) { p.appendChild(document.createTextNode(" ")); }
      p.appendChild(el("span", "legend-undecided", "Dotted"));
      p.appendChild(document.createTextNode(": undecided, neither proven final nor shown to change."));
    }
    return p;
  }

  // --- the marks on the spans, and the popover --------------------------------

  function unmark(box) {
    if (!box) { return; }
    box.querySelectorAll(".tok-changeable, .tok-undecided").forEach(function (tok) {
      tok.classList.remove("tok-changeable", "tok-undecided");
      tok.removeAttribute("data-witness");
    });
    box.removeAttribute("data-prompt-text");
    box.removeAttribute("data-prompt-first");
  }

  function mark(box, spans, body, text) {
    var witness = {};
    body.unstable.forEach(function (u) { witness[u.index] = u.witness; });
    var undecided = {};
    body.undecided.forEach(function (i) { undecided[i] = true; });
    spans.forEach(function (tok) {
      var i = parseInt(tok.getAttribute("data-index"), 10);
      tok.classList.toggle("tok-changeable", witness.hasOwnProperty(i));
      tok.classList.toggle("tok-undecided", !!undecided[i]);
      if (witness.hasOwnProperty(i)) { tok.setAttribute("data-witness", witness[i]); } else { tok.removeAttribute("data-witness"); }
    });
    // The first witnessed token is the first token its witness changes; a later token's witness
    // may change one before it instead (a witness is only said to change the tokens up to its own).
    box.setAttribute("data-prompt-first", body.unstable.length ? String(body.unstable[0].index) : "");
    box.setAttribute("data-prompt-text", text);
    document.dispatchEvent(new CustomEvent("bpe:tokens-marked"));
  }

  function detailsSlot(panel) {
    var slot = panel.querySelector(".details-prompt");
    if (slot) { return slot; }
    slot = el("div", "details-prompt");
    // first: the merge tree under it can be long, and this is what the mark under the token is about
    panel.insertBefore(slot, panel.querySelector(".details-body"));
    return slot;
  }

  // The token popover (static/app.js) of a marked token: its witness, and a link to the text with it typed.
  function fillDetails(tok, panel) {
    var slot = detailsSlot(panel);
    slot.textContent = "";
    var box = tok.closest("#tokens");
    if (box && tok.classList.contains("tok-changeable")) {
      var typed = tok.getAttribute("data-witness") || "";
      var first = box.getAttribute("data-prompt-first") === tok.getAttribute("data-index");
      var p = el("p", "details-prompt-line");
      p.appendChild(el("strong", null, "May still change. "));
      p.appendChild(document.createTextNode("Type "));
      p.appendChild(visible(typed, el("code", "witness")));
      p.appendChild(document.createTextNode(" after the text and " + (first ? "this token changes." : "this token, or one before it, changes.")));
      slot.appendChild(p);
      var link = window.bpeStateLink && window.bpeStateLink(form(), { text: box.getAttribute("data-prompt-text") + typed, story: "" });
      if (link) {
        var a = el("a", "details-prompt-link", "Open the text with it typed →");
        a.href = link;
        slot.appendChild(el("p")).appendChild(a);
      }
    } else if (tok.classList.contains("tok-undecided")) {
      var u = el("p", "details-prompt-line");
      u.appendChild(el("strong", null, "Undecided. "));
      u.appendChild(document.createTextNode("Not proven final, and no text tried after it changed it."));
      slot.appendChild(u);
    }
    slot.hidden = !slot.childElementCount;
  }

  document.addEventListener("bpe:details", function (e) {
    var tok = e.target;
    if (tok.closest && tok.closest("#tokens")) { fillDetails(tok, e.detail.panel); }
  });

  // --- when to ask -------------------------------------------------------------

  document.addEventListener("htmx:beforeSwap", function (e) {
    if (e.detail.target && e.detail.target.id === "results") { kept = document.getElementById("prompt-end"); }
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    if (e.detail.target && e.detail.target.id === "results") { schedule(); }
  });
  // Typing makes the answer being waited for stale: ask again once the new result is in.
  document.addEventListener("input", function (e) {
    if (e.target && e.target.form && e.target.form.id === "tool-form") { cancel(); }
  }, true);
  // Text typed before the scripts ran is not the shown result's: app.js asks for its result,
  // whose swap schedules the question. Otherwise ask about the result the server drew.
  function start() {
    var field = form() && form().elements.namedItem("text");
    if (field && field.value !== field.defaultValue) { return; }
    schedule();
  }
  if (document.readyState === "complete") { start(); } else { document.addEventListener("DOMContentLoaded", start); }
})();
