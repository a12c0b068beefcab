"""The scraper contract: a source declares its name and URLs and implements a pure ``parse``.

Everything shared lives here: the result type (`ParsedSnapshot`, declared in
`common.snapshot`, which storage imports too), the error type (`ScrapeError`), and the checks every parse result goes through before storage
(mandatory columns, row floors, metric ranges, in-batch duplicate keys). Fetching over
HTTP lives in `scrapers.http`; the scraper modules never touch the network or DuckDB.
"""

from __future__ import annotations

import csv as _csv
import io
import json as _json
import logging
from datetime import datetime
from typing import Any, Callable, ClassVar, Literal, Mapping, Sequence, TypeVar, overload
from urllib.parse import urlparse

import numpy as np
import pandas as pd

from common.naming import NO_RULES, NamingRules
from scrapers.cases import Case
from common.checks import (REASON_BAD_CI, REASON_DUPLICATE, REASON_PERCENT_IN_PROPORTIONS,  # noqa: F401
                           SCORE_CHECKS, SCORE_UNIQUE, bad_counts, json_fragments, mask, reason_bad_n_items,
                           reason_bad_stderr, reason_missing, reason_out_of_range, reason_unknown_metric, reasons,
                           reject_rows_json)
from common.snapshot import (ITEM_COLUMNS, MANDATORY_SCORE_COLUMNS, MODEL_COLUMNS, N_ITEMS_MAX,  # noqa: F401
                             SCORE_COLUMNS, ParsedSnapshot, conform, empty_frame)
from common.time import utcnow
from common.units import date_range_text, implausible_dates
from scrapers.normalize import METRIC_RANGES
from scrapers._jsliteral import declarations

log = logging.getLogger("benchwatch.scrapers")
T = TypeVar("T")

# Fan-out caps: how much one upstream file may make (issue 55). A source may declare its own
# (`Scraper.max_tables`, `Scraper.max_releases`); beyond them the file is stored held, like a
# shrink (one line; `benchwatch accept` releases it), never silently turned into that many tables
# or fetches. The largest real files have 39 tables and 10 releases.
MAX_TABLES = 200          # distinct (benchmark, table_version) of one parse
MAX_RELEASES = 100        # releases one release list names
# YAML is built as Python objects node by node (many times its size in memory): a file beyond these is
# refused before it is built. The largest real leaderboard YAML has 56 KB and 4,375 nodes.
YAML_MAX_BYTES = 2 * 1024 * 1024
YAML_MAX_NODES = 100_000

class ScrapeError(Exception):
    """A response that cannot be turned into trustworthy rows. Always names the source."""

    def __init__(self, source: str, reason: str):
        reason = " ".join(str(reason).split())      # always one line (parser messages carry newlines)
        super().__init__(f"[{source}] {reason}")
        self.source = source
        self.reason = reason


