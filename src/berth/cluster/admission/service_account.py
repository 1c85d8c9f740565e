"""ServiceAccount: a pod's service account is filled in and must exist."""

from __future__ import annotations

from berth.cluster import errors as E
from berth.cluster import objmeta
from berth.cluster.admission.chain import CREATE, Attributes
from berth.cluster.host import ApiHost


class ServiceAccount:
    """The plugin's lookup: a pod naming a service account that does not exist is refused (a chart whose hook Job
    uses an account the release creates later fails here as on a real cluster). The namespace's ``default``
    account is not checked: the namespace controller creates it just after the namespace, and upstream's race there
    helps nobody. Pods do not get the projected ``kube-api-access-*`` token volume upstream mounts: nothing runs to
    read it, and at ~10 KB of decoded structure per pod per cache it cost 117 MiB with 10,000 pods."""

    name = "ServiceAccount"

    def admit(self, api: ApiHost, attrs: Attributes) -> None:
        if attrs.operation != CREATE or attrs.resource != "pods":
            return
        obj = attrs.obj
        spec = obj.setdefault("spec", {})
        sa = str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
        spec["serviceAccountName"] = spec["serviceAccount"] = sa
        ns = str(objmeta.meta_of(obj).get("namespace") or "")
        if sa != "default" and api.store.get("serviceaccounts", ns, sa) is None:
            raise E.forbidden(
                "pods",
                "",
                str(objmeta.meta_of(obj).get("name") or ""),
                f'error looking up service account {ns}/{sa}: serviceaccount "{sa}" not found',
            )
