"""Run receipts (``W/out/runs/<timestamp>-<action>.yaml``), resume state and the recorded kube target.

A receipt is written by the run that did the work, step by step and object by object, atomically after every
change: if the API server dies mid-run (or the run fails, or is interrupted), the receipt on disk says exactly
what had been done. The objects an apply step applied are written at most every :data:`SAVE_INTERVAL` (a
receipt rewritten per object cost a 40-object upgrade ~20 ms): a berth process killed outright may leave the last
few unrecorded, and a resume applies them again -- server-side apply of the same object, harmless. It
is also the resume state: ``--resume`` reads the newest receipt of the same action and skips what it records as
done -- whole steps, objects already applied in the interrupted step, hooks that succeeded and still exist with
the same uid (a hook removed by a failure's ``hook-succeeded`` cleanup runs again, as the retried event needs it).
A receipt is complete by itself: steps skipped on resume are copied in with the run that did them.

``W/out/runs/target.yaml`` records the kube context the work dir was first applied to; later runs refuse another
context unless ``--context`` names it (see :func:`check_target`).
"""

from __future__ import annotations

import getpass
import json
import os
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from berth import __version__
from berth.install import plan as plan_mod
from berth.kube import canonical, yamlio
from berth.kube.errors import BerthError, InputError

API_VERSION = "berth.dev/v1alpha1"
RUNS_DIR = "out/runs"
TARGET_FILE = "target.yaml"
INVENTORY_PHASES = frozenset(
    p.value
    for p in (
        plan_mod.Phase.APPLY,
        plan_mod.Phase.SECRETS,
        plan_mod.Phase.CRDS,
        plan_mod.Phase.DELETE,
        plan_mod.Phase.PRUNE,
    )
)


DIGEST_FIELD = "renderDigest"
"""Receipt field of a run that applies a render (install, upgrade, rollback): :func:`berth.install.layout.render_digest`
of that render, so a later run can tell whether ``W/out`` still holds what the cluster runs."""
VARIANT_FIELD = "variant"
"""Receipt field of such a run: ``install`` or ``upgrade``, the render variant its objects came from (what
``status`` compares with and a re-applying ``apply`` applies again)."""
DEPLOYING = frozenset(
    a.value for a in (plan_mod.Action.INSTALL, plan_mod.Action.UPGRADE, plan_mod.Action.ROLLBACK)
)
"""The actions whose succeeded run leaves the release installed with its render."""


class Result:
    """Run results (strings in the YAML)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    DRY_RUN = "dry-run"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def fingerprint(plan: plan_mod.Plan, extra: Any = None) -> str:
    """Identity of what a run executes: resuming under a different plan would skip the wrong steps."""
    return canonical.sha256_text(canonical.canonical_json({"plan": plan.to_json(), "extra": extra}))


def object_key(index: int, obj: plan_mod.PlanObject) -> str:
    """An object's key within its step (its position too: a hook listed twice in one event runs twice)."""
    return f"{index}:{obj.label}"


SAVE_INTERVAL = 0.05
"""Seconds between two writes of a receipt for the objects of an apply step (:meth:`RunReceipt.record` with
``defer``); every other change, and the step's end, writes at once."""


