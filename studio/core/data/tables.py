"""CSV datasets: numeric tables (classification or regression) and labelled texts.

Read with the standard ``csv`` module, free of TensorFlow. Whatever the reader skips or
changes is told in plain sentences with counts (``Table.notes``); a file it cannot use
raises DataError naming the file and what to do about it.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.events import Progress
from studio.core.base.messages import count, plural
from studio.core.data.types import (
    DataError,
    DataPending,
    DatasetInfo,
    TableSamples,
    TextSamples,
)
from studio.core.project.document import DatasetChoice
from studio.core.tasks.registry import task_for

MISSING = frozenset({"", "na", "n/a", "nan", "null", "?"})
FLOAT32_MAX = float(np.finfo(np.float32).max)
"""Cells (compared case-insensitively) that mean "no value"."""
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
SNIFF_CHARS = 64 * 1024
PROGRESS_EVERY = 5000
CACHE_SIZE = 4
EXAMPLES = 5
IMBALANCE_RATIO = 5
MANY_CLASSES = 20
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")


@dataclass
class Table:
    """A CSV read for training.

    ``labels`` are int32 class indices (classification) or float32 values (regression);
    ``notes`` tell the person what was skipped or changed and what looks wrong;
    ``report`` is the JSON-serialisable summary printed by ``studio data``.
    """

    info: DatasetInfo
    samples: TableSamples | TextSamples
    labels: np.ndarray
    notes: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Rows:
    """The cells of a CSV: its header and the rows with as many fields, with line numbers."""

    path: Path
    header: list[str]
    rows: list[list[str]]
    lines: list[int]
    delimiter: str
    encoding: str
    notes: list[str]
    skipped: dict[str, int]


def is_missing(cell: str) -> bool:
    """Whether a (stripped) cell means "no value": empty, NA, N/A, NaN, null or ?."""
    return cell.casefold() in MISSING


def _any_number(cell: str, decimal_comma: bool) -> float | None:
    try:
        return float(cell)
    except ValueError:
        if not (decimal_comma and _DECIMAL_COMMA.fullmatch(cell)):
            return None
        return float(cell.replace(",", "."))


def parse_number(cell: str, decimal_comma: bool = False) -> float | None:
    """The number a cell holds, or None: also for NaN, infinities and numbers too large for
    the 32-bit floats models compute in; ``decimal_comma`` also reads ``1,5`` as 1.5."""
    value = _any_number(cell, decimal_comma)
    return value if value is not None and abs(value) <= FLOAT32_MAX else None


def too_large(cell: str, decimal_comma: bool = False) -> bool:
    """Whether the cell holds a finite number beyond the range of 32-bit floats."""
    value = _any_number(cell, decimal_comma)
    return value is not None and math.isfinite(value) and abs(value) > FLOAT32_MAX


def _quoted(names: list[str], limit: int = 20) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _decode(path: Path) -> tuple[str, str]:
    """The file's text and encoding: UTF-8 (with or without BOM), UTF-16 with BOM, or Latin-1;
    DataError if it cannot be read, is binary or holds nothing."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"The CSV file {path} does not exist.") from None
    except IsADirectoryError:
        raise DataError(f"{path} is a folder, not a CSV file.") from None
    except OSError as exc:
        raise DataError(f"The CSV file {path} cannot be read ({exc.strerror}).") from None
    binary = DataError(f"{path.name} is not a CSV file: it holds binary data. Choose a text "
                       "file with one row per line and columns separated by commas, "
                       "semicolons or tabs.")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return raw.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise binary from None
    if b"\x00" in raw[:SNIFF_CHARS]:
        raise binary
    try:
        text, encoding = raw.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        text, encoding = raw.decode("latin-1"), "latin-1"
    if not text.strip():
        raise DataError(f"{path.name} is empty: it holds no rows.")
    return text, encoding


def _sniff_delimiter(text: str) -> str:
    """The delimiter that splits the first rows into the same number of fields, most often."""
    head = text[:SNIFF_CHARS]
    best, best_score = ",", (0, 0)
    for delimiter in DELIMITERS:
        try:
            rows = [r for r in csv.reader(io.StringIO(head, newline=""), delimiter=delimiter)
                    if any(c.strip() for c in r)]
        except csv.Error:
            continue
        if len(head) == SNIFF_CHARS and len(rows) > 2:
            rows.pop()
        width = len(_fitted(rows[0], 0)) if rows else 0
        score = (sum(len(_fitted(r, width)) == width for r in rows), width)
        if width > 1 and score > best_score:
            best, best_score = delimiter, score
    return best


