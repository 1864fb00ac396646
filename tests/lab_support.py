"""Start a ``bloomedu lab`` for a test, read its URL, ask its server, stop it by its process ID
(tests/test_lab.py, and tests/test_wheel.py in the environment the wheel was installed into)."""

import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

URL = re.compile(r"http://127\.0\.0\.1:(\d+)/lab\?token=(\w+)")


def isolated_jupyter(state: Path) -> dict:
    """This environment, with Jupyter's own folders (runtime, config, settings) in ``state``,
    none of this machine's user settings, and no display to open a browser on."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    return dict(env, JUPYTER_RUNTIME_DIR=str(state / "runtime"),
                JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_DATA_DIR=str(state / "data"),
                IPYTHONDIR=str(state / "ipython"),
                JUPYTERLAB_SETTINGS_DIR=str(state / "settings"),
                JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"))


def start_lab(command: list[str], cwd: Path, env: dict, timeout: float = 180):
    """Start ``command``, read its output until a lab URL; returns (process, lines, match)."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while not URL.search("".join(lines)):
        if process.poll() is not None:
            reader.join(timeout=10)
            pytest.fail(f"{command} exited with {process.returncode}:\n" + "".join(lines)[-3000:])
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("no URL printed:\n" + "".join(lines)[-3000:])
        time.sleep(0.1)
    process.reader = reader
    return process, lines, URL.search("".join(lines))


def get(url: str, token: str, path: str):
    request = urllib.request.Request(url.split("/lab?")[0] + path,
                                     headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read()


def stop(process: subprocess.Popen) -> int:
    """SIGTERM to the command's own process ID, as a user's kill would send."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(timeout=30)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
