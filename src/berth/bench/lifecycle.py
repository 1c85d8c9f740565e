"""``berth bench install``: whole-process figures side by side with Helm, in the same run on the same chart.

* **setup**: the wall time of ``berth install setup --pull CHART`` into a fresh work dir (a new process each time:
  interpreter start, imports, pull, render, split, write, plan) next to ``helm template`` of the same chart, also a
  new process each time. Runs alternate (helm, berth, helm, berth...) so both see the same machine load; the
  medians and their ratio are reported. Two charts by default: the ~50-object synthetic chart and a chart the size
  of kai-scheduler's (:func:`kai_like_chart`: many large CRDs in ``crds/``, ~170 files once split).
* **upgrade**: on a fresh embedded cluster, ``berth install upgrade --pull`` of a 40-object chart between two
  versions next to ``helm upgrade`` of the same two versions (another release of the same charts on the same
  cluster), alternately; with and without waiting for readiness (berth waits by default, Helm with ``--wait``).

Targets (issue 18): setup <= 4x ``helm template``; upgrade <= ``helm upgrade``. The figures carry the machine's
load average, since they are wall times on a shared machine.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from berth.kube import tools, yamlio

SETUP_TARGET_RATIO = 4.0
UPGRADE_TARGET_RATIO = 1.0


def _description(path: str, n: int) -> str:
    return (
        f"{path} field {n}: controller-gen keeps each field's Go doc comment as its description, which is what "
        "makes real CRDs (pod templates, affinity, resource claims embedded in a config type) this large."
    )


def _schema(path: str, depth: int, width: int) -> dict[str, Any]:
    """A nested openAPIV3Schema object, the shape controller-gen writes (descriptions everywhere)."""
    props: dict[str, Any] = {}
    for n in range(width):
        name = f"field{n}"
        if depth > 0 and n % 3 == 0:
            props[name] = _schema(f"{path}.{name}", depth - 1, width)
        elif n % 3 == 1:
            props[name] = {"type": "array", "description": _description(path, n),
                           "items": {"type": "string", "description": _description(path, n)}}  # fmt: skip
        else:
            props[name] = {"type": "string", "description": _description(path, n)}
    return {"type": "object", "description": _description(path, 0), "properties": props}


def _crd(group: str, kind: str, depth: int, width: int, versions: tuple[str, ...]) -> dict[str, Any]:
    plural = f"{kind.lower()}s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}", "annotations": {"controller-gen.kubebuilder.io/version": "v0.16.4"}},
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
            "scope": "Namespaced",
            "versions": [
                {"name": v, "served": True, "storage": v == versions[-1], "subresources": {"status": {}},
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                     "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
                     "spec": _schema(f"{kind}.spec", depth, width), "status": _schema(f"{kind}.status", 1, width)}}}}
                for v in versions
            ],
        },
    }  # fmt: skip


KAI_TEMPLATE = """{{- range $i := until (int .Values.components) }}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: comp-{{ $i }}, namespace: {{ $.Release.Namespace }}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: {{ $.Release.Name }}-comp-{{ $i }}}
rules:
{{- range $r := list "pods" "nodes" "queues" "podgroups" "bindrequests" "configmaps" "events" "leases" }}
  - apiGroups: ["", "scheduling.run.ai", "kai.scheduler", "coordination.k8s.io"]
    resources: [{{ $r }}, {{ $r }}/status]
    verbs: [get, list, watch, create, update, patch, delete]
{{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: {{ $.Release.Name }}-comp-{{ $i }}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {{ $.Release.Name }}-comp-{{ $i }}}
subjects: [{kind: ServiceAccount, name: comp-{{ $i }}, namespace: {{ $.Release.Namespace }}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: comp-{{ $i }}-config, namespace: {{ $.Release.Namespace }}}
data:
  config.yaml: |
    component: comp-{{ $i }}
    leaderElection: {enabled: true, leaseDuration: 15s}
    metrics: {port: 8080, path: /metrics}
---
apiVersion: v1
kind: Service
metadata: {name: comp-{{ $i }}, namespace: {{ $.Release.Namespace }}, labels: {app: comp-{{ $i }}}}
spec:
  selector: {app: comp-{{ $i }}}
  ports: [{name: metrics, port: 8080}, {name: webhook, port: 443, targetPort: 9443}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: comp-{{ $i }}, namespace: {{ $.Release.Namespace }}, labels: {app: comp-{{ $i }}}}
spec:
  replicas: 1
  selector: {matchLabels: {app: comp-{{ $i }}}}
  template:
    metadata: {labels: {app: comp-{{ $i }}}}
    spec:
      serviceAccountName: comp-{{ $i }}
      containers:
        - name: main
          image: {{ $.Values.image }}:{{ $.Values.tag }}
          args: [--config=/etc/comp/config.yaml, --leader-elect, --v=2]
          env:
            - {name: POD_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
            - {name: COMPONENT, value: comp-{{ $i }}}
          ports: [{containerPort: 8080, name: metrics}, {containerPort: 9443, name: webhook}]
          resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {cpu: "1", memory: 512Mi}}
          volumeMounts: [{name: config, mountPath: /etc/comp}]
      volumes: [{name: config, configMap: {name: comp-{{ $i }}-config}}]
{{- end }}
{{- if .Release.IsInstall }}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: default-queue}
spec: {resources: {cpu: {quota: -1}}}
{{- end }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: crd-upgrader
  namespace: {{ .Release.Namespace }}
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: upgrader, image: "{{ .Values.image }}-crd-upgrader:{{ .Values.tag }}"}]
"""


def kai_like_chart(root: Path, components: int = 27) -> Path:
    """A chart the size and shape of kai-scheduler's: ten CRDs in ``crds/`` (one of ~0.7 MB, as its Config CRD),
    ``components`` operator components of six objects each, an install-only custom resource and a pre-install,
    pre-upgrade hook Job -- about 170 files once split."""
    chart = root / "kai-like"
    (chart / "templates").mkdir(parents=True)
    (chart / "crds").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: kai-like\nversion: 0.16.8\n", encoding="utf-8")
    (chart / "values.yaml").write_text(
        f"components: {components}\nimage: registry.example.com/kai/operator\ntag: v0.16.8\n",
        encoding="utf-8",
    )
    sizes = [("Config", "kai.scheduler", 3, 12, ("v1",)), ("Queue", "scheduling.run.ai", 1, 8, ("v2alpha2", "v2")),
             ("PodGroup", "scheduling.run.ai", 2, 6, ("v2alpha2",)),
             *((k, "scheduling.run.ai", 1, 7, ("v1alpha1",)) for k in ("BindRequest", "Topology", "SchedulingShard")),
             *((k, "kai.scheduler", 1, 6, ("v1",)) for k in ("Scheduler", "Binder", "Admission", "PodGrouper"))]  # fmt: skip
    for kind, group, depth, width, versions in sizes:
        text = yamlio.dump(_crd(group, kind, depth, width, versions))
        (chart / "crds" / f"{group}_{kind.lower()}s.yaml").write_text(text, encoding="utf-8")
    (chart / "templates" / "components.yaml").write_text(KAI_TEMPLATE, encoding="utf-8")
    return chart


def fifty_object_chart(root: Path) -> Path:
    from berth.bench import install as bench

    return bench.synthetic_chart(root, 50)


def _timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and the processes it waited for: berth's Helm
    runs count) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd[:6])} ... failed ({proc.returncode}): {proc.stderr.strip()[-800:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu


def _berth() -> list[str]:
    """``berth`` exactly as the console script runs it (``berth.entry:main``; ``-m berth.cli`` would add runpy's
    imports, which an installed berth does not pay)."""
    return [sys.executable, "-c", "import sys; from berth.entry import main; sys.exit(main())"]


def berth_env(cache: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment berth runs in here: as an installed berth runs, from compiled bytecode (kept under
    ``cache``, not beside the sources), even where ``PYTHONDONTWRITEBYTECODE`` is set (it makes every process
    compile every module again, ~0.3 s of CPU), and with its own cache folder (``helm version``, decoded CRDs:
    :func:`berth.kube.tools.cache_dir`) next to it, filled by the untimed first run as a user's is by their first
    setup, and never the user's own."""
    env = {
        **(base if base is not None else os.environ),
        "PYTHONPYCACHEPREFIX": str(cache),
        "BERTH_CACHE_DIR": f"{cache}-berth",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _summary(
    label: str, helm_runs: list[tuple[float, float]], berth_runs: list[tuple[float, float]], target: float
) -> dict[str, Any]:
    helm_med, berth_med = (statistics.median(w for w, _ in r) for r in (helm_runs, berth_runs))
    helm_cpu, berth_cpu = (statistics.median(c for _, c in r) for r in (helm_runs, berth_runs))
    ratio = berth_med / helm_med if helm_med else float("inf")
    return {
        "what": label,
        "helmSeconds": round(helm_med, 3),
        "berthSeconds": round(berth_med, 3),
        "helmRuns": [round(w, 3) for w, _ in helm_runs],
        "berthRuns": [round(w, 3) for w, _ in berth_runs],
        "ratio": round(ratio, 2),
        "helmCpuSeconds": round(helm_cpu, 3),
        "berthCpuSeconds": round(berth_cpu, 3),
        "cpuRatio": round(berth_cpu / helm_cpu, 2) if helm_cpu else None,
        "targetRatio": target,
        "met": ratio <= target,
    }


def setup_vs_template(chart: Path, repeat: int, label: str) -> dict[str, Any]:
    """Medians of ``helm template`` and ``berth install setup`` (fresh work dir), alternating, ``repeat`` each,
    after one untimed run of each (disk caches, berth's bytecode)."""
    helm = tools.find("helm").path
    helm_runs: list[tuple[float, float]] = []
    berth_runs: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="berth-bench-setup-") as tmp:
        env = berth_env(Path(tmp) / "pycache")
        for n in range(repeat + 1):
            helm_run = _timed(
                [helm, "template", "bench", str(chart), "--namespace", "bench", "--include-crds"]
            )
            work = Path(tmp) / f"w{n}"
            berth_run = _timed([*_berth(), "install", "setup", "--pull", str(chart), "--work-dir", str(work),
                                "--namespace", "bench", "--non-interactive"], env)  # fmt: skip
            shutil.rmtree(work, ignore_errors=True)
            if n:
                helm_runs.append(helm_run)
                berth_runs.append(berth_run)
    out = _summary(f"setup ({label}) vs helm template", helm_runs, berth_runs, SETUP_TARGET_RATIO)
    out["chart"] = label
    return out


