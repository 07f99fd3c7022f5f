"""What a serving process does once its app is built: settle the heap, so that garbage collection
does not pause it.

CPython's full collection walks every object the collector tracks. A built gateway holds about
200,000 of them (the ORM's mappers, the schemas, the templates, the translations), all alive for as
long as the process, and each full collection walked them all: 40-100 ms of CPU in which a web
process answered nothing. Requests promote enough short-lived objects to start one every few
hundred requests, so those pauses were the tail of `POST /payments` under load
(docs/performance.md, the `gc.freeze` row).

`settle_heap` configures the ORM's mappers now (SQLAlchemy otherwise does it at the first query,
adding some 12,000 objects), collects what building the app left behind, then freezes the rest with
`gc.freeze()`: a frozen object is never walked again, so a full collection walks only what came
after, under a millisecond. Nothing frozen is garbage (the collection before the freeze took that),
and the app and its objects live until the process ends.

Only serving processes call it (app.py: gunicorn's web processes, `flask gateway worker`, `flask
run`): a test process builds many apps and must be free to collect them.
"""

import gc

from sqlalchemy.orm import configure_mappers


def settle_heap():
    """Configure the ORM's mappers, collect, and freeze what is left; returns how many objects
    froze."""
    configure_mappers()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
