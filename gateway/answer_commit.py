"""Where work commits: one unit of work per request or job, and a keyed request's work together with
its answer.

Services end their work with `commit_work()`. Outside a unit of work that commits (as services
always did); inside `unit_of_work()` (a panel action with its audit row, a job, a CLI command) or
in a keyed API request it only flushes, and the edge commits once. Wake-ups registered with
`jobs.wake_after_commit` go out after that one commit (the outbox design).

An error rolls the unit (or the keyed request) back, unless the work says it must be kept although
an error follows (`keep_despite_error`: a refund a wallet left unanswered keeps its pending attempt
and audit row): the edge then commits it, a keyed request with the error's answer stored.
"""

from contextlib import contextmanager

from flask import has_request_context, request

from .extensions import commit_without_expiring, db

DEFERRED = "gateway.commit_with_answer"
UNIT = "gateway_unit_of_work"
KEPT = "gateway_kept_despite_error"


def defer_commit_to_answer():
    """From here on this request's work is committed by idempotency.store_response, together with
    its answer.
    """
    request.environ[DEFERRED] = True


def commit_deferred():
    """Whether the current work waits for its edge to commit: an open unit of work, or a keyed
    request's answer.
    """
    return bool(db.session.info.get(UNIT)) or (
        has_request_context() and bool(request.environ.get(DEFERRED))
    )


def end_deferral():
    """The answer is being stored: commits from here on are real again."""
    if has_request_context():
        request.environ.pop(DEFERRED, None)


def commit_work(keep_loaded=False):
    """Commit a service's work; in a unit of work or a keyed request only flush it: the edge commits
    it once.

    `keep_loaded` keeps the session's rows loaded after a real commit (commit_without_expiring).
    """
    if commit_deferred():
        db.session.flush()
    elif keep_loaded:
        commit_without_expiring()
    else:
        db.session.commit()


def keep_despite_error():
    """The work so far must commit although an error is about to end the request: at once outside a
    unit of work; inside one (or in a keyed request) the edge commits it instead of rolling back.
    """
    if not commit_deferred():
        commit_work()
        return
    db.session.flush()
    # Tied to this transaction: should anything roll it back, nothing is kept.
    db.session.info[KEPT] = db.session().get_transaction()


def work_kept():
    """Whether the open transaction holds work to commit though the request ends in an error."""
    kept = db.session.info.get(KEPT)
    return kept is not None and kept is db.session().get_transaction()


@contextmanager
def unit_of_work():
    """One transaction for the block: the services inside only flush, the block's end commits once
    (or rolls back).

    Nested, the inner block joins the outer one. In a keyed API request the final commit is still
    the stored answer's. An error rolls the block back, unless its work was kept despite it.
    """
    session = db.session()
    if session.info.get(UNIT):
        yield session
        return
    session.info[UNIT] = True
    try:
        yield session
    except BaseException:
        session.info.pop(UNIT, None)
        if work_kept():
            commit_work()  # a keyed request: flushed, committed with the error's stored answer
        else:
            session.rollback()
        raise
    session.info.pop(UNIT, None)
    commit_work()


def read_outside_a_transaction():
    """Run this request's statements without BEGIN and ROLLBACK: for a read of one statement, which
    a transaction gives nothing, on PostgreSQL they are two of its three round trips.

    Only on PostgreSQL (SQLite's are calls within the process) and only on a session not yet in a
    transaction; the pool restores the isolation level when the connection goes back.
    """
    session = db.session()
    if session.in_transaction() or db.engine.dialect.name != "postgresql":
        return
    session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
