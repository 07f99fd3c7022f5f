/* The receipt's Print button (the page reads well without it: the browser's own print works too). */
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-print]").forEach(function (button) {
    button.addEventListener("click", function () { window.print(); });
  });
});
