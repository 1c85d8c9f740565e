"""``berth install test [--logs]``: the test plan on a cluster, as ``helm test RELEASE [--logs] [--timeout]``.

helm/helm ``pkg/action/release_testing.go`` runs the release's ``test`` hooks (``helm.sh/hook: test``, alias
``test-success``) through the same hook engine as every other event, and nothing else: no release object is
applied, pruned or deleted. Here that is the test plan (:func:`berth.install.workdir.build_plan` for ``test``, the
plan ``berth install plan|script --action test`` show and run) executed by the one executor
(:func:`berth.install.apply.execute`), which already does all of Helm's per-hook work: one hook at a time in the
plan's order (weight, then name, then kind), delete first when ``before-hook-creation`` (the default when no policy
is listed), server-side apply, wait (Job ``Complete``, Pod ``Succeeded``; a ``Failed`` one stops the run at once,
exit 1, naming it, with its pod logs), the failure deletions, and after the event the ``hook-succeeded`` deletions.
This module adds no step and decides no order.

What it adds is ``--logs``. Helm 4 defers the event's ``hook-succeeded`` deletions until ``helm test --logs`` has
read the test pods' logs, since a deleted pod has none; the executor deletes them when the event ends. So the logs
are read the moment the executor records each Job or Pod hook as succeeded or failed -- after its wait, before any
deletion -- and printed after the run, in execution order, through the official client
(:meth:`berth.install.kubeops.KubeOps.logs_for`, each line prefixed ``[pod/NAME]`` as ``kubectl logs --prefix``
does). Only Jobs and Pods have logs; a hook of any other kind (a ConfigMap, a Secret) is never printed. Helm prints
the logs when a test failed too, and so does this command, before the error.

A release without test hooks has an empty test plan: one line says so, the cluster is not contacted, and the
exit code is 0 (``helm test`` prints nothing about tests and succeeds).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from berth.install import apply, kubeops, recorder, release
from berth.install import plan as plan_mod
from berth.install.plan import PlanObject, Wait

LOGGED_WAITS = (Wait.JOB_COMPLETE, Wait.POD_SUCCEEDED)
"""Hooks whose pods have logs (Helm's waits on Jobs and Pods); every other hook kind is never printed."""


@dataclass(frozen=True)
class NoTests:
    """The release has no test hooks: nothing ran, nothing was recorded."""

    lines: tuple[str, ...]


class LogReader(apply.Reporter):
    """Passes everything on to ``inner``; reads a Job or Pod test hook's logs as soon as the executor records it
    ``succeeded`` or ``failed`` -- before the event's ``hook-succeeded`` or ``hook-failed`` deletions remove it."""

    def __init__(self, inner: apply.Reporter, kube: kubeops.KubeOps, namespace: str) -> None:
        super().__init__(quiet=True)
        self.inner = inner
        self.kube = kube
        self.namespace = namespace
        self.logs: list[tuple[str, str]] = []
        """(hook label, its pods' logs), in execution order."""

    @contextlib.contextmanager
    def live(self) -> Iterator[None]:
        with self.inner.live():
            yield

    def step(self, index: int, total: int, step: plan_mod.Step, note: str = "") -> None:
        self.inner.step(index, total, step, note)

    def object(self, text: str) -> None:
        self.inner.object(text)

    def warn(self, text: str) -> None:
        self.inner.warn(text)

    def print(self, text: str) -> None:
        self.inner.print(text)

    @contextlib.contextmanager
    def waiting(self, text: str) -> Iterator[None]:
        with self.inner.waiting(text):
            yield

    def event(self, name: str, **data: Any) -> None:
        self.inner.event(name, **data)
        o = data.get("obj")
        if name not in ("succeeded", "failed") or not isinstance(o, PlanObject) or o.wait not in LOGGED_WAITS:
            return
        ns = o.namespace or self.namespace
        self.logs.append((f"{o.kind} {ns}/{o.name}", self.kube.logs_for(o.kind, o.name, ns)))

    def text(self) -> list[str]:
        return [f"--- logs of {label} (test hook) ---\n{text or '(no logs)'}" for label, text in self.logs]


def no_tests_line(release: str, work: object) -> str:
    return f"Release {release} has no test hooks (helm.sh/hook: test) in {work}: nothing to run"


@apply.locked
def run(
    options: apply.ApplyOptions, logs: bool = False, reporter: apply.Reporter | None = None
) -> apply.Outcome | NoTests:
    """``berth install test``: every test hook of the work dir's release, with a receipt; ``logs`` prints each
    Job's and Pod's logs after the run (also when a test failed, before the error)."""
    reporter = reporter or apply.Reporter()
    _, plan = apply.load_plan(options, plan_mod.Action.TEST)
    if not plan.steps:
        return NoTests((no_tests_line(plan.release, options.work_dir),))
    kube = apply.connect_checked(options, reporter)
    reader = LogReader(reporter, kube, plan.namespace) if logs else None
    try:
        record = recorder.for_test(release.Store(kube, plan.namespace, plan.release))
        outcome = apply.execute(kube, plan, options, reader or reporter, record=record)
    except apply.RunFailed:
        for text in reader.text() if reader else []:
            reporter.print(text)
        raise
    finally:
        kube.close()
    if reader is None:
        return outcome
    return dataclasses.replace(outcome, lines=(*outcome.lines, *reader.text()))
