"""frostline: model-written workflows whose committed work is frozen.

The package root stays small; import from the subpackages (`frostline.script`,
`frostline.runtime`, `frostline.contract`, `frostline.store`, `frostline.graph`).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
