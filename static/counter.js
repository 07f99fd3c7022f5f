/* The counter's sale page: asks the sale's status every two seconds and flips to "Paid" (or to how
   the sale ended) without a reload. Text goes in with textContent only: nothing from the server is
   read as HTML. Without JavaScript the page is right whenever it is reloaded. */
document.addEventListener("DOMContentLoaded", function () {
  var root = document.querySelector(".counter-sale");
  if (!root) return;
  var url = root.getAttribute("data-status-url");
  var OPEN = ["created", "processing"];
  var ENDED = ["expired", "cancelled", "failed"];
  function part(name) { return root.querySelector('[data-sale="' + name + '"]'); }
  function setText(selector, value) {
    var node = root.querySelector(selector);
    if (node && value !== null && value !== undefined) node.textContent = value;
  }
  function show(name) {
    ["open", "paid", "ended"].forEach(function (other) {
      var section = part(other);
      if (section) section.hidden = other !== name;
    });
  }
  function apply(sale) {
    root.setAttribute("data-status", sale.status);
    if (sale.paid) {
      setText("[data-sale-paid-amount]", sale.amount_text);
      setText("[data-sale-provider-trx]", sale.provider_trx_id);
      setText("[data-sale-trx]", sale.trx_id);
      show("paid");
      return false;
    }
    if (ENDED.indexOf(sale.status) !== -1) {
      var title = root.querySelector("[data-sale-ended-title]");
      if (title) title.textContent = title.getAttribute("data-" + sale.status) || title.textContent;
      show("ended");
      return false;
    }
    var waiting = root.querySelector("[data-sale-waiting]");
    if (waiting) waiting.hidden = sale.status !== "processing";
    setText("[data-sale-amount]", sale.amount_text);
    return true;
  }
  function poll() {
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.json();
      })
      .then(function (sale) { if (apply(sale)) window.setTimeout(poll, 2000); })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  if (OPEN.indexOf(root.getAttribute("data-status")) !== -1) window.setTimeout(poll, 2000);
});
