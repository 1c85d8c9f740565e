"""HTTP scheduler extenders: a real HTTP server on loopback plays the extender, answering with upstream's JSON
bodies; the scheduler must send upstream's requests and honour the answers (filter, prioritize, preempt, bind),
the failure rules (errors, ``ignorable``) and ``managedResources``."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from runtime_support import node, pod

from berth.schedule import config as schedconfig
from berth.schedule import explain
from berth.schedule.framework.types import PodInfo
from berth.schedule.scheduler import Result, Scheduler, SimulationBinder

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
Answer = Callable[[str, dict[str, Any]], tuple[int, Any]]


class FakeExtender:
    """A loopback HTTP extender: ``answer(verb, body) -> (status, json)``; every request is kept in ``calls``."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                verb = self.path.strip("/")
                outer.calls.append((verb, body))
                code, doc = outer.answer(verb, body)
                data = json.dumps(doc).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/scheduler"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def verbs(self) -> list[str]:
        return [verb.rsplit("/", 1)[-1] for verb, _ in self.calls]


@pytest.fixture()
def serve() -> Iterator[Callable[[Answer], FakeExtender]]:
    started: list[FakeExtender] = []

    def start(answer: Answer) -> FakeExtender:
        ext = FakeExtender(answer)
        started.append(ext)
        return ext

    yield start
    for ext in started:
        ext.server.shutdown()
        ext.server.server_close()


def scheduler(*extenders: dict[str, Any], nodes: int = 3, binder: Any = None, **profile: Any) -> Scheduler:
    doc: dict[str, Any] = {**API, "extenders": list(extenders)}
    if profile:
        doc["profiles"] = [{"schedulerName": "default-scheduler", **profile}]
    s = Scheduler(schedconfig.parse(doc), seed=1, binder=binder)
    for i in range(nodes):
        s.add_node(node(f"n{i}"))
    return s


def names(body: dict[str, Any]) -> list[str]:
    if "nodenames" in body:
        return list(body["nodenames"])
    return [n["metadata"]["name"] for n in body["nodes"]["items"]]


def only(s: Scheduler) -> Any:
    outcome = s.schedule_one()
    assert outcome is not None
    return outcome


# --- filter ----------------------------------------------------------------------------------------------------------


def test_filter_narrows_the_nodes_and_its_reasons_reach_the_fit_error(serve: Any) -> None:
    def answer(verb: str, body: dict[str, Any]) -> tuple[int, Any]:
        return 200, {
            "nodes": {"items": [n for n in body["nodes"]["items"] if n["metadata"]["name"] == "n2"]},
            "failedNodes": {"n0": "no license here"},
            "failedAndUnresolvableNodes": {"n1": "wrong zone"},
        }

    ext = serve(answer)
    s = scheduler({"urlPrefix": ext.url, "filterVerb": "filter"})
    s.add_pod(pod("p"))
    assert only(s).node == "n2"
    verb, body = ext.calls[0]
    assert verb == "scheduler/filter"
    assert body["pod"]["metadata"]["name"] == "p" and sorted(names(body)) == ["n0", "n1", "n2"]

    # Nothing passes: the FitError counts the extender's reasons; preemption cannot help on the unresolvable node.
    ext.answer = lambda verb, body: (200, {"nodenames": [], "failedNodes": {"n0": "no license here"}})
    s.add_pod(pod("q"))
    out = only(s)
    assert out.result is Result.UNSCHEDULABLE
    assert out.message.startswith("0/3 nodes are available: 1 no license here.")


def test_a_pod_an_extender_rejected_is_retried_on_any_cluster_event(serve: Any) -> None:
    allow = {"n9"}
    ext = serve(
        lambda verb, body: (
            200,
            {
                "nodes": {"items": [n for n in body["nodes"]["items"] if n["metadata"]["name"] in allow]},
                "failedNodes": {n["metadata"]["name"]: "not yet" for n in body["nodes"]["items"]},
            },
        )
    )
    s = scheduler({"urlPrefix": ext.url, "filterVerb": "filter"}, nodes=1)
    s.add_pod(pod("p"))
    assert only(s).result is Result.UNSCHEDULABLE
    assert s.queue.where("default/p").value == "unschedulable"
    s.add_node(node("n9"))  # a Node/Add no in-tree plugin of this pod's rejection asked for
    s.run_until_idle()
    assert [p.node for p in s.placements] == ["n9"]


