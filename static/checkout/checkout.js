// The hosted checkout's small helpers: copy buttons, the expiry countdown, status polling.
// Every page works without this file; it only makes them livelier.
(function () {
  "use strict";

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // Plain-http deployments have no clipboard API: fall back to a hidden textarea.
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      var copied = document.execCommand("copy");
      document.body.removeChild(area);
      copied ? resolve() : reject(new Error("copy refused"));
    });
  }

  function setUpCopyButtons() {
    document.querySelectorAll("[data-copy]").forEach(function (button) {
      var status = button.parentNode.querySelector(".copied");
      button.hidden = false;
      button.addEventListener("click", function () {
        copyText(button.getAttribute("data-copy")).then(function () {
          status.textContent = button.getAttribute("data-copied-text");
          window.setTimeout(function () { status.textContent = ""; }, 3000);
        }, function () {
          status.textContent = "";
        });
      });
    });
  }

  function setUpCountdown() {
    var box = document.querySelector("[data-countdown]");
    if (!box) { return; }
    var clock = box.querySelector("[data-countdown-clock]");
    var deadline = Date.now() + parseInt(box.getAttribute("data-countdown"), 10) * 1000;
    box.querySelector(".countdown").hidden = false;
    function tick() {
      var left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      var minutes = Math.floor(left / 60), seconds = left % 60;
      clock.textContent = minutes + ":" + (seconds < 10 ? "0" : "") + seconds;
      box.classList.toggle("urgent", left <= 120);
      if (left === 0) {
        // The server now shows the expired page.
        window.location.reload();
        return;
      }
      window.setTimeout(tick, 1000);
    }
    tick();
  }

  function setUpStatusPolling() {
    var page = document.querySelector("[data-status-url]");
    if (!page) { return; }
    var url = page.getAttribute("data-status-url");
    function poll() {
      fetch(url, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" })
        .then(function (response) { return response.json(); })
        .then(function (body) {
          if (body.redirect_to) {
            window.location.assign(body.redirect_to);
          } else {
            window.setTimeout(poll, 3000);
          }
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    }
    window.setTimeout(poll, 3000);
  }

  function focusAlert() {
    var alert = document.querySelector("[data-focus]");
    if (alert) { alert.focus(); }
  }

  document.addEventListener("DOMContentLoaded", function () {
    setUpCopyButtons();
    setUpCountdown();
    setUpStatusPolling();
    focusAlert();
  });
})();