def _fitted(cells: list[str], width: int) -> list[str]:
    """Stripped cells, without empty ones at the end beyond ``width`` (a trailing delimiter)."""
    cells = [c.strip() for c in cells]
    while len(cells) > width and not cells[-1]:
        cells.pop()
    return cells


def _column_names(header: list[str]) -> tuple[list[str], list[str]]:
    """Header names made non-empty and unique, and a note if any had to change."""
    names: list[str] = []
    for i, name in enumerate(header):
        name = name or f"column {i + 1}"
        base, k = name, 2
        while name in names:
            name, k = f"{base} ({k})", k + 1
        names.append(name)
    changed = [f"{old or '(empty)'} → {new}" for old, new in zip(header, names, strict=True)
               if old != new]
    notes = [f"Some column names were empty or repeated and were renamed: "
             f"{', '.join(changed)}."] if changed else []
    return names, notes


def _reader(text: str, delimiter: str):
    return csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)


def _unreadable(path: Path, reader, exc: csv.Error) -> DataError:
    return DataError(f"{path.name} cannot be read as CSV near line {reader.line_num} ({exc}).")


def _header(path: Path, reader) -> list[str]:
    """The first row of ``reader`` that holds a value, stripped: the CSV's header."""
    try:
        for record in reader:
            cells = _fitted(record, 0)
            if any(cells):
                return cells
    except csv.Error as exc:
        raise _unreadable(path, reader, exc) from None
    raise DataError(f"{path.name} holds no values, only separators.")


def csv_columns(path: Path | str) -> list[str]:
    """The column names of a CSV file exactly as ``read_table`` names them (empty or repeated
    names renamed), parsing the header row only. DataError if the file cannot be read as a CSV."""
    path = Path(path).expanduser()
    text, _ = _decode(path)
    return _column_names(_header(path, _reader(text, _sniff_delimiter(text))))[0]


def _read_rows(path: Path, on_progress: Progress, stop: threading.Event) -> _Rows:
    """Decode, sniff and split a CSV into its header and well-formed rows."""
    text, encoding = _decode(path)
    notes = [f"{path.name} is not UTF-8 text; it was read as Latin-1 (Western European). "
             "If some letters look wrong, save the file as UTF-8."] if encoding == "latin-1" else []
    delimiter = _sniff_delimiter(text)
    what, total = f"Reading {path.name}", max(text.count("\n"), text.count("\r")) + 1
    reader = _reader(text, delimiter)
    header = _header(path, reader)
    rows: list[list[str]] = []
    lines: list[int] = []
    ragged = Counter[str]()
    first_ragged = 0
    try:
        for number, record in enumerate(reader):
            if number % PROGRESS_EVERY == 0:
                if stop.is_set():
                    raise DataError(f"Reading {path.name} was cancelled.")
                on_progress(what, reader.line_num, total)
            cells = _fitted(record, len(header))
            if not any(cells):
                continue
            if len(cells) == len(header):
                rows.append(cells)
                lines.append(reader.line_num)
            else:
                first_ragged = first_ragged or reader.line_num
                ragged["more" if len(cells) > len(header) else "fewer"] += 1
    except csv.Error as exc:
        raise _unreadable(path, reader, exc) from None
    on_progress(what, total, total)
    if len(header) < 2:
        raise DataError(f"{path.name} holds a single column ({header[0]!r}); a dataset needs a "
                        "label column and at least one more. Separate the columns with commas, "
                        "semicolons or tabs.")
    names, renamed = _column_names(header)
    numbers = [name for name in header if parse_number(name) is not None]
    if len(numbers) * 2 > len(header):
        notes.append(f"The first row of {path.name} looks like data, not column names (it "
                     f"holds {_quoted(numbers, 3)}); it is read as the header. Add a first "
                     "row with the column names.")
    n_ragged = sum(ragged.values())
    if n_ragged:
        kinds = " or ".join(f"{kind} fields" for kind in sorted(ragged))
        notes.append(f"{count(n_ragged, 'row has', 'rows have')} {kinds} than the header's "
                     f"{len(names)} and {plural(n_ragged, 'was', 'were')} skipped; the first "
                     f"is line {first_ragged}.")
    if not rows:
        if n_ragged:
            raise DataError(f"None of the rows of {path.name} has the {len(names)} fields its "
                            f"header names ({_quoted(names)}). Check the column separator.")
        raise DataError(f"{path.name} holds only a header ({_quoted(names)}) and no rows "
                        "of data.")
    return _Rows(path, names, rows, lines, delimiter, encoding, notes + renamed,
                 {"wrong_field_count": n_ragged})


