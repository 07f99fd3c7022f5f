"""A brand's own regular expression for a provider text the built-in parsers do not know."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db


class SmsTemplate(db.Model):
    __tablename__ = "sms_templates"
    __table_args__ = (db.UniqueConstraint("brand_id", "name", name="uq_sms_templates_brand_name"),)

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    provider = db.Column(db.String(20), nullable=False)
    name = db.Column(db.String(100), nullable=False)
    pattern = db.Column(db.Text, nullable=False)
    enabled = db.Column(db.Boolean, nullable=False, default=True)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
