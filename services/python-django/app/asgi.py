"""app.asgi:app is the application configured from the environment, for a
server that imports its application by name in each worker (granian)."""

import gc

from app.config import load
from app.main import create_app

app = create_app(load())
gc.freeze()  # see serve() in __main__.py
