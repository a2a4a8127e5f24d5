"""The application: Django's ASGI handler inside the metrics, logging and
lifespan wrapper (observe.py), with this worker's pools."""

from __future__ import annotations

import os

from app import db
from app.config import Config
from app.observe import Observe, request_logger


def preload() -> None:
    """preload sets Django up and imports the URLconf and the views, so
    that forked workers share the loaded code (see __main__.py)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "app.settings")
    import django
    from django.urls import get_resolver

    django.setup(set_prefix=False)
    get_resolver().url_patterns  # noqa: B018 - loads app.urls


def create_app(cfg: Config):
    """create_app builds the ASGI application for cfg."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "app.settings")
    from django.core import signals
    from django.core.asgi import get_asgi_application
    from django.db import close_old_connections, reset_queries
    from django.urls import get_resolver

    db.setup(cfg)
    application = get_asgi_application()  # django.setup(): settings, logging, apps
    # Django closes its database connections around every request through
    # these receivers; they are synchronous, so under ASGI each one costs
    # a trip to a thread (sync_to_async). With no database in Django's
    # settings they would do nothing but that trip.
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    signals.request_started.disconnect(reset_queries)
    # Import the URLconf and the views now, not on the first request.
    get_resolver().url_patterns  # noqa: B018 - loads app.urls
    return Observe(application, request_logger() if cfg.log_requests else None)
