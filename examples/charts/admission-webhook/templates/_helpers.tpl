{{- define "gate.name" -}}{{ .Release.Name }}-gate{{- end -}}
{{- define "gate.labels" -}}
app.kubernetes.io/name: gate
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "gate.admissionHook" -}}
helm.sh/hook: pre-install,pre-upgrade,post-install,post-upgrade
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}
