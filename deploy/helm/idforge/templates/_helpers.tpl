{{/* The release's objects are named after it, cut to DNS label length. */}}
{{- define "idforge.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "idforge.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "idforge.labels" -}}
{{ include "idforge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "idforge.secretName" -}}
{{- default (include "idforge.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{- define "idforge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "idforge.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* sqlite is "true" when the store is SQLite in the data directory. */}}
{{- define "idforge.sqlite" -}}
{{- if .Values.existingSecret -}}
{{- .Values.existingSecretSQLite -}}
{{- else -}}
{{- empty .Values.store.url -}}
{{- end -}}
{{- end -}}

{{/* The scheme probes use: HTTPS when TLS is on. */}}
{{- define "idforge.scheme" -}}
{{- if .Values.tls.secretName }}HTTPS{{ else }}HTTP{{ end -}}
{{- end -}}

{{/*
validate refuses what would issue duplicates or not start: several
SQLite files, a Deployment without a coordinator, no token.
*/}}
{{- define "idforge.validate" -}}
{{- if not (has .Values.mode (list "statefulset" "deployment")) -}}
{{- fail (printf "mode %q: want statefulset or deployment" .Values.mode) -}}
{{- end -}}
{{- if and (eq (include "idforge.sqlite" .) "true") (or (gt (int .Values.replicaCount) 1) (eq .Values.mode "deployment")) -}}
{{- fail "SQLite (no store.url) serves one statefulset replica only: every pod would have its own database and issue the same segment IDs; set store.url to a shared MySQL/MariaDB, PostgreSQL, Redis or etcd store" -}}
{{- end -}}
{{- if and (eq (include "idforge.sqlite" .) "true") (not .Values.persistence.enabled) -}}
{{- fail "SQLite (no store.url) needs persistence.enabled: on an emptyDir a restarted pod would lose its database and issue its IDs again" -}}
{{- end -}}
{{- if and (eq .Values.mode "deployment") (not .Values.worker.url) (not .Values.worker.fromStore) -}}
{{- fail "deployment mode needs a worker-ID coordinator: worker.url (etcd://...) or worker.fromStore=true (the SQL store)" -}}
{{- end -}}
{{- if and .Values.worker.url .Values.worker.fromStore -}}
{{- fail "give worker.url or worker.fromStore, not both" -}}
{{- end -}}
{{- if and (not .Values.existingSecret) (not .Values.auth.token) -}}
{{- fail "auth.token (or existingSecret) is required: idforge refuses to listen on 0.0.0.0 without a token" -}}
{{- end -}}
{{- end -}}

{{- define "idforge.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* The pod template both workloads share. */}}
{{- define "idforge.podTemplate" -}}
metadata:
  labels:
    {{- include "idforge.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    {{- if .Values.config }}
    checksum/config: {{ .Values.config | sha256sum }}
    {{- end }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "idforge.serviceAccountName" . }}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    fsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  {{- if and .Values.migrate.enabled (ne (include "idforge.sqlite" .) "true") }}
  initContainers:
    # idforge migrate creates or upgrades the store's tables, and the SQL
    # worker-ID table (a no-op when they are current; it can run while
    # other nodes serve). serve itself never creates tables on a database
    # server.
    - name: migrate
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - migrate
        - --data=/data
        {{- if and (eq .Values.mode "deployment") .Values.worker.url }}
        - --worker={{ .Values.worker.url }}
        {{- end }}
      env:
        - name: IDFORGE_STORE
          valueFrom:
            secretKeyRef:
              name: {{ include "idforge.secretName" . }}
              key: store-url
        {{- if and (eq .Values.mode "deployment") .Values.worker.fromStore }}
        - name: IDFORGE_WORKER
          valueFrom:
            secretKeyRef:
              name: {{ include "idforge.secretName" . }}
              key: store-url
        {{- end }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- include "idforge.containerSecurityContext" . | nindent 8 }}
      volumeMounts:
        - name: data
          mountPath: /data
  {{- end }}
  containers:
    - name: idforge
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - serve
        - --http=0.0.0.0:{{ .Values.ports.http }}
        {{- if .Values.ports.grpcEnabled }}
        - --grpc=0.0.0.0:{{ .Values.ports.grpc }}
        {{- end }}
        - --data=/data
        {{- if eq .Values.mode "statefulset" }}
        - --worker=k8s://?offset={{ int .Values.worker.offset }}
        {{- else if .Values.worker.url }}
        - --worker={{ .Values.worker.url }}
        {{- end }}
        - --layout={{ .Values.snowflake.layout }}
        - --datacenter={{ int .Values.snowflake.datacenter }}
        - --log-level={{ .Values.logLevel }}
        {{- if .Values.config }}
        - --config=/etc/idforge/idforge.toml
        {{- end }}
        {{- if .Values.tls.secretName }}
        - --tls-cert=/etc/idforge/tls/tls.crt
        - --tls-key=/etc/idforge/tls/tls.key
        {{- if .Values.tls.requireClientCerts }}
        - --tls-client-ca=/etc/idforge/tls/ca.crt
        {{- end }}
        {{- end }}
      env:
        # k8s:// reads the ordinal from the pod's name.
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: IDFORGE_TOKEN
          valueFrom:
            secretKeyRef:
              name: {{ include "idforge.secretName" . }}
              key: token
        - name: IDFORGE_ISSUE_TOKEN
          valueFrom:
            secretKeyRef:
              name: {{ include "idforge.secretName" . }}
              key: issue-token
              optional: true
        {{- if ne (include "idforge.sqlite" .) "true" }}
        - name: IDFORGE_STORE
          valueFrom:
            secretKeyRef:
              name: {{ include "idforge.secretName" . }}
              key: store-url
        {{- end }}
        {{- if and (eq .Values.mode "deployment") .Values.worker.fromStore }}
        # Worker IDs leased from rows in the SQL store (idforge_workers).
        - name: IDFORGE_WORKER
          valueFrom:
            secretKeyRef:
              name: {{ include "idforge.secretName" . }}
              key: store-url
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: http
          containerPort: {{ .Values.ports.http }}
          protocol: TCP
        {{- if .Values.ports.grpcEnabled }}
        - name: grpc
          containerPort: {{ .Values.ports.grpc }}
          protocol: TCP
        {{- end }}
      startupProbe:
        httpGet:
          path: /healthz
          port: http
          scheme: {{ include "idforge.scheme" . }}
        periodSeconds: {{ .Values.probes.startup.periodSeconds }}
        failureThreshold: {{ .Values.probes.startup.failureThreshold }}
      readinessProbe:
        httpGet:
          path: /readyz
          port: http
          scheme: {{ include "idforge.scheme" . }}
        periodSeconds: {{ .Values.probes.readiness.periodSeconds }}
        failureThreshold: {{ .Values.probes.readiness.failureThreshold }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: http
          scheme: {{ include "idforge.scheme" . }}
        periodSeconds: {{ .Values.probes.liveness.periodSeconds }}
        failureThreshold: {{ .Values.probes.liveness.failureThreshold }}
      {{- if gt (int .Values.preStopSleepSeconds) 0 }}
      lifecycle:
        preStop:
          sleep:
            seconds: {{ int .Values.preStopSleepSeconds }}
      {{- end }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- include "idforge.containerSecurityContext" . | nindent 8 }}
      volumeMounts:
        - name: data
          mountPath: /data
        - name: tmp
          mountPath: /tmp
        {{- if .Values.config }}
        - name: config
          mountPath: /etc/idforge/idforge.toml
          subPath: idforge.toml
          readOnly: true
        {{- end }}
        {{- if .Values.tls.secretName }}
        - name: tls
          mountPath: /etc/idforge/tls
          readOnly: true
        {{- end }}
  volumes:
    {{- if not (and (eq .Values.mode "statefulset") .Values.persistence.enabled) }}
    - name: data
      emptyDir: {}
    {{- end }}
    - name: tmp
      emptyDir:
        sizeLimit: 64Mi
    {{- if .Values.config }}
    - name: config
      configMap:
        name: {{ include "idforge.fullname" . }}
    {{- end }}
    {{- if .Values.tls.secretName }}
    - name: tls
      secret:
        secretName: {{ .Values.tls.secretName }}
    {{- end }}
  {{- if .Values.topologySpread }}
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: ScheduleAnyway
      labelSelector:
        matchLabels:
          {{- include "idforge.selectorLabels" . | nindent 10 }}
  {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
