"""What building and reading a task population can fail with; defined in `frostline.errors`.

    FrostlineError
    ├── DefinitionError
    │   └── TaskSetError     a tasks folder that is missing, malformed, or whose seal does not
    │                        match (the caller fixes its input; the CLI exits 2)
    └── FetchError           an archive cannot be downloaded, or its bytes are not the pinned ones
"""

from __future__ import annotations

from frostline.errors import FetchError, TaskSetError

__all__ = ["FetchError", "TaskSetError"]
