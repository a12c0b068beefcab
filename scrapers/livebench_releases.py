"""LiveBench's release list: the benchmark repository's changelog, one `### YYYY-MM-DD` heading per
release (https://raw.githubusercontent.com/LiveBench/LiveBench/main/changelog.md).

Not collected on its own: `livebench` names it as its `release_source`, and each cycle of
`livebench` reads this list and fetches every listed release it has not stored yet
(`table_<release>.csv` + `categories_<release>.json`, jobs/collect.py). Copies of the changelog can
be ingested (backfill): a snapshot with no score rows whose `meta["releases"]` is the list.

Output: `meta["releases"]` = the releases as the site's files name them (`2025_11_25`), newest
first. Traps, handled without knowing them in advance: a truncated heading (`### 2025-04-0`) is
no date and is skipped with a warning; a heading that is a note rather than a release
(`### 2025-10-03`, a re-run of an existing board) or a release the site never published a table
for is still a candidate: the discovery step reports it once no table appears, and stops trying.
A release that never got a heading (2025-01-25) is not discovered here.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Mapping

from scrapers._markdown import heading_title
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import parse_date
from scrapers.cases import Case, snap

_DATE = re.compile(r"^\[?v?(\d{4})-(\d{2})-(\d{2})\]?\b")


LB_OLD = ["2024_11_25", "2024_08_31", "2024_07_26", "2024_06_24", "2024_06_12"]   # releases before 2025


class LivebenchReleasesScraper(Scraper):
    name = "livebench_releases"
    urls = ("https://raw.githubusercontent.com/LiveBench/LiveBench/main/changelog.md",)
    produces = "releases"
    enabled = False          # read by livebench's release discovery, not collected on its own

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        text = self.data_text(content)
        releases: list[str] = []
        for line in text.splitlines():
            title = heading_title(line)
            if title is None:
                continue
            m = _DATE.match(title)
            if m is None:
                if re.match(r"^\d{4}-\d", title):
                    self.warn(parsed, f"heading {title!r} is not a full date (truncated?); skipped")
                continue
            if parse_date(f"{m[1]}-{m[2]}-{m[3]}") is None:
                self.warn(parsed, f"heading {title!r} is not a valid date; skipped")
                continue
            release = f"{m[1]}_{m[2]}_{m[3]}"
            if release not in releases:
                releases.append(release)
        if not releases:
            raise self.error("no '### YYYY-MM-DD' release heading in the changelog (changed layout?)")
        parsed.meta["releases"] = sorted(releases, reverse=True)
        return parsed

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("livebench_releases/changelog_2025-11-26.md", replay="changelog.md", scores=0,
             meta={"releases": ["2025_11_25", "2025_10_03", "2024_11_25"]}),
        Case("livebench_releases/changelog_2025-04-07.md", scores=0,   # truncated heading
             meta={"releases": ["2024_11_25"]}, warnings=("'2025-04-0' is not a full date",)),
        snap("livebench_releases/livebench_changelog_2024-12-04.md", 0,   # '### 2024-06-31'
             meta={"releases": LB_OLD[:4]}, warnings=("'2024-06-31' is not a valid date",)),
        snap("livebench_releases/livebench_changelog_2025-04-07.md", 0,
             meta={"releases": LB_OLD}, warnings=("'2025-04-0' is not a full date",)),
        snap("livebench_releases/livebench_changelog_2025-05-30.md", 0,
             meta={"releases": ["2025_05_30", "2025_04_25", "2025_04_02"] + LB_OLD}),
        snap("livebench_releases/livebench_changelog_2025-11-10.md", 0,   # 2025-10-03: a re-run note
             meta={"releases": ["2025_10_03", "2025_05_30", "2025_04_25", "2025_04_02"] + LB_OLD}),
        snap("livebench_releases/livebench_changelog_2025-11-26.md", 0,
             meta={"releases": ["2025_11_25", "2025_10_03", "2025_05_30", "2025_04_25", "2025_04_02"] + LB_OLD}),
    )
