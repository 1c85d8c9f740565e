{{/*
Helpers for the berth-scheduler chart. The objects must stay identical to what
`berth schedule manifests --shape profiles` emits (src/berth/schedule/manifests.py); tests/schedule/test_chart.py
compares the two renders.
*/}}

{{/* The namespace the scheduler runs in: .Values.namespace, else the release namespace. */}}
{{- define "berth-scheduler.namespace" -}}
{{- .Values.namespace | default .Release.Namespace -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "berth-scheduler.labels" -}}
app.kubernetes.io/name: berth-scheduler
app.kubernetes.io/instance: {{ .Values.name }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/part-of: berth
{{- end -}}

{{/* The Deployment's selector. */}}
{{- define "berth-scheduler.selector" -}}
app.kubernetes.io/name: berth-scheduler
app.kubernetes.io/instance: {{ .Values.name }}
{{- end -}}

{{/*
The configuration, parsed (for leader election and the scheduler names). Fails on malformed YAML and on a shape
this chart does not render.
*/}}
{{- define "berth-scheduler.config" -}}
{{- if ne .Values.shape "profiles" -}}
{{- fail (printf "shape %q: this chart renders the \"profiles\" shape (one Deployment for every profile); for one Deployment per profile use `berth schedule manifests --shape separate`" .Values.shape) -}}
{{- end -}}
{{- if not .Values.config -}}
{{- fail "config is empty: pass a KubeSchedulerConfiguration, e.g. --set-file config=my-config.yaml" -}}
{{- end -}}
{{- $cfg := fromYaml .Values.config -}}
{{- if hasKey $cfg "Error" -}}
{{- fail (printf "config is not valid YAML: %s" (get $cfg "Error")) -}}
{{- end -}}
{{- toJson $cfg -}}
{{- end -}}

{{/* "true" when the configuration elects a leader (kube-scheduler's default is true). */}}
{{- define "berth-scheduler.leaderElect" -}}
{{- $cfg := include "berth-scheduler.config" . | fromJson -}}
{{- $le := true -}}
{{- with $cfg.leaderElection -}}
{{- if hasKey . "leaderElect" -}}
{{- $le = .leaderElect -}}
{{- end -}}
{{- end -}}
{{- ternary "true" "false" (eq (toString $le) "true") -}}
{{- end -}}

{{/* The profiles' scheduler names, comma separated (a profile without one is "default-scheduler"). */}}
{{- define "berth-scheduler.schedulerNames" -}}
{{- $cfg := include "berth-scheduler.config" . | fromJson -}}
{{- $names := list -}}
{{- range ($cfg.profiles | default (list dict)) -}}
{{- $names = append $names (.schedulerName | default "default-scheduler") -}}
{{- end -}}
{{- join "," $names -}}
{{- end -}}
