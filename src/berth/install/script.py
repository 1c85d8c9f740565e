"""The plan as a portable bash script: bash 3.2 (macOS ``/bin/bash``), ``kubectl`` only, flat command lists.

Every decision -- order, which event, which deletion when -- is made here at generation time from the
:class:`~berth.install.plan.Plan`; the script never parses YAML. It prints and guards the kube context first
(``--context NAME``, or ``--yes`` to accept the current one), server-side applies each file, waits in deadline
loops on ``date +%s`` (no GNU ``timeout``) that stop at once on a ``Failed`` Job or Pod and print its logs, applies
delete policies exactly as Helm does, and is safe to re-run: applies are server-side, deletions ignore missing
objects, and ``--from-step N`` resumes where a failed run stopped. It ends with the plan's steps it did not run.
The prune step of upgrade and rollback plans reads each live object first and leaves it when it carries
``helm.sh/resource-policy: keep``, as Helm does; its files are in ``out/revisions/`` (or ``out/`` for rollback).

Bash 3.2 rules kept: no associative arrays, ``mapfile``, ``${v,,}``, ``|&``, ``[[ -v ]]`` or empty-array
expansions under ``set -u``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from berth import __version__
from berth.install import layout
from berth.install.plan import Phase, Plan, PlanObject, Step, Wait
from berth.kube import yamlio

PRELUDE = r"""set -euo pipefail

OUT=__OUT__
RENDER_ID=__RENDER_ID__
CONTEXT=''
FROM_STEP=1
YES=0
NO_WAIT=0
FORCE=''
TOTAL=__TOTAL__
STEP=0
RAN=0

usage() {
  cat <<'USAGE'
Usage: bash SCRIPT [--context NAME | --yes] [--out DIR] [--from-step N] [--no-wait] [--force-conflicts]
  --context NAME     run against this kube context (otherwise the current one, after confirmation)
  --yes              accept the current kube context without asking
  --out DIR          the berth work dir's out/ folder (default: the one this script was generated from)
  --from-step N      skip steps before N (resume after a failure; every step is safe to repeat)
  --no-wait          skip the readiness step (Deployments, StatefulSets, DaemonSets, Jobs)
  --force-conflicts  take ownership of fields other field managers own (server-side apply), as berth install apply
USAGE
}

while [ $# -gt 0 ]; do
  case "$1" in
    --context) [ $# -ge 2 ] || { usage >&2; exit 2; }; CONTEXT="$2"; shift 2 ;;
    --context=*) CONTEXT="${1#--context=}"; shift ;;
    --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; OUT="$2"; shift 2 ;;
    --from-step) [ $# -ge 2 ] || { usage >&2; exit 2; }; FROM_STEP="$2"; shift 2 ;;
    --yes) YES=1; shift ;;
    --no-wait) NO_WAIT=1; shift ;;
    --force-conflicts) FORCE=--force-conflicts; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
  esac
done

say() { printf '\n>> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
kc() {
  if [ -n "$CONTEXT" ]; then kubectl --context "$CONTEXT" "$@"; else kubectl "$@"; fi
}

on_exit() {
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$STEP" -gt 0 ]; then
    printf '\nStopped in step %s of %s. Fix the cause and re-run this script (every step is safe to repeat),\n' "$STEP" "$TOTAL" >&2
    printf 'or resume with: --from-step %s\n' "$STEP" >&2
  fi
}
trap on_exit EXIT

[ -d "$OUT" ] || die "$OUT not found; pass --out WORK_DIR/out"
# The render this script was generated from: refuse a work dir set up, upgraded or rolled back since.
if [ -f "$OUT/spec/render-id" ]; then
  HAVE="$(cat "$OUT/spec/render-id")"
  [ "$HAVE" = "$RENDER_ID" ] || die "this script was generated from __RENDER_LABEL__ (render ${RENDER_ID:0:12}), but $OUT now holds render ${HAVE:0:12}: the work dir was set up, upgraded or rolled back since. Generate the script again: __REGENERATE__"
else
  echo "warning: $OUT has no spec/render-id (set up by an older berth): cannot check that it still holds the render this script was generated from" >&2
fi
command -v kubectl >/dev/null 2>&1 || die "kubectl is required (https://kubernetes.io/docs/tasks/tools/)"
if [ -n "$CONTEXT" ]; then
  CURRENT="$CONTEXT"
  kubectl config get-contexts "$CONTEXT" >/dev/null 2>&1 || die "kube context $CONTEXT not found in your kubeconfig"
else
  CURRENT="$(kubectl config current-context 2>/dev/null)" || die "no current kube context; pass --context NAME"
fi
say "Kube context: $CURRENT"
if [ -z "$CONTEXT" ] && [ "$YES" != 1 ]; then
  if [ -t 0 ]; then
    printf 'Run the __ACTION__ plan of release __RELEASE__ against context %s? [y/N] ' "$CURRENT"
    read -r reply
    case "$reply" in y|Y|yes|YES) ;; *) die "aborted" ;; esac
  else
    die "not running against the current context without confirmation: pass --context $CURRENT (or --yes)"
  fi
