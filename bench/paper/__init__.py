"""The paper's studies reproduced on the real runtime; `python -m bench.paper` runs them all."""
