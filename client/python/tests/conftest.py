"""Fixtures: the real gpureduce-server (GPUREDUCE_SERVER_BINARY), started as a user would, and
certificates that openssl makes for the run; at the end, where NumPy's answers differ from the
service's (reference.DIFFERENCES)."""

import os
import subprocess
import tempfile
import time
import zlib

import grpc
import numpy
import pytest

import gpureduce


# Fresh random data every run, repeatable: GPUREDUCE_TEST_SEED names the run's base seed.
BASE_SEED = int(os.environ.get("GPUREDUCE_TEST_SEED", time.time_ns() % 2**32))


@pytest.fixture
def rng(request):
    """A generator seeded per test from the run's base seed (printed on failure); a test module
    may define its own."""
    seed = BASE_SEED ^ zlib.crc32(request.node.nodeid.encode())
    print(f"GPUREDUCE_TEST_SEED={BASE_SEED} (this test's seed {seed})")
    return numpy.random.default_rng(seed)


def _read(path):
    """The file's text, stripped; empty where it does not exist yet."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


class Server:
    """A gpureduce-server on a free loopback port; `target` is where it listens."""

    def __init__(self, directory, flags=(), client_options=None):
        binary = os.environ["GPUREDUCE_SERVER_BINARY"]
        port_file = os.path.join(directory, f"port-{time.monotonic_ns()}")
        self.log = open(port_file + ".log", "w")
        backend = os.environ.get("GPUREDUCE_TEST_BACKEND", "cpu")
        # The server reads GPUREDUCE_<FLAG> as flags: none of the caller's may leak in.
        env = {name: value for name, value in os.environ.items()
               if not name.startswith("GPUREDUCE_") or name.startswith("GPUREDUCE_TEST_")}
        # GPUREDUCE_TEST_SERVER_FLAGS: more flags for every server (e.g. --auto-cpu-below=0, so
        # that a CUDA server runs small requests on its GPU too).
        extra = os.environ.get("GPUREDUCE_TEST_SERVER_FLAGS", "").split()
        self.process = subprocess.Popen(
            [binary, f"--backend={backend}", "--listen=127.0.0.1:0", f"--port-file={port_file}",
             *extra, *flags], stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while not _read(port_file):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gpureduce-server did not start: {_read(self.log.name)}")
            time.sleep(0.02)
        self.target = f"127.0.0.1:{_read(port_file)}"
        # Ready once the backend's self-check has passed: until then Reduce is UNAVAILABLE.
        with gpureduce.Client(self.target, **(client_options or {})) as client:
            while True:
                try:
                    client.kernels()
                    client.reduce([1.0])
                    break
                except gpureduce.Error as error:
                    if error.code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)

    def stop(self):
        self.process.terminate()
        assert self.process.wait(timeout=30) == 0, "SIGTERM must end the server with exit code 0"
        self.log.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries the tail of its server's log: a transport error (a closed
    connection, say) is explained there, if anywhere."""
    outcome = yield
    report = outcome.get_result()
    server = item.funcargs.get("server") if hasattr(item, "funcargs") else None
    if report.failed and isinstance(server, Server):
        server.log.flush()
        tail = _read(server.log.name).splitlines()[-40:]
        report.sections.append(("gpureduce-server log (last 40 lines)", "\n".join(tail)))


@pytest.fixture(scope="session")
def workdir():
    with tempfile.TemporaryDirectory(prefix="gpureduce-python-") as directory:
        yield directory


@pytest.fixture(scope="session")
def server(workdir):
    started = Server(workdir)
    yield started
    started.stop()


@pytest.fixture(scope="session")
def certificates(workdir):
    """A CA and a server certificate it signed for 127.0.0.1, as PEM files in `workdir`."""
    script = """set -e
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1; }
key ca.key; openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=ca
key server.key; openssl req -new -key server.key -out server.csr -subj /CN=server
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \\
  -extfile server.ext -out server.pem
printf 'python-test-token\\n' >tokens
"""
    result = subprocess.run(["bash", "-c", script], cwd=workdir, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"openssl could not make the test certificates: {result.stderr}")
    return {name: os.path.join(workdir, name) for name in ("ca.pem", "server.pem", "server.key",
                                                            "tokens")}


@pytest.fixture(scope="session")
def shm_server(workdir):
    """A server that accepts shared-memory regions (--allow-shared-memory), also on a Unix socket
    (`unix_socket`), where its plaintext clients then send their shared-memory calls."""
    socket = os.path.join(workdir, "shm-server.sock")
    started = Server(workdir, ["--allow-shared-memory", f"--listen-unix={socket}"])
    started.unix_socket = socket
    yield started
    started.stop()


def pytest_terminal_summary(terminalreporter):
    """Where NumPy's answer differed from the service's exactly rounded one, by dtype and op."""
    import reference  # pylint: disable=import-outside-toplevel
    if not reference.DIFFERENCES:
        return
    groups = {}
    for dtype, op, size, case, got, numpy_answer in reference.DIFFERENCES:
        groups.setdefault((dtype, op), []).append((size, case, got, numpy_answer))
    terminalreporter.section("where NumPy's answer differs (the service's is exactly rounded)")
    for (dtype, op), cases in sorted(groups.items()):
        size, case, got, numpy_answer = max(cases, key=lambda c: c[0])
        sizes = ",".join(str(n) for n in sorted({c[0] for c in cases}))
        terminalreporter.write_line(
            f"{dtype:9} {op:12} {len(cases):3} cases (sizes {sizes}); e.g. size {size} {case}: "
            f"service {got!r}, NumPy {numpy_answer!r}")
