"""Django's settings: a JSON API without the ORM, sessions, templates or
admin, so no installed apps and no middleware of Django's own (each one
is a layer every request goes through; see README.md, "Middleware")."""

import secrets

# No sessions, signed cookies or password resets use it; Django still
# wants one. A fresh one per start, never a constant in the sources.
SECRET_KEY = secrets.token_urlsafe(50)
DEBUG = False
# The service binds to HOST (127.0.0.1 unless told otherwise); behind a
# Kubernetes Service the Host header is the service's name.
ALLOWED_HOSTS = ["*"]
ROOT_URLCONF = "app.urls"
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
# The drivers are used directly (app/db.py): Django has no database here.
DATABASES: dict = {}
USE_TZ = True
USE_I18N = False
# /health/ is 404 in the contract, not a redirect to /health (and
# CommonMiddleware, which would do it, is not in the chain).
APPEND_SLASH = False
# The 1 MiB limit is enforced before Django sees the body (observe.py);
# this is the same limit, should a body ever reach Django another way.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1 << 20

# Django's default logging mails the admins on a 500 when DEBUG is off;
# here everything Django logs goes to stderr, one line each, and stdout
# holds request logs only (LOG_REQUESTS).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"line": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", "formatter": "line"}},
    "loggers": {
        "django": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        # Django logs every 4xx answer as a warning (django.request): a
        # line per refused transfer (409) or unknown id under load. The
        # contract's 4xx are answers, not incidents; 5xx are still logged.
        "django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False},
        "python-django": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}
