"""The real kubectl 1.35 against the embedded cluster: the commands users and installers run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from berth.cluster import Cluster

from .conftest import Kubectl

DEPLOYMENT = textwrap.dedent(
    """\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, labels: {app: web}}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
          - {name: main, image: "nginx:1.27", ports: [{containerPort: 80}]}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cfg}
    data: {a: "1"}
    """
)

CRD = textwrap.dedent(
    """\
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: widgets.example.com}
    spec:
      group: example.com
      scope: Namespaced
      names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
      versions:
      - name: v1
        served: true
        storage: true
        additionalPrinterColumns:
        - {name: Size, type: integer, jsonPath: .spec.size}
        schema:
          openAPIV3Schema:
            type: object
            properties:
              spec:
                type: object
                properties:
                  size: {type: integer, default: 3}
    """
)


def test_version_and_get_namespaces(kubectl: Kubectl) -> None:
    assert "Server Version: v1.35.0" in kubectl.ok("version")
    out = kubectl.ok("get", "ns")
    assert out.split()[:3] == ["NAME", "STATUS", "AGE"] or out.split()[:2] == ["NAME", "AGE"]
    assert "kube-system" in out


def test_apply_client_side_is_idempotent_then_configures(kubectl: Kubectl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "app.yaml"
    f.write_text(DEPLOYMENT)
    assert "deployment.apps/web created" in kubectl.ok("apply", "-f", str(f))
    assert "deployment.apps/web unchanged" in kubectl.ok("apply", "-f", str(f))
    f.write_text(DEPLOYMENT.replace("replicas: 2", "replicas: 3"))
    assert "deployment.apps/web configured" in kubectl.ok("apply", "-f", str(f))
    dep = json.loads(kubectl.ok("get", "deploy", "web", "-o", "json"))
    assert dep["spec"]["replicas"] == 3 and dep["metadata"]["generation"] == 2
    assert "kubectl.kubernetes.io/last-applied-configuration" in dep["metadata"]["annotations"]


def test_server_side_apply_conflicts_after_a_patch_unless_forced(kubectl: Kubectl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "cm.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: one}\n")
    assert "serverside-applied" in kubectl.ok("apply", "--server-side", "-f", str(f))
    kubectl.ok("patch", "configmap", "ssa", "--type=merge", "-p", '{"data":{"a":"two"}}')
    proc = kubectl.run("apply", "--server-side", "-f", str(f))
    assert proc.returncode != 0 and "conflict" in proc.stderr.lower() and ".data.a" in proc.stderr
    kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", str(f))
    cm = json.loads(kubectl.ok("get", "cm", "ssa", "-o", "json", "--show-managed-fields"))
    assert cm["data"]["a"] == "one"
    managers = {(m["manager"], m["operation"]) for m in cm["metadata"]["managedFields"]}
    assert ("kubectl", "Apply") in managers


def test_get_output_formats(kubectl: Kubectl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "app.yaml"
    f.write_text(DEPLOYMENT)
    kubectl.ok("apply", "-f", str(f))
    assert "web" in kubectl.ok("get", "deploy", "-o", "wide")
    assert "kind: ConfigMap" in kubectl.ok("get", "cm", "cfg", "-o", "yaml")
    listed = json.loads(kubectl.ok("get", "cm", "-o", "json"))
    assert listed["kind"] == "List" and any(i["metadata"]["name"] == "cfg" for i in listed["items"])
    assert kubectl.ok("get", "cm", "cfg", "-o", "name").strip() == "configmap/cfg"
    assert kubectl.ok("get", "cm", "--chunk-size=1", "-o", "name").count("configmap/") == 1


def test_explain_prints_upstream_descriptions(kubectl: Kubectl) -> None:
    out = kubectl.ok("explain", "deployment.spec.replicas")
    assert "FIELD: replicas <integer>" in out
    assert "Number of desired pods." in out
    # a field that is a reference: its own description, then the referenced type's, then the type's fields
    out = kubectl.ok("explain", "deployment.spec.template")
    assert "FIELD: template <PodTemplateSpec>" in out
    assert "Template describes the pods that will be created." in out
    assert "PodTemplateSpec describes the data a pod should have" in out
    assert "spec\t<PodSpec>" in out
    out = kubectl.ok("explain", "pods")
    assert "Pod is a collection of containers" in out and "enum:" not in out


def test_explain_a_custom_resource_uses_its_crd_schema(kubectl: Kubectl) -> None:
    described = CRD.replace(
        "size: {type: integer, default: 3}",
        "size: {type: integer, default: 3, description: How many widgets to keep.}",
    )
    assert described != CRD
    kubectl.ok("apply", "-f", "-", input=described)
    kubectl.ok("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s")
    out = kubectl.ok("explain", "widgets.spec.size")
    assert "FIELD: size <integer>" in out and "How many widgets to keep." in out


def test_crd_established_and_custom_objects_served(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", "-", input=CRD)
    assert "condition met" in kubectl.ok(
        "wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=10s"
    )
    kubectl.ok(
        "apply", "-f", "-", input="apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {}\n"
    )
    assert "w1" in kubectl.ok("get", "wd")
    w = json.loads(kubectl.ok("get", "widget", "w1", "-o", "json"))
    assert w["spec"] == {"size": 3}
    kubectl.ok("delete", "crd", "widgets.example.com", timeout=30)


def test_delete_waits_for_removal_and_wait_for_delete(kubectl: Kubectl) -> None:
    kubectl.ok("create", "configmap", "gone", "--from-literal=a=b")
    assert 'configmap "gone" deleted' in kubectl.ok("delete", "configmap", "gone", timeout=20)
    kubectl.ok("wait", "--for=delete", "configmap/gone", "--timeout=5s")
    kubectl.ok("create", "configmap", "stays")
    proc = kubectl.run("wait", "--for=delete", "configmap/stays", "--timeout=1s")
    assert proc.returncode != 0 and "timed out" in proc.stderr


def test_create_kinds_sent_as_protobuf(kubectl: Kubectl) -> None:
    kubectl.ok("create", "namespace", "team")
    kubectl.ok("create", "secret", "generic", "s", "-n", "team", "--from-literal=password=hunter2")
    kubectl.ok("create", "configmap", "c", "-n", "team", "--from-literal=k=v")
    secret = json.loads(kubectl.ok("get", "secret", "s", "-n", "team", "-o", "json"))
    assert secret["data"]["password"] == "aHVudGVyMg=="


def test_autoscale_creates_an_autoscaling_v2_hpa(kubectl: Kubectl) -> None:
    # kubectl autoscale sends the HPA as protobuf, v2 first (a 415 there makes it retry v1, then give up)
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27")
    assert "autoscaled" in kubectl.ok("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu=70%")
    hpa = json.loads(kubectl.ok("get", "hpa", "web", "-o", "json"))
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 5)
    assert hpa["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
        }
    ]
    row = kubectl.ok("get", "hpa", "web").splitlines()[1].split()
    assert row[:2] == ["web", "Deployment/web"] and "70%" in row[3]


def test_create_token_and_auth_can_i(kubectl: Kubectl, cluster: Cluster, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert kubectl.ok("auth", "can-i", "create", "pods").strip() == "yes"
    kubectl.ok("create", "serviceaccount", "bot")
    token = kubectl.ok("create", "token", "bot").strip()
    assert token.count(".") == 2
    whoami = json.loads(kubectl.ok("auth", "whoami", "-o", "json", "--token", token))
    assert whoami["status"]["userInfo"]["username"] == "system:serviceaccount:default:bot"


def test_scale_label_and_replace_conflict(kubectl: Kubectl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "app.yaml"
    f.write_text(DEPLOYMENT)
    kubectl.ok("apply", "-f", str(f))
    kubectl.ok("scale", "deploy/web", "--replicas=5")
    kubectl.ok("label", "deploy/web", "tier=front")
    dep = json.loads(kubectl.ok("get", "deploy", "web", "-o", "json"))
    assert dep["spec"]["replicas"] == 5 and dep["metadata"]["labels"]["tier"] == "front"
    stale = dict(dep)
    stale["metadata"] = {**dep["metadata"], "resourceVersion": "1"}
    proc = kubectl.run("replace", "-f", "-", input=json.dumps(stale))
    assert proc.returncode != 0 and "the object has been modified" in proc.stderr


@pytest.mark.parametrize("dry_run", ["server"], ids=["server-dry-run"])
def test_server_dry_run_stores_nothing(kubectl: Kubectl, dry_run: str) -> None:
    kubectl.ok("create", "configmap", "dry", f"--dry-run={dry_run}")
    assert kubectl.run("get", "configmap", "dry").returncode != 0


SCALABLE_CRD = textwrap.dedent(
    """\
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: gadgets.example.com}
    spec:
      group: example.com
      scope: Namespaced
      names: {plural: gadgets, singular: gadget, kind: Gadget}
      versions:
      - name: v1
        served: true
        storage: true
        subresources:
          status: {}
          scale: {specReplicasPath: .spec.count, statusReplicasPath: .status.count}
        additionalPrinterColumns:
        - {name: Size, type: integer, jsonPath: .spec.size}
        schema:
          openAPIV3Schema:
            type: object
            properties:
              spec:
                type: object
                properties:
                  size: {type: integer, default: 3}
                  count: {type: integer}
              status:
                type: object
                properties:
                  count: {type: integer}
    """
)


def test_custom_resource_printer_columns_and_scale(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", "-", input=SCALABLE_CRD)
    kubectl.ok("wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=10s")
    kubectl.ok(
        "apply",
        "-f",
        "-",
        input="apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {count: 1}\n",
    )
    header = kubectl.ok("get", "gadgets").splitlines()[0].split()
    assert header == ["NAME", "SIZE"]  # custom columns replace the default AGE, as upstream
    kubectl.ok("scale", "gadget/g", "--replicas=4")
    assert kubectl.ok("get", "gadget", "g", "-o", "jsonpath={.spec.count}") == "4"


def test_get_watch_prints_rows_as_objects_change(kubectl: Kubectl) -> None:
    import subprocess

    proc = subprocess.Popen(
        [kubectl.binary, "get", "configmaps", "--watch", "--request-timeout=20s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=kubectl.env,
    )
    try:
        assert proc.stdout is not None
        # Whether "first" lands before the initial list or after, kubectl prints it (from the list or the watch).
        kubectl.ok("create", "configmap", "first")
        assert proc.stdout.readline().split() == ["NAME", "DATA", "AGE"]
        assert proc.stdout.readline().split()[:2] == ["first", "0"]
        kubectl.ok("create", "configmap", "watched", "--from-literal=a=b")
        assert proc.stdout.readline().split()[:2] == ["watched", "1"]
    finally:
        proc.kill()
        proc.wait()


def test_create_job_from_cronjob_keeps_the_whole_pod_template(kubectl: Kubectl) -> None:
    """kubectl sends the copied job template as protobuf; every pod field must arrive (affinity, probes, volumes...).

    The Job must hold everything the CronJob's stored template holds, and equal a Job applied as JSON from the same
    template (the server defaults a Job's pod template, e.g. imagePullPolicy, but not a CronJob's).
    """
    template = json.loads(
        (Path(__file__).parent / "fixtures" / "protobuf" / "job-from-cronjob-source.json").read_text()
    )
    # kube-apiserver 1.35 (validateResizePolicy) refuses resizePolicy RestartContainer when restartPolicy is Never
    for policy in template["spec"]["template"]["spec"]["containers"][0].get("resizePolicy") or []:
        policy["restartPolicy"] = "NotRequired"
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "cj"},
        "spec": {"schedule": "*/5 * * * *", "suspend": True, "jobTemplate": template},
    }
    kubectl.ok("apply", "-f", "-", input=json.dumps(cronjob))
    kubectl.ok("create", "job", "j", "--from=cronjob/cj")
    as_json = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j-json"},
        "spec": template["spec"],
    }
    kubectl.ok("apply", "-f", "-", input=json.dumps(as_json))
    stored = json.loads(kubectl.ok("get", "cronjob", "cj", "-o", "json"))["spec"]["jobTemplate"]["spec"]
    job = json.loads(kubectl.ok("get", "job", "j", "-o", "json"))["spec"]
    job_json = json.loads(kubectl.ok("get", "job", "j-json", "-o", "json"))["spec"]

    def lost(want: object, got: object, path: str) -> list[str]:
        if isinstance(want, dict) and isinstance(got, dict):
            return [p for k, v in want.items() for p in lost(v, got.get(k), f"{path}.{k}")]
        if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
            return [
                p for i, (w, g) in enumerate(zip(want, got, strict=True)) for p in lost(w, g, f"{path}[{i}]")
            ]
        return [] if want == got else [path]

    assert lost(stored["template"]["spec"], job["template"]["spec"], "spec") == []
    assert job["template"]["spec"] == job_json["template"]["spec"]
    assert stored["template"]["spec"]["affinity"] and len(stored["template"]["spec"]["volumes"]) == 14


CSR_AND_APISERVICE = """\
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: agent}
spec:
  request: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K
  signerName: example.com/agent
  expirationSeconds: 86400
  usages: [client auth]
  username: someone-else
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {name: metrics-server, namespace: kube-system}
"""


def test_csr_approval_and_apiservices_are_stored_as_data(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", "-", input=CSR_AND_APISERVICE)
    csr = json.loads(kubectl.ok("get", "csr", "agent", "-o", "json"))
    assert csr["spec"]["username"] == "kubernetes-admin"  # the server records who asked, not the body
    row = kubectl.ok("get", "csr", "agent").splitlines()[1].split()
    assert row[2:] == ["example.com/agent", "kubernetes-admin", "24h", "Pending"]
    assert "approved" in kubectl.ok("certificate", "approve", "agent")
    conditions = json.loads(kubectl.ok("get", "csr", "agent", "-o", "json"))["status"]["conditions"]
    assert [(c["type"], c["status"]) for c in conditions] == [("Approved", "True")]
    assert kubectl.ok("get", "csr", "agent").splitlines()[1].split()[-1] == "Approved"
    row = kubectl.ok("get", "apiservices").splitlines()[1].split()
    assert row[:3] == ["v1beta1.metrics.k8s.io", "kube-system/metrics-server", "Unknown"]


DRA_OBJECTS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, resourceSliceCount: 1, generation: 1}
  devices:
  - name: gpu-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one-gpu, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
"""


