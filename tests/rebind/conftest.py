"""The served-store fixtures of the service tests, for the views of a rebound run."""

from tests.service.conftest import live, live_any  # noqa: F401 -- fixtures, used by name
