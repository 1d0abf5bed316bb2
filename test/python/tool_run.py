"""The Python test scripts' way of running the project's programs: a command that must succeed, its
output returned, and on failure its output printed and the script stopped naming the command."""
import subprocess


def run_ok(*args, stderr_too=False):
    """Runs args (converted to str); returns stdout (and stderr after it with stderr_too)."""
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAILED: {' '.join(map(str, args))} exited {r.returncode}")
    return r.stdout + r.stderr if stderr_too else r.stdout
