"""A brand's exchange rates (taka per unit of each currency it accepts beside BDT) and its rate
feed."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db

MANUAL, FEED = "manual", "feed"
RATE_SOURCES = (MANUAL, FEED)


class CurrencyRate(db.Model):
    """The rate a brand takes one currency at: new payments in it fix their taka amount at it."""

    __tablename__ = "currency_rates"
    __table_args__ = (db.UniqueConstraint("brand_id", "code", name="uq_currency_rates_brand_code"),)

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    code = db.Column(db.String(3), nullable=False)
    rate = db.Column(db.Numeric(18, 6), nullable=False)  # taka per unit
    source = db.Column(db.String(10), nullable=False, default=MANUAL)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_by = db.Column(db.String(255))  # a user's e-mail, "command line" or "rate feed"


class RateFeed(db.Model):
    """Where a brand's rates are fetched from, and how the last fetch went."""

    __tablename__ = "rate_feeds"

    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), primary_key=True)
    url = db.Column(db.String(2048), nullable=False)
    last_fetched_at = db.Column(UTCDateTime)
    last_success_at = db.Column(UTCDateTime)
    last_error = db.Column(db.String(500))
    # The first failure of the current run of failures: one notification per outage.
    failing_since = db.Column(UTCDateTime)
