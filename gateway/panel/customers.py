"""Customers: the list, a profile with its payments, editing and deleting."""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..api.paging import paginate
from ..domain_errors import DomainError
from ..errors import http_status, not_found
from ..extensions import db
from ..payments.customers import (
    delete_customer,
    get_customer,
    list_customers_query,
    update_customer,
    with_totals,
)
from ..payments.models.payment import Payment
from . import bp
from .access import CUSTOMERS_DELETE, CUSTOMERS_EDIT, VIEW, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import ActionForm, CustomerForm, attach_error
from .payments import PER_PAGE, filter_text, page_number


def customer_by_id(customer_id):
    """The brand's customer by its integer id (not e-mail or phone, which the API also accepts)."""
    if not str(customer_id).isdigit():
        raise not_found("customer")
    return get_customer(current_brand(), customer_id, panel_livemode())


@bp.get("/customers")
@requires(VIEW)
def customers():
    """Every customer of the brand with their payment count and paid total."""
    text = filter_text("q", 100)
    brand = current_brand()
    rows, meta = paginate(
        list_customers_query(brand, {"q": text}, panel_livemode()),
        {"page": page_number(), "per_page": PER_PAGE},
    )
    return render_template(
        "panel/customers.html",
        customers=with_totals(rows, brand),
        meta=meta,
        q=text,
        filters={"q": text} if text else {},
    )


@bp.get("/customers/<customer_id>")
@requires(VIEW)
def customer_detail(customer_id):
    """A profile and the customer's payments, newest first."""
    customer = customer_by_id(customer_id)
    query = (
        db.select(Payment)
        .where(Payment.brand_id == customer.brand_id, Payment.customer_id == customer.id)
        .order_by(Payment.created_at.desc(), Payment.id.desc())
    )
    rows, meta = paginate(query, {"page": page_number(), "per_page": PER_PAGE})
    return render_template(
        "panel/customer.html",
        customer=with_totals([customer], current_brand())[0],
        payments=rows,
        meta=meta,
        filters={},
    )


@bp.route("/customers/<customer_id>/edit", methods=["GET", "POST"])
@requires(CUSTOMERS_EDIT)
def customer_edit(customer_id):
    """Change a customer's name, e-mail or phone."""
    customer = customer_by_id(customer_id)
    form = CustomerForm(obj=customer)
    if form.validate_on_submit():
        before = {field: getattr(customer, field) for field in ("name", "email", "phone")}
        try:
            with unit_of_work():
                update_customer(
                    customer,
                    {
                        "name": form.name.data or None,
                        "email": form.email.data,
                        "phone": form.phone.data,
                    },
                )
                changes = {
                    field: [before[field], getattr(customer, field)]
                    for field in before
                    if before[field] != getattr(customer, field)
                }
                record_audit(current_user, "customer.update", customer, changes)
        except DomainError as error:
            attach_error(form, error)
            return render_template(
                "panel/customer_edit.html", customer=customer, form=form
            ), http_status(error)
        else:
            flash(_("The customer is saved."), "success")
            return redirect(url_for("panel.customer_detail", customer_id=customer.id))
    return render_template(
        "panel/customer_edit.html", customer=customer, form=form
    ), 422 if form.errors else 200


@bp.post("/customers/<customer_id>/delete")
@requires(CUSTOMERS_DELETE)
def customer_delete(customer_id):
    """Remove a profile; its payments stay for the books."""
    customer = customer_by_id(customer_id)
    if ActionForm().validate_on_submit():
        snapshot = {"name": customer.name, "email": customer.email, "phone": customer.phone}
        target = ("customer", customer.id)
        with unit_of_work():
            delete_customer(customer)
            record_audit(current_user, "customer.delete", target, snapshot)
        flash(_("The customer is deleted; their payments are kept."), "success")
    return redirect(url_for("panel.customers"))
