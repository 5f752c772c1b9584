# python3 gpu/swap_classes.py NEW.jar CLASSES.tgz OUT.jar
# The Boot jar NEW.jar with its BOOT-INF/classes/dev/ (and native/, when the tgz has it: the shim registers its
# JNI methods by name, so old classes need their own libimexprobe.so) replaced by another build's, for a before/after on
# the GPU host when the bundle (64 MiB) cannot carry two jars: the libraries are the same, the classes are not.
# CLASSES.tgz: tar -C <other checkout>/target/classes -czf .gpu-bundle/old-classes.tgz dev native (or a Boot jar, whose
# BOOT-INF/classes/dev/ and native/ are taken).
# Then: bash bench/run.sh ... --compare-jar OUT.jar
# --drop-lib PREFIX...: leave out the libraries (BOOT-INF/lib/PREFIX*) the other build did not have, and their
# classpath.idx lines, so that its start and memory are measured without them (e.g. the Bean Validation libraries
# for a build before issue 22).
import sys, tarfile, zipfile
new, tgz, out = sys.argv[1:4]
drop = sys.argv[sys.argv.index("--drop-lib") + 1:] if "--drop-lib" in sys.argv else []
dropped = lambda name: any(name.startswith("BOOT-INF/lib/" + d) for d in drop)
old = {}
if tgz.endswith(".jar"):  # another Boot jar's classes (NEW.jar itself: an A/A, gpu/hotpath.sh CONTROL=1)
    with zipfile.ZipFile(tgz) as z:
        for info in z.infolist():
            if info.filename.startswith(("BOOT-INF/classes/dev/", "BOOT-INF/classes/native/")):
                old[info.filename] = b"" if info.is_dir() else z.read(info.filename)
else:
    with tarfile.open(tgz) as t:
        for m in t.getmembers():
            if m.isfile():
                old["BOOT-INF/classes/" + m.name] = t.extractfile(m).read()
            elif m.isdir():
                old["BOOT-INF/classes/" + m.name.rstrip("/") + "/"] = b""  # classpath scanning needs the folders
if not any(k.startswith("BOOT-INF/classes/dev/") for k in old):
    sys.exit(f"{tgz} has no dev/ at its top: make it with tar -C <checkout>/target/classes -czf {tgz} dev native")
replaced = ["BOOT-INF/classes/dev/"] + (["BOOT-INF/classes/native/"]
                                          if any(k.startswith("BOOT-INF/classes/native/") for k in old) else [])
with zipfile.ZipFile(new) as zin, zipfile.ZipFile(out, "w") as zout:
    for info in zin.infolist():
        if any(info.filename.startswith(p) for p in replaced) or dropped(info.filename):
            continue
        data = zin.read(info.filename)
        if info.filename == "BOOT-INF/classpath.idx" and drop:
            data = b"".join(l for l in data.splitlines(True) if not dropped(l.decode().strip().strip('- "')))
        zout.writestr(info, data)
    for name, data in sorted(old.items()):
        zout.writestr(zipfile.ZipInfo(name, (2026, 12, 3, 0, 0, 0)), data, compress_type=zipfile.ZIP_DEFLATED)
print("jar:", out, "with", len(old), "entries of the other build")
