"""Benchmarks and studies that measure frostline against its own corpora.

Run them as modules from the repository root, e.g. ``python -m bench.mutation`` or
``python -m bench.checker_latency``. They print a table and compare against a baseline measured
in the same run; none of them is a unit test.
"""