fi

begin_step() {
  STEP="$1"
  if [ "$1" -lt "$FROM_STEP" ]; then
    say "Skipping step $1/$TOTAL ($2): resuming from step $FROM_STEP"
    return 1
  fi
  say "Step $1/$TOTAL: $2"
  RAN=$((RAN + 1))
  return 0
}

# apply_file FILE NAMESPACE -- NAMESPACE is empty when the file names its own (or the kind is cluster-scoped);
# fields another field manager owns are taken over only with --force-conflicts, as berth install apply does
apply_file() {
  if [ -n "$2" ]; then
    kc apply --server-side --field-manager=helm ${FORCE:+"$FORCE"} -n "$2" -f "$OUT/$1"
  else
    kc apply --server-side --field-manager=helm ${FORCE:+"$FORCE"} -f "$OUT/$1"
  fi
}

# owned FILE [-n NAMESPACE] -- the object of FILE with Helm's ownership metadata, made locally (release objects
# only: hooks never get it)
owned() {
  file="$1"; shift
  kc label --local -f "$OUT/$file" "$@" app.kubernetes.io/managed-by=Helm --overwrite -o yaml \
    | kc annotate --local -f - "meta.helm.sh/release-name=$RELEASE" "meta.helm.sh/release-namespace=$RELEASE_NS" \
        --overwrite -o yaml
}

# apply_owned FILE NAMESPACE [ARGS...] -- apply_file for a release object: with its ownership metadata
apply_owned() {
  file="$1"; ns="$2"; shift 2
  if [ -n "$ns" ]; then
    owned "$file" -n "$ns" | kc apply --server-side --field-manager=helm ${FORCE:+"$FORCE"} -n "$ns" "$@" -f -
  else
    owned "$file" | kc apply --server-side --field-manager=helm ${FORCE:+"$FORCE"} "$@" -f -
  fi
}

# vkey VERSION -- Kubernetes version priority as one number (GA above beta above alpha, then major, then minor)
vkey() {
  case "$1" in v[0-9]*) ;; *) echo 0; return ;; esac
  rest="${1#v}"
  major="${rest%%[!0-9]*}"
  tail="${rest#"$major"}"
  case "$tail" in
    '') echo $(( 3000000 + major * 1000 )) ;;
    beta[0-9]*) minor="${tail#beta}"; case "$minor" in *[!0-9]*) echo 0 ;; *) echo $(( 2000000 + major * 1000 + minor )) ;; esac ;;
    alpha[0-9]*) minor="${tail#alpha}"; case "$minor" in *[!0-9]*) echo 0 ;; *) echo $(( 1000000 + major * 1000 + minor )) ;; esac ;;
    *) echo 0 ;;
  esac
}

# apply_crd FILE NAME MINE -- a templated CRD, as berth install apply decides: absent: create; the cluster's newest
# version older than MINE (this package's newest, as a vkey): upgrade it, taking ownership of its fields; newer: leave
# it; the same: apply (taking fields over only with --force-conflicts)
apply_crd() {
  live="$(kc get crd "$2" --ignore-not-found -o 'jsonpath={.spec.versions[*].name}' 2>/dev/null)" || live=''
  if [ -z "$live" ]; then apply_owned "$1" ''; return; fi
  best=0
  for v in $live; do k="$(vkey "$v")"; if [ "$k" -gt "$best" ]; then best="$k"; fi; done
  if [ "$best" -gt "$3" ]; then
    echo "warning: CRD $2 on the cluster serves a newer version than this package's: left as it is" >&2
  elif [ "$best" -lt "$3" ]; then
    echo "CRD $2: upgrading the cluster's older version"
    owned "$1" | kc apply --server-side --field-manager=helm --force-conflicts -f -
  else
    apply_owned "$1" ''
  fi
}

