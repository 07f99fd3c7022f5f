"""The unbound extension objects; create_app binds them to an application."""

import functools

from flask_babel import Babel
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf import CSRFProtect
from sqlalchemy import MetaData
from sqlalchemy.orm import make_transient_to_detached

# Stable constraint names make Alembic revisions identical on SQLite and PostgreSQL.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

db = SQLAlchemy(metadata=MetaData(naming_convention=NAMING_CONVENTION))
migrate = Migrate()
csrf = CSRFProtect()
login_manager = LoginManager()
babel = Babel()


def commit_without_expiring():
    """Commit, keeping the session's rows loaded: for rows this request just wrote and renders next.

    A plain commit expires every row, so rendering the new payment would read it and its brand
    back from the database: two queries on the busiest write path for values already in hand.
    """
    session = db.session()
    session.expire_on_commit = False
    try:
        session.commit()
    finally:
        session.expire_on_commit = True


def insert_persistent(row):
    """INSERT a new row (built, not yet added) through Core and make it persistent under its new
    primary key `id`, without a flush.

    For the busiest write path: the unit of work's flush of one new payment cost twice its INSERT.
    The caller builds the row first, so that a transaction already holding SQLite's write lock
    spends it on the INSERT alone. Attributes and relationships set count as loaded; columns left
    to their defaults load when read.
    """
    insert, columns = core_insert(type(row).__mapper__)
    given = row.__dict__
    values = {name: given[key] for key, name in columns if key in given}
    # The session's connection runs it as plain Core: Session.execute would first look for ORM work.
    row.id = db.session.connection().execute(insert, values).inserted_primary_key[0]
    make_transient_to_detached(row)
    db.session.add(row)
    return row


@functools.cache
def core_insert(mapper):
    """The mapper's table INSERT and its (attribute, column name) pairs: the same for every row."""
    pairs = tuple((attr.key, attr.columns[0].name) for attr in mapper.column_attrs)
    return db.insert(mapper.local_table), pairs


def reread(rows):
    """Session.refresh for several rows of one model (a batch of payments) in one SELECT: the
    rows as this transaction sees them after a guarded UPDATE that bypassed the ORM.
    """
    if not rows:
        return
    if len(rows) == 1:
        db.session.refresh(rows[0])
        return
    model, ids = type(rows[0]), {row.id for row in rows}
    for row in rows:
        db.session.expire(row)
    db.session.execute(db.select(model).where(model.id.in_(sorted(ids)))).all()


def rows_by(column, keys):
    """The rows whose `column` is one of `keys`, in one query: {key: row} (a key without a row is
    absent). For a listener handed a batch: one SELECT for the list, not one per item.
    """
    model = column.class_
    found = db.session.execute(db.select(model).where(column.in_(sorted(set(keys))))).scalars()
    return {getattr(row, column.key): row for row in found}
