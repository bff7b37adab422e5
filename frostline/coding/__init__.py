"""The coding workflow on real Python repositories (Build Spec 23 — Workflow / State Machine,
its §5 and §8; docs/background.md).

`interface` holds what the task builder, the state bodies and the A/B driver agree on: a task,
an arm, a fault plan and the nine instruments an arm is measured by.

One task under one arm: ``solve(task, arm("arm4"), FaultPlan(), workdir=dir)`` (`solve`,
`arms`); as a durable run that survives a crash: `resumable.solve_durable`. The state bodies
are in `workflow`, their tools in `tools`; repository code runs only in the sandbox
(`testrun`).
"""

__all__: list[str] = []  # a namespace: its modules are imported by their full names
