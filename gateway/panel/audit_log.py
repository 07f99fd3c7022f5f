"""The audit log page: who changed what, when and from where (super-administrators only)."""

from flask import render_template

from ..accounts.models.audit import AuditLog
from ..api.paging import paginate
from ..extensions import db
from . import bp
from .access import AUDIT_LOG_VIEW, current_brand, requires
from .formatting import current_zone
from .payments import filter_text, page_number

PER_PAGE = 50


@bp.get("/audit-log")
@requires(AUDIT_LOG_VIEW)
def audit_log():
    """The brand's audit entries, newest first, narrowed by action when asked."""
    action = filter_text("action", 60)
    query = db.select(AuditLog).where(AuditLog.brand_id == current_brand().id)
    if action:
        query = query.where(AuditLog.action == action)
    rows, meta = paginate(
        query.order_by(AuditLog.created_at.desc(), AuditLog.id.desc()),
        {"page": page_number(), "per_page": PER_PAGE},
    )
    actions = (
        db.session.execute(
            db.select(AuditLog.action)
            .where(AuditLog.brand_id == current_brand().id)
            .distinct()
            .order_by(AuditLog.action)
        )
        .scalars()
        .all()
    )
    return render_template(
        "panel/audit_log.html",
        entries=rows,
        meta=meta,
        action=action,
        actions=actions,
        filters={"action": action} if action else {},
        zone=current_zone().key,
    )
