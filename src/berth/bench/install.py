"""``berth bench install``: what berth's render -> split -> plan costs next to ``helm template`` alone, and
(``--live``) what ``berth install apply`` of a mid-sized chart costs on the embedded cluster.

Render: both are measured in the same run on the same chart (best of ``repeat``), so the ratio does not depend on
the machine. berth's figure includes its two parallel verification renders. Without a chart, a synthetic chart with
``n_objects`` objects (Deployments, Services, ConfigMaps, Secrets, a few hooks) is generated in a temp folder.

Benchmarks live here, above the actions they measure, so no action module carries measuring code.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from berth.install import apply, helm, receipt, setup
from berth.install import plan as plan_mod
from berth.install import split as split_mod
from berth.kube import tools


def synthetic_chart(root: Path, n_objects: int) -> Path:
    """A chart rendering exactly ``n_objects`` objects, ~2% of them hooks over four events."""
    chart = root / "bench-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: bench-chart\nversion: 1.0.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text(
        f"count: {n_objects}\nimage: registry.example.com/app:1.0\n", encoding="utf-8"
    )
    template = """{{- range $i := until (int .Values.count) }}
{{- $m := mod $i 50 }}
---
{{- if eq $m 0 }}
apiVersion: batch/v1
kind: Job
metadata:
  name: hook-{{ $i }}
  namespace: {{ $.Release.Namespace }}
  annotations:
    helm.sh/hook: {{ if eq (mod $i 100) 0 }}pre-install,pre-upgrade{{ else }}post-install,post-upgrade{{ end }}
    helm.sh/hook-weight: "{{ mod $i 7 }}"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: {{ $.Values.image }}}]
{{- else if lt $m 20 }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{{ $i }}
  namespace: {{ $.Release.Namespace }}
  labels: {app: app-{{ $i }}}
spec:
  replicas: 1
  selector: {matchLabels: {app: app-{{ $i }}}}
  template:
    metadata: {labels: {app: app-{{ $i }}}}
    spec:
      containers:
        - name: app
          image: {{ $.Values.image }}
          resources: {requests: {cpu: 100m, memory: 64Mi}}
{{- else if lt $m 35 }}
apiVersion: v1
kind: Service
metadata:
  name: svc-{{ $i }}
  namespace: {{ $.Release.Namespace }}
spec:
  selector: {app: app-{{ $i }}}
  ports: [{port: 80}]
{{- else if lt $m 45 }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ $i }}
  namespace: {{ $.Release.Namespace }}
data: {index: "{{ $i }}"}
{{- else }}
apiVersion: v1
kind: Secret
metadata:
  name: secret-{{ $i }}
  namespace: {{ $.Release.Namespace }}
