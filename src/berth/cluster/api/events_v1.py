"""``events.k8s.io/v1`` Events served as a view of core ``v1`` Events (one storage, two shapes; the conversion is
:mod:`berth.cluster.eventsv1`): every verb on the v1 resource converts and goes on to the core one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.cluster import errors as E
from berth.cluster import eventsv1, objmeta
from berth.cluster.api import fields
from berth.cluster.api.base import DEFAULT_USER
from berth.cluster.api.delete import Deleter
from berth.cluster.api.read import ListResult
from berth.cluster.api.scale import Scaler
from berth.cluster.api.watch import Watch, Watcher
from berth.cluster.errors import ApiError
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj

V1 = eventsv1.RESOURCE


class EventsV1(Scaler, Deleter, Watcher):
    """Every verb, with the events.k8s.io view in front."""

    def do_get(self, rt: ResourceType, name: str, namespace: str | None, version: str | None = None) -> Obj:
        if rt.resource == V1:
            return eventsv1.from_core(super().do_get(self._core_events, name, namespace))
        return super().do_get(rt, name, namespace, version)

    def do_list(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: str = "",
        field_selector: str = "",
        *,
        limit: int = 0,
        continue_token: str = "",
        version: str | None = None,
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> ListResult:
        if rt.resource == V1:
            res = super().do_list(
                self._core_events,
                namespace,
                label_selector,
                eventsv1.field_selector_to_core(field_selector),
                limit=limit,
                continue_token=continue_token,
                resource_version=resource_version,
                resource_version_match=resource_version_match,
            )
            converted = [eventsv1.from_core(i) for i in res.items]
            return ListResult(converted, res.resource_version, res.continue_token, res.remaining)
        return super().do_list(
            rt,
            namespace,
            label_selector,
            field_selector,
            limit=limit,
            continue_token=continue_token,
            version=version,
            resource_version=resource_version,
            resource_version_match=resource_version_match,
        )

    def do_watch(
        self,
        rt: ResourceType,
        namespace: str | None,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        *,
        send_initial_events: bool | None = None,
        version: str | None = None,
        transform: Callable[[Obj], Obj] | None = None,
        shown: ResourceType | None = None,
    ) -> Watch:
        if rt.resource == V1:
            return super().do_watch(
                self._core_events,
                namespace,
                resource_version,
                label_selector,
                eventsv1.field_selector_to_core(field_selector),
                send_initial_events=send_initial_events,
                transform=eventsv1.from_core,
                shown=rt,
            )
        return super().do_watch(
            rt,
            namespace,
            resource_version,
            label_selector,
            field_selector,
            send_initial_events=send_initial_events,
            version=version,
            transform=transform,
            shown=shown,
        )

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
        if rt.resource == V1 and isinstance(obj, dict):
            out = super().do_create(
                self._core_events,
                eventsv1.to_core(obj),
                namespace,
                user=user,
                dry_run=dry_run,
                manager=manager,
                owned=True,
            )
            return eventsv1.from_core(out)
        return super().do_create(
            rt,
            obj,
            namespace,
            user=user,
            dry_run=dry_run,
            manager=manager,
            version=version,
            apply_patch=apply_patch,
            field_validation=field_validation,
            owned=owned,
        )

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
        if rt.resource == V1 and isinstance(obj, dict):
            out = super().do_update(
                self._core_events,
                eventsv1.to_core(obj),
                namespace,
                subresource=subresource,
                user=user,
                dry_run=dry_run,
                manager=manager,
                name=name,
            )
            return eventsv1.from_core(out)
        return super().do_update(
            rt,
            obj,
            namespace,
            subresource=subresource,
            user=user,
            dry_run=dry_run,
            manager=manager,
            version=version,
            name=name,
            field_validation=field_validation,
        )

    def do_patch(
        self,
        rt: ResourceType,
        name: str,
        patch: Any,
        patch_type: str,
        namespace: str | None,
        *,
        subresource: str | None = None,
        manager: str | None = None,
        force: bool = False,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        version: str | None = None,
        field_validation: str = "",
    ) -> tuple[Obj, bool]:
        if rt.resource == V1:
            return self._patch_events_v1(
                rt,
                name,
                patch,
                patch_type,
                namespace,
                manager=manager,
                force=force,
                user=user,
                dry_run=dry_run,
            )
        return super().do_patch(
            rt,
            name,
            patch,
            patch_type,
            namespace,
            subresource=subresource,
            manager=manager,
            force=force,
            user=user,
            dry_run=dry_run,
            version=version,
            field_validation=field_validation,
        )

    def _patch_events_v1(
        self,
        rt: ResourceType,
        name: str,
        patch: Any,
        patch_type: str,
        namespace: str | None,
        *,
        manager: str | None,
        force: bool,
        user: str,
        dry_run: bool,
    ) -> tuple[Obj, bool]:
        """Patch an ``events.k8s.io/v1`` Event: patch its v1 shape, store the core shape."""
        with self.store.locked():
            try:
                cur = self.do_get(rt, name, namespace)
            except ApiError as exc:
                if exc.code != 404 or patch_type != "apply" or not isinstance(patch, dict):
                    raise
                body = objmeta.copy_obj(patch)
                body.setdefault("metadata", {})["name"] = name
                return self.do_create(rt, body, namespace, user=user, dry_run=dry_run, manager=manager), True
            new = fields.patch_object(self, rt, cur, patch, patch_type, manager, force)
            if not isinstance(new, dict):
                raise E.bad_request("the patch did not produce an object")
            return self.do_update(
                rt, new, namespace, user=user, dry_run=dry_run, manager=manager, name=name
            ), False

    def do_delete(
        self,
        rt: ResourceType,
        name: str,
        namespace: str | None,
        *,
        propagation: str | None = None,
        dry_run: bool = False,
        preconditions: dict[str, Any] | None = None,
        version: str | None = None,
    ) -> Obj:
        if rt.resource == V1:
            return eventsv1.from_core(
                super().do_delete(
                    self._core_events,
                    name,
                    namespace,
                    propagation=propagation,
                    dry_run=dry_run,
                    preconditions=preconditions,
                )
            )
        return super().do_delete(
            rt,
            name,
            namespace,
            propagation=propagation,
            dry_run=dry_run,
            preconditions=preconditions,
            version=version,
        )
