// Copy button for share links. Loaded with <script src> (the CSP forbids inline
// script); works for links already on the page and ones htmx swaps in later.
(function () {
  "use strict";
  var root = document.documentElement;
  if (root.hasAttribute("data-share-js")) { return; }  // included once per form
  root.setAttribute("data-share-js", "");

  function revealCopyButtons() {
    var buttons = document.querySelectorAll(".share-copy[hidden]");
    for (var i = 0; i < buttons.length; i++) { buttons[i].hidden = false; }
  }

  function showCopied(button) {
    var note = button.parentNode.querySelector(".share-copied");
    if (!note) { return; }
    note.hidden = false;
    window.setTimeout(function () { note.hidden = true; }, 1500);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-copy-target]") : null;
    if (!button) { return; }
    var field = document.getElementById(button.getAttribute("data-copy-target"));
    if (!field) { return; }
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(function () { showCopied(button); },
        function () { document.execCommand("copy"); showCopied(button); });
    } else {
      document.execCommand("copy");
      showCopied(button);
    }
  });

  document.addEventListener("DOMContentLoaded", revealCopyButtons);
  document.addEventListener("htmx:afterSettle", revealCopyButtons);
  revealCopyButtons();
})();
