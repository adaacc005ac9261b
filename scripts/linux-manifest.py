#!/usr/bin/env python3
"""Record (or check) testbenches/linux/programs.json by running every workload under QEMU.

    scripts/linux-manifest.py            # record: stdout, exit status, instruction counts,
                                         #   syscalls; rewrites programs.json
    scripts/linux-manifest.py --check    # run each workload once (no counting) and compare
                                         #   exit status and stdout with programs.json
    scripts/linux-manifest.py --syscalls # re-record only qemu_syscalls (QEMU's -strace)
    scripts/linux-manifest.py --readme   # only rewrite the tables of testbenches/linux/README.md
    scripts/linux-manifest.py -j 2 ...   # two workloads at a time (default 1)
    scripts/linux-manifest.py --only gzip9,dc ...   # a subset (record keeps the others' rows)

The workload table below is the single source of the set: names, binaries, argv, stdin.
Every run is `env -i qemu-arm -cpu pxa270 ARGV...` in the working directory RUNDIR (below:
a fixed-path stand-in for testbenches/linux with a copy of bin/), stdin from the listed file or /dev/null, stdout to a file (never a
terminal). argv[0] is the binary's path relative to testbenches/linux (`bin/busybox`,
`bin/sha256_arm`), as QEMU passes it and as testbenches/programs does; busybox finds the
applet in argv[1]. Instruction counts are the exec-log lines with one instruction per
translation block (`-singlestep`, `-one-insn-per-tb` from QEMU 8.1), as
scripts/build-programs.sh counts them. Needs the fetched busybox, the built programs and the
generated inputs (scripts/setup.sh), qemu-user, python3.
"""
import argparse
import concurrent.futures
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINUX = os.path.join(ROOT, "testbenches", "linux")
MANIFEST = os.path.join(LINUX, "programs.json")
BB = "bin/busybox"
# Where the workloads run. glibc's start-up reads readlink("/proc/self/exe") (QEMU answers
# with the real path of the ELF) and copies it, so the instruction count grows with the
# length of that path (about ten instructions a byte). To make the counts independent of
# where the repository is checked out, every run happens in this fixed directory: a copy of
# bin/ and symbolic links to data/ and scripts/. A model reproduces the recorded counts when
# its readlink("/proc/self/exe") returns RUNDIR + "/" + elf.
RUNDIR = "/tmp/streamtrace-linux"

# name, argv (argv[0] = binary), stdin (or None)
BUSYBOX = [
    ("gzip9", [BB, "gzip", "-9", "-c", "data/small.txt"], None),
    ("gunzip", [BB, "gunzip", "-c", "data/text.txt.gz"], None),
    ("bzip2", [BB, "bzip2", "-c", "data/short.txt"], None),
    ("bunzip2", [BB, "bunzip2", "-c", "data/small.txt.bz2"], None),
    ("sort", [BB, "sort", "data/words.txt"], None),
    ("sort_n", [BB, "sort", "-n", "data/numbers.txt"], None),
    ("awk_wordfreq", [BB, "awk", "-f", "scripts/wordfreq.awk", "data/short.txt"], None),
    ("awk_cities", [BB, "awk", "-F,", "-f", "scripts/cities.awk", "data/records.csv"], None),
    ("sed", [BB, "sed", "-f", "scripts/edit.sed", "data/short.txt"], None),
    ("grep_e", [BB, "grep", "-E", "-n", r"\<(th|wh)[a-z]*(er|ing|ed)\>|[0-9]{4}[.,?]", "data/small.txt"], None),
    ("md5sum", [BB, "md5sum", "data/text.txt", "data/blob.bin"], None),
    ("sha256sum", [BB, "sha256sum", "data/small.txt", "data/blob.bin"], None),
    ("tar_xo", [BB, "tar", "-xOf", "data/tree.tar"], None),
    ("dc", [BB, "dc", "scripts/calc.dc"], None),
    ("wc", [BB, "wc", "data/text.txt", "data/records.csv"], None),
    ("cmp_l", [BB, "cmp", "-l", "data/blob.bin", "data/blob2.bin"], None),
    ("hexdump", [BB, "hexdump", "-C", "-n", "65536", "data/blob.bin"], None),
    ("cut", [BB, "cut", "-d,", "-f2,3,5", "data/records.csv"], None),
    ("uniq_c", [BB, "uniq", "-c", "data/words.sorted.txt"], None),
    ("tr_words", [BB, "tr", "-cs", "A-Za-z", r"\n"], "data/text.txt"),
]

