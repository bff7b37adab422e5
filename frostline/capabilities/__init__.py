"""Capability catalog and envelope: plain data that every other layer reads."""

from frostline.capabilities.catalog import (
    ARTIFACT_REF_PATTERN,
    DEFAULT_CATALOG,
    IMAGE_SIZES,
    Capability,
    Catalog,
)
from frostline.capabilities.envelope import Envelope

__all__ = ["ARTIFACT_REF_PATTERN", "DEFAULT_CATALOG", "IMAGE_SIZES", "Capability", "Catalog", "Envelope"]
