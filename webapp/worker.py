"""The job worker: `python -m webapp.worker` runs queued background jobs.

It builds the app from the same settings as the web server
(`PLAYGROUND_DATABASE_URL`, `PLAYGROUND_QUEUE_URL`, the `JOB_*` budgets), puts
back on the queue any job a dead worker left "running", and runs a Huey
consumer with `JOB_WORKERS` threads; each job runs in its own child process
(webapp.jobs.runner.run_in_child). Start as many workers as you like, on this or
other machines, as long as they share the database and the queue.
SIGINT stops it after the running jobs; SIGTERM stops it at once (the job
processes die with it; their jobs are re-queued by the next worker start).

What it does not do: serve HTTP.
"""

from __future__ import annotations

import argparse
import logging

from webapp import create_app
from webapp.jobs.queue import get_queue, set_worker_app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the BPE Playground's background jobs.")
    parser.add_argument("--workers", type=int, default=None, help="jobs at once (default JOB_WORKERS, 2)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(levelname)s %(name)s: %(message)s")
    app = create_app()
    queue = get_queue(app)
    set_worker_app(app)
    again = queue.requeue_stale()
    if again:
        logging.getLogger(__name__).info("re-queued %d job(s) left running by a stopped worker", len(again))
    logging.getLogger(__name__).info("queue %s", queue.url.split("@")[-1])
    queue.consumer(args.workers).run()


if __name__ == "__main__":
    main()
