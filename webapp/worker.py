"""The job worker: `python -m webapp.worker` runs queued background jobs.

What it does not do: serve HTTP.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import argparse
import logging
import threading

from webapp import create_app
from webapp.jobs import runner
from webapp.jobs.queue import JobQueue, get_queue, set_worker_app

log = logging.getLogger(__name__)


def upkeep_round(queue: JobQueue) -> dict[str, int]:
    """One upkeep round, logged when it did something; an error is logged, never raised."""
    try:
        done = queue.upkeep.run_once()
    except Exception:  # the database may be briefly unreachable: try again next round
        log.exception("job upkeep failed")
        return {}
    if any(done.values()):
        log.info("upkeep: %d job(s) of stopped workers handled, %d expired, %d orphaned folder(s) removed",
                 done["dead"], done["expired"], done["swept"])
    return done


def start_upkeep(queue: JobQueue, seconds: float) -> threading.Event:
    """Run `upkeep_round` every `seconds` on a daemon thread; set the returned event to stop it."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(seconds):
            upkeep_round(queue)

    threading.Thread(target=loop, name="job-upkeep", daemon=True).start()
    return stop


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the BPE Playground's background jobs.")
    parser.add_argument("--workers", type=int, default=None, help="jobs at once (default JOB_WORKERS, 2)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(levelname)s %(name)s: %(message)s")
    app = create_app()
    queue = get_queue(app)
    set_worker_app(app)
    upkeep_round(queue)
    start_upkeep(queue, max(0.5, float(app.config["JOB_UPKEEP_SECONDS"])))
    log.info("queue %s", queue.url.split("@")[-1])
    try:
        queue.consumer(args.workers).run()
    finally:
        runner.STOPPING.set()  # job processes that end from now on were stopped with the worker


if __name__ == "__main__":
    main()
