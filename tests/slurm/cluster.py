"""A throwaway single-node SLURM cluster on 127.0.0.1 for the tests.

Follows ../shared/docs/SLURM.md (Debian 12's Slurm 22.05 with munge, root, no
systemd, no cgroups). slurm.conf must be /etc/slurm/slurm.conf: the jobstep
plugin drops ``SLURM_CONF`` from the environment of the ``srun`` it starts
inside each job. It is written there only where no other one exists (it
starts with MARKER and is removed on stop); state, spool, logs and pid files
live in a private folder, and the daemons listen on their own ports, so a
stale test cluster never meets a real one. munged is the system one: reused
when it already runs, otherwise started here (and then stopped here). A lock
file makes a second test session wait for the first one's cluster to stop.

Every daemon started here is stopped by the pid in its own pid file (TERM,
then KILL after a grace period), never by name. By hand::

    python tests/slurm/cluster.py start /tmp/mycluster
    python tests/slurm/cluster.py stop /tmp/mycluster
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd")
MUNGE_PID = Path("/run/munge/munged.pid")
SLURM_CONF = Path("/etc/slurm/slurm.conf")
GRES_CONF = SLURM_CONF.with_name("gres.conf")
LOCK = Path("/run/attnlearn-slurm-test.lock")
MARKER = "# attnlearn test cluster (tests/slurm/cluster.py), root: "
CTLD_PORT, SLURMD_PORT = 16817, 16818  # not the defaults: a real cluster on this host keeps its ports


def unavailable() -> str | None:
    """Why a cluster cannot be started here (None when it can)."""
    missing = [p for p in ("slurmctld", "slurmd", "sbatch", "squeue", "munged", "munge", "unmunge")
               if not shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]
    if missing:
        return f"SLURM/munge not installed (missing {', '.join(missing)}); see docs/slurm.md"
    if os.geteuid() != 0:
        return "starting slurmctld/slurmd/munged needs root"
    if SLURM_CONF.exists() and not SLURM_CONF.read_text().startswith(MARKER):
        return f"{SLURM_CONF} exists and is not a test cluster's: not touching a real SLURM installation"
    return None


def _sbin(name):
    return shutil.which(name, path="/usr/sbin:/sbin:" + os.environ.get("PATH", "")) or name


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return None


def _wait_for(check, timeout, what):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if check():
            return
        time.sleep(0.2)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


def stop_pid(pid: int, grace: float = 15.0) -> None:
    """TERM one process by pid, KILL it if it is still there after ``grace`` seconds."""
    if not _alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    t0 = time.monotonic()
    while _alive(pid) and time.monotonic() - t0 < grace:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


class Cluster:
    """One node (this host, all its CPUs, 90% of its memory, one pretend GPU) in two partitions:
    ``debug`` (the default) and ``gpu`` (profiles/slurm's GPU partition)."""

    def __init__(self, root):
        self.root = Path(root).resolve()
        self.conf = SLURM_CONF
        self.node = socket.gethostname().split(".")[0]
        self.cpus = os.cpu_count() or 1
        self.mem_mb = int(0.9 * _mem_total_kb() / 1024)
        self.env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
        self.state = self.root / "started.json"  # daemons started here: name -> pid file
        self._lock = None

    # -- running client commands against this cluster ---------------------------------------
    def run(self, *cmd, check=True, timeout=60) -> subprocess.CompletedProcess:
        proc = subprocess.run(list(map(str, cmd)), env=self.env, capture_output=True, text=True,
                              timeout=timeout)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
        return proc

    def jobs(self) -> dict[str, str]:
        """Job id -> state of every job slurmctld still knows (finished ones for MinJobAge)."""
        out = self.run("squeue", "-h", "-t", "all", "-o", "%i %T").stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def log_tail(self, n=40) -> str:
        parts = []
        for name in ("slurmctld.log", "slurmd.log"):
            path = self.root / "log" / name
            if path.exists():
                parts.append(f"--- {path}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-n:]))
        return "\n".join(parts)

    # -- start / stop ------------------------------------------------------------------------
    def _write_config(self):
        for d in ("state", "spool", "log", "run"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        # slurmctld runs as user slurm: it must reach its state, log and pid folders
        self.root.chmod(0o755)
        for d in ("state", "log", "run"):
            shutil.chown(self.root / d, "slurm", "slurm")
        r = self.root
        self.conf.parent.mkdir(parents=True, exist_ok=True)
        self.conf.write_text(f"""\
{MARKER}{r}
ClusterName=attnlearn-test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={CTLD_PORT}
SlurmdPort={SLURMD_PORT}
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmctldPidFile={r}/run/slurmctld.pid
SlurmdPidFile={r}/run/slurmd.pid
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={r}/log/jobcomp.log
MinJobAge=300
KillWait=5
GresTypes=gpu
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.mem_mb} Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP DefMemPerCPU=1000
PartitionName=gpu Nodes={self.node} MaxTime=INFINITE State=UP DefMemPerCPU=1000
""")
        # One pretend GPU (its "device" is /dev/null): jobs asking for a GPU get scheduled and find
        # no CUDA device, so GPU requests can be tested on a machine without one.
        GRES_CONF.write_text(MARKER + f"{r}\nName=gpu File=/dev/null\n")

    def _record(self, name, pidfile):
        started = json.loads(self.state.read_text()) if self.state.exists() else {}
        started[name] = str(pidfile)
        self.state.write_text(json.dumps(started))

    def _munge_works(self) -> bool:
        try:
            enc = subprocess.run(["munge", "-n"], capture_output=True, timeout=10)
            return enc.returncode == 0 and subprocess.run(["unmunge"], input=enc.stdout, capture_output=True,
                                                          timeout=10).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    def _start_munge(self):
        if self._munge_works():
            return  # a munged is already running: use it, and leave it running
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            if shutil.which("mungekey", path="/usr/sbin:/usr/bin"):
                subprocess.run([_sbin("mungekey"), "--create"], check=True)
            else:
                subprocess.run([_sbin("create-munge-key")], check=True, input=b"y\n")
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
        subprocess.run(["install", "-d", "-o", "munge", "-g", "munge", "/run/munge"], check=True)
        stale = _read_pid(MUNGE_PID)
        if stale is None or not _alive(stale):
            MUNGE_PID.unlink(missing_ok=True)
        subprocess.run(["runuser", "-u", "munge", "--", _sbin("munged")], check=True)  # forks
        _wait_for(lambda: _read_pid(MUNGE_PID) is not None, 10, "munged's pid file")
        self._record("munged", MUNGE_PID)
        _wait_for(self._munge_works, 15, "munge -n | unmunge")

    def _take_lock(self, timeout):
        self._lock = open(LOCK, "w")
        t0 = time.monotonic()
        while True:
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() - t0 > timeout:
                    raise RuntimeError(f"another test cluster holds {LOCK} for more than {timeout} s")
                time.sleep(1)

    def _stop_stale(self):
        """A test cluster left behind by a killed session: stop its daemons (by their pid files)."""
        if SLURM_CONF.exists():
            first = SLURM_CONF.read_text().splitlines()[0]
            if first.startswith(MARKER):
                Cluster(first[len(MARKER):]).stop()

    def start(self, timeout=60, lock_timeout=1200):
        self._take_lock(lock_timeout)
        try:
            self._stop_stale()
            self._write_config()
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, timeout=60):
        self._start_munge()
        for name in DAEMONS:
            pidfile = self.root / "run" / f"{name}.pid"
            proc = subprocess.run([_sbin(name), "-f", str(self.conf)], env=self.env, capture_output=True,
                                  text=True)  # both fork into the background
            if proc.returncode != 0:
                raise RuntimeError(f"{name} did not start: {proc.stderr}\n{self.log_tail()}")
            _wait_for(lambda: _read_pid(pidfile) is not None, 15, f"{name}'s pid file\n{self.log_tail()}")
            self._record(name, pidfile)

        def idle():
            state = self.run("sinfo", "-h", "-o", "%T", check=False).stdout.strip()
            if state.startswith(("drain", "inval")):
                raise RuntimeError(f"the node is {state}")
            return state == "idle"

        try:
            _wait_for(idle, timeout, "the node to be idle")
        except RuntimeError as e:
            raise RuntimeError(f"{e}\n{self.log_tail()}") from None

    def stop(self):
        """Cancel what still runs, then TERM each daemon started here by its pid (newest first)."""
        started = json.loads(self.state.read_text()) if self.state.exists() else {}
        if "slurmctld" in started:
            try:
                self.run("scancel", "--full", "-u", "root", check=False, timeout=20)
                _wait_for(lambda: not any(s in ("RUNNING", "COMPLETING", "CONFIGURING")
                                          for s in self.jobs().values()), 30, "jobs to end")
            except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError):
                pass  # stop the daemons regardless
        for name in ("slurmd", "slurmctld", "munged"):
            if name in started:
                pid = _read_pid(Path(started[name]))
                if pid is not None:
                    stop_pid(pid)
        self.state.unlink(missing_ok=True)
        for conf in (SLURM_CONF, GRES_CONF):
            if conf.exists() and conf.read_text().splitlines()[:1] == [MARKER + str(self.root)]:
                conf.unlink()
        if self._lock is not None:
            self._lock.close()  # releases the lock
            self._lock = None


def _mem_total_kb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1])
    raise RuntimeError("no MemTotal in /proc/meminfo")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        sys.exit(__doc__)
    cluster = Cluster(sys.argv[2])
    if sys.argv[1] == "start":
        why = unavailable()
        if why:
            sys.exit(why)
        cluster.start()
        print(f"cluster up: {cluster.conf}; stop it with: python {sys.argv[0]} stop {sys.argv[2]}")
    else:
        cluster.stop()
