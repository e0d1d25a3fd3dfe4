// "Open tokenizer file" and "Download" controls (partials/open_tokenizer.html,
// partials/export.html). Loaded with <script src> (the CSP forbids inline
// script). Without JavaScript both still work as plain form posts.
(function () {
  "use strict";
  var root = document.documentElement;
  if (root.hasAttribute("data-files-js")) { return; }  // the partials may each include it
  root.setAttribute("data-files-js", "");

  // Downloads: post the page form to the export URL with fetch and save the
  // answer. (A native submit would be turned into a live update by htmx, and
  // its navigation would cancel a live update in flight.) Without JavaScript
  // the buttons are plain form posts and the browser saves the file itself.
  function formBody(form) {
    var body = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      if (typeof value === "string") { body.append(name, value); }  // not the file inputs
    });
    return body;
  }

  function save(blob, name) {
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.appendChild(link);
    link.click();
    window.setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-export-download]") : null;
    if (!button || !button.form || !window.fetch) { return; }
    event.preventDefault();
    event.stopPropagation();
    // htmx remembers the focused submit button and would send the page's next
    // live update to its formaction: let go of it.
    button.blur();
    var panel = button.closest("[data-export]");
    var note = panel && panel.querySelector(".export-error");
    if (note) { note.textContent = ""; }
    fetch(button.getAttribute("formaction"), {
      method: "POST",
      body: formBody(button.form),
      credentials: "same-origin"
    }).then(function (response) {
      if (!response.ok) {
        return response.text().then(function (text) { if (note) { note.textContent = text; } });
      }
      return response.blob().then(function (blob) {
        var named = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
        save(blob, named ? named[1] : "tokenizer");
      });
    });
  }, true);

  // A freshly opened byte-level file suggests its own pre-tokenization: select
  // it before the page re-encodes (the re-encode is triggered after settle).
  document.addEventListener("htmx:afterSwap", function (event) {
    var loaded = event.target.querySelector ? event.target.querySelector("[data-pretokenize]") : null;
    if (!loaded) { return; }
    var form = loaded.closest("form");
    var select = form && form.elements.namedItem("pretokenize");
    if (select && select.tagName === "SELECT") { select.value = loaded.getAttribute("data-pretokenize"); }
  });

  // The preset buttons show which preset is open (none after opening a file or closing).
  document.addEventListener("htmx:afterSwap", function (event) {
    if (!event.target.id || event.target.id !== "open-tokenizer-status") { return; }
    var loaded = event.target.querySelector("[data-tokenizer-id]");
    var current = loaded ? loaded.getAttribute("data-tokenizer-id") : "";
    var form = event.target.closest("form");
    if (!form) { return; }
    form.querySelectorAll("button[name=tokenizer_preset]").forEach(function (button) {
      button.setAttribute("aria-pressed", button.value === current ? "true" : "false");
    });
  });

  // After opening or closing a file, re-encode the page with (or without) it.
  // The Open button loses focus first: htmx would otherwise send the page
  // form to that button's formaction.
  document.addEventListener("htmx:afterSettle", function (event) {
    var marker = event.target.querySelector ? event.target.querySelector("[data-refresh]") : null;
    if (!marker) { return; }
    marker.parentNode.removeChild(marker);
    var box = event.target.parentNode && event.target.parentNode.querySelector("details.open-tokenizer-box");
    if (box && event.target.querySelector("[data-tokenizer-id]")) { box.open = false; }
    var form = event.target.closest("form");
    if (!form) { return; }
    if (document.activeElement && form.contains(document.activeElement) && document.activeElement.blur) {
      document.activeElement.blur();
    }
    form.dispatchEvent(new Event("input", { bubbles: true }));
  });

  // htmx swaps only 2xx answers: a refused open (413 over the size limit, a
  // server error) would otherwise leave the status unchanged and silent.
  document.addEventListener("htmx:responseError", function (event) {
    var target = event.detail && event.detail.target;
    if (!target || target.id !== "open-tokenizer-status") { return; }
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var box = target.closest("[data-open-tokenizer]");
    var limit = box ? Number(box.getAttribute("data-max-bytes")) : 0;
    var message = status === 413
      ? "file: the file is larger than this playground accepts" +
        (limit ? " (" + limit.toLocaleString("en") + " bytes, setting MAX_CONTENT_LENGTH)" : "")
      : "file: opening failed (HTTP " + status + "); try again";
    var note = document.createElement("p");
    note.className = "field-error open-tokenizer-error";
    note.setAttribute("role", "alert");
    note.textContent = message;
    var old = target.querySelector(".open-tokenizer-error");
    if (old) { old.remove(); }
    target.insertBefore(note, target.firstChild);
  });

  // Typing or pasting a file into the open box must not re-encode the page
  // on every keystroke: keep those input events away from the page form.
  document.addEventListener("input", function (event) {
    if (event.target.closest && event.target.closest("[data-open-tokenizer] details")) {
      event.stopPropagation();
    }
  }, true);
})();
