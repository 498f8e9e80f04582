"""Ctrl-C while ``neurodyn`` or ``flows`` is still importing ends it with 130 and one line."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: the console script, with numpy's import held up until the test sends SIGINT
SCRIPT = textwrap.dedent("""
    import sys, time

    class Slow:
        def find_spec(self, name, path=None, target=None):
            if name == "numpy":
                print("importing numpy", flush=True)
                time.sleep(60)
            return None

    sys.meta_path.insert(0, Slow())
    from {prog}.cli import main
    sys.exit(main())
""")


@pytest.mark.parametrize("prog", ["neurodyn", "flows"])
def test_ctrl_c_while_importing_is_one_line_and_130(prog, tmp_path):
    script = tmp_path / prog
    script.write_text(SCRIPT.format(prog=prog))
    proc = subprocess.Popen([sys.executable, str(script), "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout.readline() == "importing numpy\n"
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert err.splitlines() == [f"{prog}: interrupted while starting; nothing was run"]