class RunReceipt:
    """The receipt of one run, saved after every change (an apply step's objects: at most every
    :data:`SAVE_INTERVAL`)."""

    def __init__(
        self,
        work_dir: Path,
        plan: plan_mod.Plan,
        steps: tuple[plan_mod.Step, ...],
        context: str,
        server: str,
        plan_id: str,
        dry_run: bool = False,
        resumed_from: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        runs = work_dir / RUNS_DIR
        runs.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        path = runs / f"{stamp}-{plan.action.value}.yaml"
        n = 2
        while path.exists():
            path = runs / f"{stamp}-{n}-{plan.action.value}.yaml"
            n += 1
        self.path = path
        self.name = path.stem
        self._next_save = 0.0
        self.data: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "RunReceipt",
            "metadata": {"name": self.name},
            "spec": {
                "action": plan.action.value,
                "release": plan.release,
                "namespace": plan.namespace,
                "context": context,
                "server": server,
                "command": shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "",
                "user": _user(),
                "berthVersion": __version__,
                "planId": plan_id,
                "dryRun": dry_run,
                "resumedFrom": resumed_from,
                "startedAt": now(),
                "finishedAt": None,
                "result": Result.RUNNING,
                "error": None,
                "steps": [
                    {
                        "index": i,
                        "phase": s.phase,
                        "description": s.description,
                        "status": "pending",
                        "objects": [],
                    }
                    for i, s in enumerate(steps, 1)
                ],
                "notRun": [n.to_json() for n in plan.not_run],
                "kept": [{**k.obj.to_json(), "reason": k.reason} for k in plan.kept],
                "warnings": list(plan.warnings),
                **(extra or {}),
            },
        }
        self.save()

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.data["spec"]
        return spec

    def step(self, index: int) -> dict[str, Any]:
        entry: dict[str, Any] = self.spec["steps"][index - 1]
        return entry

    def start_step(self, index: int) -> None:
        self.step(index).update({"status": "running", "startedAt": now()})
        self.save()

    def finish_step(self, index: int, status: str, error: str | None = None, sync: bool = True) -> None:
        """The end of step ``index``; ``sync=False`` for a step that may run again harmlessly (no hooks: see
        :meth:`save`)."""
        entry = self.step(index)
        entry.update({"status": status, "finishedAt": now()})
        if error:
            entry["error"] = error
        self.save(sync=sync)

    def copy_step(self, index: int, earlier: dict[str, Any], run: str) -> None:
        """A step an earlier run completed (resume): keep its record, say which run did it."""
        entry = self.step(index)
        entry.update({k: v for k, v in earlier.items() if k not in ("index",)})
        entry["status"] = "done"
        entry.setdefault("doneBy", run)
        self.save()

    def record(
        self,
        index: int,
        obj: plan_mod.PlanObject,
        key: str,
        action: str,
        namespace: str = "",
        defer: bool = False,
        **extra: Any,
    ) -> None:
        """One thing done to one object in step ``index`` (applied, created, deleted, waited, skipped...);
        ``namespace`` is where it went (the release namespace for namespaced objects that name none). With
        ``defer`` (an apply step's objects) the receipt is written only when the last write is
        :data:`SAVE_INTERVAL` old; the next write, at the latest the step's end, carries it."""
        item: dict[str, Any] = {"key": key, "apiVersion": obj.api_version, "kind": obj.kind, "name": obj.name}
        if namespace or obj.namespace:
            item["namespace"] = namespace or obj.namespace
        if obj.weight is not None:
            item["weight"] = obj.weight  # a hook's: the install report shows it
        item["action"] = action
        item["at"] = now()
        item.update({k: v for k, v in extra.items() if v not in (None, "")})
        self.step(index)["objects"].append(item)
        if not defer or time.monotonic() >= self._next_save:
            self.save()

    def finish(self, result: str, error: str | None = None, not_run_steps: list[int] | None = None) -> None:
        self.spec.update({"result": result, "finishedAt": now(), "error": error})
        for i in not_run_steps or []:
            if self.step(i)["status"] == "pending":
                self.step(i)["status"] = "not-run"
        self.save(sync=result not in (Result.SUCCEEDED, Result.DRY_RUN), final=True)

    def save(self, sync: bool = False, final: bool = False) -> None:
        """Replace the file atomically. While the run goes on the receipt is written as JSON (valid YAML, and
        cheap enough to write after every object); the finished receipt is rewritten as block YAML. Without
        ``sync`` there is no fsync: the new content is in the page cache the moment ``os.replace`` returns, which
        survives the process or the API server dying. For a machine crash the end of a hook step syncs (a resume
        must not run a hook again that succeeded), as do a failed step and a run that did not succeed; the end of
        any other step and of a successful run do not (each fsync can take tens of ms on a busy disk): a crash
        can then only leave a receipt from which a resume runs such steps again, which applies, deletes or waits
        for the same objects again -- harmless."""
        self._next_save = time.monotonic() + SAVE_INTERVAL
        text = yamlio.dump(self.data) if final else json.dumps(self.data) + "\n"
        if sync:
            yamlio.write_atomic(self.path, text)
            return
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.path)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


# ---- reading receipts back -----------------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    docs = yamlio.load_file(path)
    body = docs[0].body if docs else None
    if not isinstance(body, dict) or body.get("kind") != "RunReceipt":
        raise InputError("not a berth run receipt", str(path))
    return body


