"""The "compare" job kind: /api/compare for a text or a typed merge list too long for a request.

The thresholds are /api/encode's (`JOB_ENCODE_CHARS`, `JOB_ENCODE_RULES`):
a long text, or a long typed merge list on either side, goes to a job.
`compare_job` makes the cheap checks first (over LIMIT_TEXT_CHARS or
LIMIT_RULES stays a 400) and submits the body; the job computes the very
answer the inline path gives (webapp.web.compare.comparing.compare_json).

What it does not do: answer HTTP (webapp.web.compare.routes) or encode.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Mapping

from webapp.infra import compound_inputs, inputs
from webapp.jobs import queue
from webapp.jobs.registry import Cancelled, JobOutput, Progress, job_kind
from webapp.jobs.store import Job
from webapp.jobs.thresholds import rule_count, text_chars
from webapp.web.compare.comparing import compare_json

KIND = "compare"


def compare_is_heavy(data: Mapping[str, Any]) -> bool:
    """Over the thresholds /api/encode hands to a job: a long text, or a long typed merge list on a side."""
    if text_chars(data.get("text")) > queue.threshold("JOB_ENCODE_CHARS"):
        return True
    specs = [data.get(name) for name in ("a", "b")]
    return any(isinstance(s, dict) and rule_count(s.get("merges")) > queue.threshold("JOB_ENCODE_RULES")
               for s in specs)



def compare_job(data: Mapping[str, Any], limits: inputs.Limits) -> Job | None:
    """The job for an /api/compare body (text, a and b present) over the thresholds, else None."""
    if not compare_is_heavy(data):
        return None
    # Cheap checks first, as /api/encode: over LIMIT_TEXT_CHARS or LIMIT_RULES stays a 400.
    inputs.read_text(data["text"], limits)
    for name in ("a", "b"):
        spec = data[name]
        if not isinstance(spec, dict):
            compound_inputs.read_tokenizer_spec(spec, name, limits)  # raises: not an object
        elif isinstance(spec.get("merges"), list) and len(spec["merges"]) > limits.rules:
            compound_inputs.read_tokenizer_spec(spec, name, limits)  # raises the limit's message
    return queue.submit(KIND, {"body": dict(data), "limits": asdict(limits)})


@job_kind(KIND, label="Comparing")
def run_compare(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """/api/compare for a long text, in the job process (opened files need the worker's app)."""
    progress(0.1, "encoding the text twice")
    with queue.worker_app().app_context():
        return JobOutput(compare_json(params["body"], inputs.limits_of(params)))