def test_node_cache_capable_extenders_get_and_return_names(serve: Any) -> None:
    ext = serve(lambda verb, body: (200, {"nodenames": ["n1"]}))
    s = scheduler({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True})
    s.add_pod(pod("p"))
    assert only(s).node == "n1"
    assert "nodes" not in ext.calls[0][1] and sorted(ext.calls[0][1]["nodenames"]) == ["n0", "n1", "n2"]

    ext.answer = lambda verb, body: (200, {"nodenames": ["ghost"]})
    s.add_pod(pod("q"))
    out = only(s)
    assert out.result is Result.ERROR
    assert out.message == (
        f'extender "{ext.url}" claims a filtered node "ghost" which is not found in the input node list'
    )


@pytest.mark.parametrize(
    ("status", "doc", "message"),
    [
        (500, {}, "failed filter with extender at URL {url}/filter, code 500"),
        (200, {"error": "license server down"}, "license server down"),
    ],
)
def test_a_failing_filter_fails_the_pod_unless_ignorable(
    serve: Any, status: int, doc: dict[str, Any], message: str
) -> None:
    ext = serve(lambda verb, body: (status, doc))
    s = scheduler({"urlPrefix": ext.url, "filterVerb": "filter"})
    s.add_pod(pod("p"))
    out = only(s)
    assert (out.result, out.message) == (Result.ERROR, message.format(url=ext.url))

    tolerant = scheduler({"urlPrefix": ext.url, "filterVerb": "filter", "ignorable": True})
    tolerant.add_pod(pod("p"))
    assert only(tolerant).result is Result.SCHEDULED


def test_an_unreachable_extender_is_an_error_naming_its_url() -> None:
    s = scheduler({"urlPrefix": "http://127.0.0.1:9/x", "filterVerb": "filter", "httpTimeout": "1s"})
    s.add_pod(pod("p"))
    out = only(s)
    assert out.result is Result.ERROR and out.message.startswith(
        "failed filter with extender at URL http://127.0.0.1:9/x/filter:"
    )


