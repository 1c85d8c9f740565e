"""``berth bench install``: what berth's render -> split -> plan costs next to ``helm template`` alone.

Both are measured in the same run on the same chart (best of ``repeat``), so the ratio does not depend on the
machine. berth's figure includes its two parallel verification renders. Without a chart, a synthetic chart with
``n_objects`` objects (Deployments, Services, ConfigMaps, Secrets, a few hooks) is generated in a temp folder.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from berth.install import helm
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
