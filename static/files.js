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
    var form = event.target.closest("form");
    if (!form) { return; }
    if (document.activeElement && form.contains(document.activeElement) && document.activeElement.blur) {
      document.activeElement.blur();
    }
    form.dispatchEvent(new Event("input", { bubbles: true }));
  });

  // --- the drop zone: a chosen or dropped file opens at once, with progress ---
  function openButton(el) {
    var box = el.closest("[data-open-tokenizer]");
    return box && box.querySelector(".open-tokenizer-button");
  }
  function showName(input) {
    var zone = input.closest("[data-dropzone]");
    var slot = zone && zone.querySelector("[data-file-name]");
    if (slot) { slot.textContent = input.files && input.files.length ? input.files[0].name : ""; }
  }
  function maybeOpen(input) {
    showName(input);
    if (!input.files || !input.files.length) { return; }
    var box = input.closest("[data-open-tokenizer]");
    var main = box.querySelector('input[name="tokenizer_file"]');
    var merges = box.querySelector('input[name="tokenizer_merges_file"]');
    // a vocab.json needs its merges.txt: wait for the second file
    var mainName = main.files && main.files.length ? main.files[0].name : "";
    if (/vocab[^/]*\.json$/i.test(mainName) && !(merges.files && merges.files.length)) {
      var note = box.querySelector(".open-progress-note");
      if (note) { note.textContent = "Now choose the merges.txt that goes with " + mainName + "."; }
      return;
    }
    if (!mainName) { return; }
    var button = openButton(input);
    if (!button) { return; }
    ggufHeaderOnly(main, box).then(function () {
      button.click();
      // htmx remembers a clicked submit button and would send the page's next
      // live update to its formaction; a focusout makes it let go.
      button.dispatchEvent(new FocusEvent("focusout", { bubbles: true }));
    });
  }

  // --- a GGUF file: only its metadata is sent -------------------------------
  // A llama.cpp model file is gigabytes of weights after a header and its
  // key/values (the tokenizer is in those). Their end is found by reading the
  // file's start in the browser (File.slice), twice as much each time up to the
  // server's 64 MiB, and the input then holds only that prefix. Anything odd
  // (not GGUF, a header this reader does not follow) sends the file as it is,
  // and the server says what is wrong.
  var GGUF_READ_LIMIT = 64 * 1024 * 1024;  // formats/gguf.py METADATA_LIMIT_BYTES
  var GGUF_FIRST_READ = 1024 * 1024;
  // bytes of one value by GGUF type: 0-7 ints and floats and bool, 10-12 64-bit; 8 string, 9 array
  var GGUF_SIZES = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  var MORE = {};  // thrown when the bytes read end inside the metadata

  function ggufMetadataEnd(view) {
    // the offset where the key/values end, or throws MORE (read further) or an Error (not followed)
    var pos = 0;
    function need(count) { if (pos + count > view.byteLength) { throw MORE; } }
    function u32() { need(4); var v = view.getUint32(pos, true); pos += 4; return v; }
    function u64() {
      need(8);
      var low = view.getUint32(pos, true), high = view.getUint32(pos + 4, true);
      pos += 8;
      if (high >= 0x200000) { throw new Error("count too large"); }
      return high * 4294967296 + low;
    }
    function skip(count) { need(count); pos += count; }
    function value(type, depth) {
      if (GGUF_SIZES[type]) { skip(GGUF_SIZES[type]); return; }
      if (type === 8) { skip(u64()); return; }
      if (type !== 9 || depth > 4) { throw new Error("value type " + type); }
      var inner = u32(), count = u64();
      if (GGUF_SIZES[inner]) { skip(count * GGUF_SIZES[inner]); return; }
      for (var i = 0; i < count; i++) { value(inner, depth + 1); }
    }
    need(24);
    if (view.getUint32(0, true) !== 0x46554747) { throw new Error("not GGUF"); }  // "GGUF"
    pos = 16;
    var keys = u64();
    for (var k = 0; k < keys; k++) {
      skip(u64());  // the key
      value(u32(), 0);
    }
    return pos;
  }

  function ggufHeaderOnly(input, box) {
    var file = input.files && input.files[0];
    if (!file || !window.DataTransfer || !file.slice || file.size < 24) { return Promise.resolve(); }
    var note = box.querySelector(".open-progress-note");
    function attempt(bytes) {
      return file.slice(0, bytes).arrayBuffer().then(function (buffer) {
        try {
          return ggufMetadataEnd(new DataView(buffer));
        } catch (problem) {
          if (problem !== MORE || bytes >= file.size || bytes >= GGUF_READ_LIMIT) { return null; }
          if (note) { note.textContent = "Reading the GGUF file's metadata…"; }
          return attempt(Math.min(file.size, GGUF_READ_LIMIT, bytes * 2));
        }
      });
    }
    return file.slice(0, 4).text().then(function (magic) {
      if (magic !== "GGUF") { return null; }
      return attempt(Math.min(file.size, GGUF_FIRST_READ));
    }).then(function (end) {
      if (end === null || end >= file.size) { return; }
      var prefix = new DataTransfer();
      prefix.items.add(new File([file.slice(0, end)], file.name, { type: "application/octet-stream" }));
      input.files = prefix.files;  // (no change event: the open goes on below)
      if (note) { note.textContent = "Sending the GGUF file's metadata (" + end.toLocaleString("en") + " bytes)…"; }
    }).catch(function () { return undefined; });
  }
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (input.matches && input.matches("[data-dropzone] input[type=file]")) { maybeOpen(input); }
  });
  ["dragenter", "dragover"].forEach(function (type) {
    document.addEventListener(type, function (event) {
      var zone = event.target.closest && event.target.closest("[data-dropzone]");
      if (!zone) { return; }
      event.preventDefault();
      zone.classList.add("is-over");
    });
  });
  document.addEventListener("dragleave", function (event) {
    var zone = event.target.closest && event.target.closest("[data-dropzone]");
    if (zone) { zone.classList.remove("is-over"); }
  });
  document.addEventListener("drop", function (event) {
    var zone = event.target.closest && event.target.closest("[data-dropzone]");
    if (!zone) { return; }
    event.preventDefault();
    zone.classList.remove("is-over");
    var input = zone.querySelector("input[type=file]");
    if (!input || !event.dataTransfer || !event.dataTransfer.files.length) { return; }
    input.files = event.dataTransfer.files;
    maybeOpen(input);
  });
  // Progress: the upload's bytes, then "reading" while the server parses (a
  // big rank file takes seconds).
  function progressParts(elt) {
    var box = elt.closest && elt.closest("[data-open-tokenizer]");
    return box ? { bar: box.querySelector(".open-progress"), note: box.querySelector(".open-progress-note") } : null;
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (!event.target.classList || !event.target.classList.contains("open-tokenizer-button")) { return; }
    var parts = progressParts(event.target);
    if (!parts) { return; }
    parts.bar.hidden = false;
    parts.bar.value = 0;
    parts.note.textContent = "Sending the file…";
  });
  document.addEventListener("htmx:xhr:progress", function (event) {
    if (!event.target.classList || !event.target.classList.contains("open-tokenizer-button")) { return; }
    var parts = progressParts(event.target);
    var detail = event.detail;
    if (!parts || !detail.lengthComputable || !detail.total) { return; }
    var done = Math.round(100 * detail.loaded / detail.total);
    if (done >= 100) {
      parts.bar.removeAttribute("value");  // indeterminate while the server reads it
      parts.note.textContent = "Reading the tokenizer… (large files take a few seconds)";
    } else {
      parts.bar.value = done;
      parts.note.textContent = "Sending the file… " + done + "%";
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (!event.target.classList || !event.target.classList.contains("open-tokenizer-button")) { return; }
    var parts = progressParts(event.target);
    if (!parts) { return; }
    parts.bar.hidden = true;
    parts.note.textContent = "";
  });

  // htmx swaps only 2xx answers: a refused open (413 over the size limit, a
  // server error) would otherwise leave the status unchanged and silent.
  document.addEventListener("htmx:responseError", function (event) {
    var target = event.detail && event.detail.target;
    if (!target || target.id !== "open-tokenizer-status") { return; }
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var box = document.querySelector("[data-open-tokenizer]");  // the status sits in the input card
    var limit = box ? Number(box.getAttribute("data-max-bytes")) : 0;
    var message = status === 413
      ? "file: the file is larger than this playground accepts" +
        (limit ? " (" + limit.toLocaleString("en") + " bytes, setting MAX_CONTENT_LENGTH)" : "")
      : "file: opening failed (HTTP " + status + "); try again";
    var note = document.createElement("p");
    note.className = "field-error open-tokenizer-error";
    note.setAttribute("role", "alert");
    note.textContent = message;
    // beside the drop zone, where the file was chosen (the status sits in the input card)
    var slot = document.getElementById("open-tokenizer-error-slot") || target;
    var old = slot.querySelector(".open-tokenizer-error");
    if (old) { old.remove(); }
    slot.insertBefore(note, slot.firstChild);
  });

  // "Open it on the Characters page": the htmx open sent only the file, so the
  // link lacks the page's text; carry it along (short texts, as the server does).
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.open-elsewhere");
    var field = document.getElementById("f-text");
    if (!link || !field || !field.value || field.value.length > 2000) { return; }
    var url = new URL(link.href, window.location.href);
    if (!url.searchParams.has("text")) {
      url.searchParams.set("text", field.value);
      link.href = url.toString();
    }
  });

  // Typing or pasting a file into the open box must not re-encode the page
  // on every keystroke: keep those input events away from the page form.
  document.addEventListener("input", function (event) {
    if (event.target.closest && event.target.closest("[data-open-tokenizer] .open-tokenizer-box")) {
      event.stopPropagation();
    }
  }, true);
})();
