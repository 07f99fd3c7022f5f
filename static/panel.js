/* The panel's only script: the phone menu and "are you sure?" on destructive buttons. Pages work without it
   (the menu button is a link to #sidebar, opened by CSS :target). */
document.addEventListener("DOMContentLoaded", function () {
  var root = document.documentElement;
  var toggle = document.querySelector(".nav-toggle");
  var close = document.querySelector(".nav-close");
  function setOpen(open) {
    root.classList.toggle("nav-open", open);
    if (toggle) toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }
  if (toggle) {
    toggle.addEventListener("click", function (event) {
      event.preventDefault();
      event.stopPropagation();
      setOpen(!root.classList.contains("nav-open"));
    });
  }
  if (close) {
    close.addEventListener("click", function (event) {
      event.preventDefault();
      setOpen(false);
      if (toggle) toggle.focus();
    });
  }
  document.addEventListener("click", function (event) {
    if (root.classList.contains("nav-open") && !event.target.closest(".sidebar")) setOpen(false);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && root.classList.contains("nav-open")) {
      setOpen(false);
      if (toggle) toggle.focus();
    }
  });
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
    });
  });
});
