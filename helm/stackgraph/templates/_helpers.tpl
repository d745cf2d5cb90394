{{/* Names and labels. */}}
{{- define "stackgraph.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "stackgraph.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "stackgraph.selectorLabels" -}}
app.kubernetes.io/name: {{ include "stackgraph.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "stackgraph.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
{{ include "stackgraph.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "stackgraph.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "stackgraph.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "stackgraph.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "stackgraph.secretName" -}}
{{- default (include "stackgraph.fullname" .) .Values.secret.existingSecret -}}
{{- end -}}

{{/* Where FalkorDB and Qdrant are: external URL, else the bundled service. */}}
{{- define "stackgraph.falkordbBundled" -}}
{{- if and (not .Values.falkordb.url) (not .Values.falkordb.urlSecret.name) -}}true{{- end -}}
{{- end -}}

{{- define "stackgraph.falkordbUrl" -}}
{{- if .Values.falkordb.url -}}
{{- .Values.falkordb.url -}}
{{- else -}}
{{- printf "redis://%s-falkordb:6379" (include "stackgraph.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "stackgraph.qdrantBundled" -}}
{{- if and .Values.qdrant.bundled.enabled (not .Values.qdrant.url) -}}true{{- end -}}
{{- end -}}

{{- define "stackgraph.qdrantUrl" -}}
{{- if .Values.qdrant.url -}}
{{- .Values.qdrant.url -}}
{{- else if (include "stackgraph.qdrantBundled" .) -}}
{{- printf "http://%s-qdrant:6333" (include "stackgraph.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The static job's lanes: explicit, else what is configured. */}}
{{- define "stackgraph.staticLanes" -}}
{{- if .Values.ingest.jobs.static.lanes -}}
{{- .Values.ingest.jobs.static.lanes -}}
{{- else -}}
{{- $lanes := list -}}
{{- if .Values.catalog -}}{{- $lanes = append $lanes "catalog" -}}{{- end -}}
{{- $lanes = append $lanes "infra" -}}
{{- if .Values.git.repos -}}{{- $lanes = append $lanes "code" -}}{{- end -}}
{{- join "," $lanes -}}
{{- end -}}
{{- end -}}

{{/* Global options every stackgraph command line starts with. */}}
{{- define "stackgraph.globalArgs" -}}
- --config
- /etc/stackgraph/config.yaml
{{- end -}}

{{/* Environment shared by the API and the ingest jobs. */}}
{{- define "stackgraph.env" -}}
- name: HOME
  value: /tmp
- name: STACKGRAPH_DATA_DIR
  value: /var/lib/stackgraph
- name: STACKGRAPH_GRAPH
  value: {{ .Values.graph | quote }}
{{- if .Values.falkordb.urlSecret.name }}
- name: FALKORDB_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.falkordb.urlSecret.name }}
      key: {{ .Values.falkordb.urlSecret.key | default "url" }}
{{- else }}
- name: FALKORDB_URL
  value: {{ include "stackgraph.falkordbUrl" . | quote }}
{{- end }}
{{- with .Values.falkordb.readUrl }}
- name: STACKGRAPH_FALKORDB_READ_URL
  value: {{ . | quote }}
{{- end }}
{{- with (include "stackgraph.qdrantUrl" .) }}
- name: QDRANT_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.ollama.host }}
- name: OLLAMA_HOST
  value: {{ . | quote }}
{{- end }}
{{- with .Values.prometheus.url }}
- name: PROMETHEUS_URL
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* Volumes every stackgraph pod has: config, a writable /tmp and data dir, repos. */}}
{{- define "stackgraph.volumes" -}}
- name: config
  configMap:
    name: {{ include "stackgraph.fullname" . }}
- name: tmp
  emptyDir: {}
- name: data
  emptyDir: {}
{{- if .Values.git.repos }}
- name: repos
  emptyDir: {}
{{- end }}
{{- end -}}

{{- define "stackgraph.volumeMounts" -}}
- name: config
  mountPath: /etc/stackgraph
  readOnly: true
- name: tmp
  mountPath: /tmp
- name: data
  mountPath: /var/lib/stackgraph
{{- if .Values.git.repos }}
- name: repos
  mountPath: /repos
{{- end }}
{{- end -}}

{{/* `--repo /repos/NAME` for each cloned repository. */}}
{{- define "stackgraph.repoArgs" -}}
{{- range .Values.git.repos }}
- --repo
- /repos/{{ .name }}
{{- end }}
{{- end -}}

{{/* Init container: shallow-clone each repository; URLs pass as env, never as shell text. */}}
{{- define "stackgraph.cloneInit" -}}
{{- if .Values.git.repos }}
- name: git-clone
  image: {{ include "stackgraph.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  command: [/bin/sh, -ec]
  args:
    - |
      helper='!f() { test -n "$GIT_PASSWORD" || exit 0; echo "username=${GIT_USERNAME:-git}"; echo "password=$GIT_PASSWORD"; }; f'
      i=0
      while [ "$i" -lt "$REPO_COUNT" ]; do
        eval "name=\$REPO_NAME_$i url=\$REPO_URL_$i branch=\$REPO_BRANCH_$i"
        echo "clone $name ($branch)"
        git -c credential.helper="$helper" clone --quiet --depth "$GIT_DEPTH" \
          --single-branch --branch "$branch" -- "$url" "/repos/$name"
        i=$((i + 1))
      done
  env:
    - name: HOME
      value: /tmp
    - name: GIT_TERMINAL_PROMPT
      value: "0"
    - name: GIT_DEPTH
      value: {{ .Values.git.depth | quote }}
    - name: REPO_COUNT
      value: {{ len .Values.git.repos | quote }}
    {{- range $i, $r := .Values.git.repos }}
    - name: REPO_NAME_{{ $i }}
      value: {{ $r.name | quote }}
    - name: REPO_URL_{{ $i }}
      value: {{ $r.url | quote }}
    - name: REPO_BRANCH_{{ $i }}
      value: {{ $r.branch | default "main" | quote }}
    {{- end }}
    - name: GIT_USERNAME
      valueFrom:
        secretKeyRef:
          name: {{ include "stackgraph.secretName" . }}
          key: git-username
          optional: true
    - name: GIT_PASSWORD
      valueFrom:
        secretKeyRef:
          name: {{ include "stackgraph.secretName" . }}
          key: git-password
          optional: true
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  volumeMounts:
    - name: tmp
      mountPath: /tmp
    - name: repos
      mountPath: /repos
{{- end }}
{{- end -}}
