"""Snakemake logger plugin ``attnlearn`` (``--logger attnlearn``, on in profiles/default and
profiles/slurm): a console a user can watch. One line per finished job with what it made and
the run's progress and time left; every ``--logger-attnlearn-every`` seconds (default 30) a line
per running training with its step; a failed job's own error, and again as the run's last
lines. A dry run prints as Snakemake does. The logic is attnlearn.runtime.console."""


import sys
import threading
from dataclasses import dataclass, field

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.settings import LogHandlerSettingsBase

from attnlearn.cost.time_left import keep_times
from attnlearn.runtime.console import Console


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    every: int = field(default=30, metadata={
        "help": "seconds between the lines that show the running trainings' steps (0: none)"})
    classic: bool = field(default=False, metadata={"help": "print every record as Snakemake's own console does"})


class LogHandler(LogHandlerBase):
    def __post_init__(self) -> None:
        classic = bool(getattr(self.settings, "classic", False))
        self.console = Console(dryrun=classic or bool(getattr(self.common_settings, "dryrun", False)),
                               show_failed_logs=bool(getattr(self.common_settings, "show_failed_logs", False)))
        self.stream = sys.stdout if getattr(self.common_settings, "stdout", False) else sys.stderr
        self.out_lock = threading.Lock()  # not Handler.lock, which handle() holds around emit
        self.stopped = threading.Event()
        self._classic = None  # Snakemake's own handler, made on first use (_snakemake)
        every = getattr(self.settings, "every", 30) if self.settings is not None else 30
        if every and not self.console.dryrun:
            threading.Thread(target=self._follow, args=(every,), daemon=True).start()

    def _write(self, lines: list[str]) -> None:
        if lines:
            with self.out_lock:
                self.stream.write("\n".join(lines) + "\n")
                self.stream.flush()

    def _follow(self, every: float) -> None:
        while not self.stopped.wait(every):
            try:
                self._write(self.console.follow())
            except Exception:  # a log being rotated or removed: try again next time
                pass

    def emit(self, record) -> None:
        try:
            lines = self.console.record(record.__dict__)
            if lines is None:  # as Snakemake prints it: its own handler, blank lines and colours included
                with self.out_lock:
                    self._snakemake().emit(record)
            else:
                self._write(lines)
        except Exception:
            self.handleError(record)

    def _snakemake(self):
        """Snakemake's own console handler on this stream, with the formatter Snakemake gave this
        one (set after construction, so made on first use)."""
        if self._classic is None:
            from snakemake.logging import ColorizingTextHandler

            self._classic = ColorizingTextHandler(nocolor=bool(getattr(self.common_settings, "nocolor", False)),
                                                  stream=self.stream, formatter=self.formatter)
        return self._classic

    def close(self) -> None:
        if not self.stopped.is_set():
            self.stopped.set()
            self._write(self.console.summary())
            try:  # the next run here prices these rules' jobs by them (attnlearn.cost.time_left.TIMES_FILE)
                keep_times(self.console.took, partial=self.console.partial)
            except OSError:  # a read-only directory: no times kept, nothing else lost
                pass
        super().close()

    @property
    def writes_to_stream(self) -> bool:
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return False

    @property
    def has_formatter(self) -> bool:
        return False

    @property
    def needs_rulegraph(self) -> bool:
        return False