class Refused(ValueError):
    """Input a decoder refuses to read at all (beyond a size cap), as opposed to malformed input."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; a key named twice is an error (json keeps the last value
    silently, so a second `"score"` would replace the first without a word)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r} in one object")
            seen.add(key)
    return out


_NO_ALIAS_LOADER: Any = None


def _no_alias_loader() -> Any:
    """yaml.SafeLoader refusing anchors (`&a`) and aliases (`*a`), more than YAML_MAX_NODES nodes,
    and a mapping key named twice (PyYAML keeps the last value silently), built once."""
    global _NO_ALIAS_LOADER
    if _NO_ALIAS_LOADER is None:
        import yaml

        class NoAliasLoader(yaml.SafeLoader):
            nodes = 0

            def construct_mapping(self, node: Any, deep: bool = False) -> Any:
                if isinstance(node, yaml.MappingNode):
                    seen: set[Any] = set()
                    for key_node, _ in node.value:
                        key = self.construct_object(key_node, deep=True)
                        try:
                            again = key in seen
                        except TypeError:       # an unhashable key: the base constructor says so
                            continue
                        if again:
                            raise yaml.constructor.ConstructorError(
                                "while constructing a mapping", node.start_mark,
                                f"found duplicate key {key!r}", key_node.start_mark)
                        seen.add(key)
                return super().construct_mapping(node, deep)

            def compose_node(self, parent: Any, index: Any) -> Any:
                self.nodes += 1
                if self.nodes > YAML_MAX_NODES:
                    raise yaml.composer.ComposerError(
                        None, None, f"more than {YAML_MAX_NODES:,} YAML nodes (the cap of one file)",
                        self.peek_event().start_mark)
                event = self.peek_event()
                if isinstance(event, yaml.AliasEvent):
                    raise yaml.composer.ComposerError(
                        None, None, f"YAML anchors and aliases are not accepted (alias *{event.anchor})",
                        event.start_mark)
                if getattr(event, "anchor", None) is not None:
                    raise yaml.composer.ComposerError(
                        None, None, f"YAML anchors and aliases are not accepted (anchor &{event.anchor})",
                        event.start_mark)
                return super().compose_node(parent, index)

        _NO_ALIAS_LOADER = NoAliasLoader
    return _NO_ALIAS_LOADER


class Scraper:
    """Base class of every source. Subclasses set `name` and `urls` and implement `parse`.

    `urls[0]` is the primary response; any further URLs are auxiliary responses that
    `parse` receives in `aux`, keyed by the last path segment of the URL (the same name
    a replay directory uses).
    """

    name: ClassVar[str] = ""
    urls: ClassVar[tuple[str, ...]] = ()
    page: ClassVar[str] = ""            # the leaderboard a person reads (links in the report); '' = urls[0]
    min_rows: ClassVar[int] = 1          # fewer kept rows than this is a ScrapeError
    # The share of a table's rows a new snapshot may drop before the shrink guard holds it
    # (storage.shrink_guard.SHRINK_MAX_DROP when None); raise it only for a board that prunes on purpose.
    shrink_max_drop: ClassVar[float | None] = None
    # How the page names a row's model (variant markers, agent systems): data that registry.identity
    # applies (common.naming); handed down with the rows and by `scrapers.naming_rules()`.
    NAMING: ClassVar[NamingRules] = NO_RULES
    # What parsing declared files must give (scrapers/cases.py): set at the end of each class
    CASES: ClassVar[tuple[Case, ...]] = ()
    max_tables: ClassVar[int] = MAX_TABLES      # beyond: the snapshot is stored held (fan-out cap)
    max_releases: ClassVar[int] = MAX_RELEASES  # a release list naming more is held; nor fetched more per run
    parser_version: ClassVar[int] = 1    # bump when parse output changes for the same bytes
    enabled: ClassVar[bool] = True       # collected by `benchwatch run` by default
    produces: ClassVar[str] = "scores"   # "scores", "models" (metadata sources) or "releases" (a release list)
    release_source: ClassVar[str] = ""   # a source whose parse lists this source's releases (meta["releases"])
    secret: ClassVar[str | None] = None        # env variable of the secret a live fetch needs; None: public
    secret_block: ClassVar[str | None] = None  # the Prefect Secret block holding it (flows.secrets resolves both)

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        """Turn one response into rows. Pure: no network, no DuckDB, no clock but `fetched_at`.

        `filename` is the response's file name (URL's last path segment or the ingested
        file's name) for sources whose files do not name their own content (Epoch CSVs).
        """
        raise NotImplementedError

    # --- shared helpers for subclasses -------------------------------------------------
    def error(self, reason: str) -> ScrapeError:
        return ScrapeError(self.name, reason)

    def warn(self, parsed: ParsedSnapshot, message: str) -> None:
        log.warning("[%s] %s", self.name, message)
        parsed.warnings.append(message)

    def plan(self) -> list[str]:
        """The URLs to fetch for one collection (override when they must be discovered)."""
        return list(self.urls)

    def request_headers(self, secret: str) -> dict[str, str]:
        """The request headers that carry `secret` (the resolved value of `self.secret`)."""
        return {}

    def backfill_aux(self, name: str, siblings: Sequence[str]) -> list[str] | None:
        """`benchwatch backfill`: the files among `siblings` (names in the same folder) that are
        `name`'s auxiliary responses, or None when `name` is itself only ever another file's
        auxiliary response (not ingested alone). Pure: names in, names out. Default: alone."""
        return []

    def discover(self, primary: bytes) -> list[str]:
        """URLs the primary response names that are fetched with it (a manifest's entries).

        Pure, like `parse`. A discovered URL that fails is recorded in `fetches` and left out
        of `aux` (the parser says what is missing), never a failure of the source; a malformed
        primary discovers nothing (its parse says why). Default: nothing to discover.
        """
        return []

    def release_urls(self, release: str) -> list[str]:
        """The URLs of one release named by `release_source` (primary first); each cycle fetches
        the releases not stored yet (jobs/collect.py). Default: none."""
        return []

    def response_name(self, url: str) -> str:
        """The key of a response in `aux` and its file name in a replay directory.

        The URL's last path segment unless a source overrides it (discovered URLs that all end
        in the same name, `<dir>/submission.json`, need the directory in the name)."""
        return self.file_name(url)

    def backfill_groups(self, names: Sequence[str]) -> tuple[list[tuple[str, tuple[str, ...]]], dict[str, str]]:
        """How `benchwatch backfill` ingests this source's dated copies of one folder.

        `names` are file names (`<source>[_<variant>]_<YYYY-MM-DD>.<ext>`). Returns the ingests as
        (primary, auxiliary names) and the names not ingested with the one-line reason (reported,
        never silently dropped). Default: every file is one ingest with the auxiliary files
        `backfill_aux` names; a file that is only ever another's auxiliary response is not
        ingested alone.
        """
        ingests = []
        for n in names:
            aux = self.backfill_aux(n, names)
            if aux is not None:
                ingests.append((n, tuple(aux)))
        return ingests, {}

    @staticmethod
    def file_name(url: str) -> str:
        """The replay-directory name of a URL: its last path segment."""
        return urlparse(url).path.rstrip("/").rsplit("/", 1)[-1] or "index.html"

    def text(self, content: bytes) -> str:
        """Bytes as text: UTF-8 (BOM tolerated), else Windows-1252 with a warning.

        Latin-1 would turn cp1252's curly quotes and dashes (0x80-0x9F) into invisible C1
        control characters in stored names; cp1252 maps them to what the author typed. The
        five bytes cp1252 leaves undefined become U+FFFD. The warning reaches the snapshot's
        warnings through `parse_checked`.
        """
        if b"\x00" in content[:65536]:
            raise self.error("binary data where text was expected (NUL bytes): not a leaderboard file")
        try:
            return content.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            message = (f"response is not valid UTF-8 (byte 0x{content[exc.start]:02x} at offset {exc.start}); "
                       "decoded as Windows-1252")
            log.warning("[%s] %s", self.name, message)
            self.__dict__.setdefault("_text_warnings", []).append(message)
            return content.decode("cp1252", errors="replace")

    def reject_html(self, content: bytes) -> None:
        """A data URL that answered with an HTML page (error page, login wall) is an error."""
        head = content[:512].lstrip().lower()
        if head.startswith(b"<!doctype html") or head.startswith(b"<html"):
            raise self.error("expected data but got an HTML page (error page or changed URL)")

    # --- decoding: one error path for every format ---------------------------------------
    # Each helper takes the response bytes (an HTML page is rejected, then the bytes are
    # decoded by `text`) or text a parser already holds (a sniffed or embedded document).
    # A failure is one `ScrapeError` line "[source] <where>: malformed <FORMAT>: <reason>";
    # with `fatal=False` (an optional part of a response) it is a warning and None instead,
    # after yt-dlp's `_parse_json(..., fatal=...)`. The warning goes to `parsed.warnings`
    # when given, else to the snapshot's warnings through `parse_checked`.
    def data_text(self, content: bytes | str) -> str:
        """The text of a data response; an HTML page (error page, login wall) is an error."""
        if isinstance(content, str):
            return content
        self.reject_html(content)
        return self.text(content)

    def json(self, content: bytes | str, *, where: str | None = None, fatal: bool = True,
             parsed: ParsedSnapshot | None = None) -> Any:
        """Decoded JSON (any top-level type; the caller checks the shape it needs)."""
        return self._decode(content, "JSON", lambda text: _json.loads(text, object_pairs_hook=_unique_keys),
                            where=where, fatal=fatal, parsed=parsed)

    def yaml(self, content: bytes | str, *, where: str | None = None, fatal: bool = True,
             parsed: ParsedSnapshot | None = None) -> Any:
        """Decoded YAML with the safe loader (no object construction from scraped bytes) and without
        anchors or aliases: no leaderboard uses them, and nested aliases expand a few hundred bytes
        into gigabytes once a cell is turned into text (a "billion laughs"). A text beyond
        YAML_MAX_BYTES or YAML_MAX_NODES nodes is refused before it is built, and a mapping key
        named twice is an error."""
        import yaml   # only the sources that read YAML
        def read(text: str) -> Any:
            if len(text) > YAML_MAX_BYTES:
                raise Refused(f"{len(text):,} characters, above the size cap of {YAML_MAX_BYTES:,} for YAML "
                              "(read as Python objects)")
            try:
                return yaml.load(text, Loader=_no_alias_loader())   # noqa: S506 - a SafeLoader subclass
            except yaml.YAMLError as exc:   # one error path: a parser's own error becomes a ValueError
                raise ValueError(str(exc)) from exc

        return self._decode(content, "YAML", read, where=where, fatal=fatal, parsed=parsed)

    def js_declarations(self, content: bytes | str, *, where: str | None = None) -> dict[str, Any]:
        """The top-level `const|let|var NAME = <literal>` of a JavaScript/TypeScript data file, read
        as literals (scrapers._jsliteral: the file is never run)."""
        decls = self._decode(content, "JS literal", declarations, where=where, fatal=True, parsed=None)
        assert decls is not None   # fatal: a malformed file raised
        return decls

    @overload
    def csv(self, content: bytes | str, *, where: str | None = ..., fatal: Literal[True] = ...,
            parsed: ParsedSnapshot | None = ...) -> pd.DataFrame: ...
    @overload
    def csv(self, content: bytes | str, *, where: str | None = ..., fatal: bool,
            parsed: ParsedSnapshot | None = ...) -> pd.DataFrame | None: ...

    def csv(self, content: bytes | str, *, where: str | None = None, fatal: bool = True,
            parsed: ParsedSnapshot | None = None) -> pd.DataFrame | None:
        """A CSV with a header as a DataFrame of strings (no NA guessing: cells stay as written).

        A file with a header and no rows is an error too: a leaderboard CSV without rows is a
        truncated or changed file, and the caller would otherwise fail later with a vaguer reason.
        """
        def read(text: str) -> pd.DataFrame:
            df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
            if df.empty:
                raise ValueError("the CSV has a header but no rows")
            return df

        return self._decode(content, "CSV", read, where=where, fatal=fatal, parsed=parsed)

    @overload
    def csv_rows(self, content: bytes | str, *, where: str | None = ..., fatal: Literal[True] = ...,
                 parsed: ParsedSnapshot | None = ...) -> list[list[str]]: ...
    @overload
    def csv_rows(self, content: bytes | str, *, where: str | None = ..., fatal: bool,
                 parsed: ParsedSnapshot | None = ...) -> list[list[str]] | None: ...

    def csv_rows(self, content: bytes | str, *, where: str | None = None, fatal: bool = True,
                 parsed: ParsedSnapshot | None = None) -> list[list[str]] | None:
        """A CSV as lists of cells, blank lines dropped, for files whose header does not match
        their rows (the caller realigns or rejects rows itself). No rows at all is an error."""
        def read(text: str) -> list[list[str]]:
            rows = [r for r in _csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
            if not rows:
                raise ValueError("empty CSV (no header, no rows)")
            return rows

        return self._decode(content, "CSV", read, where=where, fatal=fatal, parsed=parsed)

    def _decode(self, content: bytes | str, kind: str, read: Callable[[str], T], *, where: str | None,
                fatal: bool, parsed: ParsedSnapshot | None) -> T | None:
        text = self.data_text(content)
        try:
            return read(text)
        except (ValueError, _csv.Error) as exc:   # JSONDecodeError, pandas' ParserError/EmptyDataError are ValueErrors
            reason = f"{where + ': ' if where else ''}{'refused' if isinstance(exc, Refused) else 'malformed'} {kind}: {exc}"
            cause = exc
        if fatal:
            raise self.error(reason) from cause
        reason = " ".join(reason.split())
        if parsed is not None:
            self.warn(parsed, reason)
        else:
            log.warning("[%s] %s", self.name, reason)
            self.__dict__.setdefault("_text_warnings", []).append(reason)
        return None

    # --- the checked entry point used by storage and the CLI ---------------------------
    def parse_checked(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
                      filename: str | None = None) -> ParsedSnapshot:
        """`parse`, then the checks that make the result safe to store."""
        if not content or not content.strip():
            raise self.error("empty response")
        self.__dict__["_text_warnings"] = []
        try:
            parsed = self.parse(content, fetched_at=fetched_at, aux=aux or {}, filename=filename)
        except ScrapeError:
            raise
        except Exception as exc:  # a parser crash on changed input is a clear ScrapeError, not a traceback
            raise self.error(f"could not parse response: {type(exc).__name__}: {exc}") from exc
        parsed.source = self.name
        parsed.shrink_max_drop = self.shrink_max_drop
        parsed.naming = self.NAMING
        parsed.warnings[:0] = [w for w in self.__dict__.pop("_text_warnings", []) if w not in parsed.warnings]
        parsed = validate(self.name, parsed, min_rows=self.min_rows, produces=self.produces)
        self._drop_implausible_dates(parsed, utcnow())
        self._hold_beyond_caps(parsed)
        return parsed

    def _drop_implausible_dates(self, parsed: ParsedSnapshot, now: datetime) -> None:
        """Dates outside the plausible range (`common.units.implausible_dates`: a placeholder such as
        9999-12-31, a typo) become NULL with one warning per column: optional fields degrade."""
        for frame_name, columns in DATE_COLUMNS.items():
            frame = getattr(parsed, frame_name)
            for column in columns:
                if column not in frame.columns or not len(frame):
                    continue
                bad = implausible_dates(frame[column], now)
                if bad.any():
                    first = pd.Timestamp(frame.loc[bad, column].iloc[0])
                    frame[column] = frame[column].mask(bad)
                    self.warn(parsed, f"{frame_name}.{column}: {int(bad.sum())} implausible date(s) (e.g. "
                                      f"{first:%Y-%m-%d}; plausible: {date_range_text()}) set to NULL")

    def _hold_beyond_caps(self, parsed: ParsedSnapshot) -> None:
        """Mark a parse that fans out beyond this source's caps to be stored held, with one line:
        more releases than `max_releases` (a release list), or more tables (a benchmark's scores of
        one table_version, a benchmark's item results) than `max_tables`."""
        if self.produces == "releases":
            n, cap, what = len(parsed.meta.get("releases") or []), self.max_releases, "releases"
        else:
            tables = set(zip(parsed.scores["benchmark"], parsed.scores["table_version"]))
            tables |= {(b, "items") for b in parsed.items["benchmark"].unique()}
            n, cap, what = len(tables), self.max_tables, "tables (benchmark x table_version)"
        if n > cap:
            parsed.held_reason = (f"{n} {what} from one file, above this source's cap of {cap}: stored held "
                                  "(a broken or hostile upstream file; `benchwatch accept` releases it)")
            self.warn(parsed, parsed.held_reason)


# The date columns of each frame of a parse, kept within the plausible range (`common.units.DATE_MIN`).
DATE_COLUMNS = {"scores": ("model_release_date", "knowledge_cutoff", "evaluated_at"),
                "models": ("release_date", "knowledge_cutoff"), "items": ("item_date",)}


# The pandas names of the inputs the checks derive from a row (common.checks.DERIVED).
DERIVED_COLUMNS = {"lo": "_lo", "hi": "_hi", "bad_n": "_bad_n", "n_cell": "_n_cell"}


def conformed_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Score rows as `validate` checks them: conformed to SCORE_COLUMNS, an unusable `n_items`
    set to NULL and flagged (`_bad_n`, its cell in `_n_cell`), text defaults filled. A parser that
    rejects rows itself words their `rejects` JSON from this frame (`reject_rows_json`)."""
    raw = frame.reset_index(drop=True)
    bad_n = bad_counts(raw["n_items"]) if "n_items" in raw.columns else pd.Series(False, index=raw.index)
    bad_n_values = raw["n_items"][bad_n].tolist() if bad_n.any() else []
    if bad_n.any():
        raw = raw.copy()
        raw["n_items"] = raw["n_items"].astype("object").where(~bad_n, None)
    scores = conform(raw, SCORE_COLUMNS)
    scores["_bad_n"] = bad_n.to_numpy()
    scores["_n_cell"] = None
    if bad_n.any():
        scores.loc[scores["_bad_n"], "_n_cell"] = [str(v) for v in bad_n_values]
    scores["setting"] = scores["setting"].fillna("")
    scores["excluded_reason"] = scores["excluded_reason"].fillna("")
    scores["table_version"] = scores["table_version"].fillna("")
    scores["is_reference"] = scores["is_reference"].fillna(False)
    return scores


def validate(source: str, parsed: ParsedSnapshot, *, min_rows: int, produces: str) -> ParsedSnapshot:
    """Conform frames, move bad rows to rejects, enforce the row floor.

    Value problems reject the row (kept in `rejects` with the reason), never the snapshot:
    a missing mandatory field, an unknown metric, a score outside its metric's range or not
    finite, a negative or non-finite stderr or one wider than the metric's range, non-finite CI bounds, an `n_items` that is not a
    whole number in [1, 2^31 - 1], and a second row for one (benchmark, model, setting).
    """
    scores = conformed_scores(parsed.scores)
    rejects = [parsed.rejects] if len(parsed.rejects) else []

    def move(rejected: pd.Series, reason) -> None:
        nonlocal scores
        if rejected.any():
            bad = scores[rejected]
            why = reason(bad) if callable(reason) else [reason] * len(bad)
            rejects.append(pd.DataFrame({"row": reject_rows_json(bad), "reason": list(why)}))
            scores = scores[~rejected].reset_index(drop=True)

    # the declared checks (common.checks), in order; the derived inputs are `_`-columns, left out of the JSON
    lo_hi = scores["metric"].map(lambda m: METRIC_RANGES.get(m, (np.nan, np.nan)))
    scores["_lo"] = lo_hi.map(lambda r: r[0]).astype("float64")
    scores["_hi"] = lo_hi.map(lambda r: r[1]).astype("float64")
    for check in SCORE_CHECKS:
        move(mask(check, scores, DERIVED_COLUMNS), lambda b, c=check: reasons(c, b, DERIVED_COLUMNS))
    move(scores.duplicated(list(SCORE_UNIQUE.key), keep="first"), SCORE_UNIQUE.reason)

    parsed.scores = scores.drop(columns=list(DERIVED_COLUMNS.values()))
    parsed.items = conform(parsed.items, ITEM_COLUMNS)
    if len(parsed.items):
        bad_item = parsed.items["score"].isna() | (parsed.items["score"] < 0) | (parsed.items["score"] > 1)
        if bad_item.any():
            rejects.append(pd.DataFrame({"row": parsed.items[bad_item].to_json(orient="records", lines=True, date_format="iso").splitlines(),
                                         "reason": "item score missing or outside [0, 1]"}))
            parsed.items = parsed.items[~bad_item].reset_index(drop=True)
        parsed.items = parsed.items.drop_duplicates(["benchmark", "model", "item_id"], keep="first").reset_index(drop=True)
    parsed.models = conform(parsed.models, MODEL_COLUMNS)
    parsed.rejects = pd.concat(rejects, ignore_index=True) if rejects else parsed.rejects

    kept = (len(parsed.models) if produces == "models" else len(parsed.meta.get("releases") or [])
            if produces == "releases" else len(scores))
    if kept == 0:
        raise ScrapeError(source, "no rows parsed (empty table or changed page layout)")
    if kept < min_rows:
        raise ScrapeError(source, f"only {kept} rows parsed, below this source's floor of {min_rows}")
    n_rej = len(parsed.rejects)
    if n_rej:
        log.warning("[%s] %d row(s) rejected (kept in the rejects table)", source, n_rej)
    return parsed
