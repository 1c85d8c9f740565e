{{- define "edge.labels" -}}
app.kubernetes.io/name: edge-hooks
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
