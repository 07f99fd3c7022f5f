"""The app answers `ensure_sync` as Flask does, remembering only callables it found synchronous."""

import functools
import gc

import pytest
from flask import Flask


def plain(response):
    return response


async def coroutine(response):
    return response


def test_a_plain_callable_is_handed_back_and_remembered(app):
    partial = functools.partial(plain)
    assert app.ensure_sync(plain) is plain and app.ensure_sync(partial) is partial
    assert plain in app.known_synchronous and partial in app.known_synchronous
    assert app.ensure_sync(plain) is plain  # the second time from the set


def test_a_coroutine_function_gets_flasks_own_answer_every_time(app):
    reference = Flask(__name__)
    with pytest.raises(RuntimeError) as flask_error:
        reference.ensure_sync(coroutine)  # without asgiref Flask refuses async views
    for _ in range(2):
        with pytest.raises(RuntimeError) as ours:
            app.ensure_sync(coroutine)
        assert str(ours.value) == str(flask_error.value)
    assert coroutine not in app.known_synchronous


def test_a_request_scoped_closure_is_not_kept_alive(app):
    def closure(response):
        return response

    app.ensure_sync(closure)
    before = len(app.known_synchronous)
    del closure
    gc.collect()
    assert len(app.known_synchronous) == before - 1


def test_a_callable_without_weak_references_is_answered_too(app):
    assert app.ensure_sync(len) is len  # a builtin: no weak reference, Flask's answer each time
