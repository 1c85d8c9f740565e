"""The decoded-document cache of ``kube/yamlio.py``: a large text decodes from the cache exactly as it decodes
without it (the corpus that kubectl checks, types and all), is decoded once per decoder, and errors are never
cached."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from berth.kube import yamlio
from berth.kube.errors import InputError

CORPUS = Path(__file__).parent / "yaml_corpus"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BERTH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / yamlio.CACHE_FOLDER


def _exact(value: Any) -> Any:
    """``value`` with every scalar's type spelled out: ``True == 1`` and ``1 == 1.0`` must not pass."""
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}, list(value)
    if isinstance(value, list):
        return [_exact(v) for v in value]
    return type(value).__name__, repr(value)


def _decoded(docs: list[yamlio.Document]) -> list[Any]:
    return [(d.index, d.line, _exact(d.body), d.duplicates) for d in docs]


class Decodes:
    """Counts the texts decoded (not read from the cache)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = yamlio.iter_documents

        def counting(text: str, source: str = "<input>", strict: bool = False) -> Any:
            self.count += 1
            return real(text, source, strict)

        monkeypatch.setattr(yamlio, "iter_documents", counting)


def _big(n: int = 400) -> str:
    """A large text with the scalars Kubernetes reads differently from PyYAML, an anchor and a merge."""
    items = "".join(
        f"  - {{name: item-{i}, on: y, a: y, b: 1e3, octal: 0o17, time: 2001-12-14, eq: =, nul: ~, f: 1.50,"
        f" big: 12345678901234567890, q: '0x1F', hex: 0x1F}}\n"
        for i in range(n)
    )
    return f"base: &b {{k: v, num: 1}}\nmerged:\n  <<: *b\n  num: 2\nitems:\n{items}---\nsecond: [a, b]\n"


def test_a_large_text_is_decoded_once_then_read_back_the_same(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _big()
    assert len(text) >= yamlio.CACHE_MIN_CHARS
    plain = list(yamlio.iter_documents(text, "big.yaml"))
    decodes = Decodes(monkeypatch)
    first = yamlio.load_documents(text, "big.yaml")
    again = yamlio.load_documents(text, "other.yaml")
    assert decodes.count == 1 and len(list(cache.glob("*.json"))) == 1
    assert _decoded(first) == _decoded(again) == _decoded(plain)
    item = again[0].body["items"][0]
    assert item["a"] is True and item["b"] == 1000 and item["true"] is True  # `on` is a boolean key
    assert item["big"] == pytest.approx(1.2345678901234567e19) and type(item["big"]) is float
    # each call gets its own objects: a caller changing one never changes another's
    again[0].body["merged"]["num"] = 99
    assert yamlio.load_documents(text)[0].body["merged"]["num"] == 2


def test_objects_come_from_the_cache_too(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}}}\ndata: {{a: 'on', b: on}}\n"
        for i in range(400)
    )
    plain = yamlio.load_objects(text, "cms.yaml")
    decodes = Decodes(monkeypatch)
    assert [b for _, b in yamlio.load_objects(text, "cms.yaml")] == [b for _, b in plain]
    assert [b for _, b in yamlio.load_objects(text, "cms.yaml")] == [b for _, b in plain]
    assert decodes.count == 0  # the first call above (before counting) stored it
    assert plain[0][1]["data"] == {"a": "on", "b": True}


def _every_text_cached(path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A corpus file's text, with the cache taking texts of any length."""
    monkeypatch.setattr(yamlio, "CACHE_MIN_CHARS", 0)
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", sorted((CORPUS / "accepted").iterdir()), ids=lambda p: p.name)
def test_the_corpus_decodes_the_same_through_the_cache(
    path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _every_text_cached(path, monkeypatch)
    plain = list(yamlio.iter_documents(text, str(path)))
    stored = yamlio.load_documents(text, str(path))
    read_back = yamlio.load_documents(text, str(path))
    assert _decoded(read_back) == _decoded(stored) == _decoded(plain)


@pytest.mark.parametrize("path", sorted((CORPUS / "refused").iterdir()), ids=lambda p: p.name)
def test_refused_texts_are_refused_every_time_and_never_cached(
    path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _every_text_cached(path, monkeypatch)
    with pytest.raises(InputError) as plain:
        list(yamlio.iter_documents(text, str(path)))
    for _ in range(2):
        with pytest.raises(InputError) as cached:
            yamlio.load_documents(text, str(path))
        assert str(cached.value) == str(plain.value)
    assert not list(cache.glob("*.json")) if cache.exists() else True


def test_another_decoder_does_not_read_this_ones_entries(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _big()
    yamlio.load_documents(text)
    decodes = Decodes(monkeypatch)
    monkeypatch.setattr(yamlio, "_decoder_id", lambda: "a changed decoder")
    yamlio.load_documents(text)
    assert decodes.count == 1 and len(list(cache.glob("*.json"))) == 2


def test_a_broken_entry_is_a_miss_and_is_replaced(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _big()
    expected = _decoded(yamlio.load_documents(text))
    (entry,) = cache.glob("*.json")
    for broken in ["{not json", json.dumps({"a": 1}), json.dumps([[0, 1]])]:
        entry.write_text(broken, encoding="utf-8")
        assert _decoded(yamlio.load_documents(text)) == expected
        assert _decoded(yamlio.load_documents(text)) == expected


def test_the_cache_keeps_its_newest_entries_within_its_size(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [_big(200).replace("item-", f"v{n}-") for n in range(4)]
    yamlio.load_documents(texts[0])
    (first,) = cache.glob("*.json")
    os.utime(first, ns=(1, 1))  # the oldest, whatever the file system's timestamp resolution
    monkeypatch.setattr(yamlio, "CACHE_MAX_BYTES", first.stat().st_size * 2 + 100)
    for text in texts[1:]:
        yamlio.load_documents(text)
    assert len(list(cache.glob("*.json"))) == 2 and not first.exists()


def test_small_texts_and_an_unwritable_cache_decode_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("BERTH_CACHE_DIR", str(blocker / "cache"))
    text = _big()
    assert _decoded(yamlio.load_documents(text)) == _decoded(list(yamlio.iter_documents(text)))
    decodes = Decodes(monkeypatch)
    yamlio.load_documents("a: 1\n")
    yamlio.load_documents(text)
    assert decodes.count == 2