def run_setup(chart: str | None, repeat: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="berth-bench-charts-") as tmp:
        root = Path(tmp)
        if chart:
            return [setup_vs_template(Path(chart), repeat, chart)]
        fifty = fifty_object_chart(root / "fifty")
        kai = kai_like_chart(root / "kai")
        return [
            setup_vs_template(fifty, repeat, "synthetic, 50 objects"),
            setup_vs_template(kai, repeat, "kai-scheduler-sized: 10 large CRDs, ~170 files"),
        ]


def _next_version(chart: Path, dest: Path) -> Path:
    """The live benchmark chart's next version: every ConfigMap's data and the Deployments' image change."""
    shutil.copytree(chart, dest)
    text = (dest / "templates" / "all.yaml").read_text(encoding="utf-8")
    text = text.replace("data: {k: v", "data: {k: next-v").replace(
        "registry.example.com/app:1", "registry.example.com/app:2"
    )
    (dest / "templates" / "all.yaml").write_text(text, encoding="utf-8")
    (dest / "Chart.yaml").write_text("apiVersion: v2\nname: bench\nversion: 0.2.0\n", encoding="utf-8")
    return dest


def upgrade_vs_helm(repeat: int) -> list[dict[str, Any]]:
    """On one fresh embedded cluster: ``helm upgrade`` and ``berth install upgrade --pull`` between the same two
    chart versions (each its own release), alternating; without and with waiting for readiness."""
    from berth.bench import install as bench
    from berth.cluster import Cluster, ClusterOptions

    helm = tools.find("helm").path
    results = []
    with tempfile.TemporaryDirectory(prefix="berth-bench-upgrade-") as tmp:
        root = Path(tmp)
        charts = [
            bench.live_chart(root / "v1"),
            _next_version(bench.live_chart(root / "tmp"), root / "v2" / "bench"),
        ]
        with Cluster(ClusterOptions(data_dir=root / "cluster", nodes=1)) as cluster:
            kubeconfig = str(cluster.kubeconfig)
            env = berth_env(root / "pycache", {**os.environ, "KUBECONFIG": kubeconfig})
            for wait in (False, True):
                suffix = "-wait" if wait else ""
                release, ns, work = f"h{suffix}", f"helm{suffix}", root / f"work{suffix}"
                _timed([helm, "install", release, str(charts[0]), "-n", ns, "--create-namespace",
                        "--kubeconfig", kubeconfig, "--wait", "--timeout", "120s"], env)  # fmt: skip
                _timed([*_berth(), "install", "setup", "--pull", str(charts[0]), "--work-dir", str(work),
                        "--namespace", f"berth{suffix}", "--non-interactive"], env)  # fmt: skip
                _timed(
                    [*_berth(), "install", "apply", "--work-dir", str(work), "--kubeconfig", kubeconfig], env
                )
                helm_runs: list[tuple[float, float]] = []
                berth_runs: list[tuple[float, float]] = []
                for n in range(repeat):
                    chart = str(charts[(n + 1) % 2])
                    wait_flags = ["--wait", "--timeout", "120s"] if wait else []
                    helm_runs.append(_timed([helm, "upgrade", release, chart, "-n", ns, "--kubeconfig",
                                             kubeconfig, *wait_flags], env))  # fmt: skip
                    no_wait = [] if wait else ["--no-wait"]
                    berth_runs.append(_timed([*_berth(), "install", "upgrade", "--work-dir", str(work), "--pull",
                                              chart, "--kubeconfig", kubeconfig, *no_wait], env))  # fmt: skip
                label = (
                    "install upgrade vs helm upgrade --wait (both wait for readiness)"
                    if wait
                    else "install upgrade --no-wait vs helm upgrade (neither waits)"
                )
                results.append(_summary(label, helm_runs, berth_runs, UPGRADE_TARGET_RATIO))
    return results


def text(figures: dict[str, Any]) -> list[str]:
    lines = [f"load average: {' '.join(f'{x:.2f}' for x in figures['load'])} ({figures['cpus']} CPUs)"]
    for f in figures["results"]:
        lines.append(f"{f['what']}:")
        lines.append(
            f"  helm {f['helmSeconds'] * 1000:8.1f} ms   berth {f['berthSeconds'] * 1000:8.1f} ms   ratio "
            f"{f['ratio']:.2f}x (target <= {f['targetRatio']:g}x: {'met' if f['met'] else 'MISSED'}; medians of "
            f"{len(f['helmRuns'])} alternating runs)"
        )
        lines.append(
            f"  CPU (user+sys, with child processes): helm {f['helmCpuSeconds'] * 1000:6.1f} ms   berth "
            f"{f['berthCpuSeconds'] * 1000:6.1f} ms   ratio {f['cpuRatio']}x"
        )
    return lines


def run(chart: str | None, repeat: int, setup: bool = True, upgrade: bool = False) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    if setup:
        results += run_setup(chart, repeat)
    if upgrade:
        results += upgrade_vs_helm(repeat)
    return {"load": list(os.getloadavg()), "cpus": os.cpu_count(), "results": results}
