"""`course grade <a> --dask ADDRESS | --dask-local N`: one Dask task per submission.

The batch is the single-machine one (``Grader.grade_batch``) on Dask's executor instead of
local threads. Each Dask worker builds the same ``Grader`` from the course folder, keeps its
sandboxes (and the instructor's reference run) per worker thread, and calls
``Grader.grade_one_safely`` for each student it is handed. A task returns the plain
``SubmissionRow``; the client alone writes to the gradebook, one transaction per submission
as it arrives (``GradebookWriter.commit``), so PostgreSQL sees one writer and a killed batch
resumes like any other (state files, digests).

What the workers need: the same course folder at the same path (a shared volume: the
submissions and solutions/), the same Python
environment with bubblewrap, and the scheduler's address. They never talk to the
gradebook. See docs/deploy.md.
"""
from __future__ import annotations

import atexit
import functools
import threading
from dataclasses import dataclass

from coursebase.model import Course

from .grade import Grader, GradingError, SubmissionRow, _cap_own_memory
from .sandbox import Limits, Sandbox


@dataclass(frozen=True)
class WorkerJob:
    """What a worker needs to rebuild the client's Grader: small and picklable."""
    root: str
    assignment: str
    limits: Limits
    spec_digest: str


class DaskGrader(Grader):
    """A Grader whose submissions are graded by the workers of a Dask cluster."""

    def __init__(self, course: Course, assignment: str, client, **options):
        super().__init__(course, assignment, **options)
        self.client = client

    def run(self, progress_stream=None) -> list[SubmissionRow]:
        from .results import GradebookWriter

        students = self.submissions()
        writer = GradebookWriter(self.course, self.assignment, self.spec)
        try:
            pending, rows = self.split_done(writer, students)
            if pending:
                job = WorkerJob(str(self.course.root), self.assignment, self.limits, self.spec_digest)
                # Task keys (shown in the scheduler) are the function's name and a random id.
                executor = self.client.get_executor(pure=False)
                try:
                    self.grade_batch(writer, pending, rows, executor, functools.partial(grade_on_worker, job),
                                     f"grading {self.assignment} on Dask", progress_stream)
                finally:
                    executor.shutdown(wait=False)
                    # the batch is over: every worker closes its sandboxes for it
                    self.client.run(release_job, job, on_error="ignore")
        finally:
            writer.close()
        return [rows[s] for s in students]


# -- on a worker ----------------------------------------------------------------------------

# (worker thread, job) -> (grader, sandbox, reference): a sandbox lives as long as its batch.
_prepared: dict[tuple[int, tuple], tuple] = {}
_prepared_lock = threading.Lock()
_memory_capped = False


def _job_key(job: WorkerJob) -> tuple:
    return (job.root, job.assignment, job.spec_digest, repr(job.limits))


def _prepare(job: WorkerJob):
    global _memory_capped
    key = (threading.get_ident(), _job_key(job))
    with _prepared_lock:
        if key in _prepared:
            return _prepared[key]
    course = Course.load(job.root)  # the gradebook URL is the client's business
    grader = Grader(course, job.assignment, workers=1, limits=job.limits)
    if grader.spec_digest != job.spec_digest:
        raise GradingError(
            f"this worker reads a different solutions/{job.assignment} than the client did under "
            f"{job.root}: every worker must see the course folder the client grades (a shared volume)")
    with _prepared_lock:
        # Judging here runs under the same cap as on one machine. It lasts as long as this
        # worker process, so it is set only once the worker is known to grade this batch.
        if not _memory_capped:
            _cap_own_memory()
            _memory_capped = True
    sandboxes = {kind: Sandbox(job.limits, kind) for kind in grader.kinds}
    # the reference run computes expectations with torch, as on one machine
    reference_box = sandboxes.get(True) or Sandbox(job.limits, True)
    try:
        reference_box.start()
        reference = grader.reference(reference_box)
        grader._check_reference(reference)  # a broken reference fails every task of the batch
    except BaseException:
        for box in {*sandboxes.values(), reference_box}:
            box.close()
        raise
    if True not in sandboxes:
        reference_box.close()
    with _prepared_lock:
        _prepared[key] = (grader, sandboxes, reference)
    return _prepared[key]


def grade_on_worker(job: WorkerJob, student: str) -> SubmissionRow:
    """Grade one submission in this worker thread's sandbox: the single-machine path."""
    grader, sandboxes, reference = _prepare(job)
    return grader.grade_one_safely(sandboxes, student, reference)


def release_job(job: WorkerJob | None = None) -> int:
    """Close this worker's sandboxes of ``job`` (all of them when None); how many it closed."""
    with _prepared_lock:
        keys = [key for key in _prepared if job is None or key[1] == _job_key(job)]
        entries = [_prepared.pop(key) for key in keys]
    for _, sandboxes, _ in entries:
        for sandbox in sandboxes.values():
            sandbox.close()
    return len(entries)


atexit.register(release_job)


# -- the cluster ----------------------------------------------------------------------------

class ClusterError(RuntimeError):
    """No Dask cluster to grade on; the message says why."""


def connect(address: str | None = None, local_workers: int | None = None, timeout: float = 20.0):
    """A Dask client: to the scheduler at ``address``, or to a new cluster of ``local_workers``
    processes on this machine (loopback only, one thread each). Returns (client, cluster)."""
    from distributed import Client, LocalCluster

    if address:
        try:
            return Client(address, timeout=timeout), None
        except (OSError, TimeoutError) as error:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    if not local_workers or local_workers < 1:
        raise ClusterError(f"--dask-local needs a number of workers of at least 1, not {local_workers}")
    cluster = LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None, worker_dashboard_address=None)
    return Client(cluster), cluster


def grade_on_dask(course: Course, assignment: str, address: str | None = None,
                  local_workers: int | None = None, connect_timeout: float = 20.0,
                  **options) -> list[SubmissionRow]:
    """Grade ``assignment`` on a Dask cluster; the gradebook is written here, on the client."""
    grader = DaskGrader(course, assignment, client=None, **options)  # fails early on a bad assignment
    client, cluster = connect(address, local_workers, connect_timeout)
    try:
        try:
            client.wait_for_workers(1, timeout=60)
        except TimeoutError:
            raise ClusterError(f"the Dask scheduler at {client.scheduler.address} has no workers") from None
        grader.client = client
        return grader.run()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

