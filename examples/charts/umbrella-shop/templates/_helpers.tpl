{{- define "shop.fullname" -}}
{{- printf "%s-%s" .Release.Name .Values.shop.name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
