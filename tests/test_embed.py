"""Fast tests of memlab.embed: normalisation, the hashing embedder, identity keys, selection."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize as sk_normalize

import memlab.embed as E
from memlab.embed import (
    EmbeddingError,
    FallbackEmbedder,
    HashingEmbedder,
    OnnxEmbedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    normalize_vectors,
    resolve_embedder,
)
from memlab.embed.hashing import char_stream, char_wb_ngrams
from memlab.embed.http import is_secret_header, retry_delay

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hasher() -> HashingEmbedder:
    return HashingEmbedder()


# -- normalize_vectors ---------------------------------------------------------------------

any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)
arrays_1d_2d = st.one_of(
    hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=1, max_dims=1, max_side=12), elements=any_float
    ),
    hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=8), elements=any_float
    ),
)


@settings(max_examples=200, deadline=None)
@given(arrays_1d_2d)
def test_normalize_vectors_properties(x: np.ndarray) -> None:
    out = normalize_vectors(x)
    assert out.dtype == np.float32
    assert out.shape == x.shape
    assert np.isfinite(out).all()
    # Non-finite inputs become exactly zero.
    assert (out[~np.isfinite(x)] == 0).all()
    clean = np.where(np.isfinite(x), x, 0.0).reshape(-1, x.shape[-1])
    rows = out.reshape(-1, x.shape[-1])
    for src, row in zip(clean, rows, strict=True):
        norm = float(np.linalg.norm(row.astype(np.float64)))
        if not src.any():
            assert not row.any(), "an all-zero row must stay all-zero"
        else:
            assert abs(norm - 1.0) < 1e-5
            # Same direction as the sanitised input (scaled to avoid overflow in the check).
            ref = src / np.abs(src).max()
            cos = float(row.astype(np.float64) @ ref) / float(np.linalg.norm(ref))
            assert cos > 1 - 1e-5


@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, max_side=10),
        # sklearn's plain sum of squares underflows below ~1e-154; stay where it is exact.
        elements=st.one_of(st.just(0.0), st.floats(1e-3, 1e6), st.floats(-1e6, -1e-3)),
    )
)
def test_normalize_vectors_matches_sklearn_and_is_idempotent(x: np.ndarray) -> None:
    out = normalize_vectors(x)
    np.testing.assert_allclose(out, sk_normalize(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(normalize_vectors(out), out, rtol=1e-6, atol=1e-7)


def test_normalize_vectors_exact_cases() -> None:
    out = normalize_vectors(np.array([[3.0, np.nan, 4.0], [np.inf, -np.inf, np.nan], [0, 0, 0]]))
    np.testing.assert_allclose(out[0], [0.6, 0.0, 0.8], rtol=1e-6)
    assert not out[1].any() and not out[2].any()
    # Huge and tiny finite values do not overflow/underflow the norm.
    np.testing.assert_allclose(normalize_vectors([1e300, 1e300]), [2**-0.5, 2**-0.5], rtol=1e-6)
    np.testing.assert_allclose(normalize_vectors([0.0, 5e-324]), [0.0, 1.0])
    assert normalize_vectors(np.zeros((0, 4))).shape == (0, 4)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        normalize_vectors(np.zeros((2, 2, 2)))


# -- HashingEmbedder -----------------------------------------------------------------------

TEXTS = [
    "The quick brown fox jumps over the lazy dog",
    "A quick brown fox jumped over a lazy dog",
    "Quarterly tax filing deadline is April 15",
    "Alice prefers green tea in the morning",
    "",
    "   \n\t ",
    "naïve café — 你好世界 😀",
]


def test_hashing_shape_dtype_norms(hasher: HashingEmbedder) -> None:
    v = hasher.embed_documents(TEXTS)
    assert v.shape == (len(TEXTS), 384) and v.dtype == np.float32
    norms = np.linalg.norm(v, axis=1)
    np.testing.assert_allclose(norms[[0, 1, 2, 3, 6]], 1.0, atol=1e-5)
    assert not v[4].any() and not v[5].any(), "blank texts embed to the zero vector"
    assert hasher.embed_documents([]).shape == (0, 384)
    assert HashingEmbedder(17).embed_documents(["x y"]).shape == (1, 17)
    assert hasher.dimensions == 384 and hasher.model == "hashing-384"
    assert hasher.provider == "hashing" and hasher.count_truncated(["a" * 100_000]) == 0


def test_hashing_similar_texts_closer(hasher: HashingEmbedder) -> None:
    fox1, fox2, tax, tea = hasher.embed_documents(TEXTS[:4])
    assert fox1 @ fox2 > 0.5
    assert fox1 @ fox2 > max(fox1 @ tax, fox1 @ tea, fox2 @ tax) + 0.3
    # Case and whitespace do not matter (lower-cased, whitespace-split).
    a, b = hasher.embed_documents(["Alice  PREFERS green tea", "alice prefers\ngreen tea"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_hashing_query_is_trimmed(hasher: HashingEmbedder) -> None:
    q = hasher.embed_query("  green tea \n")
    np.testing.assert_array_equal(q, hasher.embed_documents(["green tea"])[0])
    assert q.shape == (384,)
    assert not hasher.embed_query("  \n ").any()


def test_hashing_batch_invariant(hasher: HashingEmbedder) -> None:
    texts = [f"note {i}: met person {i % 37} about project {i % 11}" for i in range(2000)]
    batch = hasher.embed_documents(texts)
    assert batch.shape == (2000, 384)
    for i in (0, 17, 1999):
        np.testing.assert_allclose(batch[i], hasher.embed_documents([texts[i]])[0], atol=1e-6)
    assert len({row.tobytes() for row in batch}) > 1900


def test_hashing_params_change_vectors() -> None:
    text = ["memory search with hybrid fusion"]
    base = HashingEmbedder(64).embed_documents(text)[0]
    for other in (
        HashingEmbedder(64, seed=1),
        HashingEmbedder(64, ngram_range=(1, 1)),
        HashingEmbedder(64, char_ngrams=None),
        HashingEmbedder(64, char_ngrams=(2, 4)),
    ):
        assert not np.allclose(base, other.embed_documents(text)[0])
    np.testing.assert_array_equal(base, HashingEmbedder(64).embed_documents(text)[0])


@pytest.mark.slow
def test_hashing_identical_in_fresh_process(tmp_path: Path, hasher: HashingEmbedder) -> None:
    out = tmp_path / "v.npy"
    code = textwrap.dedent(
        f"""
        import numpy as np
        from memlab.embed import HashingEmbedder
        np.save({str(out)!r}, HashingEmbedder().embed_documents({TEXTS!r}))
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=120)
    np.testing.assert_array_equal(np.load(out), hasher.embed_documents(TEXTS))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dimensions": 0}, "dimensions must be a positive integer"),
        ({"dimensions": 3.5}, "dimensions must be a positive integer"),
        ({"ngram_range": (2, 1)}, "ngram_range must satisfy"),
        ({"char_ngrams": (0, 3)}, "char_ngrams must satisfy"),
        ({"char_ngrams": "abc"}, "char_ngrams must be a pair"),
        ({"seed": -1}, "seed must be an integer"),
    ],
)
def test_hashing_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HashingEmbedder(**kwargs)


