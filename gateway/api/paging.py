"""Page-limited lists: `page`, `per_page` and the `meta` block."""

import math

from ..extensions import db


def paginate(query, args):
    """One page of a select and its meta block, counted without loading every row."""
    page, per_page = args["page"], args["per_page"]
    total = db.session.execute(
        db.select(db.func.count()).select_from(query.order_by(None).subquery())
    ).scalar_one()
    result = db.session.execute(query.limit(per_page).offset((page - 1) * per_page))
    # A select of one entity pages ORM objects; a select of columns (a view) pages its rows.
    rows = result.scalars().all() if len(query.column_descriptions) == 1 else result.all()
    meta = {
        "page": page,
        "per_page": per_page,
        "total": total,
        "total_pages": math.ceil(total / per_page) if total else 0,
    }
    return rows, meta


def listing(rows, meta):
    """The envelope of a list response."""
    return {"success": True, "data": rows, "meta": meta}


def single(obj):
    """The envelope of a single-resource response."""
    return {"success": True, "data": obj}