# delete_file FILE NAMESPACE TIMEOUT -- delete the object of FILE if present and wait until it is gone
delete_file() {
  if [ -n "$2" ]; then
    kc delete --ignore-not-found --wait=true --timeout="${3}s" -n "$2" -f "$OUT/$1"
  else
    kc delete --ignore-not-found --wait=true --timeout="${3}s" -f "$OUT/$1"
  fi
}

# delete_nowait FILE NAMESPACE -- uninstall's deletions: issued in order, not waited on (as Helm 4 does)
delete_nowait() {
  if [ -n "$2" ]; then
    kc delete --ignore-not-found --wait=false -n "$2" -f "$OUT/$1"
  else
    kc delete --ignore-not-found --wait=false -f "$OUT/$1"
  fi
}

# prune_file FILE NAMESPACE -- upgrade/rollback prune, as Helm's KubeClient.Update: read the live object first;
# gone or unreadable: skip it; its live copy says helm.sh/resource-policy: keep: leave it; else delete, not waited on
prune_file() {
  if [ -n "$2" ]; then
    policy="$(kc get --ignore-not-found -n "$2" -f "$OUT/$1" -o 'jsonpath={.metadata.annotations.helm\.sh/resource-policy}{"|"}')" || policy=''
  else
    policy="$(kc get --ignore-not-found -f "$OUT/$1" -o 'jsonpath={.metadata.annotations.helm\.sh/resource-policy}{"|"}')" || policy=''
  fi
  case "$policy" in
    '') echo "not on the cluster (or not readable): $1" ;;
    'keep|') echo "kept (its live copy has helm.sh/resource-policy: keep): $1" ;;
    *) delete_nowait "$1" "$2" ;;
  esac
}

ensure_namespace() {
  if kc get namespace "$1" >/dev/null 2>&1; then
    echo "namespace $1 exists"
  else
    kc create namespace "$1"
  fi
}

# wait_crd NAME TIMEOUT -- until the CRD exists and is Established
wait_crd() {
  deadline=$(( $(date +%s) + $2 ))
  until kc get crd "$1" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || die "CRD $1 did not appear within $2 seconds"
    sleep 2
  done
  kc wait --for=condition=Established --timeout="${2}s" "crd/$1"
}

job_logs() {
  echo "--- logs of pods of Job $2/$1 ---" >&2
  kc logs -n "$2" -l "job-name=$1" --all-containers=true --prefix=true --tail=200 >&2 || true
}

# apply_rv FILE NAMESPACE -- apply_file, printing only the resourceVersion the object got (what wait_job replays from)
apply_rv() {
  if [ -n "$2" ]; then
    kc apply --server-side --field-manager=helm ${FORCE:+"$FORCE"} -o 'jsonpath={.metadata.resourceVersion}' -n "$2" -f "$OUT/$1"
  else
    kc apply --server-side --field-manager=helm ${FORCE:+"$FORCE"} -o 'jsonpath={.metadata.resourceVersion}' -f "$OUT/$1"
  fi
}

# job_final NAME NAMESPACE RV -- "deleted" and the condition lines of the Job's last state when it was deleted after
# resourceVersion RV, replayed from the API's watch history (prints nothing when it was not deleted)
job_final() {
  kc get --raw "/apis/batch/v1/namespaces/$2/jobs?watch=true&fieldSelector=metadata.name%3D$1&resourceVersion=$3&timeoutSeconds=1" 2>/dev/null \
    | sed -n 's/^{"type":"DELETED","object":\(.*\)}$/\1/p' | tail -n 1 \
    | kc create --dry-run=client -f - -o 'jsonpath=deleted{"\n"}{range .status.conditions[*]}{.type}={.status}{"\n"}{end}' 2>/dev/null || true
}