def test_hashing_rejects_bare_string(hasher: HashingEmbedder) -> None:
    with pytest.raises(TypeError, match="sequence of strings"):
        hasher.embed_documents("one text")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        hasher.embed_documents(["a", 3])  # type: ignore[list-item]


word_text = st.text(alphabet=st.sampled_from([*"abcXYZé你😀 \t\n", "\u00a0", "İ"]), max_size=40)


@settings(max_examples=150, deadline=None)
@given(st.lists(word_text, min_size=1, max_size=4), st.integers(1, 5), st.integers(0, 3))
def test_char_wb_ngrams_match_sklearn(texts: list[str], lo: int, extra: int) -> None:
    """Differential: the vectorised n-grams are scikit-learn's char_wb multiset, per text."""
    hi = lo + extra
    codes, offsets = char_stream(texts)
    stream = codes.tobytes().decode("utf-32-le")
    starts, lengths, _ = char_wb_ngrams(codes, lo, hi)
    rows = np.searchsorted(offsets, starts, side="right") - 1
    analyzer = HashingVectorizer(analyzer="char_wb", ngram_range=(lo, hi)).build_analyzer()
    for i, text in enumerate(texts):
        mine = Counter(
            stream[s : s + n] for s, n, r in zip(starts, lengths, rows, strict=True) if r == i
        )
        assert mine == Counter(analyzer(text)), text


