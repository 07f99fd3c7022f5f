"""The audit log: who changed what in the panel, when and from where."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db


class AuditLog(db.Model):
    __tablename__ = "audit_logs"
    __table_args__ = (db.Index("ix_audit_logs_brand_created", "brand_id", "created_at"),)

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    user_id = db.Column(db.Integer, db.ForeignKey("users.id", ondelete="SET NULL"))
    # Kept as written: the entry must still say who acted after the user is renamed or removed.
    user_email = db.Column(db.String(254))
    action = db.Column(db.String(60), nullable=False)
    target_type = db.Column(db.String(40))
    target_id = db.Column(db.String(64))
    details = db.Column(db.JSON)
    ip_address = db.Column(db.String(45))
    user_agent = db.Column(db.String(255))
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    user = db.relationship("User")