# wait_job NAME NAMESPACE TIMEOUT [RV] -- Complete=True succeeds; Failed=True fails at once (not after the timeout).
# A Job gone from the API (ttlSecondsAfterFinished: 0 deletes it the moment it completes) is judged by its last
# state since RV, the resourceVersion it was applied with: Helm 4 watches and sees that state too.
wait_job() {
  deadline=$(( $(date +%s) + $3 ))
  while :; do
    if ! conds="$(kc get job "$1" -n "$2" -o 'jsonpath={range .status.conditions[*]}{.type}={.status}{"\n"}{end}' 2>&1)"; then
      case "$conds" in
        *NotFound*|*'not found'*) conds="$(if [ -n "${4:-}" ]; then job_final "$1" "$2" "$4"; fi)" ;;
        *) conds='' ;;
      esac
      case "$conds" in
        *Failed=True*) echo "Job $2/$1 failed (and was deleted)" >&2; return 1 ;;
        *Complete=True*) echo "Job $2/$1 complete (deleted right after: ttlSecondsAfterFinished?)"; return 0 ;;
        deleted*) echo "Job $2/$1 was deleted before it finished" >&2; return 1 ;;
      esac
    fi
    case "$conds" in
      *Failed=True*) echo "Job $2/$1 failed" >&2; job_logs "$1" "$2"; return 1 ;;
      *Complete=True*) echo "Job $2/$1 complete"; return 0 ;;
    esac
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "Job $2/$1 did not complete within $3 seconds" >&2
      job_logs "$1" "$2"
      return 1
    fi
    sleep 2
  done
}

