"""Where a results table comes from, and refusing tables that pool unrelated experiments.

Every row of an experiment's table carries the short id of its experiment (column
``experiment``: bundle hash, protocol, sizes, version and code fingerprint); the full
record, with each selector's parameters, travels in the Parquet metadata. Metrics pool
pairs by (run, selector, size), so two experiments concatenated by hand would be scored
as one with twice the pairs: :func:`check_unmixed` refuses such a table and says how to
split it, and :func:`combine` joins experiments on purpose by numbering their runs apart.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from mbutils.base.errors import ResultsError
from mbutils.base.version import __version__

COLUMN = "experiment"
KEY = ("run", "selector", "size", "model")
METADATA_KEY = b"mbutils.base.provenance"
COMBINE_HINT = ("or join experiments on purpose with `python -m mbutils combine A.parquet B.parquet "
                "--out both.parquet`, which numbers their runs apart")


def experiment_id(record: dict) -> str:
    """Short stable id of an experiment's record (everything but the selectors' parameters)."""
    core = {k: v for k, v in record.items() if k not in ("selectors", COLUMN)}
    payload = json.dumps(core, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def make_record(*, bundle: str, bundle_hash: str, protocol: dict, sizes: list[int], selectors: dict,
                version: str, code: str) -> dict:
    """The provenance of one experiment, with its id."""
    record = {"bundle": bundle, "bundle_hash": bundle_hash, "protocol": protocol, "sizes": list(sizes),
              "mbutils_version": version, "code": code, "selectors": selectors}
    return {**record, COLUMN: experiment_id(record)}


def stamp(table: pd.DataFrame, record: dict) -> pd.DataFrame:
    """The table with its experiment id in every row and its record in ``attrs``."""
    table = table.assign(**{COLUMN: record[COLUMN]})
    table.attrs["provenance"] = {"experiments": {record[COLUMN]: record}}
    return table


def records(table: pd.DataFrame) -> dict[str, dict]:
    """The experiments a table's metadata describes, by id (empty when it has none)."""
    prov = table.attrs.get("provenance") or {}
    experiments = prov.get("experiments") if isinstance(prov, dict) else None
    if experiments is None:
        return {}
    if not isinstance(experiments, dict) or not all(isinstance(r, dict) for r in experiments.values()):
        raise ResultsError("results table: its provenance metadata is malformed (each experiment must be a "
                           "record); was the file edited? Re-run the experiment to get a clean table")
    return dict(experiments)


def parquet_metadata(table: pd.DataFrame) -> dict[bytes, bytes]:
    """Schema metadata holding the table's provenance, for :func:`mbutils.base.cache.write_table`."""
    prov = table.attrs.get("provenance")
    return {METADATA_KEY: json.dumps(prov, sort_keys=True, default=str).encode()} if prov else {}


def read_parquet(path: Path) -> pd.DataFrame:
    """A results table with the provenance of its metadata in ``attrs['provenance']``."""
    import pyarrow.parquet as pq

    arrow = pq.read_table(path)
    table = arrow.to_pandas()
    raw = (arrow.schema.metadata or {}).get(METADATA_KEY)
    table.attrs = {}
    if raw:
        try:
            table.attrs["provenance"] = json.loads(raw)
        except ValueError:
            raise ResultsError(f"{path}: its provenance metadata is not valid JSON; was it edited?") from None
    return table


def sidecar_path(csv_path: Path) -> Path:
    """Where a CSV results table keeps its provenance: ``r.csv`` -> ``r.csv.provenance.json``."""
    csv_path = Path(csv_path)
    return csv_path.with_name(csv_path.name + ".provenance.json")


def sidecar_text(table: pd.DataFrame) -> str | None:
    """The JSON a CSV's sidecar holds (None: the table has no provenance to keep)."""
    prov = table.attrs.get("provenance")
    return json.dumps(prov, sort_keys=True, default=str, indent=1) + "\n" if prov else None


