"""Entry point for `flask` and gunicorn (`gunicorn app:app`): the app built once per process, its
heap then settled (gateway.serving) so that garbage collection does not pause its requests.
"""

from gateway import create_app
from gateway.serving import settle_heap

app = create_app()
settle_heap()
