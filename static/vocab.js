// The Vocabulary page (templates/vocab.html). Without JavaScript every token is a link to
// its card and the page works the same; this adds:
// - a preview of a token (id, text) beside it on hover, keyboard focus or the first tap
//   (a second tap on the same token follows its link to the card);
// - arrow keys moving between the tokens of one list, tree or group; Escape closes the preview;
// - after a link to a card, the card takes the focus, so keyboard users land on it.
(function () {
  "use strict";
  var peek = null;
  var tapped = null;

  function peekBox() {
    if (!peek) { peek = document.getElementById("vocab-peek"); }
    return peek;
  }

  function show(chip) {
    var box = peekBox();
    if (!box) { return; }
    box.textContent = "";
    var head = document.createElement("strong");
    head.textContent = "token " + chip.getAttribute("data-id");
    var text = document.createElement("div");
    text.className = "mono";
    text.textContent = chip.getAttribute("data-shown") || "";  // textContent: token text is data
    var hint = document.createElement("div");
    hint.className = "hint";
    hint.textContent = "Enter or a click opens its card";
    box.appendChild(head);
    box.appendChild(text);
    box.appendChild(hint);
    box.hidden = false;
    var r = chip.getBoundingClientRect();
    var top = r.bottom + 6;
    if (top + box.offsetHeight > window.innerHeight - 4) { top = Math.max(4, r.top - box.offsetHeight - 6); }
    var left = Math.max(4, Math.min(r.left, window.innerWidth - box.offsetWidth - 4));
    box.style.top = top + "px";  // (style properties from script are allowed by the CSP)
    box.style.left = left + "px";
    var active = document.querySelector(".vchip.is-active");
    if (active && active !== chip) { active.classList.remove("is-active"); }
    chip.classList.add("is-active");
    chip.setAttribute("aria-describedby", "vocab-peek");
  }

  function hide() {
    var box = peekBox();
    if (box) { box.hidden = true; }
    var active = document.querySelector(".vchip.is-active");
    if (active) { active.classList.remove("is-active"); }
    tapped = null;
  }

  document.addEventListener("mouseover", function (event) {
    var chip = event.target.closest && event.target.closest(".vchip");
    if (chip) { show(chip); }
  });
  document.addEventListener("mouseout", function (event) {
    var chip = event.target.closest && event.target.closest(".vchip");
    if (chip && !chip.contains(event.relatedTarget) && document.activeElement !== chip) { hide(); }
  });
  document.addEventListener("focusin", function (event) {
    var chip = event.target.closest && event.target.closest(".vchip");
    if (chip) { show(chip); } else { hide(); }
  });
  // A tap on a touch screen: the first shows the preview, a second tap on it opens the card.
  var lastPointer = "";
  document.addEventListener("pointerdown", function (event) { lastPointer = event.pointerType || ""; });
  document.addEventListener("click", function (event) {
    var chip = event.target.closest && event.target.closest(".vchip");
    if (!chip) { if (lastPointer === "touch") { hide(); } return; }
    if (lastPointer === "touch" && tapped !== chip) {
      event.preventDefault();
      show(chip);
      tapped = chip;
    }
  });

  function group(chip) {
    return chip.closest(".vtree, .vocab-table, .vocab-chips, .vocab-children, .vocab-facts") || document;
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { hide(); return; }
    var chip = event.target.closest && event.target.closest(".vchip");
    if (!chip) { return; }
    var step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    if (!step) { return; }
    var chips = Array.prototype.slice.call(group(chip).querySelectorAll(".vchip"));
    var next = chips[chips.indexOf(chip) + step];
    if (next) { event.preventDefault(); next.focus(); }
  });

  document.addEventListener("DOMContentLoaded", function () {
    if (window.location.hash === "#card") {
      var card = document.getElementById("card");
      if (card) { card.focus({ preventScroll: false }); }
    }
  });
})();