def _column(header: list[str], name: str, role: str, path: Path) -> int:
    """The index of the column called ``name`` (ignoring case if no exact match)."""
    if name in header:
        return header.index(name)
    folded = [h.casefold() for h in header]
    if name.strip().casefold() in folded:
        return folded.index(name.strip().casefold())
    raise DataError(f"{path.name} has no column {name!r} to use as the {role}; its columns "
                    f"are {_quoted(header)}.")


def _drop_missing(data: _Rows, column: int, what: str, reason: str) -> None:
    """Drop rows whose cell in ``column`` is missing, with a note counting them."""
    kept = [i for i, row in enumerate(data.rows) if not is_missing(row[column])]
    dropped = len(data.rows) - len(kept)
    data.skipped[reason] = dropped
    if not dropped:
        return
    first = data.lines[next(i for i, row in enumerate(data.rows) if is_missing(row[column]))]
    data.notes.append(f"{count(dropped, 'row has', 'rows have')} no {what} in "
                      f"{data.header[column]!r} and {plural(dropped, 'was', 'were')} "
                      f"skipped; the first is line {first}.")
    data.rows = [data.rows[i] for i in kept]
    data.lines = [data.lines[i] for i in kept]
    if not data.rows:
        raise DataError(f"No row of {data.path.name} has a {what} in {data.header[column]!r}.")


def _class_labels(values: list[str], decimal_comma: bool) -> tuple[np.ndarray, list[str]]:
    """Class indices and names: numeric values sorted as numbers, others alphabetically."""
    numbers = [parse_number(v, decimal_comma) for v in values]
    keys: list[Any] = numbers if all(n is not None for n in numbers) else values
    names: dict[Any, str] = {}
    for key, value in zip(keys, values, strict=True):
        names.setdefault(key, value)
    order = sorted(names)
    index = {key: i for i, key in enumerate(order)}
    return np.array([index[k] for k in keys], dtype=np.int32), [names[k] for k in order]


def _regression_labels(data: _Rows, column: int, decimal_comma: bool) -> np.ndarray:
    numbers = [parse_number(row[column], decimal_comma) for row in data.rows]
    bad = [(line, row[column]) for line, row, n in zip(data.lines, data.rows, numbers, strict=True)
           if n is None]
    if bad:
        shown = ", ".join(f"line {line}: {value!r}" for line, value in bad[:EXAMPLES])
        raise DataError(f"Regression needs a number (within ±{FLOAT32_MAX:.3g}) in every row "
                        f"of the label column "
                        f"{data.header[column]!r} of {data.path.name}, but "
                        f"{count(len(bad), 'row holds', 'rows hold')} something else "
                        f"({shown}{', …' if len(bad) > EXAMPLES else ''}). Fix those rows, or "
                        "choose classification.")
    return np.array(numbers, dtype=np.float32)


@dataclass
class _Feature:
    """One candidate feature column: its values (NaN where missing or text) and text cells."""

    name: str
    values: np.ndarray
    text: list[int]
    decimal_commas: int
    too_large: list[int]

    @property
    def numbers(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.values)))


def _feature(data: _Rows, column: int, decimal_comma: bool) -> _Feature:
    values = np.full(len(data.rows), np.nan)
    text: list[int] = []
    large: list[int] = []
    commas = 0
    for i, row in enumerate(data.rows):
        cell = row[column]
        number = parse_number(cell, decimal_comma)
        if number is not None:
            values[i] = number
            commas += "," in cell
        elif too_large(cell, decimal_comma):
            large.append(i)
        elif not is_missing(cell):
            text.append(i)
    return _Feature(data.header[column], values, text, commas, large)


