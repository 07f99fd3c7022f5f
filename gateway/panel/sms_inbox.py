"""The SMS inbox: every forwarded text with its parse and match status; match one by hand, or set it
aside.
"""

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..api.paging import paginate
from ..devices.brand_devices import get_device, list_devices
from ..domain_errors import DomainError
from ..errors import http_status
from ..extensions import db
from ..money import format_amount
from ..sms.balance_chain import (
    brand_chains,
    link_of,
    set_chain_mode,
    set_starting_balance,
    wallet_numbers,
)
from ..sms.chain_gaps import gap_at, open_gaps
from ..sms.hand_matching import (
    HAND_MATCHABLE,
    HAND_MATCHABLE_HELD,
    hand_match_differences,
    match_sms_by_hand,
)
from ..sms.inbox import (
    find_payment_to_match,
    get_inbound_sms,
    ignore_sms,
    list_inbound_sms_query,
    match_candidates,
    parser_reading,
)
from ..sms.models.inbound_sms import InboundSms
from ..sms.parsing import sender_provider
from ..states import SMS_IGNORED
from . import bp
from .access import SETTINGS_MANAGE, SMS_ACT, VIEW, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import ActionForm, attach_error, options
from .forms_sms import (
    CHAIN_MODE_CHOICES,
    CHAIN_STATUS_NAMES,
    CHAIN_WALLET_CHOICES,
    SMS_STATUS_NAMES,
    ChainModeForm,
    MatchForm,
    SmsFilterForm,
    StartingBalanceForm,
)
from .payments import PER_PAGE, page_number


def status_counts(brand):
    """How many of the brand's texts of the mode shown (live or test) are in each status."""
    return dict(
        db.session.execute(
            db.select(InboundSms.status, db.func.count())
            .where(InboundSms.brand_id == brand.id, InboundSms.livemode == panel_livemode())
            .group_by(InboundSms.status)
        ).all()
    )


@bp.get("/sms-inbox")
@requires(VIEW)
def sms_inbox():
    """Every text the brand's phones forwarded, newest first, filtered and paginated."""
    form = SmsFilterForm(request.args)
    form.validate()
    filters = {name: value for name, value in form.data.items() if value and not form[name].errors}
    rows, meta = paginate(
        list_inbound_sms_query(current_brand(), filters, livemode=panel_livemode()),
        {"page": page_number(), "per_page": PER_PAGE},
    )
    return render_template(
        "panel/sms_inbox.html",
        form=form,
        messages=rows,
        meta=meta,
        filters=filters,
        counts=status_counts(current_brand()),
        status_names=SMS_STATUS_NAMES,
        gaps=open_gaps(current_brand().id),
    )


def render_message(sms, form=None, status=200):
    """One text: what the parser read, its balance chain, what it paid, and the match and ignore
    forms.
    """
    link = link_of(sms)
    return render_template(
        "panel/sms_inbox_message.html",
        sms=sms,
        reading=parser_reading(sms),
        form=form or MatchForm(formdata=None),
        candidates=match_candidates(sms),
        open_for_match=sms.status in HAND_MATCHABLE_HELD and sms.payment_id is None,
        can_ignore=sms.status in HAND_MATCHABLE and sms.payment_id is None,
        may_override=current_user.is_super_admin,
        official_sender=sender_provider(sms.sender),
        status_names=SMS_STATUS_NAMES,
        link=link,
        gap=gap_at(link),
        chain_names=CHAIN_STATUS_NAMES,
    ), status


@bp.get("/sms-inbox/<sms_id>")
@requires(VIEW)
def sms_inbox_message(sms_id):
    """A text in full with its parse result."""
    return render_message(get_inbound_sms(current_brand(), sms_id))


@bp.post("/sms-inbox/<sms_id>/match")
@requires(SMS_ACT)
def sms_inbox_match(sms_id):
    """Bind the text to the payment named (ID or reference) and complete it, as a matching claim
    would.
    """
    brand = current_brand()
    sms = get_inbound_sms(brand, sms_id)
    form = MatchForm()
    if not form.validate_on_submit():
        return render_message(sms, form, 422)
    try:
        with unit_of_work():
            payment = find_payment_to_match(brand, form.payment.data)
            differences = hand_match_differences(sms, payment)
            transaction = match_sms_by_hand(
                sms, payment, form.reason.data, may_override=current_user.is_super_admin
            )
            details = {
                "sms": sms.public_id,
                "trx_id": transaction.trx_id,
                "provider_trx_id": transaction.provider_trx_id,
                "amount": format_amount(payment.amount),
            }
            if differences:
                details.update(differences=differences, reason=form.reason.data)
            record_audit(current_user, "sms.match", payment, details)
    except DomainError as error:
        attach_error(form, error)
        return render_message(get_inbound_sms(brand, sms_id), form, http_status(error))
    flash(
        _("Matched: payment %(ref)s is completed.", ref=payment.reference or payment.public_id[:8]),
        "success",
    )
    return redirect(url_for("panel.sms_inbox_message", sms_id=sms.public_id))