# Our programs (testbenches/linux/build.sh): name, arguments; each in ARM and Thumb.
OWN = [
    ("sha256", ["512"]),
    ("dijkstra", ["24", "80"]),
    ("qsort_structs", ["6000"]),
    ("jpeg_dct", ["256", "192"]),
    ("aes", ["800"]),
    ("adpcm", ["80000"]),
    ("bitcount", ["30000"]),
    ("stringsearch", ["48", "lorem", "zz"]),
]


def workloads():
    out = []
    for name, argv, stdin in BUSYBOX:
        out.append({"name": name, "kind": "busybox", "elf": BB, "state": "arm", "argv": argv, "stdin": stdin})
    for name, args in OWN:
        for state in ("arm", "thumb"):
            elf = f"bin/{name}_{state}"
            out.append({"name": f"{name}_{state}", "kind": "own", "elf": elf, "state": state,
                        "argv": [elf] + args, "stdin": None})
    for w in out:
        assert not any(re.search(r"\s", a) for a in w["argv"]), f"{w['name']}: argv with white space"
    return out


def qemu_one_insn_flag():
    v = subprocess.run(["qemu-arm", "--version"], capture_output=True, text=True, check=True).stdout
    major, minor = map(int, re.search(r"version (\d+)\.(\d+)", v).groups())
    return ("-one-insn-per-tb" if (major, minor) >= (8, 1) else "-singlestep"), v.splitlines()[0]