stringData: {index: "{{ $i }}"}
{{- end }}
{{- end }}
"""
    (chart / "templates" / "objects.yaml").write_text(template, encoding="utf-8")
    return chart


def _best(fn: Any, repeat: int) -> tuple[float, Any]:
    best = float("inf")
    value = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def run(chart: str | None, n_objects: int = 500, repeat: int = 5) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="berth-bench-") as tmp:
        chart_dir = Path(chart) if chart else synthetic_chart(Path(tmp), n_objects)
        req = helm.RenderRequest(chart_dir, "bench", "bench")
        cmd = [tools.find("helm").path, *req.args()]

        def helm_alone() -> None:
            subprocess.run(cmd, capture_output=True, check=True)

        def berth_pipeline() -> tuple[split_mod.Split, list[plan_mod.Plan]]:
            rendered = helm.render(req)
            result = split_mod.from_render(rendered.text, rendered.dropped_hook_events)
            plans = [
                plan_mod.build(a, plan_mod.PlanInputs(result, "bench", "bench")) for a in plan_mod.Action
            ]
            return result, plans

        helm_s, _ = _best(helm_alone, repeat)
        berth_s, (result, _plans) = _best(berth_pipeline, repeat)
        render = helm.render(req)

        def split_plan() -> None:
            res = split_mod.from_render(render.text)
            for a in plan_mod.Action:
                plan_mod.build(a, plan_mod.PlanInputs(res, "bench", "bench"))

        split_s, _ = _best(split_plan, repeat)
    return {
        "chart": chart or f"synthetic ({n_objects} objects)",
        "objects": len(result.all_objects()),
        "hooks": len(result.hooks),
        "repeat": repeat,
        "helmTemplateSeconds": round(helm_s, 4),
        "berthRenderSplitPlanSeconds": round(berth_s, 4),
        "splitAndPlanOnlySeconds": round(split_s, 4),
        "ratio": round(berth_s / helm_s, 2) if helm_s else None,
        "targets": {"ratioAtMost": 3.0, "secondsAtMostFor500": 2.0},
    }


def text(figures: dict[str, Any]) -> list[str]:
    return [
        f"chart: {figures['chart']}: {figures['objects']} objects, {figures['hooks']} hooks (best of {figures['repeat']})",
        f"helm template alone:          {figures['helmTemplateSeconds'] * 1000:8.1f} ms",
        f"berth render+split+plan:      {figures['berthRenderSplitPlanSeconds'] * 1000:8.1f} ms "
        "(two parallel renders, compared; plans for all 5 actions)",
        f"  of which split+plan only:   {figures['splitAndPlanOnlySeconds'] * 1000:8.1f} ms",
        f"ratio: {figures['ratio']}x (target <= 3x, <= 2 s for 500 objects)",
    ]


# ---- live: install apply on the embedded cluster -------------------------------------------------------


LIVE_HOOK_JOBS = 3
LIVE_OBJECTS = 40


def live_chart(root: Path) -> Path:
    """A chart of 40 release objects (ConfigMaps, Secrets, ServiceAccounts, Services, Roles, RoleBindings,
    Deployments) and 3 hook Jobs (2 pre-install, 1 post-install). Pods name ``node-1`` directly: the embedded
    cluster binds no pods by itself."""
    chart = root / "bench-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: bench\nversion: 0.1.0\n", encoding="utf-8")
    pod = "nodeName: node-1\n      containers: [{name: main, image: registry.example.com/app:1}]"
    docs = []
    for n in range(8):
        docs.append(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{n}}}\ndata: {{k: v{n}}}")
        docs.append(f"apiVersion: v1\nkind: Secret\nmetadata: {{name: secret-{n}}}\nstringData: {{k: s{n}}}")
        docs.append(f"apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: sa-{n}}}")
        docs.append(
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: svc-{n}}}\n"
            f"spec: {{selector: {{app: d{n % 4}}}, ports: [{{port: 80}}]}}"
        )
    for n in range(4):
        docs.append(
            f"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: role-{n}}}\n"
            "rules: [{apiGroups: [''], resources: [configmaps], verbs: [get]}]"
        )
        docs.append(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{n}}}\nspec:\n  replicas: 1\n"
            f"  selector: {{matchLabels: {{app: d{n}}}}}\n  template:\n    metadata: {{labels: {{app: d{n}}}}}\n"
            f"    spec:\n      {pod}"
        )
    hooks = [
        ("pre-install", "0", "migrate-a"),
        ("pre-install", "1", "migrate-b"),
        ("post-install", "0", "configure"),
    ]
    for event, weight, name in hooks:
        docs.append(
            f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  annotations:\n"
            f'    helm.sh/hook: {event}\n    helm.sh/hook-weight: "{weight}"\n'
            "    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded\n"
            f"spec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      {pod}"
        )
    assert len(docs) == LIVE_OBJECTS + LIVE_HOOK_JOBS
    (chart / "templates" / "all.yaml").write_text("\n---\n".join(docs) + "\n", encoding="utf-8")
    return chart


def run_live(repeat: int = 3) -> dict[str, Any]:
    """``berth bench install`` (live part): wall time of ``berth install apply`` of a 40-object chart with 3 hook
    Jobs on a fresh embedded cluster (best of ``repeat``; setup's Helm render is not counted). Target <= 3 s."""
    from berth.cluster import Cluster, ClusterOptions

    runs: list[float] = []
    steps = 0
    with tempfile.TemporaryDirectory(prefix="berth-bench-apply-") as tmp:
        root = Path(tmp)
        chart = live_chart(root)
        work = root / "work"
        setup.run(setup.SetupOptions(str(chart), work, namespace="bench", non_interactive=True))
        for n in range(max(1, repeat)):
            with Cluster(ClusterOptions(data_dir=root / f"cluster-{n}", nodes=1)) as cluster:
                runs_dir = work / receipt.RUNS_DIR
                if runs_dir.exists():
                    shutil.rmtree(runs_dir)
                opts = apply.ApplyOptions(work, kubeconfig=str(cluster.kubeconfig), timeout=60)
                t0 = time.perf_counter()
                outcome = apply.run(opts, apply.Reporter(quiet=True))
                runs.append(time.perf_counter() - t0)
                steps = outcome.total
    best = min(runs)
    return {
        "objects": LIVE_OBJECTS,
        "hookJobs": LIVE_HOOK_JOBS,
        "steps": steps,
        "applySeconds": round(best, 3),
        "runs": [round(r, 3) for r in runs],
        "targetSeconds": 3.0,
        "withinTarget": best <= 3.0,
    }


def live_text(figures: dict[str, Any]) -> list[str]:
    return [
        f"install apply (live, embedded cluster): {figures['objects']} objects + {figures['hookJobs']} hook Jobs, "
        f"{figures['steps']} plan steps",
        f"  best {figures['applySeconds']:.3f}s of {len(figures['runs'])} run(s) (target <= "
        f"{figures['targetSeconds']:.0f}s: {'met' if figures['withinTarget'] else 'MISSED'})",
    ]
