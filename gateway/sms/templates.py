"""A brand's regex templates for provider texts the built-in parsers do not know, and the tester for
them.
"""

from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..db_types import row_id
from ..domain_errors import AlreadyExists, field_error, not_found
from ..extensions import db
from ..payments.models.payment_method import PROVIDERS
from .models.sms_template import SmsTemplate
from .parsing import (
    ParsedSms,
    parse_sms,
    parse_with_template,
    sender_for,
    sender_provider,
    validate_template,
)

MAX_SAMPLE = 2000


@dataclass(frozen=True)
class TemplateTrial:
    """What a template makes of a sample: the fields it read, and whether that text would count as a
    payment.
    """

    parsed: ParsedSms | None  # None: the template does not match the sample
    builtin: ParsedSms  # the built-in parsers' reading, which wins when it recognises the text
    trusted: bool  # the sender is the provider's own, so a match is an incoming credit

    @property
    def used(self):
        """Whether the template would be consulted at all (the built-in parsers did not recognise
        the text).
        """
        return not self.builtin.recognised


def list_templates(brand):
    """The brand's templates in the order ingest tries them."""
    return (
        db.session.execute(
            db.select(SmsTemplate).where(SmsTemplate.brand_id == brand.id).order_by(SmsTemplate.id)
        )
        .scalars()
        .all()
    )


def get_template(brand, template_id):
    """A template of this brand; NotFound for anything else, another brand's included."""
    template_id = row_id(template_id)
    template = db.session.get(SmsTemplate, template_id) if template_id is not None else None
    if template is None or template.brand_id != brand.id:
        raise not_found("sms_template")
    return template


def checked_pattern(pattern):
    """The pattern when it compiles with the named groups ingest needs; ValidationFailed on
    `pattern` saying why not.
    """
    try:
        validate_template(pattern)
    except ValueError as error:
        raise field_error("pattern", str(error)) from None
    return pattern


def checked_provider(provider):
    """A known wallet provider, or ValidationFailed on `provider`."""
    if provider not in PROVIDERS:
        raise field_error("provider", f"Provider must be one of {', '.join(PROVIDERS)}.")
    return provider


def create_template(brand, provider, name, pattern):
    """Save an enabled template; ingest tries it on every text the built-in parsers do not
    recognise.
    """
    name = (name or "").strip()
    if not 1 <= len(name) <= 100:
        raise field_error(
            "name",
            "A name of 1 to 100 characters is required.",
            "required" if not name else "invalid",
        )
    template = SmsTemplate(
        brand_id=brand.id,
        provider=checked_provider(provider),
        name=name,
        pattern=checked_pattern(pattern),
        enabled=True,
    )
    db.session.add(template)
    try:
        commit_work()
    except IntegrityError:
        db.session.rollback()
        raise AlreadyExists(
            f"A template is already named {name!r}.",
            [{"field": "name", "code": "taken", "message": "Template names are unique."}],
            code="NAME_TAKEN",
        ) from None
    return template


def set_template_enabled(template, enabled):
    """Switch a template on or off; returns whether anything changed."""
    changed = db.session.execute(
        db.update(SmsTemplate)
        .where(SmsTemplate.id == template.id, SmsTemplate.enabled.is_(not enabled))
        .values(enabled=enabled)
        .execution_options(synchronize_session=False)
    ).rowcount
    commit_work()
    db.session.refresh(template)
    return changed == 1


def delete_template(template):
    """Remove a template; texts it already read keep what was stored."""
    db.session.delete(template)
    commit_work()


def try_template(provider, pattern, text, sender=None):
    """Run a template on a sample as ingest would, saving nothing; ValidationFailed on a bad pattern
    or sample.
    """
    provider = checked_provider(provider)
    checked_pattern(pattern)
    if not (text or "").strip() or len(text) > MAX_SAMPLE:
        raise field_error("sample", f"Paste a sample text of 1 to {MAX_SAMPLE} characters.")
    sender = (sender or "").strip() or sender_for(provider)
    return TemplateTrial(
        parsed=parse_with_template(pattern, text),
        builtin=parse_sms(sender, text),
        trusted=sender_provider(sender) == provider,
    )
