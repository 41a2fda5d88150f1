"""A background job's state (:class:`Job`), apart from the endpoints in :mod:`._jobs`, so that
every page that starts jobs can use it without importing the others."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from .._runtime import CancelToken, cancellable
from ..exceptions import BuildCancelled, IncrowdError
from ._sessions import Dataset, Session

_log = logging.getLogger("incrowd.web._jobs")  # the name its messages had before the split
_FINISHED_KEPT = 20  # finished jobs a session keeps for polling; the oldest go first


class Job:
    """One job's state, written by its worker thread and read by the polling requests."""

    def __init__(self, job_id: str):
        self.id = job_id
        self.token = CancelToken()
        self.status = "queued"
        self.result: dict[str, Any] | None = None
        self.error: str | None = None
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Stop the job at its kernel's next check (any thread). A job still queued is marked
        cancelled at once; its worker, when it gets one, does nothing."""
        self.token.cancel()
        with self._lock:
            if self.status == "queued":
                self.status = "cancelled"

    @property
    def finished(self) -> bool:
        return self.status in ("done", "cancelled", "failed")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"job": self.id, "status": self.status, "progress": self.token.progress}
        if self.status == "done":
            out["result"] = self.result
        if self.status == "failed":
            out["error"] = self.error
        return out

    def run(self, session: Session, ds: Dataset, req: Any,
            work: Callable[[Session, Dataset, Any], dict[str, Any]],
            what: str = "microaggregation") -> None:
        """Run ``work(session, ds, req)`` under this job's cancel token, keeping its answer or
        its error."""
        with self._lock:
            if self.status != "queued":
                return
            self.status = "running"
        try:
            with cancellable(self.token):
                result = work(session, ds, req)
        except BuildCancelled:
            self.status = "cancelled"
        except IncrowdError as exc:
            self.error, self.status = str(exc), "failed"
        except Exception:  # the job reports it; the worker thread must not die silently
            _log.exception("%s job %s failed", what, self.id)
            self.error, self.status = f"internal error in the {what}", "failed"
        else:
            if self.token.progress is not None:
                self.token.progress = 1.0
            self.result, self.status = result, "done"


def forget_finished(session: Session) -> None:
    finished = [j for j in session.jobs.values() if j.finished]
    for job in finished[: max(0, len(finished) - _FINISHED_KEPT)]:
        session.jobs.pop(job.id, None)