def test_managed_resources_limit_which_pods_the_extender_sees(serve: Any) -> None:
    ext = serve(lambda verb, body: (200, {"nodes": body["nodes"]}))
    s = scheduler(
        {
            "urlPrefix": ext.url,
            "filterVerb": "filter",
            "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
        }
    )
    s.add_pod(pod("plain"))
    assert only(s).result is Result.SCHEDULED
    assert ext.calls == []
    gpu = pod("gpu")
    gpu["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
    s.add_pod(gpu)
    # ignoredByScheduler: NodeResourcesFit does not ask nodes for example.com/gpu, the extender decides.
    assert only(s).result is Result.SCHEDULED
    assert [body["pod"]["metadata"]["name"] for _, body in ext.calls] == ["gpu"]


# --- prioritize ------------------------------------------------------------------------------------------------------


def test_prioritize_scores_count_score_times_weight_times_ten(serve: Any) -> None:
    ext = serve(lambda verb, body: (200, [{"host": "n0", "score": 1}, {"host": "n2", "score": 10}]))
    s = scheduler({"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 3})
    s.add_pod(pod("p"))
    assert only(s).node == "n2"  # equal nodes tie on the plugins; 10 x 3 x 10 = 300 beats 1 x 3 x 10
    fw = s.frameworks["default-scheduler"]
    assert s._add_extender_scores(PodInfo(pod("x")), s._snapshot.node_infos(), [5, 5, 5]) == [35, 5, 305]
    assert fw.extenders()[0].name == ext.url


def test_explain_shows_the_extenders_share_of_each_total_and_their_rejections(serve: Any) -> None:
    def answer(verb: str, body: dict[str, Any]) -> tuple[int, Any]:
        if verb.endswith("filter"):
            return 200, {"nodenames": ["n0", "n2"], "failedNodes": {"n1": "no license here"}}
        return 200, [{"host": "n0", "score": 1}, {"host": "n2", "score": 10}]

    ext = serve(answer)
    s = scheduler(
        {
            "urlPrefix": ext.url,
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "weight": 3,
            "nodeCacheCapable": True,
        }
    )
    s.explainer = explain.Recorder(["p"])
    s.add_pod(pod("p"))
    assert only(s).node == "n2"
    (attempt,) = s.explainer.explanations()[0].attempts
    assert attempt.consistent, attempt.problem
    by_node = {n.node: n for n in attempt.nodes}
    assert (by_node["n0"].extender_score, by_node["n2"].extender_score) == (30, 300)
    for name in ("n0", "n2"):
        total = by_node[name].total
        assert total == sum(sc.weighted for sc in by_node[name].scores) + by_node[name].extender_score
    assert (by_node["n1"].passed, by_node["n1"].plugin, by_node["n1"].reasons) == (
        False,
        "Extender",
        ("no license here",),
    )


def test_a_failing_prioritizer_is_skipped_and_prioritizers_alone_keep_the_search_wide(serve: Any) -> None:
    ext = serve(lambda verb, body: (500, {}))
    s = scheduler(
        {"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 1},
        plugins={"score": {"disabled": [{"name": "*"}]}},
    )
    s.add_pod(pod("p"))
    assert only(s).result is Result.SCHEDULED
    # With no Score plugin, only the extender ranks nodes: all three were examined and sent, not just the first.
    assert sorted(names(ext.calls[0][1])) == ["n0", "n1", "n2"]


# --- bind --------------------------------------------------------------------------------------------------------------


def test_a_binder_extender_binds_instead_of_the_bind_plugins(serve: Any) -> None:
    ext = serve(lambda verb, body: (200, {}))
    binder = SimulationBinder()
    s = scheduler({"urlPrefix": ext.url, "bindVerb": "bind"}, nodes=1, binder=binder)
    p = pod("p")
    p["metadata"]["uid"] = "uid-p"
    s.add_pod(p)
    assert only(s).result is Result.SCHEDULED
    assert ext.calls == [
        ("scheduler/bind", {"PodName": "p", "PodNamespace": "default", "PodUID": "uid-p", "Node": "n0"})
    ]
    assert binder.bound == {}  # DefaultBinder never ran
    assert [pl.node for pl in s.placements] == ["n0"]

    ext.answer = lambda verb, body: (200, {"Error": "node is being drained"})
    s.add_pod(pod("q"))
    out = only(s)
    assert (out.result, out.message) == (Result.ERROR, "node is being drained")
    assert s.cache.get_pod("default/q") is None  # forgotten, retried after backoff


# --- preempt ---------------------------------------------------------------------------------------------------------


def test_preempt_verb_trims_the_candidates_and_picks_the_victims(serve: Any) -> None:
    def answer(verb: str, body: dict[str, Any]) -> tuple[int, Any]:
        victims = body["nodeToVictims"]
        keep = victims["n1"]["pods"][0]["metadata"]["uid"]
        return 200, {"nodeNameToMetaVictims": {"n1": {"pods": [{"uid": keep}], "numPDBViolations": 0}}}

    ext = serve(answer)
    s = scheduler({"urlPrefix": ext.url, "preemptVerb": "preempt"}, nodes=2)
    for i in range(2):
        low = pod(f"low{i}", cpu="4", node_name=f"n{i}", priority=0)
        low["metadata"]["uid"] = f"uid-low{i}"
        s.add_pod(low)
    s.add_pod(pod("high", cpu="4", priority=100))
    out = only(s)
    assert out.nominated_node == "n1"
    assert [p.victim for p in s.preempted] == ["default/low1"]
    ((verb, body),) = ext.calls
    assert verb == "scheduler/preempt" and sorted(body["nodeToVictims"]) == ["n0", "n1"]
    assert body["nodeToVictims"]["n0"]["numPDBViolations"] == 0


def test_a_preempt_answer_naming_a_pod_not_on_the_node_is_an_error(serve: Any) -> None:
    ext = serve(lambda verb, body: (200, {"nodeNameToMetaVictims": {"n0": {"pods": [{"uid": "nobody"}]}}}))
    s = scheduler({"urlPrefix": ext.url, "preemptVerb": "preempt"}, nodes=1)
    s.add_pod(pod("low", cpu="4", node_name="n0", priority=0))
    s.add_pod(pod("high", cpu="4", priority=100))
    out = only(s)
    # As upstream: a PostFilter error is logged into the FitError; the pod stays unschedulable, nobody is evicted.
    assert out.result is Result.UNSCHEDULABLE
    assert out.message == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: "
        f"extender {ext.url} claims to preempt pod (UID: nobody) on node n0, but the pod is not found on that node"
    )
    assert s.preempted == []