def receipts(work_dir: Path, action: str | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """Every receipt in ``W/out/runs`` (oldest first), optionally of one action."""
    return list(reversed(list(newest_first(work_dir, action))))


def newest_first(work_dir: Path, action: str | None = None) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The receipts of :func:`receipts`, newest first, each read only when the iteration reaches it (a work dir
    used for long holds hundreds: a caller after the newest of a kind stops early)."""
    for p in reversed(files(work_dir)):
        try:
            body = load(p)
        except (InputError, OSError):
            continue
        if action is None or body["spec"].get("action") == action:
            yield p, body


def files(work_dir: Path, action: str | None = None) -> list[Path]:
    """The receipt files in ``W/out/runs``, oldest first; of ``action``: by the name a run writes its receipt
    under (``<timestamp>-<action>.yaml``), without reading them."""
    runs = work_dir / RUNS_DIR
    found = sorted(p for p in runs.glob("*.yaml") if p.name != TARGET_FILE) if runs.is_dir() else []
    return [p for p in found if action is None or p.name.endswith(f"-{action}.yaml")]


@dataclass
class ResumeState:
    """What an earlier, unfinished run did: steps done, objects applied, hooks that succeeded (with uids)."""

    run: str
    done_steps: dict[int, dict[str, Any]] = field(default_factory=dict)
    applied: dict[int, set[str]] = field(default_factory=dict)
    succeeded_hooks: dict[int, dict[str, str]] = field(default_factory=dict)
    in_flight_hooks: dict[int, dict[str, str]] = field(default_factory=dict)
    """Hooks created but not yet judged when the run stopped (uids): waited on again, not re-created."""
    applied_objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    """(kind, namespace, name) -> ``{"metadata": {"uid", "resourceVersion"}}`` of each release object the earlier
    runs applied: what the readiness step replays a Job's watch history from when that Job is gone (the live
    executor's :meth:`~berth.install.kubeops.KubeOps.wait_ready` ``since``)."""


def resume_state(work_dir: Path, action: str, plan_id: str) -> ResumeState:
    """The state to resume from: the newest non-dry-run receipt of ``action``, which must have stopped early."""
    found = [(p, b) for p, b in receipts(work_dir, action) if not b["spec"].get("dryRun")]
    cmd = f"berth install {'apply' if action == 'install' else action} --work-dir {work_dir}"
    if not found:
        raise InputError(f"nothing to resume: no earlier {action} run in {work_dir / RUNS_DIR}; run `{cmd}`")
    path, body = found[-1]
    spec = body["spec"]
    if spec.get("result") == Result.SUCCEEDED:
        raise InputError(
            f"nothing to resume: the last {action} run ({path.name}) succeeded; run `{cmd}` to run it again"
        )
    if spec.get("planId") != plan_id:
        raise InputError(
            f"the plan changed since run {path.stem} stopped (the work dir was set up again); "
            f"resuming would skip the wrong steps: run `{cmd}` without --resume",
            str(path),
        )
    state = ResumeState(path.stem)
    for step in spec.get("steps") or []:
        idx = int(step["index"])
        if step.get("phase") in (plan_mod.Phase.APPLY.value, plan_mod.Phase.SECRETS.value):
            for item in step.get("objects") or []:
                if item.get("action") in ("applied", "created", "skipped") and item.get("resourceVersion"):
                    meta = {"uid": item.get("uid"), "resourceVersion": item["resourceVersion"]}
                    key3 = (str(item["kind"]), str(item.get("namespace") or ""), str(item["name"]))
                    state.applied_objects[key3] = {"metadata": meta}
        if step.get("status") == "done":
            state.done_steps[idx] = step
            continue
        last: dict[str, dict[str, Any]] = {}
        for item in step.get("objects") or []:
            key = str(item["key"])
            if item.get("action") in ("applied", "created", "exists"):
                state.applied.setdefault(idx, set()).add(key)
            last[key] = item
        for key, item in last.items():
            uid = str(item.get("uid") or "")
            if item.get("action") == "succeeded" and uid:
                state.succeeded_hooks.setdefault(idx, {})[key] = uid
            elif item.get("action") in ("created", "applied") and uid:
                state.in_flight_hooks.setdefault(idx, {})[key] = uid
    return state


def deployed(
    work_dir: Path,
    context: str | None = None,
    server: str | None = None,
    release: str | None = None,
    namespace: str | None = None,
) -> tuple[Path, dict[str, Any]] | None:
    """The newest succeeded install, upgrade or rollback run (not a dry run) of ``release`` in ``namespace`` (a Helm
    release's identity) against ``context``/``server`` (None: any), with its spec, unless a succeeded uninstall came
    after it: the run whose render the release runs, as Helm's deployed release revision. None when the work dir
    records no such installed release (never installed, only a failed or interrupted install that ``--resume``
    continues, or uninstalled since)."""
    wanted = {"context": context, "server": server, "release": release, "namespace": namespace}
    found: tuple[Path, dict[str, Any]] | None = None
    for path, body in receipts(work_dir):
        spec = body["spec"]
        if spec.get("dryRun") or spec.get("result") != Result.SUCCEEDED:
            continue
        if any(v is not None and spec.get(k) != v for k, v in wanted.items()):
            continue
        if spec.get("action") in DEPLOYING:
            found = (path, spec)
        elif spec.get("action") == plan_mod.Action.UNINSTALL.value:
            found = None
    return found


def variant(spec: dict[str, Any]) -> str:
    """The render variant a deploying run applied (``upgrade`` for upgrades recorded before the field existed)."""
    value = spec.get(VARIANT_FIELD)
    if value in ("install", "upgrade"):
        return str(value)
    return "upgrade" if spec.get("action") == plan_mod.Action.UPGRADE.value else "install"


# ---- the kube target a work dir belongs to -------------------------------------------------------------------


class WrongContext(BerthError):
    """The current kube context is not the one this work dir was applied to."""

    exit_code = 2


def recorded_target(work_dir: Path) -> dict[str, Any] | None:
    path = work_dir / RUNS_DIR / TARGET_FILE
    if not path.is_file():
        return None
    docs = yamlio.load_file(path)
    body = docs[0].body if docs else None
    return body.get("spec") if isinstance(body, dict) else None


def check_target(work_dir: Path, context: str, server: str, explicit: bool) -> str | None:
    """Refuse a context other than the recorded one unless ``--context`` named it; returns a note to print.

    The rule kubectl users expect from tools that remember a cluster (``helm`` releases live in one cluster,
    ``terraform`` state in one backend): the first apply records the context it used; afterwards the *current*
    context is trusted only if it is that one. Naming ``--context`` is always deliberate and wins (and becomes the
    recorded target)."""
    target = recorded_target(work_dir)
    if target is None or explicit:
        return None
    if target.get("context") != context:
        raise WrongContext(
            f"the current kube context is {context!r} ({server}), but {work_dir} was applied to context "
            f"{target.get('context')!r} ({target.get('server')}); pass --context {target.get('context')} to use "
            f"that one, or --context {context} to target {context!r} deliberately"
        )
    return None


def record_target(work_dir: Path, context: str, server: str) -> None:
    path = work_dir / RUNS_DIR / TARGET_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    old = recorded_target(work_dir) or {}
    if old.get("context") == context and old.get("server") == server:
        return
    doc = {
        "apiVersion": API_VERSION,
        "kind": "Target",
        "metadata": {"name": "target"},
        "spec": {"context": context, "server": server, "recordedAt": now()},
    }
    yamlio.write_atomic(path, yamlio.dump(doc))


def inventory(
    work_dir: Path,
    context: str | None = None,
    server: str | None = None,
    release: str | None = None,
    namespace: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Every object berth applied from this work dir (by ``kind|namespace|name``) and did not delete since, from all
    receipts, or from those of one release (name and namespace) against one ``context``/``server`` (None: any)."""
    wanted = {"context": context, "server": server, "release": release, "namespace": namespace}
    out: dict[str, dict[str, Any]] = {}
    for _, body in receipts(work_dir):
        spec = body["spec"]
        if spec.get("dryRun") or any(v is not None and spec.get(k) != v for k, v in wanted.items()):
            continue
        for step in spec.get("steps") or []:
            if step.get("phase") not in INVENTORY_PHASES:
                continue
            for item in step.get("objects") or []:
                key = f"{item['kind']}|{item.get('namespace', '')}|{item['name']}"
                if item.get("action") in ("applied", "created"):
                    out[key] = item
                elif item.get("action") in ("deleted", "absent"):
                    out.pop(key, None)
    return out
