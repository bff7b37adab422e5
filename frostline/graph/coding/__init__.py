"""The coding workflow on real Python repositories (seed 002 §5, §8).

`interface` holds what the task builder, the state bodies and the A/B driver agree on: a task,
an arm, a fault plan and the nine instruments an arm is measured by.
"""