def test_char_ngram_fingerprints_distinguish_ngrams() -> None:
    codes, _ = char_stream(["abcd abce", "dcba"])
    starts, lengths, fp = char_wb_ngrams(codes, 3, 5)
    stream = codes.tobytes().decode("utf-32-le")
    grams = [stream[s : s + n] for s, n in zip(starts, lengths, strict=True)]
    by_gram = {g: f for g, f in zip(grams, fp, strict=True)}
    assert len(set(by_gram.values())) == len(by_gram), "distinct n-grams, distinct fingerprints"


# -- identity keys -------------------------------------------------------------------------


def test_identity_keys() -> None:
    keys = {
        HashingEmbedder().identity_key,
        HashingEmbedder(128).identity_key,
        HashingEmbedder(seed=3).identity_key,
        HashingEmbedder(ngram_range=(1, 3)).identity_key,
        HashingEmbedder(char_ngrams=None).identity_key,
    }
    assert len(keys) == 5
    assert HashingEmbedder().identity_key == HashingEmbedder().identity_key
    key = HashingEmbedder().identity_key
    assert len(key) == 64 and int(key, 16) >= 0

    url = "http://127.0.0.1:9/v1"
    plain = OpenAIEmbedder(url).identity_key
    assert OpenAIEmbedder(url + "/", api_key="sk-1").identity_key == plain
    assert OpenAIEmbedder(url, api_key="sk-2", headers={"Authorization": "x"}).identity_key == (
        plain
    )
    assert OpenAIEmbedder(url, headers={"X-Api-Key": "k", "api-key": "k2"}).identity_key == plain
    assert OpenAIEmbedder(url, headers={"X-Org": "a"}).identity_key != plain
    assert OpenAIEmbedder(url, headers={"X-Org": "a"}).identity_key != (
        OpenAIEmbedder(url, headers={"X-Org": "b"}).identity_key
    )
    assert OpenAIEmbedder(url, model="other").identity_key != plain
    assert OpenAIEmbedder("http://127.0.0.1:10/v1").identity_key != plain
    assert "sk-secret" not in repr(OpenAIEmbedder(url, api_key="sk-secret"))


def test_secret_headers() -> None:
    for name in ("Authorization", "proxy-authorization", "X-API-Key", "api_key", "X-Auth-Token"):
        assert is_secret_header(name), name
    for name in ("X-Org", "Content-Type", "OpenAI-Organization", "User-Agent"):
        assert not is_secret_header(name), name


def test_retry_delay_formula() -> None:
    import random

    class Fixed(random.Random):
        def __init__(self, u: float) -> None:
            super().__init__()
            self.u = u

        def uniform(self, a: float, b: float) -> float:
            return self.u

    kw = {"base_delay": 0.5, "max_delay": 8.0, "jitter": 0.2}
    assert [retry_delay(k, rng=Fixed(0.0), **kw) for k in range(6)] == [
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        8.0,
    ]
    assert retry_delay(0, rng=Fixed(1.0), **kw) == pytest.approx(0.6)
    assert retry_delay(5, rng=Fixed(-1.0), **kw) == pytest.approx(6.4)


