"""Writing the audit log: every change made in the panel or through the API, with who, what, when
and from where.
"""

from flask import has_request_context, request

from ..answer_commit import commit_work
from ..clock import utcnow
from ..extensions import db
from .models.audit import AuditLog

MAX_USER_AGENT = 255


def target_reference(target):
    """(type, id) naming what an entry is about: a payment by payment_id, a user by e-mail, others
    by id.
    """
    if target is None:
        return None, None
    if isinstance(target, tuple):
        kind, ident = target
        return kind, None if ident is None else str(ident)
    kind = target.__tablename__.removesuffix("s").replace("_", " ")
    if kind == "user":
        return kind, target.email
    return kind, str(getattr(target, "public_id", None) or target.id)


def asker(asked_by):
    """record_audit's (user, who) for whoever asked: a panel user, or the name of an actor that is
    no user (an API key: "API key #3"); (None, None) for nobody."""
    if asked_by is None or isinstance(asked_by, str):
        return None, asked_by
    return asked_by, None


def client_address():
    """The address the request came from (ProxyFix, when configured, makes it the real client's)."""
    return (request.remote_addr or "")[:45] or None


def record_audit(user, action, target=None, details=None, brand_id=None, who=None):
    """Append one entry and commit it, or, inside a unit of work, with the action it records; `user`
    may be None.

    `who` names an actor that is no user (an API key) in the entry's Who column.
    """
    target_type, target_id = target_reference(target)
    entry = AuditLog(
        brand_id=brand_id or user.brand_id,
        user_id=getattr(user, "id", None),
        user_email=getattr(user, "email", None) or who,
        action=action,
        target_type=target_type,
        target_id=target_id,
        details=details or None,
        created_at=utcnow(),
    )
    if has_request_context():
        entry.ip_address = client_address()
        entry.user_agent = (request.user_agent.string or "")[:MAX_USER_AGENT] or None
    db.session.add(entry)
    commit_work()
    return entry