# wait_pod NAME NAMESPACE TIMEOUT -- phase Succeeded succeeds; Failed fails at once
wait_pod() {
  deadline=$(( $(date +%s) + $3 ))
  while :; do
    phase="$(kc get pod "$1" -n "$2" -o 'jsonpath={.status.phase}' 2>/dev/null || true)"
    case "$phase" in
      Failed) echo "Pod $2/$1 failed" >&2; kc logs -n "$2" "$1" --all-containers=true --tail=200 >&2 || true; return 1 ;;
      Succeeded) echo "Pod $2/$1 succeeded"; return 0 ;;
    esac
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "Pod $2/$1 did not succeed within $3 seconds" >&2
      kc logs -n "$2" "$1" --all-containers=true --tail=200 >&2 || true
      return 1
    fi
    sleep 2
  done
}
"""


def q(text: str) -> str:
    """Single-quote for bash (works in 3.2)."""
    return shlex.quote(text)


def _ns_arg(obj: PlanObject, release_ns: str) -> str:
    """``-n`` value: the release namespace for objects that do not name one (kubectl ignores it when cluster-scoped)."""
    return q("" if obj.namespace else release_ns)


def _object_ns(obj: PlanObject, release_ns: str) -> str:
    return obj.namespace or release_ns


def _hook_lines(step: Step, plan: Plan) -> list[str]:
    ns = plan.namespace
    out: list[str] = []
    for i, o in enumerate(step.objects):
        policies = ",".join(p.value for p in o.delete_policies or ()) or "none acting"
        out.append(
            f"  echo {q(f'-- {step.phase} hook {i + 1}/{len(step.objects)}: {o.label} (weight {o.weight}; {policies})')}"
        )
        if o.delete_before_create:
            out.append(f"  delete_file {q(o.file)} {_ns_arg(o, ns)} {step.timeout_seconds}")
        waiter = {Wait.JOB_COMPLETE: "wait_job", Wait.POD_SUCCEEDED: "wait_pod"}.get(o.wait or Wait.NONE)
        since = ""
        if o.wait == Wait.JOB_COMPLETE:
            out.append(f'  HOOK_RV="$(apply_rv {q(o.file)} {_ns_arg(o, ns)})"')
            out.append(f'  echo {q(f"{o.label} applied")}" (resourceVersion $HOOK_RV)"')
            since = ' "$HOOK_RV"'
        else:
            out.append(f"  apply_file {q(o.file)} {_ns_arg(o, ns)}")
        if waiter:
            out.append(
                f"  if ! {waiter} {q(o.name)} {q(_object_ns(o, ns))} {step.timeout_seconds}{since}; then"
            )
            for d in step.delete_after_failure(i):
                out.append(f"    delete_file {q(d.file)} {_ns_arg(d, ns)} {step.timeout_seconds} || true")
            hint = ""
            if not o.delete_before_create:
                kind = o.kind.lower()
                hint = (
                    f" If it is a leftover of an earlier run (no before-hook-creation policy), delete it: "
                    f"kubectl delete {kind} {o.name} -n {_object_ns(o, ns)}"
                )
            msg = f"{step.phase} hook {o.label} failed; Helm stops the event here and skips its remaining hooks.{hint}"
            out.append(f"    die {q(msg)}")
            out.append("  fi")
            if o.logs_on_success:
                if o.kind == "Job":
                    out.append(f"  job_logs {q(o.name)} {q(_object_ns(o, ns))} 2>&1")
                else:
                    out.append(
                        f"  kc logs -n {q(_object_ns(o, ns))} {q(o.name)} --all-containers=true --tail=200 || true"
                    )
    if step.delete_after_success:
        out.append(
            f"  echo {q(f'-- {step.phase} succeeded: deleting hook-succeeded hooks in reverse order')}"
        )
        for d in step.delete_after_success:
            out.append(f"  delete_file {q(d.file)} {_ns_arg(d, ns)} {step.timeout_seconds}")
    return out


def readiness_jobs(plan: Plan) -> dict[str, str]:
    """Release Jobs the readiness step waits on (by file), each with the shell variable that keeps the
    resourceVersion its apply gave: what ``wait_job`` replays the watch history from when the Job is already gone
    (``ttlSecondsAfterFinished: 0``). Empty after ``--from-step`` past the apply step: that wait then times out."""
    out: dict[str, str] = {}
    for step in plan.steps:
        if step.phase == Phase.READINESS.value:
            for n, o in enumerate(step.objects):
                if o.wait == Wait.JOB_COMPLETE:
                    out[o.file] = f"JOB_RV_{n}"
    return out


def _dq(text: str) -> str:
    """Text made safe inside a bash double-quoted string."""
    return "".join("\\" + c if c in '\\"$`' else c for c in text)


def crd_version_keys(plan: Plan, out_dir: Path) -> dict[str, int]:
    """The newest version of each templated CRD the plan applies, as the script's ``vkey`` numbers it (what
    ``apply_crd`` compares the cluster's newest version with; :func:`berth.install.apply.version_key`'s order)."""
    from berth.install import apply

    keys: dict[str, int] = {}
    for step in plan.steps:
        if step.phase != Phase.CRDS.value:
            continue
        for o in step.objects:
            if o.create_only or not (out_dir / o.file).is_file():
                continue
            body = yamlio.load_objects((out_dir / o.file).read_text(encoding="utf-8"), o.file)[0][1]
            stability, major, minor, _ = apply.version_key(apply.newest_version(body))
            keys[o.file] = stability * 1_000_000 + major * 1_000 + minor if stability else 0
    return keys


def _step_lines(step: Step, plan: Plan, job_rv: dict[str, str], crd_keys: dict[str, int]) -> list[str]:
    ns = plan.namespace
    if step.phase == Phase.NAMESPACE.value:
        return [f"  ensure_namespace {q(step.objects[0].name)}"]
    if step.phase == Phase.CRDS.value:
        out = []
        for o in step.objects:
            if o.create_only:
                out.append(f"  if kc get crd {q(o.name)} >/dev/null 2>&1; then")
                out.append(
                    f"    echo {q(f'CRD {o.name} exists; Helm leaves crds/ CRDs under their current owner')}"
                )
                out.append("  else")
                out.append(f"    apply_file {q(o.file)} ''")
                out.append("  fi")
            else:
                out.append(f"  apply_crd {q(o.file)} {q(o.name)} {crd_keys.get(o.file, 0)}")
            out.append(f"  wait_crd {q(o.name)} {step.timeout_seconds}")
        return out
    if step.phase in (Phase.SECRETS.value, Phase.APPLY.value):
        out = []
        for o in step.objects:
            if o.file in job_rv:
                rv = "-o 'jsonpath={.metadata.resourceVersion}'"
                out.append(f'  {job_rv[o.file]}="$(apply_owned {q(o.file)} {_ns_arg(o, ns)} {rv})"')
                applied = f"{o.kind} {_object_ns(o, ns)}/{o.name} applied"
                out.append(f'  echo {q(applied)}" (resourceVersion ${job_rv[o.file]})"')
            else:
                out.append(f"  apply_owned {q(o.file)} {_ns_arg(o, ns)}")
        return out
    if step.phase == Phase.DELETE.value:
        return [f"  delete_nowait {q(o.file)} {_ns_arg(o, ns)}" for o in step.objects]
    if step.phase == Phase.PRUNE.value:
        return [f"  prune_file {q(o.file)} {_ns_arg(o, ns)}" for o in step.objects]
    if step.phase == Phase.READINESS.value:
        out = ['  if [ "$NO_WAIT" = 1 ]; then', "    echo 'not waited on (--no-wait)'", "  else"]
        for o in step.objects:
            if o.wait == Wait.ROLLOUT:
                out.append(
                    f'  kc rollout status -f "$OUT/"{q(o.file)} -n {q(_object_ns(o, ns))} --timeout={step.timeout_seconds}s'
                )
            elif o.wait == Wait.JOB_COMPLETE:
                out.append(
                    f'  wait_job {q(o.name)} {q(_object_ns(o, ns))} {step.timeout_seconds} "${{{job_rv[o.file]}:-}}"'
                )
            elif o.wait == Wait.POD_SUCCEEDED:
                out.append(f"  wait_pod {q(o.name)} {q(_object_ns(o, ns))} {step.timeout_seconds}")
        return [*out[:3], *(f"  {line}" for line in out[3:]), "  fi"]
    return _hook_lines(step, plan)


def generate(plan: Plan, out_dir: Path) -> str:
    """The whole script for ``plan``; ``out_dir`` is the default ``--out`` (the work dir's ``out/``). It embeds the
    render ``out_dir`` holds (:func:`berth.install.layout.render_id`) and refuses to run against another one."""
    render_id = layout.render_id(out_dir)
    label = f"the {plan.action.value} plan of release {plan.release}"
    regenerate = f"berth install script --work-dir {out_dir.parent} --action {plan.action.value}" + (
        f" --revision {plan.target_revision}" if plan.target_revision is not None else ""
    )
    header = [
        "#!/usr/bin/env bash",
        f"# Generated by berth {__version__} from the {plan.action.value} plan of release {plan.release} "
        f"(namespace {plan.namespace}){' to ' + plan.target if plan.target else ''}.",
        f"# Work dir render: {render_id} (it refuses to run against a work dir holding another one).",
        "# Do not edit: regenerate with `berth install script`. Runs under bash 3.2+ with kubectl only.",
        "# Steps:",
        *[f"#   {i}. {s.phase}: {s.description}" for i, s in enumerate(plan.steps, 1)],
    ]
    prelude = (
        PRELUDE.replace("__OUT__", q(str(out_dir)))
        .replace("__RENDER_ID__", q(render_id))
        .replace("__RENDER_LABEL__", _dq(label))
        .replace("__REGENERATE__", _dq(regenerate))
        .replace("__TOTAL__", str(len(plan.steps)))
        .replace("__ACTION__", plan.action.value)
        .replace("__RELEASE__", plan.release)
    )
    prelude += f"RELEASE={q(plan.release)}\nRELEASE_NS={q(plan.namespace)}\n"
    crd_keys = crd_version_keys(plan, out_dir)
    body: list[str] = [f"echo {q('warning: ' + w)} >&2" for w in plan.warnings]
    job_rv = readiness_jobs(plan)
    body += [f"{var}=''" for var in job_rv.values()]
    for i, step in enumerate(plan.steps, 1):
        body.append("")
        body.append(f"if begin_step {i} {q(f'{step.phase}: {step.description}')}; then")
        body += _step_lines(step, plan, job_rv, crd_keys)
        body.append("fi")
    hook_steps = sum(1 for s in plan.steps if s.is_hook)
    body.append("")
    body.append("STEP=0")
    done = f"Done. The {plan.action.value} plan of release {plan.release}: "
    body.append(f'say {q(done)}"$RAN of $TOTAL step(s) ran ({hook_steps} of them lifecycle hook steps)."')
    for k in plan.kept:
        body.append(f"echo {q(f'Left in place: {k.obj.label} ({k.reason})')}")
    for n in plan.not_run:
        body.append(
            f"echo {q(f'Not run by this script: the {n.phase} step of this plan; run it with: {n.run_by}')}"
        )
    if plan.target_revision is not None:
        # The live rollback switches W/out and W/package to the target; a kubectl-only script cannot re-record the
        # work dir (and often runs from a copy of out/), so it says which command does.
        work = out_dir.parent
        cmd = f"berth install rollback --work-dir {q(str(work))} --revision {plan.target_revision} --switch-only"
        body.append(
            f"echo {q(f'The work dir does not follow this rollback by itself: where {work} is, run: {cmd}')}"
        )
        body.append(
            f"echo {q('(it makes out/ and package/ those of ' + plan.target + ' and records the replaced render, without contacting the cluster)')}"
        )
    return "\n".join(header) + "\n" + prelude + "\n".join(body) + "\n"
