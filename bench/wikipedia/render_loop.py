"""The Wikipedia scan's per-page work alone, for interleaved before/after measurements of the renderer.

    python bench/wikipedia/render_loop.py DUMP.xml                      # CPU seconds of the loop
    for i in 1 2 3; do                                                  # interleaved pairs
        PYTHONPATH=/path/to/other/checkout/src python bench/wikipedia/render_loop.py DUMP.xml
        python bench/wikipedia/render_loop.py DUMP.xml
    done

The dump's pages are parsed first (not timed); then `PageRows.add` (redirects, rendering, the
disambiguation check, rows) runs over them as the stage runs it, one `PageRows` per ninth of the
pages (as nine map tasks of 8 MB on the 64 MB benchmark dump), with the cyclic GC paused as in map
tasks. It prints the process CPU seconds of that loop (less sensitive than wall time to other jobs
on a shared machine) and the pages and article links it saw. `PYTHONPATH` picks the code measured:
a checkout's `src/` (with its compiled extensions next to it) instead of this one.
"""

from __future__ import annotations

import argparse
import gc
import json
import time


def main() -> None:
    """Parse, then time the per-page loop."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", help="a plain-XML MediaWiki dump (bench/wikipedia/gen_xml.py makes one)")
    parser.add_argument("--tasks", type=int, default=9, help="map tasks to split the pages into")
    args = parser.parse_args()

    from entbench.builders.wikipedia.stages import scan
    from entbench.readers.mediawiki.xml_dump import read_dump

    gc.disable()
    site, stream = read_dump(args.dump)
    pages = list(stream)
    per_task = len(pages) // args.tasks + 1
    links = 0
    start = time.process_time()
    for first in range(0, len(pages), per_task):
        rows = scan.PageRows(scan.WikipediaScanParams(), site, 4)
        for seq, page in enumerate(pages[first : first + per_task]):
            rows.add(page, seq)
        links += rows.stats.get("links_article", 0)
    seconds = time.process_time() - start
    print(json.dumps({"cpu_seconds": round(seconds, 3), "pages": len(pages), "links": links}))


if __name__ == "__main__":
    main()
