// "Swap A <-> B" (templates/partials/compare_controls.html) changes many fields
// at once, so it posts the whole form as a normal page load: htmx would turn
// the submit into a live update of the results only. form.submit() fires no
// submit event, so htmx leaves it alone. Without JavaScript the button posts
// the form by itself.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-full-post]");
    if (!button || !button.form) { return; }
    event.preventDefault();
    event.stopPropagation();
    var form = button.form;
    var carried = document.createElement("input");
    carried.type = "hidden";
    carried.name = button.name;
    carried.value = button.value;
    form.appendChild(carried);
    form.setAttribute("action", button.getAttribute("formaction"));
    form.setAttribute("method", "post");
    form.submit();
  }, true);
})();
