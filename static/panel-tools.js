/* Copy buttons for secrets, the pairing code's countdown and the "send a test text" check. Without
   JavaScript the pages still say everything: the secret is selectable text, the code's expiry time
   is printed, and Devices lists each phone's last heartbeat and text. */
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("data-copy-status"));
    if (!source) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = source.textContent.trim();
      var done = function () {
        if (status) status.textContent = button.getAttribute("data-copied") || "Copied";
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { selectText(source); });
      } else {
        selectText(source);
        try { if (document.execCommand("copy")) done(); } catch (error) { /* the text stays selected */ }
      }
    });
  });

  function selectText(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // Counted from the seconds the server gave, not from the phone's own clock, which may be wrong.
  document.querySelectorAll("[data-seconds-left]").forEach(function (clock) {
    var root = clock.closest("[data-countdown]") || document.body;
    var label = clock.querySelector("[data-remaining]");
    var deadline = Date.now() + parseInt(clock.getAttribute("data-seconds-left"), 10) * 1000;
    function tick() {
      var rest = deadline - Date.now();
      var left = Math.max(0, Math.ceil(rest / 1000));
      if (label) label.textContent = Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
      if (left > 0) return window.setTimeout(tick, (rest % 1000 || 1000) + 15);
      root.classList.add("pairing-expired");
      clock.textContent = clock.getAttribute("data-expired-text");
      clock.setAttribute("role", "alert");
      root.querySelectorAll("[data-when-expired]").forEach(function (element) { element.hidden = false; });
    }
    tick();
  });

  // Asks the panel every few seconds whether the new phone was heard from; stops at its first text.
  document.querySelectorAll("[data-first-contact]").forEach(function (box) {
    var url = box.getAttribute("data-status-url");
    var state = box.querySelector(".contact-state");
    var every = 3000;
    function stop(text) {
      state.textContent = text;
      box.removeAttribute("aria-busy");
    }
    function check() {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" }, cache: "no-store" })
        .then(function (response) {
          var json = (response.headers.get("Content-Type") || "").indexOf("application/json") === 0;
          if (!response.ok || !json) throw new Error("no status");
          return response.json();
        })
        .then(function (status) {
          state.textContent = status.message;  // text, never HTML: it may quote the phone's text
          box.classList.toggle("contact-heard", status.heard);
          box.classList.toggle("contact-text", Boolean(status.last_sms_at));
          if (status.last_sms_at || status.revoked) return box.removeAttribute("aria-busy");
          window.setTimeout(check, every);
        })
        .catch(function (error) {
          // Signed out or refused: say so and stop. The network down for a moment: try again later.
          if (error.message === "no status") return stop(box.getAttribute("data-gone-text"));
          window.setTimeout(check, every * 3);
        });
    }
    box.setAttribute("aria-busy", "true");
    check();
  });
});
