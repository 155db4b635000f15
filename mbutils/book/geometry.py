"""Where a selector chapter's picture puts the seen items: the coordinates and groupings its
figures draw (Anchor Points' clusters, the IRT embedding, the items' source profiles, the
Diversity selector's own box). Nothing here chooses items; it only maps what a selector saw."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.errors import BookError
from mbutils.methods.selectors.anchor import assign_to_medoids


def anchor_members(prepared, micro) -> np.ndarray:
    """Cluster (index into the anchors) of every seen item, as Anchor Points assigns it."""

    return assign_to_medoids(prepared.dissimilarity, micro.items)


def irt_embedding(prepared) -> dict:
    """2-D view of the IRT item embedding [a_j, b_j] held by tinyBenchmarks' prepared state."""

    features = np.asarray(_find_embedding(prepared), dtype=np.float64)
    centred = features - features.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ vt[:2].T
    return {"features": features, "x": coords[:, 0], "y": coords[:, 1],
            "xlabel": "IRT embedding, component 1", "ylabel": "IRT embedding, component 2"}


def _find_embedding(prepared):
    """The item embedding: an ``embedding``/``features`` attribute, else [a, b] of the fitted model."""

    for attr in ("embedding", "features", "item_features"):
        value = getattr(prepared, attr, None)
        if value is not None:
            return value
    model = getattr(prepared, "model", prepared)
    a, b = getattr(model, "a", None), getattr(model, "b", None)
    if a is None or b is None:
        raise BookError(f"cannot find an IRT item embedding in {type(prepared).__name__}")
    return np.column_stack([np.asarray(a), np.asarray(b)])


def nearest_anchor(features, anchors) -> np.ndarray:
    """Index of the nearest anchor (Euclidean) for every item, to colour an embedding."""

    features = np.asarray(features, dtype=np.float64)
    centres = features[np.asarray(anchors)]
    d = (features ** 2).sum(1)[:, None] - 2 * features @ centres.T + (centres ** 2).sum(1)[None, :]
    return np.argmin(d, axis=1)


def item_map(source) -> pd.DataFrame:
    """Coordinates to draw seen items: easiness (% of sources correct / mean confidence), the first
    two principal components of the items' source profiles, and the same clipped to the 1-99%
    quantile box of the first four components and rescaled to [-1, 1] (what the DPP sees;
    ``outside_box`` marks the items it trims)."""

    proxy = np.asarray(source.proxy, dtype=np.float64)
    centred = proxy - proxy.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    coords = vt[:4].T * s[:4]
    lo, hi = np.quantile(coords, [0.01, 0.99], axis=0)
    outside = ((coords < lo) | (coords > hi)).any(axis=1)
    boxed = 2 * (np.clip(coords, lo, hi) - lo) / np.where(hi > lo, hi - lo, 1.0) - 1
    return pd.DataFrame({"easiness": 100 * proxy.mean(axis=0), "pc1": coords[:, 0], "pc2": coords[:, 1],
                         "box1": boxed[:, 0], "box2": boxed[:, 1], "outside_box": outside,
                         "subtask": source.subtasks})


def diversity_map(state) -> pd.DataFrame:
    """The seen items as the Diversity selector saw them (its own PCA, box and rescaling, from
    the prepared ``state``): its first two features, items it trimmed clipped onto the box's
    edge and marked ``outside_box``. One PCA, so the picture and the selector agree."""
    from mbutils.methods.selectors.diversity import box_coordinates

    if state.scores is None:
        raise BookError("this Diversity state keeps no scores; prepare it with the current selector")
    coords = box_coordinates(state.scores, state.candidates, state.scale)
    coords = np.column_stack([coords, np.zeros((len(coords), max(0, 2 - coords.shape[1])))])
    outside = np.ones(len(coords), dtype=bool)
    outside[state.candidates] = False
    return pd.DataFrame({"box1": coords[:, 0], "box2": coords[:, 1], "outside_box": outside})