def _features(data: _Rows, columns: list[int], decimal_comma: bool
              ) -> tuple[list[_Feature], list[dict[str, str]]]:
    """The numeric columns among ``columns``, and the ones left out with the reason."""
    kept: list[_Feature] = []
    left_out: list[dict[str, str]] = []
    for column in columns:
        feature = _feature(data, column, decimal_comma)
        numbers, texts = feature.numbers, len(feature.text)
        if numbers and numbers > texts:
            kept.append(feature)
            if texts:
                row = feature.text[0]
                data.notes.append(
                    f"Column {feature.name!r} holds {count(texts, 'cell', 'cells')} that "
                    f"{plural(texts, 'is', 'are')} not a number (e.g. "
                    f"{data.rows[row][column]!r} on line {data.lines[row]}); "
                    f"{plural(texts, 'it counts', 'they count')} as missing.")
            if feature.too_large:
                row, large = feature.too_large[0], len(feature.too_large)
                data.notes.append(
                    f"Column {feature.name!r} holds {count(large, 'number', 'numbers')} "
                    f"too large for the model's 32-bit floats (over {FLOAT32_MAX:.3g}, e.g. "
                    f"{data.rows[row][column]!r} on line {data.lines[row]}); "
                    f"{plural(large, 'it counts', 'they count')} as missing.")
        else:
            reason = "mostly text" if numbers else ("text" if texts else "empty")
            left_out.append({"column": feature.name, "reason": reason})
    _note_left_out(data, left_out)
    return kept, left_out


def _note_left_out(data: _Rows, left_out: list[dict[str, str]]) -> None:
    reasons = {"text": ("holds text", "hold text"), "mostly text": ("holds mostly text",
                                                                     "hold mostly text")}
    for reason in ("text", "mostly text", "empty"):
        names = [e["column"] for e in left_out if e["reason"] == reason]
        if not names:
            continue
        n = len(names)
        why = (plural(n, "it is empty", "they are empty") if reason == "empty" else
               f"{plural(n, 'it', 'they')} {plural(n, *reasons[reason])}, not numbers")
        data.notes.append(f"{plural(n, 'Column', 'Columns')} {_quoted(names)} "
                          f"{plural(n, 'is', 'are')} left out: {why}.")


def _table_samples(data: _Rows, label: int, decimal_comma: bool
                   ) -> tuple[TableSamples, dict[str, Any], list[str]]:
    """The numeric features, the report's column entries and warnings about them."""
    others = [i for i in range(len(data.header)) if i != label]
    kept, left_out = _features(data, others, decimal_comma)
    if not kept:
        raise DataError(f"{data.path.name} has no column of numbers besides the label "
                        f"{data.header[label]!r} to learn from; its other columns "
                        f"({_quoted([data.header[i] for i in others])}) hold text or nothing. "
                        "For text, choose a text column.")
    missing = {f.name: int(np.count_nonzero(np.isnan(f.values))) for f in kept}
    missing = {name: n for name, n in missing.items() if n}
    if missing:
        total = sum(missing.values())
        parts = ", ".join(f"{name}: {n}" for name, n in missing.items())
        data.notes.append(f"{count(total, 'value is', 'values are')} missing ({parts}); "
                          "each is filled with its column's mean over the training rows.")
    commas = sum(f.decimal_commas for f in kept)
    if commas:
        data.notes.append(f"{count(commas, 'number', 'numbers')} with a decimal comma "
                          "(like 1,5) were read as decimals.")
    constant = [f.name for f in kept if np.nanmax(f.values) == np.nanmin(f.values)]
    n = len(constant)
    warnings = [f"{plural(n, 'Column', 'Columns')} {_quoted(constant)} "
                f"{plural(n, 'has', 'have')} the same value in every row, so "
                f"{plural(n, 'it tells', 'they tell')} the model nothing."] if n else []
    features = np.stack([f.values for f in kept], axis=1).astype(np.float32)
    names = [f.name for f in kept]
    report = {"features": names, "left_out": left_out, "missing_values": missing}
    return TableSamples(features, names), report, warnings


