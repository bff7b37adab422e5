"""The served-store fixtures of the service tests and the PostgreSQL store of the worker
tests, for the surfaces of a rebound run."""

from tests.service.conftest import live, live_any  # noqa: F401 -- fixtures, used by name
from tests.worker.conftest import pg_store_url  # noqa: F401 -- fixtures, used by name
