{{/*
Names, labels and the few rules the templates share.
*/}}

{{- define "trainer-cpp.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's object name prefix, as upstream's trainer.fullname. */}}
{{- define "trainer-cpp.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "trainer-cpp.controller.name" -}}
{{ include "trainer-cpp.fullname" . | trunc 52 | trimSuffix "-" }}-controller
{{- end }}

{{- define "trainer-cpp.webhook.name" -}}
{{ include "trainer-cpp.fullname" . | trunc 55 | trimSuffix "-" }}-webhook
{{- end }}

{{- define "trainer-cpp.configmap.name" -}}
{{ include "trainer-cpp.fullname" . | trunc 56 | trimSuffix "-" }}-config
{{- end }}

{{/*
The webhook certificate's Secret: upstream's certManagement.webhookSecretName, if set; else the
name upstream's chart gives it (<nameOverride, else kubeflow-trainer>-webhook-cert, whatever the
release), so a release that replaces upstream's keeps its CA.
*/}}
{{- define "trainer-cpp.webhook.secretName" -}}
{{- with .Values.manager.config.certManagement.webhookSecretName }}{{ . }}{{ else }}{{ .Values.nameOverride | default "kubeflow-trainer" | trunc 49 | trimSuffix "-" }}-webhook-cert{{ end }}
{{- end }}

{{/* "true" when upstream's manager.config.featureGates turns TrainJobStatus on, else "". */}}
{{- define "trainer-cpp.trainJobStatus" -}}
{{- $gates := .Values.manager.config.featureGates | default dict }}
{{- if eq (toString (index $gates "TrainJobStatus")) "true" }}true{{ end }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "trainer-cpp.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "trainer-cpp.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: trainer-cpp
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of one service: (dict "root" $ "component" "controller"). */}}
{{- define "trainer-cpp.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trainer-cpp.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- with .root.Values.manager.selectorLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels of one service's objects: (dict "root" $ "component" "webhook"). */}}
{{- define "trainer-cpp.componentLabels" -}}
{{ include "trainer-cpp.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* An image reference: (dict "root" $ "image" .Values.controller.image). */}}
{{- define "trainer-cpp.image" -}}
{{- $tag := .image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion }}
{{- with .root.Values.image.registry }}{{ . }}/{{ end }}{{ .image.repository }}:{{ $tag }}
{{- end }}

{{/*
The first non-empty of a list: a service's own setting, then manager's, then a default.
Usage: include "trainer-cpp.pick" (list .Values.webhook.resources .Values.manager.resources $default)
Prints YAML; empty when all are empty.
*/}}
{{- define "trainer-cpp.pick" -}}
{{- $found := "" }}
{{- range . }}{{- if and (not $found) . }}{{- $found = toYaml . }}{{- end }}{{- end }}
{{- $found }}
{{- end }}

{{/* The port of an address like ":8080" or "127.0.0.1:8080". */}}
{{- define "trainer-cpp.port" -}}
{{- regexFind "[0-9]+$" (toString .) }}
{{- end }}

{{/* controller.replicas when set (0 included), else manager.replicas. */}}
{{- define "trainer-cpp.controller.replicas" -}}
{{- if kindIs "invalid" .Values.controller.replicas }}{{ .Values.manager.replicas }}{{ else }}{{ .Values.controller.replicas }}{{ end }}
{{- end }}

{{/* "" when metrics are off (bindAddress "0"). */}}
{{- define "trainer-cpp.metricsPort" -}}
{{- $p := include "trainer-cpp.port" .Values.manager.config.metrics.bindAddress }}
{{- if ne $p "0" }}{{ $p }}{{ end }}
{{- end }}

{{- define "trainer-cpp.healthPort" -}}
{{ include "trainer-cpp.port" .Values.manager.config.health.healthProbeBindAddress }}
{{- end }}

{{/* The checks that keep an install from starting broken. */}}
{{- define "trainer-cpp.validate" -}}
{{- $mode := .Values.webhook.certificate.mode }}
{{- if not (has $mode (list "builtin" "cert-manager" "secret")) }}
{{- fail (printf "webhook.certificate.mode must be builtin, cert-manager or secret, not %q" $mode) }}
{{- end }}
{{- if and (eq $mode "builtin") (not .Values.manager.config.certManagement.enable) }}
{{- fail "manager.config.certManagement.enable=false (upstream's key: the certificate is yours) needs webhook.certificate.mode=secret or cert-manager" }}
{{- end }}
{{- if and (eq $mode "secret") (not .Values.webhook.certificate.caBundle) }}
{{- fail "webhook.certificate.mode=secret needs webhook.certificate.caBundle (base64 of the CA that signed your certificate)" }}
{{- end }}
{{- if not (has .Values.webhook.failurePolicy (list "Fail" "Ignore")) }}
{{- fail (printf "webhook.failurePolicy must be Fail or Ignore, not %q" .Values.webhook.failurePolicy) }}
{{- end }}
{{- if and (gt (include "trainer-cpp.controller.replicas" . | int) 1) (not .Values.manager.config.leaderElection.leaderElect) }}
{{- fail "more than one trainer-controller replica needs manager.config.leaderElection.leaderElect=true" }}
{{- end }}
{{- if .Values.image.repository }}
{{- fail "image.repository (upstream's one manager image) does not apply: trainer-cpp has two images, controller.image.repository and webhook.image.repository" }}
{{- end }}
{{- if and (hasKey .Values "crds") (kindIs "map" .Values.crds) (eq (toString .Values.crds.enabled) "false") }}
{{- fail "crds.enabled=false (upstream's key): this chart keeps its CRDs in crds/, so helm uninstall never deletes TrainJobs; install with --skip-crds instead" }}
{{- end }}
{{- if eq (toString .Values.manager.config.metrics.secureServing) "true" }}
{{- fail "manager.config.metrics.secureServing=true: this chart serves metrics over plain HTTP on the metrics port (upstream: HTTPS with a self-signed certificate); set it to false" }}
{{- end }}
{{- if .Values.dataCache.enabled }}
{{- fail "dataCache (upstream's LeaderWorkerSet data cache) is not supported by trainer-cpp" }}
{{- end }}
{{- if not (include "trainer-cpp.healthPort" .) }}
{{- fail (printf "manager.config.health.healthProbeBindAddress %q has no port" .Values.manager.config.health.healthProbeBindAddress) }}
{{- end }}
{{- end }}

{{/*
What both Deployments' pods share, for one service: (dict "root" $ "svc" .Values.webhook
"component" "webhook" "defaultResources" (dict ...) "defaultAffinity" (dict ...)).
*/}}
{{- define "trainer-cpp.podMetadata" -}}
labels:
  {{- include "trainer-cpp.selectorLabels" (dict "root" .root "component" .component) | nindent 2 }}
  app.kubernetes.io/part-of: trainer-cpp
  {{- with .root.Values.manager.labels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- $annotations := merge (deepCopy (.svc.podAnnotations | default dict)) (.root.Values.manager.podAnnotations | default dict) (.extraAnnotations | default dict) }}
{{- with $annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "trainer-cpp.podPlacement" -}}
{{- with .root.Values.image.pullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with include "trainer-cpp.pick" (list .svc.nodeSelector .root.Values.manager.nodeSelector) }}
nodeSelector:
  {{- . | nindent 2 }}
{{- end }}
{{- with include "trainer-cpp.pick" (list .svc.affinity .root.Values.manager.affinity .defaultAffinity) }}
affinity:
  {{- . | nindent 2 }}
{{- end }}
{{- with include "trainer-cpp.pick" (list .svc.tolerations .root.Values.manager.tolerations) }}
tolerations:
  {{- . | nindent 2 }}
{{- end }}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile: {type: RuntimeDefault}
{{- end }}

{{/* The container fields both services share (after name, image, args, ports); .extraEnv: a
service's own variables, before manager.env. */}}
{{- define "trainer-cpp.containerCommon" -}}
imagePullPolicy: {{ .root.Values.image.pullPolicy }}
{{- with concat (.extraEnv | default list) (.root.Values.manager.env | default list) }}
env:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.manager.envFrom }}
envFrom:
  {{- toYaml . | nindent 2 }}
{{- end }}
livenessProbe:
  httpGet: {path: /healthz, port: health}
  initialDelaySeconds: 15
  periodSeconds: 20
  timeoutSeconds: 3
readinessProbe:
  httpGet: {path: /readyz, port: health}
  initialDelaySeconds: 5
  periodSeconds: 10
  timeoutSeconds: 3
{{- with include "trainer-cpp.pick" (list .svc.resources .root.Values.manager.resources .defaultResources) }}
resources:
  {{- . | nindent 2 }}
{{- end }}
{{- with .root.Values.manager.securityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* A webhook's clientConfig: (dict "service" (dict name namespace port) "path" P "caBundle" B). */}}
{{- define "trainer-cpp.clientConfig" -}}
service:
  {{- toYaml (set (deepCopy .service) "path" .path) | nindent 2 }}
{{- with .caBundle }}
caBundle: {{ . }}
{{- end }}
{{- end }}

{{/* A runtime image from upstream's values (registry, repository, tag; tag default v2.3.0). */}}
{{- define "trainer-cpp.runtimeImage" -}}
{{- if .registry }}{{ .registry }}/{{ end }}{{ .repository }}:{{ .tag | default "v2.3.0" }}
{{- end }}
