"""The phases of one wave, each ending with the ledger saved.

``advance()`` moves the current wave one or more phases forward (or plans the next
wave); a resumed session calls it again and continues from the recorded phase.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from coordinator.errors import GitError, StateError
from coordinator.faults import kill_point
from coordinator.fsutil import atomic_write_text
from coordinator.git.baseline import Baseline
from coordinator.git.checkpoints import Checkpointer
from coordinator.git.history import agent_history
from coordinator.git.repo import pin_base
from coordinator.git.spiral import detect_spiral
from coordinator.git.workspaces import prepare_workspaces
from coordinator.lead.types import AgentAssignment, AgentReview, PreparedWave, WaveReport
from coordinator.model import Enforcement, Isolation, Status, Task, Wave
from coordinator.plan.waves import make_wave
from coordinator.pricing import PriceTable
from coordinator.prompting import render_agent_prompt
from coordinator.runner import AgentRequest
from coordinator.sandbox.agents import agent_sandbox
from coordinator.session.dispatch import AgentJob, AgentRun, dispatch_wave
from coordinator.session.halts import (
    halt_on_base_checks,
    halt_on_start_failures,
    rebase_wave,
    report_checks,
)
from coordinator.session.integrate import (
    advance,
    branch_tip,
    merge_plan,
    record_integration,
    run_integration,
)
from coordinator.session.recovery import Action, decide_recovery
from coordinator.session.review import apply_review
from coordinator.session.tasks import (
    add_pending,
    ready_tasks,
    remove_pending,
    task_from_dict,
    task_to_dict,
)
from coordinator.session.user_files import SetAside, WaveBaselines, restore_command
from coordinator.state.ledger import (
    AgentRecord,
    IssueRef,
    SessionPhase,
    SessionState,
    WavePhase,
    WaveRecord,
)
from coordinator.state.render import run_notes

if TYPE_CHECKING:
    from coordinator.session.engine import Session

__all__ = ["WaveSteps"]


class WaveSteps:
    """Drives the waves of one session through their phases."""

    def __init__(self, session: Session, state: SessionState) -> None:
        self.session = session
        self.state = state
        self.repo = session.repo
        self.config = session.plan.session
        self.events = session.store.events
        self.paths = session.store.paths
        self.progress = session.progress
        self._runs: dict[str, AgentRun] = {}
        self._baselines = WaveBaselines(self.repo, state.session, self.paths.wave_dir)

    # -- the loop ---------------------------------------------------------------------

    async def advance(self) -> bool:
        """Move the session forward by one wave; False when there is nothing left to do."""
        wave = self.state.current_wave
        if wave is None or wave.phase is WavePhase.DONE:
            wave = await self._plan_next()
            if wave is None:
                return False
        if wave.phase is WavePhase.PLANNED:
            await self._prepare(wave)
        if wave.phase is WavePhase.PREPARED:
            await self._dispatch(wave)
        if wave.phase is WavePhase.DISPATCHED:
            await self._salvage(wave)
            if await halt_on_start_failures(self, wave):
                return True
            await self._settle_in_place(wave)
            await self._review(wave)
        if wave.phase is WavePhase.REVIEWED:
            await self._merge(wave)
        if _merged(wave):
            await self._recover(wave)
        return True

    # -- planning ---------------------------------------------------------------------

    async def _plan_next(self) -> WaveRecord | None:
        ready = ready_tasks(self.state)
        if not ready:
            return None
        from coordinator.scope.collisions import plan_collisions

        cap = self.config.max_agents_per_wave
        number = len(self.state.waves) + 1
        first = make_wave(tuple(ready[:cap]), self.config, number=number)
        report = plan_collisions(first, policy=self.config.overlap)
        chosen = report.waves[0]
        wave_plan = make_wave(
            chosen.tasks,
            self.config,
            number=number,
            isolation=chosen.isolation,
            isolation_reason=chosen.isolation_reason,
        )
        if report.colliding:
            self.events.append(
                "scope_collision", wave=number, action=report.action, lines=report.lines()
            )
            self.progress.log("; ".join(report.lines()))
        pin = await anyio.to_thread.run_sync(pin_base, self.repo)
        if pin.branch != self.state.target_branch:
            raise GitError(
                f"the session advances {self.state.target_branch!r} but {pin.branch!r} is "
                f"checked out; `git switch {self.state.target_branch}` and `seawall resume`"
            )
        wave = WaveRecord(
            number=number,
            tasks=[task_to_dict(task) for task in wave_plan.tasks],
            isolation=str(wave_plan.isolation),
            enforcement=str(wave_plan.enforcement),
            max_turns=wave_plan.max_turns,
            isolation_reason=wave_plan.isolation_reason,
            enforcement_reason=wave_plan.enforcement_reason,
            base=pin.commit,
            started_at=round(time.time(), 3),
        )
        self.state.waves.append(wave)
        remove_pending(self.state, wave_plan.task_ids)
        await self.session.save()
        self.events.append(
            "wave_planned",
            wave=number,
            tasks=list(wave_plan.task_ids),
            isolation=wave.isolation,
            enforcement=wave.enforcement,
            base=wave.base,
            reason=wave.isolation_reason,
        )
        return wave

    # -- preparing --------------------------------------------------------------------

    async def _prepare(self, wave: WaveRecord) -> None:
        tasks = [task_from_dict(t) for t in wave.tasks]
        workspaces = await prepare_workspaces(
            self.repo,
            session_id=self.state.session,
            wave=wave.number,
            base=wave.base,
            task_ids=[task.id for task in tasks],
            isolation=Isolation(wave.isolation),
            worktrees_under=self.config.worktree_root,
        )
        wave.agents = []
        for workspace in workspaces:
            wave.agents.append(
                AgentRecord(
                    task=workspace.task_id, workspace=workspace.path, branch=workspace.branch
                )
            )
            if workspace.fallback_reason and wave.fallback is None:
                wave.fallback = workspace.fallback_reason
        if wave.fallback is not None:
            self._fall_back_in_place(wave)
        if wave.isolation == Isolation.NONE:
            await self._take_baseline(wave, tasks)
        self._write_manifest(wave, tasks)
        wave.phase = WavePhase.PREPARED
        await self.session.save()
        kill_point("after-workspaces")

    async def _take_baseline(self, wave: WaveRecord, tasks: list[Task]) -> None:
        scopes = [task.scope for task in tasks]
        await anyio.to_thread.run_sync(
            lambda: self._baselines.take(wave.number, base=wave.base, scopes=scopes)
        )

    def _baseline(self, wave: WaveRecord) -> Baseline | None:
        """The user files recorded before an in-place wave (None for a worktree wave)."""
        return self._baselines.get(wave.number) if wave.isolation == Isolation.NONE else None

    async def _ensure_workspaces(self, wave: WaveRecord) -> None:
        """Before agents run in a resumed wave, make every worktree whole again (a folder
        deleted, a checkout a kill interrupted): no agent has run in them yet."""
        from coordinator.git.workspaces import ensure_ready

        if wave.isolation != Isolation.WORKTREE:
            return
        waiting = [(a.workspace, a.branch) for a in wave.agents if a.run is None]
        remade = await ensure_ready(self.repo, waiting, base=wave.base)
        for path in remade:
            self.events.append("worktree_recreated", wave=wave.number, path=path)
            self.progress.log(f"wave {wave.number}: worktree {path} was not whole; made again")

    def _fall_back_in_place(self, wave: WaveRecord) -> None:
        from coordinator.isolation import explain_enforcement

        enforcement = explain_enforcement(
            isolation=Isolation.NONE, config_enforcement=self.config.enforcement
        )
        wave.isolation = str(Isolation.NONE)
        wave.enforcement = str(enforcement.value)
        wave.enforcement_reason = enforcement.reason
        self.progress.log(
            f"warning: wave {wave.number}: worktrees could not be created, "
            f"running in place: {wave.fallback}"
        )
        self.events.append("worktree_fallback", wave=wave.number, reason=wave.fallback)

    def _write_manifest(self, wave: WaveRecord, tasks: list[Task]) -> None:
        from coordinator.scope.manifest import build_manifest, write_manifest

        manifest = build_manifest(
            session=self.state.session,
            wave=_wave_value(wave, tasks),
            repo=self.repo,
            workspaces={agent.task: Path(agent.workspace) for agent in wave.agents},
            commands=self.config.commands,
            base=wave.base,
            limits=self.config.breakers,
        )
        write_manifest(manifest)
        self._snapshot_repo_state(wave)

    def _snapshot_repo_state(self, wave: WaveRecord) -> None:
        """Record hooks, configuration and refs before agents run (the post-wave check)."""
        from coordinator.scope.repostate import save_snapshot, snapshot, snapshot_path

        path = snapshot_path(self.repo, self.state.session, wave.number)
        save_snapshot(snapshot(self.repo, session=self.state.session), path)

    def _check_repo_state(self, wave: WaveRecord) -> None:
        """Hooks, configuration, refs and pushes an agent changed: reported, and put back
        in strict (what was planted is kept, never deleted)."""
        from coordinator.scope.repostate import AgentTrace, check_wave_state

        name = f"w{wave.number}-transcript.jsonl"
        traces = [
            AgentTrace.of(a.task, a.workspace, self.paths.agent_dir(a.task) / name)
            for a in wave.agents
        ]
        strict = Enforcement(wave.enforcement) is Enforcement.STRICT
        session, number = self.state.session, wave.number
        changes = check_wave_state(
            self.repo, session=session, wave=number, agents=traces, restore_changes=strict
        )
        for change in changes:
            self.events.append("repo_state_changed", wave=wave.number, **change.record())
            self.progress.log(f"wave {wave.number}: {change.describe()}")

    def _close_manifest(self, wave: WaveRecord) -> None:
        from coordinator.scope.manifest import close_manifest, manifest_path

        path = manifest_path(self.repo, self.state.session, wave.number)
        if path.exists():
            close_manifest(path)

    def prompt_for(self, wave: WaveRecord, task: Task, *, workspace: str = "") -> str:
        context = self._dependency_context(task)
        return render_agent_prompt(
            task,
            max_turns=task.max_turns or wave.max_turns,
            scope=task.scope,
            session=self.state.session,
            wave=wave.number,
            extra_context=context,
            workspace=workspace,
        )

    def _dependency_context(self, task: Task) -> str:
        origin = self.state.tasks.get(task.id)
        deps = origin.origin.get("depends_on", []) if origin and origin.origin else []
        missing = []
        for dep in deps:
            record = self.state.tasks.get(dep)
            if record is not None and record.abandoned:
                issue = f" (carried over as issue #{record.issue.number})" if record.issue else ""
                missing.append(f"- {dep} was not completed{issue}")
        if not missing:
            return ""
        return "Dependencies that were NOT completed:\n" + "\n".join(missing)

    # -- dispatching ------------------------------------------------------------------

    async def _dispatch(self, wave: WaveRecord) -> None:
        tasks = {t["id"]: task_from_dict(t) for t in wave.tasks}
        await self._ensure_workspaces(wave)
        # after a halt on agents that could not start, only those run again
        jobs = [
            self._job(wave, agent, tasks[agent.task]) for agent in wave.agents if agent.run is None
        ]
        wave.phase = WavePhase.DISPATCHED
        await self.session.save()
        self.progress.wave_started(
            wave.number, wave.isolation, wave.enforcement, [agent.task for agent in wave.agents]
        )
        from coordinator.session.engine import progress_hook

        async def finished(run: AgentRun) -> None:
            await self._finished(wave, run)

        await dispatch_wave(
            jobs,
            on_event=progress_hook(self.progress),
            on_trip=lambda job, trip: self._on_trip(wave, job.task_id, trip),
            on_finished=finished,
            limit=self.config.max_agents_per_wave,
        )
        self.progress.wave_finished()
        broken = {a.task: a.run for a in wave.agents if a.run and a.run.get("checkpoint_error")}
        if broken:
            first = next(iter(broken.values())) or {}
            raise GitError(
                f"wave {wave.number}: the work of {', '.join(sorted(broken))} could not be "
                f"recorded ({first.get('checkpoint_error')}). Their files are still in their "
                "workspaces; fix the cause, then `seawall resume` records and reviews them."
            )

    def _manifest_fields(self, wave: WaveRecord) -> dict[str, Any]:
        """The wave's manifest and its digest, for the agent's hooks (none: not written)."""
        from coordinator.scope.manifest import manifest_digest, manifest_path

        path = manifest_path(self.repo, self.state.session, wave.number)
        if not path.exists():
            return {}
        return {"manifest": path, "manifest_sha256": manifest_digest(path)}

    def _job(self, wave: WaveRecord, agent: AgentRecord, task: Task) -> AgentJob:
        in_place = wave.isolation == Isolation.NONE
        checkpointer = self._checkpointer(wave, agent)
        transcript = self.paths.agent_dir(task.id) / f"w{wave.number}-transcript.jsonl"
        runner = self.session.runner_for(task)
        request = AgentRequest(
            task_id=task.id,
            prompt=self.prompt_for(wave, task),
            workspace=Path(agent.workspace),
            session=self.state.session,
            wave=wave.number,
            max_turns=task.max_turns or wave.max_turns,
            time_limit=self.config.budgets.agent_minutes * 60.0,
            transcript_path=transcript,
            sandbox=agent_sandbox(
                task_id=task.id,
                workspace=Path(agent.workspace),
                in_place=in_place,
                scope=task.scope,
                enforcement=Enforcement(wave.enforcement),
                accept_hooks_only=self.config.accept_hooks_only,
                starts_processes=runner.starts_processes,
                extra_writable=self.config.sandbox_writable,
            ),
            **self._manifest_fields(wave),
        )

        def scope_paths() -> tuple[str, ...]:
            return self._dirty_in_scope(wave, task) if in_place else ()

        return AgentJob(
            task_id=task.id,
            runner=runner,
            request=request,
            checkpointer=checkpointer,
            limits=self.config.breakers,
            stagnation=self.config.stagnation,
            prices=PriceTable(self.config.prices),
            max_turns=task.max_turns or wave.max_turns,
            wave=wave.number,
            session=self.state.session,
            in_place=in_place,
            repo=self.repo,
            event_log=self.events,
            scope_paths=scope_paths,
        )

    def _dirty_in_scope(self, wave: WaveRecord, task: Task) -> tuple[str, ...]:
        from coordinator.session.user_files import dirty_paths_in_scope

        return dirty_paths_in_scope(
            self.repo, task.scope, session=self.state.session, baseline=self._baseline(wave)
        )

    def _on_trip(self, wave: WaveRecord, task_id: str, trip: Any) -> None:
        """Say so at once; the BLOCKED.md note waits for the agent's end, so it can name
        the ``wip:`` snapshot that then exists (taken as soon as the agent stopped)."""
        self.progress.log(f"W{wave.number} {task_id}: {trip.message(task_id)}")

    async def _finished(self, wave: WaveRecord, run: AgentRun) -> None:
        """Record one agent's outcome at once, in its own small file (not the whole ledger:
        rewriting the ledger per agent would cost O(agents²) in a large wave)."""
        record = wave.agent(run.task_id)
        self._apply_run(record, run)
        if run.trip is not None:
            from coordinator.breakers.blocked import append_blocked_note

            append_blocked_note(
                self.paths.blocked, run.trip, agent=run.task_id, wave=wave.number, snapshot=run.wip
            )
        self.progress.finished(run.task_id, "stopped" if run.truncated else "finished")
        for line in run_notes(run.to_dict()):
            self.progress.log(f"W{wave.number} {run.task_id}: {line}")
        self.events.append(
            "agent_finished",
            wave=wave.number,
            agent=run.task_id,
            truncated=run.truncated,
            stop_reason=run.stop_reason,
            **run.counts,
        )
        if run.checkpoint_error:
            # no run record: a resume then records the agent's files from its workspace
            self.progress.log(f"W{wave.number} {run.task_id}: {run.checkpoint_error}")
        else:
            await self._write_run_record(wave, run)
        kill_point("after-agent-finished")

    async def _write_run_record(self, wave: WaveRecord, run: AgentRun) -> None:
        path = self.run_file(wave, run.task_id)
        text = json.dumps(run.to_dict())
        try:
            await anyio.to_thread.run_sync(lambda: atomic_write_text(path, text))
        except StateError as exc:  # the ledger save after the wave reports the disk
            self.progress.log(f"warning: W{wave.number} {run.task_id}: {exc}")

    def run_file(self, wave: WaveRecord, task_id: str) -> Path:
        return self.paths.agent_dir(task_id) / f"w{wave.number}-run.json"

    def _apply_run(self, record: AgentRecord, run: AgentRun) -> None:
        self._runs[run.task_id] = run
        record.run = run.to_dict()
        record.checkpoint = run.checkpoint
        record.wip = run.wip
        record.touched = list(run.touched)
        record.turns = int(run.counts.get("turns", 0))
        record.tool_calls = int(run.counts.get("tool_calls", 0))
        record.cost_usd = float(run.counts.get("cost_usd", 0.0))
        record.cost_estimated = bool(run.counts.get("cost_estimated", False))
        record.input_tokens = int(run.counts.get("input_tokens", 0))
        record.output_tokens = int(run.counts.get("output_tokens", 0))
        record.elapsed_s = float(run.counts.get("elapsed_s", 0.0))
        record.last_tool = str(run.counts.get("last_tool", ""))
        record.exit_code = run.exit_code
        record.transcript = run.transcript
        record.final_text = run.final_text[-4000:]

    def _checkpointer(self, wave: WaveRecord, agent: AgentRecord) -> Checkpointer:
        return Checkpointer(
            agent.workspace,
            session_id=self.state.session,
            task_id=agent.task,
            base=wave.base,
            mode=_mode(wave.isolation == Isolation.NONE),
            dispatch=f"w{wave.number}",
        )

    async def _snapshot_unreported(
        self, wave: WaveRecord, record: AgentRecord, task: Task, *, wip: str | None = None
    ) -> AgentRun:
        """Checkpoint the files of an agent the coordinator did not run (or lost), and
        with ``wip`` also a ``wip:`` snapshot with that reason."""
        checkpointer = self._checkpointer(wave, record)
        paths = self._dirty_in_scope(wave, task) if wave.isolation == Isolation.NONE else None
        await checkpointer.acheckpoint(paths)
        snapshot = await checkpointer.awip(wip, paths) if wip else None
        return AgentRun(
            task_id=task.id, checkpoint=checkpointer.tip, wip=snapshot, touched=tuple(paths or ())
        )

    async def _stop_orphans(self, task: str) -> None:
        """Stop an agent the dead coordinator left running before salvaging its work."""
        from coordinator.session.orphans import find_orphans, stop_orphans

        groups = await anyio.to_thread.run_sync(find_orphans, self.state.session, task)
        if groups:
            stopped = await anyio.to_thread.run_sync(stop_orphans, groups)
            self.events.append("orphan_stopped", agent=task, process_groups=sorted(stopped))
            self.progress.log(f"{task}: stopped the agent the previous coordinator left running")

    async def _restore_missing_worktree(self, wave: WaveRecord, record: AgentRecord) -> None:
        """A worktree folder deleted under a running wave comes back at its branch's tip
        (the agent's commits); its uncommitted files went with the folder."""
        from coordinator.git.workspaces import restore_worktree

        if wave.isolation != Isolation.WORKTREE or record.branch is None:
            return
        if (Path(record.workspace) / ".git").exists():
            return
        if await restore_worktree(self.repo, record.workspace, record.branch):
            self.events.append("worktree_recreated", wave=wave.number, path=record.workspace)
            self.progress.log(f"{record.task}: its worktree folder was missing; made again")

    async def _salvage(self, wave: WaveRecord) -> None:
        """Agents that never reported (the coordinator died): snapshot their work as wip."""
        tasks = {t["id"]: task_from_dict(t) for t in wave.tasks}
        salvaged = False
        for record in wave.agents:
            if record.run is not None:
                continue
            recorded = self.run_file(wave, record.task)
            if recorded.exists():
                self._apply_run(
                    record, AgentRun.from_dict(record.task, json.loads(recorded.read_text()))
                )
                salvaged = True
                continue
            reason = "the coordinator stopped before the agent reported"
            await self._stop_orphans(record.task)
            await self._restore_missing_worktree(wave, record)
            run = await self._snapshot_unreported(wave, record, tasks[record.task], wip=reason)
            run.truncated, run.stop_reason = True, reason
            self._apply_run(record, run)
            salvaged = True
            self.events.append(
                "agent_salvaged", wave=wave.number, agent=record.task, checkpoint=run.checkpoint
            )
        if salvaged:
            await self.session.save()

    async def _settle_in_place(self, wave: WaveRecord) -> None:
        """Before review, make the shared tree of an in-place wave say only what its
        agents did within their scopes.

        Commits an agent made on the target branch (a git write in a shared tree) are taken
        back: the branch returns to the wave base (compare-and-swap), the commits stay on
        ``refs/seawall/<session>/w<n>-commits``, and their files become the agents' changes
        again. Changes outside every agent's scope are saved on
        ``refs/seawall/<session>/unattributed-w<n>`` and set aside, so nothing is lost and
        the next wave starts from a clean tree.
        """
        if wave.isolation != Isolation.NONE:
            return
        from coordinator.session.integrate import absorb_agent_commits
        from coordinator.session.user_files import kept_paths, set_aside_unattributed

        branch = self.state.target_branch
        absorbed = await anyio.to_thread.run_sync(
            absorb_agent_commits, self.repo, wave, branch, self.state.session
        )
        tasks = {t["id"]: task_from_dict(t) for t in wave.tasks}
        if absorbed:
            self.events.append("agent_commits_absorbed", wave=wave.number, ref=absorbed)
            self.progress.log(
                f"wave {wave.number}: commits made on {branch} by agents in the shared tree "
                f"were taken back (kept on {absorbed}) and reviewed as their changes"
            )
            for record in wave.agents:
                checkpointer = self._checkpointer(wave, record)
                paths = self._dirty_in_scope(wave, tasks[record.task])
                await checkpointer.acheckpoint(paths)
                record.checkpoint = checkpointer.tip or record.checkpoint
                record.touched = sorted(set(record.touched) | set(paths))
        claimed = {path for record in wave.agents for path in record.touched}
        scopes = [tasks[record.task].scope for record in wave.agents]
        kept = kept_paths(self.repo, plan_path=self.state.plan_path)
        aside = await anyio.to_thread.run_sync(
            lambda: set_aside_unattributed(
                self.repo,
                wave,
                self.state.session,
                claimed=claimed,
                scopes=scopes,
                baseline=self._baseline(wave),
                kept=kept,
            )
        )
        if aside is not None:
            self._report_set_aside(wave, aside)
        await self.session.save()

    def _report_set_aside(self, wave: WaveRecord, aside: SetAside) -> None:
        command = restore_command(self.repo, self.state.session, wave.number)
        wave.set_aside = aside.record(command)
        self.events.append("unattributed_changes", wave=wave.number, **wave.set_aside)
        for line in aside.lines(wave.number, command):
            self.progress.log(line)

    # -- review -----------------------------------------------------------------------

    async def _review(self, wave: WaveRecord) -> None:
        tasks = {t["id"]: task_from_dict(t) for t in wave.tasks}
        enforcement = Enforcement(wave.enforcement)
        if enforcement is not Enforcement.OFF:
            await anyio.to_thread.run_sync(self._check_repo_state, wave)
        for record in wave.agents:
            run = self._runs.get(record.task) or AgentRun.from_dict(record.task, record.run or {})
            history = await anyio.to_thread.run_sync(self._history, wave, record)
            verdict = detect_spiral(history, self.config.spiral)
            spiral = None
            if verdict.is_spiral:
                spiral = {
                    "summary": verdict.summary(),
                    "files": list(verdict.files),
                    "commits": list(verdict.commits),
                    "evidence": [signal.describe() for signal in verdict.signals],
                }
            changed = sorted(history.changed_paths)
            record.scope_violations = self._scope_violations(
                tasks[record.task], changed, Path(record.workspace), enforcement
            )
            apply_review(record, run, changed_paths=changed, spiral=spiral)
            if record.scope_violations:
                self.events.append(
                    "scope_violation",
                    wave=wave.number,
                    agent=record.task,
                    files=record.scope_violations,
                    action="left out of the merge"
                    if enforcement is Enforcement.STRICT
                    else "merged, reported",
                )
            self._record_task(record)
        wave.phase = WavePhase.REVIEWED
        await self.session.save()

    def _history(self, wave: WaveRecord, record: AgentRecord) -> Any:
        return agent_history(
            self.repo,
            session_id=self.state.session,
            task_id=record.task,
            base=wave.base,
            branch=record.branch,
            dispatch=f"w{wave.number}",
        )

    def _scope_violations(
        self, task: Task, changed: list[str], workspace: Path, enforcement: Enforcement
    ) -> list[str]:
        from coordinator.scope.verify import verify_changes

        verdict = verify_changes(
            task.id,
            changed,
            scope=task.scope,
            enforcement=enforcement,
            session=self.state.session,
            workspace=workspace,
        )
        return list(verdict.out_of_scope)

    def _record_task(self, record: AgentRecord) -> None:
        from coordinator.breakers.signature import error_signature

        task = self.state.task(record.task)
        task.attempts += 1
        task.status = record.status
        if record.status == Status.SPIRAL:
            task.spirals += 1
        if record.status in (Status.FAILED, Status.BLOCKED):
            task.failures += 1
        if record.error_signature:
            task.signatures.append(error_signature(record.error_signature))
        self.state.cost_usd = round(self.state.cost_usd + record.cost_usd, 6)

    # -- merge ------------------------------------------------------------------------

    async def _merge(self, wave: WaveRecord) -> None:
        branch = self.state.target_branch
        tip = await anyio.to_thread.run_sync(branch_tip, self.repo, branch)
        if wave.integration is not None and tip == wave.integration:
            wave.phase = WavePhase.MERGED  # the advance happened before the crash
            await self.session.save()
            return
        if tip is not None and tip != wave.start and self.session.rebase:
            rebase_wave(self, wave, tip)
        elif tip != wave.start:
            detail = (
                f"{branch} moved from {wave.start[:12]} (the wave's base) to {str(tip)[:12]} "
                "while the wave ran; nothing was merged. `seawall resume --rebase` merges the "
                "wave onto the new tip"
            )
            if self._halt_on_conflict(wave, detail, tip):
                await self.session.save()
                return
            raise GitError(f"{detail}, or move the branch back.")
        plan = merge_plan(self.repo, wave, strict=wave.enforcement == Enforcement.STRICT)

        def integrate() -> Any:
            return run_integration(
                self.repo,
                wave,
                plan,
                session=self.state.session,
                checks=self.config.checks,
                timeout=self.config.budgets.agent_minutes * 60.0,
                on_merged=lambda _merged: kill_point("between-merges"),
                policy=self.config.checks_policy,
            )

        result = await anyio.to_thread.run_sync(integrate)
        fixes = record_integration(wave, result)
        self._record_refusals(wave, plan.refused)
        report_checks(self, wave)
        if not result.mergeable:
            halt_on_base_checks(self, wave)
            await self.session.save()
            return
        self._queue_conflict_fixes(wave, fixes)
        await self.session.save()  # the integration is recorded before the branch moves
        kill_point("before-advance")
        baseline = self._baseline(wave)
        await anyio.to_thread.run_sync(lambda: advance(self.repo, wave, branch, baseline=baseline))
        wave.target_after = wave.integration
        wave.phase = WavePhase.MERGED
        await self.session.save()
        merged = [a.task for a in wave.agents if a.merged]
        self.events.append(
            "merge",
            wave=wave.number,
            integration=wave.integration,
            merged=merged,
            resolutions=wave.resolutions,
            dropped=wave.dropped,
        )
        await self._close_landed(wave)
        line = f"wave {wave.number}: merged {len(merged)} agent(s) into {branch}"
        if wave.resolutions:
            line += f", {len(wave.resolutions)} conflict(s) resolved by policy"
        if wave.dropped:
            line += f", dropped {', '.join(d['task'] for d in wave.dropped)}"
        self.progress.log(line.removeprefix("seawall: "))

    def _record_refusals(self, wave: WaveRecord, refused: tuple[tuple[str, str], ...]) -> None:
        for task, reason in refused:
            wave.dropped.append({"task": task, "reason": reason})
            self.events.append("merge_refused", wave=wave.number, agent=task, reason=reason)
            self.progress.log(f"error: wave {wave.number} {task}: {reason}")

    async def _close_landed(self, wave: WaveRecord) -> None:
        """Landed tasks close their open carryover issues (from this or an earlier session)."""
        from coordinator.carryover import plan_identity
        from coordinator.closing import close_landed_wave

        lines: list[str] = []

        def close() -> Any:
            return close_landed_wave(
                self.session.filer(),
                plan=plan_identity(self.session.plan),
                wave=wave,
                branch=self.state.target_branch,
                events=self.events,
                log=lines.append,
            )

        await anyio.to_thread.run_sync(close)
        for line in lines:
            self.progress.log(line)

    def _halt_on_conflict(self, wave: WaveRecord, detail: str, head: str | None) -> bool:
        """Halt the session on the wave breaker's merge-conflict trigger; the wave stays
        reviewed, so `seawall resume` merges it once the branch is reconciled."""
        from coordinator.session.wave_breaker import merge_conflict

        line = merge_conflict(self.state, wave, self.config, detail, head)
        if line is None:
            return False
        self.state.phase = SessionPhase.HALTED
        self.events.append(
            "breaker_tripped",
            wave=wave.number,
            level="wave",
            trigger="merge-conflict",
            detail=detail,
        )
        self.progress.log(line.removeprefix("seawall: "))
        return True

    def _queue_conflict_fixes(self, wave: WaveRecord, fixes: list[dict[str, Any]]) -> None:
        from coordinator.prompting import render_conflict_fix_prompt

        tasks: list[Task] = []
        for fix in fixes:
            source = next((t for t in wave.tasks if t["id"] == fix["source"]), None)
            prompt = render_conflict_fix_prompt(
                wave=wave.number,
                earlier=", ".join(fix["against"]),
                later=fix["source"],
                hunks=[(path, fix["hunks"]) for path in fix["files"][:1]],
            )
            task = Task(
                id=_fix_id(fix["id"]),
                prompt=prompt,
                scope=tuple(fix["files"]),
                agent=source.get("agent") if source else None,
            )
            tasks.append(task)
            wave.fix_tasks.append(task.id)
            self.state.task(task.id).origin = task_to_dict(task)
        add_pending(self.state, tasks)

    # -- recovery ---------------------------------------------------------------------

    async def _recover(self, wave: WaveRecord) -> None:
        tasks = {t["id"]: task_from_dict(t) for t in wave.tasks}
        if self._all_rate_limited(wave):
            # the provider refused every agent: nothing was tried, so nothing is reworked
            # or carried over; the same tasks wait for `seawall resume`
            add_pending(self.state, [tasks[a.task] for a in wave.agents])
            await self._finish_wave(wave)
            return
        next_tasks: list[Task] = []
        for record in wave.agents:
            task_record = self.state.task(record.task)
            original = task_from_dict(task_record.origin or task_to_dict(tasks[record.task]))
            recovery = decide_recovery(
                original,
                record,
                task_record,
                max_attempts=self.config.wave_breaker.max_rework_cycles + 1,
            )
            if recovery.next_task is not None:
                next_tasks.append(recovery.next_task)
                task_record.rework += 1
            if recovery.action is Action.ESCALATE:
                task_record.abandoned = True
            if recovery.carryover is not None and task_record.issue is None:
                await self._file_carryover(wave, record, original, recovery.carryover)
            elif recovery.carryover is not None and task_record.issue is not None:
                record.issue = IssueRef(
                    number=task_record.issue.number, url=task_record.issue.url, existing=True
                )
            if recovery.action is not Action.NONE:
                record.recovery = recovery.reason
                self.events.append(
                    "recovery",
                    wave=wave.number,
                    agent=record.task,
                    action=str(recovery.action),
                    reason=recovery.reason,
                )
        add_pending(self.state, next_tasks)
        await self._finish_wave(wave)

    async def _finish_wave(self, wave: WaveRecord) -> None:
        await self._cleanup(wave)
        wave.phase = WavePhase.DONE
        wave.finished_at = round(time.time(), 3)
        if self._all_rate_limited(wave):
            self._rate_limit_halt(wave)
        else:
            self._wave_breaker(wave)
        await self.session.save()
        self.events.append(
            "wave_finished", wave=wave.number, statuses={a.task: a.status for a in wave.agents}
        )

    async def _file_carryover(
        self, wave: WaveRecord, record: AgentRecord, task: Task, kind: str
    ) -> None:
        from coordinator.carryover import Carryover, CarryoverKind, plan_identity

        carryover = Carryover(
            plan=plan_identity(self.session.plan),
            task_id=task.id,
            kind=CarryoverKind(kind),
            session=self.state.session,
            wave=wave.number,
            description=task.prompt.strip().splitlines()[0][:80],
            tried=record.summary or (record.reason if record.inferred else ""),
            spiral_verdict=(record.spiral or {}).get("summary", ""),
            error_signature=record.error_signature,
            remaining=record.remaining,
            # where a status was read says nothing; the ground of an inferred one does
            context="\n".join(
                [
                    *([f"The status was inferred: {record.reason}."] if record.inferred else []),
                    *(f"- {n}" for n in run_notes(record.run or {})),
                ]
            ),
            final_text=record.final_text,
            work_ref=self._work_ref(record),
            work_commit=self._work(record),
            base=wave.base,
            plan_path=self.state.plan_path,
        )
        result = await anyio.to_thread.run_sync(self.session.filer().file, carryover)
        kill_point("after-issue-created")
        if result.number is not None and result.skipped != "error":
            ref = IssueRef(number=result.number, url=result.url or "", existing=not result.created)
            record.issue = ref
            self.state.task(task.id).issue = ref
            self.progress.log(f"W{wave.number} {task.id}: {kind} {ref.suffix()}")
        else:
            self.progress.log(f"warning: carryover for {task.id} not filed: {result.error}")
        self.events.append(
            "carryover",
            wave=wave.number,
            agent=task.id,
            kind=kind,
            created=result.created,
            number=result.number,
            skipped=result.skipped,
            error=result.error,
        )
        await self.session.save()

    def _work_ref(self, record: AgentRecord) -> str:
        """The ref that holds an agent's work (its checkpoint ref), or "" when it has none."""
        from coordinator.git.repo import checkpoint_ref

        return checkpoint_ref(self.state.session, record.task) if self._work(record) else ""

    @staticmethod
    def _work(record: AgentRecord) -> str:
        return record.wip or record.checkpoint or ""

    async def _cleanup(self, wave: WaveRecord) -> None:
        self._close_manifest(wave)
        if wave.isolation != Isolation.WORKTREE:
            return
        from coordinator.git.cleanup import prune_worktrees

        paths = [agent.workspace for agent in wave.agents]
        report = await anyio.to_thread.run_sync(lambda: prune_worktrees(self.repo, paths=paths))
        for info in report.kept:
            self.events.append(
                "worktree_kept",
                wave=wave.number,
                agent=info.task,
                path=info.path,
                reason=info.reason,
            )

    def _all_rate_limited(self, wave: WaveRecord) -> bool:
        from coordinator.session.engine import rate_limited

        return rate_limited(self.state) and not any(
            a.status in (Status.DONE, Status.NO_TESTS_NEEDED) for a in wave.agents
        )

    def _rate_limit_halt(self, wave: WaveRecord) -> None:
        """A wave in which every agent failed on a provider rate limit halts the session:
        re-dispatching into a rate limit only burns the rework budget."""
        detail = f"every agent of wave {wave.number} failed on a provider rate limit"
        self.state.phase = SessionPhase.HALTED
        self.state.halt = {"reason": "rate-limited", "detail": detail, "wave": wave.number}
        self.events.append("session_halted", wave=wave.number, reason="rate-limited")
        self.progress.log(f"{detail}; halted. `seawall resume` when the limit has reset")

    def _wave_breaker(self, wave: WaveRecord) -> None:
        from coordinator.session.wave_breaker import evaluate_wave

        line = evaluate_wave(self.state, wave, self.config)
        if line is None:
            return
        if not self.state.pending:
            self.events.append(
                "breaker_not_halting",
                wave=wave.number,
                line=line,
                reason="no work is left; the session ends",
            )
            return
        self.state.phase = SessionPhase.HALTED
        self.events.append(
            "breaker_tripped",
            wave=wave.number,
            level="wave",
            trigger=self.state.breaker.get("trigger"),
            detail=self.state.breaker.get("detail"),
        )
        self.progress.log(line.removeprefix("seawall: "))

    # -- session end ------------------------------------------------------------------

    async def finish_session(self) -> None:
        from coordinator.carryover import (
            covered_tasks,
            file_missing,
            ledger_entries,
            plan_identity,
        )

        if self._has_unfiled():

            def file_all() -> Any:
                ledger = self.state.to_dict()
                return file_missing(
                    self.session.filer(),
                    ledger_entries(ledger),
                    plan=plan_identity(self.session.plan),
                    covered_tasks=covered_tasks(ledger),
                )

            for entry, result in await anyio.to_thread.run_sync(file_all):
                if result.number is None or result.skipped == "error":
                    continue
                ref = IssueRef(
                    number=result.number, url=result.url or "", existing=not result.created
                )
                self.state.task(entry.task).issue = ref
                for wave in self.state.waves:
                    if wave.number == entry.wave:
                        wave.agent(entry.task).issue = ref
        if self.state.pending:
            self.progress.log(f"{len(self.state.pending)} task(s) still pending")
        if self.config.publish is not None:
            await self._publish()
        self.state.phase = SessionPhase.DONE
        await self.session.save()
        self.events.append(
            "session_finished", cost_usd=self.state.cost_usd, waves=len(self.state.waves)
        )

    async def _publish(self) -> None:
        """Push the branch and find or open its pull request (idempotent; never raises)."""
        from coordinator.publish import publish_session, render_summary

        config = self.config.publish
        assert config is not None
        summary = render_summary(self.state)

        def publish() -> Any:
            return publish_session(
                self.session.tracker(),
                config,
                repo=self.repo,
                session_dir=self.paths.root,
                target_branch=self.state.target_branch,
                title=config.title or f"seawall: {self.state.name}",
                summary=summary,
            )

        result = await anyio.to_thread.run_sync(publish)
        request = result.request
        self.events.append(
            "published",
            branch=result.branch,
            base=result.base,
            commit=result.commit,
            number=request.number if request else None,
            url=request.url if request else None,
            created=result.created,
            error=result.error,
        )
        if request is not None:
            verb = "opened" if result.created else "found open"
            self.progress.log(f"published {result.branch}: {verb} #{request.number} {request.url}")
        else:
            self.progress.log(f"warning: publishing {result.branch} failed: {result.error}")

    def _has_unfiled(self) -> bool:
        return any(
            a.status in (Status.SPIRAL, Status.FAILED)
            and a.issue is None
            and self.state.task(a.task).issue is None
            and self.state.task(a.task).status not in (Status.DONE, Status.NO_TESTS_NEEDED)
            for wave in self.state.waves
            for a in wave.agents
        )

    # -- step mode ----------------------------------------------------------------------

    async def prepare_for_lead(self) -> PreparedWave | None:
        wave = self.state.current_wave
        if wave is None or wave.phase is WavePhase.DONE:
            wave = await self._plan_next()
            if wave is None:
                return None  # finishing (and filing) is the lead's next step, not this one
        if wave.phase is WavePhase.PLANNED:
            await self._prepare(wave)
        if wave.phase is WavePhase.PREPARED:
            await self._ensure_workspaces(wave)
            wave.phase = WavePhase.DISPATCHED
            wave.lead = True
            await self.session.save()
        tasks = {t["id"]: task_from_dict(t) for t in wave.tasks}
        return PreparedWave(
            session=self.state.session,
            wave=wave.number,
            isolation=wave.isolation,
            enforcement=wave.enforcement,
            base=wave.base,
            scope_manifest=str(self.paths.wave_dir(wave.number) / "scope.json"),
            agents=tuple(
                AgentAssignment(
                    task=agent.task,
                    workspace=agent.workspace,
                    branch=agent.branch,
                    scope=tuple(tasks[agent.task].scope),
                    max_turns=tasks[agent.task].max_turns or wave.max_turns,
                    prompt=self.prompt_for(wave, tasks[agent.task], workspace=agent.workspace),
                )
                for agent in wave.agents
            ),
        )

    async def review_from_lead(self, outputs: Mapping[str, str]) -> WaveReport:
        wave = self.state.current_wave
        if wave is None or wave.phase is not WavePhase.DISPATCHED:
            raise StateError("no prepared wave is waiting for review; run `wave prepare` first")
        tasks = {t["id"]: task_from_dict(t) for t in wave.tasks}
        for record in wave.agents:
            if record.run is not None:
                continue
            run = await self._snapshot_unreported(wave, record, tasks[record.task])
            text = outputs.get(record.task)
            run.final_text = text or ""
            run.truncated = text is None
            run.stop_reason = "" if text is not None else "no output was given"
            self._apply_run(record, run)
        await self.session.save()
        await self._settle_in_place(wave)
        await self._review(wave)
        await self._merge(wave)
        if _merged(wave):
            await self._recover(wave)
        return WaveReport(
            session=self.state.session,
            wave=wave.number,
            phase=str(self.state.phase),
            agents=tuple(
                AgentReview(
                    task=a.task,
                    status=None if a.status is None else str(a.status),
                    summary=a.summary,
                    remaining=a.remaining,
                    merged=a.merged,
                    issue=None if a.issue is None else a.issue.number,
                )
                for a in wave.agents
            ),
            pending=tuple(t["id"] for t in self.state.pending),
            set_aside=wave.set_aside,
            checks=wave.checks,
            halt=self.state.halt or None,
        )


def _merged(wave: WaveRecord) -> bool:
    return wave.phase is WavePhase.MERGED


def _wave_value(wave: WaveRecord, tasks: list[Task]) -> Wave:
    return Wave(
        number=wave.number,
        tasks=tuple(tasks),
        isolation=Isolation(wave.isolation),
        enforcement=Enforcement(wave.enforcement),
        max_turns=wave.max_turns,
    )


def _mode(in_place: bool) -> Any:
    from coordinator.git.checkpoints import CheckpointMode

    return CheckpointMode.PATHS if in_place else CheckpointMode.TREE


def _fix_id(raw: str) -> str:
    import hashlib

    from coordinator.plan.loader import validate_task_id

    if validate_task_id(raw) is None:
        return raw
    return "fix-" + hashlib.sha256(raw.encode()).hexdigest()[:10]