def _text_samples(data: _Rows, label: int, text: int
                  ) -> tuple[TextSamples, dict[str, Any], list[str]]:
    others = [name for i, name in enumerate(data.header) if i not in (label, text)]
    if others:
        data.notes.append(f"Only the text column {data.header[text]!r} and the label are used; "
                          f"{count(len(others), 'other column is', 'other columns are')} "
                          f"left out ({_quoted(others)}).")
    report = {"features": [data.header[text]],
              "left_out": [{"column": name, "reason": "not used for text"} for name in others],
              "missing_values": {}}
    return TextSamples([row[text] for row in data.rows]), report, []


def _class_warnings(names: list[str], counts: list[int], rows: int) -> list[str]:
    out = []
    pairs = list(zip(counts, names, strict=True))
    (small, small_name), (big, big_name) = min(pairs), max(pairs)
    if big >= IMBALANCE_RATIO * small:
        out.append(f"The classes are strongly imbalanced: {big_name!r} has {big} rows, "
                   f"{small_name!r} only {small}. Consider class weights.")
    single = [name for name, n in zip(names, counts, strict=True) if n == 1]
    if single:
        out.append(f"{count(len(single), 'class has', 'classes have')} a single row "
                   f"({_quoted(single, EXAMPLES)}): too few to both learn and check it.")
    if len(names) > MANY_CLASSES and len(names) > rows // 2:
        out.append(f"The label column holds {len(names)} different values in {rows} rows; if "
                   "it is a quantity rather than a category, choose regression.")
    return out


def _labels(data: _Rows, column: int, task: str, decimal_comma: bool
            ) -> tuple[np.ndarray, list[str], dict[str, Any], list[str]]:
    """Labels, class names, the report's entry on them and warnings about the classes, read
    as the ``task``'s kind of label says: numbers, or classes."""
    if task_for(task).label_kind == "numbers":
        values = _regression_labels(data, column, decimal_comma)
        wide = values.astype(np.float64)  # float32 overflows on the spread of large labels
        return values, [], {"label_range": {
            "min": float(wide.min()), "max": float(wide.max()),
            "mean": float(wide.mean()), "std": float(wide.std())}}, []
    labels, names = _class_labels([row[column] for row in data.rows], decimal_comma)
    if len(names) < 2:
        raise DataError(f"The label column {data.header[column]!r} of {data.path.name} holds "
                        f"the same value ({names[0]!r}) in every row; a classifier needs at "
                        "least two classes. Choose another label column.")
    counts = np.bincount(labels, minlength=len(names)).tolist()
    classes = [{"name": n, "rows": c} for n, c in zip(names, counts, strict=True)]
    return labels, names, {"classes": classes}, _class_warnings(names, counts, len(labels))


def _build(data: _Rows, choice: DatasetChoice) -> Table:
    """Labels and samples from the rows, as the choice reads them."""
    path, header = data.path, data.header
    label = (_column(header, choice.label_column, "label", path) if choice.label_column
             else len(header) - 1)
    text = _column(header, choice.text_column, "text", path) if choice.text_column else None
    if text == label:
        raise DataError(f"The column {header[label]!r} is chosen as both the label and the "
                        "text; choose another label column.")
    _drop_missing(data, label, "label", "missing_label")
    if text is not None:
        _drop_missing(data, text, "text", "missing_text")
    decimal_comma = data.delimiter != ","
    if text is None:
        samples, columns, warnings = _table_samples(data, label, decimal_comma)
    else:
        samples, columns, warnings = _text_samples(data, label, text)
    rows = len(data.rows)
    report: dict[str, Any] = {
        "file": str(path), "kind": "table" if text is None else "text", "task": choice.task,
        "encoding": data.encoding, "delimiter": DELIMITERS[data.delimiter],
        "rows": rows, "rows_skipped": {k: n for k, n in data.skipped.items() if n},
        "columns": header, "label_column": header[label],
        "text_column": None if text is None else header[text], **columns,
    }
    labels, names, summary, label_warnings = _labels(data, label, choice.task, decimal_comma)
    warnings += label_warnings
    report |= {**summary, "notes": data.notes, "problems": warnings}
    shape = (len(samples.columns),) if isinstance(samples, TableSamples) else (
        choice.sequence_length,)
    info = DatasetInfo(name=str(path), title=path.name, sample_shape=shape,
                       num_classes=len(names), class_names=tuple(names), num_samples=rows,
                       kind=report["kind"], task=choice.task)
    for array in (labels, getattr(samples, "features", labels)):
        array.setflags(write=False)
    return Table(info, samples, labels, data.notes + warnings, report)


