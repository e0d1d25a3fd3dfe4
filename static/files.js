// "Open tokenizer file" and "Download" controls (partials/open_tokenizer.html,
// partials/export.html). Loaded with <script src> (the CSP forbids inline
// script). Without JavaScript both still work as plain form posts.
(function () {
  "use strict";
  var root = document.documentElement;
  if (root.hasAttribute("data-files-js")) { return; }  // the partials may each include it
  root.setAttribute("data-files-js", "");

  // Downloads: submit the page form natively to the export URL. form.submit()
  // fires no "submit" event, so htmx does not turn the download into a swap.
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-export-download]") : null;
    if (!button || !button.form) { return; }
    event.preventDefault();
    event.stopPropagation();
    var form = button.form;
    var saved = {
      action: form.getAttribute("action"),
      method: form.getAttribute("method"),
      enctype: form.getAttribute("enctype")
    };
    form.setAttribute("action", button.getAttribute("formaction"));
    form.setAttribute("method", "post");
    form.setAttribute("enctype", "application/x-www-form-urlencoded");
    HTMLFormElement.prototype.submit.call(form);
    ["action", "method", "enctype"].forEach(function (name) {
      if (saved[name] === null) { form.removeAttribute(name); } else { form.setAttribute(name, saved[name]); }
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

  // Typing or pasting a file into the open box must not re-encode the page
  // on every keystroke: keep those input events away from the page form.
  document.addEventListener("input", function (event) {
    if (event.target.closest && event.target.closest("[data-open-tokenizer] details")) {
      event.stopPropagation();
    }
  }, true);
})();
