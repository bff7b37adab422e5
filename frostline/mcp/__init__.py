"""frostline as an MCP server: any MCP client (an agent in an IDE or a desktop app) uses
frostline as its code-mode executor under the revision contract.

Tools: `catalog`, `check_script`, `run_script`, `gate_script`, `show_run`, `reconcile_call`;
runs and artifacts are resources. The agent is the repair loop: it reads a failed run's
counterexamples and sends a new script under the same run id. `frostline mcp` serves it over
stdio or streamable HTTP.
"""

from frostline.mcp.server import build_server

__all__ = ["build_server"]
