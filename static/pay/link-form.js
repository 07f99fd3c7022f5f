/* The panel's payment link form: show only the amount boxes and the question box that apply.
   Without JavaScript every box stays visible and the server ignores the ones that do not apply. */
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("[data-link-form]");
  if (!form) return;
  function box(name) {
    var input = form.querySelector("[name='" + name + "']");
    return input ? input.closest(".field") : null;
  }
  function show(name, visible) {
    var field = box(name);
    if (field) field.hidden = !visible;
  }
  function update() {
    var fixed = form.querySelector("[name='amount_kind']").value === "fixed";
    show("amount", fixed);
    show("min_amount", !fixed);
    show("max_amount", !fixed);
    show("text_label", form.querySelector("[name='ask_text']").value !== "off");
  }
  form.addEventListener("change", update);
  update();
});