def test_dra_objects_are_served_as_data_with_kubectls_columns(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", "-", input=DRA_OBJECTS)
    assert kubectl.ok("get", "resourceclaims").splitlines()[1].split()[:2] == ["one-gpu", "pending"]
    assert kubectl.ok("get", "resourceslices").splitlines()[1].split()[:4] == [
        "node-1-gpus",
        "node-1",
        "gpu.example.com",
        "node-1",
    ]
    assert kubectl.ok("get", "deviceclasses", "-o", "name") == "deviceclass.resource.k8s.io/gpu.example.com\n"
    # Schema-validated like any built-in kind: a request list that is a string is refused.
    bad = DRA_OBJECTS.split("---\n")[2].replace(
        "requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.example.com}", "requests: nope"
    )
    proc = kubectl.run("apply", "-f", "-", input=bad.replace("one-gpu", "bad"))
    assert proc.returncode != 0 and "cannot be handled as a ResourceClaim" in proc.stderr


def test_an_unknown_kind_gets_kubectls_no_matches_message(kubectl: Kubectl) -> None:
    """kubectl falls back to /openapi/v2 for kinds the v3 documents lack, then to the REST mapping: the message is
    the one users know from kube-apiserver (a CRD not installed yet), not a validation download error."""
    for api_version in ("nothing.example.com/v1", "apps/v1"):
        proc = kubectl.run(
            "create", "-f", "-", input=f"apiVersion: {api_version}\nkind: Thing\nmetadata: {{name: x}}\n"
        )
        assert proc.returncode != 0
        assert f'no matches for kind "Thing" in version "{api_version}"' in proc.stderr
        assert "ensure CRDs are installed first" in proc.stderr


STOCK_KINDS = """\
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: gold}
driverName: pd.csi.storage.gke.io
parameters: {iops: "3000"}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: tenant-level}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    limitResponse:
      type: Queue
      queuing: {queues: 16, handSize: 4, queueLengthLimit: 50}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: tenant-flow}
spec:
  priorityLevelConfiguration: {name: tenant-level}
  matchingPrecedence: 500
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: Group, group: {name: system:authenticated}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"]}]
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: extra}
spec: {cidrs: ["10.100.0.0/16"]}
"""


def test_other_kinds_a_stock_cluster_serves_are_stored_with_kubectls_columns(kubectl: Kubectl) -> None:
    """Charts of CSI drivers and platform add-ons ship these; they are kept as data (nothing limits or allocates)."""
    kubectl.ok("apply", "-f", "-", input=STOCK_KINDS)

    def row(resource: str) -> list[str]:
        return kubectl.ok("get", resource).splitlines()[1].split()

    assert row("vac")[:2] == ["gold", "pd.csi.storage.gke.io"]
    assert row("prioritylevelconfigurations")[:6] == ["tenant-level", "Limited", "10", "16", "4", "50"]
    assert row("flowschemas")[:4] == ["tenant-flow", "tenant-level", "500", "ByUser"]
    assert row("servicecidrs")[:2] == ["extra", "10.100.0.0/16"]


NULLS = textwrap.dedent(
    """\
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: exporter, labels: {app: exporter, team: null}}
    spec:
      selector: {matchLabels: {app: exporter}}
      template:
        metadata: {labels: {app: exporter}, annotations: null}
        spec:
          nodeSelector: null
          containers:
          - name: main
            image: "exporter:1"
            livenessProbe: {httpGet: {httpHeaders: null, path: /, port: 9100}}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: nulls}
    data: {a: "1", b: null}
    """
)


@pytest.mark.parametrize("verb", ["create", "replace"])
def test_nulls_a_chart_renders_are_stored_as_go_decodes_them(
    kubectl: Kubectl, tmp_path: Path, verb: str
) -> None:
    """A struct field given ``null`` is omitted and a map entry given ``null`` is the empty string, on create and on
    replace, as a real API server stores them: else every diff of the object against its manifest (``install status``
    on kube-prometheus-stack's node-exporter) sees a change nobody made."""
    f = tmp_path / "nulls.yaml"
    f.write_text(NULLS)
    if verb == "replace":
        kubectl.ok("create", "-f", str(f))
    kubectl.ok(verb, "-f", str(f))
    ds = json.loads(kubectl.ok("get", "daemonset", "exporter", "-o", "json"))
    pod = ds["spec"]["template"]
    assert ds["metadata"]["labels"] == {"app": "exporter", "team": ""}
    assert "annotations" not in pod["metadata"] and "nodeSelector" not in pod["spec"]
    http_get = pod["spec"]["containers"][0]["livenessProbe"]["httpGet"]
    assert "httpHeaders" not in http_get and http_get["path"] == "/"
    cm = json.loads(kubectl.ok("get", "configmap", "nulls", "-o", "json"))
    assert cm["data"] == {"a": "1", "b": ""}


def test_a_long_generate_name_is_cut_to_leave_room_for_the_suffix(kubectl: Kubectl) -> None:
    """As upstream's SimpleNameGenerator: the prefix is cut to 58 characters, so the name stays within 63."""
    prefix = "a-configmap-whose-generated-name-prefix-is-far-longer-than-the-limit-"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": prefix}}
    name = kubectl.ok("create", "-f", "-", "-o", "name", input=json.dumps(body)).strip().split("/", 1)[1]
    assert len(name) == 63 and name.startswith(prefix[:58]) and name[58:].isalnum()