@bp.post("/sms-inbox/<sms_id>/ignore")
@requires(SMS_ACT)
def sms_inbox_ignore(sms_id):
    """Mark a text that pays nothing as ignored, so it leaves the list of texts waiting for a
    claim."""
    sms = get_inbound_sms(current_brand(), sms_id)
    if ActionForm().validate_on_submit():
        previous = sms.status
        try:
            with unit_of_work():
                ignore_sms(sms)
                record_audit(
                    current_user,
                    "sms.ignore",
                    ("sms", sms.public_id),
                    {"status": [previous, SMS_IGNORED]},
                )
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(_("The SMS is marked as ignored."), "success")
    return redirect(url_for("panel.sms_inbox_message", sms_id=sms.public_id))


# --- Balance chains (docs/sms-trust.md): each phone's wallets, last balance, the merchant's start


def balance_forms(brand, start_form=None, mode_form=None):
    """The starting-balance and mode forms, the phone choices filled from the brand's devices."""
    start_form = start_form or StartingBalanceForm(formdata=None)
    active, _ = list_devices(brand)
    start_form.device.choices = options(
        [(device.uuid, device.name) for device in active]
        + [(f"number:{number}", number) for number in wallet_numbers(brand)]
    )
    mode_form = mode_form or ChainModeForm(
        formdata=None,
        mode=brand.sms_chain_mode,
        wallets="shared" if brand.sms_shared_wallets else "own",
    )
    return start_form, mode_form


def render_balances(start_form=None, mode_form=None, status=200):
    """The chains page: every chain with its last balance and start, and the two forms."""
    brand = current_brand()
    start_form, mode_form = balance_forms(brand, start_form, mode_form)
    return render_template(
        "panel/sms_balances.html",
        chains=brand_chains(brand),
        gaps=open_gaps(brand.id),
        start_form=start_form,
        mode_form=mode_form,
        mode_label=dict(CHAIN_MODE_CHOICES).get(brand.sms_chain_mode, brand.sms_chain_mode),
        wallets_label=dict(CHAIN_WALLET_CHOICES)["shared" if brand.sms_shared_wallets else "own"],
        may_override=current_user.is_super_admin,
    ), status


@bp.get("/sms-inbox/balances")
@requires(VIEW)
def sms_balances():
    """Each phone's wallet balances as its texts printed them, and the merchant's starting
    points."""
    return render_balances()


@bp.post("/sms-inbox/balances")
@requires(SETTINGS_MANAGE)
def sms_balances_start():
    """Set or correct a chain's starting balance (owners and admins); audited."""
    brand = current_brand()
    form = balance_forms(brand, StartingBalanceForm())[0]
    if not form.validate_on_submit():
        return render_balances(start_form=form, status=422)
    try:
        with unit_of_work():
            number = form.device.data.removeprefix("number:")
            if number != form.device.data:
                device, target = None, ("wallet", number)
            else:
                number, device = "", get_device(brand, form.device.data)
                target = ("device", device.uuid)
            chain = set_starting_balance(
                brand, device, form.provider.data, form.balance.data, receiving_number=number
            )
            record_audit(
                current_user,
                "sms.balance_start",
                target,
                {
                    "provider": chain.provider,
                    "balance": format_amount(form.balance.data),
                },
            )
    except DomainError as error:
        attach_error(form, error)
        return render_balances(start_form=form, status=http_status(error))
    flash(_("The starting balance is set: the next text must follow it."), "success")
    return redirect(url_for("panel.sms_balances"))


@bp.post("/sms-inbox/balances/mode")
@requires(SETTINGS_MANAGE)
def sms_balances_mode():
    """Strict or lenient handling of credits whose balance does not follow (owners and admins)."""
    brand = current_brand()
    form = ChainModeForm()
    if not form.validate_on_submit():
        return render_balances(mode_form=form, status=422)
    previous = brand.sms_chain_mode
    shared_before = "shared" if brand.sms_shared_wallets else "own"
    wallets = form.wallets.data or shared_before
    with unit_of_work():
        set_chain_mode(brand, form.mode.data, shared_wallets=wallets == "shared")
        record_audit(
            current_user,
            "sms.chain_mode",
            ("brand", str(brand.id)),
            {"mode": [previous, form.mode.data], "wallets": [shared_before, wallets]},
        )
    flash(_("The balance check mode is saved."), "success")
    return redirect(url_for("panel.sms_balances"))
