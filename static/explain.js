// Boundary explanations on the Bytes page (docs/explain.md): the gap between two
// token spans becomes a target (hover, focus with the arrow keys, tap) that says
// in one sentence why the two tokens are not one, with both rules and the
// boundary's story ("Open the Trace at this boundary": the Trace view with the
// page's `story` field set, rendered by the server); "Outline boundaries"
// outlines every gap by its cause.
// The explanation is asked for only when a gap is opened or the outlines are on
// (POST /fragments/explain with the page's form), never per keystroke.
(function () {
  "use strict";
  var cache = null;  // {key, promise} of the results now shown

  function form() { return document.getElementById("tool-form"); }
  function tokensBox() { return document.getElementById("tokens"); }

  function explanation() {
    var box = tokensBox();
    if (!box || !form()) { return Promise.reject(new Error("no tokens")); }
    // (what is explained is the form's state, not the box's text: a token's popover or the prompt-end
    // marks change that text while the tokens stay the same)
    var state = [];
    new FormData(form()).forEach(function (value, name) { if (typeof value === "string") { state.push(name + "=" + value); } });
    var key = box.getAttribute("data-count") + ":" + state.join("&");
    if (cache && cache.key === key && cache.box === box) { return cache.promise; }
    var data = new FormData(form());
    var promise = fetch("/fragments/explain", { method: "POST", body: data, credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (body) { if (!r.ok) { throw body; } return body; }); });
    cache = { key: key, box: box, promise: promise };
    return promise;
  }

  function addGaps() {
    var box = tokensBox();
    if (!box || box.querySelector(".gap")) { return; }
    var toks = Array.prototype.slice.call(box.querySelectorAll(".tok"));
    var first = true;
    toks.forEach(function (tok, i) {
      var next = toks[i + 1];
      if (!next) { return; }
      var left = parseInt(tok.getAttribute("data-index"), 10);
      if (parseInt(next.getAttribute("data-index"), 10) !== left + 1) { return; }
      var gap = document.createElement("span");
      gap.className = "gap";
      gap.setAttribute("role", "button");
      gap.setAttribute("data-boundary", String(left));
      gap.setAttribute("aria-label", "Why tokens " + (left + 1) + " and " + (left + 2) + " are apart");
      gap.tabIndex = first ? 0 : -1;
      first = false;
      tok.after(gap);
    });
  }

  function panel() {
    var found = document.getElementById("gap-details");
    if (found) { return found; }
    found = document.createElement("div");
    found.id = "gap-details";
    found.className = "gap-details";
    found.setAttribute("role", "status");
    found.hidden = true;
    document.body.appendChild(found);
    return found;
  }

  function line(parent, tag, text, cls) {
    var el = document.createElement(tag);
    el.textContent = text;  // data, never markup
    if (cls) { el.className = cls; }
    parent.appendChild(el);
    return el;
  }

  // A sentence whose `quoted` parts are tokens: each becomes a <code> (text nodes only, never markup).
  function codeLine(parent, text, cls) {
    var el = document.createElement("p");
    el.className = cls;
    var parts = String(text).split("`");
    if (parts.length % 2 === 0) { el.textContent = text; parent.appendChild(el); return el; }
    parts.forEach(function (part, i) {
      if (i % 2) { var c = document.createElement("code"); c.textContent = part; el.appendChild(c); }
      else if (part) { el.appendChild(document.createTextNode(part)); }
    });
    parent.appendChild(el);
    return el;
  }

  function ruleText(rule) {
    if (!rule) { return ""; }
    var n = rule.rank !== undefined ? "rank " + rule.rank.toLocaleString("en") : "rule " + (rule.index + 1).toLocaleString("en");
    return rule.text[0] + " + " + rule.text[1] + " → " + rule.text[2] + " (" + n + ")";
  }

  var shown = null;  // the gap whose popover is open (or opening)
  function show(gap) {
    var index = parseInt(gap.getAttribute("data-boundary"), 10);
    var box = panel();
    // Already open for this gap: not again (a mouseover as the page moves under a still pointer would
    // empty it, and take the keyboard's focus from the button Enter moved it to).
    if (gap === shown && !box.hidden) { return; }
    shown = gap;
    var active = document.querySelector(".gap.is-open");
    if (active && active !== gap) { active.classList.remove("is-open"); }
    gap.classList.add("is-open");
    gap.setAttribute("aria-describedby", box.id);
    box.textContent = "";
    line(box, "p", "…", "muted");
    box.hidden = false;
    place(box, gap);
    explanation().then(function (body) {
      var b = body.boundaries[index];
      box.textContent = "";
      if (!b) { line(box, "p", "No boundary here.", "muted"); return; }
      line(box, "p", b.cause.replace("_", " "), "gap-cause cause-" + b.cause);
      codeLine(box, b.sentence, "gap-sentence");
      var list = document.createElement("ul");
      var canTrace = !!document.getElementById("view-trace") && !!document.getElementById("story-field");
      // Each rule links to its place in the Trace (the story's row of the pair it would join; the pass
      // where the other rule fired) and, for a preset or opened file, to its token's Vocabulary card.
      [["would", "Would join: ", b.would_join], ["taker", "Took the " + (b.taken_by ? b.taken_by.took : "") + " token first: ", b.taken_by],
       ["maker", "Made later by: ", b.made_by]].forEach(function (item) {
        if (!item[2]) { return; }
        var li = line(list, "li", item[1]);
        if (canTrace) {
          var open = line(li, "button", ruleText(item[2]), "linkish");
          open.type = "button";
          open.setAttribute("data-story-open", item[0]);
          open.addEventListener("click", function () { openStory(index, item[0]); });
        } else { li.appendChild(document.createTextNode(ruleText(item[2]))); }
        var vocab = cardBase();
        if (vocab) {
          li.appendChild(document.createTextNode(" · "));
          var a = line(li, "a", "card");
          a.href = vocab + "&token=" + encodeURIComponent(item[2].new) + "#card";
          a.title = "The Vocabulary card of " + item[2].text[2];
        }
      });
      if (list.childElementCount) { box.appendChild(list); }
      if (canTrace) {
        var link = line(box, "button", "Open the Trace at this boundary", "small");
        link.type = "button";
        link.id = "gap-open-trace";
        link.addEventListener("click", function () { openStory(index, "story"); });
      }
      place(box, gap);
    }, function (err) {
      box.textContent = "";
      line(box, "p", (err && err.error && err.error.message) || "The explanation could not be made.", "error");
    });
  }

  function cardBase() {
    var area = document.querySelector(".token-area[data-vocab]");
    return area ? area.getAttribute("data-vocab") : null;
  }

  // The Trace with boundary `index`'s story: the page's `story` field set, the Trace view chosen
  // (its tabs ask the server again); once the answer is in, `target` is scrolled to and focused.
  var pending = null;
  function openStory(index, target) {
    var field = document.getElementById("story-field");
    var view = document.getElementById("view-trace");
    if (!field || !view) { return; }
    field.value = String(index);
    pending = target;
    panel().hidden = true;
    view.checked = true;
    var tabs = view.closest("[hx-post]");
    if (tabs) { view.dispatchEvent(new Event("change", { bubbles: true })); return; }  // the tabs ask again
    if (window.htmx) { window.htmx.trigger(form(), "submit"); }  // tabs that do not: the form does
  }

  function reveal() {
    var target = pending;
    pending = null;
    var story = document.getElementById("trace-story");
    if (!target || !story) { return; }
    var el = story;
    var link = target === "story" ? null : story.querySelector('[data-story-rule="' + target + '"] a[href^="#"]');
    if (link) { el = document.getElementById(link.getAttribute("href").slice(1)) || story; }
    el.scrollIntoView({ block: "center" });
    el.focus({ preventScroll: true });
  }

  function place(box, gap) {
    var r = gap.getBoundingClientRect();
    var width = Math.min(360, window.innerWidth - 16);
    box.style.width = width + "px";
    box.style.left = Math.max(8, Math.min(window.scrollX + r.left - width / 2, window.scrollX + window.innerWidth - width - 8)) + "px";
    box.style.top = (window.scrollY + r.bottom + 8) + "px";
    // Never past the bottom of the screen (a phone): above the gap when it fits there, else scrolled to.
    var height = box.offsetHeight;
    if (r.bottom + 8 + height > window.innerHeight) {
      if (r.top - 8 - height >= 0) { box.style.top = (window.scrollY + r.top - 8 - height) + "px"; }
      else if (box.scrollIntoView) { box.scrollIntoView({ block: "nearest" }); }
    }
  }

  function outline(on) {
    var box = tokensBox();
    if (!box) { return; }
    box.classList.toggle("outlined", on);
    if (!on) { return; }
    addGaps();
    explanation().then(function (body) {
      box.querySelectorAll(".gap").forEach(function (gap) {
        var b = body.boundaries[parseInt(gap.getAttribute("data-boundary"), 10)];
        if (b) { gap.className = gap.className.replace(/ ?cause-\S+/g, "") + " cause-" + b.cause; gap.title = b.sentence; }
      });
    });
  }

  function toggle() { return document.getElementById("explain-toggle"); }

  function setUp() {
    var box = tokensBox();
    if (!box || !form()) { return; }
    if (!toggle()) {
      var label = document.createElement("label");
      label.className = "explain-toggle";
      var input = document.createElement("input");
      input.type = "checkbox";
      input.id = "explain-toggle";
      label.appendChild(input);
      label.appendChild(document.createTextNode(" Outline boundaries by cause"));
      var area = box.closest(".token-area");
      area.parentNode.insertBefore(label, area);
    }
    addGaps();
    if (toggle().checked) { outline(true); }
  }

  document.addEventListener("change", function (e) { if (e.target && e.target.id === "explain-toggle") { outline(e.target.checked); } });
  document.addEventListener("mouseover", function (e) { var g = e.target.closest && e.target.closest(".gap"); if (g) { show(g); } });
  var quiet = false;  // focus handed back to a gap by Escape: keep its popover closed
  document.addEventListener("focusin", function (e) {
    var g = e.target.closest && e.target.closest(".gap");
    if (g && quiet) { quiet = false; return; }
    if (g) { show(g); }
  });
  document.addEventListener("click", function (e) {
    var g = e.target.closest && e.target.closest(".gap");
    if (g) { show(g); return; }
    if (!(e.target.closest && e.target.closest("#gap-details"))) { var p = document.getElementById("gap-details"); if (p) { p.hidden = true; } }
  });
  var opener = null;  // the gap whose popover the keyboard entered
  document.addEventListener("keydown", function (e) {
    var inside = e.target.closest && e.target.closest("#gap-details");
    if (inside && e.key === "Escape") { panel().hidden = true; if (opener) { quiet = true; opener.focus(); } return; }
    var g = e.target.closest && e.target.closest(".gap");
    if (!g) { return; }
    if (e.key === "Escape") { panel().hidden = true; return; }
    if (e.key === "Enter" || e.key === " ") {
      // a gap is a button: Enter moves into its popover (its rule links and the Trace button)
      e.preventDefault();
      opener = g;
      explanation().then(function () {
        var first = document.querySelector("#gap-details button, #gap-details a");
        if (first) { first.focus(); }
      });
      return;
    }
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") { return; }
    var all = Array.prototype.slice.call(document.querySelectorAll("#tokens .gap"));
    var next = all[all.indexOf(g) + (e.key === "ArrowRight" ? 1 : -1)];
    if (next) { e.preventDefault(); e.stopPropagation(); g.tabIndex = -1; next.tabIndex = 0; next.focus(); }
  }, true);
  document.addEventListener("htmx:afterSwap", function () { cache = null; setUp(); });
  document.addEventListener("htmx:afterSettle", reveal);
  // A story belongs to the text it was told for: typing into the text or the merges forgets it.
  document.addEventListener("input", function (e) {
    var t = e.target;
    if (t && (t.name === "text" || t.name === "merges")) { var f = document.getElementById("story-field"); if (f) { f.value = ""; } }
  }, true);
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", setUp); } else { setUp(); }
})();
