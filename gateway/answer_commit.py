"""A keyed request's work commits together with its stored answer: services defer, the answer commits both."""
from flask import has_request_context, request

from .extensions import commit_without_expiring, db

DEFERRED = "gateway.commit_with_answer"


def defer_commit_to_answer():
    """From here on this request's work is committed by idempotency.store_response, together with its answer."""
    request.environ[DEFERRED] = True


def commit_deferred():
    """Whether the current request's work waits for its answer to commit."""
    return has_request_context() and bool(request.environ.get(DEFERRED))


def end_deferral():
    """The answer is being stored: commits from here on are real again."""
    if has_request_context():
        request.environ.pop(DEFERRED, None)


def commit_work(keep_loaded=False):
    """Commit a service's work; in a keyed request only flush it: a crash cannot keep the work without its answer.

    `keep_loaded` keeps the session's rows loaded after a real commit (commit_without_expiring).
    """
    if commit_deferred():
        db.session.flush()
    elif keep_loaded:
        commit_without_expiring()
    else:
        db.session.commit()
