"""Developers, webhook deliveries: the 50 most recent, each with every attempt, and redelivery.

Staff see this log too: it holds no key or secret, and "did the shop get told?" is their question.
"""

import json

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..extensions import db
from ..payments.models.payment import Payment
from ..webhooks.deliveries import LOG_SIZE, get_delivery, recent_deliveries, retry_delivery
from . import bp
from .access import VIEW, WEBHOOKS_REDELIVER, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import ActionForm


def pretty_payload(payload):
    """The stored body indented for reading (the bytes sent are the stored string itself)."""
    try:
        return json.dumps(json.loads(payload), indent=2, ensure_ascii=False)
    except ValueError:
        return payload


@bp.get("/developers/webhook-deliveries")
@requires(VIEW)
def webhook_deliveries():
    """The brand's 50 most recent deliveries, newest first."""
    return render_template(
        "panel/developers_deliveries.html",
        deliveries=recent_deliveries(current_brand(), panel_livemode()),
        log_size=LOG_SIZE,
    )


@bp.get("/developers/webhook-deliveries/<int:delivery_id>")
@requires(VIEW)
def webhook_delivery(delivery_id):
    """One delivery: the body sent, its payment, and every attempt with status, time, duration and
    error.
    """
    delivery = get_delivery(current_brand(), delivery_id)
    payment = db.session.get(Payment, delivery.payment_id) if delivery.payment_id else None
    return render_template(
        "panel/developers_delivery.html",
        delivery=delivery,
        payment=payment,
        payload=pretty_payload(delivery.payload),
    )


@bp.post("/developers/webhook-deliveries/<int:delivery_id>/redeliver")
@requires(WEBHOOKS_REDELIVER)
def webhook_delivery_redeliver(delivery_id):
    """Send the same signed event again now, as POST /webhooks/deliveries/{id}/retry does."""
    delivery = get_delivery(current_brand(), delivery_id)
    if ActionForm().validate_on_submit():
        try:
            with unit_of_work():
                retry_delivery(current_brand(), delivery.id)
                record_audit(
                    current_user,
                    "webhook_delivery.redeliver",
                    ("webhook delivery", delivery.id),
                    {"event": delivery.event, "url": delivery.url},
                )
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(_("Redelivery started; the attempt appears below in a moment."), "success")
    return redirect(url_for("panel.webhook_delivery", delivery_id=delivery.id))
