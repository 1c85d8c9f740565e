"""Writes: create and update (with status and the pod spec subresources), through strategy and the admission
chain, and pod binding. Patches, deletes and scale build on this (:mod:`.patching`, :mod:`.delete`, :mod:`.scale`).

Order of one write, under the store's writer lock (as kube-apiserver's handler and storage)::

    create: generateName -> strategy.default_for_create -> admission.admit (mutating) -> AlreadyExists
            -> uid, timestamps -> strategy.prepare_create -> strategy.validate -> admission.validate -> store
    update: resourceVersion check -> subresource merge -> metadata carried over -> strategy.prepare_update
            -> admission.admit -> generation -> strategy.validate -> admission.validate -> managedFields -> store
"""

from __future__ import annotations

import copy

from berth.cluster import crds, objmeta, reviews, validation
from berth.cluster import errors as E
from berth.cluster.admission import CREATE, UPDATE, Attributes
from berth.cluster.api import fields, pod_subresources, strategy
from berth.cluster.api.base import DEFAULT_USER, ns_finalizers
from berth.cluster.api.read import Reader
from berth.cluster.resources import ResourceType
from berth.kube import naming
from berth.kube.objects import Obj


def spec_and_rest(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def strip_volatile(obj: Obj) -> Obj:
    """The object without fields that change on every write (for no-op detection)."""
    out = dict(obj)
    m = dict(out.get("metadata") or {})
    m.pop("resourceVersion", None)
    m.pop("managedFields", None)
    out["metadata"] = m
    return out


class Writer(Reader):
    """create, update, and the commit every update-like write ends in."""

    def _check_kind(self, rt: ResourceType, obj: Obj, version: str | None) -> None:
        kind = obj.get("kind")
        api_version = obj.get("apiVersion")
        if kind == rt.kind and api_version == rt.api_version and not rt.custom:
            return  # the usual body: already what is stored (the preferred version is always served)
        if kind and kind != rt.kind:
            raise E.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({rt.api_version_for(version or rt.version)})"
                if api_version and api_version not in [rt.api_version_for(v) for v in rt.all_versions]
                else f"Kind {kind} does not match expected kind {rt.kind}"
            )
        if api_version and api_version not in [rt.api_version_for(v) for v in rt.all_versions]:
            raise E.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({rt.api_version_for(version or rt.version)})"
            )
        obj["kind"] = rt.kind
        if rt.custom:  # validated at the version it was sent at, then stored at the storage version
            sent = version or (str(api_version).rpartition("/")[2] if api_version else "") or rt.version
            obj["apiVersion"] = rt.api_version_for(sent if sent in rt.all_versions else rt.version)
        else:
            obj["apiVersion"] = rt.api_version  # stored at the preferred version

    def _scope(self, rt: ResourceType, obj: Obj, namespace: str | None) -> str:
        meta = objmeta.meta_of(obj)
        body_ns = meta.get("namespace")
        if rt.namespaced:
            if namespace and body_ns and body_ns != namespace:
                raise E.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            ns = str(namespace or body_ns or "")
            if not ns:
                raise E.bad_request(f"a namespace is required for {rt.resource}")
            meta["namespace"] = ns
            return ns
        meta.pop("namespace", None)
        return ""

    def _manager(self, manager: str | None, user: str) -> str:
        return manager or "berth"

    def _managed_update(
        self, rt: ResourceType, old: Obj | None, new: Obj, manager: str, subresource: str, now: str = ""
    ) -> None:
        """Record the write in ``new``'s managedFields, stamped ``now`` (default: the clock's time now)."""
        fields.track_update(self, rt, old, new, manager, subresource, now or self.now_text())

    def _generate_name(self, resource: str, namespace: str, prefix: str) -> str:
        """``generateName``: the prefix and a random suffix not taken yet (upstream retries the create on a clash)."""
        while True:
            name = naming.generated_name(prefix)
            if self.store.get(resource, namespace, name) is None:
                return name

    def do_create(
        self,
        rt: ResourceType,
        obj: Obj,
        namespace: str | None,
        *,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        manager: str | None = None,
        version: str | None = None,
        apply_patch: Obj | None = None,
        field_validation: str = "",
        owned: bool = False,
    ) -> Obj:
        if not isinstance(obj, dict):
            raise E.bad_request("the request body must be a JSON object")
        res = rt.resource  # a property that formats the key: read once
        if rt.virtual:
            return reviews.review(self, rt, objmeta.copy_obj(obj), namespace, user)
        if "create" not in rt.verbs:
            raise E.method_not_allowed("create", rt.resource)
        if not owned:
            obj = objmeta.copy_obj(obj)
        self._check_kind(rt, obj, version)
        strategy.decode_check(rt, obj, field_validation)
        strategy.drop_nulls(rt, obj)
        ns = self._scope(rt, obj, namespace)
        meta = objmeta.meta_of(obj)
        if meta.get("resourceVersion"):
            raise E.internal("resourceVersion should not be set on objects to be created")
        with self.store.locked():
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = self._generate_name(res, ns, str(meta["generateName"]))
            name = str(meta.get("name") or "")
            strategy.default_for_create(rt, obj)
            attrs = Attributes(CREATE, rt, obj, None, ns, user)
            self.admission.admit(self, attrs)
            if name and self.store.get(res, ns, name) is not None:
                raise E.already_exists(rt.plural, rt.group, name)
            # One timestamp for creationTimestamp and the managedFields entry (both have second precision).
            now = self.now_text()
            for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
                meta.pop(k, None)
            meta["uid"] = objmeta.new_uid()
            meta["creationTimestamp"] = now
            if rt.generation:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            if not meta.get("finalizers"):
                meta.pop("finalizers", None)
            strategy.prepare_create(self, rt, obj, user, field_validation)
            strategy.validate(rt, obj, None)
            self.admission.validate(self, attrs)
            meta.pop("managedFields", None)
            if apply_patch is not None:
                meta["managedFields"] = fields.apply_fields_for_create(
                    self, rt, obj, apply_patch, manager or ""
                )
            else:
                self._managed_update(rt, None, obj, self._manager(manager, user), "", now)
            if dry_run:
                return self.present(rt, obj, version)
            self.store.put(res, ns, name, obj, "ADDED")
            if res == "customresourcedefinitions.apiextensions.k8s.io":
                obj = crds.established(self, obj)
        return self.present(rt, obj, version)

    def do_update(
        self,
        rt: ResourceType,
        obj: Obj,
        namespace: str | None,
        *,
        subresource: str | None = None,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        manager: str | None = None,
        version: str | None = None,
        name: str | None = None,
        field_validation: str = "",
    ) -> Obj:
        if not isinstance(obj, dict):
            raise E.bad_request("the request body must be a JSON object")
        if "update" not in rt.verbs:
            raise E.method_not_allowed("update", rt.resource)
        obj = objmeta.copy_obj(obj)
        self._check_kind(rt, obj, version)
        strategy.decode_check(rt, obj, field_validation)
        strategy.drop_nulls(rt, obj)
        ns = self._scope(rt, obj, namespace)
        meta = objmeta.meta_of(obj)
        obj_name = str(meta.get("name") or "")
        if name is not None and obj_name and obj_name != name:
            raise E.bad_request(
                f"the name of the object ({obj_name}) does not match the name on the URL ({name})"
            )
        if not obj_name:
            obj_name = name or ""
            meta["name"] = obj_name
        if not obj_name:
            raise E.invalid(
                rt.kind, "", [E.required("metadata.name", "name or generateName is required")], rt.group
            )
        with self.store.locked():
            entry = self.store.get(rt.resource, ns, obj_name)
            if entry is None:
                raise E.not_found(rt.plural, rt.group, obj_name)
            cur = objmeta.loads(entry[1])
            want_rv = str(meta.get("resourceVersion") or "")
            if want_rv and want_rv != str(entry[0]):
                raise E.conflict(rt.plural, rt.group, obj_name)
            new = self._merge_subresource(rt, cur, obj, subresource, version)
            return self._commit_update(
                rt,
                cur,
                new,
                user=user,
                dry_run=dry_run,
                manager=manager,
                subresource=subresource,
                version=version,
                field_validation=field_validation,
            )

    def _merge_subresource(
        self, rt: ResourceType, cur: Obj, new: Obj, subresource: str | None, version: str | None = None
    ) -> Obj:
        subresources = rt.subresources_at(version)
        if subresource in (None, ""):
            if "status" in subresources and rt.resource != "namespaces":
                if "status" in cur:
                    new["status"] = copy.deepcopy(cur["status"])
                else:
                    new.pop("status", None)
            elif rt.resource == "namespaces":
                new["status"] = copy.deepcopy(cur.get("status") or {})
                if "spec" in cur:
                    new["spec"] = copy.deepcopy(cur["spec"])
            return new
        if subresource == "status":
            if "status" not in subresources:
                raise E.path_not_found()
            out = objmeta.copy_obj(cur)
            if "status" in new:
                out["status"] = new["status"]
            else:
                out.pop("status", None)
            # Status writers may also touch labels/annotations? upstream keeps metadata except rv checks.
            return out
        if subresource == "finalize" and rt.resource == "namespaces":
            out = objmeta.copy_obj(cur)
            out.setdefault("spec", {})["finalizers"] = list((new.get("spec") or {}).get("finalizers") or [])
            return out
        if subresource == "approval" and subresource in rt.subresources:
            # certificates/approval: the approver writes conditions only (Approved, Denied), never the certificate
            out = objmeta.copy_obj(cur)
            out.setdefault("status", {})["conditions"] = list(
                (new.get("status") or {}).get("conditions") or []
            )
            return out
        if subresource == "ephemeralcontainers" and subresource in rt.subresources:
            return pod_subresources.with_ephemeral_containers(cur, new)
        if subresource == "resize" and subresource in rt.subresources:
            return pod_subresources.with_resized_containers(cur, new)
        raise E.path_not_found()

    def _commit_update(
        self,
        rt: ResourceType,
        cur: Obj,
        new: Obj,
        *,
        user: str,
        dry_run: bool,
        manager: str | None,
        subresource: str | None,
        version: str | None = None,
        track: bool = True,
        field_validation: str = "",
    ) -> Obj:
        cm, nm = objmeta.meta_of(cur), objmeta.meta_of(new)
        for k in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "namespace",
            "name",
        ):
            if k in cm:
                nm[k] = cm[k]
            else:
                nm.pop(k, None)
        if "generateName" in cm and "generateName" not in nm:
            nm["generateName"] = cm["generateName"]
        if "managedFields" not in nm and "managedFields" in cm:
            nm["managedFields"] = copy.deepcopy(cm["managedFields"])
        if not nm.get("finalizers"):
            nm.pop("finalizers", None)
        nm.pop("selfLink", None)
        new["kind"] = rt.kind
        if rt.custom:  # validated at the version it was sent at (strategy stores it at the storage version)
            sent = version or str(new.get("apiVersion") or "").rpartition("/")[2]
            new["apiVersion"] = rt.api_version_for(sent if sent in rt.all_versions else rt.version)
        else:
            new["apiVersion"] = rt.api_version
        if cm.get("deletionTimestamp"):
            added = set(nm.get("finalizers") or []) - set(cm.get("finalizers") or [])
            if added:
                raise E.invalid(
                    rt.kind,
                    str(cm.get("name")),
                    [
                        E.forbidden_field(
                            "metadata.finalizers",
                            "no new finalizers can be added if the object is being deleted",
                        )
                    ],
                    rt.group,
                )
        strategy.prepare_update(self, rt, cur, new, subresource, field_validation)
        ns = str(cm.get("namespace") or "")
        attrs = Attributes(UPDATE, rt, new, cur, ns, user, subresource or "")
        self.admission.admit(self, attrs)
        if subresource == "resize" and rt.resource == "pods":
            validation.raise_if_invalid(new, validation.validate_pod_resize(cur, new))
        if rt.generation:
            gen = int(cm.get("generation") or 1)
            if spec_and_rest(new) != spec_and_rest(cur):
                gen += 1
            nm["generation"] = gen
        else:
            nm.pop("generation", None)
        if subresource != "binding":  # upstream's binding storage sets the node without re-validating the pod
            strategy.validate(rt, new, cur)
        self.admission.validate(self, attrs)  # under the store lock, as creates
        if track:
            self._managed_update(rt, cur, new, self._manager(manager, user), subresource or "")
        if strip_volatile(new) == strip_volatile(cur) and nm.get("managedFields") == cm.get("managedFields"):
            return self.present(rt, cur, version)
        # Past this point, even a change to managedFields alone (a no-op apply by a new manager) is a write, as upstream.
        name = str(nm.get("name"))
        if dry_run:
            nm["resourceVersion"] = cm.get("resourceVersion")
            return self.present(rt, new, version)
        if nm.get("deletionTimestamp") and not nm.get("finalizers") and not ns_finalizers(rt, new):
            self.store.remove(rt.resource, ns, name, new)
            if rt.resource == "customresourcedefinitions.apiextensions.k8s.io":
                crds.removed(self, new)
            return self.present(rt, new, version)
        self.store.put(rt.resource, ns, name, new, "MODIFIED")
        if rt.resource == "customresourcedefinitions.apiextensions.k8s.io":
            new = crds.established(self, new)
        return self.present(rt, new, version)

    def bind(self, namespace: str, pod_name: str, binding: Obj, user: str, dry_run: bool = False) -> None:
        """Bind a pod to a node: set ``spec.nodeName`` and condition ``PodScheduled=True``; 409 if already bound."""
        target = binding.get("target") or {}
        node = str(target.get("name") or "")
        if not node:
            raise E.invalid("Binding", pod_name, [E.required("target.name", "")])
        rt = self.resource_type("pods")
        with self.store.locked():
            entry = self.store.get(rt.resource, self._ns_key(rt, namespace), pod_name)
            if entry is None:
                raise E.not_found(rt.plural, rt.group, pod_name)
            pod = objmeta.loads(entry[1])
            spec = pod.setdefault("spec", {})
            if spec.get("nodeName"):
                raise E.conflict(
                    "pods", "", pod_name, f'pod {pod_name} is already assigned to node "{spec["nodeName"]}"'
                )
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                raise E.conflict(
                    "pods", "", pod_name, f"pod {pod_name} is being deleted, cannot be assigned to a host"
                )
            new = objmeta.loads(entry[1])  # a second decode of the stored text: cheaper than any copy
            new["spec"]["nodeName"] = node
            status = new.setdefault("status", {})
            conds = [c for c in (status.get("conditions") or []) if c.get("type") != "PodScheduled"]
            conds.append(
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": self.now_text(),
                }
            )
            status["conditions"] = conds
            ann = (binding.get("metadata") or {}).get("annotations")
            if ann:
                new["metadata"].setdefault("annotations", {}).update(ann)
            if dry_run:
                return
            self._commit_update(
                rt, pod, new, user=user, dry_run=False, manager=None, subresource="binding", track=False
            )
