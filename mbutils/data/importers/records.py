"""Reading a samples log's records: JSON lines, one JSON array, or the hub's Parquet, each with its line or row.

A damaged log (bytes that are not UTF-8, a truncated line, something other than one JSON
object per sample) is refused with its file and line; the results file beside the logs is
one JSON object.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from mbutils.base.errors import BundleError
from mbutils.base.jsonfiles import parse_json, read_json


def iter_records(path: Path, metric: str, subtask_field: str | None = None,
                 index_field: str | None = None) -> Iterator[tuple[int, dict]]:
    """(line or row number, record) for a JSONL, JSON-array or Parquet samples file.

    For Parquet only the fields the import reads are loaded: the prompts, raw responses and
    documents are most of the bytes and are skipped.
    """
    if path.suffix == ".parquet":
        yield from _parquet_records(path, metric, subtask_field, index_field)
        return
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip()
    if head.startswith(b"["):  # earliest 0.4 tracker: one JSON array
        data = path.read_bytes()
        text = "\n".join(_utf8_line(raw, path, n) for n, raw in enumerate(data.split(b"\n"), 1))
        try:
            records = json.loads(text)
        except json.JSONDecodeError as err:
            raise BundleError(f"{path}, line {err.lineno}: not valid JSON ({err.msg}); the file "
                              "may be truncated: re-run the evaluation or remove the file") from None
        except (RecursionError, ValueError):
            records = parse_json(text, str(path), BundleError)  # raises its one message
        if not isinstance(records, list):
            raise BundleError(f"{path}: a samples file holds one JSON object per line, or one array of them")
        for number, record in enumerate(records, 1):
            yield number, _record_dict(record, path, number)
        return
    with path.open("rb") as fh:  # bytes, so a bad byte is reported at its own line
        for number, raw in enumerate(fh, 1):
            line = _utf8_line(raw, path, number)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise BundleError(
                    f"{path}, line {number}: not valid JSON ({err.msg} at column {err.colno}); the "
                    "file may be truncated or edited: re-run the evaluation or remove the file") from None
            except (RecursionError, ValueError):
                record = parse_json(line, f"{path}, line {number}", BundleError)  # raises its one message
            yield number, _record_dict(record, path, number)


def _utf8_line(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BundleError(f"{path}, line {number}: not UTF-8 text (byte 0x{raw[err.start]:02x} at column "
                          f"{err.start + 1}); the log may be damaged: re-run the evaluation or remove the file") from None


def _record_dict(record, path: Path, number: int) -> dict:
    if not isinstance(record, dict):
        raise BundleError(f"{path}, line {number}: expected one JSON object per sample, "
                          f"found {type(record).__name__}")
    return record


def _parquet_records(path: Path, metric: str, subtask_field: str | None,
                     index_field: str | None = None) -> Iterator[tuple[int, dict]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path)
        schema = file.schema_arrow
        top = [c for c in ("doc_id", "filter", "target", "filtered_resps", "doc_hash", "metrics", metric)
               if c in schema.names]
        args = schema.field("arguments").type if "arguments" in schema.names else None
        requests = ([f.name for f in args if pa.types.is_struct(f.type) and f.type.get_field_index("arg_1") >= 0]
                    if args is not None and pa.types.is_struct(args) else [])
        doc = schema.field("doc").type if "doc" in schema.names else None
        fields = [f for f in (subtask_field, index_field) if f is not None and doc is not None
                  and pa.types.is_struct(doc) and doc.get_field_index(f) >= 0]
        columns = top + [f"doc.{f}" for f in fields] + [f"arguments.{r}.arg_1" for r in requests]
        table = file.read(columns=columns)  # nested paths: structs pruned to these leaves
    except Exception as err:  # any reader failure means the file is not usable Parquet
        raise BundleError(f"{path}: cannot read it as Parquet ({type(err).__name__}: {err})") from None
    yield from enumerate(table.to_pylist(), 1)


def filter_name(record: dict) -> str:
    """The filter a record was logged under: its ``filter`` field, ``"none"`` when it names none (as the
    harness logs a task without filters)."""
    return str(record.get("filter") or "none")


def watch_filters(records: Iterator[tuple[int, dict]], wanted: str | None, source: str,
                  seen: dict) -> Iterator[tuple[int, dict]]:
    """The records unchanged, each filter they name noted in ``seen`` (a dict used as an ordered set); once
    the last is read, a ``wanted`` filter the file does not record is refused, naming the file, the filter
    asked for and the filters it records. A file of one filter is otherwise read whatever ``wanted`` says,
    so without this a ``--filter strict-match`` would score a log of ``flexible-extract`` alone."""
    for number, record in records:
        seen.setdefault(filter_name(record), None)
        yield number, record
    if wanted is not None and seen and wanted not in seen:
        names = list(seen)
        raise BundleError(f"{source}: no records for filter {wanted!r}; this log records "
                          f"{'only filter ' if len(names) == 1 else 'the filters '}{', '.join(map(repr, names))}. "
                          f"Read it with --filter {names[0]}" + (" (or another it records)" if len(names) > 1 else "")
                          + f", or give a log that records {wanted!r}")


def load_json(path: Path) -> dict:
    """A results file beside samples logs: one JSON object, or one message naming the file."""
    return read_json(path, BundleError, what="a results JSON object")


def with_progress(iterable, show: bool, desc: str):
    """The iterable, with a progress bar (one step per file) when ``show``."""
    if not show:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, unit="file")