_cache: OrderedDict[tuple[Any, ...], Table | DataError] = OrderedDict()
_cache_lock = threading.Lock()


def _csv_path(choice: DatasetChoice) -> Path:
    if not choice.path:
        raise DataError("No CSV file is chosen yet: pick a .csv file with a header row.")
    return Path(choice.path).expanduser()


def _cache_key(path: Path, choice: DatasetChoice) -> tuple[Any, ...] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path.resolve()), stat.st_mtime_ns, stat.st_size, choice.label_column,
            choice.text_column, choice.task)


def _recall(key: tuple[Any, ...] | None) -> Table | DataError | None:
    with _cache_lock:
        if key not in _cache:
            return None
        _cache.move_to_end(key)
        return _cache[key]


def _remember(key: tuple[Any, ...] | None, outcome: Table | DataError) -> None:
    if key is None:
        return
    with _cache_lock:
        _cache[key] = outcome
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)


def _lookup(choice: DatasetChoice) -> tuple[Path, tuple[Any, ...] | None,
                                           Table | DataError | None]:
    """The chosen file, its cache key and what reading it gave (None if not read yet)."""
    path = _csv_path(choice)
    key = _cache_key(path, choice)
    return path, key, _recall(key)


def _as_chosen(choice: DatasetChoice, outcome: Table | DataError) -> Table:
    """The table read, as ``choice`` streams it; raise the DataError reading it gave."""
    if isinstance(outcome, DataError):
        raise DataError(str(outcome))
    if outcome.info.kind == "text" and outcome.info.sample_shape != (choice.sequence_length,):
        outcome = replace(outcome, info=replace(outcome.info,
                                                sample_shape=(choice.sequence_length,)))
    return outcome


def read_table(choice: DatasetChoice, on_progress: Progress | None = None,
               stop: threading.Event | None = None) -> Table:
    """Read the chosen CSV's samples and labels; raise DataError if it is unusable.

    The outcome is cached by file (path, modification time, size) and the columns and task
    chosen, so reading the same file again is instant. Setting ``stop`` cancels the reading.
    """
    path, key, outcome = _lookup(choice)
    if outcome is None:
        stop = stop or threading.Event()
        try:
            outcome = _build(_read_rows(path, on_progress or (lambda *_: None), stop), choice)
        except DataError as exc:
            if stop.is_set():
                raise
            outcome = exc
        _remember(key, outcome)
    return _as_chosen(choice, outcome)


def cached_table(choice: DatasetChoice) -> Table | None:
    """The chosen CSV as an earlier ``read_table`` left it, or None if it was not read since
    it last changed; raise the DataError that reading gave. Never parses the file (one that
    cannot be found fails at once, as reading it would)."""
    _, key, outcome = _lookup(choice)
    if key is None:
        return read_table(choice)
    return None if outcome is None else _as_chosen(choice, outcome)


def table_info(choice: DatasetChoice, read: bool = True) -> DatasetInfo:
    """What the chosen CSV holds; cheap on repeated calls (the file is read once per change).

    With ``read`` False a file not read yet is not read here: DataPending is raised instead,
    for callers that read it in the background (``read_table``) and ask again.
    """
    if task_for(choice.task).label_kind not in ("classes", "numbers"):
        raise DataError(f"A CSV's labels are classes or numbers, so it cannot train "
                        f"{task_for(choice.task).title.lower()}: choose classification or "
                        "regression, or a detection dataset.")
    table = read_table(choice) if read else cached_table(choice)
    if table is None:
        raise DataPending(f"{_csv_path(choice).name} is being read…")
    return table.info


def table_report(choice: DatasetChoice) -> dict[str, Any]:
    """A JSON-serialisable summary of the chosen CSV for ``studio data FILE.csv``.

    Rows, the columns used and left out, missing values per column, class counts (or the
    label's range for regression), ``notes`` on what was skipped or changed and ``problems``.
    """
    return read_table(choice).report