def read_sidecar(table: pd.DataFrame, csv_path: Path) -> pd.DataFrame:
    """``table`` (read from ``csv_path``) with its sidecar's provenance in ``attrs``, when it has one.

    A CSV carries no metadata of its own, so the record sits in a file beside it; a sidecar that
    names other experiments than the CSV's rows (a table replaced by hand) is refused rather than
    lent to the wrong table.
    """
    side = sidecar_path(csv_path)
    table.attrs = {}
    if not side.is_file():
        return table
    try:
        prov = json.loads(side.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ResultsError(f"{side}: the provenance of {Path(csv_path).name} is not valid JSON; was it edited? "
                           "Remove it to read the CSV without provenance") from None
    table.attrs["provenance"] = prov
    described = set(records(table))
    rows = set(table[COLUMN].astype(str)) if COLUMN in table.columns else set()
    if described and rows and not rows <= described:
        raise ResultsError(f"{side} describes experiment(s) {', '.join(sorted(described)[:3])}, but "
                           f"{Path(csv_path).name} holds {', '.join(sorted(rows - described)[:3])}: the sidecar "
                           "belongs to another table. Remove it, or write the table again")
    return table


def _ids(table: pd.DataFrame) -> pd.Series:
    return table[COLUMN].astype(str).value_counts(sort=False) if COLUMN in table.columns else pd.Series(dtype=int)


def check_unmixed(table: pd.DataFrame) -> None:
    """Refuse a table that mixes experiments or repeats a (run, selector, size, model) key."""
    check_version(table)
    ids = _ids(table)
    if len(ids) > 1:
        shown = ", ".join(f"{i!r} ({n:,} rows)" for i, n in list(ids.items())[:4])
        first = ids.index[0]
        raise ResultsError(
            f"results table mixes {len(ids)} experiments (column '{COLUMN}': {shown}); their pairs "
            f"must not be pooled. Split it, e.g. table[table['{COLUMN}'] == {first!r}], {COMBINE_HINT}")
    keys = [c for c in KEY if c in table.columns]
    if len(keys) < len(KEY):
        return  # missing columns are reported by metrics.check_results
    repeated = table.duplicated(keys, keep=False)
    if repeated.any():
        rows = table.index[repeated]
        first = table.loc[rows[0], keys]
        twins = rows[(table.loc[rows, keys] == first).all(axis=1).to_numpy()]
        raise ResultsError(
            f"results table repeats {int(table.duplicated(keys).sum()):,} (run, selector, size, model) "
            f"key(s), e.g. run {first['run']}, selector {first['selector']!r}, size {first['size']}, "
            f"model {first['model']!r} in rows {', '.join(str(r + 2) for r in twins[:3])} (counting the "
            "header as row 1): it looks like two experiments concatenated. Split it by experiment, "
            + COMBINE_HINT)


def check_version(table: pd.DataFrame) -> None:
    """Refuse results a newer mbutils wrote (a later major or minor version may change their meaning)."""
    ours = tuple(int(part) for part in __version__.split(".")[:2])
    for record in records(table).values():
        raw = str(record.get("mbutils_version") or "")
        try:
            theirs = tuple(int(part) for part in raw.split(".")[:2])
        except ValueError:
            raise ResultsError(f"results table: its provenance names mbutils version {raw!r}, which is not a "
                               "version number; was the file edited?") from None
        if theirs > ours:
            raise ResultsError(f"results table: written by mbutils {raw}, newer than this {__version__}; "
                               "read it with that version, or re-run the experiment with this one")


def check_bundle(table: pd.DataFrame, bundle_hash: str, bundle: str, where: str) -> None:
    """Refuse results that another bundle's experiment produced (when the metadata says so)."""
    for record in records(table).values():
        if record.get("bundle_hash") and record["bundle_hash"] != bundle_hash:
            raise ResultsError(
                f"{where}: these results come from bundle {record.get('bundle')!r} "
                f"(content {record['bundle_hash'][:12]}), not from {bundle!r} (content {bundle_hash[:12]}); "
                f"give the results of an experiment on {bundle!r}")


def _targets_per_run(table: pd.DataFrame) -> set[int]:
    return set(table.groupby(["selector", "size", "run"]).size().tolist())


def _draw_fingerprints(table: pd.DataFrame) -> pd.Series:
    """One fingerprint per (run, selector, size) group: its targets and their estimates, in any order.

    Two groups with the same fingerprint are the same draw of the same targets: pooling them
    would count every pair twice, whatever their run numbers or experiment ids say.
    """
    columns = [c for c in ("model", "estimate", "seen_accuracy") if c in table.columns]
    rows = pd.util.hash_pandas_object(table[columns].astype({"model": str}) if "model" in columns else table[columns],
                                      index=False)
    keys = [table["run"], table["selector"].astype(str), table["size"]]
    summed = rows.groupby(keys, sort=False).sum()  # uint64 sums wrap: an order-free digest
    counts = rows.groupby(keys, sort=False).size()
    return summed.astype("uint64").astype(str) + ":" + counts.astype(str)


def _check_not_repeated(tables: list[pd.DataFrame], labels: list[str]) -> None:
    """Refuse to pool an experiment with itself: a copy, its CSV, or a combination holding it."""
    seen: dict[str, tuple[str, tuple]] = {}
    for table, label in zip(tables, labels):
        prints = _draw_fingerprints(table)
        for key, fingerprint in prints.items():
            if fingerprint in seen and seen[fingerprint][0] != label:
                other, where = seen[fingerprint]
                raise ResultsError(
                    f"{label} and {other} hold the same draw (selector {key[1]!r}, size {key[2]}: the same targets "
                    f"with the same estimates, run {key[0]} here and run {where[0]} there); pooling it would count "
                    "its pairs twice and narrow every interval. Combine experiments run with different seeds")
            seen.setdefault(fingerprint, (label, key))


#: What two experiments must share to be pooled: the bundle, the protocol but for its seed and runs,
#: and the sizes. Different seeds (and run counts) are what combining is for.
_POOLABLE_PROTOCOL_SKIPS = ("seed", "n_runs")


def _design(record: dict) -> dict:
    """The part of an experiment's record that pooled experiments must share."""
    protocol = record.get("protocol") if isinstance(record.get("protocol"), dict) else {}
    return {"bundle_hash": record.get("bundle_hash"), "sizes": record.get("sizes"),
            "protocol": {k: v for k, v in protocol.items() if k not in _POOLABLE_PROTOCOL_SKIPS}}


def _check_same_design(tables: list[pd.DataFrame], labels: list[str]) -> None:
    """Refuse to pool experiments of different bundles, protocols or sizes, or any without a record."""
    first: tuple[str, dict] | None = None
    for table, label in zip(tables, labels):
        own = records(table)
        if not own:
            raise ResultsError(f"{label}: carries no provenance (a CSV without its .provenance.json, or a table "
                               "written by hand), so combine cannot check that it is of the same bundle and "
                               "protocol as the others; combine the files the experiment wrote")
        for record in own.values():
            design = _design(record)
            if first is None:
                first = (label, design)
                continue
            other, expected = first
            for key, what in (("bundle_hash", "bundle"), ("protocol", "protocol"), ("sizes", "sizes")):
                if design[key] != expected[key]:
                    mine = record.get("bundle") if key == "bundle_hash" else design[key]
                    raise ResultsError(
                        f"{label} and {other} come from different {what}s ({str(mine)[:120]} against "
                        f"{str(expected[key])[:120] if key != 'bundle_hash' else 'another bundle'}); pooling their "
                        "pairs would mix experiments that answer different questions. Combine experiments of one "
                        "bundle, protocol and sizes that differ only in seed")


def combine(tables: list[pd.DataFrame], labels: list[str]) -> pd.DataFrame:
    """Join experiments on purpose: runs are renumbered apart, the record lists every source.

    The same experiment twice (a copy, its CSV, or a combination that already holds it) is
    refused: its draws would be pooled with themselves.
    """
    if len(tables) < 2:
        raise ResultsError("combine needs at least two results tables")
    if len(set(labels)) < len(labels):
        raise ResultsError("combine was given the same file twice; each experiment may appear once")
    _check_not_repeated(tables, labels)
    _check_same_design(tables, labels)
    parts, offset, sources, counts = [], 0, {}, set()
    for table, label in zip(tables, labels):
        check_unmixed(table)
        counts |= _targets_per_run(table)
        own = records(table) or {label: {"source": label}}
        for key, record in own.items():
            sources[key] = {**record, "source": label, "run_offset": offset}
        parts.append(table.assign(run=table["run"] + offset))
        offset += int(table["run"].max()) + 1
    if len(counts) > 1:
        raise ResultsError(f"the tables have different numbers of targets per run ({sorted(counts)}); "
                           "runs of one table must all compare the same number of models")
    combined = pd.concat(parts, ignore_index=True)
    ident = "combined-" + hashlib.sha256(json.dumps(sorted(sources), default=str).encode()).hexdigest()[:12]
    combined[COLUMN] = ident
    combined.attrs = {"provenance": {"combined": ident, "experiments": sources}}
    return combined
