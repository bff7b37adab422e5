"""A small network of worker hosts on this machine: one network namespace per host, joined to
the root namespace by a veth pair, and a PostgreSQL cluster of the test's own (`initdb` into a
temporary directory) listening on the host side of every pair.

Traffic stays on the addresses assigned here (10.<s>.<i>.1 on the host side, 10.<s>.<i>.2 in
namespace <i>, where <s> is a block of 10.0.0.0/8 no interface of this machine uses yet, so two
labs built at once, by two test sessions, do not share addresses) and on the cluster's loopback
port. `NetLab.close()` removes every namespace, link and directory it made, and stops the
cluster.
"""

from __future__ import annotations

import contextlib
import glob
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=check)


def _free_subnet() -> str:
    """A 10.<s> block (a /16) that no address of this machine is in, picked at random."""
    shown = _run("ip", "-o", "-4", "addr", "show", check=False).stdout
    used = {int(m) for m in re.findall(r"inet 10\.(\d+)\.", shown)}
    free = [s for s in range(128, 255) if s not in used]
    if not free:
        raise RuntimeError("every 10.128-254 block is in use on this machine")
    return f"10.{random.choice(free)}"


def unavailable() -> str | None:
    """Why a lab cannot be built here (None when it can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        return "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        return "no `postgres` user to run the test cluster as"
    probe = f"flprobe{uuid.uuid4().hex[:6]}"
    made = _run("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` is not permitted here: {made.stderr.strip()}"
    _run("ip", "netns", "del", probe, check=False)
    return None


@dataclass
class NetLab:
    hosts: int
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:5])
    port: int = 0
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="frostline-lab-")))
    made_ns: list[str] = field(default_factory=list)
    made_links: list[str] = field(default_factory=list)
    cluster: bool = False
    subnet: str = field(default_factory=_free_subnet)

    # names and addresses -------------------------------------------------------------------
    def ns(self, i: int) -> str:
        return f"fl{self.tag}w{i}"

    def host_link(self, i: int) -> str:
        return f"fl{self.tag}h{i}"  # <= 15 characters: Linux's limit for a link name

    def host_addr(self, i: int) -> str:
        return f"{self.subnet}.{i}.1"

    def url(self, i: int | None = None) -> str:
        """The store URL from namespace `i` (None: from the root namespace, over loopback)."""
        host = "127.0.0.1" if i is None else self.host_addr(i)
        return f"postgresql://postgres@{host}:{self.port}/postgres"

    # building ------------------------------------------------------------------------------
    def open(self) -> NetLab:
        try:
            for i in range(self.hosts):
                self._host(i)
            self._cluster()
        except BaseException:
            self.close()
            raise
        return self

    def _host(self, i: int) -> None:
        ns, host, inner = self.ns(i), self.host_link(i), f"fl{self.tag}n{i}"
        _run("ip", "netns", "add", ns)
        self.made_ns.append(ns)
        _run("ip", "link", "add", host, "type", "veth", "peer", "name", inner)
        self.made_links.append(host)
        _run("ip", "link", "set", inner, "netns", ns)
        _run("ip", "addr", "add", f"{self.host_addr(i)}/30", "dev", host)
        _run("ip", "link", "set", host, "up")
        for cmd in (("ip", "link", "set", "lo", "up"),
                    ("ip", "addr", "add", f"{self.subnet}.{i}.2/30", "dev", inner),
                    ("ip", "link", "set", inner, "up")):
            _run("ip", "netns", "exec", ns, *cmd)

    def _cluster(self) -> None:
        import socket

        bindir = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
        data = self.root / "data"
        data.mkdir()
        os.chmod(self.root, 0o755)
        shutil.chown(data, "postgres", "postgres")
        as_pg = ("runuser", "-u", "postgres", "--")
        _run(*as_pg, f"{bindir}/initdb", "-D", str(data), "-A", "trust", "-U", "postgres",
             "--no-sync")
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {self.subnet}.0.0/16 trust\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        listen = ",".join(["127.0.0.1", *(self.host_addr(i) for i in range(self.hosts))])
        opts = (f"-p {self.port} -k {data} -c listen_addresses='{listen}' -c fsync=off "
                "-c max_connections=300 -c shared_buffers=64MB")
        _run(*as_pg, f"{bindir}/pg_ctl", "-D", str(data), "-o", opts, "-l",
             str(data / "server.log"), "-w", "-t", "60", "start")
        self.cluster = True
        self._bindir = bindir

    # faults --------------------------------------------------------------------------------
    def cut(self, i: int) -> None:
        _run("ip", "link", "set", self.host_link(i), "down")

    def mend(self, i: int) -> None:
        _run("ip", "link", "set", self.host_link(i), "up")

    def exec_argv(self, i: int, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.ns(i), *argv]

    # teardown ------------------------------------------------------------------------------
    def close(self) -> None:
        if self.cluster:
            data = self.root / "data"
            _run("runuser", "-u", "postgres", "--", f"{self._bindir}/pg_ctl", "-D", str(data),
                 "-m", "immediate", "-w", "stop", check=False)
            self.cluster = False
        for link in self.made_links:
            _run("ip", "link", "del", link, check=False)
        for ns in self.made_ns:
            for _ in range(20):  # a process still inside keeps the namespace busy briefly
                if _run("ip", "netns", "del", ns, check=False).returncode == 0:
                    break
                time.sleep(0.1)
        self.made_links.clear()
        self.made_ns.clear()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)

    def leftovers(self) -> list[str]:
        """Namespaces and links of this lab still present (empty after `close`)."""
        names = _run("ip", "netns", "list", check=False).stdout
        links = _run("ip", "-o", "link", "show", check=False).stdout
        return [line for line in (names + links).splitlines() if f"fl{self.tag}" in line]
