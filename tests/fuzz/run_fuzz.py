#!/usr/bin/env python3
"""Runs one libFuzzer target of tests/fuzz and reports it as TAP.

Usage: run_fuzz.py --target EXE --name NAME --work DIR --max-len N
                   [--seconds S] [--regressions DIR] [-- LIBFUZZER_OPTION...]

In DIR (a directory of the build tree) it keeps:
  seeds/        the seed corpus, written by `EXE --mbc-seeds=...` when missing
                or older than EXE
  corpus/       what long runs found (kept from run to run)
  smoke-corpus/ what the last smoke run found (emptied at its start)
  regressions/  the inputs of --regressions DIR/*.hex, decoded
  artifacts/    crash, timeout and leak inputs
  fuzz.log      libFuzzer's output of the last run
One libFuzzer process replays the seeds, the regressions and the corpus, then
fuzzes for S seconds (--seconds, default 5: a smoke run, which starts from an
empty corpus so that it takes the same time every time). The environment
variable MBC_FUZZ_SECONDS makes it a long run of that many seconds on the kept
corpus. Two TAP cases: the replay, and the fuzzing with its executions,
coverage (cov: edges, ft: features) and corpus size.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import time


def tap(n, ok, text):
    print(f"{'ok' if ok else 'not ok'} {n} - {text}", flush=True)


def hex_inputs(src, dst):
    """Decodes every src/*.hex (hex digits, white space and # comments) into dst."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    count = 0
    for path in sorted(glob.glob(os.path.join(src, "*.hex")) if src else []):
        with open(path) as f:
            digits = "".join("".join(line.split("#", 1)[0].split()) for line in f)
        with open(os.path.join(dst, os.path.basename(path)[:-4]), "wb") as f:
            f.write(bytes.fromhex(digits))
        count += 1
    return count


def make_seeds(exe, seeds):
    stamp = os.path.join(seeds, ".stamp")
    if os.path.exists(stamp) and os.path.getmtime(stamp) >= os.path.getmtime(exe):
        return 0
    tmp = seeds + ".new"
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.monotonic()
    subprocess.run([exe, "--mbc-seeds=" + tmp], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(seeds, ignore_errors=True)
    os.rename(tmp, seeds)
    open(stamp, "w").close()
    return time.monotonic() - t0


def last(pattern, text, default="?"):
    found = re.findall(pattern, text)
    return found[-1] if found else default


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--max-len", type=int, required=True)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--regressions", default="")
    ap.add_argument("options", nargs="*", help="more libFuzzer options")
    args = ap.parse_args()
    long_run = "MBC_FUZZ_SECONDS" in os.environ
    seconds = int(os.environ["MBC_FUZZ_SECONDS"]) if long_run else args.seconds

    print("1..2", flush=True)
    os.makedirs(args.work, exist_ok=True)
    seeds = os.path.join(args.work, "seeds")
    corpus = os.path.join(args.work, "corpus" if long_run else "smoke-corpus")
    if not long_run:
        shutil.rmtree(corpus, ignore_errors=True)
    regress = os.path.join(args.work, "regressions")
    artifacts = os.path.join(args.work, "artifacts")
    for d in (corpus, artifacts):
        os.makedirs(d, exist_ok=True)
    try:
        took = make_seeds(args.target, seeds)
    except subprocess.CalledProcessError as e:
        tap(1, False, f"{args.name}: writing the seeds failed (exit {e.returncode})")
        tap(2, False, f"{args.name}: fuzzing not run")
        return 1
    if took:
        print(f"# {args.name}: seeds written in {took:.1f} s", flush=True)
    n_regress = hex_inputs(args.regressions, regress)
    n_seeds = len([f for f in os.listdir(seeds) if not f.startswith(".")])

    log_path = os.path.join(args.work, "fuzz.log")
    cmd = [args.target, f"-max_total_time={seconds}", f"-max_len={args.max_len}",
           "-timeout=120", "-print_final_stats=1", "-artifact_prefix=" + artifacts + "/"
           ] + args.options + [corpus, seeds, regress]
    print("# " + " ".join(cmd), flush=True)
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    with open(log_path, "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    with open(log_path, errors="replace") as f:
        text = f.read()
    for line in text.splitlines():
        if line.startswith(args.name + ":"):
            print("# " + line, flush=True)

    inited = re.search(r"^#(\d+)\s+INITED", text, re.M)
    replay = f"{args.name}: replayed {n_seeds} seeds, {n_regress} regressions and the corpus"
    if rc != 0:
        report = [line for line in text.splitlines()
                  if "MISMATCH" in line or "ERROR:" in line or "SUMMARY:" in line
                  or "Test unit written" in line]
        for line in list(dict.fromkeys(report))[:6]:
            print("# " + line, flush=True)
        print(f"# full log: {log_path}", flush=True)
    if inited is None:
        tap(1, False, replay + f": failed (exit {rc})")
        tap(2, False, f"{args.name}: fuzzing not run")
        return 1
    tap(1, True, replay + f" ({inited.group(1)} inputs)")
    execs = last(r"stat::number_of_executed_units:\s*(\d+)", text)
    cov = last(r"cov: (\d+)", text)
    ft = last(r"ft: (\d+)", text)
    corp = last(r"corp: (\d+)", text)
    tap(2, rc == 0, f"{args.name}: {seconds} s of fuzzing: {execs} executions, cov {cov},"
        f" ft {ft}, corpus {corp}" + ("" if rc == 0 else f": FAILED (exit {rc})"))
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
