"""``berth install uninstall``: the uninstall plan on a cluster -- pre-delete hooks, deletions in Helm's uninstall
order with background propagation, ``helm.sh/resource-policy: keep`` objects left (and listed), post-delete hooks.

The plan (:func:`berth.install.plan.build` for ``uninstall``) already holds the order, what is kept and why; this
module only adds what the plan deliberately leaves out: with ``--delete-crds`` the chart's ``crds/`` CRDs, which
Helm never deletes, are deleted after post-delete (their custom resources go with them -- hence opt-in, and last,
so post-delete hooks can still read them).
"""

from __future__ import annotations

from berth.install import apply, receipt, recorder, release, workdir
from berth.install import plan as plan_mod


def crds_step(wd: workdir.Workdir) -> plan_mod.Step | None:
    """The ``--delete-crds`` step: every ``crds/`` CRD of the work dir."""
    files = wd.split.file_names
    crds = [
        plan_mod.PlanObject(c.kind, c.name, c.namespace, c.api_version, f"manifests/{files[c.ref]}")
        for c in wd.split.crds
        if c.from_crds_dir
    ]
    if not crds:
        return None
    return plan_mod.Step(
        plan_mod.Phase.DELETE.value,
        tuple(crds),
        f"delete {len(crds)} crds/ CRD(s) (--delete-crds; Helm never does): every custom resource of them goes too",
    )


@apply.locked
def run(
    options: apply.ApplyOptions,
    delete_crds: bool = False,
    reporter: apply.Reporter | None = None,
    keep_history: bool = False,
) -> apply.Outcome:
    """``berth install uninstall``: the uninstall plan; the release's Helm records go with it (``keep_history``:
    the last one stays, ``uninstalled``, as ``helm uninstall --keep-history``)."""
    reporter = reporter or apply.Reporter()
    wd, plan = apply.load_plan(options, plan_mod.Action.UNINSTALL)
    steps = plan.steps
    if delete_crds:
        extra = crds_step(wd)
        if extra is not None:
            steps = (*steps, extra)
            kept = tuple(
                k for k in plan.kept if k.obj.kind != "CustomResourceDefinition" or k.obj not in extra.objects
            )
            plan = plan_mod.Plan(
                plan.action, plan.release, plan.namespace, plan.steps, plan.not_run, kept, plan.warnings
            )
    kube = apply.connect_checked(options, reporter)
    try:
        inst = apply.installed(kube, options.work_dir, wd.release, wd.namespace)
        variant = receipt.variant(inst.spec) if inst is not None else "install"
        store = release.Store(kube, wd.namespace, wd.release)
        record = recorder.for_uninstall(store, keep_history, wd, variant, options.work_dir)
        return apply.execute(
            kube, plan, options, reporter, steps, extra={"deleteCrds": delete_crds}, record=record
        )
    finally:
        kube.close()
