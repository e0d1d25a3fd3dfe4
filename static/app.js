// The playground's own behaviour, loaded with <script src> (the CSP forbids
// inline script). Everything uses event delegation on the document, so it
// keeps working for the parts htmx swaps in. Without JavaScript the pages
// still work: forms post normally and render the full page.
(function () {
  "use strict";

  // --- token details on hover / focus ----------------------------------------
  function showDetails(tok) {
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
    var previous = area.querySelector(".tok.is-active");
    if (previous && previous !== tok) { previous.classList.remove("is-active"); }
    tok.classList.add("is-active");
  }

  document.addEventListener("mouseover", function (event) {
    var tok = event.target.closest && event.target.closest(".tok");
    if (tok) { showDetails(tok); }
  });
  document.addEventListener("focusin", function (event) {
    var tok = event.target.closest && event.target.closest(".tok");
    if (tok) { showDetails(tok); }
  });

  // Arrow keys move between tokens (one tab stop for the whole token list).
  document.addEventListener("keydown", function (event) {
    var tok = event.target.closest && event.target.closest(".tok");
    if (!tok) { return; }
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

  // Ctrl/Cmd+Enter in a text box submits its form right away.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) { return; }
    var form = event.target.form;
    if (form && form.requestSubmit) { event.preventDefault(); form.requestSubmit(); }
  });
})();