# -- local embedder construction (no model load) ------------------------------------------


def test_local_embedder_construction_is_lazy() -> None:
    code = textwrap.dedent(
        """
        import sys
        from memlab.embed import SentenceTransformerEmbedder, local_model_available
        assert local_model_available()
        e = SentenceTransformerEmbedder()
        assert (e.provider, e.model, e.dimensions) == ("local", "all-MiniLM-L6-v2", 384), e
        assert len(e.identity_key) == 64 and not e.loaded
        heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
        assert not heavy, heavy
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=120)


def test_local_embedder_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="existing folder"):
        SentenceTransformerEmbedder(tmp_path / "missing")
    with pytest.raises(ValueError, match="batch_size"):
        SentenceTransformerEmbedder(batch_size=0)
    named = SentenceTransformerEmbedder(tmp_path, model_name="custom")
    assert named.model == "custom"
    assert SentenceTransformerEmbedder(tmp_path).model == tmp_path.name
    assert SentenceTransformerEmbedder(tmp_path).identity_key != (
        SentenceTransformerEmbedder().identity_key
    )


# -- resolve_embedder / FallbackEmbedder ---------------------------------------------------


def test_resolve_choices(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert isinstance(resolve_embedder("hashing"), HashingEmbedder)
    assert resolve_embedder("Hashing", model="hashing-64").dimensions == 64
    assert resolve_embedder("none") is None
    local = resolve_embedder("local")
    # The default backend is onnx (memlab.config.vocab.DEFAULT_LOCAL_BACKEND); torch on request.
    assert isinstance(local, OnnxEmbedder) and not local.loaded
    torch_path = resolve_embedder("local", backend="torch")
    assert isinstance(torch_path, SentenceTransformerEmbedder) and not torch_path.loaded
    assert resolve_embedder("local", model=str(tmp_path)).model_path == tmp_path
    remote = {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "k", "headers": {"X-Org": "o"}}
    oa = resolve_embedder("openai", remote=remote)
    assert isinstance(oa, OpenAIEmbedder)
    assert (oa.base_url, oa.model, oa.headers) == (
        remote["baseUrl"],
        "text-embedding-3-small",
        {"X-Org": "o"},
    )
    assert resolve_embedder("openai", model="m", remote={"base_url": "https://x.test"}).model == "m"

    assert isinstance(resolve_embedder("auto"), OnnxEmbedder)
    # A remote model name under auto goes remote even though the local model exists.
    big = resolve_embedder("auto", model="text-embedding-3-large", remote=remote)
    assert isinstance(big, OpenAIEmbedder) and big.model == "text-embedding-3-large"
    with pytest.raises(ValueError, match="nothing is downloaded"):
        resolve_embedder("auto", model="text-embedding-3-large")
    assert resolve_embedder("auto", model=str(tmp_path)).model_path == tmp_path
    monkeypatch.setattr(E.select, "local_model_available", lambda: False)
    assert resolve_embedder("auto") is None
    assert resolve_embedder() is None
    assert isinstance(resolve_embedder("auto", remote=remote), OpenAIEmbedder)
    with pytest.raises(EmbeddingError, match="local"):
        resolve_embedder("local")
    assert isinstance(resolve_embedder("local", fallback="hashing"), HashingEmbedder)
    assert isinstance(resolve_embedder("auto", fallback="hashing"), HashingEmbedder)


def test_resolve_errors() -> None:
    with pytest.raises(ValueError, match="auto, local, hashing, openai, none"):
        resolve_embedder("gemini")
    with pytest.raises(ValueError, match="fallback must be one of"):
        resolve_embedder("hashing", fallback="nope")
    with pytest.raises(ValueError, match=r"remote\.baseUrl"):
        resolve_embedder("openai")
    with pytest.raises(ValueError, match=r"remote\.baseUrl"):
        resolve_embedder("openai", remote={"apiKey": "k"})
    with pytest.raises(ValueError, match="base_url must be an http"):
        resolve_embedder("openai", remote={"baseUrl": "ftp://x"})
    with pytest.raises(ValueError, match="nothing is downloaded"):
        resolve_embedder("local", model="sentence-transformers/all-mpnet-base-v2")
    with pytest.raises(ValueError, match="hashing-384"):
        resolve_embedder("hashing", model="big")


class _Failing:
    provider = "broken"
    model = "broken-1"
    dimensions = 8
    identity_key = "0" * 64

    def __init__(self) -> None:
        self.calls = 0

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        raise EmbeddingError("broken: HTTP 503 after 4 attempts")

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        return self.embed_documents([text])[0]

    def count_truncated(self, texts):  # type: ignore[no-untyped-def]
        return 0


def test_fallback_embedder_switches_for_good() -> None:
    primary, second = _Failing(), HashingEmbedder(32)
    fb = FallbackEmbedder(primary, second)
    assert (fb.provider, fb.model, fb.identity_key) == ("broken", "broken-1", "0" * 64)
    assert not fb.switched and fb.fallback_reason is None
    v = fb.embed_documents(["alpha beta", "gamma"])
    np.testing.assert_array_equal(v, second.embed_documents(["alpha beta", "gamma"]))
    assert fb.switched and "HTTP 503" in (fb.fallback_reason or "")
    assert (fb.provider, fb.dimensions, fb.identity_key) == ("hashing", 32, second.identity_key)
    fb.embed_query("alpha")
    assert primary.calls == 1, "the primary is not retried after the switch"
    assert isinstance(fb, E.Embedder)


def test_fallback_resolved_wraps_primary() -> None:
    fb = resolve_embedder("openai", remote={"baseUrl": "http://127.0.0.1:9/v1"}, fallback="hashing")
    assert isinstance(fb, FallbackEmbedder)
    assert isinstance(fb.primary, OpenAIEmbedder) and isinstance(fb.fallback, HashingEmbedder)
    assert resolve_embedder("hashing", fallback="hashing").__class__ is HashingEmbedder
    with pytest.raises(ValueError, match="two embedders"):
        FallbackEmbedder(HashingEmbedder(), None)  # type: ignore[arg-type]


# -- progress bars -------------------------------------------------------------------------
_BAR_MARKS = ("Loading weights", "it/s]", "%|", "batch/s", "Batches")


@pytest.mark.model
def test_model_load_and_embedding_print_no_bar_when_piped(tmp_path: Path) -> None:
    """stderr not a terminal: loading the packaged model prints no progress bar (transformers
    5 draws "Loading weights" on every load), nor does embedding — even with
    show_progress=True, memlab's own bar is for a terminal only; the libraries' global
    progress-bar switches are as they were before the load."""
    code = textwrap.dedent(
        """
        from huggingface_hub import utils as hub
        from transformers.utils import logging as tf
        from memlab.embed.local import SentenceTransformerEmbedder

        e = SentenceTransformerEmbedder(show_progress=True, batch_size=8)
        v = e.embed_documents([f"note number {i} about the gateway" for i in range(100)])
        print(v.shape, tf.is_progress_bar_enabled(), hub.are_progress_bars_disabled())
        """
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(100,", "384)", "True", "False"]
    assert not [m for m in _BAR_MARKS if m in out.stderr], out.stderr


@pytest.mark.model
def test_search_with_the_model_prints_no_bar_when_piped(
    small_workspace: Path, tmp_path: Path
) -> None:
    """`memlab search` with the packaged model, piped: results on stdout, no bar on stderr
    (neither the model load's nor the indexing's)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "c")}
    env.update({k: v for k, v in os.environ.items() if k == "PYTHONPATH"})
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "memlab.cli",
            "search",
            str(small_workspace),
            "which machine hosts the gateway",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "MEMORY.md" in out.stdout
    assert not [m for m in _BAR_MARKS if m in out.stderr], out.stderr