def make_rundir():
    """(Re)make RUNDIR; returns the lock file that keeps another recorder or check out of it
    until this process ends."""
    lock = open(RUNDIR + ".lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(f"linux-manifest: another run holds {RUNDIR}.lock")
    shutil.rmtree(RUNDIR, ignore_errors=True)
    os.makedirs(os.path.join(RUNDIR, "bin"))
    for name in os.listdir(os.path.join(LINUX, "bin")):
        shutil.copy2(os.path.join(LINUX, "bin", name), os.path.join(RUNDIR, "bin", name))
    for d in ("data", "scripts"):
        os.symlink(os.path.join(LINUX, d), os.path.join(RUNDIR, d))
    return lock


def stdin_of(w):
    return open(os.path.join(LINUX, w["stdin"]), "rb") if w["stdin"] else subprocess.DEVNULL


def run_plain(w):
    p = subprocess.run(["env", "-i", "qemu-arm", "-cpu", "pxa270", *w["argv"]], cwd=RUNDIR,
                       stdin=stdin_of(w), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def count_lines(w, one):
    """(exec-log lines, of which at the kuser helper page 0xffff0fxx). The log goes through
    a pipe to awk, whose count is all we keep (the log of 100 M instructions is ~6 GB)."""
    stdin = f"<{w['stdin']}" if w["stdin"] else "</dev/null"
    quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in w["argv"])
    sh = (f"env -i qemu-arm -cpu pxa270 {one} -d exec,nochain -D /dev/fd/3 {quoted} "
          f"3>&1 >/dev/null 2>/dev/null {stdin} | "
          "awk '/^Trace/ { n++; if (index($4, \"/ffff0\")) k++ } END { print n + 0, k + 0 }'")
    out = subprocess.run(["bash", "-c", sh], cwd=RUNDIR, capture_output=True, text=True, check=True).stdout
    n, k = map(int, out.split())
    return n, k


def syscalls(w):
    """Syscall name -> count, from QEMU's -strace (on stderr). QEMU 7.2 prints the calls it
    has no name for as `Unknown syscall N` (398 = rseq on ARM): named `syscall_N` here."""
    p = subprocess.run(["env", "-i", "qemu-arm", "-cpu", "pxa270", "-strace", *w["argv"]], cwd=RUNDIR,
                       stdin=stdin_of(w), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    counts = {}
    for line in p.stderr.decode(errors="replace").splitlines():
        m = re.match(r"^\d+ (\w+)\(", line) or re.match(r"^\d+ Unknown (syscall) (\d+)$", line)
        if m:
            name = "_".join(m.groups())
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def record(w, one):
    code, out, err = run_plain(w)
    n, k = count_lines(w, one)
    row = {
        "name": w["name"],
        "kind": w["kind"],
        "elf": w["elf"],
        "state": w["state"],
        "argv": w["argv"],
        "cmdline": " ".join(w["argv"]),
    }
    if w["stdin"]:
        row["stdin"] = w["stdin"]
    if w["kind"] == "own":
        row["sha256"] = sha256_file(os.path.join(LINUX, w["elf"]))
    row.update({
        "exit_code": code,
        "stdout_sha256": hashlib.sha256(out).hexdigest(),
        "stdout_bytes": len(out),
        "stderr_bytes": len(err),
        "qemu_instructions": n,
        "qemu_kuser_lines": k,
        "qemu_syscalls": syscalls(w),
    })
    print(f"{w['name']}: exit {code}, {len(out)} stdout bytes, {n} instructions ({k} kuser)",
          file=sys.stderr, flush=True)
    return row


def check(w, rows):
    code, out, _ = run_plain(w)
    want = rows.get(w["name"])
    if want is None:
        return f"{w['name']}: not in programs.json"
    got = (code, hashlib.sha256(out).hexdigest(), len(out))
    exp = (want["exit_code"], want["stdout_sha256"], want["stdout_bytes"])
    if got != exp or want["argv"] != w["argv"]:
        return f"{w['name']}: exit/stdout sha256/bytes {got}, recorded {exp}"
    print(f"{w['name']}: ok", file=sys.stderr, flush=True)
    return None


def tool_version(pkg):
    p = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else "unknown"


README = os.path.join(LINUX, "README.md")
BEGIN = "<!-- generated by scripts/linux-manifest.py --readme from programs.json: do not edit -->"
END = "<!-- end of generated tables -->"


def readme_tables(doc):
    """The system-call union and the workload table of README.md, from the manifest."""
    progs = doc["programs"]
    union = {}
    for p in progs:
        for k, v in p["qemu_syscalls"].items():
            calls, users = union.setdefault(k, [0, []])
            union[k][0] = calls + v
            users.append(p["name"])
    out = ["## System calls", "",
           f"The union over the {len(progs)} workloads (`qemu-arm -strace`; each entry's "
           "`qemu_syscalls` has its own counts):", "",
           "| system call | calls, all workloads | workloads using it |", "|---|---|---|"]
    for k, (calls, users) in sorted(union.items()):
        who = "all" if len(users) == len(progs) else (
            ", ".join(users) if len(users) <= 4 else f"{len(users)} workloads")
        out.append(f"| `{k}` | {calls} | {who} |")
    out += ["", "## Workloads", "",
            "| name | argv after argv[0] | stdin | instructions | kuser lines | stdout bytes | exit |",
            "|---|---|---|---|---|---|---|"]
    for p in progs:
        args = " ".join(p["argv"][1:]).replace("|", "\\|")
        out.append(f"| `{p['name']}` | `{args}` | {p.get('stdin', '')} | {p['qemu_instructions']:,} | "
                   f"{p['qemu_kuser_lines']:,} | {p['stdout_bytes']:,} | {p['exit_code']} |")
    total = sum(p["qemu_instructions"] for p in progs)
    out += ["", f"Total: {total:,} instructions. `cmp -l` exits with 1 because its files differ."]
    return "\n".join(out)


def write_readme(doc):
    with open(README) as f:
        text = f.read()
    a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
    with open(README, "w") as f:
        f.write(text[:a] + "\n" + readme_tables(doc) + "\n" + text[b:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--syscalls", action="store_true")
    ap.add_argument("--readme", action="store_true")
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--only", default="")
    a = ap.parse_args()

    with open(MANIFEST) as f:
        old = json.load(f)
    if a.readme:
        write_readme(old)
        return
    rows = {p["name"]: p for p in old.get("programs", [])}
    todo = workloads()
    if a.only:
        names = set(a.only.split(","))
        todo = [w for w in todo if w["name"] in names]
        if len(todo) != len(names):
            sys.exit("linux-manifest: unknown names in --only")

    lock = make_rundir()  # noqa: F841 (held until exit)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
        if a.check:
            errors = [e for e in ex.map(lambda w: check(w, rows), todo) if e]
            for e in errors:
                print("MISMATCH", e, file=sys.stderr)
            print(f"linux-manifest: {len(todo) - len(errors)} of {len(todo)} workloads as recorded",
                  file=sys.stderr)
            sys.exit(1 if errors else 0)
        one, qver = qemu_one_insn_flag()
        if a.syscalls:
            for w, calls in zip(todo, ex.map(syscalls, todo)):
                if w["name"] not in rows:
                    sys.exit(f"linux-manifest: {w['name']} is not recorded yet")
                rows[w["name"]]["qemu_syscalls"] = calls
        else:
            for row in ex.map(lambda w: record(w, one), todo):
                rows[row["name"]] = row

    inputs = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "linux-inputs.py"), "--print"],
                            capture_output=True, text=True, check=True).stdout
    doc = {
        "about": "Linux user-mode workloads of streamtrace (static ARM EABI ELFs, svc 0 syscalls): "
                 "run from testbenches/linux as `env -i qemu-arm -cpu pxa270 ARGV...` with stdin "
                 "from `stdin` (else /dev/null); argv[0] is the ELF's path relative to "
                 "testbenches/linux, busybox takes the applet from argv[1]. Outputs, exit "
                 "statuses, instruction counts and syscalls recorded by scripts/linux-manifest.py. "
                 "qemu_instructions counts QEMU's exec lines with one instruction per TB (a Thumb "
                 "BL/BLX pair is one line; a call of a kuser helper at 0xffff0fxx is one line, "
                 "counted apart in qemu_kuser_lines). Third-party binaries are fetched, our "
                 "programs built and the inputs generated by scripts/setup.sh; see README.md.",
        "qemu_version": qver,
        # QEMU passes the host's uid through: busybox drops privileges (getgid32, setgid32,
        # setuid32, a few hundred instructions) unless getuid32 returns 0.
        "recorded_uid": os.getuid(),
        # The directory the workloads ran in (see RUNDIR in scripts/linux-manifest.py): QEMU
        # answers readlink("/proc/self/exe") with rundir/elf, and the counts depend on its length.
        "rundir": RUNDIR,
        "busybox": old["busybox"],
        "toolchain": {
            "gcc-arm-linux-gnueabi": tool_version("gcc-12-arm-linux-gnueabi"),
            "libc6-dev-armel-cross": tool_version("libc6-dev-armel-cross"),
            "binutils-arm-linux-gnueabi": tool_version("binutils-arm-linux-gnueabi"),
            "cflags": "-static -O2 -march=armv5te -marm|-mthumb, then strip --strip-debug",
        },
        "inputs": {path: sha for sha, path in (l.split() for l in inputs.splitlines())},
        "programs": [rows[w["name"]] for w in workloads() if w["name"] in rows],
    }
    with open(MANIFEST, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    write_readme(doc)
    print("wrote", MANIFEST, "and the tables of", README, file=sys.stderr)


if __name__ == "__main__":
    main()
